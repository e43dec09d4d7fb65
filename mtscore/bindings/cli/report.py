"""The output of the ``mtscore`` command (shared with ``mtscore score-table``): sacrebleu's
single-system lines, multi-system table and paired-test report, and per-segment tables."""
from __future__ import annotations

import io
import sys


def emit(text: str, args) -> None:
    if args.output:
        from ...engine.atomic import atomic_write  # here: ``mtscore --help`` starts without it

        atomic_write(args.output, lambda f: f.write(text.encode("utf-8")), "--output")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def single_results_text(results: list[str], args) -> str:
    """sacrebleu's print_single_results."""
    out = io.StringIO()
    if args.format == "json":
        out.write(("[\n" + ",\n".join(results) + "\n]" if len(results) > 1 else results[0]) + "\n")
        return out.getvalue()
    if len(results) == 1:
        out.write(results[0] + "\n")
        return out.getvalue()
    lens = []
    for line in results:
        try:
            lens.append(line.index("=") - 1)
        except ValueError:
            out.write(line + "\n")
    if lens:
        w = max(lens)
        for _len, line in zip(lens, results):
            left, right = line[:_len], line[_len:]
            out.write(f"{left:>{w}}{right}\n")
    return out.getvalue()


#: the Parquet schema metadata key under which a per-segment table carries the report of the
#: paired tests / confidence intervals that produced it (the ``--format json`` report)
REPORT_KEY = b"mtscore.report"


def json_args(args):
    """``args`` with ``format='json'``: the report of a per-segment run's tests, for metadata."""
    import argparse

    return argparse.Namespace(**{**vars(args), "format": "json"})


def corpus_metrics(metrics: dict) -> dict:
    """Copies of the (already evaluated) ``metrics`` as a corpus report uses them: BLEU without
    the effective order that per-segment output turns on (sacrebleu's corpus BLEU never uses
    it), so a per-segment run's test report equals the ``--format json`` run's."""
    import copy

    out = {}
    for name, m in metrics.items():
        if getattr(m, "effective_order", False):
            m = copy.copy(m)
            m.effective_order = False
        out[name] = m
    return out


def write_table(table, args, report: str | None = None) -> None:
    """The per-segment table as TSV or Parquet. ``report``: the JSON report of the paired tests
    or confidence intervals (Parquet only: stored in the schema metadata under
    :data:`REPORT_KEY`, read back with ``pyarrow.parquet.read_schema(path).metadata``)."""
    if args.format == "parquet":
        import pyarrow.parquet as pq

        from ...engine.atomic import atomic_write

        if report is not None:
            meta = dict(table.schema.metadata or {})
            meta[REPORT_KEY] = report.encode("utf-8")
            table = table.replace_schema_metadata(meta)
        atomic_write(args.output, lambda f: pq.write_table(table, f), "--output")
        return
    if report is not None:  # pragma: no cover - check_options refuses it before any work
        raise ValueError("a TSV table cannot hold the tests' report")
    cols = table.column_names
    lines = ["\t".join(cols)]
    data = [table.column(c).to_pylist() for c in cols]
    for row in zip(*data):
        lines.append("\t".join(repr(x) if isinstance(x, float) else str(x) for x in row))
    emit("\n".join(lines) + "\n", args)


def sentence_level_text(args, metrics: dict, stats: dict) -> str:
    ((name, metric),) = metrics.items()
    sig = metric.get_signature().format(args.short)
    return "".join(metric.compute_score_from_stats([x.item() for x in row]).format(
        args.width, args.score_only, sig) + "\n" for row in stats[name][0])


def single_system_text(args, metrics: dict, stats: dict, bert, collected) -> str:
    from ...engine.significance import bootstrap_ci

    results = []
    for name in sorted(metrics):
        m, st = metrics[name], stats[name][0]
        sc = m.compute_score_from_stats(m.sum_stats(st))
        if args.confidence:
            bootstrap_ci(m, st, sc, args.confidence_n, seed=args.seed)
        sig = m.get_signature().format(args.short if args.format != "json" else False)
        results.append(sc.format(args.width, args.score_only, sig, args.format == "json"))
    if bert is not None:
        (system,) = collected.systems.values()
        results.append(bert.format(system, collected.refs))
    return single_results_text(results, args)


def paired_text(args, names: list[str], metrics: dict, stats: dict) -> str:
    from ...engine.significance import compare_stats
    from .significance_report import colors_enabled, format_comparison

    test = "bs" if args.paired_bs else "ar"
    res = compare_stats(names, list(metrics.values()),
                        [[stats[k][s] for k in metrics] for s in range(len(names))], test=test,
                        n=args.paired_bs_n if test == "bs" else args.paired_ar_n, seed=args.seed)
    return format_comparison(res, args.format, args.width, args.short, colors_enabled(args))


def multi_system_table(args, names: list[str], metrics: dict, stats: dict, bert=None,
                        collected=None) -> str:
    """sacrebleu's multi-system table (no paired test): one row per system, sorted metrics,
    then BERTScore (100 x mean F1) when requested."""
    from .significance_report import colors_enabled, format_results_table

    sigs = {}
    scores = {"System": list(names)}
    for name in sorted(metrics):
        m = metrics[name]
        for st in stats[name]:
            sc = m.compute_score_from_stats(m.sum_stats(st))
            sigs[sc.name] = m.get_signature().format(args.short)
            scores.setdefault(sc.name, []).append(sc.format(args.width, True))
    width = args.width
    if bert is not None:
        for system in collected.systems.values():
            res = bert.result(system, collected.refs)
            sigs[res["name"]] = res["signature"]
            # COMET: at least 4 decimals (its scale is not x100); the table has one number format
            width = max(width, res.get("min_width", 0))
            scores.setdefault(res["name"], []).append(f"{res['score']:.{width}f}")
    return format_results_table(scores, sigs, args.format, width, args.short,
                                color=colors_enabled(args))
