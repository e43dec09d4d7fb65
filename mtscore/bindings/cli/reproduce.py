"""``mtscore reproduce PAPER --data DIR --out DIR``: a source paper's tables and figures rebuilt
from its released data, beside the numbers the paper prints (:mod:`mtscore.bindings.reproduce`)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

PAPERS = {
    "tangled": ("Mathur, Baldwin & Cohn (2020), Tangled up in BLEU (ACL 2020): Tables 1-2 and the appendix "
                "tables (Pearson r of every WMT19 metric with DA, all systems and without MAD outliers), "
                "Figure 1 (top-N and rolling-window r, de-en), Figure 2 (r over all 646,646 10-system "
                "subsets of en-de); needs DIR/tangled/wmt19_sys_scores/ (the 18 "
                "DA-newstest2019-<lp>-sys-nohy-scores.csv files of github.com/nitikam/tangled, "
                "data/wmt19_sys_scores/). Figure 3 / the Type I-II analysis need segment-level data the "
                "release lacks and are listed as not reproduced."),
    "wmt20": ("Mathur et al. (2020), Results of the WMT20 Metrics Shared Task: system-level Pearson r over all "
              "MT systems (vs the findings' LaTeX tables) and without outliers, Kendall tau, Williams p-values "
              "and winners for every language pair and reference set; segment-level DARR Kendall-like tau "
              "(all systems and without outliers) of the 12 metrics whose segment scores the snapshot holds, "
              "document-level DARR tau of the 35 with document scores; "
              "each cell against the official results/ files; needs DIR/wmt20-metrics/ "
              "(github.com/WMT-Metrics-task/wmt20-metrics: manual-evaluation/, results/, "
              "final-metric-scores/)."),
    "wmt21": ("Akhbardeh et al. (2021), Findings of WMT21: DA system rankings (z, N, judgements) and Wilcoxon "
              "significance clusters of the to-English and Facebook Wikipedia pairs, rebuilt from the ratings "
              "and compared with the official ranking, adwilcox, ad-DA-diff-wilcoxon-rs and clusters.csv files; "
              "the to-English pairwise decisions, BLEU and chrF paired bootstrap vs human Wilcoxon, with Type I / "
              "II errors per metric-difference bin (Tangled Fig. 3 style, ours on WMT21); needs "
              "DIR/wmt21-news-systems/humaneval/ and txt/ (github.com/wmt-conference/wmt21-news-systems)."),
    "refbias": ("Ma, Graham, Baldwin & Liu (2017), Further Investigation into Reference Bias (EMNLP 2017): "
                "Table 2 (judge pairs whose kappa CIs do not overlap), Figure 1 (e)-(f) (bootstrap CI of the "
                "mean kappa), Figures 2-4 (kappas per setting, judges' average ratings, rating cross-tables) "
                "and the text's numbers; needs DIR/refbias/ratings_all (github.com/qingsongma/"
                "percentage-refBias). Figure 1 (a)-(d) and the DA experiment are listed as not reproduced."),
    "docqe": ("Graham, Ma, Baldwin, Liu, Parra & Scarton (2017), Improving Evaluation of Document-level MT QE "
              "(EACL 2017): Table 1 (judgements collected / after QC / per document of the two DA runs), the "
              "run A vs run B self-replication r (0.901) and Figure 2 (r as judgements are added), from the raw "
              "MTurk batches; needs DIR/docqe-eacl2017/ (github.com/ygraham/eacl2017: seg-key-enes, "
              "batched-hits/runA/, batched-hits/runB/)."),
}


def build_parser() -> argparse.ArgumentParser:
    from ...engine.missing_extra import install_hint
    from .parser import OneLineErrorParser

    ap = OneLineErrorParser(
        prog="mtscore reproduce", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Rebuild a source paper's tables and figures from its released data and compare every "
                    "table cell with the value the paper prints. Writes into --out: per table a CSV "
                    "(reproduced, printed, match) and a Markdown grid, per figure a PNG and a CSV of its "
                    "numbers, and index.html (self-contained) showing paper beside reproduced with every "
                    "difference marked. Runs offline. The folder appears whole or not at all; a missing "
                    "data file is one error line naming it (exit 1).",
        epilog="papers:\n" + "\n".join(f"  {k}: {v}" for k, v in PAPERS.items())
               + "\n\nexample:\n  mtscore reproduce tangled --data ../shared/data --out tangled-out/\n"
                 f"figures need matplotlib: {install_hint('plot')}")
    ap.add_argument("paper", choices=sorted(PAPERS), help="the paper to reproduce")
    ap.add_argument("--data", required=True, metavar="DIR",
                    help="the folder of the released data (the shared data folder holding each paper's "
                         "folder, as named under papers below, or that folder itself)")
    ap.add_argument("--out", required=True, metavar="DIR",
                    help="folder to write (created; an earlier reproduction there is replaced)")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Parse (usage errors exit 2), reproduce, write; user errors are one line, exit 1."""
    from .runner import ANALYSIS, run_command

    return run_command(_run, build_parser().parse_args(argv), "mtscore reproduce", ANALYSIS)


def _run(a: argparse.Namespace) -> int:
    from .. import reproduce as r
    from ..reproduce import docqe, refbias, wmt20, wmt21

    papers: dict[str, tuple[Callable[[str], r.Reproduction], Callable[[r.Reproduction, str], Path]]] = {
        "tangled": (r.reproduce_tangled, r.write_tangled),
        "wmt20": (wmt20.reproduce_wmt20, wmt20.write_wmt20),
        "wmt21": (wmt21.reproduce_wmt21, wmt21.write_wmt21),
        "refbias": (refbias.reproduce_refbias, refbias.write_refbias),
        "docqe": (docqe.reproduce_docqe, docqe.write_docqe)}
    compute, write = papers[a.paper]
    res = compute(a.data)
    out = write(res, a.out)
    n = len(res.compared)
    sys.stdout.write(f"{len(res.tables)} tables, {len(res.figures)} figures written to {out}; "
                     f"{n} printed cells compared, {len(res.differing)} differ; "
                     f"{len(res.unsupported)} items not supported by the data (see index.html)\n")
    return 0
