"""Significance for metrics whose corpus score is the mean of segment scores (BERTScore,
sentence-averaged chrF, COMET): the paired t-test of Mathur et al. 2020 (E12), the paired bootstrap of
the mean with sacrebleu's seeds, centred statistic and p-value rule, and paired approximate
randomisation of the mean (the statistics-matrix AR of :func:`~.comparison.compare_stats`, on
``[segment score, 1]`` rows).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ...kernels._resample import resample_sums
from ..metrics.base import Score
from ..metrics.bootstrap import draw_indices, resolve_seed
from ..metrics.mean_score import MeanSentenceMetric
from .adapter import corpus_score
from .paired import paired_ar_core, system_pairs
from .resampling import DEFAULT_SAMPLES, estimate_ci, p_value, seed_for_signature, system_seed
from .results import ComparisonResult, TestResult

__all__ = ["compare_segment_scores", "paired_ttest"]


def paired_ttest(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Paired t-test on per-segment scores (Mathur et al. 2020, E12): d = a - b,
    t = mean(d) / (sd(d) / sqrt(n)) with the n-1 standard deviation, df = n - 1; two-sided p.
    a, b: (N,) float arrays. Returns (t, p); (0.0, 1.0) when all differences are zero."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired_ttest: need two 1-d arrays of equal length, got {a.shape} and {b.shape}")
    n = len(a)
    if n < 2:
        raise ValueError("paired_ttest: need at least 2 segments")
    for what, x in (("a", a), ("b", b)):
        bad = np.flatnonzero(~np.isfinite(x))
        if len(bad):
            raise ValueError(f"paired_ttest: {what}[{int(bad[0])}] is {float(x[bad[0]])!r} (not a "
                             "finite number); the t statistic and p-value would be NaN")
    d = a - b
    sd = d.std(ddof=1)
    mean = d.mean()
    if sd == 0:
        return (0.0, 1.0) if mean == 0 else (math.copysign(math.inf, mean), 0.0)
    t = mean / (sd / math.sqrt(n))
    try:
        from scipy.stats import t as tdist
    except ImportError:  # pragma: no cover
        raise ImportError("paired_ttest needs scipy: pip install scipy") from None
    p = float(2 * tdist.sf(abs(t), n - 1))
    return float(t), p


def _segment_arrays(scores: Mapping[str, Sequence[float]], baseline: str | None,
                    all_pairs: bool) -> tuple[list[str], list[np.ndarray]]:
    """System names (the baseline first unless ``all_pairs``) and their (N,) float64 scores."""
    names = list(scores)
    if baseline is not None and not all_pairs:
        if baseline not in scores:
            raise ValueError(f"compare_segment_scores: baseline {baseline!r} is not one of {names}")
        names.remove(baseline)
        names.insert(0, baseline)
    arrs = []
    for s in names:
        try:
            x = np.asarray(scores[s], dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"compare_segment_scores: scores[{s!r}] must be a 1-d sequence of "
                            "numbers") from None
        if x.ndim != 1:
            raise ValueError(f"compare_segment_scores: scores[{s!r}] must be 1-d (one score per "
                             f"segment), got shape {x.shape}")
        arrs.append(x)
    n_seg = len(arrs[0])
    if any(len(x) != n_seg for x in arrs):
        raise ValueError("compare_segment_scores: systems have different numbers of segments")
    if n_seg == 0:
        raise ValueError("compare_segment_scores: no segments (every system's scores are empty)")
    for s, x in zip(names, arrs):
        bad = np.flatnonzero(~np.isfinite(x))
        if len(bad):
            i = int(bad[0])
            raise ValueError(
                f"compare_segment_scores: system {s!r} segment {i} (0-based) has score "
                f"{float(x[i])!r} ({len(bad)} non-finite segment score(s) in that system); a "
                "NaN/inf would make every mean and p-value NaN. Drop those segments from every "
                "system (e.g. ones left without a reference under missing_refs='skip') first.")
    return names, arrs


def _resampled_means(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, M) means of ``n`` bootstrap resamples of the (N, M) segment scores ``x``."""
    N, M = x.shape
    out = np.empty((n, M))
    for start, idx in draw_indices(rng, n, N):
        resample_sums(x, idx, out[start:start + len(idx)])
    return out / N


def _mean_bootstrap(arrs: Sequence[np.ndarray], means: Sequence[float], n: int, seed_int: int | None,
                    pairs: Sequence[tuple[int, int]]):
    """Paired bootstrap of the mean: ``({(a, b): p}, [(mean, ci) of each system])``, drawn as
    sacrebleu draws (one shared stream when seeded; else a fresh one per pair, and the CIs from
    ``default_rng(seed_int)``)."""
    sys_seed = system_seed(seed_int)
    x = np.ascontiguousarray(np.stack(arrs, axis=1))       # (N, M) float64
    shared = _resampled_means(x, n, np.random.default_rng(sys_seed)) if sys_seed is not None else None
    pvals: dict[tuple[int, int], float] = {}
    for a, b in pairs:
        res = shared if shared is not None else _resampled_means(x, n, np.random.default_rng(None))
        diff = abs(means[a] - means[b])
        sd = np.abs(res[:, b] - res[:, a])
        pvals[a, b] = p_value(sd - sd.mean(), diff)
    ci_src = shared if shared is not None else _resampled_means(x, n, np.random.default_rng(seed_int))
    return pvals, [estimate_ci(ci_src[:, i]) for i in range(x.shape[1])]


