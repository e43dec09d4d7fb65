"""Significance decisions on human judgements (Graham et al. 2017, NLE §4-5).

* :func:`rank_sum_test`: Wilcoxon rank-sum / Mann-Whitney U with R ``wilcox.test``'s rule:
  the **exact** p-value when both samples have fewer than 50 values and there are no ties,
  otherwise the normal approximation with tie and continuity correction.
* :func:`nle_worker_test`: the rater test of Graham et al. 2017, NLE §4 with that exact small-sample p-value.
* :func:`sign_test` / :func:`sign_test_matrix`: the exact one-sided sign test used for
  relative-ranking data (Graham et al. 2017, NLE §5.2).
* :func:`combine_adequacy_fluency`: adequacy first, fluency only where adequacy is not
  significant (Graham et al. 2017, NLE §5.2).
* :func:`significant_pair_share` / :func:`significance_curve`: the share of system pairs with a
  significant difference at several thresholds, and that share as the number of judgements per
  system grows in collection order (Graham et al. 2017, NLE §5.4, Table 6 / Figure 5).

* :func:`mann_whitney_greater` / :func:`wilcoxon_matrix`: the one-sided rank-sum p (normal
  approximation, as WMT) for every ordered system pair; :func:`wmt_wilcoxon_table` and
  :func:`rank_clusters` lay the matrix out and cluster the ranking as WMT does;
  :func:`equal_effort_subsample` keeps the first n judgements per system.

Inputs are numpy arrays; p-value matrices are (k, k) float64 with ``p[i, j]`` the one-sided p
that system i is better than system j (NaN diagonal).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import AnalysisInputError
from .scores import category_codes

__all__ = [
    "EXACT_LIMIT",
    "RankSumResult",
    "combine_adequacy_fluency",
    "equal_effort_subsample",
    "mann_whitney_greater",
    "nle_worker_test",
    "rank_clusters",
    "rank_sum_test",
    "round_significant",
    "sign_test",
    "sign_test_matrix",
    "significance_curve",
    "significant_pair_share",
    "wilcoxon_matrix",
    "wmt_wilcoxon_table",
]

EXACT_LIMIT = 50  # R wilcox.test: exact p when both samples have fewer than 50 values (and no ties)
_ALTERNATIVES = ("greater", "less", "two-sided")


@dataclass(frozen=True)
class RankSumResult:
    """``u``: Mann-Whitney U of ``a`` (R's W); ``p``: p-value; ``exact``: whether p is exact."""

    u: float
    p: float
    exact: bool


@lru_cache(maxsize=256)
def _u_cdf(m: int, n: int) -> tuple[np.ndarray, int]:
    """Cumulative counts (exact Python integers, object array of length m*n + 1) of the orderings
    of m + n distinct values with U <= u, and their total C(m+n, m). The counts are the
    coefficients of the Gaussian binomial [m+n choose m]_q = prod_i (1 - q^(n+i)) / (1 - q^i)."""
    size = m * n + 1
    c = np.zeros(size, dtype=object)
    c[:] = 0
    c[0] = 1
    for i in range(1, m + 1):
        step = n + i
        if step < size:  # multiply by (1 - q^(n+i)): uses the old coefficients
            c[step:] = c[step:] - c[:-step]
        pad = (-size) % i  # divide by (1 - q^i): a running sum along each residue class mod i
        block = np.concatenate([c, np.zeros(pad, dtype=object)]).reshape(-1, i)
        c = np.cumsum(block, axis=0).ravel()[:size]
    return np.cumsum(c), math.comb(m + n, m)


def _exact_p(u: float, m: int, n: int, alternative: str) -> float:
    cdf, total = _u_cdf(m, n)
    k = round(u)
    lower = int(cdf[k])                                # #(U <= u)
    upper = total - (int(cdf[k - 1]) if k > 0 else 0)  # #(U >= u)
    if alternative == "greater":
        return upper / total
    if alternative == "less":
        return lower / total
    return min(1.0, 2.0 * min(upper, lower) / total)


def _u_and_ties(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mann-Whitney U of ``x`` (n1,) against ``y`` (n2,) (midranks for ties) and the sizes
    (float64) of the groups of equal values in the pooled sample."""
    allv = np.concatenate([x, y])
    order = np.argsort(allv, kind="mergesort")
    sv = allv[order]
    starts = np.flatnonzero(np.r_[True, sv[1:] != sv[:-1]])
    ends = np.r_[starts[1:], sv.size]
    ranks = np.empty(sv.size)
    ranks[order] = np.repeat((starts + ends - 1) / 2.0 + 1.0, ends - starts)
    m = x.size
    return float(ranks[:m].sum() - m * (m + 1) / 2.0), (ends - starts).astype(np.float64)


def _normal_sd(m: int, n: int, t: np.ndarray) -> float:
    """SD of U under H0 with the tie correction (``t``: tie-group sizes); 0 for one value."""
    N = m + n
    return math.sqrt(m * n / 12.0 * ((N + 1) - float((t ** 3 - t).sum()) / (N * (N - 1)))) if N > 1 else 0.0


def rank_sum_test(a, b, alternative: str = "greater", exact: bool | None = None,
                  correct: bool = True) -> RankSumResult:
    """Wilcoxon rank-sum test of samples ``a`` (n1,) and ``b`` (n2,) float64, as R
    ``wilcox.test(a, b, alternative=..., exact=..., correct=...)``.

    ``alternative='greater'``: a tends to be larger than b. ``exact=None`` chooses as R does
    (exact iff n1 < 50, n2 < 50 and no ties); ``exact=True`` with ties falls back to the normal
    approximation (as R, which warns). An empty sample gives p NaN; non-finite values raise
    :class:`AnalysisInputError`.
    """
    if alternative not in _ALTERNATIVES:
        raise AnalysisInputError(f"rank_sum_test: alternative must be one of {', '.join(_ALTERNATIVES)}, "
                                 f"not {alternative!r}")
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise AnalysisInputError("rank_sum_test: the samples contain NaN or inf; drop them first")
    m, n = x.size, y.size
    if m == 0 or n == 0:
        return RankSumResult(np.nan, np.nan, False)
    u, t = _u_and_ties(x, y)
    ties = bool((t > 1).any())
    use_exact = (m < EXACT_LIMIT and n < EXACT_LIMIT) if exact is None else exact
    if use_exact and not ties:
        return RankSumResult(u, _exact_p(u, m, n, alternative), True)
    from scipy.special import ndtr

    sd = _normal_sd(m, n, t)
    if sd == 0:
        return RankSumResult(u, np.nan, False)
    d = u - m * n / 2.0
    if alternative == "two-sided":
        cc = math.copysign(0.5, d) if (correct and d != 0) else 0.0
        return RankSumResult(u, float(min(1.0, 2 * ndtr(-abs((d - cc) / sd)))), False)
    cc = (0.5 if alternative == "greater" else -0.5) if correct else 0.0
    z = (d - cc) / sd
    return RankSumResult(u, float(ndtr(-z) if alternative == "greater" else ndtr(z)), False)


def _pair_scores(w, t, key, s, a_type: str, b_type: str) -> dict[tuple[str, object], tuple[float, float]]:
    """(worker, key) -> (score of the ``b_type`` item, score of the ``a_type`` item), first match."""
    first: dict[tuple[str, object], float] = {}
    for i in np.flatnonzero(t == b_type):
        first.setdefault((w[i], key[i]), s[i])
    out: dict[tuple[str, object], tuple[float, float]] = {}
    for i in np.flatnonzero(t == a_type):
        k = (w[i], key[i])
        if k in first and k not in out:
            out[k] = (first[k], s[i])
    return out


def nle_worker_test(worker, item_type, key, score, alpha: float = 0.05, absolute_repeat: bool = False,
                    exact: bool | None = None) -> dict[str, np.ndarray]:
    """The rater test of Graham et al. 2017, NLE §4, per worker: one-sided rank-sum test that the bad-reference
    differences d_bad = s(SYSTEM) - s(BAD_REF) exceed the repeat differences
    d_rep = s(SYSTEM) - s(REPEAT) (``absolute_repeat``: |d_rep|), with R's exact small-sample
    p-value (see :func:`rank_sum_test`). ``key`` (N,) names the original item of each judgement
    (e.g. "hit|system|segment"); ``item_type`` (N,) holds SYSTEM / REPEAT / BAD_REF / REF.

    Returns dict: worker (k,) str, n_bad (k,), n_repeat (k,) int64, p (k,) float64 (NaN when a
    worker has no pair of one kind), exact (k,) bool, passed (k,) bool (p < alpha).
    """
    s = np.asarray(score, dtype=np.float64)
    w = np.asarray(worker).astype(str)
    t = np.asarray(item_type).astype(str)
    k = np.asarray(key).astype(str)
    if not (s.shape == w.shape == t.shape == k.shape) or s.ndim != 1:
        raise AnalysisInputError(f"nle_worker_test: worker, item_type, key and score must be 1-D arrays of "
                                 f"one length (got {w.shape}, {t.shape}, {k.shape}, {s.shape})")
    if not np.isfinite(s).all():
        raise AnalysisInputError(f"nle_worker_test: score[{int(np.flatnonzero(~np.isfinite(s))[0])}] is not finite")
    bad = _pair_scores(w, t, k, s, "BAD_REF", "SYSTEM")
    rep = _pair_scores(w, t, k, s, "REPEAT", "SYSTEM")
    names = np.unique(w)
    res = {"worker": names, "n_bad": np.zeros(names.size, np.int64), "n_repeat": np.zeros(names.size, np.int64),
           "p": np.full(names.size, np.nan), "exact": np.zeros(names.size, bool)}
    d_bad: dict[str, list[float]] = {}
    d_rep: dict[str, list[float]] = {}
    for (wk, _), (orig, b) in bad.items():
        d_bad.setdefault(wk, []).append(orig - b)
    for (wk, _), (orig, rp) in rep.items():
        d_rep.setdefault(wk, []).append(abs(orig - rp) if absolute_repeat else orig - rp)
    for j, name in enumerate(names):
        db, dr = d_bad.get(name, []), d_rep.get(name, [])
        res["n_bad"][j], res["n_repeat"][j] = len(db), len(dr)
        if db and dr:
            r = rank_sum_test(db, dr, "greater", exact=exact)
            res["p"][j], res["exact"][j] = r.p, r.exact
    res["passed"] = np.nan_to_num(res["p"], nan=1.0) < alpha
    return res


def sign_test(wins: int, losses: int, alternative: str = "greater") -> float:
    """Exact sign test (binomial, p = 1/2) of ``wins`` against ``losses`` (ties are left out
    before calling). ``greater``: P(X >= wins), X ~ Bin(wins + losses, 1/2); ``two-sided`` as
    R ``binom.test``. No comparisons give NaN."""
    if alternative not in _ALTERNATIVES:
        raise AnalysisInputError(f"sign_test: alternative must be one of {', '.join(_ALTERNATIVES)}")
    if wins < 0 or losses < 0 or int(wins) != wins or int(losses) != losses:
        raise AnalysisInputError(f"sign_test: wins and losses must be counts (got {wins}, {losses})")
    w, n = int(wins), int(wins) + int(losses)
    if n == 0:
        return float("nan")
    upper = sum(math.comb(n, k) for k in range(w, n + 1))
    lower = sum(math.comb(n, k) for k in range(0, w + 1))
    total = 1 << n
    if alternative == "greater":
        return upper / total
    if alternative == "less":
        return lower / total
    return min(1.0, 2 * min(upper, lower) / total)


def sign_test_matrix(system_a, system_b, outcome, order: Sequence[str] | None = None):
    """Sign tests from pairwise comparisons (relative ranking, Graham et al. 2017, NLE §5.2): ``outcome`` (N,) is +1 when
    ``system_a`` (N,) won, -1 when ``system_b`` (N,) won, 0 for a tie (ignored).

    Returns dict: systems (k,) (``order``, default by share of wins, best first), wins (k, k)
    int64 (wins[i, j] = comparisons i won against j) and p (k, k) float64 (one-sided sign-test p
    that i beats j; NaN on the diagonal and for pairs never compared)."""
    a = np.asarray(system_a).astype(str)
    b = np.asarray(system_b).astype(str)
    o = np.asarray(outcome)
    if not (a.shape == b.shape == o.shape) or a.ndim != 1:
        raise AnalysisInputError("sign_test_matrix: system_a, system_b and outcome must be 1-D of one length")
    if not np.isin(o, (-1, 0, 1)).all():
        raise AnalysisInputError("sign_test_matrix: outcome must be +1 (a won), -1 (b won) or 0 (tie)")
    names = np.unique(np.r_[a, b])
    ia, ib = np.searchsorted(names, a), np.searchsorted(names, b)
    k = names.size
    wins = np.zeros((k, k), np.int64)
    np.add.at(wins, (ia[o > 0], ib[o > 0]), 1)
    np.add.at(wins, (ib[o < 0], ia[o < 0]), 1)
    if order is None:
        tot = wins + wins.T
        with np.errstate(invalid="ignore", divide="ignore"):
            share = wins.sum(1) / tot.sum(1)
        perm = np.argsort(-np.nan_to_num(share, nan=-1.0), kind="mergesort")
    else:
        pos = {s: i for i, s in enumerate(names)}
        missing = [s for s in order if s not in pos]
        if missing or len(order) != k:
            raise AnalysisInputError(f"sign_test_matrix: order must list each system once (unknown: {missing[:3]})")
        perm = np.array([pos[s] for s in order])
    wins = wins[np.ix_(perm, perm)]
    p = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(k):
            if i != j:
                p[i, j] = sign_test(wins[i, j], wins[j, i])
    return {"systems": names[perm], "wins": wins, "p": p}


def combine_adequacy_fluency(p_adequacy, p_fluency, alpha: float = 0.05, adequacy_alpha: float = 0.05):
    """The Graham et al. 2017, NLE §5.2 decision for every system pair from two (k, k) one-sided p matrices in one system
    order: +1 where i is better than j, -1 where worse, 0 undecided.

    Adequacy decides where it is significant at ``alpha``; where adequacy does not differ at
    ``adequacy_alpha`` (0.05 in Graham et al. 2017, NLE) the fluency test at ``alpha`` decides; a pair whose
    adequacy p lies between ``alpha`` and ``adequacy_alpha`` stays undecided (fluency alone never
    overrides a significant adequacy result). Returns (decision (k, k) int8, source (k, k) str:
    'adequacy', 'fluency' or '')."""
    pa = np.asarray(p_adequacy, dtype=np.float64)
    pf = np.asarray(p_fluency, dtype=np.float64)
    if pa.ndim != 2 or pa.shape[0] != pa.shape[1] or pa.shape != pf.shape:
        raise AnalysisInputError(f"combine_adequacy_fluency: need two square matrices of one shape "
                                 f"(got {pa.shape} and {pf.shape})")
    if not (0 < alpha < 1 and 0 < adequacy_alpha < 1):
        raise AnalysisInputError("combine_adequacy_fluency: alpha and adequacy_alpha must lie in (0, 1)")
    pa_ = np.nan_to_num(pa, nan=1.0)
    pf_ = np.nan_to_num(pf, nan=1.0)
    adeq = np.where(pa_ < alpha, 1, 0) - np.where(alpha > pa_.T, 1, 0)
    adeq_ns = (pa_ >= adequacy_alpha) & (adequacy_alpha <= pa_.T)
    flu = np.where(pf_ < alpha, 1, 0) - np.where(alpha > pf_.T, 1, 0)
    decision = np.where(adeq != 0, adeq, np.where(adeq_ns, flu, 0)).astype(np.int8)
    np.fill_diagonal(decision, 0)
    source = np.where(adeq != 0, "adequacy", np.where(adeq_ns & (flu != 0), "fluency", ""))
    np.fill_diagonal(source, "")
    return decision, source


def significant_pair_share(p, thresholds: Sequence[float] = (0.05, 0.01, 0.001)) -> dict[float, float]:
    """Graham et al. 2017, NLE §5.4: the share of the k(k-1)/2 system pairs with a significant difference at each
    threshold, from a (k, k) matrix in ranking order (best first) where ``p[i, j]`` is the
    one-sided p that i beats j: the test is read once per pair, in the direction of the
    ranking (i above j). NaN p counts as not significant; fewer than 2 systems give NaN."""
    P = np.asarray(p, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise AnalysisInputError(f"significant_pair_share: p must be a square matrix (got shape {P.shape})")
    k = P.shape[0]
    upper = P[np.triu_indices(k, 1)]
    if upper.size == 0:
        return {float(t): float("nan") for t in thresholds}
    u = np.nan_to_num(upper, nan=1.0)
    return {float(t): float((u < t).mean()) for t in thresholds}


def significance_curve(system, score, order_key, sizes: Sequence[int],
                       thresholds: Sequence[float] = (0.05, 0.01, 0.001)) -> dict[str, np.ndarray]:
    """Graham et al. 2017, NLE §5.4, Figure 5: for each n in ``sizes``, keep the first n judgements of every system
    in ``order_key`` order (e.g. HIT submission time), rank systems by mean score, run the
    one-sided rank-sum test on the judgement scores of every pair in ranking direction and
    report the share of significant pairs. Returns dict n (m,), share (m, len(thresholds)),
    thresholds."""
    sysv = np.asarray(system).astype(str)
    s = np.asarray(score, dtype=np.float64)
    if sysv.shape != s.shape or np.asarray(order_key).shape != s.shape:
        raise AnalysisInputError("significance_curve: system, score and order_key must have one length")
    if any(int(n) < 1 for n in sizes):
        raise AnalysisInputError("significance_curve: every size must be at least 1 judgement per system")
    from ...engine.progress import progress_bar

    share = np.full((len(sizes), len(thresholds)), np.nan)
    with progress_bar(len(sizes), "judgements per system", None if len(sizes) > 1 else False,
                      unit="size") as bar:  # a terminal only
        for r, n in enumerate(sizes):
            keep = equal_effort_subsample(sysv, order_key, int(n))
            groups = {g: s[keep & (sysv == g)] for g in np.unique(sysv)}
            _, p = wilcoxon_matrix(groups, significant_digits=None)
            share[r] = list(significant_pair_share(p, thresholds).values())
            bar.update(1)
    return {"n": np.asarray(sizes, np.int64), "share": share, "thresholds": np.asarray(thresholds, np.float64)}


def mann_whitney_greater(a, b, continuity: bool = True) -> float:
    """One-sided Wilcoxon rank-sum (Mann-Whitney U) p-value for "a tends to be greater than b",
    normal approximation with tie correction and continuity correction (R ``wilcox.test``
    with ties / n >= 50; scipy ``mannwhitneyu(method='asymptotic')``)."""
    from scipy.special import ndtr

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n1, n2 = a.size, b.size
    if n1 == 0 or n2 == 0:
        return np.nan
    u1, t = _u_and_ties(a, b)
    sd = _normal_sd(n1, n2, t)
    if sd == 0:
        return np.nan
    z = (u1 - n1 * n2 / 2.0 - (0.5 if continuity else 0.0)) / sd
    return float(ndtr(-z))


def round_significant(x, digits: int = 15) -> np.ndarray:
    """Round to ``digits`` significant digits, as ``write.table``/``print`` with 15 digits do."""
    x = np.asarray(x, dtype=np.float64)
    return np.array([float(f"{v:.{digits}g}") for v in x.ravel()]).reshape(x.shape)


def wilcoxon_matrix(groups: dict[str, np.ndarray], order: Sequence[str] | None = None,
                    significant_digits: int | None = 15):
    """All ordered pairs of one-sided rank-sum tests: p[i, j] = P-value for "system i is
    greater than system j" on the score samples in ``groups`` (WMT: segment-averaged z).
    ``order`` defaults to descending mean. Values are rounded to ``significant_digits`` before
    ranking, as WMT ranks the segment scores it wrote to (and read back from) its 15-digit
    ``ad-seg-scores`` files; ties, and so the tie correction, depend on it.
    Returns (names (k,), p (k, k) with NaN diagonal)."""
    names = list(order) if order is not None else sorted(groups, key=lambda s: -np.mean(groups[s]))
    if significant_digits is not None:
        groups = {k: round_significant(v, significant_digits) for k, v in groups.items()}
    k = len(names)
    p = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(k):
            if i != j:
                p[i, j] = mann_whitney_greater(groups[names[i]], groups[names[j]])
    return names, p


def wmt_wilcoxon_table(p, alpha: float = 0.05, sentinel: float = 0.12) -> np.ndarray:
    """WMT ``adwilcox-*.csv`` layout from a matrix in ranking order: p[i, j] kept for i ranked
    above j (i < j) when p < alpha, ``sentinel`` elsewhere (incl. the diagonal)."""
    p = np.asarray(p, dtype=np.float64)
    k = p.shape[0]
    out = np.full((k, k), sentinel)
    upper = np.triu(np.ones((k, k), bool), 1)
    sig = upper & (p < alpha)
    out[sig] = p[sig]
    return out


def rank_clusters(p, alpha: float = 0.05, rule: str = "wmt21") -> np.ndarray:
    """Cluster ids (k,) int (1 = top) for systems in ranking order, from p[i, j] = one-sided p
    that system i beats system j.

    ``rule='wmt21'`` (inferred from, and reproducing, every WMT21 to-English ``clusters.csv``):
    a cluster ends after position c when the system at c significantly beats every system
    below it and beats none ranked above it (a system that out-tests a better-ranked one is
    not a clean boundary). ``rule='strict'``: a cluster ends
    after c when every system at or above c beats every system below (transitive cut).
    """
    p = np.asarray(p, dtype=np.float64)
    k = p.shape[0]
    sig = np.nan_to_num(p, nan=1.0) < alpha
    ids = np.ones(k, np.int64)
    cur = 1
    for c in range(k - 1):
        below = slice(c + 1, k)
        if rule == "wmt21":
            cut = sig[c, below].all() and not sig[c, :c].any()
        elif rule == "strict":
            cut = sig[: c + 1, below].all()
        else:
            raise ValueError("rule must be 'wmt21' or 'strict'")
        if cut:
            cur += 1
        ids[c + 1] = cur
    return ids


def equal_effort_subsample(system, order_key, per_system: int):
    """Keep the first ``per_system`` judgements of every system, in ``order_key`` order
    (Graham et al. 2017, NLE §5.4: HITs in the order they were completed). Returns a bool mask (N,)."""
    sysv = np.asarray(system)
    ok = np.argsort(np.asarray(order_key), kind="mergesort")
    _, codes = category_codes(sysv[ok])
    rank_in_sys = np.empty(ok.size, np.int64)
    counts: dict[int, int] = {}
    for pos, c in enumerate(codes):
        rank_in_sys[pos] = counts.get(c, 0)
        counts[c] = rank_in_sys[pos] + 1
    mask = np.zeros(sysv.size, bool)
    mask[ok[rank_in_sys < per_system]] = True
    return mask

