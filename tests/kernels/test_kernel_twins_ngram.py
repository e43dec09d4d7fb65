"""Kernel-twin checks (see ``test_kernel_twins.py``) of ``_ngram`` / ``_pairwise`` (BLEU, chrF statistics and matrices),
``_resample`` and ``_greedy`` (BERTScore matcher, compared with a tolerance).
"""
from __future__ import annotations

import numpy as np
import pytest
import twins_harness as th
from hypothesis import strategies as st

from mtscore.kernels import (
    _lists,
    _ngram,
    _pairwise,
    _text,
)

CASES: dict[str, tuple] = {}  # kernel function -> (check, examples)
case = th.case_registry(CASES)


def _bleu_prepared(data, source):
    hyps, refs = th.corpus(data, source)
    vocab = _text.Vocab()
    mode = data.draw(st.sampled_from([_text.MODE_NONE, _text.MODE_13A]), label="mode")
    streams = [th.encoded(r, mode, vocab) for r in refs]
    present = np.array([[x is not None for x in r] for r in refs], dtype=np.uint8)
    order = data.draw(st.integers(1, 6), label="order")
    hv, ho = th.encoded(hyps, mode, vocab)
    return streams, present, order, hv, ho


@case("_ngram.bleu_prepare_refs")
def _(data, source):
    streams, present, order, _, _ = _bleu_prepared(data, source)
    th.both("_ngram.bleu_prepare_refs", streams, present, order)
    th.both("_ngram.bleu_prepare_refs", streams, present[:, :0], order)  # ValueError


@case("_ngram.bleu_stats")
def _(data, source):
    streams, present, order, hv, ho = _bleu_prepared(data, source)
    prep = _ngram.bleu_prepare_refs(streams, present, order)
    n = len(ho) - 1
    th.both("_ngram.bleu_stats", hv, ho, *prep, order)
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    th.both("_ngram.bleu_stats", hv, ho[a:b + 1] - ho[a], *prep, order, a, b)
    seg_map = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
                                 label="seg_map"), dtype=np.int64)
    th.both("_ngram.bleu_stats", hv, ho, *prep, order, seg_map=seg_map)
    th.both("_ngram.bleu_stats", hv, ho, *prep, order, seg_map=seg_map + n)  # ValueError


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
    got = th.both("_ngram.bleu_pair_stats", hv, ho, rv, ro, g, order)
    # the fused pass equals preparing the references and scoring against them
    np.testing.assert_array_equal(got, _ngram.bleu_stats(
        hv, ho, *_ngram.bleu_prepare_refs(streams, present, order), order))
    th.both("_ngram.bleu_pair_stats", hv, ho, rv, ro, g[:-1], order)  # ValueError: N + 1 groups
    th.both("_ngram.bleu_pair_stats", hv, ho, rv, ro, g[::-1].copy(), order)  # ValueError: decreasing


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
                th.both("_ngram.bleu_sentence_scores", stats, order, smooth, sv, eff, neumaier)


def _chrf_prepared(data, source):
    hyps, refs = th.corpus(data, source)
    vocab = _text.Vocab()
    ws = data.draw(st.booleans(), label="whitespace")
    cmode = _text.MODE_CHARS_WS if ws else _text.MODE_CHARS
    c = data.draw(st.integers(0, 6), label="char_order")
    w = data.draw(st.integers(0 if c else 1, 2), label="word_order")
    chars = [_text.encode([x or "" for x in r], cmode, None) for r in refs]
    words = [th.encoded(r, _text.MODE_CHRF_WORDS, vocab) for r in refs] if w else []
    present = np.array([[x is not None for x in r] for r in refs], dtype=np.uint8)
    hc = _text.encode(hyps, cmode, None)
    hw = _text.encode(hyps, _text.MODE_CHRF_WORDS, vocab)
    return chars, words, present, c, w, hc, hw


@case("_ngram.chrf_prepare_refs")
def _(data, source):
    chars, words, present, c, w, _, _ = _chrf_prepared(data, source)
    th.both("_ngram.chrf_prepare_refs", chars, words, present, c, w)
    th.both("_ngram.chrf_prepare_refs", chars, words, present[:, :0], c, w)  # ValueError


