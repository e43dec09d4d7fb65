"""Pairwise system decisions: human significance vs metric significance (Mathur et al. 2020 §5; Mathur 2021 §6.6).

For every pair of systems of a language pair:

* human decision: one-sided Wilcoxon rank-sum on the systems' DA z-scores, both directions,
  at ``alpha`` (+1 = first significantly better, -1 = significantly worse, 0 = n.s.);
* metric decision: paired bootstrap resampling on per-segment sufficient statistics for
  corpus metrics (BLEU, TER; Koehn 2004) or a paired t-test on per-segment scores for
  averaged metrics (chrF as micro-average, YiSi, ESIM, COMET), two-sided at ``alpha``;
* errors (Mathur 2021 §6.6): Type I = metric significant but humans find no difference or
  the opposite; Type II = metric not significant but humans find a difference.

Everything is vectorised over system pairs: the bootstrap draws one (B, N) resample-count
matrix and reduces all systems' statistics with one matrix product.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Callable

import numpy as np

from ..human.significance import wilcoxon_matrix

__all__ = [
    "DEFAULT_BINS",
    "agreement_matrix",
    "bleu_from_stats",
    "error_bins",
    "error_table",
    "human_decisions",
    "metric_score_fn",
    "paired_bootstrap_all",
    "paired_ttest_all",
    "pairwise_decisions",
    "ter_from_stats",
]

DEFAULT_BINS = (0.0, 1.0, 2.0, 3.0, 5.0, 10.0, np.inf)  # BLEU-point bins for |metric delta|


def metric_score_fn(metric) -> Callable[[np.ndarray], np.ndarray]:
    """Scores of summed statistics rows (..., k) -> (...) float64 with ``metric``'s own formula
    (an mtscore metric: its vectorised ``resampled_scores`` hook, else
    ``compute_score_from_stats`` row by row), so decisions use exactly the corpus score."""
    from ...engine.metrics.resampled import Unsupported

    def scores(sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums)
        flat = sums.reshape(-1, sums.shape[-1])
        try:
            res = metric.resampled_scores(flat)
        except Unsupported:
            res = None
        vals = (res.array if res is not None else
                [metric.compute_score_from_stats(list(row)).score for row in flat])
        return np.asarray(vals, dtype=np.float64).reshape(sums.shape[:-1])

    return scores


def bleu_from_stats(stats: np.ndarray, max_order: int = 4) -> np.ndarray:
    """sacrebleu corpus BLEU without smoothing (x100) of summed statistics (..., 2 + 2*max_order):
    [hyp_len, ref_len, correct_1..n, total_1..n] -> (...) float64 (``BLEU(smooth_method="none")``'s
    own formula)."""
    from ...engine.metrics.bleu import BLEU

    return metric_score_fn(BLEU(smooth_method="none", max_ngram_order=max_order))(stats)


def ter_from_stats(stats: np.ndarray) -> np.ndarray:
    """TER x100 of summed [num_edits, ref_len] (..., 2), negated (higher = better)."""
    from ...engine.metrics.ter import TER

    return -metric_score_fn(TER())(stats)


def paired_bootstrap_all(stats: np.ndarray, score_fn: Callable[[np.ndarray], np.ndarray],
                         n_resamples: int = 1000, seed: int | None = 12345):
    """Paired bootstrap for every pair of S systems at once.

    stats (S, N, k) per-segment sufficient statistics (the same N segments for every system);
    ``score_fn`` maps summed stats (..., k) to scores (...), higher = better.
    Returns (scores (S,), p (S, S)) where p[a, b] = share of resamples in which system a does
    NOT score above system b (one-sided p-value for "a > b"); NaN diagonal.
    """
    st = np.asarray(stats, dtype=np.float64)
    S, N, k = st.shape
    rng = np.random.default_rng(seed)
    scores = score_fn(st.sum(axis=1))
    flat = st.transpose(1, 0, 2).reshape(N, S * k)
    not_above = np.zeros((S, S))
    step = max(1, int(2e7 // max(1, N)))
    done = 0
    while done < n_resamples:
        b = min(step, n_resamples - done)
        idx = rng.integers(0, N, size=(b, N))
        cnt = np.bincount((np.arange(b)[:, None] * N + idx).ravel(), minlength=b * N).reshape(b, N)
        res = score_fn((cnt @ flat).reshape(b, S, k))  # (b, S)
        not_above += (res[:, :, None] <= res[:, None, :]).sum(axis=0)
        done += b
    p = not_above / n_resamples
    np.fill_diagonal(p, np.nan)
    return scores, p


def paired_ttest_all(seg_scores: np.ndarray):
    """Paired t-test on per-segment scores for every pair of S systems.

    seg_scores (S, N). Returns (scores (S,) means, p (S, S)): p[a, b] one-sided p-value for
    "a > b" (t distribution, N - 1 df); NaN diagonal."""
    from scipy.stats import t as tdist

    X = np.asarray(seg_scores, dtype=np.float64)
    _S, N = X.shape
    d = X[:, None, :] - X[None, :, :]
    mean = d.mean(axis=-1)
    sd = d.std(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(N))
    p = tdist.sf(t, N - 1)
    p = np.where(sd == 0, np.where(mean > 0, 0.0, 1.0), p)
    np.fill_diagonal(p, np.nan)
    return X.mean(axis=1), p


def human_decisions(groups: dict[str, np.ndarray], systems: Sequence[str], alpha: float = 0.05,
                    significant_digits: int | None = 15):
    """Human outcome matrix D (S, S) int8 in ``systems`` order: +1 if a > b significantly
    (one-sided rank-sum p < alpha), -1 if b > a, 0 otherwise; plus p (S, S) float64, the
    :func:`~mtscore.analysis.human.significance.wilcoxon_matrix` of the samples.

    Both directions of every pair are tested, as WMT does (Akhbardeh et al. 2021: a system ranked
    below another by mean z can still win the rank-sum test, e.g. WMT21 de-en happypoet over
    Watermelon, starred in the release's ``ad-DA-diff-wilcoxon-rs`` matrix while ``adwilcox``
    prints only the upper triangle). The samples are rounded to ``significant_digits`` (15, as WMT's
    ``ad-seg-scores`` files) before ranking, which sets the ties and so the tie correction: with
    the unrounded z (None) WMT21's p-values differ from the released ones by up to 1.3 % relative."""
    S = len(systems)
    _, p = wilcoxon_matrix(groups, order=systems, significant_digits=significant_digits)
    D = np.zeros((S, S), np.int8)
    D[p < alpha] = 1
    D[alpha > p.T] = -1
    np.fill_diagonal(D, 0)
    return D, p


