"""CLI subcommands for the thesis procedures (registered by :mod:`.meta` and :mod:`.human`).

    mtscore human worker-test --ratings ad-csen-good-stnd.csv          # A4.1, R's exact p
    mtscore human significance --ratings ad-csen-good-stnd.csv --sizes 100,200,400 --plot a10.png
    mtscore human rater-heatmap --ratings ad-csen-good-stnd.csv --png b6.png
    mtscore human sequence --table seq.tsv --plot c4.png               # C4 + C6 (or C5 --binary)
    mtscore meta subsets --scores DA-newstest2019-ende-sys-nohy-scores.csv --k 10 --plot e8.png
"""
from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Callable

from ...analysis.errors import AnalysisInputError
from ...engine.strict_numbers import parse_number
from .analysis_output import emit as _emit
from .analysis_output import write_output as _write
from .parser import nonnegative_int, positive_float, positive_int, probability

if TYPE_CHECKING:
    import numpy as np

    from ...analysis.human.sequence_effects import Regression

__all__ = ["COMMANDS", "add_human_commands", "add_meta_commands", "run"]

COMMANDS = ("worker-test", "significance", "rater-heatmap", "sequence", "subsets")


def _out(p: argparse.ArgumentParser, fmts=("text", "json")) -> None:
    p.add_argument("--format", choices=fmts, default="text", help="what to print (default: text)")
    p.add_argument("--output", "-o", help="write the result to this file instead of stdout")
    p.add_argument("--html", help="also write a self-contained HTML page (text result and figure)")


def _floats(text: str) -> list[float]:
    try:
        vals = [parse_number(v) for v in text.split(",") if v.strip()]  # plain decimals only
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not vals or not all(0 < v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"expected p thresholds in (0, 1), got {text!r}")
    return vals


def _ints(text: str) -> list[int]:
    try:
        vals = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"expected whole numbers of at least 1, got {text!r}")
    return vals


def add_human_commands(hsub) -> None:
    """``human worker-test``, ``significance``, ``rater-heatmap`` and ``sequence``."""
    p = hsub.add_parser("worker-test", help="NLE rater test (A4.1): rank-sum of repeat vs degraded differences",
                        description="Per worker, the one-sided Wilcoxon rank-sum test that the degraded-item "
                                    "differences exceed the repeat differences, with R's exact p-value when "
                                    "both have fewer than 50 pairs and no ties (WMT21 ratings layout).")
    p.add_argument("--ratings", required=True, help="ratings file (HITId WorkerId ... sys_id rid type sid score)")
    p.add_argument("--alpha", type=probability, default=0.05, help="a worker passes when p < alpha (default 0.05)")
    p.add_argument("--absolute-repeat", action="store_true", help="use |first - repeat| (more conservative)")
    _out(p, ("text", "json", "csv"))
    p.set_defaults(procedure=_run_worker_test)
    p = hsub.add_parser("significance", help="share of significantly different system pairs (A10, NLE Table 6)",
                        description="Share of system pairs whose one-sided Wilcoxon rank-sum p (segment z as "
                                    "WMT) is below each threshold; with --sizes the share when only the first N "
                                    "judgements per system (file order) are kept (NLE Figure 5).")
    p.add_argument("--ratings", required=True, help="ratings file (WMT21 layout, z scores)")
    p.add_argument("--thresholds", type=_floats, default=[0.05, 0.01, 0.001], help="default 0.05,0.01,0.001")
    p.add_argument("--sizes", type=_ints, help="judgements per system, e.g. 100,200,400")
    p.add_argument("--plot", help="write the curve of --sizes as a PNG")
    _out(p)
    p.set_defaults(procedure=_run_significance)
    p = hsub.add_parser("rater-heatmap", help="B6 diagnostic heat map of one HIT's workers (rater model)",
                        description="Fit the rater model on one HIT (degraded links included) and draw the "
                                    "pairwise Pearson r of its workers, the model and the z-mean, rows by "
                                    "inferred precision, colours centred at the one-sided 95% critical r.")
    p.add_argument("--ratings", required=True, help="ratings file (WMT21 layout)")
    p.add_argument("--hit", help="the HIT (column 'hit', else HITId; default: the HIT with the most workers)")
    p.add_argument("--png", required=True, help="where to write the heat map")
    p.add_argument("--shape", type=positive_float, default=5.0, help="Gamma prior shape (default 5)")
    p.add_argument("--scale", type=positive_float, default=0.3, help="Gamma prior scale (default 0.3)")
    _out(p)
    p.set_defaults(procedure=_run_heatmap)
    _add_sequence(hsub)


