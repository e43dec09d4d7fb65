"""The CSV table format (RFC 4180 quoting, via pyarrow.csv), and its error path: a quoted field
never closed, a row with another number of fields than the header, and data rows as file lines."""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from .columns import ColumnSpec, normalise
from .corpus_error import CorpusError
from .decoding import ascii_compatible, check_codec, display_encoding
from .table_format import TableFormat, TableRequest, check_table_head, drop_bom, rebatch
from .textio import iter_raw_line_blocks, open_binary

__all__ = ["CsvFormat"]


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
                yield from rebatch(reader, spec, req.source, batch_size, _CsvLines(req).line_of)
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
        check_table_head(req)
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
        first[0] = drop_bom(first[0])
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