class _MeanScore(Score):
    """The score of :class:`_SegmentMean`: the mean of the segment scores."""

    def __init__(self, mean: float, count: float):
        super().__init__("score", mean)


class _SegmentMean(MeanSentenceMetric):
    """The mean of segment scores as a metric on ``(N, 2)`` float64 ``[segment score, 1]``
    statistics (:class:`~..metrics.mean_score.MeanSentenceMetric`'s layout and formulas, COMET's
    too: the total added in segment order, divided by the count), so that AR runs through
    :func:`~.paired.paired_ar_core`, the code every metric with statistics takes. It scores
    statistics only; it prepares and reads no text."""

    _SCORE_TYPE = _MeanScore
    _NAME = "compare_segment_scores"

    def prepare(self, refs, rows=None):  # pragma: no cover - statistics only
        raise NotImplementedError("_SegmentMean scores statistics, not text")


def _mean_ar(arrs: Sequence[np.ndarray], n: int, seed_int: int | None,
             pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """Paired approximate randomisation of the mean: ``{(a, b): p}`` from
    :func:`~.paired.paired_ar_core` on each system's ``[score, 1]`` statistics (sacrebleu's
    ``_paired_ar_test``: whole segments swapped between the two systems, its seeds and p-value
    rule), the numbers ``compare_stats(..., test="ar")`` gives for COMET's own statistics."""
    metric = _SegmentMean()
    stats = [[np.column_stack([x, np.ones_like(x)])] for x in arrs]
    exact = [[float(corpus_score(metric, st[0]).score)] for st in stats]
    pv, _ = paired_ar_core([metric], stats, exact, n, seed_int, pairs)
    return {pair: row[0] for pair, row in pv.items()}


def _place_p_values(pvals: Mapping[tuple[int, int], float], results: list[TestResult],
                    all_pairs: bool) -> np.ndarray | None:
    """p-values into the (M, M) matrix (``all_pairs``; returned) or into ``results``."""
    if not all_pairs:
        for (_, b), p in pvals.items():
            results[b].p_value = p
        return None
    M = len(results)
    pmat = np.full((M, M), np.nan)
    for (a, b), p in pvals.items():
        pmat[a, b] = pmat[b, a] = p
    return pmat


def compare_segment_scores(scores: Mapping[str, Sequence[float]], test: str = "ttest",
                           n: int | None = None, seed: int | str | None = None,
                           baseline: str | None = None, all_pairs: bool = False,
                           name: str = "score") -> ComparisonResult:
    """Significance for metrics whose corpus score is the mean of segment scores.

    scores: {system: (N,) per-segment scores}. test: ``ttest`` (paired t-test, E12), ``bs``
    (paired bootstrap of the mean with sacrebleu's seeds, centred statistic and p-value rule;
    also mean / 95% CI per system; default n=1000) or ``ar`` (paired approximate randomisation
    of the mean difference, sacrebleu's rule and seeds, default n=10000; no CIs). Corpus score =
    mean of the segment scores.
    """
    names, arrs = _segment_arrays(scores, baseline, all_pairs)
    seed_int, _ = resolve_seed(seed)
    means = [float(x.mean()) for x in arrs]
    pairs = system_pairs(len(names), all_pairs)
    results = [TestResult(mean) for mean in means]
    if test == "ttest":
        n_used = 0
        pvals = {(a, b): paired_ttest(arrs[a], arrs[b])[1] for a, b in pairs}
    elif test == "bs":
        n_used = n or DEFAULT_SAMPLES["bs"]
        pvals, cis = _mean_bootstrap(arrs, means, n_used, seed_int, pairs)
        for r, (mean, ci) in zip(results, cis):
            r.mean, r.ci = mean, ci
    elif test == "ar":
        n_used = n or DEFAULT_SAMPLES["ar"]
        pvals = _mean_ar(arrs, n_used, seed_int, pairs)
    else:
        raise ValueError(f"compare_segment_scores: test must be 'ttest', 'bs' or 'ar', got {test!r}")
    pmat = _place_p_values(pvals, results, all_pairs)
    return ComparisonResult(
        systems=names, baseline=None if all_pairs else names[0], test=test, n_samples=n_used,
        seed=seed_for_signature(seed_int), metrics=[name], results={name: results},
        signatures={name: f"test:{test}|n:{n_used}|seed:{seed_for_signature(seed_int)}"},
        p_values={name: pmat} if pmat is not None else None)
