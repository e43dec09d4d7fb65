"""The paper-independent shape of a reproduction: table cells with their reproduced and printed
values, tables, figures (their underlying numbers, the CSV rows and how to draw them) and the
:class:`Reproduction` that :func:`~.output.write_reproduction` writes. Each paper is one module
computing a :class:`Reproduction` and one module of printed values."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Cell", "Extra", "Figure", "Reproduction", "Table"]


@dataclass(frozen=True)
class Cell:
    """One table cell: ``reproduced`` (None where the data cannot give it, ``reason`` says why),
    ``printed`` (the paper's text, None where not transcribed) and ``source`` (where printed).
    ``default_digits``: decimals shown where nothing is printed (None: 0 on a ``#sys`` row, else 3)."""
    table: str
    row: str
    column: str
    reproduced: float | None
    printed: str | None = None
    source: str | None = None
    reason: str | None = None
    default_digits: int | None = None

    @property
    def digits(self) -> int:
        """Decimals of the printed value (``default_digits`` where none is printed)."""
        if self.printed is None:
            if self.default_digits is not None:
                return self.default_digits
            return 0 if self.row == "#sys" else 3
        if "." not in self.printed:
            return 0
        return len(self.printed.split(".", 1)[1])

    @property
    def reproduced_text(self) -> str:
        """The reproduced value at the printed precision ('' where the data cannot give it)."""
        return "" if self.reproduced is None else f"{self.reproduced:.{self.digits}f}"

    @property
    def matches(self) -> bool | None:
        """Whether reproduced equals printed at the printed precision (|diff| <= half a unit in the
        last printed place); None where either is absent."""
        if self.printed is None or self.reproduced is None:
            return None
        return abs(self.reproduced - float(self.printed)) <= 0.5 * 10.0 ** -self.digits + 1e-12


@dataclass
class Table:
    """A table: ``rows`` x ``columns`` labels, ``cells`` keyed by (row, column)."""
    key: str
    title: str
    rows: list[str]
    columns: list[str]
    cells: dict[tuple[str, str], Cell]
    note: str = ""

    def cell(self, row: str, column: str) -> Cell:
        return self.cells[(row, column)]

    @property
    def compared(self) -> list[Cell]:
        """Cells with both a printed and a reproduced value."""
        return [c for c in self.cells.values() if c.matches is not None]


@dataclass
class Figure:
    """A figure's underlying numbers: ``data`` arrays (documented per figure in ``note``);
    ``head`` / ``points`` the CSV written beside the PNG (one list per line); ``draw`` makes the PNG
    bytes from the figure (None: no PNG, the CSV only)."""
    key: str
    title: str
    data: dict[str, Any]
    note: str = ""
    head: list[str] = field(default_factory=list)
    points: list[list[Any]] = field(default_factory=list)
    draw: Callable[[Figure], bytes] | None = None


@dataclass
class Extra:
    """A further section of ``index.html``: a plain-text table (``head``, ``rows`` of strings)."""
    key: str
    title: str
    head: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Reproduction:
    """Every reproduced table and figure of one paper, and what the data cannot support
    (``unsupported``: (item, reason)). ``paper``: the citation; ``source``: the released data it is
    rebuilt from (both shown in ``index.html``); ``extras``: further sections."""
    tables: list[Table]
    figures: list[Figure]
    unsupported: list[tuple[str, str]] = field(default_factory=list)
    paper: str = ""
    source: str = ""
    extras: list[Extra] = field(default_factory=list)

    def table(self, key: str) -> Table:
        return next(t for t in self.tables if t.key == key)

    def figure(self, key: str) -> Figure:
        return next(f for f in self.figures if f.key == key)

    @property
    def compared(self) -> list[Cell]:
        """Every cell with both a printed and a reproduced value."""
        return [c for t in self.tables for c in t.compared]

    @property
    def differing(self) -> list[Cell]:
        return [c for c in self.compared if not c.matches]
