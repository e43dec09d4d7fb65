"""Every compiled kernel function against its plain-Python twin in ``mtscore/kernels/reference``
(same module name without the underscore, same function name and signature), on the same inputs:

* ``wmt``: real newstest/florestest 2021 segments (system outputs with their references, many
  scripts) from ``$MTSCORE_DATA``; skipped, saying why, when the data is absent;
* ``unicode``: hypothesis-generated adversarial Unicode (every character the tokenizers' rules
  look at, whitespace oddities, astral characters, lone surrogates, entity and ``<skipped>``
  fragments) and adversarial arrays for the numeric kernels.

Results must be equal: same arrays (dtype and values; floats bit for bit except the BERTScore
matcher, whose twin sums with math.fsum), same errors. Kernels that take statistics or
embeddings get them derived from the drawn text (the stats kernels' output on it) or drawn
directly. Also here: the twins' own anchors to their specification (sacrebleu, numpy, regex),
which keep a twin honest where kernel == twin alone could not.
"""
from __future__ import annotations

import functools
import inspect
import unicodedata

import numpy as np
import pytest
from conftest import data_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtscore.engine.tokenizers import intl_table
from mtscore.kernels import (
    _detok,
    _edit_csr,
    _edit_distance,
    _edit_words,
    _greedy,
    _lists,
    _ngram,
    _pairwise,
    _resample,
    _sentence,
    _ter_fused,
    _ter_normalize,
    _ter_shift,
    _text,
    _text_vocab,
)
from mtscore.kernels.reference import (
    detok,
    edit_csr,
    edit_distance,
    edit_words,
    greedy,
    lists,
    ngram,
    pairwise,
    resample,
    sentence,
    ter_fused,
    ter_normalize,
    ter_shift,
    text,
    text_vocab,
)

MODULES = {"_text": (_text, text), "_text_vocab": (_text_vocab, text_vocab), "_lists": (_lists, lists),
           "_ngram": (_ngram, ngram),
           "_ter_normalize": (_ter_normalize, ter_normalize), "_ter_shift": (_ter_shift, ter_shift),
           "_ter_fused": (_ter_fused, ter_fused), "_resample": (_resample, resample), "_greedy": (_greedy, greedy),
           "_sentence": (_sentence, sentence), "_pairwise": (_pairwise, pairwise),
           "_detok": (_detok, detok), "_edit_csr": (_edit_csr, edit_csr),
           "_edit_distance": (_edit_distance, edit_distance), "_edit_words": (_edit_words, edit_words)}


def kernel_functions():
    """``module.name`` of every public function / class of the compiled kernel modules."""
    out = []
    for key, (mod, _) in MODULES.items():
        for name in dir(mod):
            obj = getattr(mod, name)
            if not name.startswith("_") and callable(obj) and getattr(obj, "__module__", "") == mod.__name__:
                out.append(f"{key}.{name}")
    return sorted(out)


def pair(func):
    key, name = func.split(".")
    mod, tw = MODULES[key]
    return getattr(mod, name), getattr(tw, name)


# ---- inputs --------------------------------------------------------------------------------
_CHARS = (list("abcABsS 09.,-&;<>'\"()$€«»…—’“”?:!/[]{}~`@^_|+*#%=\\\n\t\r\x0b\x0c\x1c\x85\xa0"
               "\u1680\u2000\u2009\u200a\u2028\u202f\u205f\u3000\u3001\u3002")
          + list("中文日本語한국어美众院公布りのをテスト〈〉【】〔〕・ｰ｡｢．，？：；！＂（）㈱㍿豈︰⺀㇀ㇰ㈀㼢㼣")
          + ["😀", "𝔘", "\U00020000", "\U0002A6D6", "\u20001", "\u2E80", "\u303F", "\ufe30",
             "\uff01", "\u0301", "\ud800", "\x00", "Σ", "ΑΣ", "İ", "ẞ", "ǅ", "&quot;", "&amp;",
             "&lt;", "&gt;", "&amp;lt;", "'s ", "\n-", "-\n", "<skipped>", " .", "1,000", "3.14"])
ADVERSARIAL = st.one_of(
    st.lists(st.sampled_from(_CHARS), max_size=25).map("".join),
    st.text(max_size=25),
).flatmap(lambda s: st.sampled_from([s, s + ".", s + " .", "1" + s + "9", s + " 10, " + s,
                                      s.replace("a", "<skipped>"), s.upper(), s.lower()]))

WMT_PAIRS = ["newstest2021.en-de", "newstest2021.en-zh", "newstest2021.en-ja",
             "newstest2021.en-ru", "newstest2021.cs-en", "florestest2021.bn-hi"]


@functools.lru_cache(maxsize=1)
def wmt_rows():
    """[(hypothesis, [references])] of a few WMT21 pairs (first system output), or None."""
    base = data_dir() / "wmt21-news-systems" / "txt"
    rows = []
    for p in WMT_PAIRS:
        refs = [f.read_text(encoding="utf-8").split("\n")[:-1]
                for f in sorted((base / "references").glob(f"{p}.ref.*"))]
        hyps = sorted((base / "system-outputs").glob(f"{p}.hyp.*"))
        if not refs or not hyps:
            continue
        h = hyps[0].read_text(encoding="utf-8").split("\n")[:-1]
        rows += [(h[i], [r[i] for r in refs]) for i in range(min(len(h), *map(len, refs)))]
    return rows or None


def corpus(data, source, n_max=6, k_max=3, max_words=None, none_refs=True):
    """``(hyps, refs)``: N hypotheses and K reference streams (None: a missing reference; every
    segment keeps at least one)."""
    n = data.draw(st.integers(1, n_max), label="n")
    k = data.draw(st.integers(1, k_max), label="k")
    if source == "wmt":
        rows = wmt_rows()
        if max_words:
            rows = [r for r in rows if len(r[0].split()) <= max_words
                    and all(len(x.split()) <= max_words for x in r[1])]
        picked = [data.draw(st.sampled_from(rows), label="row") for _ in range(n)]
        hyps = [h for h, _ in picked]
        refs = [[r[j % len(r)] for _, r in picked] for j in range(k)]
    else:
        seg = ADVERSARIAL if not max_words else st.lists(
            st.sampled_from([*_CHARS, "w", "x", "y"]), max_size=max_words).map(" ".join)
        hyps = data.draw(st.lists(seg, min_size=n, max_size=n), label="hyps")
        refs = [data.draw(st.lists(seg, min_size=n, max_size=n), label="refs") for _ in range(k)]
    if none_refs and k > 1:
        for i in range(n):
            drop = data.draw(st.sets(st.integers(0, k - 1), max_size=k - 1), label="none")
            for j in drop:
                refs[j][i] = None
    return hyps, refs


def texts(data, source):
    hyps, refs = corpus(data, source, none_refs=False)
    return hyps + [x for r in refs for x in r]


