"""The Bayesian rater model of Mathur's thesis, Chapter 3 (numpy only).

Generative story: item quality mu_i ~ N(0, 1); worker precision tau_j ~ Gamma(shape k,
scale theta); each (z-standardised) score s_ij ~ N(mu_i, 1 / tau_j). Quality-control links:
a repeat shares its original's mu (equality), a degraded item must be worse than its original
(mu_bad < mu_orig).

Inference: mean-field variational Bayes, q(mu_i) = N(m_i, v_i), q(tau_j) = Gamma(a_j, b_j)
(shape/rate), with each inequality factor 1[mu_orig - mu_bad > 0] approximated by expectation
propagation: one Gaussian site per factor and endpoint, refined by truncated-Gaussian moment
matching against its cavity, so an original with several degraded copies keeps every
constraint. ``method='gibbs'`` runs a Gibbs sampler instead (each constrained item drawn from
its normal truncated to (max of its degraded items, min of its originals), in blocks of items
no constraint links).

:func:`qc_links` turns a WMT ratings table (system, segment, type, HIT) into item codes and the
degraded links; :func:`worker_correlations` and :func:`critical_r` give the diagnostic (Mathur 2021 §3.5.5)
heat map's matrix and colour-map centre.

Prior: the thesis gives k = 5, theta = 0.3 and calls theta a rate; a rate of 0.3 implies a
mean precision of 16.7 (error sd 0.24 on a z-scale), so we read theta as a **scale**
(Infer.NET ``Gamma.FromShapeAndScale``): mean precision 1.5. Pass ``prior_scale`` to change it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..errors import AnalysisInputError

__all__ = [
    "RaterModelResult",
    "critical_r",
    "fit_rater_model",
    "qc_links",
    "remove_spammers",
    "simulate",
    "worker_correlations",
]


@dataclass
class RaterModelResult:
    item_mean: np.ndarray        # (n_items,) posterior mean of mu
    item_var: np.ndarray         # (n_items,) posterior variance of mu
    worker_precision: np.ndarray  # (n_workers,) posterior mean of tau
    n_iter: int
    converged: bool


def _trunc_pair(m_o, v_o, m_b, v_b):
    """Moments of (mu_o, mu_b) ~ N(m_o, v_o) N(m_b, v_b) restricted to mu_o > mu_b."""
    from scipy.special import log_ndtr

    s = np.sqrt(v_o + v_b)
    a = (m_o - m_b) / s
    lam = np.exp(-0.5 * a * a - 0.5 * np.log(2 * np.pi) - log_ndtr(a))  # phi(a) / Phi(a)
    delta = lam * (lam + a)
    m_o2 = m_o + v_o / s * lam
    m_b2 = m_b - v_b / s * lam
    v_o2 = v_o * (1 - v_o / (s * s) * delta)
    v_b2 = v_b * (1 - v_b / (s * s) * delta)
    return m_o2, np.maximum(v_o2, 1e-12), m_b2, np.maximum(v_b2, 1e-12)


class _Judgements(NamedTuple):
    """The data and prior terms both inference methods share."""

    it: np.ndarray       # (N,) canonical item of each judgement (repeats mapped onto originals)
    worker: np.ndarray   # (N,) worker of each judgement
    s: np.ndarray        # (N,) scores
    deg: np.ndarray      # (P, 2) canonical (bad, original) item pairs with mu_bad < mu_orig
    n_items: int
    n_workers: int
    a: np.ndarray        # (n_workers,) posterior shape of tau (prior shape + n_j / 2)
    rate0: float         # prior rate of tau
    tau0: float          # initial precision (the prior mean)


def fit_rater_model(item, worker, score, n_items: int | None = None, n_workers: int | None = None,
                    repeat_of: Sequence[tuple[int, int]] | None = None,
                    degraded: Sequence[tuple[int, int]] | None = None,
                    prior_shape: float = 5.0, prior_scale: float = 0.3, method: str = "vb",
                    max_iter: int = 200, tol: float = 1e-6, n_samples: int = 500, burn_in: int = 200,
                    seed: int | None = 0) -> RaterModelResult:
    """Fit the model to judgements (item (N,) int, worker (N,) int, score (N,) float64 z).

    ``repeat_of``: pairs (repeat_item, original_item) tied to one quality; ``degraded``: pairs
    (bad_item, original_item) with mu_bad < mu_orig. Returns a :class:`RaterModelResult`.
    """
    item = np.asarray(item, dtype=np.int64)
    worker = np.asarray(worker, dtype=np.int64)
    s = np.asarray(score, dtype=np.float64)
    if not np.isfinite(s).all():
        raise AnalysisInputError("fit_rater_model: scores contain NaN/inf")
    if not (item.shape == worker.shape == s.shape) or s.ndim != 1 or s.size == 0:
        raise AnalysisInputError(f"fit_rater_model: item, worker and score must be non-empty 1-D arrays of one "
                                 f"length (got {item.shape}, {worker.shape}, {s.shape})")
    n_items = int(item.max()) + 1 if n_items is None else n_items
    n_workers = int(worker.max()) + 1 if n_workers is None else n_workers
    for name, a, n in (("item", item, n_items), ("worker", worker, n_workers)):
        if a.min() < 0 or a.max() >= n:
            raise AnalysisInputError(f"fit_rater_model: {name} codes must lie in 0..{n - 1} (n_{name}s = {n}); "
                                     f"found {a.min() if a.min() < 0 else a.max()}")
    canon = _canonical_items(n_items, repeat_of)
    deg = np.asarray(degraded, dtype=np.int64).reshape(-1, 2) if degraded is not None and len(degraded) \
        else np.zeros((0, 2), np.int64)
    if deg.size:
        if deg.min() < 0 or deg.max() >= n_items:
            raise AnalysisInputError(f"fit_rater_model: degraded pairs name items outside 0..{n_items - 1}")
        deg = np.unique(canon[deg], axis=0)
        if (deg[:, 0] == deg[:, 1]).any():
            b, o = deg[deg[:, 0] == deg[:, 1]][0]
            raise AnalysisInputError(f"fit_rater_model: degraded item {b} is tied to its own original {o} "
                             "(through repeat_of); a degraded copy must be a separate item")
    n_j = np.bincount(worker, minlength=n_workers).astype(np.float64)
    data = _Judgements(canon[item], worker, s, deg, n_items, n_workers, prior_shape + n_j / 2.0,
                       1.0 / prior_scale, prior_shape * prior_scale)
    if method == "vb":
        m, v, e_tau, t, converged = _fit_vb(data, max_iter, tol)
        return RaterModelResult(m[canon], v[canon], e_tau, t, converged)
    if method != "gibbs":
        raise AnalysisInputError("method must be 'vb' or 'gibbs'")
    mm, var, tau = _fit_gibbs(data, n_samples, burn_in, np.random.default_rng(seed))
    return RaterModelResult(mm[canon], var[canon], tau, burn_in + n_samples, True)


def _canonical_items(n_items: int, repeat_of: Sequence[tuple[int, int]] | None) -> np.ndarray:
    """Equality constraints: each item's canonical item (repeats mapped onto their original)."""
    canon = np.arange(n_items)
    if repeat_of:
        for r, o in repeat_of:
            canon[r] = o
        for _ in range(4):  # chains of repeats
            canon = canon[canon]
    return canon


