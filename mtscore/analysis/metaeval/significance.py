"""Permutation significance between two metrics' correlations and greedy significance
clusters (mt-metrics-eval ``PermutationSigDiff``, ``PairwisePermutationSigDiff``,
``CompareMetrics`` / ``AssignRanks``) on Numba kernels.

Inputs as :mod:`.stats`: ``human`` (S, N) float64 with NaN = unscored cell, metrics (S, N)
(or (M, S, N) for :func:`compare_metrics`). ``k`` draws in blocks of ``block_size`` ("k-block":
after each block the test stops early when the running p-value is < ``early_min`` or >
``early_max``; ``block_size=k`` disables early stopping). ``stream='legacy'`` replays NumPy's
legacy generator so that a shared seed gives mt-metrics-eval's p-values exactly; the default
``'fast'`` stream draws one random bit per swap (same test, different random numbers).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError
from ._inputs import Stream, as_scores, groups
from ._jit import kernels
from .results import PermutationResult
from .soft import soft_pairwise_accuracy, soft_permutation_test
from .stats import tie_calibrated_accuracy, variant_code

__all__ = [
    "STATISTICS",
    "MetricComparison",
    "PermutationResult",
    "compare_metrics",
    "pairwise_permutation_test",
    "permutation_test",
    "significance_clusters",
]

STATISTICS = {"pearson": 0, "kendall": 1, "accuracy": 2}
COMPARE_STATISTICS = ("pearson", "kendall", "accuracy", "soft", "acc_eq", "tau_eq")


def _check_k(k: int, block_size: int) -> None:
    if k < 1 or block_size < 1:
        raise AnalysisInputError(f"k={k}, block_size={block_size}: both must be >= 1")


def permutation_test(human, metric1, metric2, statistic: str = "pearson", variant: str = "b",
                     epsilon: float = 0.0, average_by: str = "none", k: int = 1000, block_size: int = 1000,
                     early_min: float = 0.02, early_max: float = 0.5, replace_nans_with_zeros: bool = False,
                     stream: str = "fast", seed: int | None = None) -> PermutationResult:
    """PERM-BOTH test (Deutsch et al. 2021): the two metrics' z-scored scores are swapped cell
    by cell with probability 1/2 and the ``statistic`` ('pearson', 'kendall' with ``variant``
    and ``epsilon``, or 'accuracy' = pooled pairwise accuracy over the groups) recomputed."""
    if statistic not in STATISTICS:
        raise AnalysisInputError(f"statistic={statistic!r}: use one of {', '.join(STATISTICS)}")
    _check_k(k, block_size)
    import scipy.stats

    h, m1, m2 = as_scores(human, metric1, metric2, names=("metric1", "metric2"))
    pos, offs = groups(h, average_by)
    g = h.ravel()[pos]
    s1 = scipy.stats.zscore(m1.ravel()[pos])
    s2 = scipy.stats.zscore(m2.ravel()[pos])
    rs = Stream(stream, seed)
    kind = STATISTICS[statistic]
    large, used, delta, draws = kernels().scores_permutation(
        g, s1, s2, offs, kind, variant_code(variant), float(epsilon) if epsilon > 0 else -1.0, int(k),
        int(block_size), float(early_min), float(early_max), replace_nans_with_zeros, rs.mode, rs.key, rs.st,
        rs.xs)
    rs.commit()
    return PermutationResult(large / used, float(delta), int(used), draws)


def pairwise_permutation_test(human, metric1, metric2, variant: str = "acc23", average_by: str = "item",
                              epsilon1: float | None = None, epsilon2: float | None = None,
                              sample_rate: float = 1.0, k: int = 1000, block_size: int = 1000,
                              early_min: float = 0.02, early_max: float = 0.5,
                              replace_nans_with_zeros: bool = False, stream: str = "fast",
                              seed: int | None = None, legacy_early_stop: bool = True) -> PermutationResult:
    """Permutation test over pairwise comparisons (mt-metrics-eval ``PairwisePermutationSigDiff``):
    each pair's outcome (under each metric's own tie threshold; None = the optimal epsilon of
    :func:`tie_calibrated_accuracy`) is swapped with probability 1/2. ``legacy_early_stop``
    keeps mt-metrics-eval's quirk of checking early stopping only after a draw whose delta is
    large; False checks at every block boundary."""
    if variant not in ("b", "23", "acc23"):
        raise AnalysisInputError(f"variant={variant!r}: the pairs test supports 'b', '23' and 'acc23'")
    _check_k(k, block_size)
    h, m1, m2 = as_scores(human, metric1, metric2, names=("metric1", "metric2"))
    eps = []
    for e, m in ((epsilon1, m1), (epsilon2, m2)):
        if e is None:
            e = tie_calibrated_accuracy(h, m, variant, average_by, sample_rate).epsilon
        if e < 0:
            raise AnalysisInputError(f"epsilon={e}: it must be >= 0")
        eps.append(float(e) if e > 0 else -1.0)
    pos, offs = groups(h, average_by)
    kern = kernels()
    g = h.ravel()[pos]
    c1 = kern.pair_codes(g, m1.ravel()[pos], offs, eps[0])
    c2 = kern.pair_codes(g, m2.ravel()[pos], offs, eps[1])
    ytie = _human_ties(kern.pair_codes(g, g, offs, -1.0), offs)
    rs = Stream(stream, seed)
    if rs.kind == "fast" and variant != "b":   # linear variants: 64 swaps per random word
        large, used, delta, draws = kern.pairs_permutation_linear(
            c1, c2, offs, variant_code(variant), int(k), int(block_size), float(early_min), float(early_max),
            replace_nans_with_zeros, rs.xs, legacy_early_stop)
    else:
        large, used, delta, draws = kern.pairs_permutation(
            c1, c2, offs, ytie, variant_code(variant), int(k), int(block_size), float(early_min),
            float(early_max), replace_nans_with_zeros, rs.mode, rs.key, rs.st, rs.xs, legacy_early_stop)
    rs.commit()
    return PermutationResult(large / used, float(delta), int(used), draws)


def _human_ties(codes: np.ndarray, offs: np.ndarray) -> np.ndarray:
    """Pairs tied in the human scores per group (G,) int64 (codes of gold against itself)."""
    sizes = np.diff(offs)
    npairs = sizes * (sizes - 1) // 2
    grp = np.repeat(np.arange(sizes.shape[0]), npairs)
    return np.bincount(grp, weights=(codes == 4), minlength=sizes.shape[0]).astype(np.int64)


def significance_clusters(sig_matrix, pval: float = 0.05) -> np.ndarray:
    """Greedy significance clusters (mt-metrics-eval ``AssignRanks``): metrics sorted by
    decreasing score; ``sig_matrix[i, j]`` (j > i) is the p-value that metric j is not worse
    than metric i. A metric starts a new cluster when a metric of the current cluster beats it
    at ``pval``. Returns (M,) int64 ranks starting at 1."""
    p = np.asarray(sig_matrix, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise AnalysisInputError(f"sig_matrix has shape {p.shape}: need a square matrix")
    ranks = np.zeros(p.shape[0], np.int64)
    rank, start = 1, 0
    for i in range(p.shape[0]):
        if (p[start:i, i] <= pval).any():
            rank += 1
            start = i
        ranks[i] = rank
    return ranks


@dataclass
class MetricComparison:
    """Result of :func:`compare_metrics`: ``names`` (M,) sorted by decreasing ``values`` (M,)
    float64 (ties by name), cluster ``ranks`` (M,) int64 and ``sig_matrix`` (M, M) float64
    (``[i, j]``, j > i: p-value that metric j is not worse than metric i; zeros elsewhere),
    ``n_draws`` (M, M) int64 (draws used by each test, early stopping included) and, for the
    tie-calibrated statistics, each metric's ``epsilons`` (M,) float64."""
    names: list[str]
    values: np.ndarray
    ranks: np.ndarray
    sig_matrix: np.ndarray
    n_draws: np.ndarray
    epsilons: np.ndarray | None = None


