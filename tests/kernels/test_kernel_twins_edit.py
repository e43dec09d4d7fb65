"""Kernel-twin checks (see ``test_kernel_twins.py``) of ``_edit_csr`` / ``_edit_distance`` / ``_edit_words``: WER / CER / PER / EED.
"""
from __future__ import annotations

import numpy as np
import pytest
import twins_harness as th
from hypothesis import strategies as st

from mtscore.kernels import (
    _edit_csr,
    _edit_distance,
    _edit_words,
    _text,
)
from mtscore.kernels.reference import (
    edit_csr,
    edit_words,
    text,
)

CASES: dict[str, tuple] = {}  # kernel function -> (check, examples)
case = th.case_registry(CASES)


# ---- _edit_csr / _edit_distance / _edit_words: WER / CER / PER / EED -------------------------
def _edit_inputs(data, source, chars=False):
    """``(hyp values, hyp offsets, ref values, ref offsets, seg_refs)`` of a drawn corpus
    (None references left out of ``seg_refs``; a segment may end up with none)."""
    hyps, refs = th.corpus(data, source)
    flat, seg_refs = [], [0]
    for i in range(len(hyps)):
        lines = [r[i] for r in refs if r[i] is not None]
        if data.draw(st.integers(0, 9), label="drop all") == 0:
            lines = []
        flat += lines
        seg_refs.append(seg_refs[-1] + len(lines))
    if chars:
        hv, ho = _edit_csr.code_points(hyps, True)
        rv, ro = _edit_csr.code_points(flat, True)
    else:
        vocab = _text.Vocab()
        hv, ho = _edit_csr.jiwer_words(hyps, vocab)
        rv, ro = _edit_csr.jiwer_words(flat, vocab)
    return hv, ho, rv, ro, np.array(seg_refs, dtype=np.int64)


def _long_symbols(data, label):
    """An int32 sequence across the 64-symbol word boundaries, over a small alphabet (many
    matches, so the carries between blocks matter)."""
    n = data.draw(st.sampled_from([0, 1, 63, 64, 65, 127, 128, 129, 200]), label=label + " len")
    k = data.draw(st.sampled_from([1, 2, 4, 30]), label=label + " alphabet")
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label=label + " seed")
    return np.random.default_rng(seed).integers(0, k, size=n).astype(np.int32)


@case("_edit_csr.jiwer_words", 60)
def _(data, source):
    lines = th.texts(data, source)
    vk, vt = _text.Vocab(), text.Vocab()
    for chunk in (lines, lines[::-1]):  # a second call shares the vocabulary
        th.assert_same(_edit_csr.jiwer_words(chunk, vk), edit_csr.jiwer_words(chunk, vt))
    assert [vk.token(i) for i in range(len(vk))] == [vt.token(i) for i in range(len(vt))]
    assert th.outcome(_edit_csr.jiwer_words, [1], _text.Vocab()) == th.outcome(edit_csr.jiwer_words, [1], text.Vocab())


@case("_edit_csr.code_points")
def _(data, source):
    lines = th.texts(data, source)
    for strip in (False, True):
        th.both("_edit_csr.code_points", lines, strip)
    th.both("_edit_csr.code_points", [*lines, None])  # TypeError


@case("_edit_distance.edit_stats_range", 60)
def _(data, source):
    k, t = th.pair("_edit_distance.edit_stats_range")
    args = _edit_inputs(data, source, chars=data.draw(st.booleans(), label="chars"))
    n = len(args[1]) - 1
    for measure in (0, 1):
        for multi in (0, 1, 2):
            outs = [np.full((n, 2), 7.0) for _ in range(2)]
            assert th.outcome(k, *args, outs[0], measure, multi) == th.outcome(t, *args, outs[1], measure, multi)
            th.assert_same(outs[0], outs[1])
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    outs = [np.full((n, 2), 7.0) for _ in range(2)]
    assert th.outcome(k, *args, outs[0], 0, 2, a, b) == th.outcome(t, *args, outs[1], 0, 2, a, b)
    th.assert_same(outs[0], outs[1])
    # long sequences: every block path of the bit-parallel kernel
    h, r = _long_symbols(data, "hyp"), _long_symbols(data, "ref")
    csr = (h, np.array([0, len(h)], np.int64), r, np.array([0, len(r)], np.int64),
           np.array([0, 1], np.int64))
    outs = [np.zeros((1, 2)) for _ in range(2)]
    k(*csr, outs[0], 0, 0)
    t(*csr, outs[1], 0, 0)
    th.assert_same(outs[0], outs[1])
    for bad in ((args[0], args[1], args[2], args[3], args[4][:-1]),  # seg_refs too short
                (args[0] - 1, *args[1:]) if len(args[0]) else (np.array([-1], np.int32),
                                                                 np.array([0, 1], np.int64), *args[2:])):
        o = [np.zeros((len(bad[1]) - 1, 2)) for _ in range(2)]
        assert th.outcome(k, *bad, o[0]) == th.outcome(t, *bad, o[1])


