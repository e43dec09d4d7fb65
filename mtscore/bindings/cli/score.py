"""The plain ``mtscore`` command: sacrebleu-compatible scoring of reference and system files.

    mtscore REF [REF ...] -i HYP [HYP ...] -m bleu chrf ter     # like sacrebleu
    cat hyp.txt | mtscore ref.txt -m chrf -f text
    mtscore ref.txt -i hyp.txt -m bleu chrf --format tsv -o segments.tsv

Output content equals sacrebleu 2.6.0's for the same flags (signatures print version 2.6.0,
the sacrebleu version whose numbers mtscore reproduces). Only this module's top-level imports
run at start-up; numpy, pyarrow and the kernels load when first needed.
"""
from __future__ import annotations

import argparse
import os
import sys

from .inputs import CLIError, open_inputs
from .options import (
    build_metrics,
    check_options,
    input_output_options,
    metric_options,
    report_options,
    report_runner,
    statistics_options,
)
from .report import (
    corpus_metrics,
    emit,
    json_args,
    multi_system_table,
    paired_text,
    sentence_level_text,
    single_system_text,
    write_table,
)
from .runner import run_command

__all__ = ["build_parser", "main"]


def main(argv: list[str]) -> int:
    """``mtscore REF [REF ...] -i HYP ...``: parse ``argv`` (usage errors exit 2), score, report."""
    args = build_parser().parse_args(argv)
    if not args.quiet:
        import logging  # here, not at the top: ``mtscore --help`` starts without it

        logging.basicConfig(level=logging.INFO, format="mtscore: %(message)s")
    if os.environ.get("SACREBLEU_FORMAT"):
        args.format = os.environ["SACREBLEU_FORMAT"]
    return run_command(_run, args, "mtscore")


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil (and zlib, bz2, lzma
    with it: argparse's help formatter does, once per ``add_argument``): $COLUMNS if positive,
    else the width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no stdout (None), closed, not a terminal
        columns = 0
    return columns or 80


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter with the width it would choose (terminal columns - 2)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


def build_parser() -> argparse.ArgumentParser:
    from .parser import OneLineErrorParser

    p = OneLineErrorParser(
        prog="mtscore",
        formatter_class=_HelpFormatter,
        description=(
            "Score MT output with sacrebleu-identical BLEU, chrF/chrF++ and TER (compiled), "
            "optionally BERTScore.\n\n"
            "Give reference files first, then the system output(s) with -i (or on stdin; "
            "tab-separated columns are several systems).\n"
            "Subcommands: 'mtscore demo' (the bundled example), 'mtscore score-table --help' "
            "(tables: Parquet/JSONL/CSV/TSV, locally or on Ray), 'mtscore report --help' (one "
            "self-contained HTML page comparing systems), 'mtscore reproduce --help' (a paper's "
            "tables and figures from its released data), 'mtscore meta --help' (metric "
            "meta-evaluation), 'mtscore human --help' (human evaluation), 'mtscore mbr --help' "
            "(MBR selection), 'mtscore nbest --help' (n-best oracle / reranking)."),
        epilog=(
            "examples:\n"
            "  mtscore ref.de -i hyp.de -m bleu chrf ter\n"
            "  mtscore ref.A ref.B -i sys1 sys2 sys3 -m bleu --paired-bs\n"
            "  mtscore ref.de -i hyp.de -m chrf -cw 2 --format tsv -o segments.tsv\n"
            "  mtscore ref.de -i hyp.de -m bleu --sentence-level"))
    input_output_options(p)
    metric_options(p)
    statistics_options(p)
    report_options(p)
    return p


class _Collect:
    """Passes chunks through and keeps their text, for a metric with its own runner (the
    registry's ``report_runner``: BERTScore, whose idf needs every reference), so that metric is
    not streamed: its memory grows with the corpus, unlike the lexical metrics'."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.refs: list[list[str]] = []
        self.systems: dict = {}

    def __iter__(self):
        for refs, systems in self.chunks:
            if not self.refs:
                self.refs = [[] for _ in refs]
            for acc, st in zip(self.refs, refs):
                acc.extend(st)
            for name, hyps in systems.items():
                self.systems.setdefault(name, []).extend(hyps)
            yield refs, systems


def _run(args) -> int:
    from ..api.batch import score_stream

    check_options(args)
    paired = args.paired_bs or args.paired_ar
    inputs = open_inputs(args)
    names, systems = inputs.names, inputs.systems
    if args.sentence_level and len(names) > 1:
        raise CLIError("Only one system can be evaluated in sentence-level mode.")
    if paired and len(names) == 1:
        raise CLIError("Paired tests require multiple input systems given to --input (-i).")
    if len(names) > 1 and args.confidence:
        raise CLIError("Use paired tests (--paired-bs / --paired-ar) for multiple systems.")
    metrics = build_metrics(args)
    own = report_runner(args, len(names))  # a metric scored apart, on the collected text
    chunks = _Collect(inputs.chunks) if own is not None else inputs.chunks
    per_seg = args.format in ("tsv", "parquet")
    r = score_stream(chunks, list(metrics.values()), workers=args.workers,
                     sentence_level=per_seg,
                     progress=args.progress if metrics else False)  # a runner's metric alone: its own bars
    stats = {key: [r.stats[n][mkey] for n in systems] for key, mkey in zip(metrics, r.metrics)}
    if per_seg:
        table = r.segments
        if len(names) == 1:
            table = table.drop(["system"])
        # the tests' results travel in the Parquet file's metadata (TSV refused: check_options)
        report = None
        if paired or args.confidence:  # a corpus report: BLEU without the per-segment effective order
            jargs = json_args(args)
            report = _report(jargs, names, corpus_metrics(metrics), stats, paired)
        write_table(table, args, report)
        return 0
    if args.sentence_level:
        text = sentence_level_text(args, metrics, stats)
    elif paired and isinstance(chunks, _Collect):  # a runner's metric alone (check_options): its own test
        text = own.paired(chunks.systems, chunks.refs)
    else:
        text = _report(args, names, metrics, stats, paired, own, chunks)
    emit(text if text.endswith("\n") else text + "\n", args)
    return 0


def _report(args, names, metrics: dict, stats: dict, paired: bool, own=None, chunks=None) -> str:
    if len(names) == 1:
        return single_system_text(args, metrics, stats, own, chunks)
    if paired:
        return paired_text(args, names, metrics, stats)
    return multi_system_table(args, names, metrics, stats, own, chunks)

