"""What ``mtscore meta ...`` and ``mtscore human ...`` share (:mod:`.analysis`, :mod:`.meta`,
:mod:`.human`, :mod:`.metaeval`, :mod:`.procedures`, :mod:`.campaign`): the ``--format`` /
``--output`` options, writing the result files atomically, warnings on stderr, and refusing
output paths that cannot work before any computation.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...analysis.errors import AnalysisInputError

__all__ = ["add_output_options", "check_outputs", "counted", "emit", "warn", "write_output"]


def add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json", "csv"), default="text",
                   help="what to print on stdout (default: text table)")
    p.add_argument("--output", "-o", help="write the text/json/csv result to this file instead of stdout")


def write_output(option: str, path: str, data: str | bytes) -> None:
    """Write an output file atomically; a failure names the option and the requested path."""
    from ...analysis.output import write_atomic

    try:
        write_atomic(path, data)
    except OSError as exc:
        raise AnalysisInputError(f"{option} {path}: {exc.strerror}") from None


def emit(text: str, output: str | None) -> None:
    if output:
        write_output("--output", output, text)
    else:
        sys.stdout.write(text)


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot work before any computation (and before any writing)."""
    for option, path in (("--output", getattr(args, "output", None)), ("--html", getattr(args, "html", None))):
        if not path:
            continue
        folder = Path(path).resolve().parent
        if Path(path).is_dir():
            raise AnalysisInputError(f"{option} {path}: is a folder, expected a file name")
        if not folder.is_dir():
            why = "is a file, not a folder" if folder.exists() else "does not exist"
            raise AnalysisInputError(f"{option} {path}: the folder {folder} {why}")
    figdir = getattr(args, "figdir", None)
    if figdir and Path(figdir).exists() and not Path(figdir).is_dir():
        raise AnalysisInputError(f"--figdir {figdir}: exists and is not a folder")
    # every figure output needs matplotlib: say so now, not after the computation
    drawn = [f"--{k}" for k in ("plot", "png", "figdir", "html") if getattr(args, k, None)]
    if drawn:
        from ...analysis.plots import require_matplotlib

        try:
            require_matplotlib()
        except ImportError as exc:
            raise ImportError(f"{drawn[0]}: {exc}") from None


def warn(message: str) -> None:
    print(f"mtscore: warning: {message}", file=sys.stderr)


def counted(n: int, noun: str) -> str:
    """``"1 HIT"``, ``"2 HITs"``: ``n`` and the noun, with a plural ``s`` unless ``n`` is 1."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
