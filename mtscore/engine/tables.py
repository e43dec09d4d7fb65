"""Table files with named columns: TSV, CSV, JSONL, Parquet (file or dataset directory) and
Arrow IPC (file/Feather v2 or stream), read whole or streamed in batches.

Every format is one :class:`TableFormat` with the same two methods, registered in
:data:`FORMATS` under its name (the name, its aliases and its file extensions are declared on
the class); :func:`read_columns` and :func:`iter_batches` pick the format and call it, so adding
a format means adding one class. Both return the :class:`~.corpus.Corpus` schema (``hyp``,
``ref_0 .. ref_{K-1}``, optional ``system``, ``doc``, ``seg``); column choice and normalisation
are :mod:`.columns`'s.

Import cost matters for the CLI: only the standard library is imported at load time; pyarrow
(and pyarrow.parquet / .json / .csv / .dataset) inside the readers that need them. Reading a TSV
file whole gives Python lists and never imports pyarrow.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, Callable, NamedTuple, Union

from .columns import ColumnSpec, normalise, resolve_columns
from .corpus_error import CorpusError
from .decoding import ascii_compatible, check_codec, check_head, decode_lines, display_encoding
from .textio import PathLike, iter_raw_line_blocks, open_binary, read_bytes, source_name

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


def _rebatch(batches, spec: ColumnSpec, source: str, batch_size: int,
             lines=None) -> Iterator[Any]:
    """Batches of any size -> normalised batches of at most ``batch_size`` rows (errors name the
    row in the whole table, or its file line given ``lines``)."""
    row0 = 0
    for b in batches:
        for s in range(0, b.num_rows, batch_size):
            part = b.slice(s, batch_size)
            yield normalise(part, spec, source, row0, lines)
            row0 += part.num_rows


def _arrow_source(path):
    import pyarrow as pa

    if path == "-":
        return pa.BufferReader(sys.stdin.buffer.read())
    return os.fspath(path)


#: how the table readers name the encoding a UTF-16/32 file needs (``score-table`` has no
#: ``--encoding``; the Python functions take ``encoding=``)
_WIDE_HOW = "read it with encoding='{codec}'"


def _check_head(req: TableRequest) -> None:
    """A UTF-16/32 file about to be read as UTF-8 (or another ASCII-compatible codec) is named
    as such from its first 4 bytes, before any reader turns it into garbage column names or a
    decoding error (stdin, which cannot be peeked at, is checked where its bytes are decoded)."""
    if req.path == "-" or not ascii_compatible(req.encoding):
        return
    with open_binary(req.path) as f:
        check_head(f.read(4), req.source, req.encoding, _WIDE_HOW)


def _drop_bom(line: str) -> str:
    """A header line without the byte-order mark a UTF-8 file may start with (Excel and
    Notepad write one): as pyarrow's readers and Python's ``utf-8-sig`` do, it is not part of
    the first column's name. Plain text files keep it (sacrebleu does)."""
    return line[1:] if line.startswith("\ufeff") else line


# ---- TSV (own reader: no quoting, rows end at '\n', a CRLF ending is accepted) ------------------

