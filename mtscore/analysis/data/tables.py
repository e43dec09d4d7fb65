"""Plain text tables into pyarrow tables: the reader every WMT layout reader builds on.

:func:`read_table` / :func:`read_table_lines` split whitespace- or tab-separated text (``.gz``
allowed) into a :class:`pyarrow.Table` whose columns keep the file's own names; numeric columns
become ``int64`` / ``float64``, everything else ``string``; cells in :data:`NULL_VALUES` are
missing. :func:`table_to_numpy` and :func:`float_column` take columns out as numpy arrays.
Errors name the file and line.
"""
from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Union

import numpy as np
import pyarrow as pa

from ...engine.strict_numbers import NumberSyntaxError, parse_numbers
from ..errors import AnalysisInputError

__all__ = [
    "float_column",
    "read_table",
    "read_table_lines",
    "read_text",
]


PathLike = Union[str, Path]


def open_text(path: Path) -> io.TextIOBase:
    """``path`` opened as UTF-8 text (``.gz`` decompressed on the fly)."""
    return io.StringIO(read_text(path))


def read_text(path: PathLike) -> str:
    """The whole file (``.gz`` decompressed) as text. Invalid UTF-8 or a NUL byte (a binary
    file) raises :class:`AnalysisInputError` naming the line and column; a missing path raises
    ``FileNotFoundError``, a folder ``IsADirectoryError`` (both name the path)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    if path.is_dir():
        raise IsADirectoryError(21, "is a folder, expected a file", str(path))
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as fh:
            data = fh.read()
    else:
        data = path.read_bytes()
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = _line_col(data, nul)
        raise AnalysisInputError(f"{path}:{line}:{col}: NUL byte: this looks like a binary file, "
                                 "expected a text table")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data, exc.start)
        raise AnalysisInputError(f"{path}:{line}:{col}: invalid UTF-8 (byte 0x{data[exc.start]:02x}); "
                                 "save the file as UTF-8") from None
    return text


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of byte ``offset`` in ``data``."""
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - start + 1


