"""``mtscore score-table``: score table files (Parquet, JSONL, CSV, TSV, Arrow) locally or on
Ray, with the flags and output of the ``mtscore`` command.

    mtscore score-table scores.parquet -m bleu chrf ter
    mtscore score-table part-*.parquet -m bleu --paired-bs --ray auto
"""
from __future__ import annotations

import argparse
import logging
import os
from typing import Any, NamedTuple

from ...engine.corpus_error import CorpusError
from ...engine.metrics.base import MissingReferenceError
from . import report
from .inputs import CLIError
from .options import (
    build_metrics,
    check_options,
    metric_kwargs,
    metric_options,
    report_options,
    report_runner,
    runner_class,
    separate_metrics,
    statistics_options,
)


def _table_parser() -> argparse.ArgumentParser:
    from .parser import OneLineErrorParser

    p = OneLineErrorParser(
        prog="mtscore score-table",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Score table files (Parquet file or directory, JSONL, CSV, TSV, Arrow) with a hypothesis "
            "column, reference columns (ref / ref_0, ref_1, ...) and optionally a system column (a "
            "long table of several systems over the same segments) and a test-set column (each "
            "test set scored and reported on its own). The output is that of the mtscore command "
            "for the same systems and flags. With --ray the table is scored on a Ray cluster (same "
            "numbers; Parquet/JSONL/CSV; -m bertscore and -m comet on an actor pool)."),
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
    t.add_argument("--test-set-column", default=None, metavar="COL",
                   help="test-set column: each test set is scored on its own and reported under "
                        "its name (default: 'test_set' if the table has one)")
    t.add_argument("--src-column", default=None, metavar="COL",
                   help="source column, for -m comet (default: src)")
    t.add_argument("--missing-refs", choices=["error", "skip"], default="error",
                   help="a row whose references are all null: stop with an error naming it "
                        "(default), or skip it in every metric (zero statistics, NaN sentence "
                        "scores) with one warning giving the count")
    t.add_argument("--language-pair", "-l", dest="langpair", default=None,
                   help="SRC-TRG; the target selects BLEU's zh/ja-mecab/ko-mecab tokenizer")
    t.add_argument("--output", "-o", default=None,
                   help="write the result here (required for --format parquet); written atomically")
    t.add_argument("--report", default=None, metavar="FILE",
                   help="also write the HTML report of mtscore report (scores with CIs, "
                        "significance, buckets, examples) for the same systems, references and "
                        "metrics; written atomically (not with --ray or a test-set column)")
    t.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="score on Ray: 'local' (a new local instance), 'auto' (the cluster this "
                        "machine belongs to), HOST:PORT / ray://HOST:PORT; no value: $RAY_ADDRESS "
                        "or a local instance")
    metric_options(p)
    statistics_options(p)
    report_options(p)
    return p


class _Part(NamedTuple):
    """The scores of one test set (``ts`` None: the table has no test-set column)."""
    ts: str | None
    names: list[str]
    stats: dict      # {NAME: [stats matrix per system]}
    metrics: dict    # {NAME: metric}
    table: Any       # per-segment pyarrow Table, or None
    runner: Any = None     # the report's metric scored apart (registry's report_runner), or None
    collected: Any = None  # what ``runner`` is given: ``.systems`` {name: hyps}, ``.refs``


def _check_paths(paths: list[str]) -> None:
    """Each local path exists and is a table (format from its extension; a folder is a Parquet
    dataset); remote URIs (``s3://``...) are left to Ray."""
    from ...engine.tables import TABLE_FORMATS, guess_format

    for p in paths:
        if "://" in p:
            continue
        if not os.path.exists(p):
            raise CLIError(f"{p}: file not found")
        if guess_format(p) == "text":
            raise CLIError(
                f"{p}: not a table file (the format comes from the extension: "
                f"{', '.join(TABLE_FORMATS)}, or a folder of Parquet files); score plain-text "
                "system output with: mtscore REF.txt -i HYP.txt")


