"""``mtscore score-table``: score table files (Parquet, JSONL, CSV, TSV, Arrow) locally or on
Ray, with the flags and output of the ``mtscore`` command.

    mtscore score-table scores.parquet -m bleu chrf ter
    mtscore score-table part-*.parquet -m bleu --paired-bs --ray auto
"""
from __future__ import annotations

import argparse
import logging
import os
from typing import List

from .cli_input import CLIError
from .cli_options import (build_metrics, check_options, metric_kwargs, metric_options, report_options,
                          statistics_options)
from .cli_report import emit, multi_system_table, paired_text, single_system_text, write_table


def _table_parser() -> argparse.ArgumentParser:
    from ..engine.errors import OneLineErrorParser

    p = OneLineErrorParser(
        prog="mtscore score-table",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Score table files (Parquet file or directory, JSONL, CSV, TSV, Arrow) with a hypothesis "
            "column, reference columns (ref / ref_0, ref_1, ...) and optionally a system column (a "
            "long table of several systems over the same segments). The output is that of the "
            "mtscore command for the same systems and flags. With --ray the table is scored on a "
            "Ray cluster (same numbers; Parquet/JSONL/CSV)."),
        epilog=(
            "examples:\n"
            "  mtscore score-table scores.parquet -m bleu chrf ter\n"
            "  mtscore score-table part-*.parquet -m bleu --paired-bs --ray auto\n"
            "  mtscore score-table data/ -m chrf --ray 10.0.0.1:6379 --format parquet -o seg.parquet"))
    t = p.add_argument_group("table")
    t.add_argument("paths", nargs="+", help="table file(s) or Parquet directories, read as one table")
    t.add_argument("--hyp", default="hyp", help="hypothesis column (default hyp)")
    t.add_argument("--ref-columns", nargs="+", default=None, metavar="COL",
                   help="reference columns in order (default: ref / ref_0, ref_1, ...)")
    t.add_argument("--system-column", default=None, metavar="COL",
                   help="system column (default: 'system' if the table has one)")
    t.add_argument("--language-pair", "-l", dest="langpair", default=None,
                   help="SRC-TRG; the target selects BLEU's zh/ja-mecab/ko-mecab tokenizer")
    t.add_argument("--output", "-o", default=None,
                   help="write the result here (required for --format parquet); written atomically")
    t.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="score on Ray: 'local' (a new local instance), 'auto' (the cluster this "
                        "machine belongs to), HOST:PORT / ray://HOST:PORT; no value: $RAY_ADDRESS "
                        "or a local instance")
    metric_options(p)
    statistics_options(p)
    report_options(p)
    return p


def _run_table(args) -> int:
    check_options(args)
    if args.sentence_level:
        raise CLIError("score-table: use --format tsv/parquet for per-segment scores")
    if "bertscore" in args.metrics:
        raise CLIError("score-table: -m bertscore is not supported; use the Python API")
    paired = args.paired_bs or args.paired_ar
    metrics = build_metrics(args)
    per_seg = args.format in ("tsv", "parquet")
    if args.ray is not None:
        names, stats, metrics, table = _table_on_ray(args, metrics, per_seg, paired)
    else:
        names, stats, metrics, table = _table_locally(args, metrics, per_seg)
    if paired and len(names) == 1:
        raise CLIError("Paired tests need a table with several systems (a system column).")
    if len(names) > 1 and args.confidence:
        raise CLIError("Use paired tests (--paired-bs / --paired-ar) for multiple systems.")
    if per_seg:
        if len(names) == 1 and "system" in table.column_names:
            table = table.drop(["system"])
        write_table(table, args)
        return 0
    if len(names) == 1:
        text = single_system_text(args, metrics, stats, None, None)
    elif paired:
        text = paired_text(args, names, metrics, stats)
    else:
        text = multi_system_table(args, names, metrics, stats)
    emit(text if text.endswith("\n") else text + "\n", args)
    return 0


def _table_locally(args, metrics: dict, per_seg: bool):
    """``(system names, {NAME: [stats per system]}, metrics, segments table)`` by mtscore.score."""
    from ..engine.corpus import Corpus, load_corpus
    from .api import score

    corpora = [load_corpus(p, hyp=args.hyp, ref_columns=args.ref_columns, system=args.system_column)
               for p in args.paths]
    if len(corpora) == 1:
        corpus = corpora[0]
    else:
        import pyarrow as pa

        try:
            table = pa.concat_tables([c.table for c in corpora])
        except pa.ArrowInvalid as e:
            raise CLIError(f"the tables have different columns: {e}") from None
        corpus = Corpus.from_table(table, source=args.paths[0])
    systems, refs = corpus.by_system()
    r = score(systems, refs, list(metrics.values()), workers=args.workers, sentence_level=per_seg,
              progress=args.progress)
    names = list(systems)
    stats = {key: [r.stats[n][mkey] for n in names] for key, mkey in zip(metrics, r.metrics)}
    return names, stats, metrics, r.segments if per_seg else None


def _table_on_ray(args, metrics: dict, per_seg: bool, paired: bool):
    """The same on Ray: only the statistics reach this process (whole matrices only for
    --confidence / paired tests; otherwise their sums, as a one-row matrix)."""
    import tempfile

    import numpy as np

    from .ray import score_ray

    specs = {}
    for name, m in metrics.items():
        key = name.lower()
        specs[name] = "chrf++" if key == "chrf" and getattr(m, "word_order", 0) else key
    kwargs = {n: metric_kwargs(args, n) for n in ("bleu", "chrf", "ter")}
    keep = bool(args.confidence or paired)
    tmp = None
    if per_seg:
        fd, tmp = tempfile.mkstemp(prefix=".mtscore-segments-", suffix=".parquet")
        os.close(fd)
    try:
        r = score_ray(args.paths, args.hyp, args.ref_columns, system=args.system_column, test_set=False,
                      metrics=list(specs.values()), keep_stats=keep, segments=tmp,
                      address=args.ray or None, progress=args.progress, varying_refs="allow",
                      bleu_kwargs=kwargs["bleu"], chrf_kwargs=kwargs["chrf"], ter_kwargs=kwargs["ter"])
        table = None
        if tmp is not None:
            import pyarrow.parquet as pq

            table = pq.read_table(tmp)  # columns named like mtscore.score's segments table
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    names = r.systems()
    ray_metrics = {name: r.metrics[spec] for name, spec in specs.items()}
    stats = {}
    for name, spec in specs.items():
        per_system = []
        for sy in names:
            if keep:
                per_system.append(r.group_stats("", sy)[spec])
            else:  # the summed row: sum_stats of it is the row itself, bit for bit
                per_system.append(np.array([r.corpus_row("", sy, spec)]))
        stats[name] = per_system
    return names, stats, ray_metrics, table


def table_main(argv: List[str], run_command) -> int:
    """``mtscore score-table ARGS``; ``run_command`` is the CLI's errors contract
    (:func:`mtscore.bindings.cli.run_command`)."""
    args = _table_parser().parse_args(argv)
    if not args.quiet:
        logging.basicConfig(level=logging.INFO, format="mtscore: %(message)s")
    return run_command(_run_table, args, "mtscore score-table")