def outcome(f, *args, **kw):
    try:
        return f(*args, **kw)
    except Exception as e:  # the twin must raise the same kind of error
        return ("raised", type(e))


def _raised(x):
    return isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and x[0] == "raised"


def assert_same(a, b, approx=False):
    if _raised(a) or _raised(b):
        assert a == b, (a, b)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b), (a, b)
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y, approx)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), (a, b)
        assert a.dtype == b.dtype, (a, b)
        assert a.shape == b.shape, (a, b)
        if approx:
            # summation order differs (kernel: SIMD float64; twin: fsum), and F = 2PR/(P+R)
            # amplifies it where P + R is near 0 (a twin F of -81.98670774441321 against the
            # kernel's ...071 was found): relative as well as absolute tolerance
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)
    else:
        assert a == b, (a, b)


def both(func, *args, approx=False, **kw):
    """Call kernel and twin on the same arguments; assert equal results; return the kernel's."""
    k, t = pair(func)
    a = outcome(k, *args, **kw)
    assert_same(a, outcome(t, *args, **kw), approx)
    return a


@functools.lru_cache(maxsize=1)
def _intl():
    table = np.frombuffer(intl_table(), dtype=np.uint8)
    text.set_intl_table(table)
    return table


def encoded(strings, mode, vocab):
    """Kernel CSR encoding of ``strings`` (None -> empty) as ``(values, offsets)``."""
    return _text.encode([s or "" for s in strings], mode, vocab, True)


# ---- one check per kernel function ---------------------------------------------------------
CASES = {}


def case(func, examples=40):
    def deco(f):
        CASES[func] = (f, examples)
        return f
    return deco


@case("_text.set_intl_table", 20)
def _(data, source):
    table = _intl()
    both("_text.set_intl_table", np.zeros(5, np.uint8))  # the size check
    both("_text.set_intl_table", table)
    assert both("_text.has_intl_table") is True
    # the installed classes are regex's \p{P}, \p{S}, \p{N} on the drawn characters
    import regex
    for c in set("".join(texts(data, source))):
        bits = (bool(regex.match(r"\p{P}", c)) | bool(regex.match(r"\p{S}", c)) << 1
                | bool(regex.match(r"\p{N}", c)) << 2)
        assert table[ord(c)] == bits, (c, unicodedata.category(c))


@case("_text.has_intl_table", 1)
def _(data, source):
    _intl()
    _text.set_intl_table(_intl())
    assert both("_text.has_intl_table") is True


@case("_text_vocab.Vocab")
def _(data, source):
    toks = [w for t in texts(data, source) for w in t.split()] + ["", "\ud800", "a" * 40]
    ops = data.draw(st.lists(st.tuples(st.sampled_from(["intern", "lookup"]),
                                       st.sampled_from(toks)), max_size=60), label="ops")
    vk, vt = _text_vocab.Vocab(), text_vocab.Vocab()
    for op, tok in ops:
        assert getattr(vk, op)(tok) == getattr(vt, op)(tok)
    assert len(vk) == len(vt)
    assert [vk.token(i) for i in range(len(vk))] == [vt.token(i) for i in range(len(vt))]
    for i in (-1, len(vk)):
        assert outcome(vk.token, i) == outcome(vt.token, i) == ("raised", IndexError)


@case("_text.encode", 60)
def _(data, source):
    _intl()
    lines = texts(data, source)
    rstrip = data.draw(st.booleans(), label="rstrip")
    for mode in range(8):
        vk, vt = _text.Vocab(), text.Vocab()
        for chunk in (lines, lines[::-1]):  # a second call shares the vocabulary
            a = _text.encode(chunk, mode, vk, rstrip)
            b = text.encode(chunk, mode, vt, rstrip)
            assert_same(a, b)  # ids too: both intern in first-seen order
        assert [vk.token(i) for i in range(len(vk))] == [vt.token(i) for i in range(len(vt))]
    assert_same(_text.encode(lines, 5), text.encode(lines, 5))
    # lookup: tokens of the second half the first half's vocabulary lacks get UNSEEN_ID, and
    # the vocabulary is left as it was (twice: the kernel's word cache must not keep UNSEEN)
    half = len(lines) // 2
    for mode in (0, 1, 2, 3, 4, 7):
        vk, vt = _text.Vocab(), text.Vocab()
        _text.encode(lines[:half], mode, vk, rstrip)
        text.encode(lines[:half], mode, vt, rstrip)
        n = len(vk)
        for _ in range(2):
            a = _text.encode(lines[half:], mode, vk, rstrip, True)
            b = text.encode(lines[half:], mode, vt, rstrip, True)
            assert_same(a, b)
            assert len(vk) == len(vt) == n
        # a token added afterwards gets its own id, also inside a word met before
        _text.encode(lines[half:], mode, vk, rstrip)
        text.encode(lines[half:], mode, vt, rstrip)
        assert_same(_text.encode(lines[half:], mode, vk, rstrip, True),
                    text.encode(lines[half:], mode, vt, rstrip, True))
    assert outcome(_text.encode, lines, 1) == outcome(text.encode, lines, 1) == ("raised", ValueError)
    assert outcome(_text.encode, [1], 0, _text.Vocab()) == outcome(text.encode, [1], 0, text.Vocab())


@case("_text.tokenize_strings", 60)
def _(data, source):
    _intl()
    lines = texts(data, source)
    for mode in range(8):
        both("_text.tokenize_strings", lines, mode, data.draw(st.booleans(), label="rstrip"))


@case("_lists.first_non_str")
def _(data, source):
    class S(str):
        pass
    items = texts(data, source) + data.draw(st.lists(st.sampled_from([None, 1, b"x", S("s")]),
                                                     max_size=3), label="odd")
    items = data.draw(st.permutations(items), label="order")
    for allow_none in (False, True):
        both("_lists.first_non_str", items, allow_none)


@case("_lists.present_row")
def _(data, source):
    _, refs = corpus(data, source)
    for r in refs:
        both("_lists.present_row", r)


@case("_lists.dedupe_index")
def _(data, source):
    _, refs = corpus(data, source)
    rows = list(zip(*refs))
    rows = rows + data.draw(st.lists(st.sampled_from(rows), max_size=8), label="repeats")
    rows = data.draw(st.permutations(rows), label="order")
    both("_lists.dedupe_index", rows)
    both("_lists.dedupe_index", rows, data.draw(st.integers(0, len(rows) + 1), label="max_distinct"))


@case("_lists.dedupe_columns")
def _(data, source):
    hyps, refs = corpus(data, source, none_refs=False)
    pool = [hyps, *refs]
    s = data.draw(st.sampled_from([1, 3, 33, 40]), label="S")  # pairwise (<= 32) and dict paths
    cols = [list(data.draw(st.sampled_from(pool), label="col")) for _ in range(s)]
    both("_lists.dedupe_columns", cols)
    both("_lists.dedupe_columns", [*cols, cols[0][:-1]])  # ValueError
    both("_lists.dedupe_columns", [*cols, [None] * len(cols[0])])  # TypeError


