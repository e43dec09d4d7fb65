"""_ngram.bleu_stats looks a reference row's unigrams up in a dense array indexed by symbol
(symbols 0..max reference unigram) and every other symbol in the n-gram table: symbols on
both sides of that boundary, negative ones and int32 extremes must count exactly like the
plain-Python twin (mtscore/kernels/reference/ngram.py), rows switching back and forth
included (the dense array is reset between rows). Symbols are ids (>= 0, as the kernels
document); ids near 2**31 must not size the dense array (they take the table)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mtscore.kernels import _ngram
from mtscore.kernels.reference import ngram

I32 = np.iinfo(np.int32)
# small symbols (dense range), symbols past every small reference unigram, and ids beyond the
# dense array's cap
SYMS = st.one_of(st.integers(0, 6), st.integers(7, 40),
                 st.sampled_from([65535, 65536, 1 << 20, I32.max - 1, I32.max]))


def _csr(segs):
    vals = np.array([x for s in segs for x in s], dtype=np.int32)
    offs = np.cumsum([0] + [len(s) for s in segs]).astype(np.int64)
    return vals, offs


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(SYMS, max_size=9), min_size=1, max_size=4),
       st.lists(st.lists(SYMS, max_size=9), min_size=1, max_size=12),
       st.integers(1, 5), st.data())
def test_bleu_stats_equal_twin_for_any_symbols(refs, hyps, order, data):
    rv, ro = _csr(refs)
    present = np.ones((1, len(refs)), dtype=np.uint8)
    prep = _ngram.bleu_prepare_refs([(rv, ro)], present, order)
    hv, ho = _csr(hyps)
    seg_map = np.array(data.draw(st.lists(st.integers(0, len(refs) - 1), min_size=len(hyps),
                                          max_size=len(hyps))), dtype=np.int64)
    got = _ngram.bleu_stats(hv, ho, *prep, order, seg_map=seg_map)
    want = ngram.bleu_stats(hv, ho, *prep, order, seg_map=seg_map)
    np.testing.assert_array_equal(got, want)


def test_rows_alternating_reset_the_dense_unigrams():
    refs = [[0, 1, 2, 3], [4, 5, 6], [0, 0, 9]]
    rv, ro = _csr(refs)
    prep = _ngram.bleu_prepare_refs([(rv, ro)], np.ones((1, 3), dtype=np.uint8), 4)
    hyps = [[0, 1, 2, 3, 4], [0, 1, 5, 6], [0, 1, 2, 3], [0, 0, 0, 9, 4], [4, 5, 6, 0]]
    hv, ho = _csr(hyps)
    seg_map = np.array([0, 1, 0, 2, 1], dtype=np.int64)
    got = _ngram.bleu_stats(hv, ho, *prep, 4, seg_map=seg_map)
    # [hyp_len, ref_len, correct_1..4, total_1..4]
    assert got[0].tolist() == [5, 4, 4, 3, 2, 1, 5, 4, 3, 2]
    assert got[1].tolist() == [4, 3, 2, 1, 0, 0, 4, 3, 2, 1]
    assert got[2].tolist() == [4, 4, 4, 3, 2, 1, 4, 3, 2, 1]
    assert got[3].tolist() == [5, 3, 3, 2, 1, 0, 5, 4, 3, 2]
    assert got[4].tolist() == [4, 3, 3, 2, 1, 0, 4, 3, 2, 1]
    np.testing.assert_array_equal(got, ngram.bleu_stats(hv, ho, *prep, 4, seg_map=seg_map))
