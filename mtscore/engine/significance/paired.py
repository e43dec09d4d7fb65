"""Paired significance tests on statistics matrices, identical to sacrebleu's ``PairedTest``: the
paired bootstrap and paired approximate randomisation (AR), for any number of system pairs and
metrics at once.

The cores take ``metrics[m]``; ``stats[s][m]``, the (N, k_m) statistics matrix of system s for
metric m; ``exact[s][m]``, its exact corpus score; ``pairs``, the (a, b) system index pairs to test.
With a seed, every system draws from a fresh generator with the same seed (sacrebleu's rule), so
one stream of resamples serves all systems and metrics.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..metrics.bootstrap import RowScorer, bootstrap_sums, resolve_seed
from ..metrics.resampled import RowScores
from .adapter import corpus_score, row_scorer
from .resampling import ar_sums, dyadic_scale, estimate_ci, p_value, system_seed
from .results import TestResult

__all__ = ["paired_ar", "paired_ar_core", "paired_bootstrap", "paired_bs_core", "system_pairs"]

Stats = Sequence[Sequence[np.ndarray]]
#: per-resample values (scores or sums) keyed by (system, metric)
Table = dict[tuple[int, int], Any]
PValues = dict[tuple[int, int], list[float]]
CIs = dict[int, list[tuple[Any, Any]]]


def system_pairs(n_systems: int, all_pairs: bool) -> list[tuple[int, int]]:
    """The (a, b) pairs to test: every pair (``all_pairs``), else the baseline 0 against each system."""
    if all_pairs:
        return [(i, j) for i in range(n_systems) for j in range(i + 1, n_systems)]
    return [(0, j) for j in range(1, n_systems)]


def _scorers(metrics: Sequence[Any], stats: Stats) -> list[RowScorer]:
    return [row_scorer(metric, stats[0][m].shape[1]) for m, metric in enumerate(metrics)]


#: at most this many cells (rows x statistics) of summed rows are scored in one call
SCORE_BATCH_CELLS = 1 << 22


def _split_scores(res: RowScores, bounds: Sequence[tuple[int, int]]) -> list[np.ndarray]:
    """``res`` (scores of stacked blocks) cut back into each block's ``.array``: exactly what
    scoring each block alone gives, as every row's score and float32 flag depend on that row
    only (the dtype of a block's array follows its own rows' flags)."""
    if res.values is None:
        sc = res.scalars()
        return [RowScores(None, None, sc[a:b]).array for a, b in bounds]
    v, f = res.values, res.is32
    return [RowScores(v[a:b], None if f is None else f[a:b]).array for a, b in bounds]


def _score_blocks(scorer: RowScorer, blocks: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Scores (``.array``) of several blocks of summed rows of one metric, stacked into few
    scorer calls (the vectorised formulas cost mostly per call on 1,000-row blocks). Blocks of
    different dtypes are never stacked (the formulas branch on the dtype)."""
    out: list[np.ndarray] = []
    i = 0
    while i < len(blocks):
        j, cells = i + 1, blocks[i].size
        while (j < len(blocks) and blocks[j].dtype == blocks[i].dtype
               and cells + blocks[j].size <= SCORE_BATCH_CELLS):
            cells += blocks[j].size
            j += 1
        if j == i + 1:
            out.append(scorer(np.ascontiguousarray(blocks[i])).array)
        else:
            ends = np.cumsum([len(b) for b in blocks[i:j]]).tolist()
            res = scorer(np.concatenate(blocks[i:j]))
            out += _split_scores(res, list(zip([0, *ends[:-1]], ends)))
        i = j
    return out


def _bootstrap_table(stats: Stats, scorers: Sequence[RowScorer], systems: Sequence[int], n: int,
                     rng: np.random.Generator) -> Table:
    """Scores of ``n`` bootstrap resamples of every (system, metric) of ``systems``, all drawn
    with one stream of indices (sacrebleu's float32 statistics)."""
    keys = [(s, m) for s in systems for m in range(len(scorers))]
    sums = bootstrap_sums([stats[s][m].astype(np.float32) for s, m in keys], n, rng)
    table: Table = {}
    for m, scorer in enumerate(scorers):
        idx = [i for i, key in enumerate(keys) if key[1] == m]
        for i, arr in zip(idx, _score_blocks(scorer, [sums[i] for i in idx])):
            table[keys[i]] = arr
    return table


