"""The evaluation protocol of the Bayesian rater model (Mathur 2021, thesis §3.5).

The model (:mod:`.rater_model`) is compared with three baselines (:func:`baseline_estimates`):
``raw-mean`` (the mean of raw scores), ``z-mean`` (the mean of every worker's z-scores) and
``DA`` (the mean of the z-scores of the workers who pass quality control). Each estimate is
scored by its Pearson r with a "ground truth" over the MT items only (QC items excluded).

* :func:`cohort_sweep` - §3.5.1-2: r against the number of workers per item, 1 to 20.
* :func:`adversarial_sweep` - §3.5.3: good workers plus N random workers (i.i.d. N(0, 1) z-scores).
* :func:`spammer_sweep` - §3.5.4: rank workers (the model by inferred precision, the baselines
  by each worker's correlation with the mean of all workers), keep the top k, k = all .. 2.
* :func:`worker_residuals` - §3.5.2: each worker's errors against an estimate (histogram / QQ);
  :func:`worker_r` - each worker's r with the truth (Fig. 3.1) or with the mean of all workers.

Conventions: judgements are parallel arrays ``item`` (N,) int codes 0..n_items-1, ``worker``
(N,) int codes 0..n_workers-1 and ``score`` (N,) float64 (raw scores; z-scores are taken per
worker over all of its judgements, :func:`.scores.standardize`, as WMT does over a worker's
HIT); ``truth`` (n_items,) float64, NaN for the items not evaluated (QC items, references).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..correlation import pearson
from ..errors import AnalysisInputError
from .rater_model import fit_rater_model
from .scores import standardize

__all__ = [
    "METHODS",
    "SpammerSweep",
    "Sweep",
    "WorkerResiduals",
    "adversarial_sweep",
    "baseline_estimates",
    "cohort_sweep",
    "normal_qq",
    "spammer_sweep",
    "worker_r",
    "worker_residuals",
]

METHODS = ("raw-mean", "z-mean", "DA", "model")


@dataclass(frozen=True, eq=False)  # holds arrays
class Sweep:
    """Pearson r of each method's estimate with the truth along a sweep.

    ``x`` (S,) int64 the swept value (``x_name``: workers per item, random workers, or top k);
    ``methods`` the M method names; ``r`` (M, S, R) float64, one column per repeat (R = 1 for a
    deterministic sweep), NaN where fewer than 3 evaluated items had an estimate."""

    x_name: str
    x: np.ndarray
    methods: tuple[str, ...]
    r: np.ndarray

    def mean(self) -> np.ndarray:
        """(M, S) float64: r averaged over the repeats."""
        return _nan_reduce(np.nanmean, self.r)

    def sd(self) -> np.ndarray:
        """(M, S) float64: the standard deviation of r over the repeats (ddof 0)."""
        return _nan_reduce(np.nanstd, self.r)

    def of(self, method: str) -> np.ndarray:
        """(S,) float64: the mean r of one method."""
        if method not in self.methods:
            raise AnalysisInputError(f"Sweep: no method {method!r} (have {', '.join(self.methods)})")
        return self.mean()[self.methods.index(method)]

    def rows(self) -> list[tuple[str, int, float, float]]:
        """The tidy table: (method, x, mean r, sd of r) per method and swept value."""
        m, s = self.mean(), self.sd()
        return [(name, int(x), float(m[i, j]), float(s[i, j]))
                for i, name in enumerate(self.methods) for j, x in enumerate(self.x.tolist())]


def _nan_reduce(fn, r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        out = np.full(r.shape[:2], np.nan)
        ok = np.isfinite(r).any(axis=2)
        out[ok] = fn(r[ok], axis=-1)
        return out


@dataclass(frozen=True, eq=False)  # holds arrays
class SpammerSweep:
    """:func:`spammer_sweep`: ``sweep`` (x = k, the workers kept per unit) and, per method,
    ``worker_score`` (n_workers,) float64 the ranking key (the model: inferred precision; a
    baseline: the worker's r with the mean of all workers; NaN for a worker without judgements)."""

    sweep: Sweep
    worker_score: dict[str, np.ndarray]

    def order(self, method: str) -> np.ndarray:
        """Worker codes (n_workers,) int64, best first by ``method``'s key (ties: lower code
        first; NaN last)."""
        key = self.worker_score[method]
        return np.lexsort((np.arange(key.size), np.where(np.isnan(key), np.inf, -key)))


@dataclass(frozen=True, eq=False)  # holds arrays
class WorkerResiduals:
    """:func:`worker_residuals`: ``residual`` (N,) float64 each judgement's z-score minus the
    estimate of its item; per worker with judgements (``worker`` (W,) int64 codes): ``n`` (W,)
    int64, ``mean`` (W,), ``sd`` (W,) (ddof 1; NaN below 2 judgements) and ``precision`` (W,)
    1 / sd^2, all float64."""

    residual: np.ndarray
    worker: np.ndarray
    n: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    precision: np.ndarray

    def of(self, worker: int, judgement_worker) -> np.ndarray:
        """The residuals of one worker, given the judgements' ``worker`` (N,) codes."""
        return self.residual[np.asarray(judgement_worker) == worker]


def _judgements(fn: str, item, worker, score, n_items: int | None = None):
    """Validated (item (N,) int64, worker (N,) int64, score (N,) float64, n_items)."""
    it = np.asarray(item)
    wk = np.asarray(worker)
    s = np.asarray(score, dtype=np.float64)
    if not (it.shape == wk.shape == s.shape) or s.ndim != 1 or s.size == 0:
        raise AnalysisInputError(f"{fn}: item, worker and score must be non-empty 1-D arrays of one length "
                                 f"(got {it.shape}, {wk.shape}, {s.shape})")
    for name, a in (("item", it), ("worker", wk)):
        if not np.issubdtype(a.dtype, np.integer) or a.min() < 0:
            raise AnalysisInputError(f"{fn}: {name} must be non-negative integer codes")
    if not np.isfinite(s).all():
        raise AnalysisInputError(f"{fn}: score[{int(np.flatnonzero(~np.isfinite(s))[0])}] is not finite")
    n = int(it.max()) + 1 if n_items is None else n_items
    if it.max() >= n:
        raise AnalysisInputError(f"{fn}: item code {int(it.max())} outside 0..{n - 1} (truth has {n} items)")
    return it.astype(np.int64), wk.astype(np.int64), s, n


def _truth(fn: str, truth) -> np.ndarray:
    t = np.asarray(truth, dtype=np.float64)
    if t.ndim != 1 or np.isfinite(t).sum() < 3:
        raise AnalysisInputError(f"{fn}: truth must be (n_items,) with at least 3 finite (evaluated) items")
    return t


def _item_mean(item: np.ndarray, values: np.ndarray, n_items: int, use: np.ndarray | None = None) -> np.ndarray:
    """(n_items,) float64 mean of ``values`` per item over rows ``use``; NaN where none."""
    ok = np.isfinite(values) if use is None else use & np.isfinite(values)
    cnt = np.bincount(item[ok], minlength=n_items)
    tot = np.bincount(item[ok], values[ok], minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def baseline_estimates(item, worker, score, qc_pass=None, n_items: int | None = None,
                       z=None) -> dict[str, np.ndarray]:
    """The thesis' baselines (§3.5): per item (n_items,) float64, NaN where no judgement.

    ``raw-mean``: mean raw score; ``z-mean``: mean z-score of all workers; ``DA`` (only when
    ``qc_pass`` (n_workers,) bool is given): mean z-score of the QC-passing workers. ``z``
    (N,): z-scores to use (default: :func:`.scores.standardize` over the given judgements; a
    worker with constant scores has no z and enters neither z-based mean)."""
    it, wk, s, n = _judgements("baseline_estimates", item, worker, score, n_items)
    zz = standardize(wk, s)[0] if z is None else np.asarray(z, dtype=np.float64)
    if zz.shape != s.shape:
        raise AnalysisInputError(f"baseline_estimates: z has shape {zz.shape}, judgements {s.shape}")
    out = {"raw-mean": _item_mean(it, s, n), "z-mean": _item_mean(it, zz, n)}
    if qc_pass is not None:
        qp = np.asarray(qc_pass, dtype=bool)
        if qp.ndim != 1 or qp.size <= wk.max():
            raise AnalysisInputError(f"baseline_estimates: qc_pass must be (n_workers,) bool covering worker "
                                     f"codes 0..{int(wk.max())} (got shape {qp.shape})")
        out["DA"] = _item_mean(it, zz, n, qp[wk])
    return out


def _estimates(methods: Sequence[str], it, wk, s, z, n_items: int, qc_pass, fit_kw) -> np.ndarray:
    """(M, n_items) estimates of ``methods`` from the given judgements."""
    base = baseline_estimates(it, wk, s, qc_pass, n_items, z=z)
    rows = []
    for m in methods:
        if m == "model":
            ok = np.isfinite(z)
            est = fit_rater_model(it[ok], wk[ok], z[ok], n_items=n_items, n_workers=int(wk.max()) + 1,
                                  **fit_kw).item_mean.copy()
            est[np.bincount(it[ok], minlength=n_items) == 0] = np.nan
            rows.append(est)
        else:
            rows.append(base[m])
    return np.vstack(rows)


def _r(truth: np.ndarray, est: np.ndarray) -> np.ndarray:
    """(M,) Pearson r over the evaluated items (finite truth) that have an estimate."""
    ev = np.isfinite(truth)
    e = est[:, ev]
    r = np.atleast_1d(pearson(truth[ev], e))
    r[np.isfinite(e).sum(axis=1) < 3] = np.nan
    return r


def _check_methods(fn: str, methods: Sequence[str], allowed: Sequence[str], qc_pass) -> tuple[str, ...]:
    bad = [m for m in methods if m not in allowed]
    if bad or not methods:
        raise AnalysisInputError(f"{fn}: unknown method(s) {', '.join(bad) or '(none given)'}; "
                                 f"choose from {', '.join(allowed)}")
    if "DA" in methods and qc_pass is None:
        raise AnalysisInputError(f"{fn}: method DA needs qc_pass (which workers pass quality control)")
    return tuple(methods)


def _pairs(unit: np.ndarray, worker: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (unit, worker) pairs (P, 2) and the pair of each judgement (N,)."""
    pairs, inv = np.unique(np.stack([unit, worker], axis=1), axis=0, return_inverse=True)
    return pairs, np.asarray(inv).ravel()


def _rank_in_unit(pair_unit: np.ndarray, key: np.ndarray) -> np.ndarray:
    """(P,) int64 rank (0 = first) of each pair within its unit by ascending ``key`` (ties:
    pair order)."""
    order = np.lexsort((np.arange(key.size), key, pair_unit))
    u = pair_unit[order]
    rank = np.empty(key.size, np.int64)
    rank[order] = np.arange(key.size) - np.searchsorted(u, u, side="left")
    return rank


def cohort_sweep(item, worker, score, truth, sizes: Iterable[int] = range(1, 21), repeats: int = 10,
                 seed: int = 0, methods: Sequence[str] = ("raw-mean", "z-mean", "model"), qc_pass=None,
                 group=None, fit_kw: Mapping | None = None) -> Sweep:
    """Thesis §3.5: r of each method against the number of workers per item.

    Per repeat, the workers of each unit (an item, or with ``group`` (N,) int codes, e.g. the
    HIT, the unit whose workers are drawn together) are put in a random order and the cohort of
    size n is the first n of them (so cohorts are nested as workers are added); each method's
    estimate from the cohort's judgements is correlated with ``truth`` over the evaluated items.
    Units with fewer workers than n use all they have. The thesis does not say in which order
    workers are added nor how many random orders it averaged over; we average r over
    ``repeats`` random orders (``seed``). An item with no estimate (DA: no QC-passing worker in
    the cohort) is left out of that r, so DA's r at small n is over fewer items. z-scores come
    from each worker's full set of judgements (its HIT), not from the cohort's. ``methods`` from :data:`METHODS` (DA needs
    ``qc_pass`` (n_workers,) bool); ``fit_kw`` goes to :func:`.rater_model.fit_rater_model`
    (e.g. ``degraded`` QC links, ``prior_scale``). Returns a :class:`Sweep` (x: workers per unit)."""
    t = _truth("cohort_sweep", truth)
    it, wk, s, n = _judgements("cohort_sweep", item, worker, score, t.shape[0])
    meth = _check_methods("cohort_sweep", methods, METHODS, qc_pass)
    xs = np.asarray(list(sizes), dtype=np.int64)
    if xs.size == 0 or xs.min() < 1 or repeats < 1:
        raise AnalysisInputError("cohort_sweep: sizes must be >= 1 and repeats >= 1")
    unit = it if group is None else np.asarray(group, dtype=np.int64)
    if unit.shape != it.shape:
        raise AnalysisInputError(f"cohort_sweep: group has shape {unit.shape}, judgements {it.shape}")
    z = standardize(wk, s)[0]
    pairs, inv = _pairs(unit, wk)
    rng = np.random.default_rng(seed)
    r = np.full((len(meth), xs.size, repeats), np.nan)
    for rep in range(repeats):
        rank = _rank_in_unit(pairs[:, 0], rng.random((pairs.shape[0],)))[inv]
        for j, size in enumerate(xs.tolist()):
            sel = rank < size
            r[:, j, rep] = _r(t, _estimates(meth, it[sel], wk[sel], s[sel], z[sel], n, qc_pass, dict(fit_kw or {})))
    return Sweep("workers per item" if group is None else "workers per group", xs, meth, r)


def adversarial_sweep(item, worker, z, truth, n_random: Iterable[int] = range(0, 21), repeats: int = 10,
                      seed: int = 0, fit_kw: Mapping | None = None) -> Sweep:
    """Thesis §3.5.3: the given (good) workers' z-scores ``z`` plus N random workers, each
    scoring every item the good workers scored with i.i.d. N(0, 1) z-scores, for N in
    ``n_random``; r of ``z-mean`` and ``model`` with ``truth``. The thesis takes 5 QC-passing
    workers with r >= 0.8 per HIT (the caller picks them). Per repeat one set of random workers
    is drawn and the first N of them are added (nested); r is kept per repeat. Returns a
    :class:`Sweep` (x: random workers)."""
    t = _truth("adversarial_sweep", truth)
    it, wk, zz, n = _judgements("adversarial_sweep", item, worker, z, t.shape[0])
    xs = np.asarray(list(n_random), dtype=np.int64)
    if xs.size == 0 or xs.min() < 0 or repeats < 1:
        raise AnalysisInputError("adversarial_sweep: n_random must be >= 0 and repeats >= 1")
    items = np.unique(it)
    w0 = int(wk.max()) + 1
    rng = np.random.default_rng(seed)
    meth = ("z-mean", "model")
    r = np.full((2, xs.size, repeats), np.nan)
    top = int(xs.max())
    for rep in range(repeats):
        noise = rng.standard_normal((top, items.size))
        for j, k in enumerate(xs.tolist()):
            a_it = np.r_[it, np.tile(items, k)]
            a_wk = np.r_[wk, np.repeat(np.arange(w0, w0 + k), items.size)]
            a_z = np.r_[zz, noise[:k].ravel()]
            r[:, j, rep] = _r(t, _estimates(meth, a_it, a_wk, a_z, a_z, n, None, dict(fit_kw or {})))
    return Sweep("random workers", xs, meth, r)


def worker_r(item, worker, score, reference, min_items: int = 3, n_workers: int | None = None) -> np.ndarray:
    """(n_workers,) float64 Pearson r of each worker's scores with ``reference`` (n_items,)
    over the items it scored where the reference is finite; NaN for a worker with fewer than
    ``min_items`` such items or constant scores. With the ground truth as reference this is the
    thesis' worker-reliability analysis (Fig. 3.1: r of QC-passing against failing workers;
    the adversarial sweep's good workers have r >= 0.8); :func:`spammer_sweep` ranks by the r
    with the mean of all workers. ``n_workers``: the output length (default: largest code + 1)."""
    ref = np.asarray(reference, dtype=np.float64)
    it, wk, s, _ = _judgements("worker_r", item, worker, score, ref.shape[0])
    ok = np.isfinite(ref[it])
    out = np.full(int(wk.max()) + 1 if n_workers is None else n_workers, np.nan)
    for w in np.unique(wk[ok]).tolist():
        m = ok & (wk == w)
        if m.sum() >= min_items:
            out[w] = float(pearson(ref[it[m]], s[m]))
    return out


def spammer_sweep(item, worker, score, truth, ks: Iterable[int] | None = None, group=None,
                  fit_kw: Mapping | None = None) -> SpammerSweep:
    """Thesis §3.5.4: removing the least reliable workers.

    ``model``: fit on all workers, rank each unit's workers (a unit: the whole set, or each
    ``group`` (N,) int codes, e.g. HIT) by inferred precision E[tau], refit on the top k.
    ``raw-mean`` / ``z-mean`` (the correlation-ranked baselines): rank by the r of the worker's
    raw / z scores with the raw / z mean of all workers, then average the top k's raw / z
    scores. For k in ``ks`` (default: the most workers of a unit down to 2), r of each estimate
    with ``truth``. Returns a :class:`SpammerSweep` (the r per k and each method's worker
    ranking key)."""
    t = _truth("spammer_sweep", truth)
    it, wk, s, n = _judgements("spammer_sweep", item, worker, score, t.shape[0])
    fkw = dict(fit_kw or {})
    unit = np.zeros_like(it) if group is None else np.asarray(group, dtype=np.int64)
    if unit.shape != it.shape:
        raise AnalysisInputError(f"spammer_sweep: group has shape {unit.shape}, judgements {it.shape}")
    z = standardize(wk, s)[0]
    W = int(wk.max()) + 1
    ok = np.isfinite(z)
    first = fit_rater_model(it[ok], wk[ok], z[ok], n_items=n, n_workers=W, **fkw)
    prec = np.where(np.bincount(wk[ok], minlength=W) > 0, first.worker_precision, np.nan)
    # the r with the mean of all workers, each worker itself included ("the mean of all 20")
    keys = {"model": prec, "raw-mean": worker_r(it, wk, s, _item_mean(it, s, n), n_workers=W),
            "z-mean": worker_r(it[ok], wk[ok], z[ok], _item_mean(it, z, n), n_workers=W)}
    pairs, inv = _pairs(unit, wk)
    most = int(np.bincount(pairs[:, 0]).max())
    xs = np.asarray(list(range(most, 1, -1)) if ks is None else list(ks), dtype=np.int64)
    if xs.size == 0 or xs.min() < 1:
        raise AnalysisInputError("spammer_sweep: ks must be >= 1")
    meth = ("model", "raw-mean", "z-mean")
    r = np.full((3, xs.size, 1), np.nan)
    for i, m in enumerate(meth):
        kw = keys[m][pairs[:, 1]]
        rank = _rank_in_unit(pairs[:, 0], np.where(np.isnan(kw), np.inf, -kw))[inv]
        for j, k in enumerate(xs.tolist()):
            sel = rank < k
            est = _estimates((m,), it[sel], wk[sel], s[sel], z[sel], n, None, fkw)
            r[i, j, 0] = _r(t, est)[0]
    return SpammerSweep(Sweep("workers kept", xs, meth, r), keys)


def worker_residuals(item, worker, z, estimate) -> WorkerResiduals:
    """Thesis §3.5.2 residual diagnostics: each judgement's error ``z - estimate[item]`` against
    an estimate (n_items,) (the model's item means, or the ground truth) and each worker's
    error mean, SD and precision; the thesis finds the errors roughly normal, mean about 0,
    with a worker-dependent variance (pass them to :func:`normal_qq` for the QQ plot)."""
    est = np.asarray(estimate, dtype=np.float64)
    it, wk, zz, _ = _judgements("worker_residuals", item, worker, z, est.shape[0])
    res = zz - est[it]
    ws = np.unique(wk[np.isfinite(res)])
    n = np.array([int((np.isfinite(res) & (wk == w)).sum()) for w in ws.tolist()], np.int64)
    mean = np.array([float(np.nanmean(res[wk == w])) for w in ws.tolist()])
    sd = np.array([float(np.nanstd(res[wk == w], ddof=1)) if c > 1 else np.nan for w, c in zip(ws.tolist(), n)])
    with np.errstate(divide="ignore"):
        return WorkerResiduals(res, ws.astype(np.int64), n, mean, sd, 1.0 / sd ** 2)


def normal_qq(values) -> tuple[np.ndarray, np.ndarray]:
    """QQ points against the standard normal: (theoretical quantiles Phi^-1((i - 0.5) / n),
    the sorted finite ``values``), each (n,) float64."""
    from scipy.special import ndtri

    v = np.sort(np.asarray(values, dtype=np.float64).ravel())
    v = v[np.isfinite(v)]
    return ndtri((np.arange(1, v.size + 1) - 0.5) / max(v.size, 1)), v