def _edge_classes(deg: np.ndarray) -> list[np.ndarray]:
    """Split constraint pairs into classes in which no item occurs twice (greedy edge
    colouring), so each class can be updated with vectorised assignments."""
    used: dict[int, set] = {}
    colour = np.empty(deg.shape[0], np.int64)
    for e, (b, o) in enumerate(deg.tolist()):
        c = 0
        ub, uo = used.setdefault(b, set()), used.setdefault(o, set())
        while c in ub or c in uo:
            c += 1
        colour[e] = c
        ub.add(c)
        uo.add(c)
    return [np.flatnonzero(colour == c) for c in range(int(colour.max()) + 1)] if deg.size else []


def _fit_vb(d: _Judgements, max_iter: int, tol: float):
    """Mean-field VB with EP sites for the inequality factors: ``(m, v, E[tau], iterations,
    converged)`` over canonical items."""
    it, worker, s, deg = d.it, d.worker, d.s, d.deg
    e_tau = np.full(d.n_workers, d.tau0)
    m: np.ndarray = np.zeros(d.n_items)
    v: np.ndarray = np.ones(d.n_items)
    classes = _edge_classes(deg)
    site = np.zeros((deg.shape[0], 4))  # per factor: precision and precision*mean to (orig, bad)
    converged = False
    for t in range(1, max_iter + 1):  # noqa: B007 - t (iterations run) is reported after the loop
        q_prec = 1.0 + np.bincount(it, e_tau[worker], minlength=d.n_items)
        q_h = np.bincount(it, e_tau[worker] * s, minlength=d.n_items)
        if deg.size:
            b_i, o_i = deg[:, 0], deg[:, 1]
            q_prec += np.bincount(o_i, site[:, 0], d.n_items) + np.bincount(b_i, site[:, 2], d.n_items)
            q_h += np.bincount(o_i, site[:, 1], d.n_items) + np.bincount(b_i, site[:, 3], d.n_items)
            for cls in classes:
                _ep_update(q_prec, q_h, site, cls, o_i[cls], b_i[cls])
        v = 1.0 / q_prec
        m_new = q_h * v
        b = d.rate0 + 0.5 * np.bincount(worker, (s - m_new[it]) ** 2 + v[it], minlength=d.n_workers)
        e_tau_new = d.a / b
        delta = max(np.abs(m_new - m).max(), np.abs(e_tau_new - e_tau).max() / max(1.0, e_tau.max()))
        m, e_tau = m_new, e_tau_new
        if delta < tol:
            converged = True
            break
    return m, v, e_tau, t, converged


