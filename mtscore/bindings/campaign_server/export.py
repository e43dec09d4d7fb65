"""Export the stored ratings as a Mechanical Turk batch result CSV, the layout that
``mtscore human da-batches`` (:func:`mtscore.analysis.crowd.read_mturk_batches`) reads, so
quality control, standardisation and the scores run on a local campaign unchanged.

The file is written by the same writer as simulated batches
(:func:`mtscore.analysis.crowd.simulate.batch_results_csv`): one row per annotator who rated all
100 items of their HIT (``WorkerId`` = the annotator's name, ``AcceptTime`` = the first display
of their first item, ``WorkTimeInSeconds`` = first display to last rating); annotators still
rating are left out and counted.

:func:`export_appraise` writes Appraise's document-level score export instead (the layout that
``mtscore human da-batches --input-format appraise`` reads, with the whole-document ratings),
the export of a document-level campaign (``build-hits --docs``), whose HITs have their own lengths.
"""
from __future__ import annotations

import csv
import io
from datetime import datetime, timezone

import numpy as np

from ...analysis.crowd.hits import HIT_SIZE, Campaign
from ...analysis.crowd.simulate import Assignment, Simulation, batch_results_csv
from ...analysis.errors import AnalysisInputError
from .store import CampaignStore

__all__ = ["APPRAISE_CODES", "export_appraise", "export_csv"]

#: the item types as Appraise's exports write them
APPRAISE_CODES = {"SYSTEM": "TGT", "REPEAT": "CHK", "BAD_REF": "BAD", "REF": "REF"}


def export_csv(store: CampaignStore, batch_id: int = 1, seed: int | None = 0) -> tuple[str, int, int]:
    """(the batch result CSV text, complete assignments written, annotators left out as incomplete).
    ``seed`` fixes the random HIT/assignment ids of the file (as in simulated batches)."""
    by_annotator = store.ratings_by_annotator()
    items = store.all_items()
    if any(it.document for it in items):
        raise AnalysisInputError("a document-level campaign has HITs of its own lengths: export it in "
                                 "Appraise's document layout (export_appraise; campaign-export --format appraise)")
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


def export_appraise(store: CampaignStore) -> tuple[str, int, int]:
    """(Appraise document-layout CSV, annotators written, annotators left out as incomplete).

    One row per rating of every annotator who rated all items of their HIT, in presentation
    order, no header: user (the annotator's name), system, item (the segment's line; a document
    item: its document's last line), type (TGT, CHK, BAD, REF), src and tgt (the campaign's
    language codes), score, documentID, isCompleteDocument (True for the whole-document rating),
    start and end (epoch seconds with milliseconds: first display, stored rating), batchNo (the
    HIT) and item_id (the item's ``rid``): the 13 cells of Appraise's
    ``ExportSystemScoresToCSV`` with batch information. A segment-level campaign is written with
    documentID ``-`` and isCompleteDocument False throughout."""
    items = {it.rid: it for it in store.all_items()}
    src, trg = (store.get_meta(k) or d for k, d in (("src", "xx"), ("trg", "yy")))
    by_annotator = store.ratings_by_annotator()
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    written = 0
    for name in sorted(by_annotator):
        rs = sorted(by_annotator[name], key=lambda r: r["position"])
        if len(rs) < store.hit_size(int(rs[0]["hit"])):
            continue
        written += 1
        for r in rs:
            it = items[r["rid"]]
            w.writerow([name, it.system, it.segment, APPRAISE_CODES[it.type], src, trg, r["value"],
                        it.document or "-", "True" if it.is_document else "False",
                        f"{r['created_ms'] / 1000:.3f}", f"{r['submitted_ms'] / 1000:.3f}", r["hit"], r["rid"]])
    incomplete = sum(1 for p in store.progress() if p.rated < store.hit_size(p.hit))
    return buf.getvalue(), written, incomplete