@case("_ngram.chrf_stats")
def _(data, source):
    chars, words, present, c, w, hc, hw = _chrf_prepared(data, source)
    prep = _ngram.chrf_prepare_refs(chars, words, present, c, w)
    factor = data.draw(st.sampled_from([1.0, 4.0, 9.0, 0.25]), label="factor")
    eps = data.draw(st.booleans(), label="eps")
    n = len(hc[1]) - 1
    th.both("_ngram.chrf_stats", *hc, *hw, *prep, c, w, factor, eps)
    a = data.draw(st.integers(0, n), label="start")
    b = data.draw(st.integers(a, n), label="stop")
    th.both("_ngram.chrf_stats", hc[0], hc[1][a:b + 1] - hc[1][a], hw[0], hw[1][a:b + 1] - hw[1][a],
         *prep, c, w, factor, eps, a, b)
    seg_map = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
                                 label="seg_map"), dtype=np.int64)
    th.both("_ngram.chrf_stats", *hc, *hw, *prep, c, w, factor, eps, seg_map=seg_map)


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
            th.both("_ngram.chrf_f_scores", stats, factor, eps)


@case("_ngram.order_by_row")
def _(data, source):
    _hyps, refs = th.corpus(data, source)
    _, seg_map = _lists.dedupe_index(list(zip(*refs)))  # real use: rows of repeated references
    rows = data.draw(st.sampled_from([seg_map, np.array(data.draw(
        st.lists(st.integers(-1, 9), max_size=40), label="rows"), dtype=np.int64)]), label="which")
    n_rows = (int(rows.max()) + 1 if len(rows) else 0) + data.draw(st.integers(-1, 3), label="extra")
    th.both("_ngram.order_by_row", rows, max(n_rows, 0))


def _group(data, source):
    """The samples of one MBR-like group (drawn text, some repeated) encoded like chrF/chrF++
    (code points + word ids) or BLEU (13a / none token ids), with their orders."""
    hyps, refs = th.corpus(data, source, none_refs=False)
    samples = hyps + [x for r in refs for x in r]
    samples += data.draw(st.lists(st.sampled_from(samples), max_size=3), label="repeats")
    kind = data.draw(st.sampled_from(["chrf", "chrf++", "bleu"]), label="kind")
    vocab = _text.Vocab()
    if kind == "bleu":
        mode = data.draw(st.sampled_from([_text.MODE_NONE, _text.MODE_13A]), label="mode")
        return samples, [th.encoded(samples, mode, vocab)], [data.draw(st.integers(1, 5), label="order")]
    cmode = data.draw(st.sampled_from([_text.MODE_CHARS, _text.MODE_CHARS_WS]), label="cmode")
    streams = [_text.encode(samples, cmode, None)]
    orders = [data.draw(st.integers(0 if kind == "chrf++" else 1, 6), label="char_order")]
    if kind == "chrf++":
        streams.append(th.encoded(samples, _text.MODE_CHRF_WORDS, vocab))
        orders.append(data.draw(st.integers(1, 2), label="word_order"))
    return samples, streams, orders


@case("_pairwise.group_ngrams")
def _(data, source):
    _, streams, orders = _group(data, source)
    th.both("_pairwise.group_ngrams", streams, orders)
    th.both("_pairwise.group_ngrams", streams, [*orders, 1])  # ValueError
    th.both("_pairwise.group_ngrams", streams, [-1, *orders[1:]])  # ValueError
    v, o = streams[0]
    th.both("_pairwise.group_ngrams", [(v, o[::-1].copy())], orders[:1])  # decreasing offsets


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
    k, t = th.pair(func)
    outs = [np.full(shape, -7.0) for _ in range(2)]
    assert th.outcome(k, *args, outs[0], part) == th.outcome(t, *args, outs[1], part)
    th.assert_same(outs[0], outs[1])
    bad = np.array([shape[1]], np.int64)  # not a column: ValueError
    assert th.outcome(k, *args, outs[0], bad) == th.outcome(t, *args, outs[1], bad) == ("raised", ValueError)
    small = np.zeros((shape[0] + 1, shape[1]))
    assert th.outcome(k, *args, small, part) == th.outcome(t, *args, small, part) == ("raised", ValueError)