@case("_lists.take")
def _(data, source):
    items = texts(data, source)
    idx = np.array(data.draw(st.lists(st.integers(-1, len(items)), max_size=20), label="idx"),
                   dtype=np.int64)
    both("_lists.take", items, idx)
    both("_lists.take", items, idx[(idx >= 0) & (idx < len(items))])


@case("_lists.count_ending_with_space_period")
def _(data, source):
    both("_lists.count_ending_with_space_period", texts(data, source))


def _bleu_prepared(data, source):
    hyps, refs = corpus(data, source)
    vocab = _text.Vocab()
    mode = data.draw(st.sampled_from([_text.MODE_NONE, _text.MODE_13A]), label="mode")
    streams = [encoded(r, mode, vocab) for r in refs]
    present = np.array([[x is not None for x in r] for r in refs], dtype=np.uint8)
    order = data.draw(st.integers(1, 6), label="order")
    hv, ho = encoded(hyps, mode, vocab)
    return streams, present, order, hv, ho


@case("_ngram.bleu_prepare_refs")
def _(data, source):
    streams, present, order, _, _ = _bleu_prepared(data, source)
    both("_ngram.bleu_prepare_refs", streams, present, order)
    both("_ngram.bleu_prepare_refs", streams, present[:, :0], order)  # ValueError


@case("_ngram.bleu_stats")
def _(data, source):
    streams, present, order, hv, ho = _bleu_prepared(data, source)
    prep = _ngram.bleu_prepare_refs(streams, present, order)
    n = len(ho) - 1
    both("_ngram.bleu_stats", hv, ho, *prep, order)
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    both("_ngram.bleu_stats", hv, ho[a:b + 1] - ho[a], *prep, order, a, b)
    seg_map = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
                                 label="seg_map"), dtype=np.int64)
    both("_ngram.bleu_stats", hv, ho, *prep, order, seg_map=seg_map)
    both("_ngram.bleu_stats", hv, ho, *prep, order, seg_map=seg_map + n)  # ValueError


@case("_ngram.bleu_pair_stats")
def _(data, source):
    streams, present, order, hv, ho = _bleu_prepared(data, source)
    n = len(ho) - 1
    # the references as one CSR batch grouped per hypothesis (absent ones left out)
    vals, offs, groups = [], [0], [0]
    for i in range(n):
        for k, (v, o) in enumerate(streams):
            if present[k, i]:
                vals.extend(v[o[i]:o[i + 1]].tolist())
                offs.append(len(vals))
        groups.append(len(offs) - 1)
    rv, ro = np.array(vals, dtype=np.int32), np.array(offs, dtype=np.int64)
    g = np.array(groups, dtype=np.int64)
    got = both("_ngram.bleu_pair_stats", hv, ho, rv, ro, g, order)
    # the fused pass equals preparing the references and scoring against them
    np.testing.assert_array_equal(got, _ngram.bleu_stats(
        hv, ho, *_ngram.bleu_prepare_refs(streams, present, order), order))
    both("_ngram.bleu_pair_stats", hv, ho, rv, ro, g[:-1], order)  # ValueError: N + 1 groups
    both("_ngram.bleu_pair_stats", hv, ho, rv, ro, g[::-1].copy(), order)  # ValueError: decreasing


@case("_ngram.bleu_sentence_scores", 60)
def _(data, source):
    streams, present, order, hv, ho = _bleu_prepared(data, source)
    stats = _ngram.bleu_stats(hv, ho, *_ngram.bleu_prepare_refs(streams, present, order), order)
    extra = data.draw(st.lists(st.lists(st.integers(0, 30), min_size=2 + 2 * order,
                                        max_size=2 + 2 * order), max_size=4), label="extra")
    stats = np.concatenate([stats, np.array(extra, dtype=np.int64).reshape(-1, 2 + 2 * order)])
    for smooth in range(4):
        sv = data.draw(st.sampled_from([0.0, 0.1, 1.0, 0.01]), label="smooth_value")
        for eff in (False, True):
            for neumaier in (False, True):
                both("_ngram.bleu_sentence_scores", stats, order, smooth, sv, eff, neumaier)


def _chrf_prepared(data, source):
    hyps, refs = corpus(data, source)
    vocab = _text.Vocab()
    ws = data.draw(st.booleans(), label="whitespace")
    cmode = _text.MODE_CHARS_WS if ws else _text.MODE_CHARS
    c = data.draw(st.integers(0, 6), label="char_order")
    w = data.draw(st.integers(0 if c else 1, 2), label="word_order")
    chars = [_text.encode([x or "" for x in r], cmode, None) for r in refs]
    words = [encoded(r, _text.MODE_CHRF_WORDS, vocab) for r in refs] if w else []
    present = np.array([[x is not None for x in r] for r in refs], dtype=np.uint8)
    hc = _text.encode(hyps, cmode, None)
    hw = _text.encode(hyps, _text.MODE_CHRF_WORDS, vocab)
    return chars, words, present, c, w, hc, hw


@case("_ngram.chrf_prepare_refs")
def _(data, source):
    chars, words, present, c, w, _, _ = _chrf_prepared(data, source)
    both("_ngram.chrf_prepare_refs", chars, words, present, c, w)
    both("_ngram.chrf_prepare_refs", chars, words, present[:, :0], c, w)  # ValueError


@case("_ngram.chrf_stats")
def _(data, source):
    chars, words, present, c, w, hc, hw = _chrf_prepared(data, source)
    prep = _ngram.chrf_prepare_refs(chars, words, present, c, w)
    factor = data.draw(st.sampled_from([1.0, 4.0, 9.0, 0.25]), label="factor")
    eps = data.draw(st.booleans(), label="eps")
    n = len(hc[1]) - 1
    both("_ngram.chrf_stats", *hc, *hw, *prep, c, w, factor, eps)
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    both("_ngram.chrf_stats", hc[0], hc[1][a:b + 1] - hc[1][a], hw[0], hw[1][a:b + 1] - hw[1][a],
         *prep, c, w, factor, eps, a, b)
    seg_map = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
                                 label="seg_map"), dtype=np.int64)
    both("_ngram.chrf_stats", *hc, *hw, *prep, c, w, factor, eps, seg_map=seg_map)


@case("_ngram.chrf_f_scores", 60)
def _(data, source):
    chars, words, present, c, w, hc, hw = _chrf_prepared(data, source)
    prep = _ngram.chrf_prepare_refs(chars, words, present, c, w)
    stats, _ = _ngram.chrf_stats(*hc, *hw, *prep, c, w, 4.0, False)
    extra = data.draw(st.lists(st.lists(st.integers(0, 12), min_size=3 * (c + w),
                                        max_size=3 * (c + w)), max_size=4), label="extra")
    stats = np.concatenate([stats, np.array(extra, dtype=np.int64).reshape(-1, 3 * (c + w))])
    for factor in (1.0, 4.0, 9.0, 0.25):
        for eps in (False, True):
            both("_ngram.chrf_f_scores", stats, factor, eps)


