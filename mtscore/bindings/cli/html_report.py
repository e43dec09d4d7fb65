"""``mtscore report REF [REF ...] -i SYS [SYS ...] [--src SRC] [-m METRICS] -o report.html``:
the self-contained HTML report of :func:`mtscore.report`, written atomically (the file appears
whole or not at all; nothing is written when an input is wrong)."""
from __future__ import annotations

import argparse

__all__ = ["report_main"]


def report_main(argv: list[str] | None = None) -> int:
    """Parse (usage errors exit 2), compute, write."""
    from .parser import OneLineErrorParser, int_at_least
    from .runner import run_command

    ap = OneLineErrorParser(prog="mtscore report",
                            description="Write one self-contained HTML page comparing systems: scores "
                                        "with CIs and significance clusters, pairwise significance, "
                                        "sentence-score histograms, length and word-frequency buckets, "
                                        "n-grams, the most differing segments, metric agreement.")
    ap.add_argument("refs", nargs="+", metavar="REF", help="reference file(s), one segment per line")
    ap.add_argument("-i", "--input", dest="systems", nargs="+", required=True, metavar="SYS",
                    help="system output files (named by their path unless --names)")
    ap.add_argument("--names", nargs="+", default=None, help="display names of the systems, in order")
    ap.add_argument("--src", default=None, help="source file (source-length buckets, sources in examples)")
    ap.add_argument("-m", "--metrics", nargs="+", default=["bleu", "chrf", "ter"],
                    help="metrics (default: bleu chrf ter)")
    ap.add_argument("--bootstrap", type=int_at_least(2), default=1000,
                    help="bootstrap resamples of every CI and paired test (default 1000)")
    ap.add_argument("--seed", type=int_at_least(0), default=12345, help="resampling seed (default 12345)")
    ap.add_argument("--frequencies", default=None, metavar="FILE",
                    help="training-corpus file (target side, one segment per line) whose word counts "
                         "make the frequency buckets (compare-mt's --freq_corpus_file; default: "
                         "counted in the references)")
    ap.add_argument("--buckets", type=_bucket_list, default=None, metavar="ref,src",
                    help="length buckets to show: ref (reference length) and/or src (source length, "
                         "needs --src); default ref, plus src when --src is given")
    ap.add_argument("--title", default="mtscore report", help="page title")
    ap.add_argument("-o", "--output", required=True, help="HTML file to write")
    a = ap.parse_args(argv)
    if a.names is not None and len(a.names) != len(a.systems):
        ap.error(f"--names has {len(a.names)} names for {len(a.systems)} systems (-i)")
    names = a.names or a.systems
    if len(set(names)) != len(names):
        ap.error("system names must be unique (give --names)")
    return run_command(_run, a, "mtscore report")


def _bucket_list(text: str) -> list[str]:
    """``--buckets ref,src``: the comma-separated names (checked by :func:`mtscore.report`)."""
    return [x.strip() for x in text.split(",") if x.strip()]


def _run(a: argparse.Namespace) -> int:
    from ...engine.atomic import atomic_write
    from ...engine.textio import read_lines
    from ..report import report

    refs = [read_lines(p) for p in a.refs]
    systems = {name: read_lines(p) for name, p in zip(a.names or a.systems, a.systems)}
    src = read_lines(a.src) if a.src else None
    frequencies = None
    if a.frequencies:  # tokenised as the report's analyses tokenise (13a)
        from ...analysis.compare.tokens import tokenize
        from ...analysis.compare.word_accuracy import word_frequencies

        frequencies = word_frequencies(tokenize(read_lines(a.frequencies), "13a"))
    text = report(refs, systems, src=src, metrics=a.metrics, n_bootstrap=a.bootstrap, seed=a.seed,
                  frequencies=frequencies, buckets=a.buckets, title=a.title)
    atomic_write(a.output, lambda f: f.write(text.encode("utf-8")), "--output")
    return 0


# ---- score-table --report FILE ----------------------------------------------------------------
def check_report_path(path: str, option: str = "--report") -> None:
    """Fail now (before any scoring) with one line when ``path`` cannot be written: a folder,
    a missing folder, a folder without write permission (a file is made and removed there)."""
    import os
    import tempfile

    from .inputs import CLIError

    if os.path.isdir(path):
        raise CLIError(f"{option} {path}: is a folder, expected a file name")
    directory = os.path.dirname(os.path.abspath(os.path.realpath(path)))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".mtscore-report-check.", suffix=".tmp")
    except OSError as e:
        why = "its folder does not exist" if isinstance(e, FileNotFoundError) else (e.strerror or str(e))
        raise CLIError(f"{option} {path}: {why}") from None
    os.close(fd)
    os.unlink(tmp)


def table_report(args: argparse.Namespace, systems: dict, refs: list) -> str:
    """The HTML report of ``score-table ... --report``: the table's systems (``{name: hyps}``;
    a table without a system column: one system named after ``--hyp``) and K reference
    streams, the ``-m`` metrics with the options of their flags (the table's configuration, so
    the same corpus scores), ``--paired-bs-n`` resamples and ``--seed``."""
    from ...engine.metrics.bootstrap import resolve_seed
    from ..report import report
    from .options import metric_kwargs

    named = {(name or args.hyp): hyps for name, hyps in systems.items()}
    seed, _ = resolve_seed(args.seed)
    kwargs = {m.lower(): metric_kwargs(args, m.lower()) for m in args.metrics}
    return report(refs, named, metrics=[m.lower() for m in args.metrics], n_bootstrap=args.paired_bs_n,
                  seed=12345 if seed is None else seed, metric_kwargs=kwargs)


def write_report(path: str, text: str) -> None:
    """``text`` into ``path`` atomically (as ``mtscore report -o``)."""
    from ...engine.atomic import atomic_write

    atomic_write(path, lambda f: f.write(text.encode("utf-8")), "--report")