def _ep_update(q_prec: np.ndarray, q_h: np.ndarray, site: np.ndarray, cls: np.ndarray, o: np.ndarray,
               b: np.ndarray) -> None:
    """One EP step for the factors ``cls`` (no item repeated): remove each factor's sites from
    q (the cavity), moment-match the cavity times 1[mu_o > mu_b], store the new sites, in place."""
    cp_o, ch_o = q_prec[o] - site[cls, 0], q_h[o] - site[cls, 1]
    cp_b, ch_b = q_prec[b] - site[cls, 2], q_h[b] - site[cls, 3]
    mo, vo, mb, vb = _trunc_pair(ch_o / cp_o, 1.0 / cp_o, ch_b / cp_b, 1.0 / cp_b)
    q_prec[o], q_h[o] = 1.0 / vo, mo / vo
    q_prec[b], q_h[b] = 1.0 / vb, mb / vb
    site[cls, 0], site[cls, 1] = q_prec[o] - cp_o, q_h[o] - ch_o
    site[cls, 2], site[cls, 3] = q_prec[b] - cp_b, q_h[b] - ch_b


def _fit_gibbs(d: _Judgements, n_samples: int, burn_in: int, rng: np.random.Generator):
    """Gibbs sampler: posterior ``(mean of mu, variance of mu, mean of tau)`` over canonical items."""
    it, worker, s = d.it, d.worker, d.s
    tau = np.full(d.n_workers, d.tau0)
    mu = np.zeros(d.n_items)
    sum_mu = np.zeros(d.n_items)
    sum_mu2 = np.zeros(d.n_items)
    sum_tau = np.zeros(d.n_workers)
    blocks = _item_blocks(d.deg, d.n_items)
    free = np.ones(d.n_items, bool)
    free[d.deg.ravel()] = False  # constrained items keep their (feasible) last draw until redrawn
    for t in range(burn_in + n_samples):
        prec = 1.0 + np.bincount(it, tau[worker], minlength=d.n_items)
        mean = np.bincount(it, tau[worker] * s, minlength=d.n_items) / prec
        sd = 1.0 / np.sqrt(prec)
        draw = mean + sd * rng.standard_normal(d.n_items)
        mu[free] = draw[free]
        if d.deg.size:
            _sample_degraded_pairs(mu, mean, sd, d.deg, blocks, rng)
        rss = np.bincount(worker, (s - mu[it]) ** 2, minlength=d.n_workers)
        tau = rng.gamma(d.a, 1.0 / (d.rate0 + 0.5 * rss))
        if t >= burn_in:
            sum_mu += mu
            sum_mu2 += mu * mu
            sum_tau += tau
    mm = sum_mu / n_samples
    return mm, sum_mu2 / n_samples - mm * mm, sum_tau / n_samples


def _item_blocks(deg: np.ndarray, n_items: int) -> list[np.ndarray]:
    """Constrained items split into blocks with no constraint inside a block (greedy vertex
    colouring), so each block can be drawn at once given the others."""
    nbrs: dict[int, list[int]] = {}
    for b, o in deg.tolist():
        nbrs.setdefault(b, []).append(o)
        nbrs.setdefault(o, []).append(b)
    colour: dict[int, int] = {}
    for i in sorted(nbrs):
        taken = {colour[j] for j in nbrs[i] if j in colour}
        colour[i] = min(c for c in range(len(taken) + 1) if c not in taken)
    items = np.array(sorted(colour), np.int64)
    cols = np.array([colour[i] for i in items.tolist()], np.int64)
    return [items[cols == c] for c in range(int(cols.max()) + 1)] if items.size else []