class TsvFormat(TableFormat):
    name, aliases, extensions = "tsv", ("tab",), (".tsv", ".tab")

    def read(self, req: TableRequest) -> dict[str, list]:
        check_codec(req.encoding, req.errors)
        data = read_bytes(req.path)
        check_head(data[:4], req.source, req.encoding, _WIDE_HOW)
        lines = decode_lines(data, req.source, req.encoding, req.errors)
        if not lines:
            raise CorpusError(f"{req.source}: empty file (no header line)")
        header = self._header(lines[0])
        spec = req.resolve(header)
        idx = [header.index(c) for c in spec.source_columns()]
        cols = self._columns(lines[1:], len(header), idx, 2, req.source)
        return dict(zip(spec.target_names(), cols))

    def iter_batches(self, req: TableRequest, batch_size: int) -> Iterator[Any]:
        import pyarrow as pa

        check_codec(req.encoding, req.errors)
        for spec, cols in self._iter_lists(req, batch_size):
            arrays = [pa.array(c, pa.string()) for c in cols]
            if spec.seg is not None:
                arrays[-1] = pa.array(cols[-1])
            yield pa.RecordBatch.from_arrays(arrays, names=spec.target_names())

    def _iter_lists(self, req: TableRequest,
                    batch_size: int) -> Iterator[tuple[ColumnSpec, list[list[str]]]]:
        header, spec, idx = None, None, None
        lineno = 1
        _check_head(req)
        for block in iter_raw_line_blocks(req.path, req.encoding, req.errors):
            if header is None:
                header = self._header(block[0])
                spec = req.resolve(header)
                idx = [header.index(c) for c in spec.source_columns()]
                block = block[1:]
                lineno = 2
            assert spec is not None
            assert idx is not None
            for s in range(0, len(block), batch_size):
                part = block[s:s + batch_size]
                yield spec, self._columns(part, len(header), idx, lineno, req.source)
                lineno += len(part)
        if header is None:
            raise CorpusError(f"{req.source}: empty file (no header line)")

    def row_line(self, req: TableRequest, row: int) -> int | None:
        return row + 2  # every line after the header is a row

    @staticmethod
    def _header(line: str) -> list[str]:
        if line.endswith("\r"):
            line = line[:-1]
        return _drop_bom(line).split("\t")

    @staticmethod
    def _columns(lines: list[str], ncol: int, idx: list[int], first_lineno: int,
                 source: str) -> list[list[str]]:
        rows = [(s[:-1] if s.endswith("\r") else s).split("\t") for s in lines]
        if len(set(map(len, rows))) > 1 or (rows and len(rows[0]) != ncol):
            i = next(i for i, r in enumerate(rows) if len(r) != ncol)
            raise CorpusError(
                f"{source}:{first_lineno + i}: found {len(rows[i])} tab-separated fields, the "
                f"header has {ncol} (TSV fields cannot contain tabs or newlines; use JSONL or "
                "Parquet)")
        return [[r[j] for r in rows] for j in idx]


# ---- JSONL (pyarrow.json on UTF-8-validated blocks) ---------------------------------------------

class JsonlFormat(TableFormat):
    name, aliases, extensions = "jsonl", ("json", "ndjson"), (".jsonl", ".ndjson", ".json")

    def read(self, req: TableRequest) -> Any:
        import pyarrow as pa

        parts = list(self._tables(req, block_bytes=1 << 26))
        spec = parts[0][0]
        return normalise(pa.concat_tables([t for _, t in parts]), spec, req.source,
                         lines=lambda row: self.row_line(req, row))

    def iter_batches(self, req: TableRequest, batch_size: int) -> Iterator[Any]:
        row0 = 0
        for spec, tbl in self._tables(req):
            for b in tbl.to_batches(max_chunksize=batch_size):
                yield normalise(b, spec, req.source, row0, lambda row: self.row_line(req, row))
                row0 += b.num_rows

    def row_line(self, req: TableRequest, row: int) -> int | None:
        if req.path == "-":
            return None
        n = -1
        with open_binary(req.path) as f:
            for lineno, raw in enumerate(f, 1):
                n += bool(raw.strip())  # pyarrow.json skips blank lines
                if n == row:
                    return lineno
        return None

    def _tables(self, req: TableRequest, block_bytes: int | None = None):
        """(spec, pyarrow Table) per block of complete lines; every block is UTF-8 validated
        first (pyarrow.json would silently replace invalid bytes)."""
        import pyarrow as pa

        source = req.source
        check_codec(req.encoding, req.errors)
        _check_head(req)
        # the first object from its own line (stdin, and UTF-16/32 whose lines are not split on
        # b"\n": from the first decoded block)
        first = (None if req.path == "-" or not ascii_compatible(req.encoding)
                 else self._first_object(req.path, source))
        spec = None if first is None else req.resolve(list(first))
        lineno = 1
        for block in iter_raw_line_blocks(req.path, req.encoding, req.errors, block_bytes):
            if lineno == 1 and block:
                block[0] = _drop_bom(block[0])
            if spec is None:  # stdin: resolve from the first object
                import json
                line = next((s for s in block if s.strip()), None)
                if line is None:
                    lineno += len(block)
                    continue
                first = json.loads(line)
                spec = req.resolve(list(first))
            assert first is not None  # spec was resolved from it
            try:
                tbl = self._parse(block, spec, first)
            except pa.ArrowInvalid as e:
                raise self._explain(block, lineno, spec, source, e) from None
            yield spec, tbl
            lineno += len(block)
        if spec is None:
            raise CorpusError(f"{source}: empty input (no JSON lines)")

    @staticmethod
    def _parse(block: list[str], spec: ColumnSpec, first: dict) -> Any:
        """One block of JSON lines -> pyarrow Table of the source columns."""
        import pyarrow as pa
        import pyarrow.json as pj

        # strings for text columns; seg keeps the JSON type of its first value
        seg_type = {bool: pa.bool_(), int: pa.int64(), float: pa.float64()}.get(
            type(first.get(spec.seg)), pa.string())
        schema = pa.schema([pa.field(c, seg_type if c == spec.seg else pa.string())
                            for c in spec.source_columns()])
        data = ("\n".join(block) + "\n").encode("utf-8", "surrogatepass")
        return pj.read_json(
            pa.BufferReader(data),
            read_options=pj.ReadOptions(block_size=max(len(data) + 1, 1 << 20)),
            parse_options=pj.ParseOptions(explicit_schema=schema,
                                          unexpected_field_behavior="ignore"))

    @staticmethod
    def _first_object(path, source) -> dict:
        import json

        with open_binary(path) as f:
            for lineno, raw in enumerate(f, 1):
                if raw.strip():
                    try:
                        obj = json.loads(raw)
                    except ValueError as e:
                        raise CorpusError(f"{source}:{lineno}: invalid JSON ({e})") from None
                    if not isinstance(obj, dict):
                        raise CorpusError(f"{source}:{lineno}: expected a JSON object per line")
                    return obj
        raise CorpusError(f"{source}: empty input (no JSON lines)")

    @staticmethod
    def _explain(text_lines: list[str], first_lineno: int, spec: ColumnSpec, source: str,
                 err: Exception) -> CorpusError:
        """Locate the first line pyarrow rejected (error path only) with Python's json."""
        import json

        want_str = set(spec.source_columns()) - ({spec.seg} if spec.seg else set())
        for i, line in enumerate(text_lines):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                return CorpusError(f"{source}:{first_lineno + i}: invalid JSON ({e})")
            if not isinstance(obj, dict):
                return CorpusError(f"{source}:{first_lineno + i}: expected a JSON object per line")
            for c in want_str:
                v = obj.get(c)
                if v is not None and not isinstance(v, str):
                    return CorpusError(
                        f"{source}:{first_lineno + i}: field {c!r} is {type(v).__name__}, "
                        "expected a string or null")
                if isinstance(v, str) and any(0xD800 <= ord(ch) <= 0xDFFF for ch in v):
                    return CorpusError(
                        f"{source}:{first_lineno + i}: field {c!r} contains a lone surrogate "
                        "escape")
        return CorpusError(f"{source}: cannot read JSONL ({err})")


