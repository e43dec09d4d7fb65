"""The WMT20 metrics task (Mathur, Wei, Freitag, Ma & Bojar 2020, "Results of the WMT20 Metrics
Shared Task", WMT 2020), reproduced from its official release (``WMT-Metrics-task/wmt20-metrics``)
and compared with the official outputs that release holds (``results/output/``), which are the
values the findings paper prints (at three decimals).

Reproduced from ``results/output/system-level/DA-<refset>-<lp>-sys-scores.csv`` (DA z and every
metric's system score, merged by the task's own script) and the curated outlier list
``manual-evaluation/outlier-systems-dict.json``, for every language pair and reference set:

* ``sys-pearson-excl``: Pearson r without the outlier systems (Human-* excluded), against
  ``DA-<key>-cor-excloutl.csv``;
* ``sys-pearson-all``: Pearson r over all MT systems, against the findings' LaTeX tables
  ``results/tables/tbl-DA-Pearson-MTall-exclhuman-{toen,ento}.tex`` (3 decimals; the only place
  the release holds it). Their language-pair headers are permuted relative to the data columns,
  so each printed column is assigned to the pair whose system count and values it holds, and the
  assignment is shown beside the table;
* ``sys-kendall-all``: Kendall tau-b over all MT systems, against ``DA-<key>-cor.csv``;
* ``sys-winners``: the Williams-test winners without outliers (a metric wins unless another one is
  significantly better, one-sided p < 0.05), against the ``Winner`` column of the same file.;
* ``sys-williams``: per key, the significant Williams pairs and whether every p-value equals the
  official ``DA-<key>-sig[-excloutl].csv`` matrix (all systems and without outliers).

Segment level (``seg-darr``): the DARR Kendall-like tau of the 12 metrics whose segment-level
score files the snapshot holds (chrF, TER and 10 submissions; the others are >= 4 MiB and absent)
for every language pair they cover, all systems and without outliers,
against ``results/output/seglevel_{allsys,excloutl}/RR-newstest2020-<lp>-seg-nohy-cor.csv``;
``seg-darr-ci`` (:mod:`.wmt20_segci`, ours: the paper prints none): their 95% bootstrap intervals;
document level (``doc-darr``, :mod:`.wmt20_doc`): the same over documents for every metric with
document scores (a document score over fewer than 2 rated segments takes part in no pair, as in the
task's pair builder).

:func:`reproduce_wmt20` returns the tables; the comparison is at 12 decimals for the system-level
CSV files (the files print 16 significant digits; the reproduction differs from them by float
rounding, < 1e-13) and at the files' own 4 significant digits for DARR.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ...analysis.correlation import kendall, pearson
from ...analysis.data import read_cor, read_darr_cor, read_matrix
from ...analysis.data.released import SysLevel, load_sys_level, wmt20_outliers, wmt20_seg_da, wmt20_seg_metric
from ...analysis.errors import AnalysisInputError
from ...analysis.metaeval.darr import darr_kendall, darr_pairs
from ...analysis.metaeval.williams import williams_matrix, winners, wmt_sig_table
from .model import Cell, Extra, Reproduction, Table
from .output import write_reproduction
from .wmt20_doc import doc_files, doc_table
from .wmt20_segci import seg_ci_table

__all__ = ["SEG_LPS", "SEG_METRICS", "SEG_SUBMISSIONS", "SYS_KEYS", "UNSUPPORTED", "reproduce_wmt20", "required_files", "write_wmt20"]

#: system-level keys: the suffix of the release's DA-<key>-cor*.csv files -> (refset, lp code)
SYS_KEYS = {
    **{lp: ("newstest2020", lp) for lp in (
        "csen", "deen", "iuen", "jaen", "kmen", "plen", "psen", "ruen", "taen", "zhen",
        "encs", "ende", "eniu_full", "eniu_news", "enja", "enpl", "enru", "enta", "enzh")},
    "deen_B": ("newstestB2020", "deen"), "deen_M": ("newstestM2020", "deen"),
    "ende_B": ("newstestB2020", "ende"), "ende_M": ("newstestM2020", "ende"), "ende_P": ("newstestP2020", "ende"),
    "enzh_B": ("newstestB2020", "enzh"), "enzh_M": ("newstestM2020", "enzh"),
    "ruen_B": ("newstestB2020", "ruen"), "ruen_M": ("newstestM2020", "ruen"),
    "zhen_B": ("newstestB2020", "zhen"), "zhen_M": ("newstestM2020", "zhen"),
}
#: segment-level language pairs (DARR) and the metrics whose segment scores the snapshot holds
SEG_LPS = ["cs-en", "de-en", "iu-en", "ja-en", "km-en", "pl-en", "ps-en", "ru-en", "ta-en", "zh-en",
           "en-cs", "en-de", "en-iu", "en-ja", "en-pl", "en-ru", "en-ta", "en-zh"]
SEG_METRICS = ["chrF", "TER"]
#: submitted metrics whose segment scores the snapshot holds (final-metric-scores/submissions/)
SEG_SUBMISSIONS = ["BAQ_dyn", "BAQ_static", "EQ_dyn", "EQ_static", "SWSS+METEOR", "YiSi-2", "Yisi-combi",
                   "bleurt-combi", "parbleu", "parchrf++"]
#: what the findings paper reports but this reproduction does not rebuild: (item, reason)
UNSUPPORTED = [
    ("Segment-level DARR tau of sentBLEU, chrF++ and 18 submitted metrics (BLEURT, COMET*, prism, YiSi-0/1, ...)",
     "their final-metric-scores/*.seg.score.gz files are >= 4 MiB and absent from the snapshot "
     "(MISSING_IN_SNAPSHOT.txt); the 12 metrics whose files it holds stand for the procedure"),
    ("Human-A/B/P rows", "the task's correlations exclude the human 'systems'; so does this reproduction"),
]

TITLE = "WMT20 metrics task (Mathur et al. 2020): reproduction"
PAPER = ("Mathur, Wei, Freitag, Ma & Bojar (2020), Results of the WMT20 Metrics Shared Task (WMT 2020): "
         "system-level Pearson r without outliers, Kendall tau, Williams-test winners; segment-level DARR tau")
SOURCE = "github.com/WMT-Metrics-task/wmt20-metrics @3e434fc (manual-evaluation/, results/output/)"

#: why two winner cells differ (esim and paresim-1, en-iu full)
TWIN_NOTE = ("Twin metrics (identical scores: esim = paresim-1, Yisi-combi = bleurt-Yisi-combi) make the Williams "
             "statistic 0/0; the official R code printed NaN there (counted as 'beaten', so neither twin wins) "
             "except for esim / paresim-1 on eniu_full, where rounding noise gave a non-significant p (0.12) and "
             "both stay winners; the reproduction treats every twin pair alike, so those two cells differ.")

_SYS = Path("results/output/system-level")


def _root(data: str | Path) -> Path:
    d = Path(data)
    return d / "wmt20-metrics" if (d / "wmt20-metrics").is_dir() else d


def _lp(code: str) -> str:
    """'eniu_full' -> 'en-iu_full', 'deen' -> 'de-en' (keys of the outlier list)."""
    base, _, tail = code.partition("_")
    return f"{base[:2]}-{base[2:]}" + (f"_{tail}" if tail else "")


def required_files(data: str | Path) -> list[Path]:
    """Every file the reproduction reads (paths under ``DATA/wmt20-metrics`` or ``DATA``)."""
    r = _root(data)
    out = [r / "manual-evaluation" / "outlier-systems-dict.json"]
    for key, (refset, code) in SYS_KEYS.items():
        out += [r / _SYS / f"DA-{refset}-{code}-sys-scores.csv", r / _SYS / f"DA-{key}-cor.csv",
                r / _SYS / f"DA-{key}-cor-excloutl.csv", r / _SYS / f"DA-{key}-sig-excloutl.csv"]
    for lp in SEG_LPS:
        out.append(r / "manual-evaluation" / "DA" / f"metrics-ad-seg-scores-{lp}.csv")
        for sub in ("allsys", "excloutl"):
            out.append(r / "results" / "output" / f"seglevel_{sub}" /
                       f"RR-newstest2020-{lp.replace('-', '')}-seg-nohy-cor.csv")
    out += [r / "final-metric-scores" / "baselines" / f"{m}.seg.score.gz" for m in SEG_METRICS]
    out += [r / "final-metric-scores" / "submissions" / f"{m}.seg.score.gz" for m in SEG_SUBMISSIONS]
    out += [r / _TEX.format(part=part) for part in ("toen", "ento")]
    out += doc_files(r)
    return out


def _check(data: str | Path) -> Path:
    for p in required_files(data):
        if not p.is_file():
            raise AnalysisInputError(
                f"missing data file {p} (the reproduction needs the WMT20 metrics-task release, "
                "github.com/WMT-Metrics-task/wmt20-metrics)")
    return _root(data)


def _printed(v: float, digits: int) -> str:
    return f"{v:.{digits}f}"


def _williams(sub: SysLevel, idx: dict[str, int], path: Path) -> tuple[list[str], np.ndarray, int, int, bool]:
    """Williams p-values of the metrics in ``path``'s order: (metrics, WMT-layout table with the
    twin cells as released, significant pairs reproduced, significant pairs released, all equal)."""
    rows, _cols, ref = read_matrix(path)
    rr, p = williams_matrix(sub.human, np.vstack([sub.scores[idx[m]] for m in rows]), only_better=False)
    with np.errstate(invalid="ignore"):
        tab = wmt_sig_table(rr, p)
    n_ours = int((~np.isnan(tab) & (tab != 0.12)).sum())
    n_ref = int((~np.isnan(ref) & (ref != 0.12)).sum())
    # twin metrics (identical scores): r23 = 1 makes the statistic 0/0; R printed NaN or, through
    # rounding noise, the 0.12 sentinel
    twin = np.isnan(tab) & np.isclose(rr[:, None], rr[None, :], rtol=0, atol=1e-12)
    same = bool(np.all(np.isnan(ref[twin]) | (ref[twin] == 0.12)))
    cmp = tab.copy()
    cmp[twin] = ref[twin]
    ok = ~np.isnan(ref)
    same = same and bool(np.array_equal(np.isnan(cmp), np.isnan(ref))
                         and np.allclose(cmp[ok], ref[ok], rtol=1e-9, atol=1e-13))
    return rows, tab, n_ours, n_ref, same


def _sys_tables(r: Path) -> list[Table]:
    keys = list(SYS_KEYS)
    pe: dict[tuple[str, str], Cell] = {}
    ke: dict[tuple[str, str], Cell] = {}
    wi: dict[tuple[str, str], Cell] = {}
    wl: dict[tuple[str, str], Cell] = {}
    metrics: dict[str, None] = {}
    for key, (refset, code) in SYS_KEYS.items():
        sl: SysLevel = load_sys_level(r / _SYS / f"DA-{refset}-{code}-sys-scores.csv")
        idx = {m: i for i, m in enumerate(sl.metrics)}
        so = sl.without(wmt20_outliers(r, _lp(code)))
        cor = read_cor(r / _SYS / f"DA-{key}-cor.csv")
        for m, k_ref in zip(cor.column("metric").to_pylist(), cor.column("Kendall").to_pylist()):
            metrics.setdefault(m)
            ke[(m, key)] = Cell("sys-kendall-all", m, key, float(kendall(sl.human, sl.scores[idx[m]])),
                                _printed(k_ref, 12), f"DA-{key}-cor.csv")
        cx = read_cor(r / _SYS / f"DA-{key}-cor-excloutl.csv")
        names = cx.column("metric").to_pylist()
        for m, p_ref in zip(names, cx.column("Pearson").to_pylist()):
            metrics.setdefault(m)
            pe[(m, key)] = Cell("sys-pearson-excl", m, key, float(pearson(so.human, so.scores[idx[m]])),
                                _printed(p_ref, 12), f"DA-{key}-cor-excloutl.csv")
        for sub, tag in ((sl, "all"), (so, "-out")):
            name = f"DA-{key}-sig{'-excloutl' if tag == '-out' else ''}.csv"
            if not (r / _SYS / name).is_file():  # the alternative reference sets have no all-systems file
                for col in ("significant", "p equal"):
                    wl[(key, f"{tag} {col}")] = Cell("sys-williams", key, f"{tag} {col}", None,
                                                     reason=f"no {name} in the release")
                continue
            rows, tab, n_ours, n_ref, same = _williams(sub, idx, r / _SYS / name)
            wl[(key, f"{tag} significant")] = Cell("sys-williams", key, f"{tag} significant", float(n_ours),
                                                   str(n_ref), name)
            wl[(key, f"{tag} p equal")] = Cell("sys-williams", key, f"{tag} p equal", float(same), "1", name)
        with np.errstate(invalid="ignore"):
            win = winners(tab, nan_beats=True)
        wref = dict(zip(names, cx.column("Winner").to_pylist()))
        for m, w in zip(rows, win):
            wi[(m, key)] = Cell("sys-winners", m, key, float(bool(w)), "1" if wref[m] in (True, "True") else "0",
                                f"DA-{key}-cor-excloutl.csv")
    rows_all = list(metrics)
    for cells, tkey in ((pe, "sys-pearson-excl"), (ke, "sys-kendall-all"), (wi, "sys-winners")):
        for m in rows_all:
            for key in keys:
                if (m, key) not in cells:
                    cells[(m, key)] = Cell(tkey, m, key, None, reason=f"no {m} scores for {key} in the release")
    return [
        Table("sys-pearson-excl", "System level: Pearson r without outliers", rows_all, keys, pe,
              "Pearson r of each metric with DA z over the MT systems minus the curated outliers "
              "(outlier-systems-dict.json); _B/_M/_P = the alternative reference sets. Official: "
              "DA-<key>-cor-excloutl.csv, compared at 12 decimals."),
        Table("sys-kendall-all", "System level: Kendall tau over all MT systems", rows_all, keys, ke,
              "Kendall tau-b with DA z over all MT systems (Human-* excluded). Official: DA-<key>-cor.csv, "
              "compared at 12 decimals."),
        Table("sys-winners", "System level: Williams-test winners without outliers", rows_all, keys, wi,
              "1 = no other metric correlates significantly better (Williams test, one-sided p < 0.05, "
              "outliers excluded). Official: the Winner column of DA-<key>-cor-excloutl.csv. " + TWIN_NOTE),
        Table("sys-williams", "System level: Williams test p-value matrices", keys,
              [f"{t} {c}" for t in ("all", "-out") for c in ("significant", "p equal")], wl,
              "Per key, all MT systems and without outliers: the number of metric pairs with a significant "
              "Williams test (one-sided p < 0.05, the better-correlating metric first) reproduced vs the "
              "official DA-<key>-sig[-excloutl].csv, and 'p equal' = 1 when every p-value agrees (relative "
              "1e-9; a twin pair, where the statistic is 0/0, may read NaN or the 0.12 sentinel there)."),
    ]


_TEX = "results/tables/tbl-DA-Pearson-MTall-exclhuman-{part}.tex"


def _tex_columns(path: Path) -> list[tuple[str, int, dict[str, str]]]:
    """The columns of a findings LaTeX table: (header, systems row, {metric: printed value})."""
    lines = path.read_text(encoding="utf-8").splitlines()
    heads = [ln for ln in lines if ln.startswith("{} &")]
    if len(heads) < 2:
        raise AnalysisInputError(f"{path}: no header and system-count rows ('{{}} & ...')")
    names = [c.strip(" \\").replace("\\_", "_") for c in heads[0].split("&")[1:]]
    counts = [int(c.strip(" \\")) for c in heads[1].split("&")[1:]]
    cols: list[tuple[str, int, dict[str, str]]] = [(n, k, {}) for n, k in zip(names, counts)]
    for ln in lines:
        mm = re.match(r"\\metric\{(.+?)\}\s*&(.*)\\\\", ln)
        if not mm:
            continue
        metric = mm.group(1).replace("\\_", "_")
        for (_, _, vals), cell in zip(cols, mm.group(2).split("&")):
            t = re.sub(r"\\textbf\{(.*)\}", r"\1", cell.strip())
            if t != "$-$":
                vals[metric] = t.replace("$-$", "-")
    return cols


def _pearson_all_table(r: Path) -> tuple[Table, Extra]:
    """Pearson r over all MT systems against the findings' LaTeX tables (3 decimals). Their
    language-pair headers are permuted relative to the data below them (a release bug, like the
    DARR *-agree.csv one): each printed column is assigned to the one language pair whose system
    count and every value agree (within 1.5e-3), and the assignment is listed beside the table."""
    keys = [k for k, (refset, _) in SYS_KEYS.items() if refset == "newstest2020"]
    ours: dict[str, dict[str, float]] = {}
    nsys: dict[str, int] = {}
    for key in keys:
        refset, code = SYS_KEYS[key]
        sl = load_sys_level(r / _SYS / f"DA-{refset}-{code}-sys-scores.csv")
        nsys[key] = len(sl.human)
        ours[key] = {m: float(pearson(sl.human, sl.scores[i])) for i, m in enumerate(sl.metrics)
                     if not np.isnan(sl.scores[i]).any()}
    printed: dict[str, tuple[str, dict[str, str]]] = {}
    mapping: list[list[str]] = []
    for part in ("toen", "ento"):
        src = _TEX.format(part=part)
        for head, k, vals in _tex_columns(r / src):
            hits = [key for key in keys if nsys[key] == k and sum(m in ours[key] for m in vals) >= 10
                    and all(abs(ours[key][m] - float(v)) <= 1.5e-3 for m, v in vals.items() if m in ours[key])]
            target = hits[0] if len(hits) == 1 and hits[0] not in printed else None
            if target is not None:
                printed[target] = (f"{src.rsplit('/', 1)[1]} column '{head}'", vals)
            said = _lp(target) if target else "none (ambiguous)"
            mapping.append([src.rsplit("/", 1)[1], head, str(k), said, "yes" if said == head else "NO"])
    cells: dict[tuple[str, str], Cell] = {}
    metrics = sorted({m for o in ours.values() for m in o}, key=str.lower)
    for key in keys:
        where, vals = printed.get(key, ("", {}))
        for m in metrics:
            v = ours[key].get(m)
            cells[(m, key)] = Cell("sys-pearson-all", m, key, v, vals.get(m) if v is not None else None,
                                   where or None, None if v is not None else f"no {m} scores for {key}")
    tab = Table("sys-pearson-all", "System level: Pearson r over all MT systems", metrics, keys, cells,
                "Pearson r with DA z over all MT systems (Human-* excluded). Official: the findings' LaTeX "
                "tables tbl-DA-Pearson-MTall-exclhuman-{toen,ento}.tex (3 decimals), each printed column "
                "assigned to the language pair whose data it holds (see 'LaTeX columns').")
    ex = Extra("tex-columns", "LaTeX columns: printed header vs the language pair whose data it holds",
               ["file", "printed header", "systems", "data of", "header right"], mapping,
               "Assigned by the system count and all values (within 1.5e-3); the headers of the released "
               "all-systems tables do not match the data columns below them.")
    return tab, ex


def _seg_table(r: Path) -> tuple[Table, Table]:
    """The DARR tau table and its bootstrap intervals (:mod:`.wmt20_segci`, ours)."""
    cols = [f"{lp} {sub}" for lp in SEG_LPS for sub in ("all", "-out")]
    das = {lp: wmt20_seg_da(r, lp) for lp in SEG_LPS}
    pairs, refs = {}, {}
    for lp in SEG_LPS:
        da = das[lp]
        for sub, tag, excl in (("allsys", "all", ()), ("excloutl", "-out", wmt20_outliers(r, lp))):
            pairs[(lp, tag)] = darr_pairs(da["sys"], da["sid"], da["raw"], exclude_systems=excl)
            name = f"seglevel_{sub}/RR-newstest2020-{lp.replace('-', '')}-seg-nohy-cor.csv"
            ref = read_darr_cor(r / "results" / "output" / name)
            refs[(lp, tag)] = (name, dict(zip(ref.column("metric").to_pylist(), ref.column("tau").to_pylist())))
    cells: dict[tuple[str, str], Cell] = {}
    metrics = SEG_METRICS + SEG_SUBMISSIONS
    scores: dict[tuple[str, str], np.ndarray] = {}
    for m in metrics:  # metric-outer: each score file is read once
        for lp in SEG_LPS:
            v = scores[(m, lp)] = wmt20_seg_metric(r, m, lp, das[lp])
            for tag in ("all", "-out"):
                col = f"{lp} {tag}"
                if np.isnan(v).all():
                    cells[(m, col)] = Cell("seg-darr", m, col, None, reason=f"{m} has no {lp} segment scores")
                    continue
                name, refd = refs[(lp, tag)]
                tau = float(darr_kendall(v[None, :], *pairs[(lp, tag)])["tau"][0])
                # the file prints 4 significant digits: that is the printed text
                cells[(m, col)] = Cell("seg-darr", m, col, tau, f"{refd[m]:.4g}" if m in refd else None, name)
    return Table("seg-darr", "Segment level: DARR Kendall-like tau", metrics, cols, cells,
                 "tau = (Concordant - Discordant) / (C + D) over the DA pairs of MT systems whose raw scores "
                 "differ by >= 25 (metric ties count as discordant); all systems and without outliers (-out); "
                 "the metrics whose segment scores the snapshot holds. Official: "
                 "RR-newstest2020-<lp>-seg-nohy-cor.csv (4 significant digits)."), seg_ci_table(scores, pairs, metrics, SEG_LPS)


def reproduce_wmt20(data: str | Path, segment_level: bool = True) -> Reproduction:
    """Every table the release supports. ``data``: the shared data folder (holding
    ``wmt20-metrics/``) or the release itself. ``segment_level=False`` skips the DARR tables
    (about half the runtime). Raises :class:`AnalysisInputError` naming the first missing file."""
    r = _check(data)
    tables = _sys_tables(r)
    pa_tab, tex_cols = _pearson_all_table(r)
    tables.insert(0, pa_tab)
    if segment_level:
        tables += [*_seg_table(r), doc_table(r)]
    lps = sorted({_lp(c) for _, c in SYS_KEYS.values()} | set(SEG_LPS))
    outl = Extra("outliers", "Outlier systems (the release's curated list)", ["language pair", "outliers"],
                 [[lp, ", ".join(wmt20_outliers(r, lp)) or "\u2013"] for lp in lps],
                 "manual-evaluation/outlier-systems-dict.json; excluded in every '-out' / 'excl' number.")
    return Reproduction(tables, [], list(UNSUPPORTED), PAPER, SOURCE, [tex_cols, outl])


def write_wmt20(res: Reproduction, out: str | Path) -> Path:
    """Write :func:`reproduce_wmt20`'s result into ``out`` (:func:`~.output.write_reproduction`)."""
    return write_reproduction(res, out, TITLE)
