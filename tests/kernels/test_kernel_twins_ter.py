"""Kernel-twin checks (see ``test_kernel_twins.py``) of ``_detok`` (piece tables), ``_ter_normalize`` / ``_ter_shift`` /
``_ter_fused`` (TER) and ``_sentence`` (sentence BLEU / chrF).
"""
from __future__ import annotations

import numpy as np
import pytest
import twins_harness as th
from hypothesis import strategies as st

from mtscore.kernels import (
    _ter_normalize,
)
from mtscore.kernels.reference import (
    ter_normalize,
)

CASES: dict[str, tuple] = {}  # kernel function -> (check, examples)
case = th.case_registry(CASES)


# bytes a piece table is made of: whole and cut UTF-8 characters, lone lead / continuation
# bytes, surrogate and overlong encodings, U+FFFD itself, spaces (a Strip's character)
_PIECE_BYTES = [b"", b" ", b"  ", b"a", b"\xe2\x96\x81", b"\xe4", b"\xe4\xb8", b"\xad", b"\xf0\x9f",
                b"\x98\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xef\xbf\xbd", b"\xff", b"\xf4\x90\x80\x80"]
_BYTE_VALUES = [0x20, 0x41, 0xC3, 0xA9, 0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98, 0x80, 0xED, 0xA0, 0xC0, 0xFF]