# ---- CSV (RFC 4180 quoting, via pyarrow.csv) ----------------------------------------------------

class CsvFormat(TableFormat):
    name, extensions = "csv", (".csv",)

    def read(self, req: TableRequest) -> Any:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        spec = req.resolve(self._names(req))
        counted = _QuoteCounter(req.path)
        try:
            with counted:
                tbl = pcsv.read_csv(counted.arrow_file(), **self._options(spec, req.encoding))
        except pa.ArrowInvalid as e:
            raise self._error(req, e) from None
        self._check_quotes(req, counted)
        return normalise(tbl, spec, req.source, lines=_CsvLines(req).line_of)

    def iter_batches(self, req: TableRequest, batch_size: int) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        spec = req.resolve(self._names(req))
        counted = _QuoteCounter(req.path)
        try:
            with counted:
                reader = pcsv.open_csv(counted.arrow_file(), **self._options(spec, req.encoding))
                yield from _rebatch(reader, spec, req.source, batch_size, _CsvLines(req).line_of)
        except pa.ArrowInvalid as e:
            raise self._error(req, e) from None
        self._check_quotes(req, counted)

    def row_line(self, req: TableRequest, row: int) -> int | None:
        return _CsvLines(req).line_of(row)

    @staticmethod
    def _names(req: TableRequest) -> list[str]:
        """The header's column names, read with the file's encoding (a UTF-8 byte-order mark is
        not part of the first name: pyarrow skips it too) and CSV quoting."""
        import csv
        import io

        if req.path == "-":
            raise CorpusError("CSV from stdin is not supported; use TSV or JSONL")
        check_codec(req.encoding, req.errors)
        _check_head(req)
        enc = "utf-8-sig" if display_encoding(req.encoding) == "UTF-8" else req.encoding
        with io.TextIOWrapper(open_binary(req.path), encoding=enc, errors="replace",
                              newline="") as text:
            first = next(csv.reader(text), None)
        if not first or not "".join(first).strip():
            raise CorpusError(f"{req.source}: empty file (no header line)")
        if any("\n" in c or "\r" in c for c in first) and ascii_compatible(req.encoding):
            line = _unterminated_quote(req)  # a header quote never closed took in the file
            if line is not None:
                raise _unterminated_error(req.source, line)
        first[0] = _drop_bom(first[0])
        return first

    @staticmethod
    def _check_quotes(req: TableRequest, counted: _QuoteCounter) -> None:
        """pyarrow (``newlines_in_values``) reads a quoted field that is never closed as the rest
        of the file; an odd number of b'"' bytes is the cheap sign that one may be open at the
        end, and only then is the file looked at again (:func:`_unterminated_quote`)."""
        if counted.quotes % 2 and ascii_compatible(req.encoding):
            line = _unterminated_quote(req)
            if line is not None:
                raise _unterminated_error(req.source, line)

    @staticmethod
    def _error(req: TableRequest, err) -> CorpusError:
        """pyarrow.csv's errors located: an encoding error's line (pyarrow only says "invalid
        UTF8"), a quoted field never closed, a row with another number of fields than the
        header; else pyarrow's message on one line."""
        for _ in iter_raw_line_blocks(req.path, req.encoding, req.errors):  # raises, located
            pass
        if ascii_compatible(req.encoding):
            line = _unterminated_quote(req)
            if line is not None:
                return _unterminated_error(req.source, line)
        found = _CsvLines(req).field_count_error()
        if found is not None:
            return found
        why = " ".join(str(err).split())
        return CorpusError(f"{req.source}: cannot read CSV ({why[:300]})")

    @staticmethod
    def _options(spec: ColumnSpec, encoding: str) -> dict:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        types = {c: pa.string() for c in spec.source_columns() if c != spec.seg}
        return dict(
            read_options=pcsv.ReadOptions(encoding=encoding),
            parse_options=pcsv.ParseOptions(newlines_in_values=True),
            convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                include_columns=spec.source_columns()))


