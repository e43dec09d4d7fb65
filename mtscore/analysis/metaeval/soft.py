"""Soft pairwise accuracy (Thompson et al. 2024; mt-metrics-eval ``PairwiseConfidenceError``).

For every pair of systems a paired permutation test on segment scores gives the p-value that
system i beats system j, once from human and once from metric scores; soft pairwise accuracy
is 1 - mean |p_human - p_metric| over the pairs. The permutation signs come from
``np.random.default_rng(seed)`` in float32, as in the reference, so values match it exactly.
"""
from __future__ import annotations

import numpy as np

from ..errors import AnalysisInputError
from ._jit import kernels

__all__ = ["pairwise_pvalues", "soft_pairwise_accuracy"]


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
    signs = np.random.default_rng(seed).random(size=(n_permutations, x.shape[1]), dtype=np.float32)
    np.rint(signs, out=signs)
    signs *= np.float32(2.0)
    signs -= np.float32(1.0)
    x32 = x.astype(np.float32)
    partial = np.ascontiguousarray(signs @ x32.T)
    return kernels().pairwise_pvalues(partial, x32.sum(axis=1))


def soft_pairwise_accuracy(human, metric, n_permutations: int = 1000, seed: int = 4) -> float:
    """Soft pairwise accuracy of ``metric`` (S, N) against ``human`` (S, N) segment scores
    (float64, complete). Returns float in [0, 1]."""
    ph = pairwise_pvalues(human, n_permutations, seed)
    pm = pairwise_pvalues(metric, n_permutations, seed)
    if ph.shape != pm.shape:
        raise AnalysisInputError(f"human has {ph.shape[0]} systems, metric {pm.shape[0]}: they must match")
    iu = np.triu_indices(ph.shape[0], 1)
    return float(1.0 - np.mean(np.abs(ph - pm)[iu]))