def _sample_degraded_pairs(mu: np.ndarray, mean: np.ndarray, sd: np.ndarray, deg: np.ndarray,
                           blocks: Sequence[np.ndarray], rng: np.random.Generator) -> None:
    """Redraw every constrained item in place from its conditional normal truncated to
    (max mu of its degraded copies, min mu of the originals it degrades), block by block."""
    from scipy.special import ndtr, ndtri

    b_i, o_i = deg[:, 0], deg[:, 1]
    for blk in blocks:
        lo = np.full(mu.shape[0], -np.inf)
        hi = np.full(mu.shape[0], np.inf)
        np.maximum.at(lo, o_i, mu[b_i])  # an original lies above all its degraded copies
        np.minimum.at(hi, b_i, mu[o_i])  # a degraded copy lies below all its originals
        plo = ndtr((lo[blk] - mean[blk]) / sd[blk])
        phi = ndtr((hi[blk] - mean[blk]) / sd[blk])
        u = plo + (phi - plo) * rng.random(blk.size)
        z = ndtri(np.clip(u, 1e-15, 1 - 1e-15))
        mu[blk] = np.clip(mean[blk] + sd[blk] * z, lo[blk], hi[blk])


def remove_spammers(item, worker, score, keep: int, group=None, **fit_kw):
    """Mathur 2021 §3.5.4: fit on all workers, rank workers by inferred precision (within each
    ``group``, e.g. HIT, when given), refit on the ``keep`` most precise. Returns
    (refit result, kept worker mask (n_workers,))."""
    item = np.asarray(item, dtype=np.int64)
    worker = np.asarray(worker, dtype=np.int64)
    first = fit_rater_model(item, worker, score, **fit_kw)
    n_workers = first.worker_precision.shape[0]
    kept = np.zeros(n_workers, bool)
    if group is None:
        kept[np.argsort(-first.worker_precision, kind="mergesort")[:keep]] = True
    else:
        g = np.asarray(group)
        for gv in np.unique(g):
            ws = np.unique(worker[g == gv])
            kept[ws[np.argsort(-first.worker_precision[ws], kind="mergesort")[:keep]]] = True
    sel = kept[worker]
    fit_kw = dict(fit_kw)
    fit_kw.setdefault("n_items", int(item.max()) + 1)
    fit_kw.setdefault("n_workers", n_workers)
    return fit_rater_model(item[sel], worker[sel], np.asarray(score)[sel], **fit_kw), kept


def simulate(n_items: int = 100, n_workers: int = 20, n_spammers: int = 0, coverage: float = 1.0,
             prior_shape: float = 5.0, prior_scale: float = 0.3, seed: int = 0):
    """Synthetic data with known truth: mu ~ N(0,1), tau ~ Gamma(k, theta), every worker scores
    a ``coverage`` share of items; spammers' scores are i.i.d. N(0, 1) (Mathur 2021 §3.5.3).
    Returns dict item, worker, score (N,), mu (n_items,), tau (n_workers + n_spammers,),
    spammer (n_workers + n_spammers,) bool."""
    rng = np.random.default_rng(seed)
    mu = rng.standard_normal(n_items)
    W = n_workers + n_spammers
    tau = rng.gamma(prior_shape, prior_scale, W)
    spam = np.zeros(W, bool)
    spam[n_workers:] = True
    items, workers, scores = [], [], []
    for j in range(W):
        its = np.flatnonzero(rng.random(n_items) < coverage) if coverage < 1 else np.arange(n_items)
        sc = rng.standard_normal(its.size) if spam[j] else mu[its] + rng.standard_normal(its.size) / np.sqrt(tau[j])
        items.append(its)
        workers.append(np.full(its.size, j))
        scores.append(sc)
    return {"item": np.concatenate(items), "worker": np.concatenate(workers),
            "score": np.concatenate(scores), "mu": mu, "tau": tau, "spammer": spam}


_QC_TYPES = ("SYSTEM", "REPEAT", "BAD_REF", "REF")