def _run_table(args) -> int:
    check_options(args)
    _check_paths(args.paths)
    if args.report is not None:
        from .html_report import check_report_path

        if args.ray is not None:
            raise CLIError("score-table --report: not with --ray (the report needs the texts here)")
        check_report_path(args.report)
    if args.sentence_level:
        raise CLIError("score-table: use --format tsv/parquet for per-segment scores")
    for name in separate_metrics(args) if args.ray is not None else ():
        runner_class(name).check_ray(args)  # options its Ray actors cannot run
    paired = args.paired_bs or args.paired_ar
    metrics = build_metrics(args, missing_refs=args.missing_refs)
    per_seg = args.format in ("tsv", "parquet")
    try:
        if args.ray is not None:
            parts = _table_on_ray(args, metrics, per_seg, paired)
        else:
            parts = _table_locally(args, metrics, per_seg)
    except (CorpusError, MissingReferenceError) as e:  # name this command's options, not Python's
        raise CLIError(_cli_names(str(e))) from None
    html = None
    if args.report is not None:  # before any output: a report that fails leaves no output
        from .html_report import table_report

        html = table_report(args, parts[0].collected.systems, parts[0].collected.refs)
    for part in parts:
        if paired and len(part.names) == 1:
            raise CLIError("Paired tests need a table with several systems (a system column).")
        if len(part.names) > 1 and args.confidence:
            raise CLIError("Use paired tests (--paired-bs / --paired-ar) for multiple systems.")
    if per_seg:  # the tests' results go into the Parquet metadata (TSV refused: check_options)
        tests_text = None
        if paired or args.confidence:  # a corpus report: BLEU without the per-segment effective order
            jargs = report.json_args(args)
            tests_text = _join_test_sets([(part.ts, _report_text(
                jargs, part._replace(metrics=report.corpus_metrics(part.metrics)), paired)) for part in parts], jargs)
        report.write_table(_segments_table(parts), args, tests_text)
    else:
        report.emit(_join_test_sets([(part.ts, _report_text(args, part, paired)) for part in parts], args), args)
    if html is not None:
        from .html_report import write_report

        write_report(args.report, html)
    return 0


def _report_text(args, part: _Part, paired: bool) -> str:
    if getattr(part.collected, "sources", None) is not None:
        part.runner.use_sources(part.collected.sources)
    if len(part.names) == 1:
        text = report.single_system_text(args, part.metrics, part.stats, part.runner, part.collected)
    elif paired and part.runner is not None and not part.metrics:
        # a runner's metric alone (check_options refuses the others): its own paired test
        # (COMET: the segment scores' bootstrap / AR), as the mtscore command runs it
        text = part.runner.paired(part.collected.systems, part.collected.refs)
    elif paired:
        text = report.paired_text(args, part.names, part.metrics, part.stats)
    else:
        text = report.multi_system_table(args, part.names, part.metrics, part.stats, part.runner, part.collected)
    return text if text.endswith("\n") else text + "\n"


def _join_test_sets(texts: list[tuple[str | None, str]], args) -> str:
    """One report, or with a test-set column one per test set: under a ``test set: NAME`` line
    (json: one object ``{NAME: report}``)."""
    if len(texts) == 1 and texts[0][0] is None:
        return texts[0][1]
    if args.format == "json":
        import json

        try:
            return json.dumps({ts: json.loads(text) for ts, text in texts}, indent=1,
                              ensure_ascii=False) + "\n"
        except ValueError:  # a report that is not one JSON document: the text layout below
            pass
    return "\n".join(f"test set: {ts}\n{text}" for ts, text in texts)