@case("_pairwise.chrf_matrix")
def _(data, source):
    _both_matrix("_pairwise.chrf_matrix", *_matrix_args(data, source, "chrf"))


@case("_pairwise.bleu_matrix")
def _(data, source):
    _both_matrix("_pairwise.bleu_matrix", *_matrix_args(data, source, "bleu"))


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
    k, t = th.pair("_resample.resample_sums")
    assert th.outcome(k, x, idx, outs[0]) == th.outcome(t, x, idx, outs[1])
    th.assert_same(outs[0], outs[1])
    bad = np.array([[0, len(x)]], np.int64)
    one = np.zeros((1, x.shape[1]), dtype)
    assert th.outcome(k, x, bad, one) == th.outcome(t, x, bad, one) == ("raised", IndexError)
    assert th.outcome(k, x, idx, one[:, :0]) == th.outcome(t, x, idx, one[:, :0]) == ("raised", ValueError)


@case("_resample.masked_sums")
def _(data, source):
    x = _stats(data, source)
    rng = np.random.default_rng(_seed(data))
    mask = rng.integers(0, 2, size=(data.draw(st.integers(0, 9), label="T"), len(x))).astype(np.uint8)
    outs = [np.zeros((len(mask), x.shape[1]), np.int64) for _ in range(2)]
    k, t = th.pair("_resample.masked_sums")
    assert th.outcome(k, x, mask, outs[0]) == th.outcome(t, x, mask, outs[1])
    th.assert_same(outs[0], outs[1])


@case("_resample.draw_counts")
def _(data, source):
    n = len(_stats(data, source))
    s = data.draw(st.integers(0, 5), label="S")
    m = data.draw(st.integers(0, 80), label="M")
    idx = np.random.default_rng(_seed(data)).integers(0, n, size=(s, m))
    if data.draw(st.booleans(), label="bad") and s and m:
        idx[-1, -1] = data.draw(st.sampled_from([-1, n]), label="bad value")
    outs = [np.full((s, n), 7.0, np.float32) for _ in range(2)]
    k, t = th.pair("_resample.draw_counts")
    assert th.outcome(k, idx, outs[0]) == th.outcome(t, idx, outs[1])
    if th.outcome(k, idx, outs[0]) is None:
        th.assert_same(outs[0], outs[1])


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
    th.both("_resample.pcg64_draw_indices", state, s, n, m)
    th.both("_resample.pcg64_draw_indices", state, s, data.draw(st.sampled_from([0, 1, 2, 2 ** 31 - 1]),
                                                             label="N"), 3)
    th.both("_resample.pcg64_draw_indices", {"bit_generator": "MT19937"}, 1, 3)  # ValueError


@case("_resample.pcg64_draw_counts")
def _(data, source):
    n = len(_stats(data, source))
    state = np.random.Generator(np.random.PCG64(_seed(data))).bit_generator.state
    s = data.draw(st.integers(0, 4), label="S")
    outs = [np.full((s, n), 7.0, np.float32) for _ in range(2)]
    k, t = th.pair("_resample.pcg64_draw_counts")
    th.assert_same(th.outcome(k, state, outs[0]), th.outcome(t, state, outs[1]))
    th.assert_same(outs[0], outs[1])
    assert th.outcome(k, state, np.zeros((1, 0), np.float32)) == \
        th.outcome(t, state, np.zeros((1, 0), np.float32)) == ("raised", ValueError)


@case("_greedy.greedy_prf", 30)
def _(data, source):
    if source == "wmt":  # sentence lengths of real text ([CLS] + words + [SEP])
        lens = [len(t.split()) % 10 + 2 for t in th.texts(data, source)]
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
    th.both("_greedy.greedy_prf", emb, off, w, emb, off, w, hyp, ref, cp, cr, approx=True)
    th.both("_greedy.greedy_prf", emb, off, w[:-1], emb, off, w, hyp, ref, cp, cr)  # ValueError


# ---- the one parametrised test -------------------------------------------------------------
@pytest.mark.parametrize("source", ["wmt", "unicode"])
@pytest.mark.parametrize("func", sorted(CASES))
def test_kernel_equals_twin(func, source):
    th.run_case(CASES, func, source)
