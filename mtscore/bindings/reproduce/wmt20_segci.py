"""Segment-level 95% bootstrap intervals of the WMT20 DARR Kendall-like tau: ours, the findings
paper prints none (its release holds no segment-level interval either), so no cell is compared.

Per language pair and system set (all MT systems / without outliers), every metric with segment
scores there: :func:`~mtscore.analysis.metaeval.darr.darr_bootstrap` with 1000 resamples of the
DARR pairs (the procedure of Mathur 2021 §2.3.3; the release holds no segment-level interval or
significance output), seed 12345, the same draws for every metric; the 2.5 / 97.5 percentiles. Resampling pairs treats them as
independent; the pairs of one source segment share its translations, so an interval over resampled
segments (``darr_bootstrap(..., clusters=segment ids)``) is about 1.2-2.2x wider on this data.
"""
from __future__ import annotations

import numpy as np

from ...analysis.metaeval.darr import darr_bootstrap
from .model import Cell, Table

__all__ = ["COLUMNS", "N_RESAMPLES", "SEED", "seg_ci_table"]

N_RESAMPLES = 1000
SEED = 12345
COLUMNS = ["pairs", "tau", "low", "high"]
_WHY = "ours; the paper prints none"


def _groups(scores: dict[tuple[str, str], np.ndarray], present: list[str], lp: str, b: np.ndarray,
            w: np.ndarray) -> list[tuple[list[str], np.ndarray]]:
    """The metrics scored on every pair together (the same draws), each other metric alone over the
    pairs it scores both sides of (as seg-darr's tau drops them); with each group's pair mask."""
    def scored(m: str) -> np.ndarray:
        x = scores[(m, lp)]
        return np.isfinite(x[b]) & np.isfinite(x[w])

    full = [m for m in present if scored(m).all()]
    out = [(full, np.ones(b.size, bool))] if full else []
    return out + [([m], scored(m)) for m in present if m not in full]


def seg_ci_table(scores: dict[tuple[str, str], np.ndarray], pairs: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]],
                 metrics: list[str], lps: list[str]) -> Table:
    """The interval table. ``scores[(metric, lp)]`` (N,) float64 segment scores aligned to the DA rows
    of ``lp`` (all NaN: the metric has no scores there); ``pairs[(lp, tag)]`` (better, worse) (P,)
    int64 DARR pairs for ``tag`` in ("all", "-out"). Rows ``"<metric> <lp> <tag>"``, columns
    :data:`COLUMNS`; ``pairs``: the pairs the metric scores both sides of; ``tau`` is the point
    estimate (= the seg-darr cell)."""
    cells: dict[tuple[str, str], Cell] = {}
    rows: list[str] = []
    for lp in lps:
        present = [m for m in metrics if not np.isnan(scores[(m, lp)]).all()]
        if not present:
            continue
        for tag in ("all", "-out"):
            b, w = pairs[(lp, tag)]
            res: dict[str, tuple[float, float, float, float]] = {}
            for group, keep in _groups(scores, present, lp, b, w):
                r = darr_bootstrap(np.vstack([scores[(m, lp)] for m in group]), b[keep], w[keep],
                                   n_resamples=N_RESAMPLES, seed=SEED)
                res.update({m: (float(keep.sum()), r["tau"][i], r["low"][i], r["high"][i]) for i, m in enumerate(group)})
            for m in present:
                row = f"{m} {lp} {tag}"
                rows.append(row)
                for col, v in zip(COLUMNS, res[m]):
                    cells[(row, col)] = Cell("seg-darr-ci", row, col, float(v), reason=_WHY,
                                             default_digits=0 if col == "pairs" else 4)
    return Table("seg-darr-ci", f"Segment level: 95% bootstrap interval of the DARR tau over resampled pairs, "
                 f"narrower than over resampled segments ({_WHY})", rows, COLUMNS,
                 cells, f"Percentile bootstrap over the DARR pairs ({N_RESAMPLES} resamples, seed {SEED}, the same "
                 "draws for every metric of a language pair; Mathur 2021 §2.3.3). 'all' = all MT systems, '-out' = "
                 "without outliers. The pairs of one source segment are not independent: resampling segments instead "
                 "gives intervals about 1.2-2.2x wider on this data.")