def _segments_table(parts):
    """The per-segment table of every test set (a ``test_set`` column first when there are test
    sets; no ``system`` column for a single system)."""
    import pyarrow as pa

    tables = []
    for ts, names, _stats, _metrics, table, _runner, _collected in parts:
        if len(names) == 1 and "system" in table.column_names:
            table = table.drop(["system"])
        if ts is not None and "test_set" not in table.column_names:
            table = table.add_column(0, "test_set", pa.array([ts] * table.num_rows, pa.string()))
        tables.append(table)
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def _table_locally(args, metrics: dict, per_seg: bool):
    """``[(test set or None, system names, {NAME: [stats per system]}, metrics, segments table)]``
    by mtscore.score, one entry per test set."""
    from types import SimpleNamespace

    from ..api.batch import score

    own = report_runner(args)  # a metric scored apart, given each part's text
    corpus, test_sets = _load_local(args)
    if args.report is not None and test_sets is not None:
        raise CLIError("score-table --report: the table has a test-set column; the report compares "
                       "systems on one test set (give a table of one test set)")
    srcs = None
    if own is not None and hasattr(own, "table_sources"):  # COMET: each test set's sources
        srcs = own.table_sources(args, lambda c: _split_test_sets(c, test_sets))
    parts = []
    for i, (ts, corpus_part) in enumerate(_split_test_sets(corpus, test_sets)):
        systems, refs = corpus_part.by_system()
        r = score(systems, refs, list(metrics.values()), workers=args.workers, sentence_level=per_seg,
                  progress=args.progress if metrics else False)
        names = list(systems)
        stats = {key: [r.stats[n][mkey] for n in names] for key, mkey in zip(metrics, r.metrics)}
        parts.append(_Part(ts, names, stats, metrics, r.segments if per_seg else None, own,
                           SimpleNamespace(systems=systems, refs=refs, sources=None if srcs is None else srcs[i])))
    if own is not None:  # the report scores every system of every test set: "BERTScore i/n" bars
        own.n_systems = sum(len(p.names) for p in parts)
    return parts


def _load_local(args):
    """``(corpus of all paths, test-set name per row or None)``."""
    from ...engine.corpus import Corpus, load_corpus

    corpora, test_sets = [], []
    for p in args.paths:
        corpora.append(load_corpus(p, hyp=args.hyp, ref_columns=args.ref_columns,
                                   system=args.system_column))
        col = args.test_set_column or "test_set"
        try:  # the test-set column read as a (hypothesis) column: every table format, null checks
            test_sets.append(load_corpus(p, hyp=col, ref_columns=[], system=False).hyps())
        except CorpusError as e:
            if args.test_set_column is not None:
                raise CLIError(f"--test-set-column {col}: {str(e).split('; pass hyp=')[0]}") from None
            test_sets.append(None)
    if any(t is None for t in test_sets) and any(t is not None for t in test_sets):
        raise CLIError("the tables have different columns: some have a test-set column, some not")
    ts = None if test_sets[0] is None else [x for t in test_sets for x in t]
    if len(corpora) == 1:
        return corpora[0], ts
    import pyarrow as pa

    try:
        table = pa.concat_tables([c.table for c in corpora])
    except pa.ArrowInvalid as e:
        raise CLIError(f"the tables have different columns: {e}") from None
    return Corpus.from_table(table, source=args.paths[0]), ts


_API_TO_CLI = (("pass hyp=", "pass --hyp"), ("pass refs=", "pass --ref-columns"),
               ("pass system=", "pass --system-column"), ("pass test_set=", "pass --test-set-column"),
               ("pass missing_refs='skip'", "pass --missing-refs skip"), ("pass src=", "pass --src-column"))


def _cli_names(message: str) -> str:
    """An input error (from :func:`load_corpus`, the metrics or ``score_ray``) with the keyword
    arguments it suggests named as this command's options."""
    for api, cli in _API_TO_CLI:
        message = message.replace(api, cli)
    return message


def _split_test_sets(corpus, test_sets: list[str] | None):
    """``(test set, corpus of its rows)`` in order of first appearance (one ``(None, corpus)``
    without a test-set column)."""
    if test_sets is None:
        return [(None, corpus)]
    import numpy as np
    import pyarrow as pa

    from ...engine.corpus import Corpus

    enc = pa.array(test_sets, pa.string()).dictionary_encode()  # dictionary: first-appearance order
    codes = np.asarray(enc.indices)
    return [(name, Corpus.from_table(corpus.table.take(pa.array(np.flatnonzero(codes == k))),
                                     source=corpus.source))
            for k, name in enumerate(enc.dictionary.to_pylist())]


