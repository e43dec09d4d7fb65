"""The live summary of a campaign (the admin page and ``mtscore human campaign-status``): progress
and each annotator's quality control as soon as enough control pairs are rated, and whether the
campaign is closed.

Per annotator, over the ratings stored so far:

* the rater test of ``mtscore human da-batches`` (Graham et al. 2017, NLE §4.1; Mathur 2021
  §3.3.1): the one-sided paired t-test that degraded items (BAD_REF) score lower than their
  originals (the SYSTEM item of the same HIT, system and segment), with
  :func:`mtscore.analysis.crowd.qc.paired_t`, decided as ``qc_workers`` does (p rounded to 7
  significant digits, p <= alpha passes; p NaN, as for all-zero differences, fails).
  ``waiting`` until ``min_pairs`` pairs are rated (both items of a pair); ``untestable`` when
  R's ``t.test`` would stop ("data are essentially constant": equal non-zero differences), as
  da-batches, which then drops the worker;
* repeat consistency: the mean absolute difference of the REPEAT pairs (repeat vs original);
* the median screen time per item in seconds (display to stored rating, measured by the server: an
  item is displayed by the redirect that answers the previous rating, so a break taken after a
  rating counts towards the next item, as it does when the page is left open).

A campaign is closed by :func:`close_campaign` (the ``closed_ms`` meta key): the server then
refuses every rating.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ...analysis.crowd.hits import HIT_SIZE
from ...analysis.crowd.qc import paired_t
from ...analysis.crowd.r_numbers import signif
from .store import CLOSED_KEY, CampaignStore

__all__ = ["COLUMNS", "AnnotatorStatus", "CampaignStatus", "campaign_status", "close_campaign", "closed_ms",
           "headline", "row_cells", "status_json", "status_text", "when"]



def closed_ms(store: CampaignStore) -> int | None:
    """When the campaign was closed (epoch ms), None while it is open."""
    v = store.get_meta(CLOSED_KEY)
    return None if v is None else int(v)


def close_campaign(store: CampaignStore) -> int:
    """Close the campaign (no more ratings are accepted); returns when it was closed (epoch ms;
    the first closing time when it already was)."""
    old = closed_ms(store)
    if old is not None:
        return old
    now = int(time.time() * 1000)
    store.set_meta(CLOSED_KEY, str(now))
    return now


@dataclass(frozen=True)
class AnnotatorStatus:
    """One annotator's progress and quality control so far. ``t``/``p``: the paired t-test of
    ``bad_pairs`` (BAD_REF, original) pairs (NaN while untestable); ``qc``: 'pass', 'fail',
    'untestable' or 'waiting'; ``repeat_mad``: mean |repeat - original| of ``repeat_pairs``
    pairs (NaN without one); ``median_seconds``: median screen time per rated item (NaN without one);
    ``total``: items in the annotator's HIT (0: the campaign's ``items_per_hit``). In a
    document-level campaign the pairs are the segments' (the whole-document ratings are not paired)."""

    name: str
    hit: int
    rated: int
    first_ms: int | None
    last_ms: int | None
    bad_pairs: int
    t: float
    p: float
    qc: str
    repeat_pairs: int
    repeat_mad: float
    median_seconds: float
    total: int = 0


@dataclass(frozen=True)
class CampaignStatus:
    """The whole campaign: every annotator by name, the HIT size (the longest HIT's, in a
    document-level campaign), alpha and when it was closed."""

    annotators: list[AnnotatorStatus]
    items_per_hit: int
    alpha: float
    min_pairs: int
    closed_ms: int | None

    @property
    def finished(self) -> int:
        return sum(a.rated >= (a.total or self.items_per_hit) for a in self.annotators)

    @property
    def ratings(self) -> int:
        return sum(a.rated for a in self.annotators)


def _pairs(values: dict[tuple[str, int, str], float], typ: str) -> tuple[np.ndarray, np.ndarray]:
    """(control item scores, original SYSTEM scores) of the pairs of type ``typ`` rated so far."""
    a = [(v, values[(sy, sg, "SYSTEM")]) for (sy, sg, t), v in values.items() if t == typ and (sy, sg, "SYSTEM") in values]
    return np.array([x for x, _ in a], np.float64), np.array([y for _, y in a], np.float64)


