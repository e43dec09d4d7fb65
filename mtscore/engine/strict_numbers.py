"""Strict parsing of the numbers in users' score files (human ratings, metric scores).

Python's ``float()`` accepts far more than a score file should contain: ``1_000`` (digit
grouping), full-width or other non-ASCII digits (``'１２'``, ``'٣'``), ``inf``, ``nan``,
``Infinity`` and surrounding Unicode spaces. A hostile or merely damaged file then changes
rankings and correlations silently. The readers of ``mtscore meta`` / ``mtscore human``
therefore parse every score with :func:`parse_number` / :func:`parse_numbers`, which accept
plain decimal notation only::

    [+-]? ( digits [. digits?] | . digits ) ( [eE] [+-]? digits )?     digits = ASCII 0-9

Blanks and tabs around a cell are ignored; nothing else is. Words that a format defines as
"missing" (``NA``, ``NaN``, an empty cell) are the caller's choice (``missing=``) and become
NaN; a number too large for a float64 (``1e400``) is refused rather than turned into ``inf``.

Errors are :class:`NumberSyntaxError` (a ``ValueError``) carrying the offending text and the
index of the bad cell, so a reader can name its file, line and column.

Imports nothing beyond the standard library at load time (numpy only inside
:func:`parse_numbers`): the command-line option parsers use it, and ``--help`` must stay fast.
"""
from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from ..errors import UserError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["PLAIN_NUMBER", "NumberSyntaxError", "parse_number", "parse_numbers"]

# ASCII only: [0-9] (not \d, which matches every Unicode decimal digit)
PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BLANKS = " \t\r\n"  # ASCII only: str.strip() would also drop U+3000 and friends


class NumberSyntaxError(UserError, ValueError):
    """``text`` (cell ``index`` of a column; 0 for a single value) is not a plain decimal
    number with a finite value; ``str(exc)`` says so in one phrase that quotes the text, e.g.
    ``'1_000' is not a number in plain decimal notation (digit separator '_'; write 1000)``."""

    def __init__(self, text: str, index: int = 0) -> None:
        self.text = text
        self.index = index
        super().__init__(_message(text))


def _message(text: str) -> str:
    """Why ``text`` is refused, quoting it."""
    s = text.strip(_BLANKS)
    if not s:
        return f"{text!r} is not a number (empty cell)"
    if "_" in s:
        return f"{text!r} is not a number in plain decimal notation (digit separator '_'; write it without)"
    odd = next((c for c in s if ord(c) > 127), None)
    if odd is not None:
        kind = "non-ASCII digit" if odd.isdigit() else "non-ASCII character"
        return (f"{text!r} is not a number in plain decimal notation ({kind} {odd!r}, U+{ord(odd):04X}; "
                "only ASCII 0-9 . + - e E are allowed)")
    if s.lower().lstrip("+-") == "nan":
        return f"{text!r} is not a number (NaN values are not scores)"
    if s.lower().lstrip("+-") in ("inf", "infinity"):
        return f"{text!r} is not a finite number (infinite values are not scores)"
    if PLAIN_NUMBER.fullmatch(s):
        return f"{text!r} is not a finite number (too large for a 64-bit float)"
    return f"{text!r} is not a number"


def parse_number(text: str) -> float:
    """``text`` as a float if it is a plain ASCII decimal number (see the module docstring) whose
    value is finite in float64; otherwise :class:`NumberSyntaxError`."""
    s = text.strip(_BLANKS)
    if PLAIN_NUMBER.fullmatch(s):
        v = float(s)
        if math.isfinite(v):
            return v
    raise NumberSyntaxError(text)


def parse_numbers(cells: Sequence[str | None], missing: Collection[str] = ()) -> np.ndarray:
    """A column of cells as float64 (n,). ``None`` and cells equal (after trimming blanks) to a
    word of ``missing`` become NaN; every other cell must pass :func:`parse_number`. The first
    bad cell raises :class:`NumberSyntaxError` with its ``index``."""
    import numpy as np

    out = np.empty(len(cells), dtype=np.float64)
    miss = frozenset(missing)
    match = PLAIN_NUMBER.fullmatch
    for i, c in enumerate(cells):
        if c is None:
            out[i] = np.nan
            continue
        s = c.strip(_BLANKS)
        if s in miss:
            out[i] = np.nan
        elif match(s):
            out[i] = float(s)
            if not math.isfinite(out[i]):
                raise NumberSyntaxError(c, i)
        else:
            raise NumberSyntaxError(c, i)
    return out
