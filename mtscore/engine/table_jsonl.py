"""The JSONL table format: pyarrow.json on UTF-8-validated blocks of lines, errors located with
Python's json."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .columns import ColumnSpec, normalise
from .corpus_error import CorpusError
from .decoding import ascii_compatible, check_codec
from .table_format import TableFormat, TableRequest, check_table_head, drop_bom
from .textio import iter_raw_line_blocks, open_binary

__all__ = ["JsonlFormat"]


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
        check_table_head(req)
        # the first object from its own line (stdin, and UTF-16/32 whose lines are not split on
        # b"\n": from the first decoded block)
        first = (None if req.path == "-" or not ascii_compatible(req.encoding)
                 else self._first_object(req.path, source))
        spec = None if first is None else req.resolve(list(first))
        lineno = 1
        for block in iter_raw_line_blocks(req.path, req.encoding, req.errors, block_bytes):
            if lineno == 1 and block:
                block[0] = drop_bom(block[0])
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
