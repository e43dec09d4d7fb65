"""Quality control of raw DA crowd ratings (Mathur 2021 §3.3.1; Graham et al. 2017, NLE §4.1).

Works on a :class:`~mtscore.analysis.crowd.Ratings` table and reproduces the DA scripts of
Graham et al. (``proc-hits``: ``concurrent-hits.R``, ``wrkr-times.R``, ``repeats.py``,
``quality-control.R``, ``filter-pval-paired.pl``) including their quirks when
``replicate_r=True`` (the default, so the released ``ad-corrected-hit-times.csv``,
``ad-wrkr-stats.csv`` and ``ad-trk-stats.csv`` are reproduced); ``replicate_r=False`` gives
the corrected computation. The quirks:

* an assignment sharing its accept time with another of the same worker is listed once per
  HIT sharing that time (so it weighs more in the hit count and the mean times), and a time
  shared by several events is processed once per event when counting open HITs;
* the longest run of identical scores runs on across the worker's HITs in file order;
* p-values are decided (p <= alpha) after R's 7-significant-digit printing;
* numbers handed between R and perl go through the printing and reading of each
  (:func:`r_format`, :func:`perl_atof`, :func:`r_read`), last bits included.

Per-HIT red flags (time and constant-sequence, Graham et al. 2017, NLE §4.1) are in :func:`hit_stats` whatever the mode.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .batches import Ratings
from .r_numbers import r_round, signif

__all__ = [
    "HitStats",
    "WorkerQC",
    "WorkerStats",
    "hit_rows",
    "hit_stats",
    "longest_run",
    "paired_t",
    "qc_workers",
    "worker_groups",
    "worker_stats",
]


def longest_run(score: np.ndarray) -> int:
    """Length of the longest run of identical consecutive values (0 for no values)."""
    s = np.asarray(score)
    if s.size == 0:
        return 0
    br = np.flatnonzero(np.r_[True, s[1:] != s[:-1], True])
    return int(np.diff(br).max())


@dataclass(frozen=True)
class HitStats:
    """One row per assignment (HIT done by a worker), in file order. Arrays of length H.

    worker, hit, assignment, status: str. work_seconds: float64. accept, submit: datetime64[s].
    concurrent: int64, HITs the worker had open at once. corrected_seconds: work_seconds /
    concurrent. longest_run: int64, longest run of identical scores inside this HIT.
    flag_time: corrected_seconds < min_seconds. flag_seq: longest_run > max_run.
    """

    worker: np.ndarray
    hit: np.ndarray
    assignment: np.ndarray
    status: np.ndarray
    work_seconds: np.ndarray
    accept: np.ndarray
    submit: np.ndarray
    concurrent: np.ndarray
    corrected_seconds: np.ndarray
    longest_run: np.ndarray
    flag_time: np.ndarray
    flag_seq: np.ndarray


def _assignment_rows(r: Ratings) -> tuple[np.ndarray, np.ndarray]:
    """First row index of every assignment (file order) and the assignment code of every row."""
    key = np.char.add(np.char.add(r.worker.astype(str), "\x00"), np.char.add(r.hit.astype(str), "\x00"))
    key = np.char.add(key, r.assignment.astype(str))
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[inv]


def _concurrency(accept: np.ndarray, submit: np.ndarray, replicate_r: bool) -> np.ndarray:
    """HITs open at once for each of one worker's assignments (``concurrent-hits.R``)."""
    n = accept.size
    if n == 1:
        return np.ones(1, np.int64)
    times = np.sort(np.concatenate([accept, submit]))
    if not replicate_r:
        times = np.unique(times)
    acc_open = np.zeros(n, np.int64)
    sub_open = np.zeros(n, np.int64)
    open_now = 0
    for t in times:
        acc = accept == t
        sub = submit == t
        open_now += int(acc.sum())
        sub_open[sub] = open_now
        acc_open[acc] = open_now
        open_now -= int(sub.sum())
    return np.maximum(acc_open, sub_open)


def hit_stats(r: Ratings, min_seconds: float = 300.0, max_run: int = 8, replicate_r: bool = True) -> HitStats:
    """Per-assignment times corrected for concurrent HITs, and the per-HIT red flags of Graham et al. 2017, NLE §4.1."""
    first, code = _assignment_rows(r)
    h = first.size
    conc = np.ones(h, np.int64)
    acc, sub = r.accept[first], r.submit[first]
    wk = r.worker[first]
    for w in np.unique(wk):
        m = np.flatnonzero(wk == w)
        conc[m] = _concurrency(acc[m], sub[m], replicate_r)
    runs = np.zeros(h, np.int64)
    order = np.argsort(code, kind="stable")
    bounds = np.searchsorted(code[order], np.arange(h + 1))
    for j in range(h):
        runs[j] = longest_run(r.score[order[bounds[j]:bounds[j + 1]]])
    secs = r.time[first].astype(np.float64)
    corrected = secs / conc
    return HitStats(worker=wk, hit=r.hit[first], assignment=r.assignment[first], status=r.status[first],
                    work_seconds=secs, accept=acc, submit=sub, concurrent=conc, corrected_seconds=corrected,
                    longest_run=runs, flag_time=corrected < min_seconds, flag_seq=runs > max_run)