@case("_edit_words.word_stats_texts", 60)
def _(data, source):
    k, t = th.pair("_edit_words.word_stats_texts")
    hyps, refs = th.corpus(data, source)
    flat = [r[i] for i in range(len(hyps)) for r in refs if r[i] is not None]
    if flat and data.draw(st.booleans(), label="copy"):  # a reference equal to its hypothesis
        flat[0] = hyps[0]
    counts = [sum(r[i] is not None for r in refs) for i in range(len(hyps))]
    hi = np.cumsum(counts).astype(np.int64)
    lo = hi - np.array(counts, dtype=np.int64)
    if data.draw(st.booleans(), label="rows"):  # any reference ranges, none included
        pick = np.array(data.draw(st.lists(st.integers(0, len(hyps) - 1), min_size=len(hyps),
                                           max_size=len(hyps)), label="seg"), dtype=np.int64)
        lo, hi = lo[pick], hi[pick]
        hi[0] = lo[0]
    n = len(hyps)
    for measure in (0, 1):
        for multi in (0, 1, 2):
            outs = [np.full((n, 2), 7.0) for _ in range(2)]
            assert th.outcome(k, hyps, flat, lo, hi, outs[0], measure, multi) == \
                th.outcome(t, hyps, flat, lo, hi, outs[1], measure, multi)
            th.assert_same(outs[0], outs[1])
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    outs = [np.full((n, 2), 7.0) for _ in range(2)]
    assert th.outcome(k, hyps, flat, lo, hi, outs[0], 1, 2, a, b) == \
        th.outcome(t, hyps, flat, lo, hi, outs[1], 1, 2, a, b)
    th.assert_same(outs[0], outs[1])
    # long strings: words across the 64-code-point bit words and past 16 bytes, hypotheses of
    # more than 64 words (the block distance), in every width
    alphabet = data.draw(st.sampled_from(["ab ", "ab\t \xa0", "aé  \u3000", "a\U0001F600 b\u2000"]),
                         label="alphabet")
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    longs = ["".join(rng.choice(list(alphabet), size=int(rng.integers(0, 400)))) for _ in range(4)]
    o = [np.zeros((2, 2)) for _ in range(2)]
    two = np.array([0, 2], np.int64), np.array([2, 4], np.int64)
    for measure in (0, 1):
        k(longs[:2], longs, *two, o[0], measure)
        t(longs[:2], longs, *two, o[1], measure)
        th.assert_same(o[0], o[1])
    # the same numbers as edit_stats_range on jiwer_words ids (a corpus vocabulary)
    vocab = _text.Vocab()
    hv, ho = _edit_csr.jiwer_words(hyps, vocab)
    rv, ro = _edit_csr.jiwer_words(flat, vocab)
    seg = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    o1, o2 = np.zeros((n, 2)), np.zeros((n, 2))
    _edit_distance.edit_stats_range(hv, ho, rv, ro, seg, o1, 0, 1)
    _edit_words.word_stats_texts(hyps, flat, seg[:-1].copy(), seg[1:].copy(), o2, 0, 1)
    th.assert_same(o1, o2)
    for bad in ((hyps, flat, lo, hi + 1, np.zeros((n, 2))),
                ([*hyps, None], flat, np.append(lo, 0), np.append(hi, 0), np.zeros((n + 1, 2))),
                (hyps, [*flat, None], lo, np.where(hi == hi.max(), len(flat) + 1, hi), np.zeros((n, 2))),
                (hyps, flat, lo, hi, np.zeros((n, 3)))):
        assert th.outcome(k, *bad) == th.outcome(t, *bad)


