"""``mtscore meta sys`` and ``mtscore meta wmt20`` (registered and dispatched by :mod:`.analysis`;
``meta seg`` is :mod:`.metaeval`, the thesis procedures :mod:`.procedures`).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ...analysis.errors import AnalysisInputError
from . import metaeval, procedures
from .analysis_output import add_output_options as _common_out
from .analysis_output import emit as _emit
from .analysis_output import warn as _warn
from .analysis_output import write_output as _write
from .parser import nonnegative_int as _nonnegative_int
from .parser import positive_int as _positive_int

__all__ = ["add_parser", "run"]


def _meta_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--outliers", default=None,
                   help="'mad' (1.4826 * MAD, |z| > 2.5 on the human scores), 'none', or a comma-separated "
                        "list of system names; the wmt20 command defaults to the official WMT20 list")
    p.add_argument("--metrics", help="comma-separated subset of metric columns (default: all complete ones)")
    p.add_argument("--bootstrap", type=_positive_int, default=1000,
                   help="bootstrap resamples for the CIs, at least 1 (default 1000)")
    p.add_argument("--seed", type=_nonnegative_int, default=12345,
                   help="random seed for the bootstrap, 0 or more (default 12345)")
    p.add_argument("--html", help="write a self-contained HTML report (figures embedded) to this path")
    p.add_argument("--subsets", type=_positive_int, help="add r over every K-system subset by outliers (Tangled Fig. 2)")
    p.add_argument("--figdir", help="also write each figure as a PNG into this folder")
    _common_out(p)


def add_parser(sub) -> None:
    """``mtscore meta sys`` and ``mtscore meta wmt20``."""
    meta = sub.add_parser("meta", help="correlations, outliers, Williams tests, CIs, DARR, reports",
                          description="System- and segment-level meta-evaluation: Pearson / Spearman / Kendall "
                                      "with and without MAD outliers, 95% bootstrap CIs, Williams test winners, "
                                      "top-N and rolling-window curves, DARR Kendall-like tau; text/JSON/CSV and "
                                      "an HTML report with figures.")
    msub = meta.add_subparsers(dest="cmd", required=True)
    m1 = msub.add_parser("sys", help="a system-level table 'LP SYSTEM HUMAN <metric...>'",
                         description="Meta-evaluate a whitespace table with columns LP SYSTEM HUMAN and one column "
                                     "per metric (WMT20 results / Tangled WMT19 layout), one language pair per file. "
                                     "Systems whose name starts with 'Human' are dropped. Metrics must be oriented "
                                     "higher = better. Scores are plain decimal numbers (no 1_000, no full-width "
                                     "digits, no inf); NA marks a missing metric score.")
    m1.add_argument("--scores", required=True, help="path of the system-level table")
    m1.add_argument("--lp", help="label for the language pair (default: the LP column)")
    _meta_opts(m1)
    m2 = msub.add_parser("wmt20", help="one WMT20 language pair from the wmt20-metrics release",
                         description="Rebuild the WMT20 metrics-task analysis for one language pair: system level "
                                     "from results/output/system-level, the official outlier list, and DARR "
                                     "Kendall-like tau from the segment DA for every segment-level metric present.")
    m2.add_argument("--data", required=True, help="the wmt20-metrics folder")
    m2.add_argument("--lp", required=True, help="language pair, e.g. de-en (en-iu_full / en-iu_news for en-iu)")
    m2.add_argument("--seg-metrics", default="chrF,TER",
                    help="segment-level metrics for DARR (default chrF,TER; 'none' to skip)")
    _meta_opts(m2)
    procedures.add_meta_commands(msub)
    metaeval.add_parser(msub)  # mtscore meta seg


def _select_metrics(sl, spec: str | None):
    if spec is None:
        return sl
    want = [m.strip() for m in spec.split(",") if m.strip()]
    if not want:
        raise AnalysisInputError(f"--metrics {spec!r}: no metric names; give a comma-separated list")
    missing = [m for m in want if m not in sl.metrics]
    if missing:
        raise AnalysisInputError(f"--metrics: unknown metric(s) {', '.join(missing)}; "
                                 f"available: {', '.join(sl.metrics)}")
    idx = [sl.metrics.index(m) for m in want]
    from ...analysis.data.released import SysLevel

    return SysLevel(sl.lp, sl.systems, sl.human, want, sl.scores[idx], sl.human_raw, sl.extra)


def _outliers(spec: str | None, default: list[str] | None, systems: Sequence[str]) -> list[str] | None:
    """The outlier systems named by ``--outliers`` (None = MAD); unknown names are an error."""
    if spec is None:
        return default
    if spec == "mad":
        return None
    if spec == "none":
        return []
    names = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [s for s in names if s not in systems]
    if unknown:
        raise AnalysisInputError(f"--outliers: unknown system(s) {', '.join(unknown)}; the table's systems: "
                                 f"{', '.join(systems)} (or 'mad', 'none')")
    return names


def _load_meta(args: argparse.Namespace):
    """(SysLevel, default outlier list) for ``meta sys`` / ``meta wmt20``."""
    from ...analysis import data as datasets

    if args.cmd == "sys":
        sl = datasets.load_sys_level(args.scores)
        if args.lp:
            sl.lp = args.lp
        return sl, None
    root = Path(args.data)
    if not (root / "results").is_dir():
        raise AnalysisInputError(f"--data {root}: not the wmt20-metrics folder (no results/ inside)")
    sysdir = root / "results" / "output" / "system-level"
    if not (sysdir / f"DA-newstest2020-{args.lp.replace('-', '')}-sys-scores.csv").exists():
        have = sorted(f.name.split("-")[2] for f in sysdir.glob("DA-newstest2020-*-sys-scores.csv"))
        lps = [f"{h[:2]}-{h[2:]}" for h in have]
        raise AnalysisInputError(f"--lp {args.lp}: no system-level table in {sysdir}; "
                                 f"language pairs there: {', '.join(lps) or 'none'}")
    return datasets.wmt20_sys_level(root, args.lp), datasets.wmt20_outliers(root, args.lp)


def _darr(args: argparse.Namespace, res: dict) -> dict:
    """DARR Kendall-like tau for ``--seg-metrics`` into ``res['darr']``; returns the segment DA."""
    from ...analysis import data as datasets
    from ...analysis.metaeval.darr import darr_kendall, darr_pairs

    root, base = Path(args.data), args.lp.split("_")[0]
    da = datasets.wmt20_seg_da(root, base)
    res["darr"] = {}
    b_all, w_all = darr_pairs(da["sys"], da["sid"], da["raw"])
    b_ex, w_ex = darr_pairs(da["sys"], da["sid"], da["raw"], exclude_systems=res["outliers"])
    for m in [x.strip() for x in args.seg_metrics.split(",") if x.strip()]:
        try:
            sc = datasets.wmt20_seg_metric(root, m, base, da)
        except FileNotFoundError as exc:
            _warn(f"skipping segment-level metric {m}: {exc}")
            continue
        a, e = darr_kendall(sc, b_all, w_all), darr_kendall(sc, b_ex, w_ex)
        res["darr"][m] = {"tau_all": a["tau"], "n_all": a["n"], "tau_excl": e["tau"], "n_excl": e["n"]}
    return da


def _pairwise(args: argparse.Namespace, res: dict, systems: list[str], da: dict):
    """Metric-vs-human significance decisions over system pairs (None when not possible)."""
    import numpy as np

    from ...analysis import data as datasets
    from ...analysis.metaeval.system_pairs import error_table, paired_ttest_all, pairwise_decisions

    root, base = Path(args.data), args.lp.split("_")[0]
    groups = {s: da["z"][da["sys"] == s] for s in systems}
    if not all(len(g) for g in groups.values()):
        return None
    scores, pvals = {}, {}
    for m in res["darr"]:
        try:
            X = datasets.wmt20_seg_metric_matrix(root, m, base, systems)
        except (FileNotFoundError, ValueError) as exc:
            _warn(f"no pairwise analysis for {m}: {exc}")
            continue
        if np.nanpercentile(np.abs(X), 95) <= 1.5:
            X = 100.0 * X  # express 0-1 scores in points, like sacreBLEU, for the delta bins
        scores[m], pvals[m] = paired_ttest_all(X)
    if not scores:
        return None
    decisions = pairwise_decisions(systems, groups, scores, pvals)
    res["pairwise"] = {m: dict(error_table(decisions, m).items()) for m in scores}
    return decisions


def run(args: argparse.Namespace) -> int:
    if args.cmd == "seg":  # mtscore meta seg (metaeval.py)
        return args.run_metaeval(args)
    from ...analysis.metaeval import report

    sl, default_out = _load_meta(args)
    sl = _select_metrics(sl, args.metrics)
    outliers = _outliers(args.outliers, default_out, sl.systems)
    res = report.meta_evaluate(sl, outliers, n_resamples=args.bootstrap, seed=args.seed, subsets_k=args.subsets)
    for note in res["notes"]:
        _warn(note)
    decisions = None
    if args.cmd == "wmt20" and args.seg_metrics.lower() != "none":
        da = _darr(args, res)
        if res["darr"]:
            decisions = _pairwise(args, res, list(sl.systems), da)
    text = {"text": report.render_text, "json": report.render_json, "csv": report.render_csv}[args.format](res)
    figs = report.figures_for(res, sl, decisions=decisions) if args.html or args.figdir else {}
    page = report.render_html(res, figs) if args.html else None
    # everything is computed: only now write, each file atomically
    _emit(text, args.output)
    if args.figdir:
        d = Path(args.figdir)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AnalysisInputError(f"--figdir {d}: {exc.strerror}") from None
        for name, png in figs.items():
            safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
            _write("--figdir", str(d / f"{safe}.png"), png)
    if page is not None:
        _write("--html", args.html, page)
        print(f"wrote {args.html}", file=sys.stderr)
    return 0
