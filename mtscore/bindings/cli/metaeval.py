"""``mtscore meta seg``: rank metrics on a WMT20/WMT21 segment-level task or on MQM standalone
ratings (JSONL) with mt-metrics-eval segment score files, with significance
clusters (acc_eq with tie calibration and the pairwise permutation test by default).

    mtscore meta seg --data ../shared/data/wmt21-news-systems --release wmt21 --lp de-en --docids de-en.docid
    mtscore meta seg --data ../shared/data/wmt20-metrics --release wmt20 --lp en-de --statistic pearson --average-by none
    mtscore meta seg --release mqm --data mqm.jsonl --metrics COMET=COMET.seg.score,BLEU=BLEU.seg.score
"""
from __future__ import annotations

import argparse
import json

from ...analysis.errors import AnalysisInputError
from .analysis_output import emit as _emit
from .parser import nonnegative_int, positive_int, probability

__all__ = ["add_parser", "run"]

STATISTICS = ("acc_eq", "tau_eq", "pearson", "kendall", "accuracy")


def add_parser(msub) -> None:
    """Register ``seg`` under ``mtscore meta``."""
    p = msub.add_parser("seg", help="segment-level acc_eq / correlations with significance clusters (WMT20/21)",
                        description="Rank the segment-level metrics of one WMT20 or WMT21 language pair and group "
                                    "them into significance clusters (mt-metrics-eval CompareMetrics). WMT21 "
                                    "metric scores are computed by mtscore (BLEU, chrF, chrF++, TER).")
    p.add_argument("--data", required=True,
                   help="the wmt20-metrics or wmt21-news-systems folder, or an MQM ratings JSONL file (--release mqm)")
    p.add_argument("--release", choices=("wmt20", "wmt21", "mqm"), required=True)
    p.add_argument("--lp", default="", help="language pair, e.g. de-en (wmt20/wmt21)")
    p.add_argument("--docids", metavar="FILE", help="wmt21: a file with the document id of every test-set line, in txt order "
                                    "(e.g. `sacrebleu -t wmt21 -l de-en --echo docid`); the DA file numbers "
                                    "segments in document-id order, so the join needs it")
    p.add_argument("--metrics", help="comma-separated metrics (default: all the release provides); with mqm: "
                                     "NAME=PATH of mt-metrics-eval segment score files ('SYSTEM SCORE' lines)")
    p.add_argument("--statistic", choices=STATISTICS, default="acc_eq", help="default acc_eq (WMT23+)")
    p.add_argument("--variant", choices=("b", "23", "acc23"), default="b", help="Kendall variant for 'kendall'")
    p.add_argument("--average-by", choices=("none", "sys", "item"), default="item", help="default item")
    p.add_argument("--k", type=nonnegative_int, default=1000, help="permutation draws (0: no test)")
    p.add_argument("--block", type=positive_int, default=100, help="k-block size for early stopping (default 100)")
    p.add_argument("--pval", type=probability, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--stream", choices=("fast", "legacy"), default="fast",
                   help="random stream: fast, or legacy = NumPy's MT19937 as mt-metrics-eval uses it")
    p.add_argument("--seed", type=nonnegative_int, default=None, help="random seed")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.add_argument("--output", "-o", help="write the result to this file instead of stdout")
    p.set_defaults(run_metaeval=run)


def _mqm_task(args: argparse.Namespace):
    import numpy as np

    from ...analysis.metaeval.ratings import read_mqm_ratings, read_score_file
    from ...analysis.metaeval.wmt import SegTask

    specs = [m for m in (args.metrics or "").split(",") if m]
    if not specs or any("=" not in m for m in specs):
        raise AnalysisInputError("--metrics: with --release mqm give NAME=PATH,... (segment score files)")
    mqm = read_mqm_ratings(args.data)
    names = [m.split("=", 1)[0] for m in specs]
    mats = np.stack([read_score_file(m.split("=", 1)[1], mqm.systems, mqm.scores.shape[1]) for m in specs])
    human = mqm.scores.copy()
    human[np.isnan(mats).any(axis=0)] = np.nan
    mats[:, np.isnan(human)] = 0.0
    return SegTask(args.lp or "mqm", mqm.systems, human, names, mats)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ...analysis.metaeval.significance import compare_metrics
    from ...analysis.metaeval.wmt import WMT20_SEG_METRICS, WMT21_SEG_METRICS, wmt20_seg_task, wmt21_seg_task

    if args.release == "mqm":
        task = _mqm_task(args)
    else:
        default = WMT20_SEG_METRICS if args.release == "wmt20" else WMT21_SEG_METRICS
        metrics: list[str] = [m for m in (args.metrics or ",".join(default)).split(",") if m]
        if not metrics or not args.lp:
            raise AnalysisInputError("--lp and --metrics: give a language pair and at least one metric")
        try:
            if args.release == "wmt20":
                task = wmt20_seg_task(args.data, args.lp, metrics)
            else:
                task = wmt21_seg_task(args.data, args.lp, metrics, docids=args.docids)
        except FileNotFoundError as exc:
            raise AnalysisInputError(f"--data {args.data}: {exc}") from None
    res = compare_metrics(task.human, task.metrics, task.metric_names, args.statistic, args.variant,
                          average_by=args.average_by, k=args.k, block_size=args.block, pval=args.pval,
                          stream=args.stream, seed=args.seed, progress=None)
    eps = res.epsilons if res.epsilons is not None else np.full(len(res.names), np.nan)
    rows = [{"metric": n, "value": float(v), "rank": int(r), "epsilon": None if np.isnan(e) else float(e)}
            for n, v, r, e in zip(res.names, res.values, res.ranks, eps)]
    if args.format == "json":
        text = json.dumps({"lp": args.lp, "statistic": args.statistic, "average_by": args.average_by,
                           "systems": task.systems, "metrics": rows,
                           "sig_matrix": res.sig_matrix.tolist()}, indent=1) + "\n"
    elif args.format == "csv":
        text = "metric,value,rank,epsilon\n" + "".join(
            f"{r['metric']},{r['value']!r},{r['rank']},{'' if r['epsilon'] is None else repr(r['epsilon'])}\n"
            for r in rows)
    else:
        w = max(len(n) for n in res.names)
        text = f"{args.lp} {args.statistic} (average_by={args.average_by}, k={args.k})\n" + "".join(
            f"{r['metric']:<{w}} {r['rank']:>2} {r['value']:10.6f}  "
            + " ".join("." if j <= i else (">" if res.sig_matrix[i, j] <= args.pval else "=")
                       for j in range(len(rows))) + "\n" for i, r in enumerate(rows))
    _emit(text, args.output)
    return 0