def _values(h, metrics, statistic, variant, epsilon, average_by, zero_nan) -> np.ndarray:
    kern = kernels()
    pos, offs = groups(h, average_by)
    g = h.ravel()[pos]
    out = np.empty(metrics.shape[0])
    vals = np.empty(offs.shape[0] - 1)
    sizes = np.diff(offs)
    npairs = int((sizes * (sizes - 1) // 2).sum())
    for i, m in enumerate(metrics):
        kern.corr_groups(g, m.ravel()[pos], offs, STATISTICS[statistic], variant_code(variant),
                         float(epsilon) if epsilon > 0 else -1.0, vals)
        out[i] = vals.sum() / npairs if statistic == "accuracy" else kern.seqmean(vals, zero_nan)
    return out


def compare_metrics(human, metrics, names: Sequence[str], statistic: str = "pearson", variant: str = "b",
                    epsilon: float = 0.0, average_by: str = "none", k: int = 1000, block_size: int = 1000,
                    early_min: float = 0.02, early_max: float = 0.5, pval: float = 0.05,
                    replace_nans_with_zeros: bool = False, stream: str = "fast",
                    seed: int | None = None, progress: bool | None = False) -> MetricComparison:
    """Rank metrics (``metrics`` (M, S, N) float64, ``names`` (M,)) by ``statistic`` and group
    them into significance clusters, as mt-metrics-eval ``CompareMetrics``.

    ``statistic``: 'pearson', 'kendall' (``variant``, ``epsilon``), 'accuracy' (pooled pairwise
    accuracy, PERM-BOTH over scores), 'soft' (soft pairwise accuracy of complete (S, N) segment
    scores, PERM-BOTH, as ``CompareMetricsWithPairwiseConfidenceError``), or 'acc_eq' / 'tau_eq'
    (tie-calibrated acc23 / tau23 with
    each metric's own optimal epsilon, tested by :func:`pairwise_permutation_test`, the WMT23+
    segment-level setting; mt-metrics-eval's alternative of re-calibrating epsilon inside every
    PERM-BOTH draw is not offered). Every pair i < j is tested in order; with ``stream='legacy'`` and no
    ``seed`` the global NumPy stream is consumed pair after pair as mt-metrics-eval does."""
    if statistic not in COMPARE_STATISTICS:
        raise AnalysisInputError(f"statistic={statistic!r}: use one of {', '.join(COMPARE_STATISTICS)}")
    M = np.asarray(metrics, dtype=np.float64)
    if M.ndim == 2:
        M = M[:, None, :]
    if M.ndim != 3 or M.shape[0] != len(names):
        raise AnalysisInputError(f"metrics have shape {M.shape} for {len(names)} names: need (M, S, N)")
    h = as_scores(human, *M, names=tuple(names))[0]
    M = M.reshape((M.shape[0], *h.shape))
    tied = statistic in ("acc_eq", "tau_eq")
    soft = statistic == "soft"
    eps = None
    if soft:
        values = np.array([soft_pairwise_accuracy(h, m) for m in M])
    elif tied:
        tv = "acc23" if statistic == "acc_eq" else "23"
        cal = [tie_calibrated_accuracy(h, m, tv, average_by) for m in M]
        values = np.array([c.value for c in cal])
        eps = np.array([c.epsilon for c in cal])
    else:
        values = _values(h, M, statistic, variant, epsilon, average_by, replace_nans_with_zeros)
    order = sorted(range(len(names)), key=lambda i: (-values[i], names[i]))
    n = len(order)
    sig = np.zeros((n, n))
    used = np.zeros((n, n), np.int64)
    if k:
        rs_seed = seed
        todo = [(i, j) for i in range(n) for j in range(i + 1, n)]
        bar = _progress(len(todo), progress)
        for i, j in todo:
            a, b = order[j], order[i]
            if soft:
                r = soft_permutation_test(h, M[a], M[b], k, block_size, early_min, early_max, stream=stream,
                                          seed=rs_seed)
            elif eps is not None:
                r = pairwise_permutation_test(h, M[a], M[b], tv, average_by, eps[a], eps[b], k=k,
                                              block_size=block_size, early_min=early_min,
                                              early_max=early_max, replace_nans_with_zeros=replace_nans_with_zeros,
                                              stream=stream, seed=rs_seed)
            else:
                r = permutation_test(h, M[a], M[b], statistic, variant, epsilon, average_by, k, block_size,
                                     early_min, early_max, replace_nans_with_zeros, stream, rs_seed)
            sig[i, j] = r.p_value
            used[i, j] = r.n_draws
            if rs_seed is not None:
                rs_seed += 1
            bar.update(1)
        bar.close()
    ranks = significance_clusters(sig, pval)
    return MetricComparison([names[i] for i in order], values[order], ranks, sig, used,
                            None if eps is None else eps[order])


def _progress(total: int, show: bool | None):
    """``show``: True forces a bar, False none, None: :mod:`mtscore.engine.progress`'s rule (a
    terminal, not CI)."""
    from ...engine.progress import progress_bar

    return progress_bar(total, "metric pairs", show, unit="pair")
