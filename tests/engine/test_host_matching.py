"""The host matcher over threads (mtscore.engine.encoder.host_matching) and BERTScore's chunk
bookkeeping (mtscore.engine.bertscore_pairs)."""
from __future__ import annotations

import numpy as np
import pytest

from mtscore.engine.bertscore_pairs import best_over_refs, plan_chunk, quirk_flags
from mtscore.engine.encoder import host_matching
from mtscore.engine.encoder.host_matching import match_host
from mtscore.kernels._greedy import greedy_prf


def _data(n_sent=60, n_pairs=2000, d=40, seed=0):
    rng = np.random.default_rng(seed)
    lens = rng.integers(2, 30, n_sent)
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    emb = rng.normal(size=(int(off[-1]), d)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    w = rng.choice([0.0, 1.0, 2.5], size=int(off[-1])).astype(np.float64)
    h = rng.integers(0, n_sent, n_pairs).astype(np.int64)
    r = rng.integers(0, n_sent, n_pairs).astype(np.int64)
    cp = rng.integers(0, 2, n_pairs).astype(np.uint8)
    cr = rng.integers(0, 2, n_pairs).astype(np.uint8)
    return emb, off, w, h, r, cp, cr


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_threads_give_the_kernels_numbers_bit_for_bit(threads, monkeypatch):
    monkeypatch.setattr(host_matching, "MIN_PAIRS_PER_THREAD", 16)
    emb, off, w, h, r, cp, cr = _data()
    want = greedy_prf(emb, off, w, emb, off, w, h, r, cp, cr)
    got = match_host(emb, off, w, h, r, cp, cr, threads=threads)
    np.testing.assert_array_equal(got, want)


def test_threads_check_the_arguments_like_the_kernel(monkeypatch):
    monkeypatch.setattr(host_matching, "MIN_PAIRS_PER_THREAD", 16)
    emb, off, w, h, r, cp, cr = _data()
    with pytest.raises(ValueError, match="one entry per embedding row"):
        match_host(emb, off, w[:-1], h, r, cp, cr, threads=4)
    bad = h.copy()
    bad[-1] = len(off) - 1  # one past the last sentence
    with pytest.raises(IndexError, match="out of range"):
        match_host(emb, off, w, bad, r, cp, cr, threads=4)


def test_kernel_cosines_are_float32_of_the_exact_dot():
    """Each cosine is the exact dot product rounded once to float32 or within an ulp of it."""
    rng = np.random.default_rng(1)
    d = 1024
    a = rng.normal(size=(5, d)).astype(np.float32)
    b = rng.normal(size=(7, d)).astype(np.float32)
    emb = np.concatenate([a, b])
    off = np.array([0, 5, 12], dtype=np.int64)
    w = np.zeros(12)
    w[1] = 1.0  # P of pair (0, 1) is then the max cosine of row 1 of a
    got = greedy_prf(emb, off, w, emb, off, w, np.array([0]), np.array([1]), np.zeros(1, np.uint8),
                     np.zeros(1, np.uint8))[0, 0]
    exact = max(float(np.dot(a[1].astype(np.float64), x.astype(np.float64))) for x in b)
    assert abs(got - exact) <= 2 * np.spacing(np.float32(abs(exact)))


def test_plan_dedups_strips_and_skips_missing_references():
    plan = plan_chunk(["a ", "b", "a"], [["x", None, "a"], ["y", "z", None]])
    assert plan.texts == ["a", "b", "x", "y", "z"]
    assert plan.hyp_idx.tolist() == [0, 1, 0]
    assert plan.ph.tolist() == [0, 0, 0, 1]
    assert plan.pr.tolist() == [2, 0, 3, 4]
    assert plan.seg.tolist() == [0, 2, 0, 1]
    prf = np.array([[0.1, 0.9, 0.2], [0.5, 0.5, 0.5], [0.3, 0.2, 0.4], [0.7, 0.1, 0.6]])
    np.testing.assert_array_equal(best_over_refs(prf, plan), [[0.3, 0.9, 0.4], [0.7, 0.1, 0.6], [0.5, 0.5, 0.5]])


def test_segment_without_any_reference_is_an_error():
    plan = plan_chunk(["a", "b"], [["x", None]])
    with pytest.raises(ValueError, match="segment 1 has no reference"):
        best_over_refs(np.zeros((1, 3)), plan)


def test_quirk_flags_follow_bert_score_batches():
    plan = plan_chunk(["a", "b", "c"], [["x", "y", "z"]])
    lengths = np.array([3, 5, 4, 6, 2, 7], dtype=np.int64)  # a b c x y z
    cp, cr = quirk_flags(lengths, plan, 2)
    # batch 1: pairs (a,x) (b,y): refs 6, 2 -> cp for the shorter ref; hyps 3, 5 -> cr for the shorter hyp
    assert cp.tolist() == [0, 1, 0]
    assert cr.tolist() == [1, 0, 0]
    assert [f.tolist() for f in quirk_flags(lengths, plan, None)] == [[0, 0, 0], [0, 0, 0]]


def test_out_start_stop_fill_only_their_rows():
    emb, off, w, h, r, cp, cr = _data(n_pairs=50)
    want = greedy_prf(emb, off, w, emb, off, w, h, r, cp, cr)
    out = np.full((50, 3), -7.0)
    got = greedy_prf(emb, off, w, emb, off, w, h, r, cp, cr, out, 10, 30)
    assert got is out
    np.testing.assert_array_equal(out[10:30], want[10:30])
    assert (out[:10] == -7.0).all()
    assert (out[30:] == -7.0).all()
    with pytest.raises(ValueError, match="expected 0 <= start <= stop <= 50"):
        greedy_prf(emb, off, w, emb, off, w, h, r, cp, cr, out, 30, 10)
    with pytest.raises(ValueError, match=r"out must be float64 \[50, 3\]"):
        greedy_prf(emb, off, w, emb, off, w, h, r, cp, cr, np.zeros((49, 3)), 0, 5)