# ------------------------------------------------------------------------------------------
# paired bootstrap
# ------------------------------------------------------------------------------------------
def _bs_draws(stats: Stats, scorers: Sequence[RowScorer], n: int, seed_int: int | None,
              pairs: Sequence[tuple[int, int]], need_ci: Sequence[int]) -> tuple[dict[tuple[int, int], Table],
                                                                                  dict[int, Table]]:
    """The resampled scores each pair is tested on, and those each CI of ``need_ci`` comes from."""
    sys_seed = system_seed(seed_int)
    if sys_seed is not None:
        involved = sorted({s for p in pairs for s in p} | set(need_ci))
        shared = _bootstrap_table(stats, scorers, involved, n, np.random.default_rng(sys_seed))
        return {p: shared for p in pairs}, {s: shared for s in need_ci}
    groups = {p: _bootstrap_table(stats, scorers, sorted(set(p)), n, np.random.default_rng(None)) for p in pairs}
    ci_src = {}
    for s in need_ci:
        # sacrebleu: the baseline CI draws with int(SACREBLEU_SEED) (0 is a seed there),
        # a system's CI comes from its own paired draw
        hit = next((g for p, g in groups.items() if p[1] == s), None)
        ci_src[s] = hit if hit is not None else _bootstrap_table(stats, scorers, [s], n,
                                                                 np.random.default_rng(seed_int))
    return groups, ci_src


def _bs_p_value(scores_a: np.ndarray, scores_b: np.ndarray, exact_a: float, exact_b: float) -> float:
    """p-value of the centred paired-bootstrap statistic (sacrebleu's ``_paired_bs_test``)."""
    diff = abs(exact_a - exact_b)
    sample_diffs = np.abs(scores_b - scores_a)
    return p_value(sample_diffs - sample_diffs.mean(), diff)


def paired_bs_core(metrics: Sequence[Any], stats: Stats, exact: Sequence[Sequence[float]], n: int,
                   seed_int: int | None, pairs: Sequence[tuple[int, int]],
                   need_ci: Sequence[int]) -> tuple[PValues, CIs]:
    """Paired bootstrap on precomputed statistics (see the module docstring for the arguments).

    need_ci: systems whose mean/CI is wanted. Returns (p[(a, b)][m], ci[s][m] = (mean, ci)).
    """
    scorers = _scorers(metrics, stats)
    groups, ci_src = _bs_draws(stats, scorers, n, seed_int, pairs, need_ci)
    n_met = len(metrics)
    pvals = {(a, b): [_bs_p_value(g[a, m], g[b, m], exact[a][m], exact[b][m]) for m in range(n_met)]
             for (a, b), g in groups.items()}
    cis = {s: [estimate_ci(ci_src[s][s, m]) for m in range(n_met)] for s in need_ci}
    return pvals, cis


# ------------------------------------------------------------------------------------------
# paired approximate randomisation
# ------------------------------------------------------------------------------------------
def _ar_scales(stats: Stats, systems: Sequence[int], n_met: int) -> list[int | None]:
    """One dyadic scale per metric over all ``systems`` (None unless every system has one), so
    shuffled sums of different systems combine in one representation."""
    scales: list[int | None] = []
    for m in range(n_met):
        sc = [dyadic_scale(stats[s][m]) for s in systems]
        known = [x for x in sc if x is not None]
        scales.append(None if len(known) < len(sc) else max(known))
    return scales


def _ar_draws(stats: Stats, scales: Sequence[int | None], scorers: Sequence[RowScorer],
              systems: Sequence[int], n: int, n_ar_confidence: int,
              rng: np.random.Generator) -> tuple[Table, Table | None]:
    """AR sums of every (system, metric) of ``systems`` over one mask stream (see ``ar_sums``);
    then, when ``n_ar_confidence > 0``, scores of that many bootstrap resamples drawn from the
    same generator (sacrebleu's per-system CI of an AR test)."""
    keys = [(s, m) for s in systems for m in range(len(scorers))]
    sums = ar_sums([stats[s][m] for s, m in keys], [scales[m] for _, m in keys], n, rng)
    bs = _bootstrap_table(stats, scorers, systems, n_ar_confidence, rng) if n_ar_confidence > 0 else None
    return dict(zip(keys, sums)), bs


def _int_total(st: np.ndarray, scale: int) -> np.ndarray:
    """Column sums of ``st * scale`` in int64 (exact; ``scale`` makes float statistics integers)."""
    if st.dtype.kind == "f":
        return np.round(st * float(scale)).astype(np.int64).sum(axis=0)
    return st.sum(axis=0, dtype=np.int64)


def _shuffled_sums(pa, pb, st_a: np.ndarray, st_b: np.ndarray, scale: int | None):
    """Sums of the two pseudo-systems of each AR trial, from the masked sums ``pa``/``pb`` of
    systems a and b: with a scale, ``pos @ a + neg @ b`` and ``neg @ a + pos @ b`` exactly;
    without, from sacrebleu's float64 ``(pos @ x, neg @ x)`` pairs."""
    if scale is None:
        return pa[0] + pb[1], pa[1] + pb[0]
    shuf_a = pa + (_int_total(st_b, scale) - pb)        # = pos @ bl + neg @ sys   (exact)
    shuf_b = (_int_total(st_a, scale) - pa) + pb        # = neg @ bl + pos @ sys
    if st_a.dtype.kind == "f":
        # float (TER) statistics: exact sums of dyadic values, back in float64
        shuf_a = shuf_a.astype(np.float64) / scale
        shuf_b = shuf_b.astype(np.float64) / scale
    return shuf_a, shuf_b


