"""Mathur, Baldwin & Cohn (2020), "Tangled up in BLEU" (ACL 2020), reproduced from the WMT19
system-level scores the authors released (``nitikam/tangled``, ``data/wmt19_sys_scores/``).

What the release supports (all from the 18 ``DA-newstest2019-<lp>-sys-nohy-scores.csv`` files):

* Tables 1-2 and the appendix tables: Pearson r of every metric with the DA z-scores over all
  systems and without the MAD outliers (|robust z| > 2.5, b = 1.4826), and the system counts;
* Figure 1: top-N and rolling-window (w = 4, 8) Pearson r, de-en;
* Figure 2: r over all C(22, 10) = 646,646 10-system subsets of en-de, grouped by which of the
  outliers ``en_de_task`` and ``online-X`` a subset holds;
* the outlier scatter plots of Sec. 4.2 (thesis Sec. 6.2): metric vs DA z per system for en-de,
  en-kk, gu-en and zh-en, outliers marked, r with and without them.

What it does not: Figure 3 and the pairwise Type I / II analysis of §5 need each system's
segment-level DA and outputs, which the release does not hold (see :data:`UNSUPPORTED`).

:func:`reproduce_tangled` returns a :class:`TangledReproduction`: every table cell with its
reproduced and printed value, and every figure's underlying numbers; :func:`write_tangled` writes
it (:func:`~.output.write_reproduction`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...analysis.correlation import pearson, rolling_window, top_n
from ...analysis.data.released import SysLevel, load_sys_level
from ...analysis.errors import AnalysisInputError
from ...analysis.metaeval.outliers import mad_outliers
from ...analysis.metaeval.subsets import subset_correlations
from .model import Cell, Extra, Figure, Reproduction, Table
from .output import write_reproduction
from .tangled_printed import PAPER, PRINTED, SOURCES

__all__ = [
    "LPS",
    "UNSUPPORTED",
    "Cell",
    "Figure",
    "Table",
    "TangledReproduction",
    "data_folder",
    "reproduce_tangled",
    "required_files",
    "write_tangled",
]

TITLE = "Tangled up in BLEU (Mathur et al. 2020): reproduction"
SOURCE = "the WMT19 system-level scores the authors released (github.com/nitikam/tangled)"

TO_EN = ["de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en"]
EN_XX = ["en-cs", "en-de", "en-fi", "en-gu", "en-kk", "en-lt", "en-ru", "en-zh"]
NON_EN = ["de-cs", "de-fr", "fr-de"]
#: the 18 WMT19 language pairs of the release
LPS = TO_EN + EN_XX + NON_EN
#: Tables 1-2: the paper's metrics (row label -> column of the release); "BLEU" is sacreBLEU's
MAIN_METRICS = {"BLEU": "sacreBLEU-BLEU", "TER": "TER", "chrF": "chrF", "ESIM": "ESIM",
                "YiSi-1": "YiSi-1", "YiSi-2": "YiSi-2"}
#: Figures 1-2: metrics drawn (label -> column)
FIG_METRICS = {"BLEU": "sacreBLEU-BLEU", "TER": "TER", "chrF": "chrF", "YiSi-1": "YiSi-1", "ESIM": "ESIM"}
#: the outlier scatter figures (Sec. 4.2 / thesis Sec. 6.2): language pairs where outliers move r most
#: (with Table 1-2 cells transcribed), metrics drawn (label -> column)
SCATTER_LPS = {"en-de": "table2", "en-kk": "table2", "gu-en": "table1", "zh-en": "table1"}
SCATTER_METRICS = {"BLEU": "sacreBLEU-BLEU", "chrF": "chrF", "YiSi-1": "YiSi-1", "ESIM": "ESIM"}
#: Figure 1's bootstrap intervals (Mathur 2021, Fig. 6.7): resamples of the systems, seed
N_BOOT, SEED = 1000, 12345
#: what the paper reports but the release cannot rebuild: (item, reason)
UNSUPPORTED = [
    ("Figure 3 (pairwise system decisions, metric vs human difference)",
     "needs every system's segment-level DA scores and translations of newstest2019; the release holds "
     "system-level scores only; `mtscore reproduce wmt21` runs the same analysis on the WMT21 to-English data"),
    ("Section 5 Type I / Type II error counts over the 1,362 WMT19 system pairs",
     "same: the human Wilcoxon test and the metric bootstrap / t-tests need segment-level data (see "
     "`mtscore reproduce wmt21` for WMT21)"),
]


@dataclass
class TangledReproduction(Reproduction):
    """The :class:`~.model.Reproduction` of Tangled, with each language pair's MAD outliers."""
    outliers: dict[str, list[str]] = field(default_factory=dict)