class _QuoteCounter:
    """The CSV bytes pyarrow reads, through Python: b'"' bytes are counted (numpy, a few GB/s,
    on the blocks pyarrow asks for) on the way. Compressed files (``.gz``, ``.bz2``...) are
    decompressed by pyarrow as when it opens the path itself."""

    def __init__(self, path):
        import pyarrow as pa

        self.quotes = 0
        self._f = pa.input_stream(os.fspath(path))

    def arrow_file(self):
        import pyarrow as pa

        return pa.PythonFile(self, mode="r")

    # the file-object methods pyarrow's PythonFile calls
    closed = False

    def readable(self) -> bool:
        return True

    def read(self, nbytes: int = -1) -> bytes:
        import numpy as np

        data = self._f.read() if nbytes is None or nbytes < 0 else self._f.read(nbytes)
        if data:
            self.quotes += int(np.count_nonzero(np.frombuffer(data, np.uint8) == 34))
        return data

    def close(self) -> None:
        self._f.close()
        self.closed = True

    def __enter__(self) -> _QuoteCounter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _unterminated_error(source: str, line: int) -> CorpusError:
    return CorpusError(
        f"{source}:{line}: a quoted field starts here and is never closed (it would take in the "
        "rest of the file); close it with '\"' (a '\"' inside a quoted field is written '\"\"')")


