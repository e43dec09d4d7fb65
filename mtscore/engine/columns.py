"""Which columns of a table are the hypotheses, references, system, doc and seg, and how they
become the :class:`~.corpus.Corpus` schema.

:func:`resolve_columns` turns the user's column arguments (names, ``None`` = by convention,
``False`` = ignore) and a table's column names into a :class:`ColumnSpec`, with one-line errors
listing the available columns; :func:`normalise` turns a pyarrow Table/RecordBatch holding those
columns into one with the columns ``hyp``, ``ref_0 .. ref_{K-1}``, optional ``system``, ``doc``,
``seg`` (strings checked; errors name the column and row). Every table reader and
``Corpus.from_table`` share these. pyarrow is imported inside :func:`normalise` only.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Callable, NamedTuple

from .corpus_error import CorpusError

__all__ = ["ColumnSpec", "auto_ref_columns", "normalise", "resolve_columns"]


class ColumnSpec(NamedTuple):
    """The source column names of a table, by role (None: no such column)."""

    hyp: str
    refs: tuple[str, ...]
    system: str | None
    doc: str | None
    seg: str | None

    def source_columns(self) -> list[str]:
        return [c for c in (self.hyp, *self.refs, self.system, self.doc, self.seg) if c is not None]

    def labels(self) -> dict[str, str]:
        """The user's column name of each Corpus column (``ref_0`` -> ``ref``...)."""
        return dict(zip(self.target_names(), self.source_columns()))

    def target_names(self) -> list[str]:
        out = ["hyp"] + [f"ref_{k}" for k in range(len(self.refs))]
        return out + [n for n, c in (("system", self.system), ("doc", self.doc),
                                     ("seg", self.seg)) if c is not None]


def auto_ref_columns(names: Sequence[str]) -> list[str]:
    """Reference columns by convention: ``ref`` and/or ``ref_0``, ``ref1``, ``reference_2``...,
    ordered by their number (``ref`` first)."""
    import re

    pat = re.compile(r"^ref(?:erence)?s?(?:[_-]?(\d+))?$", re.IGNORECASE)
    found = []
    for c in names:
        m = pat.match(c)
        if m:
            found.append((-1 if m.group(1) is None else int(m.group(1)), c))
    return [c for _, c in sorted(found)]


def resolve_columns(names: Sequence[str], source: str, hyp, refs, system, doc, seg) -> ColumnSpec:
    names = list(names)
    avail = ", ".join(map(repr, names)) or "none"

    def need(col, arg):
        if col not in names:
            raise CorpusError(
                f"{source}: no column {col!r} (available: {avail}); pass {arg}= to name it")
        if names.count(col) > 1:
            raise CorpusError(f"{source}: column {col!r} appears {names.count(col)} times")
        return col

    def optional(col, default, arg):
        if col is False:
            return None
        if col is None:
            return default if default in names else None
        return need(col, arg)

    h = need(hyp, "hyp")
    taken = {h: "the hypothesis column"}  # a column plays one role: a second is a user mistake
    if refs is None:
        r = [c for c in auto_ref_columns(names) if c != h]
    else:
        if isinstance(refs, str):
            refs = [refs]
        r = [need(c, "refs") for c in refs]
        for c in r:
            _claim(taken, c, "a reference column", "refs", source)
    for c in r:
        taken.setdefault(c, "a reference column")
    roles: list[str | None] = []
    for arg, col in (("system", system), ("doc", doc), ("seg", seg)):
        picked: str | None = optional(col, arg, arg)
        if picked is not None and picked in taken:
            if col is None:  # picked by convention only: leave the role out
                picked = None
            else:
                _claim(taken, picked, f"the {arg} column", arg, source)
        if picked is not None:
            taken[picked] = f"the {arg} column"
        roles.append(picked)
    return ColumnSpec(h, tuple(r), *roles)


def _claim(taken: dict, col: str, role: str, arg: str, source: str) -> None:
    """Record ``col`` in ``role``; a column named for two roles (or twice in ``refs``) is an
    error naming both (the readers would otherwise select one column twice)."""
    if col in taken:
        if taken[col] == role:
            raise CorpusError(f"{source}: column {col!r} is named twice as {role}; pass {arg}= "
                              "each column once")
        raise CorpusError(f"{source}: column {col!r} is both {taken[col]} and {role}; pass {arg}= "
                          "another column")
    taken[col] = role


def _string_array(col, name: str, source: str, allow_null: bool, row0: int = 0, cast_any=False,
                  lines: Callable[[int], int | None] | None = None):
    """A pyarrow string (or large_string) array/chunked array; errors name the column/row."""
    import pyarrow as pa
    import pyarrow.types as pt

    t = col.type
    if pt.is_dictionary(t):
        col = col.cast(t.value_type)
        t = col.type
    if pt.is_null(t):
        col = col.cast(pa.string())
    elif pt.is_large_string(t) or getattr(pt, "is_string_view", lambda _t: False)(t):
        try:
            col = col.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowCapacityError):  # > 2 GiB in one chunk: keep large
            col = col.cast(pa.large_string())
    elif not pt.is_string(t):
        if cast_any:
            col = col.cast(pa.string())
        else:
            raise CorpusError(f"{source}: column {name!r} has type {t}; expected strings")
    if not allow_null and col.null_count:
        import pyarrow.compute as pc

        i = pc.index(pc.is_null(col), True).as_py()
        line = None if lines is None else lines(row0 + i)
        where = (f"{source}: column {name!r} has a missing value (null) at row {row0 + i + 1}"
                 if line is None else f"{source}:{line}: column {name!r} has a missing value (null)")
        raise CorpusError(f"{where}; hypotheses must be strings (use '' for an empty one)")
    return col


def normalise(tbl, spec: ColumnSpec, source: str, row0: int = 0,
              lines: Callable[[int], int | None] | None = None):
    """Table/RecordBatch with the source columns -> same kind with columns hyp, ref_k, ...

    ``row0``: the 0-based row of ``tbl``'s first row in the whole table; ``lines``: the file
    line of a 0-based row (error path; None: errors name the 1-based row)."""
    import pyarrow as pa

    cols = [_string_array(tbl.column(spec.hyp), spec.hyp, source, False, row0, lines=lines)]
    cols += [_string_array(tbl.column(c), c, source, True, row0) for c in spec.refs]
    for c, null_ok in ((spec.system, False), (spec.doc, True)):
        if c is not None:
            cols.append(_string_array(tbl.column(c), c, source, null_ok, row0, cast_any=True,
                                      lines=lines))
    if spec.seg is not None:
        cols.append(tbl.column(spec.seg))
    names = spec.target_names()
    if isinstance(tbl, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(cols, names=names)
    return pa.Table.from_arrays(cols, names=names)