def data_folder(data: str | Path) -> Path:
    """The folder holding the 18 files: ``DATA/tangled/wmt19_sys_scores``, ``DATA/wmt19_sys_scores``
    or ``DATA`` itself (the first that exists; else the first)."""
    d = Path(data)
    for cand in (d / "tangled" / "wmt19_sys_scores", d / "wmt19_sys_scores"):
        if cand.is_dir():
            return cand
    return d if any(d.glob("DA-newstest2019-*-sys-nohy-scores.csv")) else d / "tangled" / "wmt19_sys_scores"


def required_files(data: str | Path) -> list[Path]:
    """The data files the reproduction reads (18 paths, one per language pair)."""
    folder = data_folder(data)
    return [folder / f"DA-newstest2019-{lp.replace('-', '')}-sys-nohy-scores.csv" for lp in LPS]


def _load(data) -> dict[str, SysLevel]:
    out = {}
    for lp, path in zip(LPS, required_files(data)):
        if not path.is_file():
            raise AnalysisInputError(
                f"missing data file {path} (the reproduction needs the 18 WMT19 system-level files of "
                "github.com/nitikam/tangled, data/wmt19_sys_scores/)")
        sl = load_sys_level(path, raw_col=None)
        sl.lp = lp
        out[lp] = sl
    return out


def _short(system: str) -> str:
    return system.rsplit(".", 1)[0]


def _corr_table(key: str, title: str, lps: list[str], rows: dict[str, str], sls: dict[str, SysLevel],
                out_cols_always: bool, sys_row: bool, note: str) -> Table:
    cols: list[str] = []
    cells: dict[tuple[str, str], Cell] = {}
    for lp in lps:
        sl = sls[lp]
        out = mad_outliers(sl.human)
        lp_cols = [f"{lp} All"] + ([f"{lp} -out"] if out_cols_always or out.any() else [])
        cols += lp_cols
        for label, column in ([("#sys", "")] if sys_row else []) + list(rows.items()):
            for col in lp_cols:
                keep = ~out if col.endswith("-out") else np.ones_like(out)
                value: float | None
                reason = None
                if label == "#sys":
                    value = float(keep.sum())
                elif column not in sl.metrics:
                    value, reason = None, f"{label} has no {lp} scores in the release (not submitted for it)"
                else:
                    row = sl.scores[sl.metrics.index(column)]
                    if np.isnan(row).any():
                        value, reason = None, f"{column} misses some {lp} systems in the release"
                    else:
                        value = pearson(sl.human[keep], row[keep])
                printed = PRINTED.get((key, label, col))
                cells[(label, col)] = Cell(key, label, col, value, printed,
                                           SOURCES[key] if printed is not None else None, reason)
    row_labels = (["#sys"] if sys_row else []) + list(rows)
    return Table(key, title, row_labels, cols, cells, note)


def _appendix(key: str, title: str, lps: list[str], sls: dict[str, SysLevel]) -> Table:
    metrics = sorted({m for lp in lps for m in sls[lp].metrics}, key=str.lower)
    rows = {("LP" if m == "LP.1" else m): m for m in metrics}  # the release's second "LP" column is the metric LP
    return _corr_table(key, title, lps, rows, sls, False, True,
                       "Pearson r with DA z over all systems and without MAD outliers (-out, only where a "
                       "language pair has outliers); BLEU is the WMT baseline BLEU, sacreBLEU-BLEU the "
                       "column Tables 1-2 call BLEU.")


