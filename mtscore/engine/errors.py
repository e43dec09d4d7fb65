"""User-facing error plumbing shared by the command-line faces (``mtscore`` and ``mtscore
meta|human``): the errors contract asks for one clear line and a nonzero exit status."""
from __future__ import annotations

import argparse
import math
from typing import Callable, NoReturn, Union


class OneLineErrorParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line (``prog: error: message``, plus a
    pointer to ``--help``) instead of the whole usage block, exit status 2 like argparse."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")



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


def _parse(kind: Callable[[str], Union[int, float]], text: str, what: str) -> Union[int, float]:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