def pairwise_decisions(systems: Sequence[str], human_groups: dict[str, np.ndarray],
                       metric_scores: dict[str, np.ndarray], metric_p: dict[str, np.ndarray],
                       alpha: float = 0.05, two_sided_metric: bool = True,
                       significant_digits: int | None = 15):
    """One row per (pair, metric). ``metric_scores[m]`` (S,) system scores (higher = better),
    ``metric_p[m]`` (S, S) one-sided p for "a > b" (from :func:`paired_bootstrap_all` or
    :func:`paired_ttest_all`). Pairs are oriented so the metric delta is >= 0. ``significant_digits``:
    see :func:`human_decisions`.

    Returns dict of arrays (R,): metric, sys_a, sys_b, metric_delta, human_delta, human (+1/0/-1),
    metric_sig (bool), error ('I', 'II' or '').
    """
    systems = list(systems)
    D, _ = human_decisions(human_groups, systems, alpha, significant_digits)
    hmean = np.array([np.mean(human_groups[s]) for s in systems])
    thr = alpha / 2 if two_sided_metric else alpha
    rows: dict[str, list] = {k: [] for k in ("metric", "sys_a", "sys_b", "metric_delta", "human_delta",
                                             "human", "metric_sig", "error")}
    for m, sc in metric_scores.items():
        sc = np.asarray(sc, dtype=np.float64)
        P = np.asarray(metric_p[m])
        for i, j in combinations(range(len(systems)), 2):
            a, b = (i, j) if sc[i] >= sc[j] else (j, i)
            sig = bool(P[a, b] < thr)
            h = int(D[a, b])
            err = ("I" if h != 1 else "") if sig else ("II" if h != 0 else "")
            rows["metric"].append(m)
            rows["sys_a"].append(systems[a])
            rows["sys_b"].append(systems[b])
            rows["metric_delta"].append(sc[a] - sc[b])
            rows["human_delta"].append(hmean[a] - hmean[b])
            rows["human"].append(h)
            rows["metric_sig"].append(sig)
            rows["error"].append(err)
    return {k: np.asarray(v) for k, v in rows.items()}