def _last_odd_quote_run(path) -> tuple[int, int, int] | None:
    """``(offset, line, previous byte or -1)`` of the first b'"' of the last run of consecutive
    b'"' bytes of odd length, or None: a quoted field still open at the end of the file was
    opened by such a run (inside a quoted field quotes come in pairs, and any odd run closes it),
    and every later run is even. Two passes of numpy over the bytes (error path)."""
    import numpy as np

    from .textio import BLOCK_BYTES, read_block

    best = -1
    carry = None  # (start, length) of the last run of the previous block: it may go on
    base = 0
    with open_binary(path) as f:
        while True:
            block = read_block(f, BLOCK_BYTES, path)
            if not block:
                break
            pos = np.flatnonzero(np.frombuffer(block, np.uint8) == 34)
            if not len(pos):
                if carry is not None and carry[1] % 2:
                    best = carry[0]
                carry = None
            else:
                cut = np.flatnonzero(np.diff(pos) != 1) + 1
                starts = np.concatenate(([0], cut))
                run_len = np.concatenate((cut, [len(pos)])) - starts
                run_at = pos[starts] + base
                if carry is not None and carry[0] + carry[1] == run_at[0]:
                    run_at[0], run_len[0] = carry[0], run_len[0] + carry[1]
                elif carry is not None and carry[1] % 2:
                    best = carry[0]
                odd = np.flatnonzero(run_len[:-1] % 2)
                if len(odd):
                    best = int(run_at[odd[-1]])
                carry = (int(run_at[-1]), int(run_len[-1]))
            base += len(block)
    if carry is not None and carry[1] % 2:
        best = carry[0]
    if best < 0:
        return None
    lines, prev, left = 1, -1, best
    with open_binary(path) as f:
        while left > 0:
            block = read_block(f, min(left, BLOCK_BYTES), path)
            if not block:
                break
            lines += block.count(b"\n")
            prev = block[-1]
            left -= len(block)
    return best, lines, prev


def _limited(f, limit: int):
    """A buffered binary file of the first ``limit`` bytes of file object ``f``."""
    import io

    class Limited(io.RawIOBase):
        left = limit

        def readable(self) -> bool:
            return True

        def readinto(self, buf) -> int:
            n = min(len(buf), self.left)
            data = f.read(n) if n else b""
            buf[:len(data)] = data
            self.left -= len(data)
            return len(data)

    return io.BufferedReader(Limited())


_SENTINEL = "\x01mtscore-open-quote\x01"


def _unterminated_quote(req: TableRequest) -> int | None:
    """The line where a quoted field that runs to the end of the file starts, or None.
    The candidate opening quote (:func:`_last_odd_quote_run`) must be at the start of a field
    (first byte, or after ',' or a line end) and, confirmed by Python's csv module over the
    bytes before it, not inside an earlier quoted field: a field starting there with a quote
    and a sentinel then holds exactly the sentinel. Error path only."""
    import csv
    import io

    found = _last_odd_quote_run(req.path)
    if found is None:
        return None
    offset, line, prev = found
    if offset and prev not in (0x2C, 0x0A, 0x0D) and not (offset == 3 and prev == 0xBF):
        return None
    with open_binary(req.path) as raw:
        text = io.TextIOWrapper(_limited(raw, offset), encoding=req.encoding, errors="replace",
                                newline="")

        def lines():
            prev_line = None
            for s in text:
                if prev_line is not None:
                    yield prev_line
                prev_line = s
            if prev_line is None or prev_line.endswith(("\n", "\r")):
                if prev_line is not None:
                    yield prev_line
                yield '"' + _SENTINEL
            else:
                yield prev_line + '"' + _SENTINEL

        last: list[str] | None = None
        try:
            for rec in csv.reader(lines()):
                last = rec
        except csv.Error:
            return None
    return line if last and last[-1] == _SENTINEL else None


class _CsvLines:
    """File line numbers of CSV data rows, found on the error path only: a row's line counts
    the header and the lines of quoted fields with newlines before it."""

    def __init__(self, req: TableRequest):
        self.req = req

    def _records(self):
        """``(line where the record starts, fields)`` of each non-blank record after the
        header (pyarrow skips blank lines)."""
        import csv
        import io

        req = self.req
        enc = "utf-8-sig" if display_encoding(req.encoding) == "UTF-8" else req.encoding
        with io.TextIOWrapper(open_binary(req.path), encoding=enc, errors="replace",
                              newline="") as text:
            reader = csv.reader(text)
            start = 1
            header = True
            try:
                for rec in reader:
                    if rec and not header:
                        yield start, rec
                    header = header and not rec
                    start = reader.line_num + 1
            except csv.Error:
                return

    def line_of(self, row: int) -> int | None:
        """The file line of 0-based data row ``row``, or None if it cannot be found."""
        for i, (line, _) in enumerate(self._records()):
            if i == row:
                return line
        return None

    def field_count_error(self) -> CorpusError | None:
        ncol = None
        for line, rec in self._records():
            if ncol is None:
                ncol = self._header_count()
            if len(rec) != ncol:
                return CorpusError(
                    f"{self.req.source}:{line}: found {len(rec)} comma-separated fields, the "
                    f"header has {ncol} (quote a field that holds a comma: \"a, b\")")
        return None

    def _header_count(self) -> int:
        import csv
        import io

        enc = "utf-8-sig" if display_encoding(self.req.encoding) == "UTF-8" else self.req.encoding
        with io.TextIOWrapper(open_binary(self.req.path), encoding=enc, errors="replace",
                              newline="") as text:
            return len(next((r for r in csv.reader(text) if r), []))


