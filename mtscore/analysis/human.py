"""Human evaluation with Direct Assessment (Graham et al. 2017; WMT practice; Mathur 2021).

Inputs are parallel arrays, one entry per judgement: ``worker`` (N,) ids, ``score`` (N,) float64,
and where needed ``item_type`` (N,) in {SYSTEM, REPEAT, REF, BAD_REF}, ``system`` (N,),
``segment`` (N,), ``hit`` (N,). Everything is numpy; results are dicts of arrays.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "SCORED_TYPES",
    "document_scores",
    "equal_effort_subsample",
    "mann_whitney_greater",
    "qc_paired_ttest",
    "qc_ranksum",
    "qc_repeats",
    "rank_clusters",
    "red_flags",
    "round_significant",
    "segment_scores",
    "self_replication",
    "sequence_effect",
    "standardize",
    "system_scores",
    "wilcoxon_matrix",
    "wmt_wilcoxon_table",
]

SCORED_TYPES = ("SYSTEM", "REPEAT")  # WMT: annotations of the MT outputs and the repeats count


def _codes(x) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x)
    if x.dtype == object:
        x = x.astype(str)
    return np.unique(x, return_inverse=True)


def standardize(worker, score, ddof: int = 1, truncate: bool = False, mask=None):
    """Per-worker z-scores: (score - mean_w) / sd_w over all of the worker's judgements
    (QC items included, WMT practice; restrict the statistics with ``mask``).

    ``ddof=1`` is R's ``sd``; ``truncate`` truncates raw scores to integers first (the WMT
    perl script). Returns (z (N,) float64, keep (N,) bool): workers with sd = 0 (or a single
    judgement) are dropped (keep False, z NaN).
    """
    s = np.asarray(score, dtype=np.float64)
    if not np.isfinite(s).all():
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"standardize: score[{bad}] is {s[bad]}; human scores must be finite")
    if truncate:
        s = np.trunc(s)
    _, w = _codes(worker)
    m = np.ones(s.shape[0], bool) if mask is None else np.asarray(mask, bool)
    k = w.max() + 1 if w.size else 0
    cnt = np.bincount(w[m], minlength=k).astype(np.float64)
    mean = np.bincount(w[m], s[m], minlength=k) / np.maximum(cnt, 1)
    ss = np.bincount(w[m], (s[m] - mean[w[m]]) ** 2, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(ss / (cnt - ddof))
    ok_w = (cnt > ddof) & (sd > 0)
    keep = ok_w[w]
    z = np.full(s.shape[0], np.nan)
    z[keep] = (s[keep] - mean[w[keep]]) / sd[w[keep]]
    return z, keep


def _pairs(worker, item_type, key, score, a_type: str, b_types: Sequence[str]):
    """Match each ``a_type`` judgement to the same worker's judgement of the same ``key``
    whose type is in ``b_types`` (first match). Returns worker codes, names, a and b scores."""
    names, w = _codes(worker)
    t = np.asarray(item_type).astype(str)
    key = np.asarray(key)
    s = np.asarray(score, dtype=np.float64)
    lut: dict[tuple[int, object], float] = {}
    for i in np.flatnonzero(np.isin(t, list(b_types))):
        lut.setdefault((w[i], key[i] if key.ndim == 1 else tuple(key[i])), s[i])
    ws, sa, sb = [], [], []
    for i in np.flatnonzero(t == a_type):
        k = (w[i], key[i] if key.ndim == 1 else tuple(key[i]))
        if k in lut:
            ws.append(w[i])
            sa.append(s[i])
            sb.append(lut[k])
    return names, np.asarray(ws, np.int64), np.asarray(sa), np.asarray(sb)


def qc_paired_ttest(worker, item_type, key, score, alpha: float = 0.05):
    """WMT rater QC (``quality-control.R``): per worker a one-sided paired t-test that the
    degraded (BAD_REF) items score lower than their originals (SYSTEM), pooled over the
    worker's HITs. ``key`` identifies the original item (e.g. "system|segment|hit").

    Returns dict: worker (k,) names, n_pairs (k,), t (k,), p (k,), passed (k,) bool (p <= alpha;
    NaN p fails). The t statistic is invariant to per-worker z-scoring.
    """
    from scipy.stats import t as tdist

    names, w, bad, orig = _pairs(worker, item_type, key, score, "BAD_REF", ("SYSTEM",))
    k = len(names)
    d = bad - orig
    n = np.bincount(w, minlength=k).astype(np.float64)
    mean = np.bincount(w, d, minlength=k) / np.maximum(n, 1)
    var = np.bincount(w, (d - mean[w]) ** 2, minlength=k) / np.maximum(n - 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean / np.sqrt(var / n)
        p = tdist.cdf(t, n - 1)
    p = np.where(n >= 2, p, np.nan)
    passed = np.nan_to_num(p, nan=1.0) <= alpha
    return {"worker": names, "n_pairs": n.astype(np.int64), "t": t, "p": p, "passed": passed}


def qc_ranksum(worker, item_type, key, score, alpha: float = 0.05, absolute_repeat: bool = False):
    """Graham et al. 2017, NLE §4 rater test: one-sided Wilcoxon rank-sum of the repeat-pair
    differences (first - repeat) against the bad-reference differences (original - bad);
    H1: repeat differences are smaller. ``absolute_repeat`` uses |first - repeat|. The p-value
    is the normal approximation (:func:`mann_whitney_greater`) for every worker; R's
    ``wilcox.test`` gives the exact p when both samples have fewer than 50 values and no ties,
    as :func:`mtscore.analysis.human_tests.nle_worker_test` (``mtscore human worker-test``) does.
    Returns dict worker, p, passed (p < alpha)."""
    names, wb, bad, orig = _pairs(worker, item_type, key, score, "BAD_REF", ("SYSTEM",))
    _, wr, rep, first = _pairs(worker, item_type, key, score, "REPEAT", ("SYSTEM",))
    d_bad = orig - bad
    d_rep = first - rep
    if absolute_repeat:
        d_rep = np.abs(d_rep)
    p = np.full(len(names), np.nan)
    for j in range(len(names)):
        a, b = d_rep[wr == j], d_bad[wb == j]
        if len(a) and len(b):
            p[j] = mann_whitney_greater(b, a)
    return {"worker": names, "p": p, "passed": np.nan_to_num(p, nan=1.0) < alpha}


def qc_repeats(worker, item_type, key, score, alpha: float = 0.05):
    """Assumption B: no significant difference between first and repeat scores (two-sided
    Wilcoxon signed-rank per worker). Returns dict worker, p, passed (p >= alpha or untestable)."""
    from scipy.stats import wilcoxon

    names, w, rep, first = _pairs(worker, item_type, key, score, "REPEAT", ("SYSTEM",))
    p = np.full(len(names), np.nan)
    for j in range(len(names)):
        d = first[w == j] - rep[w == j]
        if np.count_nonzero(d) >= 1:
            p[j] = wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue
    return {"worker": names, "p": p, "passed": ~(p < alpha)}


def red_flags(worker, item_type, raw_score, hit=None, adequacy: bool = True, max_run: int = 8):
    """WMT payment red flags (``wrkr-times.R``) from raw scores: ``scores`` if
    mean(BAD_REF) >= mean(SYSTEM) or mean(SYSTEM) >= mean(REF) or (adequacy and mean(REF) < 90);
    ``seq`` if the longest run of identical consecutive scores (in input order) exceeds
    ``max_run``. Returns dict worker, flag_scores, flag_seq, means (k, 3) [bad, sys, ref]."""
    names, w = _codes(worker)
    t = np.asarray(item_type).astype(str)
    s = np.asarray(raw_score, dtype=np.float64)
    k = len(names)
    means = np.full((k, 3), np.nan)
    for c, typ in enumerate(("BAD_REF", "SYSTEM", "REF")):
        m = t == typ
        cnt = np.bincount(w[m], minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[:, c] = np.bincount(w[m], s[m], minlength=k) / cnt
    fs = (means[:, 0] >= means[:, 1]) | (means[:, 1] >= means[:, 2])
    if adequacy:
        fs |= means[:, 2] < 90
    runs = np.zeros(k, np.int64)
    for j in range(k):
        x = s[w == j]
        if x.size:
            br = np.flatnonzero(np.r_[True, x[1:] != x[:-1], True])
            runs[j] = np.diff(br).max()
    return {"worker": names, "flag_scores": fs, "flag_seq": runs > max_run, "longest_run": runs,
            "means": means}


def _r_mean(inv: np.ndarray, values: np.ndarray, k: int, n: np.ndarray) -> np.ndarray:
    """Group means computed like R's ``mean``: long-double sum / n, plus a second pass adding
    the mean residual. Matches R bit for bit on x86 (the WMT scripts are R), which matters
    because the WMT rank tests treat exactly equal segment means as ties."""
    v = np.asarray(values, dtype=np.longdouble)
    s = np.zeros(k, dtype=np.longdouble)
    np.add.at(s, inv, v)
    s /= n
    t = np.zeros(k, dtype=np.longdouble)
    np.add.at(t, inv, v - s[inv])
    s += t / n
    return s.astype(np.float64)


def _group_mean(keys: Sequence[np.ndarray], values: np.ndarray):
    """Mean and count of ``values`` per unique tuple of keys; returns (key arrays..., mean, n)."""
    codes = []
    uniq = []
    for k in keys:
        u, c = _codes(k)
        uniq.append(u)
        codes.append(c)
    mult = np.cumprod([1] + [len(u) for u in uniq[:-1]])
    flat = sum(c.astype(np.int64) * m for c, m in zip(codes, mult))
    g, inv = np.unique(flat, return_inverse=True)
    n = np.bincount(inv)
    mean = _r_mean(inv, values, len(g), n)
    out = []
    for u, m in zip(uniq, mult):
        out.append(u[(g // m) % len(u)])
    return out, mean, n


def segment_scores(system, segment, score, item_type=None, types: Iterable[str] = SCORED_TYPES,
                   min_n: int = 1):
    """Segment scores: mean of the (z) scores per (system, segment) over judgements whose type
    is in ``types`` (WMT: SYSTEM and REPEAT). ``min_n`` keeps only segments with at least that
    many judgements (the strict seg-level DA uses 15).
    Returns dict system (S,), segment (S,), score (S,), n (S,), sorted by system then segment."""
    s = np.asarray(score, dtype=np.float64)
    m = np.ones(s.shape[0], bool)
    if item_type is not None:
        m = np.isin(np.asarray(item_type).astype(str), list(types))
    (sy, sg), mean, n = _group_mean([np.asarray(system)[m], np.asarray(segment)[m]], s[m])
    keep = n >= min_n
    return {"system": sy[keep], "segment": sg[keep], "score": mean[keep], "n": n[keep]}


def document_scores(system, document, segment_score):
    """Document score = unweighted mean of its segment means (Graham et al. 2017, EACL §3, macro step).
    Inputs are per-segment arrays (e.g. from :func:`segment_scores`)."""
    (sy, dc), mean, n = _group_mean([np.asarray(system), np.asarray(document)],
                                    np.asarray(segment_score, dtype=np.float64))
    return {"system": sy, "document": dc, "score": mean, "n_segments": n}


def system_scores(system, score, how: str = "segments", segment=None):
    """System scores. ``how='segments'``: ``system``/``score`` are per-segment rows and the
    system score is their mean (WMT "micro average over segments"); ``how='judgements'``: they
    are individual judgements and the score is their plain mean (Graham et al. 2017, NLE; Mathur 2021). Returns dict
    system (k,), score (k,), n (k,), sorted by score descending (the ranking)."""
    if how not in ("segments", "judgements"):
        raise ValueError("how must be 'segments' or 'judgements'")
    (sy,), mean, n = _group_mean([np.asarray(system)], np.asarray(score, dtype=np.float64))
    order = np.argsort(-mean, kind="mergesort")
    return {"system": sy[order], "score": mean[order], "n": n[order]}


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
    allv = np.concatenate([a, b])
    order = np.argsort(allv, kind="mergesort")
    sv = allv[order]
    new = np.r_[True, sv[1:] != sv[:-1]]
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], sv.size]
    avg = (starts + ends - 1) / 2.0 + 1.0
    ranks = np.empty(sv.size)
    ranks[order] = np.repeat(avg, ends - starts)
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    t = (ends - starts).astype(np.float64)
    sd = np.sqrt(n1 * n2 / 12.0 * ((n + 1) - (t ** 3 - t).sum() / (n * (n - 1))))
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
    _, codes = _codes(sysv[ok])
    rank_in_sys = np.empty(ok.size, np.int64)
    counts: dict[int, int] = {}
    for pos, c in enumerate(codes):
        rank_in_sys[pos] = counts.get(c, 0)
        counts[c] = rank_in_sys[pos] + 1
    mask = np.zeros(sysv.size, bool)
    mask[ok[rank_in_sys < per_system]] = True
    return mask


def self_replication(item_a, score_a, item_b, score_b):
    """Reliability by self-replication (Graham et al. 2017, EACL §3.1): Pearson r between two independent runs' per-item
    scores over the items both runs scored. Returns (r, n_items)."""
    from .correlation import pearson

    la = {k: v for k, v in zip(np.asarray(item_a).tolist(), np.asarray(score_a, float))}
    common = [(la[k], v) for k, v in zip(np.asarray(item_b).tolist(), np.asarray(score_b, float)) if k in la]
    if len(common) < 3:
        return np.nan, len(common)
    x, y = np.asarray(common).T
    return float(pearson(x, y)), len(common)


def sequence_effect(worker, hit, position, score, gold=None, buckets: int = 1):
    """Sequence-effect regression (Mathur 2021 eq. 4.1): Y_t = b0 + b1 Y_{t-1} + b2 Gold_t + e,
    pooled OLS over all workers, the lag taken within the same worker and HIT in presentation
    order (the first item of each HIT has no lag). Without ``gold`` fits b1' (no control).
    ``buckets`` > 1 fits the model separately in equal-size position buckets (tertiles = 3).

    Returns a list (one per bucket) of dicts: coef (p,), se (p,), t (p,), p_value (p,), n,
    names ['const', 'lag', 'gold'].
    """
    from scipy.stats import t as tdist

    w = _codes(worker)[1]
    h = _codes(hit)[1]
    pos = np.asarray(position, dtype=np.float64)
    y = np.asarray(score, dtype=np.float64)
    g = None if gold is None else np.asarray(gold, dtype=np.float64)
    order = np.lexsort((pos, h, w))
    same = np.r_[False, (w[order][1:] == w[order][:-1]) & (h[order][1:] == h[order][:-1])]
    cur = order[same]
    prev = order[np.flatnonzero(same) - 1]
    edges = np.quantile(pos, np.linspace(0, 1, buckets + 1)) if buckets > 1 else None
    out = []
    for b in range(buckets):
        sel = np.ones(cur.size, bool)
        if edges is not None:
            pc = pos[cur]
            sel = (pc >= edges[b]) & ((pc < edges[b + 1]) if b < buckets - 1 else (pc <= edges[b + 1]))
        cols = [np.ones(sel.sum()), y[prev][sel]]
        names = ["const", "lag"]
        if g is not None:
            cols.append(g[cur][sel])
            names.append("gold")
        X = np.column_stack(cols)
        yy = y[cur][sel]
        beta, *_ = np.linalg.lstsq(X, yy, rcond=None)
        resid = yy - X @ beta
        dof = X.shape[0] - X.shape[1]
        sigma2 = resid @ resid / dof
        se = np.sqrt(np.diag(sigma2 * np.linalg.inv(X.T @ X)))
        t = beta / se
        out.append({"names": names, "coef": beta, "se": se, "t": t,
                    "p_value": 2 * tdist.sf(np.abs(t), dof), "n": int(X.shape[0])})
    return out