@case("_ngram.order_by_row")
def _(data, source):
    _hyps, refs = corpus(data, source)
    _, seg_map = _lists.dedupe_index(list(zip(*refs)))  # real use: rows of repeated references
    rows = data.draw(st.sampled_from([seg_map, np.array(data.draw(
        st.lists(st.integers(-1, 9), max_size=40), label="rows"), dtype=np.int64)]), label="which")
    n_rows = (int(rows.max()) + 1 if len(rows) else 0) + data.draw(st.integers(-1, 3), label="extra")
    both("_ngram.order_by_row", rows, max(n_rows, 0))


def _group(data, source):
    """The samples of one MBR-like group (drawn text, some repeated) encoded like chrF/chrF++
    (code points + word ids) or BLEU (13a / none token ids), with their orders."""
    hyps, refs = corpus(data, source, none_refs=False)
    samples = hyps + [x for r in refs for x in r]
    samples += data.draw(st.lists(st.sampled_from(samples), max_size=3), label="repeats")
    kind = data.draw(st.sampled_from(["chrf", "chrf++", "bleu"]), label="kind")
    vocab = _text.Vocab()
    if kind == "bleu":
        mode = data.draw(st.sampled_from([_text.MODE_NONE, _text.MODE_13A]), label="mode")
        return samples, [encoded(samples, mode, vocab)], [data.draw(st.integers(1, 5), label="order")]
    cmode = data.draw(st.sampled_from([_text.MODE_CHARS, _text.MODE_CHARS_WS]), label="cmode")
    streams = [_text.encode(samples, cmode, None)]
    orders = [data.draw(st.integers(0 if kind == "chrf++" else 1, 6), label="char_order")]
    if kind == "chrf++":
        streams.append(encoded(samples, _text.MODE_CHRF_WORDS, vocab))
        orders.append(data.draw(st.integers(1, 2), label="word_order"))
    return samples, streams, orders


@case("_pairwise.group_ngrams")
def _(data, source):
    _, streams, orders = _group(data, source)
    both("_pairwise.group_ngrams", streams, orders)
    both("_pairwise.group_ngrams", streams, [*orders, 1])  # ValueError
    both("_pairwise.group_ngrams", streams, [-1, *orders[1:]])  # ValueError
    v, o = streams[0]
    both("_pairwise.group_ngrams", [(v, o[::-1].copy())], orders[:1])  # decreasing offsets


def _matrix_args(data, source, func):
    """Arguments of a matrix kernel (through ``part``) with ``out`` last-but-one, for kernel and
    twin each their own ``out``."""
    _, streams, orders = _group(data, source)
    if func == "chrf" and sum(orders) == 0:
        orders = [1, *orders[1:]]
    if func == "bleu":
        streams, orders = streams[:1], orders[:1]
    g = _pairwise.group_ngrams(streams, orders)
    s = len(g[3])
    symmetric = data.draw(st.booleans(), label="symmetric")
    if symmetric:
        rows = cols = np.arange(s, dtype=np.int64)
    else:
        rows = np.array(data.draw(st.lists(st.integers(0, s - 1), max_size=6), label="rows"), np.int64)
        cols = np.array(data.draw(st.lists(st.integers(0, s - 1), max_size=6), label="cols"), np.int64)
    part = np.array(data.draw(st.permutations(range(len(cols))), label="part"), np.int64)
    part = part[:data.draw(st.integers(0, len(part)), label="n_part")]
    if func == "chrf":
        opts = (data.draw(st.sampled_from([1.0, 4.0, 9.0, 0.25]), label="factor"),
                data.draw(st.booleans(), label="eps"))
    else:
        opts = (data.draw(st.integers(0, 3), label="smooth"),
                data.draw(st.sampled_from([0.0, 0.1, 1.0]), label="smooth_value"),
                data.draw(st.booleans(), label="eff"), data.draw(st.booleans(), label="neumaier"))
    return (*g, rows, cols, symmetric, *opts), (len(rows), len(cols)), part


def _both_matrix(func, args, shape, part):
    k, t = pair(func)
    outs = [np.full(shape, -7.0) for _ in range(2)]
    assert outcome(k, *args, outs[0], part) == outcome(t, *args, outs[1], part)
    assert_same(outs[0], outs[1])
    bad = np.array([shape[1]], np.int64)  # not a column: ValueError
    assert outcome(k, *args, outs[0], bad) == outcome(t, *args, outs[1], bad) == ("raised", ValueError)
    small = np.zeros((shape[0] + 1, shape[1]))
    assert outcome(k, *args, small, part) == outcome(t, *args, small, part) == ("raised", ValueError)


@case("_pairwise.chrf_matrix")
def _(data, source):
    _both_matrix("_pairwise.chrf_matrix", *_matrix_args(data, source, "chrf"))


@case("_pairwise.bleu_matrix")
def _(data, source):
    _both_matrix("_pairwise.bleu_matrix", *_matrix_args(data, source, "bleu"))


# bytes a piece table is made of: whole and cut UTF-8 characters, lone lead / continuation
# bytes, surrogate and overlong encodings, U+FFFD itself, spaces (a Strip's character)
_PIECE_BYTES = [b"", b" ", b"  ", b"a", b"\xe2\x96\x81", b"\xe4", b"\xe4\xb8", b"\xad", b"\xf0\x9f",
                b"\x98\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xef\xbf\xbd", b"\xff", b"\xf4\x90\x80\x80"]
_BYTE_VALUES = [0x20, 0x41, 0xC3, 0xA9, 0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98, 0x80, 0xED, 0xA0, 0xC0, 0xFF]


@case("_detok.decode_rows", 80)
def _(data, source):
    if source == "wmt":  # pieces: a segment's UTF-8 bytes cut at random points
        raw = " ".join(texts(data, source)).encode("utf-8")[:400]
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
    both("_detok.decode_rows", values, offsets, *table, mode, data.draw(st.booleans(), label="bos"),
         data.draw(st.booleans(), label="once"), strip, data.draw(st.integers(0, 3), label="n_strip"))
    both("_detok.decode_rows", values, offsets, *table, mode)
    if len(values):  # an id outside the table; a decreasing offset
        bad = values.copy()
        bad[-1] = V
        both("_detok.decode_rows", bad, offsets, *table, mode)
        both("_detok.decode_rows", values, offsets[::-1].copy(), *table, mode)
    both("_detok.decode_rows", values, offsets, *table, 2)  # no such mode
    both("_detok.decode_rows", values, offsets, buf, form_offsets[:-1].copy(), flags, byte_values, mode)
    both("_detok.decode_rows", values, offsets, *table, mode, strip_count=1)  # no strip_char