def qc_links(system, segment, item_type, hit=None):
    """Items and quality-control links of a WMT ratings table for :func:`fit_rater_model`.

    ``system``, ``segment``, ``item_type`` (N,) (types SYSTEM, REPEAT, BAD_REF, REF) and
    optionally ``hit`` (N,). A SYSTEM judgement and its REPEAT rate one translation, so they
    share one item; a REF judgement rates the reference shown as a candidate (its own item, no
    constraint); a BAD_REF judgement rates a degraded copy, which is made afresh for every HIT,
    so each (HIT, system, segment) copy is its own item, constrained below the (system,
    segment) original, and an original may have several copies.

    Returns (item (N,) int64, labels (n_items,) str 'TYPE|system|segment[|hit]', degraded (P, 2)
    int64 (bad item, original item) pairs, is_system (n_items,) bool: the MT items, on which
    quality is evaluated). A degraded copy whose original was never rated in the table is left
    unconstrained (counted in the labels, not in ``degraded``)."""
    sy = np.asarray(system).astype(str)
    sg = np.asarray(segment).astype(str)
    ty = np.asarray(item_type).astype(str)
    if not (sy.shape == sg.shape == ty.shape) or sy.ndim != 1:
        raise AnalysisInputError("qc_links: system, segment and item_type must be 1-D arrays of one length")
    unknown = sorted(set(np.unique(ty).tolist()) - set(_QC_TYPES))
    if unknown:
        raise AnalysisInputError(f"qc_links: unknown item type(s) {', '.join(unknown[:3])}; expected {', '.join(_QC_TYPES)}")
    hs = np.asarray(hit).astype(str) if hit is not None else None
    base = [f"{a}|{b}" for a, b in zip(sy.tolist(), sg.tolist())]
    label = np.array([("SYSTEM|" + bs if t == "REPEAT" else f"{t}|{bs}")
                      + (f"|{hs[i]}" if hs is not None and t == "BAD_REF" else "")
                      for i, (t, bs) in enumerate(zip(ty.tolist(), base))])
    labels, item = np.unique(label, return_inverse=True)
    pos = {lab: i for i, lab in enumerate(labels.tolist())}
    pairs = set()
    for i in np.flatnonzero(ty == "BAD_REF"):
        o = pos.get("SYSTEM|" + base[i])
        if o is not None:
            pairs.add((int(item[i]), o))
    degraded = np.array(sorted(pairs), np.int64).reshape(-1, 2)
    is_system = np.char.startswith(labels.astype(str), "SYSTEM|")
    return item.astype(np.int64), labels, degraded, is_system


def critical_r(n: int, alpha: float = 0.05) -> float:
    """One-sided critical Pearson r for n i.i.d. normal pairs: r = t / sqrt(t^2 + n - 2),
    t the (1 - alpha) quantile of Student t with n - 2 dof (n = 70: 0.198, Mathur 2021 §3.5.5)."""
    from scipy.stats import t as tdist

    if n < 3:
        raise AnalysisInputError(f"critical_r: need at least 3 items (got {n})")
    t = float(tdist.ppf(1 - alpha, n - 2))
    return t / float(np.sqrt(t * t + n - 2))


def worker_correlations(item, worker, score, fit: RaterModelResult, items=None, min_common: int = 3):
    """Diagnostic matrix (Mathur 2021 §3.5.5): Pearson r between every pair of workers over the
    items both scored, plus the model estimate and the z-mean as two extra rows/columns; rows
    sorted by inferred precision (most precise first). ``items`` (optional bool mask over items)
    restricts to e.g. the MT items. Returns (labels (W + 2,) list: worker indices then 'model',
    'z-mean'; r (W + 2, W + 2) float64, NaN where fewer than ``min_common`` common items or a
    constant vector)."""
    item = np.asarray(item, dtype=np.int64)
    worker = np.asarray(worker, dtype=np.int64)
    s = np.asarray(score, dtype=np.float64)
    n_items, n_workers = fit.item_mean.shape[0], fit.worker_precision.shape[0]
    use = np.ones(n_items, bool) if items is None else np.asarray(items, bool)
    M = np.full((n_workers + 2, n_items), np.nan)
    M[worker, item] = s
    cnt = np.bincount(item, minlength=n_items)
    M[n_workers] = fit.item_mean
    with np.errstate(invalid="ignore", divide="ignore"):
        M[n_workers + 1] = np.bincount(item, s, n_items) / cnt
    M[:, ~use] = np.nan
    order = np.r_[np.argsort(-fit.worker_precision, kind="mergesort"), n_workers, n_workers + 1]
    M = M[order]
    k = M.shape[0]
    R = np.full((k, k), np.nan)
    ok = np.isfinite(M)
    for a in range(k):
        for b in range(a, k):
            both = ok[a] & ok[b]
            if both.sum() >= min_common:
                x, y = M[a, both], M[b, both]
                x, y = x - x.mean(), y - y.mean()
                den = np.sqrt((x * x).sum() * (y * y).sum())
                if den > 0:
                    R[a, b] = R[b, a] = (x * y).sum() / den
    labels = [int(i) for i in order[:-2]] + ["model", "z-mean"]
    return labels, R
