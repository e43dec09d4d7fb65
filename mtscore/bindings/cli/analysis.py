"""``mtscore meta ...`` and ``mtscore human ...`` (:mod:`.main` dispatches here).

Examples::

    mtscore meta wmt20 --data ../shared/data/wmt20-metrics --lp de-en --html de-en.html
    mtscore meta sys --scores DA-newstest2019-ende-sys-nohy-scores.csv --format json
    mtscore human ratings --ratings ad-csen-good-stnd.csv --format text
    mtscore human rater-model --ratings ad-csen-good-stnd.csv --keep 10
    mtscore human agreement ratings_all --groups groups.txt --source-groups batch5
"""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from ...analysis.errors import AnalysisInputError
from ...engine.strict_numbers import parse_number
from . import campaign, crowd, metaeval, procedures
from .parser import nonnegative_int as _nonnegative_int
from .parser import positive_float as _positive_float
from .parser import positive_int as _positive_int
from .parser import probability as _probability

__all__ = ["build_parser", "main"]


def _common_out(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json", "csv"), default="text",
                   help="what to print on stdout (default: text table)")
    p.add_argument("--output", "-o", help="write the text/json/csv result to this file instead of stdout")


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


def build_parser() -> argparse.ArgumentParser:
    from .parser import OneLineErrorParser

    ap = OneLineErrorParser(
        prog="mtscore",
        description="Meta-evaluation of MT metrics against human judgements (meta) and analysis of "
                    "Direct Assessment human evaluations (human).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("Examples::", 1)[1])
    sub = ap.add_subparsers(dest="area", required=True, parser_class=OneLineErrorParser)
    _add_meta(sub)
    _add_human(sub)
    return ap


def _add_meta(sub) -> None:
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


def _add_human(sub) -> None:
    """``mtscore human ratings``, ``rater-model`` and ``agreement``."""
    hum = sub.add_parser("human", help="DA standardisation, QC, scores, Wilcoxon, clusters, rater model",
                         description="Analyse individual DA ratings (WMT21 'ad-xxen-good-stnd.csv' layout: "
                                     "HITId WorkerId ... sys_id rid type sid score time).")
    hsub = hum.add_subparsers(dest="cmd", required=True)
    h1 = hsub.add_parser("ratings", help="segment/system scores, ranking, Wilcoxon matrix, clusters, rater QC",
                         description="Segment score = mean z of SYSTEM+REPEAT judgements; system score = mean of "
                                     "segment scores; one-sided Wilcoxon rank-sum between every pair of systems; "
                                     "rank clusters; per-worker paired t-test QC on the degraded items. Scores are plain "
                                     "decimal numbers; a rating repeated (same HITId, WorkerId, sys_id, type, sid) is "
                                     "an error, not silently counted twice.")
    h1.add_argument("--ratings", required=True, help="ratings file (tab/space separated, header)")
    h1.add_argument("--raw", action="store_true",
                    help="the score column holds raw 0-100 scores: z-standardise per worker first")
    h1.add_argument("--alpha", type=_probability, default=0.05,
                    help="significance level, between 0 and 1 (default 0.05)")
    h1.add_argument("--html", help="write an HTML report with the Wilcoxon heat map")
    _common_out(h1)
    h2 = hsub.add_parser("rater-model", help="fit the Bayesian rater model (Mathur 2021, Ch. 3)",
                         description="Fit latent item quality N(0,1) and per-worker precision Gamma(shape, scale) "
                                     "by variational Bayes (or Gibbs), with repeats tied and degraded items "
                                     "constrained below their originals; optionally refit on the most precise workers.")
    h2.add_argument("--ratings", required=True, help="ratings file (WMT21 layout)")
    h2.add_argument("--method", choices=("vb", "gibbs"), default="vb")
    h2.add_argument("--shape", type=_positive_float, default=5.0, help="Gamma prior shape k > 0 (default 5)")
    h2.add_argument("--scale", type=_positive_float, default=0.3, help="Gamma prior scale theta > 0 (default 0.3)")
    h2.add_argument("--keep", type=_positive_int, help="refit using only the KEEP most precise workers (KEEP >= 1)")
    _common_out(h2)
    _add_agreement(hsub)
    campaign.add_parsers(hsub)
    crowd.add_parsers(hsub)
    procedures.add_human_commands(hsub)


def _add_agreement(hsub) -> None:
    """``mtscore human agreement``."""
    h3 = hsub.add_parser("agreement", help="Cohen's kappa of every judge pair (as R psych), group means, CI overlap",
                         description="Cohen's kappa of every pair of judges with the Fleiss-Cohen-Everitt confidence "
                                     "interval exactly as R psych::cohen.kappa; with --groups each pair is SAME (one "
                                     "group), DIFF, SOURCE or SOURCE-REF (--source-groups), and per setting the mean "
                                     "kappa with its bootstrap CI, the share of judge pairs whose kappa CIs do not "
                                     "overlap, and the rating cross-tabulation (json) are reported (Ma et al. 2017). "
                                     "A pair without a common item, or whose judges both gave one and the same "
                                     "rating throughout, has kappa NaN (with a warning).")
    h3.add_argument("ratings", help="ratings: one column per judge and one row per item (cells separated by ; , "
                                    "tabs or blanks; NA for a missing rating), or columns judge, item, rating")
    h3.add_argument("--weights", choices=("none", "linear", "quadratic"), default="none",
                    help="unweighted kappa (none, default) or psych's weighted kappa: quadratic (psych's default "
                         "weights) or linear, on the positions of the categories the pair used (see --levels)")
    h3.add_argument("--levels", type=_levels,
                    help="the rating scale, e.g. 1-5 or 1,2,3,4,5: ratings off it are an error, and every pair's "
                         "kappa uses all of these categories (default: those the two judges used, as psych)")
    h3.add_argument("--groups", help="judge groups, one line each: 'NAME: judge judge ...'")
    h3.add_argument("--source-groups", default="",
                    help="comma-separated groups whose judges saw the source instead of a reference")
    h3.add_argument("--alpha", type=_probability, default=0.05,
                    help="1 - confidence level of the kappa CIs, between 0 and 1 (default 0.05)")
    h3.add_argument("--bootstrap", type=_positive_int, default=1000,
                    help="resamples for the CI of each setting's mean kappa, at least 1 (default 1000)")
    h3.add_argument("--seed", type=_nonnegative_int, default=12345,
                    help="random seed for the bootstrap, 0 or more (default 12345)")
    _common_out(h3)


def _levels(text: str) -> list[float]:
    """An argparse ``type``: a rating scale ``1-5`` (integers from 1 to 5) or ``1,2,3,4,5``."""
    import re

    m = re.fullmatch(r"\s*(-?[0-9]+)\s*(?:-|\.\.)\s*(-?[0-9]+)\s*", text)
    try:
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            vals = [float(v) for v in range(a, b + 1)]
        else:
            vals = [parse_number(v) for v in text.split(",") if v.strip()]  # plain decimals only
    except ValueError:
        vals = []
    if len(vals) < 2 or len(set(vals)) != len(vals) or not all(math.isfinite(v) for v in vals):
        raise argparse.ArgumentTypeError(f"must be a scale like 1-5 or 1,2,3,4,5 (2 or more distinct numbers), "
                                         f"got {text!r}")
    return sorted(vals)


def _write(option: str, path: str, data: str | bytes) -> None:
    """Write an output file atomically; a failure names the option and the requested path."""
    from ...analysis.output import write_atomic

    try:
        write_atomic(path, data)
    except OSError as exc:
        raise AnalysisInputError(f"{option} {path}: {exc.strerror}") from None


def _emit(text: str, output: str | None) -> None:
    if output:
        _write("--output", output, text)
    else:
        sys.stdout.write(text)


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot work before any computation (and before any writing)."""
    for option, path in (("--output", getattr(args, "output", None)), ("--html", getattr(args, "html", None))):
        if not path:
            continue
        folder = Path(path).resolve().parent
        if Path(path).is_dir():
            raise AnalysisInputError(f"{option} {path}: is a folder, expected a file name")
        if not folder.is_dir():
            why = "is a file, not a folder" if folder.exists() else "does not exist"
            raise AnalysisInputError(f"{option} {path}: the folder {folder} {why}")
    figdir = getattr(args, "figdir", None)
    if figdir and Path(figdir).exists() and not Path(figdir).is_dir():
        raise AnalysisInputError(f"--figdir {figdir}: exists and is not a folder")
    # every figure output needs matplotlib: say so now, not after the computation
    drawn = [f"--{k}" for k in ("plot", "png", "figdir", "html") if getattr(args, k, None)]
    if drawn:
        from ...analysis.plots import require_matplotlib

        try:
            require_matplotlib()
        except ImportError as exc:
            raise ImportError(f"{drawn[0]}: {exc}") from None


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


def _run_meta(args: argparse.Namespace) -> int:
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


def _read_ratings(path: str) -> dict:
    """The ratings file as numpy columns, checked; ``score`` is float64 and finite."""
    from ...analysis import data as loaders

    t, linenos = loaders.read_ratings_lines(path)
    need = ("WorkerId", "sys_id", "sid", "type", "score")
    missing = [c for c in need if c not in t.column_names]
    if missing:
        hdr = " ".join(t.column_names)
        looks = " (the header looks comma-separated; the file must be tab/space separated)" if "," in hdr else ""
        raise AnalysisInputError(f"{path}:1: missing column(s) {', '.join(missing)}{looks}; "
                                 f"expected the WMT21 layout HITId WorkerId ... sys_id rid type sid score time")
    if t.num_rows == 0:
        raise AnalysisInputError(f"{path}: only a header, no ratings")
    cols = {c: loaders.table_to_numpy(t, c) for c in t.column_names if c != "score"}
    cols["score"] = loaders.float_column(t, "score", linenos, path)
    if not (cols["type"] == "SYSTEM").any() and not (cols["type"] == "REPEAT").any():
        raise AnalysisInputError(f"{path}: no rating has type SYSTEM or REPEAT (column 'type'); "
                                 "there is nothing to score")
    return cols


def _human_ratings(args: argparse.Namespace, c: dict) -> dict:
    """System ranking, Wilcoxon matrix, clusters and worker QC for ``human ratings``."""
    import numpy as np

    from ...analysis import human

    score = c["score"]
    if args.raw:
        score, keep = human.standardize(c["WorkerId"], score)
        c = {k: v[keep] for k, v in c.items()}
        score = score[keep]
    seg = human.segment_scores(c["sys_id"], c["sid"], score, c["type"])
    groups = {s: seg["score"][seg["system"] == s] for s in np.unique(seg["system"])}
    names, p = human.wilcoxon_matrix(groups)
    sysz = human.system_scores(seg["system"], seg["score"])
    clusters = human.rank_clusters(p, args.alpha)
    wins = (np.nan_to_num(p, nan=1) < args.alpha).sum(axis=1)
    key = np.char.add(np.char.add(c["HITId"].astype(str), "|"),
                      np.char.add(np.char.add(c["sys_id"].astype(str), "|"), c["sid"].astype(str))) \
        if "HITId" in c else np.char.add(c["sys_id"].astype(str), c["sid"].astype(str))
    qc = human.qc_paired_ttest(c["WorkerId"], c["type"], key, score, args.alpha)
    return {"systems": names, "score": sysz["score"], "n_segments": sysz["n"], "cluster": clusters,
            "wins": wins, "wilcoxon_p": p, "workers": len(qc["worker"]),
            "workers_passing_qc": int(qc["passed"].sum())}


def _render_ratings(res: dict, fmt: str, alpha: float) -> str:
    import json

    from ...analysis.output import jsonable

    rows = list(zip(res["systems"], res["score"], res["n_segments"], res["cluster"], res["wins"]))
    if fmt == "json":
        return json.dumps(jsonable(res), indent=1) + "\n"
    if fmt == "csv":
        return "rank,cluster,system,z,n_segments,wins\n" + "".join(
            f"{i + 1},{cl},{s},{z:.6f},{n},{w}\n" for i, (s, z, n, cl, w) in enumerate(rows))
    lines = [f"{'rank':>4} {'cluster':>7} {'system':<28} {'z':>8} {'segs':>6} {'wins':>5}"]
    for i, (s, z, n, cl, w) in enumerate(rows):
        lines.append(f"{i + 1:>4} {cl:>7} {s:<28} {z:>8.3f} {n:>6} {w:>5}")
    lines.append(f"\nworkers: {res['workers']}, passing the degraded-item t-test (p <= {alpha}): "
                 f"{res['workers_passing_qc']}")
    return "\n".join(lines) + "\n"


def _ratings_html(res: dict, text: str, ratings: str, alpha: float) -> str:
    import base64
    import html

    import numpy as np

    from ...analysis import human, plots

    names = res["systems"]
    png = plots.heatmap(human.wmt_wilcoxon_table(res["wilcoxon_p"], alpha, np.nan), names, names,
                        title="one-sided Wilcoxon p (row beats column)")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>DA ranking</title></head><body>"
            f"<h1>DA ranking: {html.escape(str(ratings))}</h1><pre>{html.escape(text)}</pre>"
            f"<img src='data:image/png;base64,{base64.b64encode(png).decode()}'></body></html>")


def _rater_model(args: argparse.Namespace, c: dict) -> str:
    import json

    import numpy as np

    from ...analysis.correlation import pearson
    from ...analysis.human.rater_model import fit_rater_model, qc_links, remove_spammers
    from ...analysis.output import jsonable

    # every rating enters; repeats share their original's item, each HIT's degraded copy sits below it
    item, iu, degraded, is_sys = qc_links(c["sys_id"], c["sid"], c["type"], c.get("hit", c.get("HITId")))
    score = c["score"]
    wu, worker = np.unique(c["WorkerId"].astype(str), return_inverse=True)
    if args.keep and args.keep > len(wu):
        raise AnalysisInputError(f"--keep {args.keep}: the file has only {len(wu)} workers")
    kw = dict(prior_shape=args.shape, prior_scale=args.scale, method=args.method, degraded=degraded)
    fit = fit_rater_model(item, worker, score, n_items=len(iu), n_workers=len(wu), **kw)
    kept = np.ones(len(wu), bool)
    if args.keep:
        fit, kept = remove_spammers(item, worker, score, keep=args.keep, n_items=len(iu), **kw)
    zmean = np.bincount(item, score, len(iu)) / np.bincount(item, minlength=len(iu))
    res = {"items": int(is_sys.sum()), "workers": len(wu), "kept_workers": int(kept.sum()),
           "degraded_links": len(degraded), "iterations": fit.n_iter,
           "r_model_vs_zmean": float(pearson(zmean[is_sys], fit.item_mean[is_sys])),
           "worker": wu.tolist(), "precision": fit.worker_precision, "item": iu[is_sys].tolist(),
           "quality": fit.item_mean[is_sys]}
    if args.format == "json":
        return json.dumps(jsonable(res), indent=1) + "\n"
    if args.format == "csv":
        return "worker,precision,kept\n" + "".join(
            f"{w},{p:.6f},{int(k)}\n" for w, p, k in zip(wu, fit.worker_precision, kept))
    order = np.argsort(fit.worker_precision)
    return (f"MT items {res['items']}, workers {len(wu)}, kept {int(kept.sum())}, degraded links "
            f"{len(degraded)}, iterations {fit.n_iter}\n"
            f"Pearson(model quality, z-mean) = {res['r_model_vs_zmean']:.4f}\n"
            "least precise workers: " + ", ".join(f"{wu[i]} ({fit.worker_precision[i]:.2f})" for i in order[:5]) + "\n")


def _agreement(args: argparse.Namespace) -> dict:
    """Everything ``human agreement`` reports, computed before anything is written."""
    import numpy as np

    from ...analysis import data as loaders
    from ...analysis.human import agreement

    judges, items, R = loaders.read_judge_ratings(args.ratings, args.levels)
    groups = loaders.read_judge_groups(args.groups, judges) if args.groups else None
    source = [g.strip() for g in args.source_groups.split(",") if g.strip()]
    if source and groups is None:
        raise AnalysisInputError("--source-groups needs --groups (the file that names the groups)")
    unknown = [g for g in source if groups is not None and g not in groups]
    if unknown:
        raise AnalysisInputError(f"--source-groups: unknown group(s) {', '.join(unknown)}; the groups in "
                                 f"{args.groups}: {', '.join(groups or {})}")
    weights = None if args.weights == "none" else args.weights
    t = agreement.pairwise_kappas(R, judges, groups, weights, args.alpha, args.levels, source)
    nocommon = t.n == 0
    undefined = ~nocommon & np.isnan(t.kappa)
    for mask, why in ((nocommon, "share no rated item"),
                      (undefined, "gave one and the same rating to every common item (kappa undefined)")):
        if mask.any():
            names = [f"{a}-{b}" for a, b in zip(t.judge_a[mask], t.judge_b[mask])]
            _warn(f"{int(mask.sum())} judge pair(s) {why}: kappa is NaN for {', '.join(names[:8])}"
                  f"{', ...' if len(names) > 8 else ''}")
    settings = []
    for s in t.settings():
        v = t.kappa[t.where(s)]
        mean, lo, hi = agreement.bootstrap_mean_ci(v, args.bootstrap, seed=args.seed)
        settings.append({"setting": s, "pairs": int(v.size), "defined": int((~np.isnan(v)).sum()),
                         "mean_kappa": mean, "low": lo, "high": hi})
    return {"ratings": str(args.ratings), "judges": len(judges), "items": len(items), "weights": t.weights,
            "alpha": args.alpha, "bootstrap": args.bootstrap, "seed": args.seed,
            "groups": groups, "source_groups": source, "settings": settings,
            "nonoverlap": agreement.nonoverlap_shares(t), "pairs": t.rows(),
            "crosstab": agreement.rating_crosstab(R, t, args.levels, source)}


def _render_agreement(res: dict, fmt: str) -> str:
    import csv
    import io
    import json

    from ...analysis.output import jsonable

    if fmt == "json":
        return json.dumps(jsonable(res), indent=1) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(res["pairs"][0]), lineterminator="\n")
        w.writeheader()
        w.writerows(res["pairs"])
        return buf.getvalue()
    conf = f"{100 * (1 - res['alpha']):g}%"
    out = [f"Cohen's kappa (weights: {res['weights']}, {conf} CI as R psych::cohen.kappa) of "
           f"{len(res['pairs'])} judge pairs: {res['judges']} judges, {res['items']} items", "",
           f"{'setting':<12} {'pairs':>6} {'mean kappa':>11}   95% bootstrap CI of the mean (M={res['bootstrap']})"]
    for s in res["settings"]:
        out.append(f"{s['setting']:<12} {s['pairs']:>6} {s['mean_kappa']:>11.4f}   [{s['low']:.4f}, {s['high']:.4f}]")
    out += ["", f"judge pairs whose {conf} kappa CIs do not overlap:"]
    for r in res["nonoverlap"]:
        share = f"{100 * r['share']:.1f}%" if r["total"] else "-"
        out.append(f"{r['setting_a'] + ' vs ' + r['setting_b']:<26} {r['nonoverlap']:>7} / {r['total']:<7} {share:>6}")
    out += ["", f"{'judge_a':<10} {'judge_b':<10} {'setting':<11} {'n':>5} {'kappa':>8} {'low':>8} {'high':>8}"]
    for p in res["pairs"]:
        out.append(f"{p['judge_a']:<10} {p['judge_b']:<10} {p['setting']:<11} {p['n']:>5} {p['kappa']:>8.4f} "
                   f"{p['low']:>8.4f} {p['high']:>8.4f}")
    return "\n".join(out) + "\n"


def _run_human(args: argparse.Namespace) -> int:
    if args.cmd in campaign.COMMANDS:
        return campaign.run(args)
    if args.cmd in crowd.COMMANDS:
        return crowd.run(args)
    if args.cmd == "agreement":
        _emit(_render_agreement(_agreement(args), args.format), args.output)
        return 0
    c = _read_ratings(args.ratings)
    if args.cmd == "rater-model":
        _emit(_rater_model(args, c), args.output)
        return 0
    res = _human_ratings(args, c)
    text = _render_ratings(res, args.format, args.alpha)
    page = _ratings_html(res, text, args.ratings, args.alpha) if args.html else None
    _emit(text, args.output)
    if page is not None:
        _write("--html", args.html, page)
    return 0


def _warn(message: str) -> None:
    print(f"mtscore: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``main(['meta', 'wmt20', ...])`` / ``main(['human', 'ratings', ...])``.

    Bad input (a :class:`~mtscore.errors.UserError` such as :class:`AnalysisInputError`), an
    unreadable file (``OSError``) and a missing optional dependency print one line
    ``mtscore: error: ...`` and return 1; usage errors exit 2 (argparse); anything else is a bug
    and keeps its traceback (:data:`.runner.ANALYSIS`)."""
    from .runner import ANALYSIS, run_command

    return run_command(_run, build_parser().parse_args(argv), "mtscore", ANALYSIS)


def _run(args: argparse.Namespace) -> int:
    _check_outputs(args)
    if args.cmd in procedures.COMMANDS:
        return procedures.run(args)
    if args.area == "meta":
        return _run_meta(args)
    return _run_human(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