def error_table(decisions, metric: str, bins: Sequence[float] = DEFAULT_BINS):
    """Counts of human outcomes per metric-delta bin, with a separate 'NS' bin for
    non-significant metric decisions. Returns (labels (B+1,), counts (B+1, 3)) with columns
    [human worse (-1), human n.s. (0), human better (+1)], plus per-bin Type I/II counts."""
    sel = decisions["metric"] == metric
    delta = decisions["metric_delta"][sel]
    sig = decisions["metric_sig"][sel]
    hum = decisions["human"][sel]
    edges = np.asarray(bins, dtype=np.float64)
    labels = ["NS"] + [f"{lo:g}-{hi:g}" for lo, hi in zip(edges[:-1], edges[1:])]
    which = np.where(sig, np.clip(np.searchsorted(edges, delta, side="right"), 1, len(edges) - 1), 0)
    counts = np.zeros((len(labels), 3), np.int64)
    np.add.at(counts, (which, hum + 1), 1)
    type1 = counts[1:, 0].sum() + counts[1:, 1].sum()
    type2 = counts[0, 0] + counts[0, 2]
    return {"labels": labels, "counts": counts, "type_I": int(type1), "type_II": int(type2)}


def error_bins(decisions, metric: str, bins: Sequence[float] = DEFAULT_BINS) -> dict[str, np.ndarray]:
    """Per bin of :func:`error_table` (labels (B+1,): 'NS', then the metric-delta bins), the
    pairs (B+1,) int64 split into ``agree`` (NS bin: humans n.s. too; other bins: humans find the
    metric's winner significantly better), ``type_I`` (a significant bin where humans find no
    difference or the opposite) and ``type_II`` (the NS bin where humans find a difference)."""
    t = error_table(decisions, metric, bins)
    c = t["counts"]
    n = c.sum(axis=1)
    agree = np.r_[c[0, 1], c[1:, 2]]
    type_i = np.r_[0, c[1:, 0] + c[1:, 1]]
    type_ii = np.zeros_like(n)
    type_ii[0] = c[0, 0] + c[0, 2]
    return {"labels": np.asarray(t["labels"]), "pairs": n, "agree": agree, "type_I": type_i, "type_II": type_ii}


def agreement_matrix(decisions, metrics: Sequence[str] | None = None):
    """Mathur 2021 Fig. 6.12: cell (A, B) = number of system pairs where metric A errs and B is
    correct; the diagonal holds A's total errors. Returns (metrics, (m, m) int64)."""
    ms = list(metrics) if metrics is not None else list(dict.fromkeys(decisions["metric"].tolist()))
    keyed = {}
    for m in ms:
        sel = decisions["metric"] == m
        pairs = [tuple(sorted(x)) for x in zip(decisions["sys_a"][sel], decisions["sys_b"][sel])]
        keyed[m] = dict(zip(pairs, decisions["error"][sel] != ""))
    common = sorted(set.intersection(*(set(v) for v in keyed.values()))) if ms else []
    E = np.array([[keyed[m][p] for p in common] for m in ms], dtype=bool)
    A = (E[:, None, :] & ~E[None, :, :]).sum(axis=-1).astype(np.int64)
    np.fill_diagonal(A, E.sum(axis=1))
    return ms, A
