"""Soft pairwise accuracy (Thompson et al. 2024; mt-metrics-eval ``PairwiseConfidenceError``).

For every pair of systems a paired permutation test on segment scores gives the p-value that
system i beats system j, once from human and once from metric scores; soft pairwise accuracy
is 1 - mean |p_human - p_metric| over the pairs. The permutation signs come from
``np.random.default_rng(seed)`` in float32, as in the reference, so values match it exactly.
"""
from __future__ import annotations

import numpy as np

from ..errors import AnalysisInputError
from ._inputs import Stream
from ._jit import kernels
from .results import PermutationResult

__all__ = ["pairwise_pvalues", "soft_pairwise_accuracy", "soft_permutation_test"]


def _signs(n_permutations: int, n_segments: int, seed: int) -> np.ndarray:
    """(P, N) float32 of +-1: the sign flips of the paired permutation test."""
    signs = np.random.default_rng(seed).random(size=(n_permutations, n_segments), dtype=np.float32)
    np.rint(signs, out=signs)
    signs *= np.float32(2.0)
    signs -= np.float32(1.0)
    return signs


def _pvalues(x: np.ndarray, signs: np.ndarray) -> np.ndarray:
    x32 = x.astype(np.float32)
    partial = np.ascontiguousarray(signs @ x32.T)
    return kernels().pairwise_pvalues(partial, x32.sum(axis=1))


def _one_minus_pce(ph: np.ndarray, pm: np.ndarray) -> float:
    iu = np.triu_indices(ph.shape[0], 1)
    return float(1.0 - np.mean(np.abs(ph - pm)[iu]))


def pairwise_pvalues(seg_scores, n_permutations: int = 1000, seed: int = 4) -> np.ndarray:
    """``seg_scores`` (S, N) -> (S, S) float64: [i, j] (i < j) is the share of sign flips
    whose null difference of summed scores is >= the observed one; NaN elsewhere."""
    x = np.asarray(seg_scores)
    if x.ndim != 2 or x.shape[0] < 2:
        raise AnalysisInputError(f"segment scores have shape {x.shape}: need (systems >= 2, segments)")
    if not np.isfinite(x).all():
        raise AnalysisInputError("segment scores must be finite: drop the segments a system lacks")
    if n_permutations < 1:
        raise AnalysisInputError(f"n_permutations={n_permutations}: it must be >= 1")
    return _pvalues(x, _signs(n_permutations, x.shape[1], seed))


def soft_pairwise_accuracy(human, metric, n_permutations: int = 1000, seed: int = 4) -> float:
    """Soft pairwise accuracy of ``metric`` (S, N) against ``human`` (S, N) segment scores
    (float64, complete). Returns float in [0, 1]."""
    ph = pairwise_pvalues(human, n_permutations, seed)
    pm = pairwise_pvalues(metric, n_permutations, seed)
    if ph.shape != pm.shape:
        raise AnalysisInputError(f"human has {ph.shape[0]} systems, metric {pm.shape[0]}: they must match")
    return _one_minus_pce(ph, pm)


def soft_permutation_test(human, metric1, metric2, k: int = 1000, block_size: int = 1000, early_min: float = 0.02,
                          early_max: float = 0.5, n_permutations: int = 1000, seed_pvalues: int = 4,
                          stream: str = "fast", seed: int | None = None) -> PermutationResult:
    """PERM-BOTH test between two metrics' soft pairwise accuracies (mt-metrics-eval
    ``CompareMetricsWithPairwiseConfidenceError``): the z-scored metric matrices (S, N) are
    swapped cell by cell with probability 1/2. Returns a :class:`PermutationResult` for
    "metric 2 is better". The human p-values and the sign flips are computed once."""
    import scipy.stats

    if k < 1 or block_size < 1:
        raise AnalysisInputError(f"k={k}, block_size={block_size}: both must be >= 1")
    h = np.asarray(human, dtype=np.float64)
    m1 = np.asarray(metric1, dtype=np.float64)
    m2 = np.asarray(metric2, dtype=np.float64)
    if not (h.shape == m1.shape == m2.shape) or h.ndim != 2:
        raise AnalysisInputError(f"human {h.shape}, metric1 {m1.shape}, metric2 {m2.shape}: need equal (S, N)")
    signs = _signs(n_permutations, h.shape[1], seed_pvalues)
    ph = pairwise_pvalues(h, n_permutations, seed_pvalues)
    s1 = scipy.stats.zscore(m1.ravel())
    s2 = scipy.stats.zscore(m2.ravel())

    def stat(v: np.ndarray) -> float:
        return _one_minus_pce(ph, _pvalues(v.reshape(h.shape), signs))

    rs = Stream(stream, seed)
    delta = stat(s2) - stat(s1)
    draws, large, i = [], 0, 0
    for i in range(1, k + 1):
        w = kernels().swap_mask(s1.shape[0], rs.mode, rs.key, rs.st, rs.xs)
        a, b = stat(np.where(w, s1, s2)), stat(np.where(w, s2, s1))
        draws.append((b, a))
        large += b - a >= delta
        if i % block_size == 0 and not early_min <= large / i <= early_max:
            break
    rs.commit()
    return PermutationResult(large / i, float(delta), i, np.asarray(draws).reshape(-1, 2))