@dataclass(frozen=True)
class WorkerStats:
    """One row per worker (order of first appearance in the batches). Arrays of length W.

    worker: str. hit_count: int64. mean_bad_ref, mean_system, mean_ref: float64 raw means
    (NaN when the worker has no item of that type). min_hit_time, mean_hit_time: corrected
    seconds. mean_concurrent, max_concurrent: float64. max_const_run: int64. reject_rate:
    float64 (share of rejected assignments, 2 decimals). flag_scores, flag_time, flag_seq,
    flag_rej: bool (the red flags of Graham et al. 2017, NLE §4.1).
    """

    worker: np.ndarray
    hit_count: np.ndarray
    mean_bad_ref: np.ndarray
    mean_system: np.ndarray
    mean_ref: np.ndarray
    min_hit_time: np.ndarray
    mean_hit_time: np.ndarray
    mean_concurrent: np.ndarray
    max_concurrent: np.ndarray
    max_const_run: np.ndarray
    reject_rate: np.ndarray
    flag_scores: np.ndarray
    flag_time: np.ndarray
    flag_seq: np.ndarray
    flag_rej: np.ndarray


def hit_rows(hs: HitStats, m: np.ndarray, replicate_r: bool = True) -> np.ndarray:
    """Rows ``m`` (indices of one worker's assignments in ``hs``) as the scripts list them: with
    ``replicate_r`` an assignment is repeated once per assignment of the worker sharing its
    accept time (``concurrent-hits.R`` prints each shared time k times)."""
    if not replicate_r:
        return m
    acc = hs.accept[m]
    reps = np.array([int((acc == a).sum()) for a in acc])
    return np.repeat(m, reps)


def worker_stats(r: Ratings, hits: HitStats, adequacy: bool = True, min_ref: float = 90.0,
                 min_seconds: float = 300.0, max_run: int = 8, replicate_r: bool = True) -> WorkerStats:
    """Per-worker summary and red flags (``wrkr-times.R``; Graham et al. 2017, NLE §4.1) over all
    of the worker's ratings (rejected assignments included, as the scripts do)."""
    names, first = np.unique(r.worker, return_index=True)
    names = names[np.argsort(first, kind="stable")]
    cols: dict[str, list] = {k: [] for k in WorkerStats.__dataclass_fields__}
    for w in names:
        sel = r.worker == w
        s, t = r.score[sel], r.item_type[sel]
        with np.errstate(invalid="ignore"):
            means = [float(s[t == typ].mean()) if (t == typ).any() else np.nan for typ in ("BAD_REF", "SYSTEM", "REF")]
        hm = hit_rows(hits, np.flatnonzero(hits.worker == w), replicate_r)
        corr = hits.corrected_seconds[hm]
        run = longest_run(s) if replicate_r else int(hits.longest_run[hits.worker == w].max())
        rej = float(r_round(np.mean(hits.status[hm] == "Rejected"), 2))
        mb, ms, mr = means
        cols["worker"].append(w)
        cols["hit_count"].append(hm.size)
        cols["mean_bad_ref"].append(mb)
        cols["mean_system"].append(ms)
        cols["mean_ref"].append(mr)
        cols["min_hit_time"].append(corr.min())
        cols["mean_hit_time"].append(corr.mean())
        cols["mean_concurrent"].append(hits.concurrent[hm].mean())
        cols["max_concurrent"].append(hits.concurrent[hm].max())
        cols["max_const_run"].append(run)
        cols["reject_rate"].append(rej)
        # a missing mean compares False in R too (NA in `if` would stop R; here it flags nothing)
        cols["flag_scores"].append(bool(mb >= ms or ms >= mr or (adequacy and mr < min_ref)))
        cols["flag_time"].append(bool(corr.min() < min_seconds))
        cols["flag_seq"].append(run > max_run)
        cols["flag_rej"].append(rej > 0)
    kinds = {"worker": str, "hit_count": np.int64, "max_const_run": np.int64}
    kinds.update({k: bool for k in ("flag_scores", "flag_time", "flag_seq", "flag_rej")})
    return WorkerStats(**{k: np.array(v, dtype=kinds.get(k, np.float64)) for k, v in cols.items()})


@dataclass(frozen=True)
class WorkerQC:
    """The rater test per worker (Mathur 2021 §3.3.1, as ``quality-control.R`` runs it). Arrays of length W.

    worker: str. n_pairs: int64 BAD_REF/original pairs. t, p: float64 one-sided paired t-test
    that degraded items score lower than their originals (NaN when untestable: fewer than two
    pairs, or differences that are all equal). n_repeats, p_repeat: the repeat pairs and the
    two-sided paired t-test of first vs repeat scores (Assumption B; NaN when untestable).
    status: 'good' (p <= alpha), 'bad' (p > alpha, or p NaN after a test that ran),
    'untestable' (R's t.test stops: the worker is missing from ``ad-trk-stats`` and dropped),
    'rejected' (an assignment was rejected: removed before the test, whose numbers are still
    given), 'repeats' (good but the repeat test failed, only with ``use_repeats``).
    passed: status == 'good'.
    """

    worker: np.ndarray
    n_pairs: np.ndarray
    t: np.ndarray
    p: np.ndarray
    n_repeats: np.ndarray
    p_repeat: np.ndarray
    status: np.ndarray

    @property
    def passed(self) -> np.ndarray:
        return self.status == "good"