def _ter_corpus(data, source):
    hyps, refs = corpus(data, source, n_max=4, max_words=14)
    opts = data.draw(st.fixed_dictionaries(
        {"normalized": st.booleans(), "no_punct": st.booleans(), "asian_support": st.booleans()}),
        label="opts")
    return hyps, refs, opts


@case("_ter_normalize.TercomVocab")
def _(data, source):
    lines = [t.rstrip().lower() for t in texts(data, source)]
    vk, vt = _ter_normalize.TercomVocab(), ter_normalize.TercomVocab()
    _ter_normalize.tercom_tokenize(lines, vk, True)
    ter_normalize.tercom_tokenize(lines, vt, True)
    assert len(vk) == len(vt)
    assert [vk.token(i) for i in range(len(vk))] == [vt.token(i) for i in range(len(vt))]
    for i in (-1, len(vk)):
        assert outcome(vk.token, i) == outcome(vt.token, i) == ("raised", IndexError)


@case("_ter_normalize.tercom_normalize_texts", 80)
def _(data, source):
    lines = texts(data, source)
    for opts in ({}, {"normalized": True}, {"no_punct": True},
                 {"normalized": True, "asian_support": True},
                 {"no_punct": True, "asian_support": True},
                 {"normalized": True, "no_punct": True, "asian_support": True},
                 {"rstrip": True}, {"lowercase": True}, {"normalized": True, "rstrip": True,
                                                         "lowercase": True}):
        both("_ter_normalize.tercom_normalize_texts", lines, **opts)
    both("_ter_normalize.tercom_normalize_texts", [*lines, None])  # TypeError


@case("_ter_normalize.tercom_tokenize")
def _(data, source):
    lines = texts(data, source)
    for opts in ({}, {"normalized": True, "asian_support": True}, {"no_punct": True},
                 {"rstrip": True, "lowercase": True}, {"normalized": True, "lowercase": True}):
        k = _ter_normalize.tercom_tokenize(lines, _ter_normalize.TercomVocab(), **opts)
        t = ter_normalize.tercom_tokenize(lines, ter_normalize.TercomVocab(), **opts)
        assert_same(k, t)


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
    k, t = pair("_ter_shift.ter_stats_range")
    assert outcome(k, *args, outs[0], a, b) == outcome(t, *args, outs[1], a, b)
    assert_same(outs[0], outs[1])
    assert outcome(k, *args, outs[0], b, n + 1) == outcome(t, *args, outs[1], b, n + 1)


@case("_ter_shift.ter_stats_shared", 25)
def _(data, source):
    args = _ter_inputs(data, source)
    n = len(args[1]) - 1
    order = np.array(data.draw(st.permutations(list(range(n))), label="order"), dtype=np.int64)
    grain = data.draw(st.integers(1, 3), label="grain")
    outs = [np.full((n, 2), -7.0) for _ in range(2)]
    counters = [np.zeros(1, np.int64) for _ in range(2)]
    k, t = pair("_ter_shift.ter_stats_shared")
    assert outcome(k, *args, outs[0], order, counters[0], grain) == \
        outcome(t, *args, outs[1], order, counters[1], grain)
    assert_same(outs[0], outs[1])
    assert_same(counters[0], counters[1])
    assert outcome(k, *args, outs[0], order + n, np.zeros(1, np.int64)) == \
        outcome(t, *args, outs[1], order + n, np.zeros(1, np.int64))


@case("_ter_shift.ter_pair_ids", 80)
def _(data, source):
    if source == "wmt":
        hyp_ids, hyp_off, ref_ids, ref_off, _seg_refs = _ter_inputs(data, source)
        h, r = hyp_ids[hyp_off[0]:hyp_off[1]], ref_ids[ref_off[0]:ref_off[1]]
    else:  # few distinct tokens: many equal blocks, so many shift candidates
        ints = st.lists(st.integers(0, 6), max_size=15)
        h = np.array(data.draw(ints, label="h"), np.int32)
        r = np.array(data.draw(ints, label="r"), np.int32)
    both("_ter_shift.ter_pair_ids", h, r)


def _sentence_rows(data, source):
    """(hypothesis, references) of each drawn segment: its non-None references, and now and
    then one with a None among them (the kernels then return None) or none at all."""
    hyps, refs = corpus(data, source)
    rows = [(h, [r[i] for r in refs if r[i] is not None]) for i, h in enumerate(hyps)]
    if data.draw(st.booleans(), label="odd refs"):
        rows.append((hyps[0], rows[0][1] + [None]))
        rows.append((hyps[0], []))  # ValueError
        rows.append((hyps[0], tuple(rows[0][1])))
    return rows


@case("_sentence.bleu_sentence", 60)
def _(data, source):
    _intl()
    mode = data.draw(st.sampled_from([0, 1, 2, 3, 4]), label="mode")
    order = data.draw(st.integers(1, 6), label="order")
    smooth = data.draw(st.integers(0, 3), label="smooth")
    sv = data.draw(st.sampled_from([0.0, 0.1, 1.0, 2.5]), label="smooth_value")
    eff, neu, rstrip = (data.draw(st.booleans(), label=x) for x in ("eff", "neumaier", "rstrip"))
    for hyp, refs in _sentence_rows(data, source):
        both("_sentence.bleu_sentence", hyp, refs, mode, rstrip, order, smooth, sv, eff, neu)
    both("_sentence.bleu_sentence", "a b", ["a c"], 9)  # ValueError: not a BLEU mode
    both("_sentence.bleu_sentence", "a b", ["a c"], 1, True, 0)  # ValueError: max_order
    both("_sentence.bleu_sentence", None, ["a c"], 1)  # TypeError


@case("_sentence.chrf_sentence", 60)
def _(data, source):
    c = data.draw(st.integers(0, 6), label="char_order")
    w = data.draw(st.integers(0 if c else 1, 2), label="word_order")
    factor = data.draw(st.sampled_from([1.0, 4.0, 9.0, 0.25]), label="factor")
    eps, ws = (data.draw(st.booleans(), label=x) for x in ("eps", "whitespace"))
    for hyp, refs in _sentence_rows(data, source):
        both("_sentence.chrf_sentence", hyp, refs, c, w, factor, eps, ws)
    both("_sentence.chrf_sentence", "a b", ["a c"], 0, 0)  # ValueError
    both("_sentence.chrf_sentence", None, ["a c"])  # TypeError


@case("_ter_fused.ter_sentence", 40)
def _(data, source):
    opts = {k: data.draw(st.booleans(), label=k) for k in ("normalized", "no_punct", "asian_support")}
    for hyp, refs in _sentence_rows(data, source):
        low = [r.rstrip().lower() if r is not None else None for r in refs]
        both("_ter_fused.ter_sentence", hyp.rstrip().lower(), type(refs)(low), **opts)
    both("_ter_fused.ter_sentence", None, ["a c"])  # TypeError