@case("_edit_distance.levenshtein")
def _(data, source):
    th.both("_edit_distance.levenshtein", _long_symbols(data, "a"), _long_symbols(data, "b"))
    vocab = _text.Vocab()
    x, y = data.draw(st.sampled_from(th.texts(data, source)), label="x"), \
        data.draw(st.sampled_from(th.texts(data, source)), label="y")
    th.both("_edit_distance.levenshtein", _edit_csr.jiwer_words([x], vocab)[0], _edit_csr.jiwer_words([y], vocab)[0])
    th.both("_edit_distance.levenshtein", _edit_csr.code_points([x])[0], _edit_csr.code_points([y])[0])
    th.both("_edit_distance.levenshtein", np.array([-1], np.int32), np.array([1], np.int32))  # ValueError


@case("_edit_distance.eed_scores", 15)
def _(data, source):
    from mtscore.engine.metrics.eed import preprocess_en

    hyps, refs = th.corpus(data, source, n_max=3, k_max=2)
    flat = [r[i] for i in range(len(hyps)) for r in refs if r[i] is not None]
    seg_refs = np.cumsum([0] + [sum(r[i] is not None for r in refs) for i in range(len(hyps))])
    pre = data.draw(st.booleans(), label="preprocess")
    hv, ho = _edit_csr.code_points([preprocess_en(h) if pre else h for h in hyps])
    rv, ro = _edit_csr.code_points([preprocess_en(x) if pre else x for x in flat])
    params = data.draw(st.sampled_from([(), (2.0, 0.3, 0.2, 1.0), (1.0, 0.0, 0.5, 0.7),
                                        (0.0, 1.5, 0.0, 2.0), (2.0, -1.0, 0.2, 1.0)]), label="params")
    th.both("_edit_distance.eed_scores", hv, ho, rv, ro, seg_refs.astype(np.int64), *params)
    empty = np.zeros(len(ho), np.int64)  # no reference at all: NaN
    th.both("_edit_distance.eed_scores", hv, ho, rv, ro, empty)


#: every character str.isspace() accepts (jiwer's \s), so each one appears in the word-set tests
_SPACES = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())


def _word_set_texts(data):
    """Strings for the prepared word sets: words from a small alphabet (repeats, so words
    match), in every PEP 393 width, with every whitespace character, words past 32 bytes and
    texts of more or fewer than 64 words, empty and whitespace-only strings."""
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    extra = data.draw(st.sampled_from(["", "é", "\u0161", "\u3042", "\U0001F600"]), label="extra")
    letters = list("ab") + ([extra] if extra else [])

    # a small vocabulary, so that words repeat and match: lengths past 8, 16 and 32 bytes in
    # every width, and long words that differ only past their 32nd byte
    long = "".join(rng.choice(letters, size=40))
    vocab = ["a", "b", "ab", "".join(rng.choice(letters, size=9)),
             "".join(rng.choice(letters, size=17)), long, long[:-1] + "a", long[:-1] + "b",
             long + "ab"]

    def word():
        return vocab[int(rng.integers(0, len(vocab)))]

    def text():
        kind = int(rng.integers(0, 7))
        if kind == 0:
            return ""
        if kind == 6:  # up to 64 distinct words: sets whose words share slots (probing)
            many = [f"w{i}{extra}" for i in range(80)]
            return " ".join(rng.choice(many, size=int(rng.integers(50, 66)), replace=False))
        if kind == 1:
            return "".join(rng.choice(list(_SPACES), size=int(rng.integers(1, 4))))
        n = int(rng.choice([1, 5, 20, 63, 64, 65, 90]))
        seps = [" "] * 6 + list(_SPACES) + ["  ", "\t\t"]
        out = [word()]
        for _ in range(n - 1):
            out.append(str(rng.choice(seps)))  # a lone non-U+0020 space stays inside a word
            out.append(word())
        lead = "".join(rng.choice(list(_SPACES), size=int(rng.integers(0, 3))))
        return lead + "".join(out) + lead
    return [text() for _ in range(data.draw(st.integers(1, 8), label="count"))]


