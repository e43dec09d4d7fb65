"""User-facing error plumbing shared by the command-line faces (``mtscore`` and ``mtscore
meta|human``): the errors contract asks for one clear line and a nonzero exit status."""
from __future__ import annotations

import argparse
import math

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing ``typing`` is a share of ``mtscore --help``'s start-up
    from typing import Callable, NoReturn


class OneLineErrorParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line (``prog: error: message``, plus a
    pointer to ``--help``) instead of the whole usage block, exit status 2 like argparse."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args=None, namespace=None):
        """argparse's, then :func:`refuse_outputs_onto_inputs`: an output option naming one of
        the command's input files is a usage error (exit 2) before any work."""
        ns = super().parse_args(args, namespace)
        refuse_outputs_onto_inputs(self, ns)
        return ns


#: option destinations that name files a command writes (``-o/--output``, ``--out``, ``--html``,
#: ``--plot``, ``--png``); every other option or positional value naming an existing file is an input
OUTPUT_DESTS = ("output", "out", "html", "plot", "png")


def refuse_outputs_onto_inputs(parser: argparse.ArgumentParser, args: argparse.Namespace,
                               outputs=OUTPUT_DESTS) -> None:
    """``parser.error`` (one line, exit 2) when an output option names the same file as an input
    argument (``os.path.samefile``: links and relative paths resolved; devices and FIFOs never
    clash), e.g. ``mtscore ref -i hyp -o ref`` would leave the score where the reference was."""
    from ...engine.atomic import first_clash

    values = vars(args)
    candidates = []
    for dest, value in values.items():
        if dest in outputs:
            continue
        items = value if isinstance(value, (list, tuple)) else [value]
        candidates += [(dest, v) for v in items if isinstance(v, str) and v and v != "-"]
    if not candidates:
        return
    for dest in outputs:
        out = values.get(dest)
        if not isinstance(out, str) or not out or out == "-":
            continue
        clash = first_clash(out, [v for _, v in candidates])
        if clash is not None:
            src = _option_name(parser, next(d for d, v in candidates if v == clash))
            parser.error(f"{_option_name(parser, dest)} {out} is also an input "
                         f"({src + ' ' if src else ''}{clash}); refusing to overwrite it")


def _option_name(parser: argparse.ArgumentParser, dest: str) -> str:
    """The long option string for ``dest`` (``--output``); '' for a positional argument.
    Subcommands' parsers are searched too (the first that has ``dest``)."""
    parsers = [parser]
    while parsers:
        p = parsers.pop(0)
        for action in p._actions:  # argparse keeps no public index of its actions
            if isinstance(action, argparse._SubParsersAction):
                parsers += list(action.choices.values())
            elif action.dest == dest:
                return max(action.option_strings, key=len) if action.option_strings else ""
    return "--" + dest.replace("_", "-")



# ---- option value types: a bad value is a usage error (one line, exit 2) naming the option --
def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type`` accepting integers >= ``low``."""
    def parse(text: str) -> int:
        v = int(_parse(int, text, "an integer"))
        if v < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, got {text}")
        return v

    parse.__name__ = f"int>={low}"
    return parse


positive_int = int_at_least(1)
nonnegative_int = int_at_least(0)


def positive_float(text: str) -> float:
    """An argparse ``type``: a finite number above 0."""
    v = float(_parse(float, text, "a number"))
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return v


def probability(text: str) -> float:
    """An argparse ``type``: a number strictly between 0 and 1."""
    v = float(_parse(float, text, "a number"))
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (exclusive), got {text}")
    return v


def _parse(kind: Callable[[str], int | float], text: str, what: str) -> int | float:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
