"""In-memory inputs as the lists of ``str`` the metric kernels take.

Every metric coerces its hypotheses and references here (:func:`as_text_list`,
:func:`as_ref_streams`): Python sequences, numpy arrays, pandas Series/DataFrames, polars and
pyarrow arrays/tables become fresh lists, with one-line errors naming the argument and the first
bad element. Reference layout is K streams x N segments (``refs[k][i]``), as in sacrebleu; an
N x K layout or a line-count mismatch raises :class:`CorpusError` instead of truncating.

This is on every metric's path, so it imports nothing at load time beyond the standard
library's ``typing`` and :mod:`.corpus_error` (no pyarrow, pandas or numpy: inputs of those kinds
are recognised by duck typing).
"""
from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Literal, overload

from .corpus_error import CorpusError

__all__ = [
    "as_ref_streams",
    "as_text_list",
    "is_missing",
    "is_tabular",
    "table_columns",
    "to_list",
]


def is_tabular(x) -> bool:
    """pandas/polars DataFrame, pyarrow Table/RecordBatch (things with named columns)."""
    return hasattr(x, "column_names") or (hasattr(x, "columns") and not hasattr(x, "dtype")
                                          and not isinstance(x, (list, tuple)))


def table_columns(x) -> list:
    """The columns of a tabular object, in order, as array-likes."""
    if hasattr(x, "column_names") and hasattr(x, "column"):  # pyarrow Table / RecordBatch
        return [x.column(i) for i in range(x.num_columns)]
    if hasattr(x, "get_columns"):  # polars
        return list(x.get_columns())
    return [x[c] for c in x.columns]  # pandas


def to_list(x, what: str) -> list:
    """A fresh Python list from a 1-D sequence (list, tuple, numpy, pandas, pyarrow, iterable)."""
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, str):
        raise TypeError(f"{what} should be a sequence of strings, not a single string.")
    if isinstance(x, (bytes, bytearray)):
        raise TypeError(f"{what} should be a sequence of strings, not bytes.")
    if x is None:
        raise TypeError(f"{what} is None; expected a sequence of strings.")
    if isinstance(x, (Mapping, AbstractSet)):  # keys / hash order: not the segments' order
        raise TypeError(f"{what} is a {type(x).__name__}, whose order is not the segments' order; "
                        "pass a list (one string per segment, in order).")
    if is_tabular(x):
        raise TypeError(
            f"{what} is a table ({type(x).__name__}); pass one column, e.g. df['hyp'], or load it "
            "with mtscore.engine.corpus.load_corpus(table, hyp=..., refs=[...]).")
    if hasattr(x, "to_pylist"):  # pyarrow Array / ChunkedArray
        return x.to_pylist()
    ndim = getattr(x, "ndim", None)
    if ndim is not None and ndim != 1:
        raise TypeError(f"{what} should be 1-D; got an array of shape {getattr(x, 'shape', '?')}.")
    if hasattr(x, "tolist"):  # numpy array, pandas Series
        return x.tolist()
    try:
        return list(x)
    except TypeError:
        raise TypeError(f"{what} should be a sequence of strings, got {type(x).__name__}.") from None


def is_missing(v) -> bool:
    """None, float NaN, pandas NA/NaT (how missing values arrive from numpy/pandas)."""
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


@overload
def as_text_list(x, what: str, allow_none: Literal[False] = False) -> list[str]: ...


@overload
def as_text_list(x, what: str, allow_none: bool) -> list[str | None]: ...


def as_text_list(x, what: str, allow_none: bool = False) -> list[str] | list[str | None]:
    """``x`` as a fresh ``list`` of ``str`` (length N), or ``str``/``None`` if ``allow_none``.

    Accepts list, tuple, numpy arrays (``<U`` or object dtype), pandas Series, pyarrow
    Array/ChunkedArray and other iterables. ``str`` subclasses (``numpy.str_``) become ``str``;
    with ``allow_none`` missing values (None, NaN, pandas NA, Arrow null) become ``None``.
    Raises ``TypeError`` naming ``what`` and the first bad element.
    """
    from ..kernels._lists import first_non_str

    out = to_list(x, what)
    if first_non_str(out, allow_none) < 0:  # fast path, one C loop
        return out
    for i, s in enumerate(out):
        if type(s) is str:
            continue
        if isinstance(s, str):
            out[i] = str(s)
        elif is_missing(s):
            if not allow_none:
                raise TypeError(
                    f"{what}: element {i} is a missing value ({s!r}); hypotheses must be strings "
                    "(use '' for an empty one).")
            out[i] = None
        elif isinstance(s, (bytes, bytearray)):
            raise TypeError(f"{what}: element {i} is bytes; decode it to str first.")
        else:
            raise TypeError(f"{what}: element {i} is {type(s).__name__}, expected str.")
    return out


def _streams_from(refs, what: str) -> list:
    """The K stream objects of a reference argument (list of streams, 2-D array, table)."""
    if isinstance(refs, (str, bytes)):
        raise TypeError(f"{what} should be a sequence of reference streams, not a string.")
    if refs is None:
        raise TypeError(f"{what} is None; expected K reference streams.")
    if is_tabular(refs):  # one stream per column
        return table_columns(refs)
    if isinstance(refs, (list, tuple)):
        return list(refs)
    if getattr(refs, "ndim", None) == 2 and hasattr(refs, "tolist"):  # numpy (K, N)
        return refs.tolist()
    if hasattr(refs, "to_pylist") and not hasattr(refs, "ndim"):  # pyarrow ListArray etc.
        return refs.to_pylist()
    return to_list(refs, what)


def as_ref_streams(refs, n: int | None, what: str) -> list[list[str | None]]:
    """K reference streams, each a fresh list of N ``str``-or-``None`` (``refs[k][i]``).

    ``refs`` may be a list/tuple of streams (each anything :func:`as_text_list` accepts), a 2-D
    numpy array of shape (K, N), or a table (pandas/polars DataFrame, pyarrow Table) whose
    columns are the streams. ``None`` entries mean "no reference for this segment"; ``''`` is an
    empty reference. With ``n`` given, every stream must have ``n`` segments; an N x K
    (segment-major) layout is recognised and reported as such instead of silently truncating.
    """
    streams = _streams_from(refs, what)
    if not streams:
        raise CorpusError(f"{what}: no reference streams given.")
    if all(isinstance(s, str) or s is None for s in streams):
        raise TypeError(
            f"{what} should be a list of K reference streams (each a list of N strings); "
            "got a flat list of strings. Wrap a single stream as [refs].")
    streams = [as_text_list(s, f"{what}[{k}]", allow_none=True) for k, s in enumerate(streams)]
    lens = [len(s) for s in streams]
    if n is not None and any(m != n for m in lens):
        if len(streams) == n and n > 0:
            raise CorpusError(
                f"{what}: got {len(streams)} streams of {'/'.join(map(str, sorted(set(lens))))} "
                f"segments for {n} hypotheses; this looks like an N x K (segment-major) layout, but "
                "references must be K streams of N segments (refs[k][i]). Transpose with "
                "[list(s) for s in zip(*refs)].")
        k = next(k for k, m in enumerate(lens) if m != n)
        raise CorpusError(
            f"{what}[{k}] has {lens[k]} segments but there are {n} hypotheses "
            "(line-count mismatch).")
    if len(set(lens)) != 1:
        k = next(k for k, m in enumerate(lens) if m != lens[0])
        raise CorpusError(
            f"{what}: reference streams have different lengths ({what}[0] has {lens[0]}, "
            f"{what}[{k}] has {lens[k]}).")
    return streams
