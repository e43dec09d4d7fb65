"""The ``mtscore`` entry point (console script and ``python -m mtscore``): picks the command from
the first words of the command line and runs it.

    mtscore REF [REF ...] -i HYP [HYP ...] -m bleu chrf ter     # the default: :mod:`.score`
    mtscore score-table FILE ...                                # :mod:`.table`
    mtscore meta ... | mtscore human ...                        # :mod:`.analysis`
    mtscore mbr ... | mtscore nbest ...                         # :mod:`.decoder`
    mtscore bertscore baseline ...                              # :mod:`.bertscore`
    mtscore demo                                                # :mod:`.demo`
    mtscore report REF -i SYS [SYS ...] -o report.html          # :mod:`.html_report`

:data:`SUBCOMMANDS` is the one table of subcommands; each command module builds its own parser
(a single argparse tree cannot hold the plain ``mtscore REF -i HYP`` form beside subcommands
without changing ``mtscore --help``) and runs its work through the one error runner,
:func:`.runner.run_command`. Only this module's top-level imports run at start-up; a command's
module is imported when it is chosen.
"""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing ``typing`` is a share of ``mtscore --help``'s start-up
    from typing import Callable

__all__ = ["BLAS_THREAD_VARS", "SUBCOMMANDS", "main"]


def _score_table(argv: list[str]) -> int:
    from .table import table_main

    return table_main(argv)


def _meta_or_human(word: str) -> Callable[[list[str]], int]:
    def run(argv: list[str]) -> int:
        from .analysis import main as analysis_main

        return analysis_main([word, *argv])

    return run


def _demo(argv: list[str]) -> int:
    from .demo import main as demo_main

    return demo_main(argv, cli_main=main)  # the demo drives this entry point


def _mbr(argv: list[str]) -> int:
    from .decoder import mbr_main

    return mbr_main(argv)


def _nbest(argv: list[str]) -> int:
    from .decoder import nbest_main

    return nbest_main(argv)


def _bertscore_baseline(argv: list[str]) -> int:
    from .bertscore import baseline_main

    return baseline_main(argv)


def _report(argv: list[str]) -> int:
    from .html_report import report_main

    return report_main(argv)


def _reproduce(argv: list[str]) -> int:
    from .reproduce import main as reproduce_main

    return reproduce_main(argv)


def _score(argv: list[str]) -> int:
    from .score import main as score_main

    return score_main(argv)


#: the first words of a subcommand -> its entry (given the rest of the command line); any
#: other command line is the plain scoring command (:mod:`.score`)
SUBCOMMANDS: dict[tuple[str, ...], Callable[[list[str]], int]] = {
    ("score-table",): _score_table,
    ("meta",): _meta_or_human("meta"),
    ("human",): _meta_or_human("human"),
    ("demo",): _demo,
    ("mbr",): _mbr,
    ("nbest",): _nbest,
    ("bertscore", "baseline"): _bertscore_baseline,
    ("report",): _report,
    ("reproduce",): _reproduce,
}

#: commands that leave numpy's BLAS threads alone (their linear algebra can use them)
MULTI_THREADED_BLAS = ("meta", "human")

#: environment variables that set the BLAS thread-pool size: when the user set none of them, the
#: commands start numpy with one BLAS thread (see :func:`_single_threaded_blas`)
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def _single_threaded_blas() -> None:
    """One BLAS thread unless the user chose a number (``OPENBLAS_NUM_THREADS`` or
    ``OMP_NUM_THREADS``, which OpenBLAS also reads). numpy's OpenBLAS starts one thread per core
    when numpy is imported (about half of ``import numpy``'s CPU time, ~0.06 s here); the scoring
    commands do no BLAS work that needs them (the significance tests' matrix products are
    single-threaded-fast at these sizes). Must run before numpy is imported; has no effect on a
    process that already imported it. The command line only: the library leaves the user's
    settings alone."""
    if not any(var in os.environ for var in BLAS_THREAD_VARS):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not (argv and argv[0] in MULTI_THREADED_BLAS):
        _single_threaded_blas()
    for words, entry in SUBCOMMANDS.items():
        if argv[:len(words)] == list(words):
            return entry(argv[len(words):])
    return _score(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