@case("_edit_words.WordSets")
def _(data, source):
    refs = th.texts(data, source) + _word_set_texts(data)
    assert len(_edit_words.WordSets(refs)) == len(edit_words.WordSets(refs)) == len(refs)
    assert th.outcome(_edit_words.WordSets, [*refs, None]) == th.outcome(edit_words.WordSets, [*refs, None])


@case("_edit_words.word_stats_sets", 60)
def _(data, source):
    k, t = th.pair("_edit_words.word_stats_sets")
    hyps, refs = th.corpus(data, source)
    flat = [r[i] for i in range(len(hyps)) for r in refs if r[i] is not None]
    counts = [sum(r[i] is not None for r in refs) for i in range(len(hyps))]
    # the prepared sets' own texts: every width (a hypothesis narrower, as wide as or wider
    # than its references), > 64 words, every whitespace character, empty strings
    more, pool = _word_set_texts(data), _word_set_texts(data) + hyps[:1]
    for j in range(len(more)):
        flat += [pool[j % len(pool)], pool[(j + 1) % len(pool)]]
    hyps = hyps + more
    counts += [2] * len(more)
    # references of 60..64 distinct words (their sets often fall back to linear probing)
    # against hypotheses of their words in another order, with words of their own
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed64"))
    for _ in range(3):  # (random words: sequential ones spread too evenly to ever collide)
        words = list(dict.fromkeys("".join(rng.choice(list("abcdefgh"), size=int(rng.integers(2, 7))))
                                   for _ in range(80)))[:int(rng.integers(60, 65))]
        flat.append(" ".join(words))
        hyps.append(" ".join([*list(rng.permutation(words)[:int(rng.integers(1, 70))]), "x", "w1"]))
        counts.append(1)
    if data.draw(st.booleans(), label="copy"):  # a reference equal to its hypothesis
        flat[0] = hyps[0]
    hi = np.cumsum(counts).astype(np.int64)
    lo = hi - np.array(counts, dtype=np.int64)
    n = len(hyps)
    if data.draw(st.booleans(), label="rows"):  # any reference ranges, none included
        pick = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
                                  label="seg"), dtype=np.int64)
        lo, hi = lo[pick], hi[pick]
        hi[0] = lo[0]
    sk, stw = _edit_words.WordSets(flat), edit_words.WordSets(flat)
    for multi in (0, 1, 2):
        outs = [np.full((n, 2), 7.0) for _ in range(3)]
        assert th.outcome(k, hyps, sk, lo, hi, outs[0], multi) == th.outcome(t, hyps, stw, lo, hi, outs[1], multi)
        th.assert_same(outs[0], outs[1])
        # the same numbers as the kernel that splits the references on every call
        _edit_words.word_stats_texts(hyps, flat, lo, hi, outs[2], 0, multi)
        th.assert_same(outs[0], outs[2])
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    outs = [np.full((n, 2), 7.0) for _ in range(2)]
    assert th.outcome(k, hyps, sk, lo, hi, outs[0], 2, a, b) == th.outcome(t, hyps, stw, lo, hi, outs[1], 2, a, b)
    th.assert_same(outs[0], outs[1])
    for bad in ((hyps, sk, lo, hi + 1, np.zeros((n, 2))),
                ([*hyps, None], sk, np.append(lo, 0), np.append(hi, 0), np.zeros((n + 1, 2))),
                (hyps, sk, lo, hi, np.zeros((n, 3))),
                (hyps, None, lo, hi, np.zeros((n, 2))),
                (hyps, flat, lo, hi, np.zeros((n, 2)))):
        twin_bad = tuple(stw if x is sk else x for x in bad)
        assert th.outcome(k, *bad) == th.outcome(t, *twin_bad)
    outs = [np.zeros((n, 2)) for _ in range(2)]
    assert th.outcome(k, hyps, sk, lo, hi, outs[0], 3) == th.outcome(t, hyps, stw, lo, hi, outs[1], 3)


# ---- the one parametrised test -------------------------------------------------------------
@pytest.mark.parametrize("source", ["wmt", "unicode"])
@pytest.mark.parametrize("func", sorted(CASES))
def test_kernel_equals_twin(func, source):
    th.run_case(CASES, func, source)
