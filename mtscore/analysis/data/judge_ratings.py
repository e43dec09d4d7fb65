"""Ratings matrices of individual judges (one rating per judge and item) and judge groups, the
input of the agreement analysis (Ma et al. 2017): long (judge, item, rating) or wide (item x
judge) text tables, and a groups file naming the judges of each group.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...engine.strict_numbers import NumberSyntaxError, parse_number
from ..errors import AnalysisInputError
from .tables import NULL_VALUES, PathLike, read_text

__all__ = [
    "read_judge_groups",
    "read_judge_ratings",
]


JUDGE_COLUMNS = ("judge", "judge_id", "judgeid", "worker", "workerid", "worker_id", "rater", "annotator")


ITEM_COLUMNS = ("item", "item_id", "segment", "segment_id", "seg", "sid", "id")


RATING_COLUMNS = ("rating", "score")


def _sep_of(header: str) -> str | None:
    for sep in (";", ",", "\t"):
        if sep in header:
            return sep
    return None  # runs of blanks


def _rating(path: PathLike, lineno: int, col: int, name: str, cell: str,
            levels: Sequence[float] | None) -> float:
    """One rating cell: empty / NA / NaN / None is missing (NaN); text, inf and (with
    ``levels``) a value off the scale raise :class:`AnalysisInputError` naming line and column."""
    cell = cell.strip()
    if cell in NULL_VALUES:
        return np.nan
    where = f"{path}:{lineno}: column {col} ({name})"
    try:
        v = parse_number(cell)
    except NumberSyntaxError as exc:
        raise AnalysisInputError(f"{where}: {exc}; write NA for a missing rating") from None
    if levels is not None and v not in levels:
        scale = ", ".join(f"{x:g}" for x in levels)
        raise AnalysisInputError(f"{where}: rating {cell} is outside the scale ({scale}) given by --levels")
    return v


def read_judge_ratings(path: PathLike, levels: Sequence[float] | None = None
                       ) -> tuple[list[str], list[str], np.ndarray]:
    """Ratings of several judges on the same items: (judges, items, (J, I) float64 matrix),
    NaN where a judge did not rate an item.

    Two layouts, cells separated by ``;``, ``,``, tabs or runs of blanks (read off the header):

    * wide (the refbias ``ratings_all``): a header of judge names, one row per item, an
      optional first column named ``item`` / ``segment_id`` / ``sid`` / ``id`` with item ids;
    * long (the refbias ``data/ratings.csv``): columns judge (``judge``, ``judge_id``,
      ``WorkerId``, ...), item (``item``, ``segment_id``, ``sid``, ...) and ``rating``/``score``,
      one row per rating; a judge rating an item twice is an error.

    Empty / NA / NaN cells are missing ratings. With ``levels`` every rating must be one of
    them. Errors name the file, line and column."""
    header, rows = _judge_table(path)
    low = [h.lower() for h in header]
    jcol = next((i for i, h in enumerate(low) if h in JUDGE_COLUMNS), None)
    if jcol is not None:
        return _long_judge_ratings(path, header, rows, jcol, levels)
    return _wide_judge_ratings(path, header, rows, levels)


def _judge_table(path: PathLike) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """``(header cells, [(line number, cells)])`` of a ratings table, the separator read off
    the header; every row has as many cells as the header."""
    text = read_text(path)
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines:
        raise AnalysisInputError(f"{path}: empty file (or only blank lines), expected a header line")
    sep = _sep_of(lines[0][1])

    def cells(ln: str) -> list[str]:
        return [c.strip() for c in (ln.split(sep) if sep else ln.split())]

    header = cells(lines[0][1])
    rows = [(lineno, cells(ln)) for lineno, ln in lines[1:]]
    if not rows:
        raise AnalysisInputError(f"{path}: only a header, no ratings")
    for lineno, c in rows:
        if len(c) != len(header):
            raise AnalysisInputError(f"{path}:{lineno}: expected {len(header)} fields (as many as the header "
                                     f"has columns), found {len(c)}")
    return header, rows


def _long_judge_ratings(path: PathLike, header: list[str], rows: list[tuple[int, list[str]]], jcol: int,
                        levels: Sequence[float] | None) -> tuple[list[str], list[str], np.ndarray]:
    """The long layout: one row per rating, columns judge, item and rating."""
    low = [h.lower() for h in header]
    icol = next((i for i, h in enumerate(low) if h in ITEM_COLUMNS and i != jcol), None)
    rcol = next((i for i, h in enumerate(low) if h in RATING_COLUMNS), None)
    missing = [what for what, c in (("item (item, segment_id, sid)", icol), ("rating (rating, score)", rcol))
               if c is None]
    if missing or icol is None or rcol is None:
        raise AnalysisInputError(f"{path}:1: missing column(s) {', '.join(missing)}; a table with a judge "
                                 f"column ({header[jcol]}) needs judge, item and rating columns")
    judges: dict[str, int] = {}
    items: dict[str, int] = {}
    seen: dict[tuple[int, int], int] = {}
    trip = []
    for lineno, c in rows:
        j = judges.setdefault(c[jcol], len(judges))
        it = items.setdefault(c[icol], len(items))
        if (j, it) in seen:
            raise AnalysisInputError(f"{path}:{lineno}: judge {c[jcol]!r} rates item {c[icol]!r} again "
                                     f"(first on line {seen[(j, it)]}); give one rating per judge and item")
        seen[(j, it)] = lineno
        trip.append((j, it, _rating(path, lineno, rcol + 1, header[rcol], c[rcol], levels)))
    R = np.full((len(judges), len(items)), np.nan)
    for j, it, v in trip:
        R[j, it] = v
    return list(judges), list(items), R


def _wide_judge_ratings(path: PathLike, header: list[str], rows: list[tuple[int, list[str]]],
                        levels: Sequence[float] | None) -> tuple[list[str], list[str], np.ndarray]:
    """The wide layout: one column per judge, one row per item (an optional item-id column first)."""
    first = 1 if header[0].lower() in ITEM_COLUMNS else 0
    judges_w = header[first:]
    if len(judges_w) < 2:
        raise AnalysisInputError(f"{path}:1: {len(judges_w)} judge column(s) in the header ({' '.join(header)}); "
                                 "expected one column per judge (at least 2) and one row per item, or the "
                                 "columns judge, item, rating")
    dup = sorted({h for h in judges_w if judges_w.count(h) > 1})
    if dup:
        raise AnalysisInputError(f"{path}:1: judge column(s) {', '.join(dup)} appear twice in the header")
    R = np.full((len(judges_w), len(rows)), np.nan)
    item_ids = []
    for r, (lineno, c) in enumerate(rows):
        item_ids.append(c[0] if first else str(r + 1))
        for j, cell in enumerate(c[first:]):
            R[j, r] = _rating(path, lineno, j + first + 1, judges_w[j], cell, levels)
    return judges_w, item_ids, R


def read_judge_groups(path: PathLike, judges: Sequence[str]) -> dict[str, list[str]]:
    """Judge groups, one per line: ``NAME: judge judge ...`` (judges separated by blanks, commas
    or semicolons; ``NAME = [a, b]`` works too; ``#`` starts a comment). Every judge of
    ``judges`` must be in exactly one group; errors name the file and line."""
    import re

    known = set(judges)
    groups: dict[str, list[str]] = {}
    where: dict[str, int] = {}  # judge -> line
    group_line: dict[str, int] = {}
    for lineno, ln in enumerate(read_text(path).splitlines(), 1):
        ln = ln.split("#", 1)[0].strip()
        if not ln:
            continue
        m = re.match(r"^([^:=]+?)\s*[:=]\s*(.*)$", ln)
        if not m:
            raise AnalysisInputError(f"{path}:{lineno}: expected 'GROUP: judge judge ...', got {ln!r}")
        name, members = m.group(1).strip(), [t for t in re.split(r"[\s,;\[\]]+", m.group(2)) if t]
        if name in groups:
            raise AnalysisInputError(f"{path}:{lineno}: group {name!r} again (first on line {group_line[name]})")
        if not members:
            raise AnalysisInputError(f"{path}:{lineno}: group {name!r} has no judges")
        for j in members:
            if j not in known:
                raise AnalysisInputError(f"{path}:{lineno}: judge {j!r} of group {name!r} is not a judge of the "
                                         f"ratings ({', '.join(judges[:6])}{', ...' if len(judges) > 6 else ''})")
            if j in where:
                raise AnalysisInputError(f"{path}:{lineno}: judge {j!r} is already in a group (line {where[j]}); "
                                         "each judge belongs to one group")
            where[j] = lineno
        groups[name] = members
        group_line[name] = lineno
    if not groups:
        raise AnalysisInputError(f"{path}: no groups; expected lines 'GROUP: judge judge ...'")
    missing = [j for j in judges if j not in where]
    if missing:
        raise AnalysisInputError(f"{path}: judge(s) {', '.join(missing)} are in no group; every judge needs one")
    return groups