def read_table(path: PathLike, sep: str | None = None, header: bool = True,
               names: Sequence[str] | None = None, ragged: str = "error",
               string_columns: Iterable[str] = ()) -> pa.Table:
    """Read a delimited text file into a pyarrow Table.

    ``sep=None`` splits on runs of whitespace (the WMT ``.csv`` files are space separated
    and often end lines with a blank). ``ragged`` says what to do with a row whose cell count
    differs from the header: ``'error'`` (default), ``'pad'`` (missing trailing cells become
    NaN/empty) or ``'skip'``. Columns named in ``string_columns`` are kept as text.
    Parsing is done by pyarrow's C++ CSV reader (after normalising whitespace runs to tabs).
    Bad content raises :class:`AnalysisInputError` naming the file and line.
    """
    from pyarrow import csv as pacsv

    path = Path(path)
    if sep == "\t" and not header and names is not None and ragged == "error":
        # fast path: hand the (possibly gzipped) file straight to the C++ reader
        if not path.exists():
            raise FileNotFoundError(f"{path}: file not found")
        try:
            return pacsv.read_csv(
                str(path),
                read_options=pacsv.ReadOptions(column_names=list(names), use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
                convert_options=pacsv.ConvertOptions(
                    column_types={n: pa.string() for n in names if n in set(string_columns)},
                    null_values=list(NULL_VALUES), strings_can_be_null=False))
        except pa.ArrowInvalid as exc:
            raise AnalysisInputError(f"{path}: {exc}") from None
    return read_table_lines(path, sep, header, names, ragged, string_columns)[0]


NULL_VALUES = ("", "NA", "None", "nan", "NaN")  # cells read as missing (null) in numeric columns


def read_table_lines(path: PathLike, sep: str | None = None, header: bool = True,
                     names: Sequence[str] | None = None, ragged: str = "error",
                     string_columns: Iterable[str] = ()) -> tuple[pa.Table, list[int]]:
    """:func:`read_table` plus the 1-based file line number of every row (blank lines and the
    header are skipped, so row i is not line i + 2 in general), for error messages."""
    path = Path(path)
    rows, linenos = _split_lines(read_text(path), sep)
    if header:
        if not rows:
            raise AnalysisInputError(f"{path}: empty file (or only blank lines), expected a header line")
        hdr = [h.strip() for h in rows[0].split("\t")]
        rows, linenos = rows[1:], linenos[1:]
        if names is None:
            names = hdr
    if names is None:
        names = [f"c{i}" for i in range(len(rows[0].split("\t")) if rows else 0)]
    names = list(names)
    rows, linenos = _fix_ragged(path, rows, linenos, len(names), ragged, sep is None)
    uniq = _unique_names(names)
    if not rows:
        return pa.table([pa.array([], type=pa.string()) for _ in uniq], names=uniq), []
    return _parse_tsv(path, rows, uniq, names, set(string_columns)), linenos


def _split_lines(text: str, sep: str | None) -> tuple[list[str], list[int]]:
    """Non-blank lines with cells joined by tabs, and their 1-based line numbers."""
    import re

    lines = text.splitlines()
    if sep is None:
        lines = [re.sub(r"[ \t]+", "\t", ln.strip()) for ln in lines]
    else:
        lines = [ln.rstrip("\r") for ln in lines]
        lines = [ln[:-1] if ln.endswith(sep) and sep != " " else ln for ln in lines]
    keep = [i for i, ln in enumerate(lines) if ln.strip()]
    return [lines[i] for i in keep], [i + 1 for i in keep]


def _fix_ragged(path: Path, rows: list[str], linenos: list[int], ncol: int, ragged: str,
                whitespace: bool) -> tuple[list[str], list[int]]:
    counts = [ln.count("\t") + 1 for ln in rows]
    bad = [i for i, c in enumerate(counts) if c != ncol]
    if bad and ragged == "pad":
        rows = [ln + "\t" * (ncol - c) if c < ncol else ln for ln, c in zip(rows, counts)]
        bad = [i for i, c in enumerate(counts) if c > ncol]
    elif bad and ragged == "skip":
        drop = set(bad)
        keep = [i for i in range(len(rows)) if i not in drop]
        return [rows[i] for i in keep], [linenos[i] for i in keep]
    if bad:
        i = bad[0]
        hint = ("; cells are separated by runs of blanks, so write NA for an empty cell"
                if whitespace and counts[i] < ncol else "")
        raise AnalysisInputError(f"{path}:{linenos[i]}: expected {ncol} fields (as many as the header "
                                 f"has columns), found {counts[i]}{hint}")
    return rows, linenos


def _unique_names(names: Sequence[str]) -> list[str]:
    """Duplicated names (e.g. the Mathur et al. 2020 tables have a metric called "LP") get a suffix: LP, LP.1."""
    seen: dict[str, int] = {}
    uniq = []
    for n in names:
        if n in seen:
            seen[n] += 1
            uniq.append(f"{n}.{seen[n]}")
        else:
            seen[n] = 0
            uniq.append(n)
    return uniq


def _parse_tsv(path: Path, rows: list[str], uniq: list[str], names: list[str],
               string_columns: set) -> pa.Table:
    from pyarrow import csv as pacsv

    data = ("\n".join(rows) + "\n").encode("utf-8")
    ctypes = {n: pa.string() for n, orig in zip(uniq, names) if orig in string_columns}
    try:
        return pacsv.read_csv(
            io.BytesIO(data),
            # one block: column types are inferred from every row, not the first megabyte
            read_options=pacsv.ReadOptions(column_names=uniq, use_threads=False, block_size=len(data) + 1),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
            convert_options=pacsv.ConvertOptions(column_types=ctypes, null_values=list(NULL_VALUES),
                                                 strings_can_be_null=False))
    except pa.ArrowInvalid as exc:
        raise AnalysisInputError(f"{path}: {exc}") from None


def table_to_numpy(table: pa.Table, column: str) -> np.ndarray:
    """Column as a numpy array (strings -> object array)."""
    col = table.column(column)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return np.asarray(col.to_pylist(), dtype=object)
    return col.to_numpy()


def float_column(table: pa.Table, column: str, linenos: Sequence[int], path: PathLike,
                 missing_ok: bool = False) -> np.ndarray:
    """Column ``column`` as float64 (n,), checked: a cell that is not a plain ASCII decimal
    number (:func:`mtscore.engine.strict_numbers.parse_number`: no ``1_000``, no full-width
    digits, no ``inf``), or (unless ``missing_ok``) a missing cell (empty / NA / NaN, read as
    null) raises :class:`AnalysisInputError` naming ``path``, the line (from ``linenos``, one
    per row), the column number and name, and the offending text. With ``missing_ok`` missing
    cells become NaN."""
    col = table.column(column)
    where = f"column {table.column_names.index(column) + 1} ({column})"
    typ = col.type
    if not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_null(typ)):
        # text (anything the CSV reader could not read as a number), but also what it reads as
        # true/false or a date: none of it is a score unless it is a plain decimal number
        cells = col.to_pylist() if pa.types.is_string(typ) or pa.types.is_large_string(typ) else \
            [None if v is None else str(v) for v in col.cast(pa.string()).to_pylist()]
        try:
            values = parse_numbers(cells, missing=NULL_VALUES)
        except NumberSyntaxError as exc:
            raise AnalysisInputError(f"{path}:{linenos[exc.index]}: {where}: {exc}") from None
    else:
        # the CSV reader's own number syntax is ASCII-only; what it reads beyond plain decimals
        # (inf, and NaN spellings such as NAN or -nan, which are not null) is refused below
        nulls = np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        values = np.array(col.to_numpy(zero_copy_only=False), dtype=np.float64)  # a writable copy
        odd = np.flatnonzero(~np.isfinite(values) & ~nulls)
        if odd.size:
            i = int(odd[0])
            raise AnalysisInputError(f"{path}:{linenos[i]}: {where} is {values[i]}, not a finite number "
                                     "(infinite and NaN values are not scores); write NA for a missing score")
        values[nulls] = np.nan
    nan = np.isnan(values)
    if nan.any() and not missing_ok:
        i = int(np.flatnonzero(nan)[0])
        raise AnalysisInputError(f"{path}:{linenos[i]}: {where} is missing (empty, NA or NaN); every row needs one")
    return values

