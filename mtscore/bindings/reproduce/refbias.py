"""Ma, Graham, Baldwin & Liu (2017), "Further Investigation into Reference Bias in Monolingual
Evaluation of Machine Translation" (EMNLP 2017), reproduced from the Fomicheva & Specia (2016)
ratings the authors released (``qingsongma/percentage-refBias``, ``ratings_all``: 100 zh-en
translations x 25 judges, 1-5).

The paper's groups are the release's batches: G1 (saw the source) = batch5, G2-G5 (each a
different reference) = batch1-batch4. What the release supports, with the procedures of
:mod:`mtscore.analysis.human.agreement` and :mod:`mtscore.analysis.human.refbias`:

* Table 2: per pair of settings (SOURCE, SAME, DIFF) the share of pairs of judge pairs whose
  Cohen's kappa 95% CIs do not overlap, and the number of pairs compared;
* Figure 1: the bootstrap CI of the mean kappa of SAME and DIFF, panels (e) and (f) (the
  corrected bootstrap, M = 1000 and M = 50);
* Figure 2: every judge pair's kappa per setting; Figure 3: each judge's average rating per
  group; Figure 4: how the ratings of two judges pair up, per setting (row percentages);
* the text's numbers: the SAME - DIFF gap of the mean kappas, the Fig. 3 ranges.

What it does not: Fig. 1 (a)-(d) (the original code's resample size and proportion are not
stated) and the GEN-REF vs POST-EDIT DA experiment (no DA runs or post-edits released).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...analysis.data.judge_ratings import read_judge_ratings
from ...analysis.errors import AnalysisInputError
from ...analysis.human.agreement import (
    FIGURE1_PANELS,
    KappaTable,
    bootstrap_mean_ci,
    nonoverlap_shares,
    pairwise_kappas,
    rating_crosstab,
)
from ...analysis.human.refbias import kappa_distributions, rating_ranges
from .model import Cell, Figure, Reproduction, Table
from .output import write_reproduction
from .refbias_printed import PAPER, PRINTED, SOURCES

__all__ = ["GROUPS", "SEED", "UNSUPPORTED", "reproduce_refbias", "required_files", "write_refbias"]

TITLE = "Reference bias (Ma et al. 2017): reproduction"
SOURCE = ("the Fomicheva & Specia (2016) ratings the authors released (github.com/qingsongma/percentage-refBias, "
          "ratings_all)")
#: the paper's groups (G1 saw the source) -> the release's judges (batch5, batch1-batch4)
GROUPS = {"G1": [3, 11, 12, 17, 23], "G2": [1, 4, 10, 20, 21], "G3": [5, 7, 16, 19, 22],
          "G4": [2, 6, 8, 15, 25], "G5": [9, 13, 14, 18, 24]}
SOURCE_GROUPS = ["G1"]
SETTINGS = ["SOURCE", "SAME", "DIFF"]
#: the bootstrap's seed (numpy default_rng)
SEED = 2017
UNSUPPORTED = [
    ("Figure 1 (a)-(d) (the original bootstrap and its partial corrections)",
     "the original code's resample size n (< N) and the proportion it actually took are not stated in the "
     "paper; only (e) and (f) are fully specified"),
    ("The GEN-REF vs POST-EDIT DA experiment (scatter plots of DA against DA and sentence BLEU)",
     "the release holds the 25 judges' 1-5 ratings only: no DA runs, post-edits or en-es QE data"),
]


def required_files(data: str | Path) -> list[Path]:
    """The one file read: ``DATA/refbias/ratings_all`` (or ``DATA/ratings_all``)."""
    d = Path(data)
    return [d / "ratings_all" if (d / "ratings_all").is_file() else d / "refbias" / "ratings_all"]


def _load(data) -> tuple[list[str], np.ndarray]:
    path = required_files(data)[0]
    if not path.is_file():
        raise AnalysisInputError(f"missing data file {path} (the reproduction needs ratings_all of "
                                 "github.com/qingsongma/percentage-refBias)")
    judges, _, R = read_judge_ratings(path)
    return judges, R


def _groups() -> dict[str, list[str]]:
    return {g: [f"j{i}" for i in v] for g, v in GROUPS.items()}


def _table2(table: KappaTable) -> list[Table]:
    rows = {(r["setting_a"], r["setting_b"]): r for r in nonoverlap_shares(table, SETTINGS)}
    out = []
    for key, title, value in (("table2", "Table 2: % of pairs of judge pairs whose kappa CIs do not overlap",
                               lambda r: 100.0 * r["share"]),
                              ("table2-pairs", "Table 2 (in brackets): pairs of judge pairs compared",
                               lambda r: float(r["total"]))):
        cells = {}
        for a in SETTINGS:
            for b in SETTINGS:
                r = rows.get((a, b))
                printed = PRINTED.get((key, a, b))
                cells[(a, b)] = Cell(key, a, b, None if r is None else value(r), printed,
                                     SOURCES[key] if printed else None,
                                     "the table's lower triangle (the upper one holds the pair)" if r is None else None,
                                     0)
        out.append(Table(key, title, list(SETTINGS), list(SETTINGS), cells,
                         "Unweighted Cohen's kappa per judge pair with its 95% CI (Fleiss, Cohen & Everitt 1969, "
                         "as psych::cohen.kappa); within a setting unordered pairs, across settings all."))
    return out


def _text(table: KappaTable, R: np.ndarray, judges: list[str]) -> Table:
    mean = {s: float(table.kappa[table.where(s)].mean()) for s in SETTINGS}
    rr = rating_ranges(R, judges, _groups(), SOURCE_GROUPS)
    values = {"mean kappa SAME - DIFF": mean["SAME"] - mean["DIFF"],
              **{f"mean kappa {s}": mean[s] for s in SETTINGS},
              "range of the reference groups' (G2-G5) average ratings": rr.across_range,
              "widest range of judges' average ratings within one group (G5)": rr.within_range["G5"]}
    cells = {}
    for row, v in values.items():
        printed = PRINTED.get(("text", row, "value"))
        cells[(row, "value")] = Cell("text", row, "value", v, printed, SOURCES["text"] if printed else None)
    return Table("text", "Numbers quoted in the text", list(values), ["value"], cells,
                 f"The widest group is {rr.widest_group()}. Mean kappas unweighted; the paper prints the gap only.")


def _figure1(table: KappaTable) -> Figure:
    points = []
    for p in FIGURE1_PANELS:
        if p.sample_size != "N" or p.level is None:
            continue
        for s in ("SAME", "DIFF"):
            m, lo, hi = bootstrap_mean_ci(table.kappa[table.where(s)], p.n_resamples, None, p.replace, p.level, SEED)
            points.append([p.panel, p.what, s, m, lo, hi])
    return Figure("fig1-bootstrap", "Figure 1 (e), (f): bootstrap 95% CI of the mean kappa, SAME and DIFF",
                  {"points": points}, f"Percentile bootstrap of the mean of the setting's judge-pair kappas "
                  f"(numpy default_rng({SEED})); (f) M = 1000, (e) M = 50, with replacement, n = N.",
                  ["panel", "what", "setting", "mean", "low", "high"], points, _draw_intervals)


def _draw_intervals(f: Figure) -> bytes:
    from ...analysis import plots

    return plots.interval_plot([(f"({p[0]})", p[2], p[3], p[4], p[5]) for p in f.points], title=f.title,
                               ylabel="mean kappa, 95% CI")


def _draw_kappas(f: Figure) -> bytes:
    from ...analysis import plots

    return plots.kappa_distribution_plot(f.data["distributions"], title=f.title)


def _draw_ranges(f: Figure) -> bytes:
    from ...analysis import plots

    return plots.rating_ranges_plot(f.data["ranges"], title=f.title)


def _draw_crosstab(f: Figure) -> bytes:
    from ...analysis import plots

    lv = [f"{v:g}" for v in f.data["levels"]]
    return plots.heatmap(f.data["row_percent"], lv, lv, title=f.title, fmt="{:.0f}")


def _figures(table: KappaTable, R: np.ndarray, judges: list[str]) -> list[Figure]:
    d = kappa_distributions(table, [*SETTINGS, "SOURCE-REF"])
    pts2 = [[s, a, b, float(k), float(lo), float(hi)] for s, v in d.items()
            for a, b, k, lo, hi in zip(v.judge_a, v.judge_b, v.kappa, v.low, v.high)]
    rr = rating_ranges(R, judges, _groups(), SOURCE_GROUPS)
    pts3 = [[j, g, float(m)] for j, g, m in zip(rr.judges, rr.judge_group, rr.judge_mean)]
    figs = [_figure1(table),
            Figure("fig2-kappas", "Figure 2: Cohen's kappa of every judge pair, per setting", {"distributions": d},
                   "One line per judge pair (sorted by kappa within a setting) with its 95% CI.",
                   ["setting", "judge_a", "judge_b", "kappa", "low", "high"], pts2, _draw_kappas),
            Figure("fig3-ranges", "Figure 3: each judge's average rating, per group", {"ranges": rr},
                   "G1 saw the source, G2-G5 each a different reference.", ["judge", "group", "average rating"],
                   pts3, _draw_ranges)]
    ct = rating_crosstab(R, table, source_groups=SOURCE_GROUPS)
    for s in ("DIFF", "SAME", "SOURCE-REF", "SOURCE"):
        c = ct[s]
        pts = [[s, f"{a:g}", f"{b:g}", int(c["counts"][i, j]), float(c["row_percent"][i, j])]
               for i, a in enumerate(c["levels"]) for j, b in enumerate(c["levels"])]
        figs.append(Figure(f"fig4-{s.lower()}", f"Figure 4 ({s}): ratings of the same item by two judges, row %",
                           c, "Rows: one judge's rating (SOURCE-REF: the source judge's), columns: the other's; "
                           "each row sums to 100%.", ["setting", "row rating", "column rating", "count",
                                                      "row percent"], pts, _draw_crosstab))
    return figs


def reproduce_refbias(data: str | Path) -> Reproduction:
    """Every table and figure the release supports. ``data``: the shared data folder (holding
    ``refbias/ratings_all``) or the refbias folder. Raises :class:`AnalysisInputError` naming a
    missing file."""
    judges, R = _load(data)
    table = pairwise_kappas(R, judges, _groups(), source_groups=SOURCE_GROUPS)
    return Reproduction([*_table2(table), _text(table, R, judges)], _figures(table, R, judges),
                        list(UNSUPPORTED), PAPER, SOURCE)


def write_refbias(res: Reproduction, out: str | Path) -> Path:
    """Write :func:`reproduce_refbias`'s result into ``out`` (:func:`~.output.write_reproduction`)."""
    return write_reproduction(res, out, TITLE)
