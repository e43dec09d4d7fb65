"""Graham, Ma, Baldwin, Liu, Parra & Scarton (2017), "Improving Evaluation of Document-level MT
Quality Estimation" (EACL 2017), reproduced from the raw Mechanical Turk batches of its two DA
runs the authors released (``ygraham/eacl2017``: ``batched-hits/runA``, ``batched-hits/runB``
and the segment key ``seg-key-enes``), with :mod:`mtscore.analysis.crowd`:

* Table 1: per run the judgements collected, those kept after quality control and the mean
  judgements per document. The paper's "Run A" is the release's ``runB`` and its "Run B" the
  release's ``runA``; the paper's Run B counts are not those of the release (see the table note);
* the self-replication r of the two runs' 62 document scores (0.901) and the effort behind it
  (at least 27 repeats, 107 per document on average);
* Figure 2: r as the paper's Run A (release ``runB``) is added one HIT at a time, against the
  full other run (the release's ``n/cor.csv``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...analysis.crowd.batches import Ratings, read_mturk_batches
from ...analysis.crowd.campaign_stats import campaign_stats
from ...analysis.crowd.scores import (
    DAResult,
    DocumentScores,
    da_pipeline,
    downsampling_curve,
    read_segment_key,
    run_correlation,
)
from ...analysis.errors import AnalysisInputError
from .docqe_printed import PAPER, PRINTED, RUN_A, RUN_B, SOURCES
from .model import Cell, Figure, Reproduction, Table
from .output import write_reproduction

__all__ = ["UNSUPPORTED", "reproduce_docqe", "required_files", "write_docqe"]

TITLE = "Document-level DA (Graham et al. 2017, EACL): reproduction"
SOURCE = ("the raw Mechanical Turk batches of both DA runs the authors released (github.com/ygraham/eacl2017, "
          "batched-hits/ and seg-key-enes)")
#: the paper's run -> the release's folder
RUNS = {RUN_A: "runB", RUN_B: "runA"}
UNSUPPORTED = [
    ("Table 1, Run B's printed counts (10,050 judgements, 7,700 after QC, 124 per document; marked as differing)",
     "the release's runA (the paper's Run B) holds 105 HITs = 10,500 judgements and 99.4 judgements per "
     "document; its 7,700 after QC counts every item type, while Run A's 6,640 counts SYSTEM and REPEAT only"),
    ("Evaluation of the WMT-16 document-level QE systems against the new gold standard",
     "the release holds no QE system predictions"),
]


def _folder(data: str | Path) -> Path:
    d = Path(data)
    return d if (d / "seg-key-enes").is_file() or (d / "batched-hits").is_dir() else d / "docqe-eacl2017"


def required_files(data: str | Path) -> list[Path]:
    """What is read: the segment key and the two runs' batch folders (``DATA/docqe-eacl2017/...``
    or ``DATA/...``)."""
    f = _folder(data)
    return [f / "seg-key-enes", f / "batched-hits" / "runA", f / "batched-hits" / "runB"]


def _load(data) -> tuple[dict[str, DAResult], dict[str, Ratings]]:
    key_path, *runs = required_files(data)
    for p in (key_path, *runs):
        if not (p.is_file() if p is key_path else p.is_dir() and any(p.glob("Batch_*.csv"))):
            raise AnalysisInputError(f"missing data file {p} (the reproduction needs seg-key-enes and "
                                     "batched-hits/runA, runB of github.com/ygraham/eacl2017)")
    key = read_segment_key(key_path)
    ratings = {p.name: read_mturk_batches(p) for p in runs}
    return {n: da_pipeline(r, key) for n, r in ratings.items()}, ratings


def _docs(r: DAResult) -> DocumentScores:
    if r.documents is None:  # da_pipeline always scores documents when given the key
        raise AnalysisInputError("no document scores: the segment key matched no rating")
    return r.documents


def _cells(key: str, values: dict[tuple[str, str], float]) -> dict[tuple[str, str], Cell]:
    out = {}
    for (row, col), v in values.items():
        printed = PRINTED.get((key, row, col))
        out[(row, col)] = Cell(key, row, col, v, printed, SOURCES[key] if printed else None,
                               default_digits=0 if col != "per document" else 1)
    return out


def _table1(res: dict[str, DAResult], ratings: dict[str, Ratings]) -> Table:
    cols = ["judgements", "after QC", "after QC, all item types", "per document"]
    values: dict[tuple[str, str], float] = {}
    for row, run in RUNS.items():
        r = res[run]
        sr = np.isin(r.ratings.item_type, ["SYSTEM", "REPEAT"])
        values[(row, "judgements")] = float(campaign_stats(ratings[run]).assessments_total)
        values[(row, "after QC")] = float((r.used & sr).sum())
        values[(row, "after QC, all item types")] = float(r.used.sum())
        values[(row, "per document")] = float(_docs(r).n.mean())
    return Table("table1", "Table 1: judgements collected, kept after quality control, per document", list(RUNS),
                 cols, _cells("table1", values),
                 "After QC: the SYSTEM and REPEAT judgements of the workers passing quality control (the ones "
                 "the document scores average; per document: their mean count per document). The paper's Run A "
                 "is the release's runB; its Run B 7,700 equals the release runA's count of every item type "
                 "(next column) and its 10,050 / 124 are not the release's 10,500 / 99.4.")


def _reliability(res: dict[str, DAResult], curve: dict) -> Table:
    a, b = _docs(res["runB"]), _docs(res["runA"])
    rows = {"r, run A vs run B document scores": run_correlation(a, b)[0],
            "r, run A vs run B raw document means": run_correlation(a, b, "raw")[0],
            "documents": float(run_correlation(a, b)[1]),
            "fewest repeat assessments of a document's sentences": float(curve["min_n"][-1]),
            "mean sentence assessments per document": float(curve["mean_n"][-1])}
    cells = {}
    for row, v in rows.items():
        printed = PRINTED.get(("reliability", row, "value"))
        cells[(row, "value")] = Cell("reliability", row, "value", v, printed,
                                     SOURCES["reliability"] if printed else None,
                                     default_digits=3 if row.startswith("r,") else 0)
    return Table("reliability", "Self-replication: run A vs run B (Sec. 3.1)", list(rows), ["value"], cells,
                 "Pearson r of the 62 document scores (mean of segment mean z) of the two runs; the effort: the "
                 "paper's Run A (release runB) in full.")


def _draw(f: Figure) -> bytes:
    from ...analysis import plots

    return plots.downsampling_plot(f.data, title=f.title)


def reproduce_docqe(data: str | Path) -> Reproduction:
    """Table 1, the self-replication r and Figure 2. ``data``: the shared data folder (holding
    ``docqe-eacl2017/``) or that folder. Raises :class:`AnalysisInputError` naming a missing file."""
    res, ratings = _load(data)
    curve = downsampling_curve(res["runB"], _docs(res["runA"]))
    keys = ("hits", "min_n", "mean_n", "n_docs", "r")
    pts = [[int(curve["hits"][i]), int(curve["min_n"][i]), float(curve["mean_n"][i]), int(curve["n_docs"][i]),
            float(curve["r"][i])] for i in range(len(curve["r"]))]
    fig = Figure("fig2-downsampling", "Figure 2: r of the two runs' document scores as Run A's HITs are added",
                 {k: curve[k] for k in keys},
                 "Run A (release runB) QC-passing HITs added in submit order; its document scores from those HITs "
                 "against Run B's in full.", list(keys), pts, _draw)
    return Reproduction([_table1(res, ratings), _reliability(res, curve)], [fig], list(UNSUPPORTED), PAPER, SOURCE)


def write_docqe(res: Reproduction, out: str | Path) -> Path:
    """Write :func:`reproduce_docqe`'s result into ``out`` (:func:`~.output.write_reproduction`)."""
    return write_reproduction(res, out, TITLE)
