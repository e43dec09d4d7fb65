"""The table format interface and what its formats share: :class:`TableRequest` (one read of a
table file), :class:`TableFormat` (read it whole, or in batches), and the helpers the formats in
:mod:`.table_tsv`, :mod:`.table_jsonl`, :mod:`.table_csv` and :mod:`.table_arrow` have in
common. The registry and the entry points are :mod:`.tables`'s.

Only the standard library is imported at load time (pyarrow inside the functions that need it).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, Union

from .columns import ColumnSpec, normalise, resolve_columns
from .decoding import ascii_compatible, check_head
from .textio import open_binary

__all__ = ["WIDE_HOW", "Columns", "TableFormat", "TableRequest", "arrow_source",
           "check_table_head", "drop_bom", "rebatch"]

#: what :meth:`TableFormat.read` returns: a pyarrow Table, or a dict of Python lists by column
#: name (TSV, so that reading it never imports pyarrow); either way in the Corpus schema
Columns = Union[dict[str, list], Any]


class TableRequest(NamedTuple):
    """One read of a table file: where, which columns (as the user named them), how to decode."""
    path: Any                   #: str / PathLike, ``'-'`` = stdin
    source: str                 #: the name errors use
    columns: tuple[Any, ...]    #: (hyp, refs, system, doc, seg) as in :func:`read_columns`
    encoding: str
    errors: str
    resolved: list[ColumnSpec] | None = None  #: when a list, :meth:`resolve` adds its spec

    def resolve(self, names: Sequence[str]) -> ColumnSpec:
        """The columns to take, given the table's column names."""
        spec = resolve_columns(names, self.source, *self.columns)
        if self.resolved is not None:
            self.resolved.append(spec)
        return spec


class TableFormat:
    """One table file format: :meth:`read` the whole file, or :meth:`iter_batches` of it."""

    name = ""                               #: the format name, ``fmt=``
    aliases: tuple[str, ...] = ()           #: other names ``fmt=`` accepts
    extensions: tuple[str, ...] = ()        #: file extensions :func:`guess_format` maps to it
    compressible = True                     #: may be ``.gz``/``.bz2``/... compressed as a file

    def read(self, req: TableRequest) -> Columns:
        """The whole table in the Corpus schema."""
        raise NotImplementedError

    def iter_batches(self, req: TableRequest, batch_size: int) -> Iterator[Any]:
        """pyarrow RecordBatches of at most ``batch_size`` rows in the Corpus schema, memory
        bounded by the batch."""
        raise NotImplementedError

    def row_line(self, req: TableRequest, row: int) -> int | None:
        """The file line (1-based, the header counted) of 0-based data row ``row``, for error
        messages (error path: may read the file again); None for formats without lines."""
        return None


def rebatch(batches, spec: ColumnSpec, source: str, batch_size: int,
             lines=None) -> Iterator[Any]:
    """Batches of any size -> normalised batches of at most ``batch_size`` rows (errors name the
    row in the whole table, or its file line given ``lines``)."""
    row0 = 0
    for b in batches:
        for s in range(0, b.num_rows, batch_size):
            part = b.slice(s, batch_size)
            yield normalise(part, spec, source, row0, lines)
            row0 += part.num_rows


def arrow_source(path):
    import pyarrow as pa

    if path == "-":
        return pa.BufferReader(sys.stdin.buffer.read())
    return os.fspath(path)


#: how the table readers name the encoding a UTF-16/32 file needs (``score-table`` has no
#: ``--encoding``; the Python functions take ``encoding=``)
WIDE_HOW = "read it with encoding='{codec}'"


def check_table_head(req: TableRequest) -> None:
    """A UTF-16/32 file about to be read as UTF-8 (or another ASCII-compatible codec) is named
    as such from its first 4 bytes, before any reader turns it into garbage column names or a
    decoding error (stdin, which cannot be peeked at, is checked where its bytes are decoded)."""
    if req.path == "-" or not ascii_compatible(req.encoding):
        return
    with open_binary(req.path) as f:
        check_head(f.read(4), req.source, req.encoding, WIDE_HOW)


def drop_bom(line: str) -> str:
    """A header line without the byte-order mark a UTF-8 file may start with (Excel and
    Notepad write one): as pyarrow's readers and Python's ``utf-8-sig`` do, it is not part of
    the first column's name. Plain text files keep it (sacrebleu does)."""
    return line[1:] if line.startswith("\ufeff") else line