# ---- Parquet (one file, or a directory read as a dataset) ---------------------------------------

class _ParquetFile:
    """One Parquet file; ``pre_buffer=False`` when streaming (pre-buffering caches whole
    columns)."""

    def __init__(self, src, source: str, **kw):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            self.file = pq.ParquetFile(src, **kw)
        except (pa.ArrowInvalid, OSError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise CorpusError(f"{source}: not a Parquet file ({e})") from None
        self.names = self.file.schema_arrow.names

    def read(self, columns: list[str]) -> Any:
        return self.file.read(columns=columns)

    def iter_batches(self, columns: list[str], batch_size: int) -> Iterator[Any]:
        return self.file.iter_batches(batch_size=batch_size, columns=columns)


class _ParquetDataset:
    """A directory of Parquet files (pyarrow.dataset)."""

    def __init__(self, path: str):
        import pyarrow.dataset as ds

        self.dataset = ds.dataset(path, format="parquet")
        self.names = self.dataset.schema.names

    def read(self, columns: list[str]) -> Any:
        return self.dataset.to_table(columns=columns)

    def iter_batches(self, columns: list[str], batch_size: int) -> Iterator[Any]:
        import pyarrow.dataset as ds

        # no pre-buffering / little read-ahead: memory stays at about one row group
        return self.dataset.to_batches(
            columns=columns, batch_size=batch_size, batch_readahead=1, fragment_readahead=1,
            fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=False))


class ParquetFormat(TableFormat):
    name, aliases, extensions, compressible = "parquet", ("pq",), (".parquet", ".pq"), False

    def read(self, req: TableRequest) -> Any:
        pf = self._open(req)
        spec = req.resolve(pf.names)
        return normalise(pf.read(spec.source_columns()), spec, req.source)

    def iter_batches(self, req: TableRequest, batch_size: int) -> Iterator[Any]:
        pf = self._open(req, pre_buffer=False)
        spec = req.resolve(pf.names)
        yield from _rebatch(pf.iter_batches(spec.source_columns(), batch_size), spec, req.source,
                            batch_size)

    @staticmethod
    def _open(req: TableRequest, **file_kw) -> _ParquetFile | _ParquetDataset:
        src = _arrow_source(req.path)
        if isinstance(src, str) and os.path.isdir(src):
            return _ParquetDataset(src)
        return _ParquetFile(src, req.source, **file_kw)


# ---- Arrow IPC (file format / Feather v2, memory-mapped; or stream format) ----------------------

class ArrowFormat(TableFormat):
    name, aliases, compressible = "arrow", ("ipc", "feather"), False
    extensions = (".arrow", ".feather", ".ipc", ".arrows")

    def read(self, req: TableRequest) -> Any:
        reader = self._reader(req)
        spec = req.resolve(reader.schema.names)
        return normalise(reader.read_all().select(spec.source_columns()), spec, req.source)

    def iter_batches(self, req: TableRequest, batch_size: int) -> Iterator[Any]:
        reader = self._reader(req)
        spec = req.resolve(reader.schema.names)
        if hasattr(reader, "num_record_batches"):
            batches = (reader.get_batch(i).select(spec.source_columns())
                       for i in range(reader.num_record_batches))
        else:
            batches = (b.select(spec.source_columns()) for b in reader)
        yield from _rebatch(batches, spec, req.source, batch_size)

    @staticmethod
    def _reader(req: TableRequest):
        import pyarrow as pa

        src = _arrow_source(req.path)
        try:
            if isinstance(src, str):
                return pa.ipc.open_file(pa.memory_map(src, "r"))
            return pa.ipc.open_file(src)
        except pa.ArrowInvalid:
            if not isinstance(src, str):
                src.seek(0)
            try:
                return pa.ipc.open_stream(pa.OSFile(src) if isinstance(src, str) else src)
            except pa.ArrowInvalid as e:
                raise CorpusError(f"{req.source}: not an Arrow IPC/Feather file ({e})") from None


# ==================================================================================================
# The registry and the two entry points
# ==================================================================================================

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