@case("_ter_fused.ter_corpus_plain", 30)
def _(data, source):
    opts = {k: data.draw(st.booleans(), label=k) for k in ("no_punct", "asian_support", "lowercase")}
    hyps, refs = corpus(data, source, k_max=1, none_refs=False)
    both("_ter_fused.ter_corpus_plain", hyps, refs[0], **opts)
    both("_ter_fused.ter_corpus_plain", hyps, [*refs[0][:-1], None], **opts)  # None: not handled here
    both("_ter_fused.ter_corpus_plain", hyps, refs[0] + ["a"], **opts)  # ValueError


@case("_ter_shift.ter_matrix", 25)
def _(data, source):
    hyp_ids, hyp_off, ref_ids, ref_off, _ = _ter_inputs(data, source)
    n, m = len(hyp_off) - 1, len(ref_off) - 1
    part = np.array(data.draw(st.permutations(range(m)), label="part"), np.int64)
    part = part[:data.draw(st.integers(0, m), label="n_part")]
    outs = [np.full((n, m), -7, np.int64) for _ in range(2)]
    k, t = pair("_ter_shift.ter_matrix")
    assert outcome(k, hyp_ids, hyp_off, ref_ids, ref_off, outs[0], part) == \
        outcome(t, hyp_ids, hyp_off, ref_ids, ref_off, outs[1], part)
    assert_same(outs[0], outs[1])
    bad = np.array([m], np.int64)
    assert outcome(k, hyp_ids, hyp_off, ref_ids, ref_off, outs[0], bad) == \
        outcome(t, hyp_ids, hyp_off, ref_ids, ref_off, outs[1], bad) == ("raised", ValueError)


def _stats(data, source, dtype=np.int64):
    """A statistics matrix: BLEU statistics of the drawn text, or drawn numbers."""
    if source == "wmt" or data.draw(st.booleans(), label="from text"):
        streams, present, order, hv, ho = _bleu_prepared(data, source)
        x = _ngram.bleu_stats(hv, ho, *_ngram.bleu_prepare_refs(streams, present, order), order)
        x = np.abs(x)
    else:
        n = data.draw(st.integers(1, 40), label="N")
        k = data.draw(st.integers(1, 6), label="K")
        x = np.array(data.draw(st.lists(st.integers(0, 1 << 20), min_size=n * k, max_size=n * k),
                               label="x"), dtype=np.int64).reshape(n, k)
    if dtype != np.int64:
        frac = data.draw(st.floats(0, 1, width=32), label="frac")
        x = x.astype(dtype) + dtype(frac)
    return np.ascontiguousarray(x, dtype=dtype)


def _seed(data):
    return data.draw(st.integers(0, 2 ** 63), label="seed")


@case("_resample.resample_sums")
def _(data, source):
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int64]), label="dtype")
    x = _stats(data, source, dtype)
    rng = np.random.default_rng(_seed(data))
    s = data.draw(st.integers(0, 4), label="S")
    idx = rng.integers(0, len(x), size=(s, data.draw(st.integers(0, 60), label="M")))
    outs = [np.zeros((s, x.shape[1]), dtype) for _ in range(2)]
    k, t = pair("_resample.resample_sums")
    assert outcome(k, x, idx, outs[0]) == outcome(t, x, idx, outs[1])
    assert_same(outs[0], outs[1])
    bad = np.array([[0, len(x)]], np.int64)
    one = np.zeros((1, x.shape[1]), dtype)
    assert outcome(k, x, bad, one) == outcome(t, x, bad, one) == ("raised", IndexError)
    assert outcome(k, x, idx, one[:, :0]) == outcome(t, x, idx, one[:, :0]) == ("raised", ValueError)


@case("_resample.masked_sums")
def _(data, source):
    x = _stats(data, source)
    rng = np.random.default_rng(_seed(data))
    mask = rng.integers(0, 2, size=(data.draw(st.integers(0, 9), label="T"), len(x))).astype(np.uint8)
    outs = [np.zeros((len(mask), x.shape[1]), np.int64) for _ in range(2)]
    k, t = pair("_resample.masked_sums")
    assert outcome(k, x, mask, outs[0]) == outcome(t, x, mask, outs[1])
    assert_same(outs[0], outs[1])


@case("_resample.draw_counts")
def _(data, source):
    n = len(_stats(data, source))
    s = data.draw(st.integers(0, 5), label="S")
    m = data.draw(st.integers(0, 80), label="M")
    idx = np.random.default_rng(_seed(data)).integers(0, n, size=(s, m))
    if data.draw(st.booleans(), label="bad") and s and m:
        idx[-1, -1] = data.draw(st.sampled_from([-1, n]), label="bad value")
    outs = [np.full((s, n), 7.0, np.float32) for _ in range(2)]
    k, t = pair("_resample.draw_counts")
    assert outcome(k, idx, outs[0]) == outcome(t, idx, outs[1])
    if outcome(k, idx, outs[0]) is None:
        assert_same(outs[0], outs[1])


@case("_resample.pcg64_draw_indices")
def _(data, source):
    n = len(_stats(data, source))
    state = np.random.Generator(np.random.PCG64(_seed(data))).bit_generator.state
    if data.draw(st.booleans(), label="odd draw"):  # has_uint32 set: a buffered half is pending
        g = np.random.Generator(np.random.PCG64())
        g.bit_generator.state = state
        g.integers(0, 5, size=1, dtype=np.int64)
        state = g.bit_generator.state
    s = data.draw(st.integers(0, 4), label="S")
    m = data.draw(st.sampled_from([-1, 0, 1, 7, n]), label="M")
    both("_resample.pcg64_draw_indices", state, s, n, m)
    both("_resample.pcg64_draw_indices", state, s, data.draw(st.sampled_from([0, 1, 2, 2 ** 31 - 1]),
                                                             label="N"), 3)
    both("_resample.pcg64_draw_indices", {"bit_generator": "MT19937"}, 1, 3)  # ValueError


@case("_resample.pcg64_draw_counts")
def _(data, source):
    n = len(_stats(data, source))
    state = np.random.Generator(np.random.PCG64(_seed(data))).bit_generator.state
    s = data.draw(st.integers(0, 4), label="S")
    outs = [np.full((s, n), 7.0, np.float32) for _ in range(2)]
    k, t = pair("_resample.pcg64_draw_counts")
    assert_same(outcome(k, state, outs[0]), outcome(t, state, outs[1]))
    assert_same(outs[0], outs[1])
    assert outcome(k, state, np.zeros((1, 0), np.float32)) == \
        outcome(t, state, np.zeros((1, 0), np.float32)) == ("raised", ValueError)