def _figure_rows(d: dict) -> tuple[list[str], list[list[object]]]:
    metrics = list(d["metrics"])
    if "groups" in d:
        head = ["group", "count", "metric", "mean", "std", "min", "max", "q05", "q25", "q50", "q75", "q95"]
        rows: list[list[object]] = []
        for g, name in enumerate(d["groups"]):
            for j, m in enumerate(metrics):
                q = np.asarray(d["quantiles"])[g, j]
                rows.append([name, int(np.asarray(d["count"])[g]), m, *(float(np.asarray(d[k])[g, j])
                             for k in ("mean", "std", "min", "max")), *map(float, q)])
        return head, rows
    x = "n" if "n" in d else "start"
    r, lo, hi = (np.asarray(d[k]) for k in ("r", "low", "high"))
    head = [x, *metrics, *(f"{m} low" for m in metrics), *(f"{m} high" for m in metrics)]
    return head, [[int(v), *map(float, r[i]), *map(float, lo[i]), *map(float, hi[i])]
                  for i, v in enumerate(np.asarray(d[x]))]


def _draw(f: Figure) -> bytes:
    """The figure drawn with :mod:`mtscore.analysis.plots` (needs matplotlib: the ``plot`` extra)."""
    from ...analysis import plots

    d = f.data
    if f.key == "fig1-topn":
        return plots.topn_plot(d, list(d["metrics"]), title=f.title)
    if f.key.startswith("fig1-rolling"):
        return plots.rolling_plot(d, list(d["metrics"]), int(d["window"]), title=f.title)
    return plots.subset_boxplot(d, list(d["metrics"]), title=f.title)


def _finish(f: Figure) -> Figure:
    f.head, f.points = _figure_rows(f.data)
    f.draw = _draw
    return f


def _figure1(sls: dict[str, SysLevel], lp: str = "de-en") -> list[Figure]:
    sl = sls[lp]
    M = np.array([sl.scores[sl.metrics.index(c)] for c in FIG_METRICS.values()])
    names = list(FIG_METRICS)
    order = np.argsort(-sl.human, kind="mergesort")
    figs = [Figure("fig1-topn", f"Figure 1 (top-N): Pearson r over the top N {lp} systems by DA",
                   {"lp": lp, "metrics": names, "systems_by_da": [_short(sl.systems[i]) for i in order],
                    **top_n(sl.human, M, min_n=4, ci=True, n_resamples=N_BOOT, seed=SEED)},
                   "n (k,) systems kept (best first, N = all .. 4); r (k, metrics) Pearson r; low / high "
                   f"(k, metrics) 95% percentile bootstrap interval ({N_BOOT} resamples of the systems, as "
                   "Mathur 2021, Fig. 6.7).")]
    for w in (4, 8):
        figs.append(Figure(f"fig1-rolling{w}", f"Figure 1 (rolling window, w = {w}): Pearson r over {w} "
                           f"consecutive {lp} systems sorted by DA",
                           {"lp": lp, "metrics": names, "window": w,
                            **rolling_window(sl.human, M, window=w, ci=True, n_resamples=N_BOOT, seed=SEED)},
                           "start (k,) index of the window's worst system (ascending DA); r (k, metrics); "
                           f"low / high (k, metrics) 95% bootstrap interval ({N_BOOT} resamples)."))
    return figs


def _figure2(sls: dict[str, SysLevel], lp: str = "en-de", k: int = 10) -> Figure:
    sl = sls[lp]
    names = [_short(s) for s in sl.systems]
    M = np.array([sl.scores[sl.metrics.index(c)] for c in FIG_METRICS.values()])
    marked = [names.index("en_de_task"), names.index("online-X")]
    res = subset_correlations(sl.human, M, k=k, marked=marked, names=names)
    return Figure("fig2-subsets", f"Figure 2: Pearson r over every {k}-system subset of the {len(names)} {lp} "
                  "systems, by the outliers a subset contains",
                  {"lp": lp, "metrics": list(FIG_METRICS), **res},
                  "groups (G,) outliers held; count (G,); mean / std / min / max (G, metrics); quantiles "
                  "(G, metrics, 5) at 5/25/50/75/95%.")


