"""``mtscore meta ...`` and ``mtscore human ...`` (the lead's CLI dispatches here).

Examples::

    mtscore meta wmt20 --data ../shared/data/wmt20-metrics --lp de-en --html de-en.html
    mtscore meta sys --scores DA-newstest2019-ende-sys-nohy-scores.csv --format json
    mtscore human ratings --ratings ad-csen-good-stnd.csv --format text
    mtscore human rater-model --ratings ad-csen-good-stnd.csv --keep 10
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

__all__ = ["main", "build_parser"]


def _common_out(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json", "csv"), default="text",
                   help="what to print on stdout (default: text table)")
    p.add_argument("--output", "-o", help="write the text/json/csv result to this file instead of stdout")


def _meta_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--outliers", default=None,
                   help="'mad' (1.4826 * MAD, |z| > 2.5 on the human scores), 'none', or a comma-separated "
                        "list of system names; the wmt20 command defaults to the official WMT20 list")
    p.add_argument("--metrics", help="comma-separated subset of metric columns (default: all complete ones)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the CIs (default 1000)")
    p.add_argument("--seed", type=int, default=12345, help="random seed for the bootstrap (default 12345)")
    p.add_argument("--html", help="write a self-contained HTML report (figures embedded) to this path")
    p.add_argument("--figdir", help="also write each figure as a PNG into this folder")
    _common_out(p)


def build_parser() -> argparse.ArgumentParser:
    from ..engine.errors import OneLineErrorParser

    ap = OneLineErrorParser(
        prog="mtscore",
        description="Meta-evaluation of MT metrics against human judgements (meta) and analysis of "
                    "Direct Assessment human evaluations (human).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("Examples::", 1)[1])
    sub = ap.add_subparsers(dest="area", required=True, parser_class=OneLineErrorParser)

    meta = sub.add_parser("meta", help="correlations, outliers, Williams tests, CIs, DARR, reports",
                          description="System- and segment-level meta-evaluation: Pearson / Spearman / Kendall "
                                      "with and without MAD outliers, 95%% bootstrap CIs, Williams test winners, "
                                      "top-N and rolling-window curves, DARR Kendall-like tau; text/JSON/CSV and "
                                      "an HTML report with figures.")
    msub = meta.add_subparsers(dest="cmd", required=True)
    m1 = msub.add_parser("sys", help="a system-level table 'LP SYSTEM HUMAN <metric...>'",
                         description="Meta-evaluate a whitespace table with columns LP SYSTEM HUMAN and one column "
                                     "per metric (WMT20 results / Tangled WMT19 layout). Systems whose name starts "
                                     "with 'Human' are dropped. Metrics must be oriented higher = better.")
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

    hum = sub.add_parser("human", help="DA standardisation, QC, scores, Wilcoxon, clusters, rater model",
                         description="Analyse individual DA ratings (WMT21 'ad-xxen-good-stnd.csv' layout: "
                                     "HITId WorkerId ... sys_id rid type sid score time).")
    hsub = hum.add_subparsers(dest="cmd", required=True)
    h1 = hsub.add_parser("ratings", help="segment/system scores, ranking, Wilcoxon matrix, clusters, rater QC",
                         description="Segment score = mean z of SYSTEM+REPEAT judgements; system score = mean of "
                                     "segment scores; one-sided Wilcoxon rank-sum between every pair of systems; "
                                     "rank clusters; per-worker paired t-test QC on the degraded items.")
    h1.add_argument("--ratings", required=True, help="ratings file (tab/space separated, header)")
    h1.add_argument("--raw", action="store_true",
                    help="the score column holds raw 0-100 scores: z-standardise per worker first")
    h1.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    h1.add_argument("--html", help="write an HTML report with the Wilcoxon heat map")
    _common_out(h1)
    h2 = hsub.add_parser("rater-model", help="fit the Bayesian rater model (Mathur 2021, Ch. 3)",
                         description="Fit latent item quality N(0,1) and per-worker precision Gamma(shape, scale) "
                                     "by variational Bayes (or Gibbs), with repeats tied and degraded items "
                                     "constrained below their originals; optionally refit on the most precise workers.")
    h2.add_argument("--ratings", required=True, help="ratings file (WMT21 layout)")
    h2.add_argument("--method", choices=("vb", "gibbs"), default="vb")
    h2.add_argument("--shape", type=float, default=5.0, help="Gamma prior shape k (default 5)")
    h2.add_argument("--scale", type=float, default=0.3, help="Gamma prior scale theta (default 0.3)")
    h2.add_argument("--keep", type=int, help="refit using only the KEEP most precise workers")
    _common_out(h2)
    return ap


def _emit(text: str, output: Optional[str]) -> None:
    from .report import write_atomic

    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)


def _select_metrics(sl, spec: Optional[str]):
    if not spec:
        return sl
    want = [m.strip() for m in spec.split(",") if m.strip()]
    missing = [m for m in want if m not in sl.metrics]
    if missing:
        raise SystemExit(f"mtscore meta: --metrics: unknown metric(s) {', '.join(missing)}; "
                         f"available: {', '.join(sl.metrics)}")
    idx = [sl.metrics.index(m) for m in want]
    from .datasets import SysLevel

    return SysLevel(sl.lp, sl.systems, sl.human, want, sl.scores[idx], sl.human_raw, sl.extra)


def _outliers(spec: Optional[str], default):
    if spec is None:
        return default
    if spec == "mad":
        return None
    if spec == "none":
        return []
    return [s.strip() for s in spec.split(",") if s.strip()]


def _run_meta(args) -> int:
    import numpy as np

    from . import datasets, report

    if args.cmd == "sys":
        sl = datasets.load_sys_level(args.scores)
        if args.lp:
            sl.lp = args.lp
        default_out = None
    else:
        root = Path(args.data)
        if not (root / "results").is_dir():
            raise SystemExit(f"mtscore meta wmt20: --data {root}: not the wmt20-metrics folder (no results/)")
        sl = datasets.wmt20_sys_level(root, args.lp)
        default_out = datasets.wmt20_outliers(root, args.lp)
    sl = _select_metrics(sl, args.metrics)
    res = report.meta_evaluate(sl, _outliers(args.outliers, default_out), n_resamples=args.bootstrap, seed=args.seed)
    if args.cmd == "wmt20" and args.seg_metrics.lower() != "none":
        from .darr import darr_kendall, darr_pairs

        base = args.lp.split("_")[0]
        da = datasets.wmt20_seg_da(root, base)
        res["darr"] = {}
        b_all, w_all = darr_pairs(da["sys"], da["sid"], da["raw"])
        b_ex, w_ex = darr_pairs(da["sys"], da["sid"], da["raw"], exclude_systems=res["outliers"])
        for m in [x.strip() for x in args.seg_metrics.split(",") if x.strip()]:
            try:
                sc = datasets.wmt20_seg_metric(root, m, base, da)
            except FileNotFoundError as exc:
                print(f"mtscore meta wmt20: skipping {m}: {exc}", file=sys.stderr)
                continue
            a, e = darr_kendall(sc, b_all, w_all), darr_kendall(sc, b_ex, w_ex)
            res["darr"][m] = {"tau_all": a["tau"], "n_all": a["n"], "tau_excl": e["tau"], "n_excl": e["n"]}
    decisions = None
    if args.cmd == "wmt20" and res.get("darr"):
        from .pairwise import paired_ttest_all, pairwise_decisions

        systems = [s for s in sl.systems]
        groups = {s: da["z"][da["sys"] == s] for s in systems}
        if all(len(g) for g in groups.values()):
            scores, pvals = {}, {}
            for m in res["darr"]:
                try:
                    X = datasets.wmt20_seg_metric_matrix(root, m, base, systems)
                except (FileNotFoundError, ValueError) as exc:
                    print(f"mtscore meta wmt20: no pairwise analysis for {m}: {exc}", file=sys.stderr)
                    continue
                if np.nanpercentile(np.abs(X), 95) <= 1.5:
                    X = 100.0 * X  # express 0-1 scores in points, like sacreBLEU, for the delta bins
                scores[m], pvals[m] = paired_ttest_all(X)
            if scores:
                decisions = pairwise_decisions(systems, groups, scores, pvals)
                from .pairwise import error_table

                res["pairwise"] = {m: {k: v for k, v in error_table(decisions, m).items()} for m in scores}
    text = {"text": report.render_text, "json": report.render_json, "csv": report.render_csv}[args.format](res)
    _emit(text, args.output)
    if args.html or args.figdir:
        figs = report.figures_for(res, sl, decisions=decisions)
        if args.figdir:
            d = Path(args.figdir)
            d.mkdir(parents=True, exist_ok=True)
            for name, png in figs.items():
                safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
                report.write_atomic(str(d / f"{safe}.png"), png)
        if args.html:
            report.write_atomic(args.html, report.render_html(res, figs))
            print(f"wrote {args.html}", file=sys.stderr)
    return 0


def _read_ratings(path):
    from . import loaders

    t = loaders.read_ratings(path)
    need = ("WorkerId", "sys_id", "sid", "type", "score")
    missing = [c for c in need if c not in t.column_names]
    if missing:
        raise SystemExit(f"mtscore human: {path}: missing column(s) {', '.join(missing)}")
    cols = {c: loaders.table_to_numpy(t, c) for c in t.column_names}
    return cols


def _run_human(args) -> int:
    import json

    import numpy as np

    from . import human
    from .report import _jsonable

    c = _read_ratings(args.ratings)
    score = c["score"].astype(np.float64)
    if not np.isfinite(score).all():
        bad = int(np.flatnonzero(~np.isfinite(score))[0])
        raise SystemExit(f"mtscore human: {args.ratings}:{bad + 2}: score is not a finite number")
    if args.cmd == "ratings":
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
        res = {"systems": names, "score": sysz["score"], "n_segments": sysz["n"], "cluster": clusters,
               "wins": wins, "wilcoxon_p": p, "workers": len(qc["worker"]),
               "workers_passing_qc": int(qc["passed"].sum())}
        if args.format == "json":
            text = json.dumps(_jsonable(res), indent=1) + "\n"
        elif args.format == "csv":
            text = "rank,cluster,system,z,n_segments,wins\n" + "".join(
                f"{i + 1},{cl},{s},{z:.6f},{n},{w}\n"
                for i, (s, z, n, cl, w) in enumerate(zip(names, sysz["score"], sysz["n"], clusters, wins)))
        else:
            lines = [f"{'rank':>4} {'cluster':>7} {'system':<28} {'z':>8} {'segs':>6} {'wins':>5}"]
            for i, (s, z, n, cl, w) in enumerate(zip(names, sysz["score"], sysz["n"], clusters, wins)):
                lines.append(f"{i + 1:>4} {cl:>7} {s:<28} {z:>8.3f} {n:>6} {w:>5}")
            lines.append(f"\nworkers: {res['workers']}, passing the degraded-item t-test (p <= {args.alpha}): "
                         f"{res['workers_passing_qc']}")
            text = "\n".join(lines) + "\n"
        _emit(text, args.output)
        if args.html:
            from . import plots
            from .report import write_atomic

            png = plots.heatmap(human.wmt_wilcoxon_table(p, args.alpha, np.nan), names, names,
                                title="one-sided Wilcoxon p (row beats column)")
            import base64
            import html as _html

            body = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>DA ranking</title></head><body>"
                    f"<h1>DA ranking: {_html.escape(str(args.ratings))}</h1><pre>{_html.escape(text)}</pre>"
                    f"<img src='data:image/png;base64,{base64.b64encode(png).decode()}'></body></html>")
            write_atomic(args.html, body)
        return 0
    # rater model
    from .rater_model import fit_rater_model, remove_spammers

    scored = np.isin(c["type"], ("SYSTEM", "REPEAT"))
    iu, item = np.unique(np.char.add(np.char.add(c["sys_id"].astype(str), "|"), c["sid"].astype(str))[scored],
                         return_inverse=True)
    wu, worker = np.unique(c["WorkerId"][scored].astype(str), return_inverse=True)
    kw = dict(prior_shape=args.shape, prior_scale=args.scale, method=args.method)
    fit = fit_rater_model(item, worker, score[scored], n_items=len(iu), n_workers=len(wu), **kw)
    kept = np.ones(len(wu), bool)
    if args.keep:
        fit, kept = remove_spammers(item, worker, score[scored], keep=args.keep, n_items=len(iu), **kw)
    zmean = np.bincount(item, score[scored], len(iu)) / np.bincount(item, minlength=len(iu))
    from .correlation import pearson

    res = {"items": len(iu), "workers": len(wu), "kept_workers": int(kept.sum()),
           "r_model_vs_zmean": float(pearson(zmean, fit.item_mean)), "iterations": fit.n_iter,
           "worker": wu.tolist(), "precision": fit.worker_precision, "item": iu.tolist(), "quality": fit.item_mean}
    if args.format == "json":
        text = json.dumps(_jsonable(res), indent=1) + "\n"
    elif args.format == "csv":
        text = "worker,precision,kept\n" + "".join(f"{w},{p:.6f},{int(k)}\n" for w, p, k in zip(wu, fit.worker_precision, kept))
    else:
        order = np.argsort(fit.worker_precision)
        text = (f"items {len(iu)}, workers {len(wu)}, kept {int(kept.sum())}, iterations {fit.n_iter}\n"
                f"Pearson(model quality, z-mean) = {res['r_model_vs_zmean']:.4f}\n"
                "least precise workers: " + ", ".join(f"{wu[i]} ({fit.worker_precision[i]:.2f})" for i in order[:5]) + "\n")
    _emit(text, args.output)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point: ``main(['meta', 'wmt20', ...])`` / ``main(['human', 'ratings', ...])``."""
    args = build_parser().parse_args(argv)
    try:
        if args.area == "meta":
            return _run_meta(args)
        return _run_human(args)
    except FileNotFoundError as exc:
        print(f"mtscore {args.area}: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"mtscore {args.area}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
