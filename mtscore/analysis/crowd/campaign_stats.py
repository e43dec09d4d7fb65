"""Worker and HIT statistics of a crowd campaign (Graham et al. 2017, NLE §4, Tables 1-2).

:func:`campaign_stats` summarises any campaign's raw results (a :class:`~.batches.Ratings`
table, as :func:`~.batches.read_mturk_batches` or :func:`~.batches.read_appraise_export`
return it) in the terms the NLE paper reports: HITs submitted and approved, workers in all and
workers passing quality control under Assumption A alone and under Assumptions A and B, the
share of assessments kept, and the seconds spent per assessment.

* Assumption A: a consistent worker scores degraded (BAD_REF) items significantly lower than
  their originals: the one-sided paired t-test per worker of :func:`.qc.qc_workers` (p <= alpha).
* Assumption B: a consistent worker's two scores of an exactly repeated item do not differ
  significantly: the two-sided paired t-test of first vs repeat scores (a worker passing A is
  dropped when p < alpha), ``qc_workers(..., use_repeats=True)``.

A "HIT" is one assignment (one worker's copy of a HIT), as the NLE paper counts them. Workers
with a rejected assignment are removed before the tests (``drop_rejected``) and so never pass.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError
from .batches import ITEM_TYPES, Ratings
from .qc import WorkerQC, hit_stats, qc_workers, worker_stats

__all__ = ["CampaignStats", "campaign_stats"]


@dataclass(frozen=True)
class CampaignStats:
    """Counts (int) and times (float, seconds) of one campaign; NaN times when nothing was submitted.

    hits_submitted: assignments read (left-out incomplete ones are in ``Ratings.skipped``, not here).
    hits_rejected: assignments whose platform status is ``Rejected`` (payment refused).
    hits_approved_a / hits_approved_ab: assignments of the workers passing quality control
    under Assumption A alone / under A and B (the HITs whose scores are used; the NLE's
    "approved" HITs, not the platform's ``Approved`` payment status).
    workers_total: distinct workers. workers_rejected: workers with a rejected assignment.
    workers_tested: workers whose Assumption-A test could run (at least two degraded pairs with
    differences that are not all equal, and no rejected assignment).
    workers_passing_a / workers_passing_ab: workers passing A alone / A and B.
    assessments_total: judgements of the counted item types (``item_types``).
    assessments_kept_a / assessments_kept_ab: those of workers passing A / A and B.
    share_kept_a / share_kept_ab: kept / total (NaN for an empty campaign).
    seconds_median / seconds_mean: median and mean over assignments of the platform's work
    seconds (``WorkTimeInSeconds``) divided by the assignment's number of judgements (all types).
    corrected_seconds_median / corrected_seconds_mean: the same with the work seconds first
    divided by the number of HITs the worker had open at once (the concurrency correction of
    the red-flag time check).
    """

    hits_submitted: int
    hits_rejected: int
    hits_approved_a: int
    hits_approved_ab: int
    workers_total: int
    workers_rejected: int
    workers_tested: int
    workers_passing_a: int
    workers_passing_ab: int
    assessments_total: int
    assessments_kept_a: int
    assessments_kept_ab: int
    share_kept_a: float
    share_kept_ab: float
    seconds_median: float
    seconds_mean: float
    corrected_seconds_median: float
    corrected_seconds_mean: float

    def as_dict(self) -> dict[str, float | int]:
        """The fields by name, in declaration order (for JSON / a status page)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _empty() -> CampaignStats:
    nan = float("nan")
    return CampaignStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, nan, nan, nan, nan, nan, nan)


def _assignment_sizes(r: Ratings) -> np.ndarray:
    """Judgements per assignment, assignments in order of first appearance (the order of
    :func:`.qc.hit_stats`)."""
    key = np.char.add(np.char.add(r.worker.astype(str), "\x00"), np.char.add(r.hit.astype(str), "\x00"))
    key = np.char.add(key, r.assignment.astype(str))
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return counts[np.argsort(first, kind="stable")]


def _passing(qc: WorkerQC) -> set[str]:
    return set(qc.worker[qc.passed].tolist())


def campaign_stats(ratings: Ratings, alpha: float = 0.05, item_types: Sequence[str] | None = None,
                   drop_rejected: bool = True, replicate_r: bool = True) -> CampaignStats:
    """Worker and HIT statistics of a campaign's raw results (Graham et al. 2017, NLE §4).

    ``ratings``: every judgement of the campaign (all item types, rejected assignments
    included), N rows. ``alpha``: the significance level of both tests. ``item_types``: the
    types counted as assessments (default: all of :data:`~.batches.ITEM_TYPES`; e.g.
    ``("SYSTEM", "REPEAT")`` for the judgements that enter the scores). ``drop_rejected`` and
    ``replicate_r`` are those of :func:`.qc.qc_workers` (the release's decisions by default).
    An empty table gives zero counts and NaN shares and times.
    """
    types = tuple(ITEM_TYPES if item_types is None else item_types)
    unknown = [t for t in types if t not in ITEM_TYPES]
    if unknown:
        raise AnalysisInputError(f"item_types: unknown item type {unknown[0]!r}; expected some of {', '.join(ITEM_TYPES)}")
    if len(ratings) == 0:
        return _empty()
    hs = hit_stats(ratings, replicate_r=replicate_r)
    ws = worker_stats(ratings, hs, replicate_r=replicate_r)
    qa = qc_workers(ratings, ws, alpha=alpha, drop_rejected=drop_rejected, replicate_r=replicate_r)
    qab = qc_workers(ratings, ws, alpha=alpha, use_repeats=True, drop_rejected=drop_rejected, replicate_r=replicate_r)
    pass_a, pass_ab = _passing(qa), _passing(qab)
    hit_a = np.isin(hs.worker, list(pass_a))
    hit_ab = np.isin(hs.worker, list(pass_ab))
    counted = np.isin(ratings.item_type, types)
    total = int(counted.sum())
    kept_a = int((counted & np.isin(ratings.worker, list(pass_a))).sum())
    kept_ab = int((counted & np.isin(ratings.worker, list(pass_ab))).sum())
    sizes = _assignment_sizes(ratings)
    per_item = hs.work_seconds / sizes
    corrected = hs.corrected_seconds / sizes
    share_a = kept_a / total if total else float("nan")
    share_ab = kept_ab / total if total else float("nan")
    return CampaignStats(
        hits_submitted=int(hs.worker.size),
        hits_rejected=int((hs.status == "Rejected").sum()),
        hits_approved_a=int(hit_a.sum()),
        hits_approved_ab=int(hit_ab.sum()),
        workers_total=int(ws.worker.size),
        workers_rejected=len(set(hs.worker[hs.status == "Rejected"].tolist())),
        workers_tested=int(np.isin(qa.status, ("good", "bad")).sum()),
        workers_passing_a=len(pass_a),
        workers_passing_ab=len(pass_ab),
        assessments_total=total,
        assessments_kept_a=kept_a,
        assessments_kept_ab=kept_ab,
        share_kept_a=float(share_a),
        share_kept_ab=float(share_ab),
        seconds_median=float(np.median(per_item)),
        seconds_mean=float(per_item.mean()),
        corrected_seconds_median=float(np.median(corrected)),
        corrected_seconds_mean=float(corrected.mean()),
    )