@case("_greedy.greedy_prf", 30)
def _(data, source):
    if source == "wmt":  # sentence lengths of real text ([CLS] + words + [SEP])
        lens = [len(t.split()) % 10 + 2 for t in texts(data, source)]
    else:
        lens = data.draw(st.lists(st.integers(0, 9), min_size=1, max_size=10), label="lens")
    rng = np.random.default_rng(_seed(data))
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    d = data.draw(st.integers(1, 16), label="D")
    emb = rng.normal(size=(int(off[-1]), d)).astype(np.float32)
    emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-6)
    if data.draw(st.booleans(), label="negative"):
        emb = -np.abs(emb)  # all similarities of a pair can be negative: the clamp matters
    w = rng.choice([0.0, 0.5, 1.0, 2.3], size=int(off[-1])).astype(np.float64)
    n = data.draw(st.integers(0, 30), label="pairs")
    hyp = rng.integers(0, len(lens), size=n).astype(np.int64)
    ref = rng.integers(0, len(lens), size=n).astype(np.int64)
    cp = rng.integers(0, 2, size=n).astype(np.uint8)
    cr = rng.integers(0, 2, size=n).astype(np.uint8)
    both("_greedy.greedy_prf", emb, off, w, emb, off, w, hyp, ref, cp, cr, approx=True)
    both("_greedy.greedy_prf", emb, off, w[:-1], emb, off, w, hyp, ref, cp, cr)  # ValueError


# ---- _edit_csr / _edit_distance / _edit_words: WER / CER / PER / EED -------------------------
def _edit_inputs(data, source, chars=False):
    """``(hyp values, hyp offsets, ref values, ref offsets, seg_refs)`` of a drawn corpus
    (None references left out of ``seg_refs``; a segment may end up with none)."""
    hyps, refs = corpus(data, source)
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
    lines = texts(data, source)
    vk, vt = _text.Vocab(), text.Vocab()
    for chunk in (lines, lines[::-1]):  # a second call shares the vocabulary
        assert_same(_edit_csr.jiwer_words(chunk, vk), edit_csr.jiwer_words(chunk, vt))
    assert [vk.token(i) for i in range(len(vk))] == [vt.token(i) for i in range(len(vt))]
    assert outcome(_edit_csr.jiwer_words, [1], _text.Vocab()) == outcome(edit_csr.jiwer_words, [1], text.Vocab())


@case("_edit_csr.code_points")
def _(data, source):
    lines = texts(data, source)
    for strip in (False, True):
        both("_edit_csr.code_points", lines, strip)
    both("_edit_csr.code_points", [*lines, None])  # TypeError


@case("_edit_distance.edit_stats_range", 60)
def _(data, source):
    k, t = pair("_edit_distance.edit_stats_range")
    args = _edit_inputs(data, source, chars=data.draw(st.booleans(), label="chars"))
    n = len(args[1]) - 1
    for measure in (0, 1):
        for multi in (0, 1, 2):
            outs = [np.full((n, 2), 7.0) for _ in range(2)]
            assert outcome(k, *args, outs[0], measure, multi) == outcome(t, *args, outs[1], measure, multi)
            assert_same(outs[0], outs[1])
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    outs = [np.full((n, 2), 7.0) for _ in range(2)]
    assert outcome(k, *args, outs[0], 0, 2, a, b) == outcome(t, *args, outs[1], 0, 2, a, b)
    assert_same(outs[0], outs[1])
    # long sequences: every block path of the bit-parallel kernel
    h, r = _long_symbols(data, "hyp"), _long_symbols(data, "ref")
    csr = (h, np.array([0, len(h)], np.int64), r, np.array([0, len(r)], np.int64),
           np.array([0, 1], np.int64))
    outs = [np.zeros((1, 2)) for _ in range(2)]
    k(*csr, outs[0], 0, 0)
    t(*csr, outs[1], 0, 0)
    assert_same(outs[0], outs[1])
    for bad in ((args[0], args[1], args[2], args[3], args[4][:-1]),  # seg_refs too short
                (args[0] - 1, *args[1:]) if len(args[0]) else (np.array([-1], np.int32),
                                                                 np.array([0, 1], np.int64), *args[2:])):
        o = [np.zeros((len(bad[1]) - 1, 2)) for _ in range(2)]
        assert outcome(k, *bad, o[0]) == outcome(t, *bad, o[1])


@case("_edit_words.word_stats_texts", 60)
def _(data, source):
    k, t = pair("_edit_words.word_stats_texts")
    hyps, refs = corpus(data, source)
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
            assert outcome(k, hyps, flat, lo, hi, outs[0], measure, multi) == \
                outcome(t, hyps, flat, lo, hi, outs[1], measure, multi)
            assert_same(outs[0], outs[1])
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    outs = [np.full((n, 2), 7.0) for _ in range(2)]
    assert outcome(k, hyps, flat, lo, hi, outs[0], 1, 2, a, b) == \
        outcome(t, hyps, flat, lo, hi, outs[1], 1, 2, a, b)
    assert_same(outs[0], outs[1])
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
        assert_same(o[0], o[1])
    # the same numbers as edit_stats_range on jiwer_words ids (a corpus vocabulary)
    vocab = _text.Vocab()
    hv, ho = _edit_csr.jiwer_words(hyps, vocab)
    rv, ro = _edit_csr.jiwer_words(flat, vocab)
    seg = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    o1, o2 = np.zeros((n, 2)), np.zeros((n, 2))
    _edit_distance.edit_stats_range(hv, ho, rv, ro, seg, o1, 0, 1)
    _edit_words.word_stats_texts(hyps, flat, seg[:-1].copy(), seg[1:].copy(), o2, 0, 1)
    assert_same(o1, o2)
    for bad in ((hyps, flat, lo, hi + 1, np.zeros((n, 2))),
                ([*hyps, None], flat, np.append(lo, 0), np.append(hi, 0), np.zeros((n + 1, 2))),
                (hyps, [*flat, None], lo, np.where(hi == hi.max(), len(flat) + 1, hi), np.zeros((n, 2))),
                (hyps, flat, lo, hi, np.zeros((n, 3)))):
        assert outcome(k, *bad) == outcome(t, *bad)


@case("_edit_distance.levenshtein")
def _(data, source):
    both("_edit_distance.levenshtein", _long_symbols(data, "a"), _long_symbols(data, "b"))
    vocab = _text.Vocab()
    x, y = data.draw(st.sampled_from(texts(data, source)), label="x"), \
        data.draw(st.sampled_from(texts(data, source)), label="y")
    both("_edit_distance.levenshtein", _edit_csr.jiwer_words([x], vocab)[0], _edit_csr.jiwer_words([y], vocab)[0])
    both("_edit_distance.levenshtein", _edit_csr.code_points([x])[0], _edit_csr.code_points([y])[0])
    both("_edit_distance.levenshtein", np.array([-1], np.int32), np.array([1], np.int32))  # ValueError