def _pairs(r: Ratings, typ: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per worker the (QC item score, original SYSTEM score) pairs of one type; the original
    is the SYSTEM item of the same worker, HIT, system and segment (the last one, as
    ``repeats.py`` keeps the last)."""
    orig: dict[tuple, float] = {}
    qc: dict[tuple, float] = {}
    for w, h, sy, sg, t, s in zip(r.worker.tolist(), r.hit.tolist(), r.system.tolist(), r.segment.tolist(),
                                  r.item_type.tolist(), r.score.tolist()):
        if t == "SYSTEM":
            orig[(w, h, sy, sg)] = s
        elif t == typ:
            qc[(w, h, sy, sg)] = s
    out: dict[str, tuple[list[float], list[float]]] = {}
    for k, s in qc.items():
        if k in orig:
            a, b = out.setdefault(k[0], ([], []))
            a.append(s)
            b.append(orig[k])
    return {w: (np.asarray(a), np.asarray(b)) for w, (a, b) in out.items()}


def paired_t(x: np.ndarray, y: np.ndarray, alternative: str = "less") -> tuple[float, float, bool]:
    """R ``t.test(x, y, paired=TRUE)``: (t, p, ran). ``ran`` is False where R stops with an
    error (fewer than 2 pairs, or "data are essentially constant")."""
    from scipy.special import stdtr  # the t CDF (what scipy.stats.t.cdf calls), a light import

    d = np.asarray(x, np.float64) - np.asarray(y, np.float64)
    n = d.size
    if n < 2:
        return np.nan, np.nan, False
    mx = d.mean()
    se = np.sqrt(d.var(ddof=1) / n)
    if se < 10 * np.finfo(float).eps * abs(mx):
        return np.nan, np.nan, False
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mx / se
    if alternative == "less":
        p = float(stdtr(n - 1, t))
    elif alternative == "greater":
        p = float(stdtr(n - 1, -t))
    else:
        p = float(2 * stdtr(n - 1, -abs(t)))
    return float(t), p, True


def qc_workers(r: Ratings, wstats: WorkerStats, alpha: float = 0.05, use_repeats: bool = False,
               drop_rejected: bool = True, replicate_r: bool = True) -> WorkerQC:
    """The degraded-vs-original paired t-test per worker, pooled over the worker's HITs.

    With ``drop_rejected`` a worker with any rejected assignment is removed first
    (``filter-rejected.pl``). ``replicate_r`` decides on p rounded to 7 significant digits, as
    the scripts do after printing. ``use_repeats`` also drops good workers whose repeat scores
    differ significantly (two-sided, ``alpha``)."""
    rejected = set(wstats.worker[wstats.reject_rate > 0].tolist()) if drop_rejected else set()
    # pairs never cross workers, so a rejected worker's test is computed too (for information)
    bad_pairs = _pairs(r, "BAD_REF")
    rep_pairs = _pairs(r, "REPEAT")
    cols: dict[str, list] = {k: [] for k in ("worker", "n_pairs", "t", "p", "n_repeats", "p_repeat", "status")}
    for w in wstats.worker.tolist():
        b, o = bad_pairs.get(w, (np.empty(0), np.empty(0)))
        t, p, ran = paired_t(b, o, "less")
        rb, ro = rep_pairs.get(w, (np.empty(0), np.empty(0)))
        _, prep, _ = paired_t(rb, ro, "two-sided")
        pd = float(signif(p)) if replicate_r else p
        if w in rejected:
            status = "rejected"
        elif not ran:
            status = "untestable"
        elif np.isfinite(pd) and pd <= alpha:
            status = "repeats" if (use_repeats and np.isfinite(prep) and prep < alpha) else "good"
        else:
            status = "bad"
        for k, v in zip(cols, (w, b.size, t, p, rb.size, prep, status)):
            cols[k].append(v)
    ints = {"n_pairs", "n_repeats"}
    return WorkerQC(**{k: np.array(v, dtype=str if k in ("worker", "status") else (np.int64 if k in ints else np.float64))
                       for k, v in cols.items()})


def worker_groups(qc: WorkerQC, hits: HitStats) -> np.ndarray:
    """The worker groups of Mathur 2021 §4.4.1, aligned with ``qc.worker`` (W,) str: ``bad``
    (an assignment's payment was rejected, status ``Rejected`` in ``hits``), ``good`` (paid and
    passed quality control: ``qc.passed``), ``moderate`` (paid but failed the significance
    tests, or could not be tested)."""
    rejected = np.isin(qc.worker, hits.worker[hits.status == "Rejected"])
    return np.where(rejected, "bad", np.where(qc.passed, "good", "moderate"))