def campaign_status(store: CampaignStore, alpha: float = 0.05, min_pairs: int = 2) -> CampaignStatus:
    """The live summary of ``store`` (see the module docstring); ``min_pairs`` >= 2 BAD_REF pairs
    before the rater test is shown."""
    if min_pairs < 2:
        raise ValueError(f"min_pairs {min_pairs}: the paired t-test needs at least 2 pairs")
    items = store.all_items()
    kinds = {it.rid: (it.system, it.segment, it.type) for it in items if not it.is_document}
    by_name = store.ratings_by_annotator()
    out = []
    for pr in store.progress():
        rows = by_name.get(pr.name, [])
        values = {kinds[r["rid"]]: float(r["value"]) for r in rows if r["rid"] in kinds}
        bad, orig = _pairs(values, "BAD_REF")
        t, p, ran = paired_t(bad, orig, "less")
        if bad.size < min_pairs:
            qc, t, p = "waiting", math.nan, math.nan
        elif not ran:
            qc = "untestable"
        else:
            qc = "pass" if float(signif(p)) <= alpha else "fail"
        rep, rorig = _pairs(values, "REPEAT")
        mad = float(np.mean(np.abs(rep - rorig))) if rep.size else math.nan
        med = float(np.median([r["screen_ms"] for r in rows])) / 1000 if rows else math.nan
        out.append(AnnotatorStatus(pr.name, pr.hit, pr.rated, pr.first_ms, pr.last_ms, int(bad.size), float(t),
                                   float(p), qc, int(rep.size), mad, med, store.hit_size(pr.hit)))
    longest = max((store.hit_size(h) for h in {it.hit for it in items}), default=HIT_SIZE)
    return CampaignStatus(out, longest, alpha, min_pairs, closed_ms(store))


def when(ms: int | None) -> str:
    """Epoch ms as ``YYYY-MM-DD HH:MM:SS UTC`` ("" for None)."""
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def headline(s: CampaignStatus) -> str:
    """``N annotators, F finished, R ratings stored; open`` (or ``closed <time>``)."""
    state = f"closed {when(s.closed_ms)}" if s.closed_ms is not None else "open"
    return f"{len(s.annotators)} annotators, {s.finished} finished, {s.ratings} ratings stored; campaign {state}"


COLUMNS = ("annotator", "HIT", "rated", "first", "last", "BAD_REF pairs", "t", "p", "QC", "repeat pairs",
           "repeat mean |diff|", "median s/item")


def row_cells(a: AnnotatorStatus, total: int) -> list[str]:
    """The cells of one annotator's row, as :data:`COLUMNS` (NaN shown as '-')."""
    def num(x: float, fmt: str) -> str:
        return "-" if math.isnan(x) else format(x, fmt)

    return [a.name, str(a.hit), f"{a.rated} / {a.total or total}", when(a.first_ms), when(a.last_ms), str(a.bad_pairs),
            num(a.t, ".3f"), num(a.p, ".4g"), a.qc, str(a.repeat_pairs), num(a.repeat_mad, ".1f"),
            num(a.median_seconds, ".1f")]


def status_text(s: CampaignStatus) -> str:
    """A text table: the headline, then one row per annotator."""
    rows = [list(COLUMNS)] + [row_cells(a, s.items_per_hit) for a in s.annotators]
    widths = [max(len(r[j]) for r in rows) for j in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) if j in (0, 3, 4, 8) else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    note = (f"QC: one-sided paired t-test BAD_REF < original, pass at p <= {s.alpha:g}, "
            f"shown from {s.min_pairs} rated pairs")
    return "\n".join([headline(s), *lines, note]) + "\n"


def status_json(s: CampaignStatus) -> dict[str, Any]:
    """The summary as JSON-ready values (NaN -> None, times as ISO 8601 UTC strings)."""
    def f(x: float) -> float | None:
        return None if math.isnan(x) else x

    def iso(ms: int | None) -> str | None:
        return None if ms is None else datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat()

    return {"closed": s.closed_ms is not None, "closed_at": iso(s.closed_ms), "items_per_hit": s.items_per_hit,
            "alpha": s.alpha, "min_pairs": s.min_pairs, "annotators": len(s.annotators), "finished": s.finished,
            "ratings": s.ratings,
            "per_annotator": [{"name": a.name, "hit": a.hit, "rated": a.rated, "first": iso(a.first_ms),
                               "last": iso(a.last_ms), "bad_ref_pairs": a.bad_pairs, "t": f(a.t), "p": f(a.p),
                               "qc": a.qc, "repeat_pairs": a.repeat_pairs, "repeat_mean_abs_diff": f(a.repeat_mad),
                               "median_seconds": f(a.median_seconds),
                               "items": a.total or s.items_per_hit} for a in s.annotators]}
