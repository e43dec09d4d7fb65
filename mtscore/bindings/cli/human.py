"""``mtscore human ratings``, ``rater-model`` and ``agreement`` (registered and dispatched by
:mod:`.analysis`; the campaign, crowd and procedure commands under ``human`` are :mod:`.campaign`,
:mod:`.crowd` and :mod:`.procedures`).
"""
from __future__ import annotations

import argparse
import math

from ...analysis.errors import AnalysisInputError
from ...engine.strict_numbers import parse_number
from . import campaign, campaign_server, crowd, procedures
from .analysis_output import add_output_options as _common_out
from .analysis_output import emit as _emit
from .analysis_output import warn as _warn
from .analysis_output import write_output as _write
from .parser import nonnegative_int as _nonnegative_int
from .parser import positive_float as _positive_float
from .parser import positive_int as _positive_int
from .parser import probability as _probability

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
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
    campaign_server.add_parsers(hsub)
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


def run(args: argparse.Namespace) -> int:
    if args.cmd in campaign.COMMANDS:
        return campaign.run(args)
    if args.cmd in campaign_server.COMMANDS:
        return campaign_server.run(args)
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
