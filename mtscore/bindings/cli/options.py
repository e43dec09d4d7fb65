"""The options of the ``mtscore`` command (shared with ``mtscore score-table``): the argparse
groups, the checks of their combinations, and the metric objects they describe."""
from __future__ import annotations

import argparse

from .inputs import CLIError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: ``typing`` costs milliseconds at start-up
    from typing import Any


def input_output_options(p: argparse.ArgumentParser) -> None:
    """Files, encodings and the output path."""
    from .parser import positive_int

    io_ = p.add_argument_group("input/output")
    io_.add_argument("refs", nargs="*", default=[],
                     help="reference file(s), one segment per line (.gz ok); give them before -i")
    io_.add_argument("--input", "-i", nargs="*", default=None,
                     help="system output file(s); several files = multi-system mode; default stdin")
    io_.add_argument("--num-refs", "-nr", type=positive_int, default=1,
                     help="split each line of the single reference file on tabs into this many references")
    io_.add_argument("--encoding", "-e", default="utf-8", help="input encoding (default utf-8)")
    io_.add_argument("--encoding-errors", choices=["strict", "replace"], default="strict",
                     help="invalid input bytes: stop with an error naming the line (strict) or "
                          "substitute U+FFFD (replace)")
    io_.add_argument("--language-pair", "-l", dest="langpair", default=None,
                     help="SRC-TRG; the target selects BLEU's zh/ja-mecab/ko-mecab tokenizer")
    io_.add_argument("--test-set", "-t", default=None, help=argparse.SUPPRESS)
    io_.add_argument("--output", "-o", default=None,
                     help="write the result here (required for --format parquet); written "
                          "atomically, so a failed run leaves no partial file")


def cli_metric_names() -> list[str]:
    """The names ``-m`` offers: the registry's metrics with ``cli`` set, in registry order."""
    from ...engine.metrics.registry import specs

    return [s.name for s in specs() if s.cli]


def metric_options(p: argparse.ArgumentParser) -> None:
    """Which metrics, and the options of each (sacrebleu's flags)."""
    from .parser import nonnegative_int

    m = p.add_argument_group("metrics")
    m.add_argument("--metrics", "-m", nargs="+", default=["bleu"],
                   choices=cli_metric_names(), type=str.lower,
                   help="metrics to compute (default bleu); printed in sorted order")
    m.add_argument("--sentence-level", "-sl", action="store_true",
                   help="one score per segment (one metric, one system); BLEU uses effective order")
    m.add_argument("--workers", type=nonnegative_int, default=1,
                   help="threads for the compiled metrics (0 = all cores); results do not change")
    from ...engine.line_limit import MAX_LINE_CHARS

    m.add_argument("--max-line-chars", type=nonnegative_int, default=MAX_LINE_CHARS, metavar="N",
                   help=f"refuse a line longer than N characters before any work (default {MAX_LINE_CHARS:,}; "
                        "its n-gram tables could need gigabytes; 0 = no limit)")

    _flag_groups(p, "metrics")


def _flag_groups(p: argparse.ArgumentParser, section: str) -> None:
    """Each registered metric's flag group listed in ``section`` of the help ("metrics":
    BLEU, chrF, TER, ...; "reporting": BERTScore), in registry order, a shared group once."""
    from ...engine.metrics.registry import specs

    seen: list = []
    for spec in specs():
        group = spec.options
        if spec.cli and group is not None and group.section == section and not any(g is group for g in seen):
            seen.append(group)
            group.add_to(p)


def statistics_options(p: argparse.ArgumentParser) -> None:
    """Bootstrap CIs and paired significance tests."""
    from .parser import int_at_least, positive_int

    s = p.add_argument_group("statistics")
    s.add_argument("--confidence", "-ci", action="store_true",
                   help="bootstrap 95%% confidence interval (single system)")
    s.add_argument("--confidence-n", "-cin", type=int_at_least(2), default=1000, help="bootstrap resamples (1000)")
    pg = s.add_mutually_exclusive_group()
    pg.add_argument("--paired-bs", "-pbs", action="store_true",
                    help="paired bootstrap resampling against the first system")
    pg.add_argument("--paired-ar", "-par", action="store_true",
                    help="paired approximate randomization against the first system")
    s.add_argument("--paired-bs-n", "-pbsn", type=positive_int, default=1000, help="bootstrap resamples (1000)")
    s.add_argument("--paired-ar-n", "-parn", type=positive_int, default=10000, help="AR trials (10000)")
    # sacrebleu's flag (worker processes for its paired tests), accepted so that sacrebleu command
    # lines run unchanged, and ignored: the paired tests here run on the statistics in-process
    s.add_argument("--paired-jobs", "-j", type=int, default=1, help=argparse.SUPPRESS)
    s.add_argument("--seed", default=None,
                   help="random seed for resampling (default $SACREBLEU_SEED or 12345; 'none' = random)")