@case("_edit_distance.eed_scores", 15)
def _(data, source):
    from mtscore.engine.metrics.eed import preprocess_en

    hyps, refs = corpus(data, source, n_max=3, k_max=2)
    flat = [r[i] for i in range(len(hyps)) for r in refs if r[i] is not None]
    seg_refs = np.cumsum([0] + [sum(r[i] is not None for r in refs) for i in range(len(hyps))])
    pre = data.draw(st.booleans(), label="preprocess")
    hv, ho = _edit_csr.code_points([preprocess_en(h) if pre else h for h in hyps])
    rv, ro = _edit_csr.code_points([preprocess_en(x) if pre else x for x in flat])
    params = data.draw(st.sampled_from([(), (2.0, 0.3, 0.2, 1.0), (1.0, 0.0, 0.5, 0.7),
                                        (0.0, 1.5, 0.0, 2.0), (2.0, -1.0, 0.2, 1.0)]), label="params")
    both("_edit_distance.eed_scores", hv, ho, rv, ro, seg_refs.astype(np.int64), *params)
    empty = np.zeros(len(ho), np.int64)  # no reference at all: NaN
    both("_edit_distance.eed_scores", hv, ho, rv, ro, empty)


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
    refs = texts(data, source) + _word_set_texts(data)
    assert len(_edit_words.WordSets(refs)) == len(edit_words.WordSets(refs)) == len(refs)
    assert outcome(_edit_words.WordSets, [*refs, None]) == outcome(edit_words.WordSets, [*refs, None])


@case("_edit_words.word_stats_sets", 60)
def _(data, source):
    k, t = pair("_edit_words.word_stats_sets")
    hyps, refs = corpus(data, source)
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
        assert outcome(k, hyps, sk, lo, hi, outs[0], multi) == outcome(t, hyps, stw, lo, hi, outs[1], multi)
        assert_same(outs[0], outs[1])
        # the same numbers as the kernel that splits the references on every call
        _edit_words.word_stats_texts(hyps, flat, lo, hi, outs[2], 0, multi)
        assert_same(outs[0], outs[2])
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    outs = [np.full((n, 2), 7.0) for _ in range(2)]
    assert outcome(k, hyps, sk, lo, hi, outs[0], 2, a, b) == outcome(t, hyps, stw, lo, hi, outs[1], 2, a, b)
    assert_same(outs[0], outs[1])
    for bad in ((hyps, sk, lo, hi + 1, np.zeros((n, 2))),
                ([*hyps, None], sk, np.append(lo, 0), np.append(hi, 0), np.zeros((n + 1, 2))),
                (hyps, sk, lo, hi, np.zeros((n, 3))),
                (hyps, None, lo, hi, np.zeros((n, 2))),
                (hyps, flat, lo, hi, np.zeros((n, 2)))):
        twin_bad = tuple(stw if x is sk else x for x in bad)
        assert outcome(k, *bad) == outcome(t, *twin_bad)
    outs = [np.zeros((n, 2)) for _ in range(2)]
    assert outcome(k, hyps, sk, lo, hi, outs[0], 3) == outcome(t, hyps, stw, lo, hi, outs[1], 3)


def _params(f):
    return [(p.name, p.default) for p in inspect.signature(f).parameters.values()]


def assert_same_signature(kernel, twin):
    """Same parameter names and defaults; for a class, the same public methods (each with the
    same parameters) and ``__len__``."""
    if not isinstance(kernel, type):
        assert _params(kernel) == _params(twin), kernel
        return
    for name in [n for n in dir(kernel) if not n.startswith("_")] + ["__len__"]:
        assert hasattr(twin, name), (kernel, name)
        if not name.startswith("_"):
            assert _params(getattr(kernel, name)) == _params(getattr(twin, name)), (kernel, name)


# ---- the one parametrised test -------------------------------------------------------------
@pytest.mark.parametrize("source", ["wmt", "unicode"])
@pytest.mark.parametrize("func", sorted(CASES))
def test_kernel_equals_twin(func, source):
    kernel, twin = pair(func)
    assert_same_signature(kernel, twin)
    if source == "wmt" and wmt_rows() is None:
        pytest.skip(f"WMT21 segments not found under {data_dir()} (set MTSCORE_DATA)")
    check, examples = CASES[func]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(data=st.data())
    def run(data):
        check(data, source)

    run()


def test_every_kernel_function_has_a_twin_case():
    assert sorted(CASES) == kernel_functions()


# ---- the twins against their specification -------------------------------------------------
def test_twin_zh_ranges_equal_sacrebleu_on_every_code_point():
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    is_zh = TokenizerZh._is_chinese_char
    assert ([cp for cp in range(0x110000) if is_zh(chr(cp))]
            == [cp for cp in range(0x110000) if text.is_zh_char(chr(cp))])


def test_twin_ter_banded_case_gives_100_not_80():
    ref = [f"r{i}" for i in range(100)]
    hyp = [f"junk{i}" for i in range(40)] + ref[:60]
    assert ter_shift.translation_edit_rate(hyp, ref) == (100, 100)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 6), max_size=15), st.lists(st.integers(0, 6), max_size=15))
def test_twin_ter_equals_sacrebleu_on_random_token_ids(h, r):
    from sacrebleu.metrics.lib_ter import translation_edit_rate as sacre_ter_pair

    assert ter_shift.translation_edit_rate(h, r) == sacre_ter_pair([str(x) for x in h], [str(x) for x in r])


_TER_OPTIONS = [{}, {"normalized": True}, {"no_punct": True}, {"normalized": True, "asian_support": True},
                {"no_punct": True, "asian_support": True},
                {"normalized": True, "no_punct": True, "asian_support": True}, {"case_sensitive": True},
                {"normalized": True, "no_punct": True, "asian_support": True, "case_sensitive": True}]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_CHARS), max_size=40).map("".join))
def test_twin_tercom_normalizer_equals_sacrebleu(s):
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    for opts in _TER_OPTIONS:
        sacre = TercomTokenizer(**opts)
        assert ter_normalize.tercom_normalize(s, **opts) == sacre(s.rstrip())
        # references: sacrebleu preprocesses them twice
        assert ter_normalize.tercom_normalize_reference(s, **opts) == sacre(sacre(s.rstrip()).rstrip())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_twin_resampling_equals_numpy(dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5000, size=(400, 7)).astype(dtype)
    if dtype != np.int64:
        x = x + rng.random(x.shape).astype(dtype)  # non-integers: the summation order matters
    idx = rng.integers(0, len(x), size=(2, 300))
    out = np.empty((2, 7), dtype=dtype)
    resample.resample_sums(x, idx, out)
    assert np.array_equal(out, np.stack([x[i].sum(0) for i in idx]))  # sacrebleu's operation
    counts = np.full((2, len(x)), 7.0, np.float32)
    resample.draw_counts(idx, counts)
    assert np.array_equal(counts, np.stack([np.bincount(i, minlength=len(x)) for i in idx]))
    xi = rng.integers(0, 1 << 40, size=(257, 6), dtype=np.int64)
    mask = rng.integers(2, size=(9, 257), dtype=bool)
    out2 = np.empty((9, 6), np.int64)
    resample.masked_sums(xi, mask.view(np.uint8), out2)
    assert np.array_equal(out2, mask.astype(np.int64) @ xi)