def _ar_p_values(scorer: RowScorer, shuffled: Sequence[tuple[np.ndarray, np.ndarray]],
                 diffs: Sequence[float]) -> list[float]:
    """p-values of the absolute score differences of each pair's pseudo-systems (sacrebleu's
    ``_paired_ar_test``), every pair's shuffled sums scored in few scorer calls."""
    scores = _score_blocks(scorer, [x for pair in shuffled for x in pair])
    return [p_value(np.abs(np.array(scores[2 * i]) - np.array(scores[2 * i + 1])), diff)
            for i, diff in enumerate(diffs)]


def _ar_metric_p_values(m: int, scorer: RowScorer, groups: dict[tuple[int, int], Any], stats: Stats,
                        exact: Sequence[Sequence[float]], scale: int | None, n: int) -> list[float]:
    """Metric ``m``'s p-value of every pair of ``groups`` (pair -> (AR sums table, ...)), the
    shuffled sums of as many pairs at a time as fit :data:`SCORE_BATCH_CELLS`."""
    pairs = list(groups)
    step = max(1, SCORE_BATCH_CELLS // max(1, 2 * n * stats[0][m].shape[1]))
    out: list[float] = []
    for i in range(0, len(pairs), step):
        chunk = pairs[i:i + step]
        shuffled = [_shuffled_sums(groups[a, b][0][a, m], groups[a, b][0][b, m], stats[a][m], stats[b][m], scale)
                    for a, b in chunk]
        out += _ar_p_values(scorer, shuffled, [abs(exact[a][m] - exact[b][m]) for a, b in chunk])
    return out


def paired_ar_core(metrics: Sequence[Any], stats: Stats, exact: Sequence[Sequence[float]], n: int,
                   seed_int: int | None, pairs: Sequence[tuple[int, int]],
                   n_ar_confidence: int = -1) -> tuple[PValues, CIs]:
    """Paired approximate randomisation on precomputed statistics (see the module docstring).
    Returns (p[(a, b)][m], ci[b][m]) where ci is filled when n_ar_confidence > 0."""
    n_met = len(metrics)
    scorers = _scorers(metrics, stats)
    involved = sorted({x for p in pairs for x in p})
    scales = _ar_scales(stats, involved, n_met)
    sys_seed = system_seed(seed_int)
    if sys_seed is not None:
        shared = _ar_draws(stats, scales, scorers, involved, n, n_ar_confidence, np.random.default_rng(sys_seed))
        groups = {p: shared for p in pairs}
    else:
        groups = {p: _ar_draws(stats, scales, scorers, sorted(set(p)), n, n_ar_confidence,
                               np.random.default_rng(None)) for p in pairs}
    by_metric = [_ar_metric_p_values(m, scorers[m], groups, stats, exact, scales[m], n) for m in range(n_met)]
    pvals: PValues = {pair: [by_metric[m][i] for m in range(n_met)] for i, pair in enumerate(groups)}
    cis: CIs = {}
    for (_a, b), (_, bs) in groups.items():
        if bs is not None:
            cis[b] = [estimate_ci(bs[b, m]) for m in range(n_met)]
    return pvals, cis


# ------------------------------------------------------------------------------------------
# one system against a baseline
# ------------------------------------------------------------------------------------------
def paired_bootstrap(baseline_stats: np.ndarray, system_stats: np.ndarray, metric,
                     n_samples: int = 1000, seed: int | str | None = None) -> TestResult:
    """Paired bootstrap of one system against a baseline on (N, k) statistics matrices;
    sacrebleu's ``_paired_bs_test`` (returns score, p_value, mean, ci of the system)."""
    seed_int, _ = resolve_seed(seed)
    bl, sy = np.asarray(baseline_stats), np.asarray(system_stats)
    exact = [[float(corpus_score(metric, bl).score)], [float(corpus_score(metric, sy).score)]]
    p, ci = paired_bs_core([metric], [[bl], [sy]], exact, n_samples, seed_int, [(0, 1)], [1])
    return TestResult(corpus_score(metric, sy).score, p[0, 1][0], ci[1][0][0], ci[1][0][1])


def paired_ar(baseline_stats: np.ndarray, system_stats: np.ndarray, metric,
              n_samples: int = 10000, seed: int | str | None = None,
              n_ar_confidence: int = -1) -> TestResult:
    """Paired approximate randomisation of one system against a baseline on (N, k) statistics
    matrices; sacrebleu's ``_paired_ar_test``."""
    seed_int, _ = resolve_seed(seed)
    bl, sy = np.asarray(baseline_stats), np.asarray(system_stats)
    exact = [[float(corpus_score(metric, bl).score)], [float(corpus_score(metric, sy).score)]]
    p, ci = paired_ar_core([metric], [[bl], [sy]], exact, n_samples, seed_int, [(0, 1)], n_ar_confidence)
    r = TestResult(corpus_score(metric, sy).score, p[0, 1][0])
    if 1 in ci:
        r.mean, r.ci = ci[1][0]
    return r
