"""The TSV table format: the project's own reader (no quoting, rows end at '\\n', a CRLF ending is
accepted); reading a file whole gives Python lists and never imports pyarrow."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .columns import ColumnSpec
from .corpus_error import CorpusError
from .decoding import check_codec, check_head, decode_lines
from .table_format import WIDE_HOW, TableFormat, TableRequest, check_table_head, drop_bom
from .textio import iter_raw_line_blocks, read_bytes

__all__ = ["TsvFormat"]


# ---- TSV (own reader: no quoting, rows end at '\n', a CRLF ending is accepted) ------------------

class TsvFormat(TableFormat):
    name, aliases, extensions = "tsv", ("tab",), (".tsv", ".tab")

    def read(self, req: TableRequest) -> dict[str, list]:
        check_codec(req.encoding, req.errors)
        data = read_bytes(req.path)
        check_head(data[:4], req.source, req.encoding, WIDE_HOW)
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
        check_table_head(req)
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
        return drop_bom(line).split("\t")

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