def _table_on_ray(args, metrics: dict, per_seg: bool, paired: bool):
    """The same on Ray: only the statistics reach this process (whole matrices only for
    --confidence / paired tests; otherwise their sums, as a one-row matrix)."""
    import tempfile
    from types import SimpleNamespace

    import numpy as np

    from ...engine.metrics.registry import METRICS, metric_name
    from ..ray import score_ray

    specs = {}
    for name, m in metrics.items():
        # the registry's name of the configured object ("chrf++" for chrF with word order 2:
        # the registry refuses that name with another order), else the -m name
        named = metric_name(m)
        specs[name] = named if named in METRICS else name.lower()
    runners = {name: runner_class(name) for name in separate_metrics(args)}  # on actors
    # each selected metric's options from its registry entry (flags and from_args), under the
    # name it has on Ray; a metric scored apart (BERTScore) gives its actors' own
    options = {spec: metric_kwargs(args, name.lower()) for name, spec in specs.items()}
    options.update({name: cls.ray_kwargs(args) for name, cls in runners.items()})
    keep = bool(args.confidence or paired)
    tmp, cleanup = None, None
    if per_seg:
        from ...engine.atomic import register_temporary

        fd, tmp = tempfile.mkstemp(prefix=".mtscore-segments-", suffix=".parquet")
        os.close(fd)
        cleanup = register_temporary(tmp).__enter__()  # removed on SIGTERM too
    try:
        r = score_ray(args.paths, args.hyp, args.ref_columns, system=args.system_column,
                      test_set=args.test_set_column, keep_stats=keep,
                      metrics=list(specs.values()) + list(runners), metric_kwargs=options,
                      segments=tmp, address=args.ray or None, progress=args.progress,
                      varying_refs="allow", missing_refs=args.missing_refs,
                      src=getattr(args, "src_column", None))
        table = None
        if tmp is not None:
            import pyarrow.parquet as pq

            table = pq.read_table(tmp)  # columns named like mtscore.score's segments table
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        if cleanup is not None:
            cleanup.__exit__(None, None, None)
    ray_metrics = {name: r.metrics[spec] for name, spec in specs.items()}
    parts = []
    for ts in r.test_sets():
        names = r.systems(ts)
        stats = {}
        for name, spec in specs.items():
            if keep:
                stats[name] = [r.group_stats(ts, sy)[spec] for sy in names]
            else:  # the summed row: sum_stats of it is the row itself, bit for bit
                stats[name] = [np.array([r.corpus_row(ts, sy, spec)]) for sy in names]
        own = next((cls.from_ray(args, r, ts, name) for name, cls in runners.items()), None)
        parts.append(_Part(ts if r.has_test_set else None, names, stats, ray_metrics,
                           None if table is None else _segments_of(table, ts, names), own,
                           SimpleNamespace(systems={sy: sy for sy in names}, refs=None)))
    return parts


def _segments_of(table, ts: str, names: list[str]):
    """One test set's rows of the Ray segments file, in ``mtscore.score``'s order (system by
    system, segment by segment), without the test-set column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if "test_set" in table.column_names:
        table = table.filter(pc.equal(table.column("test_set"), ts)).drop(["test_set"])
    if "system" not in table.column_names:
        return table.sort_by("seg")
    rank = pc.index_in(table.column("system"), value_set=pa.array(names, pa.string()))
    return table.append_column("_rank", rank).sort_by([("_rank", "ascending"), ("seg", "ascending")]) \
        .drop(["_rank"])


def table_main(argv: list[str]) -> int:
    """``mtscore score-table ARGS``: parse (usage errors exit 2), score, report."""
    from .runner import run_command

    args = _table_parser().parse_args(argv)
    if not args.quiet:
        logging.basicConfig(level=logging.INFO, format="mtscore: %(message)s")
    return run_command(_run_table, args, "mtscore score-table")