@case("_detok.decode_rows", 80)
def _(data, source):
    if source == "wmt":  # pieces: a segment's UTF-8 bytes cut at random points
        raw = " ".join(th.texts(data, source)).encode("utf-8")[:400]
        cuts = sorted(set(data.draw(st.lists(st.integers(0, len(raw)), max_size=60), label="cuts")))
        pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]
    else:
        pieces = data.draw(st.lists(st.sampled_from(_PIECE_BYTES) | st.text(max_size=4).map(
            lambda t: t.encode("utf-8", "surrogatepass")), min_size=1, max_size=12), label="pieces")
    V = len(pieces)
    first = [p if data.draw(st.booleans(), label="same") else p[1:] for p in pieces]
    forms = [b for pair in zip(first, pieces) for b in pair]
    form_offsets = np.concatenate([[0], np.cumsum([len(b) for b in forms])]).astype(np.int64)
    buf = np.frombuffer(b"".join(forms) or b"", dtype=np.uint8).copy()
    flags = np.array(data.draw(st.lists(st.sampled_from([0, 0, 1, 2, 2, 4, 8, 12]), min_size=V, max_size=V),
                               label="flags"), dtype=np.uint8)
    byte_values = np.array(data.draw(st.lists(st.sampled_from(_BYTE_VALUES), min_size=V, max_size=V),
                                     label="bytes"), dtype=np.uint8)
    rows = data.draw(st.lists(st.lists(st.integers(0, V - 1), max_size=30), max_size=5), label="rows")
    values = np.array([v for r in rows for v in r], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    mode = data.draw(st.sampled_from([0, 1]), label="mode")
    strip = np.frombuffer(data.draw(st.sampled_from([b" ", b"\xe2\x96\x81"]), label="strip"), dtype=np.uint8)
    table = (buf, form_offsets, flags, byte_values)
    th.both("_detok.decode_rows", values, offsets, *table, mode, data.draw(st.booleans(), label="bos"),
         data.draw(st.booleans(), label="once"), strip, data.draw(st.integers(0, 3), label="n_strip"))
    th.both("_detok.decode_rows", values, offsets, *table, mode)
    if len(values):  # an id outside the table; a decreasing offset
        bad = values.copy()
        bad[-1] = V
        th.both("_detok.decode_rows", bad, offsets, *table, mode)
        th.both("_detok.decode_rows", values, offsets[::-1].copy(), *table, mode)
    th.both("_detok.decode_rows", values, offsets, *table, 2)  # no such mode
    th.both("_detok.decode_rows", values, offsets, buf, form_offsets[:-1].copy(), flags, byte_values, mode)
    th.both("_detok.decode_rows", values, offsets, *table, mode, strip_count=1)  # no strip_char


def _ter_corpus(data, source):
    hyps, refs = th.corpus(data, source, n_max=4, max_words=14)
    opts = data.draw(st.fixed_dictionaries(
        {"normalized": st.booleans(), "no_punct": st.booleans(), "asian_support": st.booleans()}),
        label="opts")
    return hyps, refs, opts


@case("_ter_normalize.TercomVocab")
def _(data, source):
    lines = [t.rstrip().lower() for t in th.texts(data, source)]
    vk, vt = _ter_normalize.TercomVocab(), ter_normalize.TercomVocab()
    _ter_normalize.tercom_tokenize(lines, vk, True)
    ter_normalize.tercom_tokenize(lines, vt, True)
    assert len(vk) == len(vt)
    assert [vk.token(i) for i in range(len(vk))] == [vt.token(i) for i in range(len(vt))]
    for i in (-1, len(vk)):
        assert th.outcome(vk.token, i) == th.outcome(vt.token, i) == ("raised", IndexError)


@case("_ter_normalize.tercom_normalize_texts", 80)
def _(data, source):
    lines = th.texts(data, source)
    for opts in ({}, {"normalized": True}, {"no_punct": True},
                 {"normalized": True, "asian_support": True},
                 {"no_punct": True, "asian_support": True},
                 {"normalized": True, "no_punct": True, "asian_support": True},
                 {"rstrip": True}, {"lowercase": True}, {"normalized": True, "rstrip": True,
                                                         "lowercase": True}):
        th.both("_ter_normalize.tercom_normalize_texts", lines, **opts)
    th.both("_ter_normalize.tercom_normalize_texts", [*lines, None])  # TypeError


@case("_ter_normalize.tercom_tokenize")
def _(data, source):
    lines = th.texts(data, source)
    for opts in ({}, {"normalized": True, "asian_support": True}, {"no_punct": True},
                 {"rstrip": True, "lowercase": True}, {"normalized": True, "lowercase": True}):
        k = _ter_normalize.tercom_tokenize(lines, _ter_normalize.TercomVocab(), **opts)
        t = ter_normalize.tercom_tokenize(lines, ter_normalize.TercomVocab(), **opts)
        th.assert_same(k, t)


def _ter_inputs(data, source):
    hyps, refs, opts = _ter_corpus(data, source)
    vocab = _ter_normalize.TercomVocab()
    hyp_ids, hyp_off = _ter_normalize.tercom_tokenize([h.rstrip().lower() for h in hyps], vocab, **opts)
    flat = [(i, r[i]) for i in range(len(hyps)) for r in refs if r[i] is not None]
    ref_ids, ref_off = _ter_normalize.tercom_tokenize([x.rstrip().lower() for _, x in flat], vocab, **opts)
    seg_refs = np.searchsorted([i for i, _ in flat], np.arange(len(hyps) + 1)).astype(np.int64)
    return hyp_ids, hyp_off, ref_ids, ref_off, seg_refs


@case("_ter_shift.ter_stats_range", 25)
def _(data, source):
    args = _ter_inputs(data, source)
    n = len(args[1]) - 1
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    outs = [np.full((n, 2), -7.0) for _ in range(2)]
    k, t = th.pair("_ter_shift.ter_stats_range")
    assert th.outcome(k, *args, outs[0], a, b) == th.outcome(t, *args, outs[1], a, b)
    th.assert_same(outs[0], outs[1])
    assert th.outcome(k, *args, outs[0], b, n + 1) == th.outcome(t, *args, outs[1], b, n + 1)


@case("_ter_shift.ter_stats_shared", 25)
def _(data, source):
    args = _ter_inputs(data, source)
    n = len(args[1]) - 1
    order = np.array(data.draw(st.permutations(list(range(n))), label="order"), dtype=np.int64)
    grain = data.draw(st.integers(1, 3), label="grain")
    outs = [np.full((n, 2), -7.0) for _ in range(2)]
    counters = [np.zeros(1, np.int64) for _ in range(2)]
    k, t = th.pair("_ter_shift.ter_stats_shared")
    assert th.outcome(k, *args, outs[0], order, counters[0], grain) == \
        th.outcome(t, *args, outs[1], order, counters[1], grain)
    th.assert_same(outs[0], outs[1])
    th.assert_same(counters[0], counters[1])
    assert th.outcome(k, *args, outs[0], order + n, np.zeros(1, np.int64)) == \
        th.outcome(t, *args, outs[1], order + n, np.zeros(1, np.int64))


@case("_ter_shift.ter_pair_ids", 80)
def _(data, source):
    if source == "wmt":
        hyp_ids, hyp_off, ref_ids, ref_off, _seg_refs = _ter_inputs(data, source)
        h, r = hyp_ids[hyp_off[0]:hyp_off[1]], ref_ids[ref_off[0]:ref_off[1]]
    else:  # few distinct tokens: many equal blocks, so many shift candidates
        ints = st.lists(st.integers(0, 6), max_size=15)
        h = np.array(data.draw(ints, label="h"), np.int32)
        r = np.array(data.draw(ints, label="r"), np.int32)
    th.both("_ter_shift.ter_pair_ids", h, r)


def _sentence_rows(data, source):
    """(hypothesis, references) of each drawn segment: its non-None references, and now and
    then one with a None among them (the kernels then return None) or none at all."""
    hyps, refs = th.corpus(data, source)
    rows = [(h, [r[i] for r in refs if r[i] is not None]) for i, h in enumerate(hyps)]
    if data.draw(st.booleans(), label="odd refs"):
        rows.append((hyps[0], rows[0][1] + [None]))
        rows.append((hyps[0], []))  # ValueError
        rows.append((hyps[0], tuple(rows[0][1])))
    return rows


@case("_sentence.bleu_sentence", 60)
def _(data, source):
    th.load_intl()
    mode = data.draw(st.sampled_from([0, 1, 2, 3, 4]), label="mode")
    order = data.draw(st.integers(1, 6), label="order")
    smooth = data.draw(st.integers(0, 3), label="smooth")
    sv = data.draw(st.sampled_from([0.0, 0.1, 1.0, 2.5]), label="smooth_value")
    eff, neu, rstrip = (data.draw(st.booleans(), label=x) for x in ("eff", "neumaier", "rstrip"))
    for hyp, refs in _sentence_rows(data, source):
        th.both("_sentence.bleu_sentence", hyp, refs, mode, rstrip, order, smooth, sv, eff, neu)
    th.both("_sentence.bleu_sentence", "a b", ["a c"], 9)  # ValueError: not a BLEU mode
    th.both("_sentence.bleu_sentence", "a b", ["a c"], 1, True, 0)  # ValueError: max_order
    th.both("_sentence.bleu_sentence", None, ["a c"], 1)  # TypeError


@case("_sentence.chrf_sentence", 60)
def _(data, source):
    c = data.draw(st.integers(0, 6), label="char_order")
    w = data.draw(st.integers(0 if c else 1, 2), label="word_order")
    factor = data.draw(st.sampled_from([1.0, 4.0, 9.0, 0.25]), label="factor")
    eps, ws = (data.draw(st.booleans(), label=x) for x in ("eps", "whitespace"))
    for hyp, refs in _sentence_rows(data, source):
        th.both("_sentence.chrf_sentence", hyp, refs, c, w, factor, eps, ws)
    th.both("_sentence.chrf_sentence", "a b", ["a c"], 0, 0)  # ValueError
    th.both("_sentence.chrf_sentence", None, ["a c"])  # TypeError


@case("_ter_fused.ter_sentence", 40)
def _(data, source):
    opts = {k: data.draw(st.booleans(), label=k) for k in ("normalized", "no_punct", "asian_support")}
    for hyp, refs in _sentence_rows(data, source):
        low = [r.rstrip().lower() if r is not None else None for r in refs]
        th.both("_ter_fused.ter_sentence", hyp.rstrip().lower(), type(refs)(low), **opts)
    th.both("_ter_fused.ter_sentence", None, ["a c"])  # TypeError


@case("_ter_fused.ter_corpus_plain", 30)
def _(data, source):
    opts = {k: data.draw(st.booleans(), label=k) for k in ("no_punct", "asian_support", "lowercase")}
    hyps, refs = th.corpus(data, source, k_max=1, none_refs=False)
    th.both("_ter_fused.ter_corpus_plain", hyps, refs[0], **opts)
    th.both("_ter_fused.ter_corpus_plain", hyps, [*refs[0][:-1], None], **opts)  # None: not handled here
    th.both("_ter_fused.ter_corpus_plain", hyps, refs[0] + ["a"], **opts)  # ValueError


@case("_ter_shift.ter_matrix", 25)
def _(data, source):
    hyp_ids, hyp_off, ref_ids, ref_off, _ = _ter_inputs(data, source)
    n, m = len(hyp_off) - 1, len(ref_off) - 1
    part = np.array(data.draw(st.permutations(range(m)), label="part"), np.int64)
    part = part[:data.draw(st.integers(0, m), label="n_part")]
    outs = [np.full((n, m), -7, np.int64) for _ in range(2)]
    k, t = th.pair("_ter_shift.ter_matrix")
    assert th.outcome(k, hyp_ids, hyp_off, ref_ids, ref_off, outs[0], part) == \
        th.outcome(t, hyp_ids, hyp_off, ref_ids, ref_off, outs[1], part)
    th.assert_same(outs[0], outs[1])
    bad = np.array([m], np.int64)
    assert th.outcome(k, hyp_ids, hyp_off, ref_ids, ref_off, outs[0], bad) == \
        th.outcome(t, hyp_ids, hyp_off, ref_ids, ref_off, outs[1], bad) == ("raised", ValueError)


# ---- the one parametrised test -------------------------------------------------------------
@pytest.mark.parametrize("source", ["wmt", "unicode"])
@pytest.mark.parametrize("func", sorted(CASES))
def test_kernel_equals_twin(func, source):
    th.run_case(CASES, func, source)
