"""The numbers Graham, Ma, Baldwin, Liu, Parra & Scarton (2017), "Improving Evaluation of
Document-level Machine Translation Quality Estimation" (EACL 2017) print, as printed (text),
keyed by (table, row, column). Table 1: the two DA runs' judgement counts (its "Run A" is the
release's ``runB`` and its "Run B" the release's ``runA``); Sec. 3.1: the run A vs run B
self-replication r and the effort it took."""
from __future__ import annotations

__all__ = ["PAPER", "PRINTED", "SOURCES"]

PAPER = ("Graham, Ma, Baldwin, Liu, Parra & Scarton (2017), Improving Evaluation of Document-level Machine "
         "Translation Quality Estimation (EACL 2017)")

SOURCES = {"table1": "Graham et al. (2017, EACL), Table 1", "reliability": "Graham et al. (2017, EACL), Sec. 3.1"}

RUN_A, RUN_B = "Run A (release runB)", "Run B (release runA)"

PRINTED: dict[tuple[str, str, str], str] = {
    ("table1", RUN_A, "judgements"): "14600",
    ("table1", RUN_A, "after QC"): "6640",
    ("table1", RUN_A, "per document"): "107",
    ("table1", RUN_B, "judgements"): "10050",
    ("table1", RUN_B, "after QC"): "7700",
    ("table1", RUN_B, "per document"): "124",
    ("reliability", "r, run A vs run B document scores", "value"): "0.901",
    ("reliability", "fewest repeat assessments of a document's sentences", "value"): "27",
    ("reliability", "mean sentence assessments per document", "value"): "107",
}