def _draw_scatter(f: Figure) -> bytes:
    from ...analysis.plots_meta import outlier_scatter_panels

    d = f.data
    return outlier_scatter_panels(d["human"], {m: d["scores"][i] for i, m in enumerate(d["metrics"])},
                                  d["outliers"], d["systems"], title=f.title)


def _scatter(sls: dict[str, SysLevel], lp: str) -> Figure:
    sl = sls[lp]
    out = mad_outliers(sl.human)
    M = np.array([sl.scores[sl.metrics.index(c)] for c in SCATTER_METRICS.values()])
    names = list(SCATTER_METRICS)
    r_all = [pearson(sl.human, row) for row in M]
    r_out = [pearson(sl.human[~out], row[~out]) for row in M]
    f = Figure(f"scatter-{lp}", f"Metric vs DA z, {lp} (Sec. 4.2 / thesis Sec. 6.2): MAD outliers marked, "
               "fits over all systems and without outliers",
               {"lp": lp, "metrics": names, "systems": [_short(s) for s in sl.systems], "human": sl.human,
                "scores": M, "outliers": out, "r_all": np.array(r_all), "r_out": np.array(r_out)},
               "systems (n,); human (n,) DA z; scores (metrics, n); outliers (n,) bool, |robust z| > 2.5 "
               "on DA z; r_all / r_out (metrics,) Pearson r over all systems / without outliers. CSV: one "
               "row per system.")
    f.head = ["system", "DA z", *names, "outlier"]
    f.points = [[f.data["systems"][i], float(sl.human[i]), *map(float, M[:, i]), "true" if out[i] else "false"]
                for i in range(len(sl.systems))]
    f.draw = _draw_scatter
    return f


def reproduce_tangled(data: str | Path) -> TangledReproduction:
    """Every table and figure the release supports. ``data``: the shared data folder (holding
    ``tangled/wmt19_sys_scores/``), or that folder itself. Raises :class:`AnalysisInputError`
    naming the first missing file."""
    sls = _load(data)
    with_out = [lp for lp in LPS if mad_outliers(sls[lp].human).any()]
    note12 = ("Pearson r with DA z, all systems (All) and without MAD outliers (-out); the language pairs "
              "with outliers; BLEU = sacreBLEU-BLEU.")
    tables = [
        _corr_table("table1", "Table 1: to-English language pairs", [lp for lp in TO_EN if lp in with_out],
                    MAIN_METRICS, sls, True, True, note12),
        _corr_table("table2", "Table 2: other language pairs", [lp for lp in EN_XX + NON_EN if lp in with_out],
                    MAIN_METRICS, sls, True, True, note12),
        _appendix("appendix-to-en", "Appendix (Table 4): to-English, every metric", TO_EN, sls),
        _appendix("appendix-en-xx", "Appendix: out of English, every metric", EN_XX, sls),
        _appendix("appendix-non-en", "Appendix: language pairs without English, every metric", NON_EN, sls),
    ]
    figures = [_finish(f) for f in (*_figure1(sls), _figure2(sls))] + [_scatter(sls, lp) for lp in SCATTER_LPS]
    outliers = {lp: [_short(s) for s, o in zip(sls[lp].systems, mad_outliers(sls[lp].human)) if o] for lp in LPS}
    extra = Extra("outliers", "Outlier systems (|robust z| > 2.5 on DA z)", ["language pair", "MAD outliers"],
                  [[lp, ", ".join(s) or "none"] for lp, s in outliers.items()])
    return TangledReproduction(tables, figures, list(UNSUPPORTED), PAPER, SOURCE, [extra], outliers)


def write_tangled(res: Reproduction, out: str | Path) -> Path:
    """Write :func:`reproduce_tangled`'s result into ``out`` (:func:`~.output.write_reproduction`)."""
    return write_reproduction(res, out, TITLE)
