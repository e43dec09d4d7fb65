"""Direct Assessment from a crowd platform: building the HITs, rating simulation, raw batches to scores.

* :mod:`.hits` - 100-item HITs and the platform's batch input (Graham et al. 2017, NLE §3.4).
* :mod:`.doc_hits` - document-level DA HITs: segments in document order, then the whole document.
* :mod:`.doc_checks` - the rules of document-level DA HITs, checked (``check-hits``).
* :mod:`.degrade` - degraded ("bad reference") quality-control items (Graham et al. 2017, NLE §4).
* :mod:`.simulate` - simulated raters writing Mechanical Turk batch results (document HITs: an Appraise export).
* :mod:`.batches` - Mechanical Turk / Appraise batches into one :class:`Ratings` table.
* :mod:`.qc` - per-HIT and per-worker red flags and the rater test, as the DA scripts run them.
* :mod:`.campaign_stats` - a campaign's worker and HIT statistics (Graham et al. 2017, NLE §4).
* :mod:`.scores` - standardisation, segment / document / system scores, run A vs run B reliability.
* :mod:`.release_files` - results in the layout of the DA scripts' released files.
* :mod:`.qe_gold` - the WMT-16 document-level QE gold label and its simulation (Graham et al. 2017, EACL §2).
* :mod:`.r_numbers` - R's and Perl's number printing, reading and rounding.

The names of the former ``mtscore.analysis.crowd`` module (:mod:`.batches`) are importable from here.
"""
from .batches import (
    ITEM_TYPES,
    Ratings,
    concat_ratings,
    read_appraise_documents,
    read_appraise_export,
    read_mturk_batches,
)

__all__ = ["ITEM_TYPES", "Ratings", "concat_ratings", "read_appraise_documents", "read_appraise_export",
           "read_mturk_batches"]
