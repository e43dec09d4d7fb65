"""The ``fancy_grid`` table of sacrebleu's text reports, byte-identical to what ``tabulate`` prints
for them, without importing ``tabulate`` (its import is ~20 ms of a ~0.2 s ``mtscore --paired-bs``
process).

sacrebleu calls ``tabulate(table, headers="keys", tablefmt="fancy_grid", colalign=("right",),
stralign="center", numalign="center", floatfmt=...)``. :func:`fancy_grid` reproduces that for
the tables whose layout it can be sure of, and returns None for any other, so that the caller
falls back to ``tabulate`` itself:

* every header and cell is a non-empty ``str`` of printable ASCII, ``±``, ``μ`` (one terminal
  column each, with or without ``wcwidth``) and ANSI SGR colour codes ``ESC[<digits>m`` (no
  width); cells (not headers) may have several non-empty lines (``\\n`` between them);
* every column holds at least one cell that ``tabulate`` types as text (not ``True``/``False``,
  not convertible by ``float``, no ``,``), so the whole column is aligned as text and no cell is
  re-formatted as a number.

What ``tabulate`` then does, and is done here: cells are stripped; a column is as wide as its
widest visible line and at least its header plus 2; the first column is right-aligned, the others
centred (``str.format``'s ``^``: the odd space goes right); headers are aligned the same way
but not stripped; a multi-line cell's missing lines are blank; each cell has one space of
padding; rows are separated by ``├─┼┤`` lines, and framed by ``╒═╤╕``, ``╞═╪╡`` and ``╘═╧╛``.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["fancy_grid"]

_SGR = re.compile(r"\x1b\[[0-9]+m")
# after removing SGR codes: printable ASCII, the two symbols of sacrebleu's headers and cells,
# and newlines between non-empty lines
_SAFE = re.compile(r"[\x20-\x7e±μ]+(?:\n[\x20-\x7e±μ]+)*")


def _visible(s: str) -> str:
    return _SGR.sub("", s)


def _safe(s: object) -> bool:
    return isinstance(s, str) and _SAFE.fullmatch(_visible(s)) is not None


def _is_text(cell: str) -> bool:
    """True only where tabulate certainly types the cell as text (see the module docstring)."""
    v = _visible(cell)
    if v in ("True", "False") or "," in v:
        return False
    try:
        float(v)
    except ValueError:
        return True
    return False


def _pad(s: str, width: int, right: bool) -> str:
    """``s`` padded to ``width`` visible columns (SGR codes take none)."""
    width += len(s) - len(_visible(s))
    return f"{s:>{width}}" if right else f"{s:^{width}}"


def _line(left: str, fill: str, sep: str, end: str, widths: Sequence[int]) -> str:
    return left + sep.join(fill * (w + 2) for w in widths) + end


def fancy_grid(columns: Mapping[str, Sequence[str]]) -> str | None:
    """sacrebleu's text table of ``columns`` (header -> cells, in column order, first column
    right-aligned, the others centred), or None where tabulate's output is not certain to be
    reproduced (the caller then uses tabulate)."""
    headers = list(columns)
    cols = [list(columns[h]) for h in headers]
    if not headers or not cols[0] or any(len(c) != len(cols[0]) for c in cols):
        return None
    if not all(_safe(h) and "\n" not in h for h in headers) or not all(_safe(x) for c in cols for x in c):
        return None
    if not all(any(_is_text(x) for x in c) for c in cols):
        return None
    lines_of = [[x.strip().split("\n") for x in c] for c in cols]
    widths = [max(len(_visible(h)) + 2, max(len(_visible(ln)) for cell in cell_lines for ln in cell))
              for h, cell_lines in zip(headers, lines_of)]
    out: list[str] = [_line("╒", "═", "╤", "╕", widths)]
    out += _row([[h] for h in headers], widths)
    out.append(_line("╞", "═", "╪", "╡", widths))
    n_rows = len(cols[0])
    for r in range(n_rows):
        out += _row([cell_lines[r] for cell_lines in lines_of], widths)
        if r < n_rows - 1:
            out.append(_line("├", "─", "┼", "┤", widths))
    out.append(_line("╘", "═", "╧", "╛", widths))
    return "\n".join(out)


def _row(cells: Sequence[Sequence[str]], widths: Sequence[int]) -> list[str]:
    """The text lines of one row (cells given as their lines; shorter cells get blank lines)."""
    height = max(len(c) for c in cells)
    lines = []
    for i in range(height):
        parts = [" " + (_pad(c[i], w, j == 0) if i < len(c) else " " * w) + " "
                 for j, (c, w) in enumerate(zip(cells, widths))]
        lines.append("│" + "│".join(parts) + "│")
    return lines
