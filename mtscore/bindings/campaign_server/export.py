"""Export the stored ratings as a Mechanical Turk batch result CSV, the layout that
``mtscore human da-batches`` (:func:`mtscore.analysis.crowd.read_mturk_batches`) reads, so
quality control, standardisation and the scores run on a local campaign unchanged.

The file is written by the same writer as simulated batches
(:func:`mtscore.analysis.crowd.simulate.batch_results_csv`): one row per annotator who rated all
100 items of their HIT (``WorkerId`` = the annotator's name, ``AcceptTime`` = the first display
of their first item, ``WorkTimeInSeconds`` = first display to last rating); annotators still
rating are left out and counted.
"""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

from ...analysis.crowd.hits import HIT_SIZE, Campaign
from ...analysis.crowd.simulate import Assignment, Simulation, batch_results_csv
from ...analysis.errors import AnalysisInputError
from .store import CampaignStore

__all__ = ["export_csv"]


def export_csv(store: CampaignStore, batch_id: int = 1, seed: int | None = 0) -> tuple[str, int, int]:
    """(the batch result CSV text, complete assignments written, annotators left out as incomplete).
    ``seed`` fixes the random HIT/assignment ids of the file (as in simulated batches)."""
    rows = store.ratings()
    by_annotator: dict[str, list[dict]] = {}
    for r in rows:
        by_annotator.setdefault(r["name"], []).append(r)
    items = store.all_items()
    if any(it.document for it in items):
        raise AnalysisInputError("a document-level campaign has HITs of its own lengths: export it in "
                                 "Appraise's document layout (campaign-export --format appraise)")
    camp = Campaign(items, None)
    assignments = []
    incomplete = sum(1 for p in store.progress() if p.rated < HIT_SIZE)
    for name in sorted(by_annotator):
        rs = by_annotator[name]
        if len(rs) < HIT_SIZE:
            continue
        rs.sort(key=lambda r: r["position"])
        first = min(r["created_ms"] for r in rs)
        last = max(r["submitted_ms"] for r in rs)
        accept = datetime.fromtimestamp(first // 1000, timezone.utc)
        assignments.append(Assignment(int(rs[0]["hit"]), name, np.array([r["value"] for r in rs], dtype=np.int64),
                                      accept, max(0, (last - first) // 1000),
                                      np.array([r["position"] for r in rs], dtype=np.int64)))
    sim = Simulation(assignments, [], {})
    src, trg, item = (store.get_meta(k) or d for k, d in (("src", "xx"), ("trg", "yy"), ("item", "ad")))
    return batch_results_csv(camp, sim, src, trg, item, batch_id=batch_id, seed=seed), len(assignments), incomplete
