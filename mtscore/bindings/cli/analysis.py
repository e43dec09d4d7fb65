"""``mtscore meta ...`` and ``mtscore human ...`` (:mod:`.main` dispatches here): the one parser of
both areas and its dispatch; the commands are in :mod:`.meta` and :mod:`.human` (with
:mod:`.metaeval`, :mod:`.procedures`, :mod:`.campaign` and :mod:`.crowd`), what they share in
:mod:`.analysis_output`.

Examples::

    mtscore meta wmt20 --data ../shared/data/wmt20-metrics --lp de-en --html de-en.html
    mtscore meta sys --scores DA-newstest2019-ende-sys-nohy-scores.csv --format json
    mtscore human ratings --ratings ad-csen-good-stnd.csv --format text
    mtscore human rater-model --ratings ad-csen-good-stnd.csv --keep 10
    mtscore human agreement ratings_all --groups groups.txt --source-groups batch5
"""
from __future__ import annotations

import argparse
import sys

from . import human, meta, procedures
from .analysis_output import check_outputs

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    from .parser import OneLineErrorParser

    ap = OneLineErrorParser(
        prog="mtscore",
        description="Meta-evaluation of MT metrics against human judgements (meta) and analysis of "
                    "Direct Assessment human evaluations (human).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("Examples::", 1)[1])
    sub = ap.add_subparsers(dest="area", required=True, parser_class=OneLineErrorParser)
    meta.add_parser(sub)
    human.add_parser(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``main(['meta', 'wmt20', ...])`` / ``main(['human', 'ratings', ...])``.

    Bad input (a :class:`~mtscore.errors.UserError` such as :class:`~mtscore.analysis.errors.AnalysisInputError`), an
    unreadable file (``OSError``) and a missing optional dependency print one line
    ``mtscore: error: ...`` and return 1; usage errors exit 2 (argparse); anything else is a bug
    and keeps its traceback (:data:`.runner.ANALYSIS`)."""
    from .runner import ANALYSIS, run_command

    return run_command(_run, build_parser().parse_args(argv), "mtscore", ANALYSIS)


def _run(args: argparse.Namespace) -> int:
    check_outputs(args)
    if args.cmd in procedures.COMMANDS:
        return procedures.run(args)
    if args.area == "meta":
        return meta.run(args)
    return human.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
