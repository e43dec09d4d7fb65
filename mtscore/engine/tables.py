"""Table files with named columns: TSV, CSV, JSONL, Parquet (file or dataset directory) and
Arrow IPC (file/Feather v2 or stream), read whole or streamed in batches.

Every format is one :class:`~.table_format.TableFormat` with the same two methods, registered in
:data:`FORMATS` under its name (the name, its aliases and its file extensions are declared on
the class); :func:`read_columns` and :func:`iter_batches` pick the format and call it, so adding
a format means adding one class (the formats: :mod:`.table_tsv`, :mod:`.table_csv`,
:mod:`.table_jsonl`, :mod:`.table_arrow`). Both return the :class:`~.corpus.Corpus` schema
(``hyp``, ``ref_0 .. ref_{K-1}``, optional ``system``, ``doc``, ``seg``); column choice and
normalisation are :mod:`.columns`'s.

Import cost matters for the CLI: only the standard library is imported at load time; pyarrow
(and pyarrow.parquet / .json / .csv / .dataset) inside the readers that need them. Reading a TSV
file whole gives Python lists and never imports pyarrow.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any, Callable

from .columns import ColumnSpec
from .corpus_error import CorpusError
from .table_arrow import ArrowFormat, ParquetFormat
from .table_csv import CsvFormat
from .table_format import Columns, TableFormat, TableRequest
from .table_jsonl import JsonlFormat
from .table_tsv import TsvFormat
from .textio import PathLike, source_name

__all__ = [
    "FORMATS",
    "TABLE_FORMATS",
    "TableFormat",
    "TableRequest",
    "batch_lists",
    "guess_format",
    "iter_batches",
    "read_columns",
    "read_located",
]


#: every table format by name, in the order error messages list them
FORMATS: dict[str, TableFormat] = {
    f.name: f for f in (TsvFormat(), CsvFormat(), JsonlFormat(), ParquetFormat(), ArrowFormat())}
#: formats :func:`read_columns` / :func:`iter_batches` understand
TABLE_FORMATS = tuple(FORMATS)

_EXTENSIONS = {ext: f.name for f in FORMATS.values() for ext in f.extensions}
_FMT_ALIASES = {alias: f.name for f in FORMATS.values() for alias in f.aliases}


def guess_format(path: PathLike) -> str:
    """``'tsv' | 'csv' | 'jsonl' | 'parquet' | 'arrow'`` from the extension (a trailing ``.gz``,
    ``.bz2``, ``.zst`` is looked through for tsv/csv/jsonl), a directory is a Parquet dataset,
    anything else is ``'text'`` (one segment per line)."""
    p = os.fspath(path)
    if p != "-" and os.path.isdir(p):
        return "parquet"
    base = p.lower()
    comp = None
    for c in (".gz", ".bz2", ".zst", ".lz4"):
        if base.endswith(c):
            base, comp = base[: -len(c)], c
            break
    fmt = _EXTENSIONS.get(os.path.splitext(base)[1], "text")
    if comp and fmt != "text" and not FORMATS[fmt].compressible:
        raise CorpusError(f"{p}: {fmt} files cannot be {comp}-compressed (they compress inside)")
    return fmt


def _table_format(fmt: str | None, path) -> TableFormat:
    """The reader for ``fmt`` (a name or alias), or for the extension of ``path`` when None."""
    if fmt is None:
        if path == "-":
            raise CorpusError("reading a table from stdin needs fmt= (one of "
                              + ", ".join(TABLE_FORMATS) + ")")
        fmt = guess_format(path)
        if fmt == "text":
            raise CorpusError(
                f"{source_name(path)}: cannot tell the table format from the extension; pass "
                f"fmt= one of {', '.join(TABLE_FORMATS)} (plain text files: read_lines / "
                "load_corpus)")
        return FORMATS[fmt]
    f = _FMT_ALIASES.get(fmt.lower(), fmt.lower())
    if f not in TABLE_FORMATS:
        raise CorpusError(f"unknown table format {fmt!r}; known: {', '.join(TABLE_FORMATS)}")
    return FORMATS[f]


def read_columns(path: PathLike, hyp: str = "hyp", refs: Sequence[str] | None = None,
                 fmt: str | None = None, *, system=None, doc=None, seg=None,
                 encoding: str = "utf-8", errors: str = "strict") -> Columns:
    """The whole table file in the Corpus schema: a pyarrow Table, or for TSV a dict of Python
    lists by column name (pyarrow never imported). Arguments as in
    :func:`mtscore.engine.corpus.read_table`, which builds a ``Corpus`` from this."""
    reader = _table_format(fmt, path)
    req = TableRequest(path, source_name(path), (hyp, refs, system, doc, seg), encoding, errors)
    return reader.read(req)


def read_located(path: PathLike, hyp: str = "hyp", refs: Sequence[str] | None = None,
                 fmt: str | None = None, *, system=None, doc=None, seg=None,
                 encoding: str = "utf-8",
                 errors: str = "strict") -> tuple[Columns, dict[str, str], Callable[[int], int | None]]:
    """:func:`read_columns`, and what errors about the rows need later: the user's column name
    of each Corpus column (``{'ref_0': 'ref', ...}``) and the file line of a 0-based row
    (None where the format has no lines; it may read the file again: error path only)."""
    reader = _table_format(fmt, path)
    specs: list[ColumnSpec] = []
    req = TableRequest(path, source_name(path), (hyp, refs, system, doc, seg), encoding, errors,
                       specs)
    cols = reader.read(req)
    return cols, specs[0].labels(), lambda row: reader.row_line(req, row)


def iter_batches(path: PathLike, hyp: str = "hyp", refs: Sequence[str] | None = None,
                 fmt: str | None = None, batch_size: int = 65536, *, system=None, doc=None,
                 seg=None, encoding: str = "utf-8", errors: str = "strict") -> Iterator[Any]:
    """Stream ``pyarrow.RecordBatch`` es of at most ``batch_size`` rows with the :class:`Corpus`
    schema (``hyp``, ``ref_0..``, optional ``system``/``doc``/``seg``) from a table file, with
    memory bounded by the batch (Parquet ``iter_batches`` / dataset scanner, memory-mapped Arrow
    IPC, block-wise TSV/JSONL/CSV). Arguments as in :func:`read_table`. For plain text files use
    :func:`iter_text_chunks`. Turn a batch into lists with :func:`batch_lists`.
    """
    if batch_size < 1:
        raise CorpusError(f"batch_size must be >= 1, got {batch_size}")
    reader = _table_format(fmt, path)
    req = TableRequest(path, source_name(path), (hyp, refs, system, doc, seg), encoding, errors)
    yield from reader.iter_batches(req, batch_size)


def batch_lists(batch) -> tuple[list[str], list[list[str | None]]]:
    """``(hyps, refs)`` as Python lists from a batch/table with the Corpus schema:
    hyps is a list of n ``str``, refs K lists of n ``str``-or-``None``."""
    names = batch.schema.names
    k = sum(1 for c in names if c.startswith("ref_"))
    return (batch.column("hyp").to_pylist(),
            [batch.column(f"ref_{i}").to_pylist() for i in range(k)])