def _add_sequence(hsub) -> None:
    p = hsub.add_parser("sequence", help="sequence effects (C4 bins; C6 pooled or C5 logistic regression)",
                        description="A table with a header and columns worker hit position score gold "
                                    "[aspect] (whitespace separated; one row per rating): C4 means by the "
                                    "previous item's gold with Welch's test, and the lag regression pooled over "
                                    "aspects with the worker-gold correlation (C6), or with --binary the "
                                    "logistic model with the worker's in-HIT positive share (C5).")
    p.add_argument("--table", required=True, help="the ratings table")
    p.add_argument("--binary", action="store_true", help="score and gold are 0/1 labels: logistic model (C5)")
    p.add_argument("--bins", type=positive_int, default=3, help="previous-gold bins for C4 (default 3)")
    p.add_argument("--n", type=_ints, default=[1, 5, 10, 15], help="workers averaged per item (default 1,5,10,15)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the worker draws (default 0)")
    p.add_argument("--plot", help="write the C4 figure as a PNG")
    _out(p)
    p.set_defaults(procedure=_run_sequence)


def add_meta_commands(msub) -> None:
    """``meta subsets``."""
    p = msub.add_parser("subsets", help="correlation over all k-system subsets (E8, Tangled Figure 2)",
                        description="Pearson r of each metric with the human scores on every k-subset of the "
                                    "systems (or --draws random ones), grouped by which of the marked systems "
                                    "(default: MAD outliers) each subset contains.")
    p.add_argument("--scores", required=True, help="system-level table LP SYSTEM HUMAN <metric...>")
    p.add_argument("--k", type=positive_int, default=10, help="systems per subset (default 10)")
    p.add_argument("--draws", type=positive_int, help="random subsets instead of all C(n, k)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed for --draws (default 0)")
    p.add_argument("--mark", default="mad", help="'mad' (outliers), 'none', or comma-separated system names")
    p.add_argument("--metrics", help="comma-separated metric columns (default: all complete ones)")
    p.add_argument("--plot", help="write Tangled Figure 2 style boxes as a PNG")
    _out(p)
    p.set_defaults(procedure=_run_subsets)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand chosen in ``args`` (one of :data:`COMMANDS`)."""
    fn: Callable[[argparse.Namespace], dict] = args.procedure
    res = fn(args)
    figs = res.pop("_figs", {})
    about = res.pop("_about", "")
    rendered = {"text": res.pop("_text", ""), "csv": res.pop("_csv", "")}
    text = rendered[args.format] if args.format in rendered else json.dumps(_jsonable(res), indent=1) + "\n"
    for option in ("plot", "png"):  # the subcommands that draw one figure name its file so
        path = getattr(args, option, None)
        if path and figs:
            _write(f"--{option}", path, next(iter(figs.values())))
    _emit(text, args.output)
    if args.html:
        from ...analysis.output import render_procedure_html

        page = render_procedure_html(f"mtscore {args.area} {args.cmd}",
                                     [{"heading": args.cmd, "about": about, "text": rendered["text"], "figures": figs}])
        _write("--html", args.html, page)
    return 0


def _jsonable(x):
    from ...analysis.output import jsonable

    return jsonable(x)


def _ratings(path: str) -> dict[str, np.ndarray]:
    from ...analysis import data as loaders

    t, linenos = loaders.read_ratings_lines(path)
    need = ("HITId", "WorkerId", "sys_id", "sid", "type", "score")
    missing = [c for c in need if c not in t.column_names]
    if missing:
        raise AnalysisInputError(f"{path}:1: missing column(s) {', '.join(missing)}; expected the WMT21 layout "
                                 "HITId WorkerId ... sys_id rid type sid score time")
    if t.num_rows == 0:
        raise AnalysisInputError(f"{path}: only a header, no ratings")
    c = {k: loaders.table_to_numpy(t, k) for k in need if k != "score"}
    # the HIT a degraded copy belongs to: WMT's 'hit' (one per HIT, several workers), else HITId
    c["hit"] = (loaders.table_to_numpy(t, "hit") if "hit" in t.column_names else c["HITId"]).astype(str)
    c["score"] = loaders.float_column(t, "score", linenos, path)
    c["type"] = c["type"].astype(str)
    return c


def _key(c: dict[str, np.ndarray]) -> np.ndarray:
    import numpy as np

    return np.array([f"{h}|{s}|{g}" for h, s, g in zip(c["HITId"], c["sys_id"], c["sid"])])


def _run_worker_test(args: argparse.Namespace) -> dict:
    import numpy as np

    from ...analysis.human.significance import nle_worker_test

    c = _ratings(args.ratings)
    r = nle_worker_test(c["WorkerId"], c["type"], _key(c), c["score"], args.alpha, args.absolute_repeat)
    rows = list(zip(r["worker"], r["n_bad"], r["n_repeat"], r["p"], r["exact"], r["passed"]))
    csv = "worker,n_bad,n_repeat,p,exact,passed\n" + "".join(
        f"{w},{b},{n},{p:.6g},{int(e)},{int(ok)}\n" for w, b, n, p, e, ok in rows)
    text = (f"{len(rows)} workers, {int(np.isfinite(r['p']).sum())} testable, {int(r['exact'].sum())} with an exact "
            f"p, {int(r['passed'].sum())} pass (p < {args.alpha})\n"
            f"{'worker':<16} {'bad':>4} {'rep':>4} {'p':>10} exact pass\n"
            + "".join(f"{w:<16} {b:>4} {n:>4} {p:>10.4g} {'yes' if e else 'no':>5} {'yes' if ok else 'no':>4}\n"
                      for w, b, n, p, e, ok in rows))
    return {**r, "_text": text, "_csv": csv,
            "_about": "A4.1 (Graham et al., NLE 4): per worker, one-sided Wilcoxon rank-sum of the degraded-item "
                      "differences against the repeat differences; exact p as R wilcox.test where it applies."}


def _run_significance(args: argparse.Namespace) -> dict:
    import numpy as np

    from ...analysis import human
    from ...analysis.human.significance import significance_curve, significant_pair_share

    c = _ratings(args.ratings)
    seg = human.segment_scores(c["sys_id"], c["sid"], c["score"], c["type"])
    names, p = human.wilcoxon_matrix({s: seg["score"][seg["system"] == s] for s in np.unique(seg["system"])})
    share = significant_pair_share(p, args.thresholds)
    lines = [f"{len(names)} systems, {len(names) * (len(names) - 1) // 2} pairs (segment-level Wilcoxon, as WMT)"]
    lines += [f"  p < {t:g}: {100 * v:.1f}% of pairs" for t, v in share.items()]
    res: dict = {"systems": names, "share": {str(k): v for k, v in share.items()}}
    if args.sizes:
        sel = np.isin(c["type"], ("SYSTEM", "REPEAT"))
        cur = significance_curve(c["sys_id"][sel], c["score"][sel], np.arange(int(sel.sum())), args.sizes,
                                 args.thresholds)
        res["curve"] = cur
        lines.append("judgements per system (file order), share of significant pairs (judgement-level, NLE):")
        lines += [f"  {n:>6}: " + "  ".join(f"p<{t:g} {100 * v:5.1f}%" for t, v in zip(args.thresholds, row))
                  for n, row in zip(cur["n"], cur["share"])]
        if args.plot or args.html:
            from ...analysis import plots

            res["_figs"] = {"share of significant pairs by judgements per system":
                            plots.significance_curve_plot(cur, title=str(args.ratings))}
    elif args.plot:
        raise AnalysisInputError("--plot draws the --sizes curve; give --sizes too")
    return {**res, "_text": "\n".join(lines) + "\n",
            "_about": "A10 (Graham et al., NLE Table 6 / Figure 5): one-sided Wilcoxon rank-sum per system pair "
                      "in ranking direction; the share of pairs below each threshold."}


def _run_heatmap(args: argparse.Namespace) -> dict:
    import numpy as np

    from ...analysis import plots
    from ...analysis.human.rater_model import critical_r, fit_rater_model, qc_links, worker_correlations

    c = _ratings(args.ratings)
    hits = np.unique(c["hit"])
    hit = args.hit or max(hits.tolist(), key=lambda h: len(np.unique(c["WorkerId"][c["hit"] == h])))
    sel = c["hit"] == hit
    if not sel.any():
        raise AnalysisInputError(f"--hit {hit}: no rating of that HIT in {args.ratings}")
    item, labels, degraded, is_sys = qc_links(c["sys_id"][sel], c["sid"][sel], c["type"][sel])
    wu, worker = np.unique(c["WorkerId"][sel].astype(str), return_inverse=True)
    if len(wu) < 2:
        raise AnalysisInputError(f"HIT {hit}: only one worker; the heat map needs two or more")
    fit = fit_rater_model(item, worker, c["score"][sel], n_items=len(labels), degraded=degraded,
                          prior_shape=args.shape, prior_scale=args.scale)
    order, R = worker_correlations(item, worker, c["score"][sel], fit, items=is_sys)
    names = [wu[i] if isinstance(i, int) else i for i in order]
    centre = critical_r(int(is_sys.sum())) if is_sys.sum() >= 3 else 0.0
    figs = {f"B6 heat map, HIT {hit}": plots.worker_heatmap(names, R, centre, title=f"HIT {hit}")}
    mean_r = np.nanmean(np.where(np.eye(len(names), dtype=bool), np.nan, R), axis=1)
    text = (f"HIT {hit}: {len(wu)} workers, {int(is_sys.sum())} MT items, centre r = {centre:.3f}; wrote {args.png}\n"
            + "".join(f"{n:<16} precision {fit.worker_precision[i]:6.2f}  mean r with others {m:6.3f}\n"
                      for n, i, m in zip(names, order, mean_r) if isinstance(i, int)))
    return {"hit": hit, "rows": names, "r": R, "centre": centre, "_text": text, "_figs": figs,
            "_about": "B6 (Mathur 2021, Thesis 3.5.5): pairwise Pearson r of the HIT's workers, the model "
                      "estimate and the z-mean; rows by inferred precision; colours centred at the critical r."}


def _run_sequence(args: argparse.Namespace) -> dict:
    from ...analysis import data as loaders
    from ...analysis.human import sequence_effects as se

    t, linenos = loaders.read_table_lines(args.table, string_columns=("worker", "hit", "aspect"))
    missing = [k for k in ("worker", "hit", "position", "score", "gold") if k not in t.column_names]
    if missing:
        raise AnalysisInputError(f"{args.table}:1: missing column(s) {', '.join(missing)}; expected worker hit "
                                 "position score gold [aspect]")
    col = {k: loaders.float_column(t, k, linenos, args.table) for k in ("position", "score", "gold")}
    w, h = loaders.table_to_numpy(t, "worker"), loaders.table_to_numpy(t, "hit")
    aspect = loaders.table_to_numpy(t, "aspect") if "aspect" in t.column_names else None
    res: dict = {}
    lines = []
    if not args.binary:
        b = se.sequence_bins(w, h, col["position"], col["score"], col["gold"], args.n, args.bins, seed=args.seed)
        res["bins"] = b
        lines.append("C4: mean score by the previous item's gold (Low .. High), High - Low, Welch p")
        lines += [f"  N={n:<3} " + " ".join(f"{v:8.4f}" for v in row) + f"   H-L {d:+.4f}  p {p:.3g}"
                  for n, row, d, p in zip(b["n"], b["bin_mean"], b["high_minus_low"], b["welch_p"])]
        if args.plot or args.html:
            from ...analysis import plots

            res["_figs"] = {"C4: previous item's gold": plots.sequence_bins_plot(b, title=str(args.table))}
    res["regression"] = {}
    for name, fit in _subset_fits(args.binary, w, h, col, aspect).items():
        if isinstance(fit, str):
            lines.append(f"{name}: not estimable ({fit})")
            continue
        res["regression"][name] = {"names": fit.names, "coef": fit.coef, "se": fit.se, "p": fit.p_value, "n": fit.n}
        lines.append(("C5 logistic" if args.binary else "C6 pooled OLS") + f" regression, {name} workers, "
                     f"{fit.n} lagged ratings:")
        lines += [f"  {n:<12} {c_:+.5f}  se {s_:.5f}  p {p_:.3g}"
                  for n, c_, s_, p_ in zip(fit.names, fit.coef, fit.se, fit.p_value)]
    return {**res, "_text": "\n".join(lines) + "\n",
            "_about": "Sequence effects (Mathur 2021, Thesis ch. 4): C4 bins by the previous item's gold with "
                      "Welch's t-test; C6 lag regression pooled over aspects, or C5 logistic for binary labels."}


def _subset_fits(binary: bool, w, h, col: dict[str, np.ndarray], aspect) -> dict[str, Regression | str]:
    """The thesis' worker subsets: C5 (Table 4.4) all / non-extreme (positive share in [0.2, 0.8]) /
    good (accuracy >= 60%); C6 (Table 4.5) all / good / bad (correlation with gold > 0.5 or not).
    A subset whose model cannot be estimated maps to the reason (a string)."""
    import numpy as np

    from ...analysis.human import sequence_effects as se

    if binary:
        masks = se.binary_worker_subsets(w, col["score"], col["gold"])
    else:
        r = se.worker_gold_correlation(w, col["score"], col["gold"])[np.unique(w.astype(str), return_inverse=True)[1]]
        masks = {"all": np.ones(r.size, bool), "good": r > 0.5, "bad": ~(r > 0.5)}
    out: dict[str, Regression | str] = {}
    for name, mask in masks.items():
        try:
            if binary:
                out[name] = se.sequence_logistic(w, h, col["position"], col["score"], col["gold"], mask=mask)
            else:
                out[name] = se.sequence_pooled(w, h, col["position"], col["score"], col["gold"], aspect, mask=mask)
        except AnalysisInputError as exc:
            if name == "all":
                raise
            out[name] = str(exc)
    return out


def _run_subsets(args: argparse.Namespace) -> dict:
    import numpy as np

    from ...analysis.data.released import load_sys_level
    from ...analysis.metaeval.outliers import mad_outliers
    from ...analysis.metaeval.subsets import QUANTILES, subset_correlations

    sl = load_sys_level(args.scores).complete_metrics()
    metrics = sl.metrics if not args.metrics else [m.strip() for m in args.metrics.split(",") if m.strip()]
    unknown = [m for m in metrics if m not in sl.metrics]
    if unknown or not metrics:
        raise AnalysisInputError(f"--metrics: unknown metric(s) {', '.join(unknown)}; available: {', '.join(sl.metrics)}")
    rows = np.array([sl.scores[sl.metrics.index(m)] for m in metrics])
    marked = _marked(args.mark, list(sl.systems), mad_outliers(sl.human))
    res = subset_correlations(sl.human, rows, args.k, marked, args.draws, args.seed,
                              names=[s.rsplit(".", 1)[0] for s in sl.systems])
    lines = [f"{res['subsets']:,} subsets of {args.k} of {len(sl.systems)} systems"
             f"{'' if res['exhaustive'] else ' (random draws)'}; Pearson r median [5%, 95%] per group"]
    for g, (name, cnt) in enumerate(zip(res["groups"], res["count"])):
        lines.append(f"  containing {name} ({cnt:,} subsets):")
        lines += [f"    {m:<22} {q[2]:.3f} [{q[0]:.3f}, {q[-1]:.3f}]" for m, q in zip(metrics, res["quantiles"][g])]
    figs = {}
    if args.plot or args.html:
        from ...analysis import plots

        figs = {"E8: r over system subsets": plots.subset_boxplot(res, metrics, title=f"{sl.lp}: k = {args.k}")}
    return {**res, "metrics": metrics, "quantile_levels": QUANTILES, "_text": "\n".join(lines) + "\n",
            "_figs": figs, "_about": "E8 (Mathur et al. 2020, Tangled Figure 2): Pearson r of each metric over "
                                     "k-system subsets, grouped by the marked systems each subset contains."}


def _marked(spec: str, systems: list[str], mad: np.ndarray) -> list[int]:
    import numpy as np

    if spec == "none":
        return []
    if spec == "mad":
        idx = [int(i) for i in np.flatnonzero(mad)]
    else:
        short = [s.rsplit(".", 1)[0] for s in systems]
        idx = []
        for name in (n.strip() for n in spec.split(",") if n.strip()):
            if name not in systems and name not in short:
                raise AnalysisInputError(f"--mark: unknown system {name}; the table's systems: {', '.join(systems)}")
            idx.append(systems.index(name) if name in systems else short.index(name))
    if len(idx) > 6:
        raise AnalysisInputError(f"--mark: {len(idx)} systems marked; at most 6 (name them explicitly)")
    return idx