def report_options(p: argparse.ArgumentParser) -> None:
    """Output format, and BERTScore's options."""
    from ... import __version__
    from .parser import nonnegative_int

    r = p.add_argument_group("reporting")
    r.add_argument("--quiet", "-q", action="store_true", help="no informational logging")
    r.add_argument("--short", "-sh", action="store_true", help="short signatures (text output)")
    r.add_argument("--score-only", "-b", action="store_true", help="print only the score")
    r.add_argument("--width", "-w", type=nonnegative_int, default=1, help="decimals (1)")
    r.add_argument("--no-color", "-nc", action="store_true", help="no colors in tables")
    r.add_argument("--format", "-f", default="json",
                   choices=["json", "text", "latex", "tsv", "parquet"],
                   help="json/text/latex as sacrebleu; tsv/parquet: per-segment scores table")
    r.add_argument("--progress", action="store_true", default=None,
                   help="progress bars on stderr even when it is not a terminal (default: only on a "
                        "terminal and not when CI=true; BERTScore's bar moves with every encoder batch)")
    r.add_argument("--version", "-V", action="version", version=f"mtscore {__version__} (sacrebleu 2.6.0 compatible)")

    _flag_groups(p, "reporting")


def metric_kwargs(args, name: str) -> dict:
    """Constructor arguments of metric ``name`` from the parsed options (its registry entry's
    flag group and ``from_args``)."""
    from ...engine.metrics.registry import get_spec

    return get_spec(name).cli_kwargs(args)


def separate_metrics(args) -> list[str]:
    """The ``-m`` metrics the CLI runs apart from the others (the registry's
    ``report_runner``: BERTScore, with its own encoder, progress and report)."""
    from ...engine.metrics.registry import get_spec

    return [n for n in args.metrics if get_spec(n).separate_runner]


def runner_class(name: str) -> Any:
    """The CLI's runner class of metric ``name`` (its registry entry's ``report_runner``),
    imported here: a missing extra is a :class:`CLIError` with its install command."""
    from ...engine.metrics.registry import get_spec

    spec = get_spec(name)
    try:
        return spec.load_runner()
    except ImportError as e:
        if spec.extra is None:
            raise CLIError(f"-m {name}: {e}") from None
        from ...engine.missing_extra import install_hint

        raise CLIError(f"-m {name}: {e}; install with: {install_hint(spec.extra)}") from None


def report_runner(args, n_systems: int | None = None):
    """The runner of the ``-m`` metric scored apart (:func:`separate_metrics`), made from the
    parsed ``args`` (``n_systems``: for its progress labels), or None when ``-m`` names none.
    The report has room for one such metric (:func:`check_options` refuses two)."""
    names = separate_metrics(args)  # one at most: check_options
    return runner_class(names[0])(args, n_systems=n_systems) if names else None


def build_metrics(args, **common) -> dict:
    """``{NAME: metric}`` in -m order (the :func:`separate_metrics` left out); ``common``: constructor
    arguments every metric takes (``missing_refs``)."""
    from ...engine.metrics.registry import make_metric

    metrics = {}
    separate = separate_metrics(args)
    for name in args.metrics:
        if name in separate:
            continue
        try:
            m = make_metric(name, **metric_kwargs(args, name), **common)
        except (ImportError, ValueError, RuntimeError) as e:
            raise CLIError(f"-m {name}: {e}") from None
        m.workers = args.workers
        m.max_line_chars = args.max_line_chars
        metrics[name.upper()] = m
    return metrics


def check_options(args) -> None:
    """Option combinations and values sacrebleu would reject (or print garbage for)."""
    paired = args.paired_bs or args.paired_ar
    if args.sentence_level and len(args.metrics) > 1:
        raise CLIError("Only one metric can be used in sentence-level mode.")
    if args.sentence_level and (args.confidence or paired):
        raise CLIError("Statistical tests are unavailable in sentence-level mode.")
    if args.format == "parquet" and not args.output:
        raise CLIError("--format parquet needs --output FILE")
    if args.format == "tsv" and (paired or args.confidence):
        test = "--paired-bs" if args.paired_bs else "--paired-ar" if args.paired_ar else "--confidence"
        raise UsageError(f"{test} with --format tsv: a TSV table of segment scores cannot hold "
                         "the test's results; use --format json (or text) for them, or --format "
                         "parquet -o FILE for the segment scores with the results in the file's "
                         "metadata (key 'mtscore.report')")
    _check_separate(args, paired)


def _check_separate(args, paired: bool) -> None:
    """What a metric the CLI runs apart (the registry's ``report_runner``: BERTScore) cannot
    do there (segment tables, --sentence-level, a second one), and paired tests of a metric
    that does not resample (the registry's ``resamples``)."""
    from ...engine.metrics.registry import get_spec

    separate = separate_metrics(args)
    if len(separate) > 1:  # the report has room for one (no built-in pair: BERTScore alone)
        raise CLIError(f"-m {' '.join(separate)}: one metric with its own runner at a time")
    for name in separate:
        spec = get_spec(name)
        if args.format in ("tsv", "parquet"):
            raise CLIError(f"--format tsv/parquet with {name}: not supported yet; "
                           f"use the Python API mtscore.{spec.cls}")
        if args.sentence_level:
            raise CLIError(f"--sentence-level with {name}: use --format tsv or the Python API")
    for name in args.metrics if paired else ():
        spec = get_spec(name)
        if name in separate and args.metrics == [name] and \
                hasattr(runner_class(name), "paired"):
            continue  # its runner tests the mean of its segment scores (COMET)
        if not spec.resamples:
            raise CLIError(f"-m {name} with --paired-bs/--paired-ar: not supported; test {spec.cls} "
                           "segment scores with mtscore.compare_segment_scores(...) in Python")
