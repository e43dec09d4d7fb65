"""Corpus ingestion: hypotheses and K reference streams from memory, files and stdin.

Everything that turns user input into the lists of ``str`` the metric kernels take lives here:

* in-memory coercion used by every metric: :func:`as_text_list`, :func:`as_ref_streams`;
* text files with sacrebleu's CLI semantics: :func:`read_lines`, :func:`read_tab_refs`,
  :func:`read_stdin_systems`, streaming :func:`iter_text_chunks`;
* tables with named columns (TSV, CSV, JSONL, Parquet, Arrow IPC/Feather): :func:`read_table`,
  streaming :func:`iter_batches`;
* :class:`Corpus`, the one in-memory form: a pyarrow Table with columns ``hyp``,
  ``ref_0 .. ref_{K-1}`` (nullable strings: ``None`` = no reference for this segment, ``''`` is a
  real empty reference) and optional ``system``, ``doc``, ``seg``.

Reference layout is K streams x N segments (``refs[k][i]``), as in sacrebleu. Where sacrebleu
silently truncates (transposed N x K layout, line-count mismatch) this module raises
:class:`CorpusError` (a ``ValueError``) with one line naming the file/argument and the counts.

Import cost matters for the CLI: this module imports only the standard library at load time;
pyarrow (and pyarrow.parquet / .json / .csv / .dataset, pandas) are imported inside the
functions that need them. Reading plain text or TSV files into lists never imports pyarrow.
"""
from __future__ import annotations

import os
import sys
from typing import (Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple,
                    Union)

__all__ = [
    "CorpusError", "Corpus", "TextChunk", "TABLE_FORMATS",
    "as_text_list", "as_ref_streams",
    "read_lines", "count_lines", "read_tab_refs", "read_stdin_systems", "iter_text_chunks",
    "iter_aligned_lines", "guess_format", "read_table", "iter_batches", "batch_lists",
    "load_corpus",
]

from .coerce import as_ref_streams, as_text_list, is_missing, is_tabular, to_list
from .corpus_error import CorpusError
from .decoding import check_codec, decode_lines
from .textio import (PathLike, TextChunk, count_lines, count_mismatch, iter_aligned_lines,
                     iter_raw_line_blocks, iter_text_chunks, open_binary, read_bytes, read_lines,
                     read_stdin_systems, read_tab_refs, source_name)

#: formats :func:`read_table` / :func:`iter_batches` understand
TABLE_FORMATS = ("tsv", "csv", "jsonl", "parquet", "arrow")

_EXTENSIONS = {
    ".tsv": "tsv", ".tab": "tsv", ".csv": "csv",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
    ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow", ".arrows": "arrow",
}
_FMT_ALIASES = {"ipc": "arrow", "feather": "arrow", "json": "jsonl", "ndjson": "jsonl",
                "pq": "parquet", "tab": "tsv"}


# ==================================================================================================
# Raw bytes, decoding and error location
# ==================================================================================================


# ==================================================================================================
# Plain text files (sacrebleu CLI semantics)
# ==================================================================================================


# ==================================================================================================
# Tables with named columns
# ==================================================================================================

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
    if comp and fmt in ("parquet", "arrow"):
        raise CorpusError(f"{p}: {fmt} files cannot be {comp}-compressed (they compress inside)")
    return fmt


def _norm_fmt(fmt: Optional[str], path) -> str:
    if fmt is None:
        if path == "-":
            raise CorpusError("reading a table from stdin needs fmt= (one of "
                              + ", ".join(TABLE_FORMATS) + ")")
        fmt = guess_format(path)
        if fmt == "text":
            raise CorpusError(
                f"{source_name(path)}: cannot tell the table format from the extension; pass fmt= one "
                f"of {', '.join(TABLE_FORMATS)} (plain text files: read_lines / load_corpus)")
        return fmt
    f = _FMT_ALIASES.get(fmt.lower(), fmt.lower())
    if f not in TABLE_FORMATS:
        raise CorpusError(f"unknown table format {fmt!r}; known: {', '.join(TABLE_FORMATS)}")
    return f


class _Spec(NamedTuple):
    hyp: str
    refs: Tuple[str, ...]
    system: Optional[str]
    doc: Optional[str]
    seg: Optional[str]

    def source_columns(self) -> List[str]:
        return [c for c in (self.hyp, *self.refs, self.system, self.doc, self.seg) if c is not None]

    def target_names(self) -> List[str]:
        out = ["hyp"] + [f"ref_{k}" for k in range(len(self.refs))]
        return out + [n for n, c in (("system", self.system), ("doc", self.doc),
                                     ("seg", self.seg)) if c is not None]


def _auto_ref_columns(names: Sequence[str]) -> List[str]:
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


def _resolve(names: Sequence[str], source: str, hyp, refs, system, doc, seg) -> _Spec:
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
    if refs is None:
        r = [c for c in _auto_ref_columns(names) if c != h]
    else:
        if isinstance(refs, str):
            refs = [refs]
        r = [need(c, "refs") for c in refs]
    return _Spec(h, tuple(r), optional(system, "system", "system"),
                 optional(doc, "doc", "doc"), optional(seg, "seg", "seg"))


# ---- TSV (own reader: no quoting, rows end at '\n', a CRLF ending is accepted) ------------------

def _tsv_header(line: str, source: str) -> List[str]:
    if line.endswith("\r"):
        line = line[:-1]
    return line.split("\t")


def _tsv_columns(lines: List[str], ncol: int, idx: List[int], first_lineno: int,
                 source: str) -> List[List[str]]:
    rows = [(s[:-1] if s.endswith("\r") else s).split("\t") for s in lines]
    if len(set(map(len, rows))) > 1 or (rows and len(rows[0]) != ncol):
        i = next(i for i, r in enumerate(rows) if len(r) != ncol)
        raise CorpusError(
            f"{source}:{first_lineno + i}: found {len(rows[i])} tab-separated fields, the header "
            f"has {ncol} (TSV fields cannot contain tabs or newlines; use JSONL or Parquet)")
    return [[r[j] for r in rows] for j in idx]


def _read_tsv_lists(path, spec_args, encoding, errors) -> Tuple[_Spec, List[List[str]]]:
    source = source_name(path)
    check_codec(encoding, errors)
    lines = decode_lines(read_bytes(path), source, encoding, errors)
    if not lines:
        raise CorpusError(f"{source}: empty file (no header line)")
    header = _tsv_header(lines[0], source)
    spec = _resolve(header, source, *spec_args)
    idx = [header.index(c) for c in spec.source_columns()]
    return spec, _tsv_columns(lines[1:], len(header), idx, 2, source)


def _iter_tsv_lists(path, spec_args, encoding, errors,
                    batch_size) -> Iterator[Tuple[_Spec, List[List[str]]]]:
    source = source_name(path)
    header, spec, idx = None, None, None
    lineno = 1
    for block in iter_raw_line_blocks(path, encoding, errors):
        if header is None:
            header = _tsv_header(block[0], source)
            spec = _resolve(header, source, *spec_args)
            idx = [header.index(c) for c in spec.source_columns()]
            block = block[1:]
            lineno = 2
        for s in range(0, len(block), batch_size):
            part = block[s:s + batch_size]
            yield spec, _tsv_columns(part, len(header), idx, lineno, source)
            lineno += len(part)
    if header is None:
        raise CorpusError(f"{source}: empty file (no header line)")


# ---- JSONL (pyarrow.json on UTF-8-validated blocks) ---------------------------------------------

def _jsonl_first_object(path, source) -> dict:
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


def _jsonl_explain(text_lines: List[str], first_lineno: int, spec: _Spec, source: str,
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
                    f"{source}:{first_lineno + i}: field {c!r} is {type(v).__name__}, expected a "
                    "string or null")
            if isinstance(v, str) and any(0xD800 <= ord(ch) <= 0xDFFF for ch in v):
                return CorpusError(
                    f"{source}:{first_lineno + i}: field {c!r} contains a lone surrogate escape")
    return CorpusError(f"{source}: cannot read JSONL ({err})")


def _jsonl_tables(path, spec_args, encoding, errors, block_bytes=None):
    """(spec, pyarrow Table) per block of complete lines; every block is UTF-8 validated first
    (pyarrow.json would silently replace invalid bytes)."""
    import pyarrow as pa
    import pyarrow.json as pj

    source = source_name(path)
    check_codec(encoding, errors)
    first = None if path == "-" else _jsonl_first_object(path, source)
    spec = None if first is None else _resolve(list(first), source, *spec_args)
    lineno = 1
    for block in iter_raw_line_blocks(path, encoding, errors, block_bytes):
        if spec is None:  # stdin: resolve from the first object
            import json
            first = next((s for s in block if s.strip()), None)
            if first is None:
                lineno += len(block)
                continue
            first = json.loads(first)
            spec = _resolve(list(first), source, *spec_args)
        # strings for text columns; seg keeps the JSON type of its first value
        seg_type = {bool: pa.bool_(), int: pa.int64(), float: pa.float64()}.get(
            type(first.get(spec.seg)), pa.string())
        schema = pa.schema([pa.field(c, seg_type if c == spec.seg else pa.string())
                            for c in spec.source_columns()])
        data = ("\n".join(block) + "\n").encode("utf-8", "surrogatepass")
        try:
            tbl = pj.read_json(
                pa.BufferReader(data),
                read_options=pj.ReadOptions(block_size=max(len(data) + 1, 1 << 20)),
                parse_options=pj.ParseOptions(explicit_schema=schema,
                                              unexpected_field_behavior="ignore"))
        except pa.ArrowInvalid as e:
            raise _jsonl_explain(block, lineno, spec, source, e) from None
        yield spec, tbl
        lineno += len(block)
    if spec is None:
        raise CorpusError(f"{source}: empty input (no JSON lines)")


# ---- normalisation to the Corpus schema ---------------------------------------------------------

def _string_array(col, name: str, source: str, allow_null: bool, row0: int = 0, cast_any=False):
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
        raise CorpusError(
            f"{source}: column {name!r} has a missing value (null) at row {row0 + i + 1}; "
            "hypotheses must be strings (use '' for an empty one)")
    return col


def _normalise(tbl, spec: _Spec, source: str, row0: int = 0):
    """Table/RecordBatch with the source columns -> same kind with columns hyp, ref_k, ..."""
    import pyarrow as pa

    cols = [_string_array(tbl.column(spec.hyp), spec.hyp, source, False, row0)]
    cols += [_string_array(tbl.column(c), c, source, True, row0) for c in spec.refs]
    for c, null_ok in ((spec.system, False), (spec.doc, True)):
        if c is not None:
            cols.append(_string_array(tbl.column(c), c, source, null_ok, row0, cast_any=True))
    if spec.seg is not None:
        cols.append(tbl.column(spec.seg))
    names = spec.target_names()
    if isinstance(tbl, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(cols, names=names)
    return pa.Table.from_arrays(cols, names=names)


def _arrow_source(path):
    import pyarrow as pa

    if path == "-":
        return pa.BufferReader(sys.stdin.buffer.read())
    return os.fspath(path)


def _ipc_reader(path):
    """Arrow IPC file (Feather v2; memory-mapped) or stream format."""
    import pyarrow as pa

    src = _arrow_source(path)
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
            raise CorpusError(f"{source_name(path)}: not an Arrow IPC/Feather file ({e})") from None


def read_table(path: PathLike, hyp: str = "hyp", refs: Optional[Sequence[str]] = None,
               fmt: Optional[str] = None, *, system=None, doc=None, seg=None,
               encoding: str = "utf-8", errors: str = "strict") -> "Corpus":
    """A :class:`Corpus` from a table file with named columns.

    ``fmt``: ``tsv`` (header line; no quoting; fields must not contain tabs/newlines; a CRLF line
    ending is accepted; values are kept verbatim), ``csv`` (RFC 4180 quoting, via pyarrow.csv),
    ``jsonl`` (one JSON object per line; null = no reference), ``parquet`` (file or dataset
    directory), ``arrow`` (IPC file/Feather v2 or IPC stream); guessed from the extension when
    None (``.gz`` works for tsv/csv/jsonl). ``path='-'`` reads stdin (``fmt`` required).

    ``refs``: reference column names in stream order; None picks ``ref``/``ref_0``/``ref1``/...
    by convention (no such column: K = 0). ``system``/``doc``/``seg``: None = use a column of
    that name if present, a name = required column, False = ignore.
    Missing columns raise :class:`CorpusError` naming the file and listing the available columns.
    """
    fmt = _norm_fmt(fmt, path)
    source = source_name(path)
    spec_args = (hyp, refs, system, doc, seg)
    if fmt == "tsv":
        spec, cols = _read_tsv_lists(path, spec_args, encoding, errors)
        return Corpus._from_column_lists(spec, cols, source)
    import pyarrow as pa

    if fmt == "jsonl":
        parts = list(_jsonl_tables(path, spec_args, encoding, errors, block_bytes=1 << 26))
        spec = parts[0][0]
        tbl = pa.concat_tables([t for _, t in parts])
    elif fmt == "csv":
        import pyarrow.csv as pcsv

        names = _csv_names(path, source)
        spec = _resolve(names, source, *spec_args)
        try:
            tbl = pcsv.read_csv(_arrow_source(path), **_csv_options(spec, encoding))
        except pa.ArrowInvalid as e:
            raise _csv_error(path, source, e, encoding, errors) from None
    elif fmt == "parquet":
        src = _arrow_source(path)
        if isinstance(src, str) and os.path.isdir(src):
            import pyarrow.dataset as ds

            dset = ds.dataset(src, format="parquet")
            spec = _resolve(dset.schema.names, source, *spec_args)
            tbl = dset.to_table(columns=spec.source_columns())
        else:
            pf = _parquet_file(src, source)
            spec = _resolve(pf.schema_arrow.names, source, *spec_args)
            tbl = pf.read(columns=spec.source_columns())
    else:  # arrow
        reader = _ipc_reader(path)
        spec = _resolve(reader.schema.names, source, *spec_args)
        tbl = reader.read_all().select(spec.source_columns())
    return Corpus.from_table(_normalise(tbl, spec, source), source=source)


def _parquet_file(src, source, **kw):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(src, **kw)
    except (pa.ArrowInvalid, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise CorpusError(f"{source}: not a Parquet file ({e})") from None


def _csv_names(path, source) -> List[str]:
    import csv
    import io

    if path == "-":
        raise CorpusError("CSV from stdin is not supported; use TSV or JSONL")
    with open_binary(path) as f:
        first = f.readline().decode("utf-8", "replace")
    if not first.strip():
        raise CorpusError(f"{source}: empty file (no header line)")
    return next(csv.reader(io.StringIO(first)))


def _csv_error(path, source, err, encoding, errors) -> CorpusError:
    """Name the line of an encoding error (pyarrow.csv only says "invalid UTF8")."""
    for _ in iter_raw_line_blocks(path, encoding, errors):  # raises a located CorpusError
        pass
    return CorpusError(f"{source}: cannot read CSV ({err})")


def _csv_options(spec: _Spec, encoding: str) -> dict:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    types = {c: pa.string() for c in spec.source_columns() if c != spec.seg}
    return dict(
        read_options=pcsv.ReadOptions(encoding=encoding),
        parse_options=pcsv.ParseOptions(newlines_in_values=True),
        convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                            include_columns=spec.source_columns()))


def iter_batches(path: PathLike, hyp: str = "hyp", refs: Optional[Sequence[str]] = None,
                 fmt: Optional[str] = None, batch_size: int = 65536, *, system=None, doc=None,
                 seg=None, encoding: str = "utf-8", errors: str = "strict") -> Iterator[Any]:
    """Stream ``pyarrow.RecordBatch`` es of at most ``batch_size`` rows with the :class:`Corpus`
    schema (``hyp``, ``ref_0..``, optional ``system``/``doc``/``seg``) from a table file, with
    memory bounded by the batch (Parquet ``iter_batches`` / dataset scanner, memory-mapped Arrow
    IPC, block-wise TSV/JSONL/CSV). Arguments as in :func:`read_table`. For plain text files use
    :func:`iter_text_chunks`. Turn a batch into lists with :func:`batch_lists`.
    """
    if batch_size < 1:
        raise CorpusError(f"batch_size must be >= 1, got {batch_size}")
    fmt = _norm_fmt(fmt, path)
    source = source_name(path)
    spec_args = (hyp, refs, system, doc, seg)
    import pyarrow as pa

    def rebatch(batches, spec):
        row0 = 0
        for b in batches:
            for s in range(0, b.num_rows, batch_size):
                part = b.slice(s, batch_size)
                yield _normalise(part, spec, source, row0)
                row0 += part.num_rows

    if fmt == "tsv":
        check_codec(encoding, errors)
        for spec, cols in _iter_tsv_lists(path, spec_args, encoding, errors, batch_size):
            arrays = [pa.array(c, pa.string()) for c in cols]
            if spec.seg is not None:
                arrays[-1] = pa.array(cols[-1])
            yield pa.RecordBatch.from_arrays(arrays, names=spec.target_names())
        return
    if fmt == "jsonl":
        row0 = 0
        for spec, tbl in _jsonl_tables(path, spec_args, encoding, errors):
            for b in tbl.to_batches(max_chunksize=batch_size):
                yield _normalise(b, spec, source, row0)
                row0 += b.num_rows
        return
    if fmt == "csv":
        import pyarrow.csv as pcsv

        spec = _resolve(_csv_names(path, source), source, *spec_args)
        try:
            reader = pcsv.open_csv(_arrow_source(path), **_csv_options(spec, encoding))
            yield from rebatch(reader, spec)
        except pa.ArrowInvalid as e:
            raise _csv_error(path, source, e, encoding, errors) from None
        return
    if fmt == "parquet":
        src = _arrow_source(path)
        if isinstance(src, str) and os.path.isdir(src):
            import pyarrow.dataset as ds

            dset = ds.dataset(src, format="parquet")
            spec = _resolve(dset.schema.names, source, *spec_args)
            # no pre-buffering / little read-ahead: memory stays at about one row group
            yield from rebatch(dset.to_batches(
                columns=spec.source_columns(), batch_size=batch_size, batch_readahead=1,
                fragment_readahead=1,
                fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=False)), spec)
            return
        pf = _parquet_file(src, source, pre_buffer=False)  # pre_buffer caches whole columns
        spec = _resolve(pf.schema_arrow.names, source, *spec_args)
        yield from rebatch(pf.iter_batches(batch_size=batch_size,
                                           columns=spec.source_columns()), spec)
        return
    reader = _ipc_reader(path)
    spec = _resolve(reader.schema.names, source, *spec_args)
    if hasattr(reader, "num_record_batches"):
        batches = (reader.get_batch(i).select(spec.source_columns())
                   for i in range(reader.num_record_batches))
    else:
        batches = (b.select(spec.source_columns()) for b in reader)
    yield from rebatch(batches, spec)


def batch_lists(batch) -> Tuple[List[str], List[List[Optional[str]]]]:
    """``(hyps, refs)`` as Python lists from a batch/table with the Corpus schema:
    hyps is a list of n ``str``, refs K lists of n ``str``-or-``None``."""
    names = batch.schema.names
    k = sum(1 for c in names if c.startswith("ref_"))
    return (batch.column("hyp").to_pylist(),
            [batch.column(f"ref_{i}").to_pylist() for i in range(k)])


# ==================================================================================================
# Corpus
# ==================================================================================================

class Corpus:
    """N segments: hypotheses, K reference streams and optional ``system``/``doc``/``seg``.

    The canonical form is a pyarrow Table (:attr:`table`) with columns ``hyp`` (string, no
    nulls), ``ref_0 .. ref_{K-1}`` (string; null = no reference for this segment, ``''`` is an
    empty reference), optional ``system`` (string), ``doc`` (string), ``seg`` (any type).
    A corpus built from Python lists (text files, stdin, TSV) keeps those lists and builds the
    Arrow table only when :attr:`table` is first used, so text-file scoring never imports pyarrow;
    one built from Arrow extracts Python lists on first use and caches them.
    (A plain class rather than a dataclass: ``dataclasses`` costs ~30 ms of CLI start-up.)
    """

    __slots__ = ("_table", "_lists", "_names", "source")

    def __init__(self, table=None, *, source: str = "<memory>", _lists=None, _names=None):
        if table is None and _lists is None:
            raise TypeError("Corpus needs a table (use Corpus.from_lists / load_corpus)")
        self._table = table
        self._lists: Dict[str, list] = dict(_lists or {})
        self._names: List[str] = list(_names if _names is not None else table.schema.names)
        self.source = source
        if "hyp" not in self._names:
            raise CorpusError(f"{source}: a Corpus table needs a 'hyp' column")
        if len(self) == 0:
            raise CorpusError(f"{source}: empty input (no segments)")

    # ---- construction ----------------------------------------------------------------------
    @classmethod
    def from_lists(cls, hyps, refs=None, *, system=None, doc=None, seg=None,
                   hyp_source: str = "hyps", ref_sources: Optional[Sequence[str]] = None,
                   source: Optional[str] = None) -> "Corpus":
        """From in-memory hypotheses (N) and K reference streams (``refs[k][i]``; None = K = 0).

        Any input :func:`as_text_list` / :func:`as_ref_streams` accept. ``ref_sources`` (file
        names) makes length errors name files ("line-count mismatch: hyp.txt has 100 lines but
        ref.txt has 99 lines"). ``system``/``doc``/``seg``: optional per-segment columns (N)."""
        h = as_text_list(hyps, hyp_source)
        n = len(h)
        if refs is None:
            streams: List[List[Optional[str]]] = []
        elif ref_sources is not None:
            streams = [as_text_list(r, str(s), allow_none=True) for r, s in zip(refs, ref_sources)]
            for s, r in zip(ref_sources, streams):
                if len(r) != n:
                    raise count_mismatch(hyp_source, n, s, len(r))
        else:
            if isinstance(refs, (list, tuple)) and len(refs) == 0:
                streams = []
            else:
                streams = as_ref_streams(refs, n, "refs")
        lists: Dict[str, list] = {"hyp": h}
        for k, r in enumerate(streams):
            lists[f"ref_{k}"] = r
        for name, col in (("system", system), ("doc", doc), ("seg", seg)):
            if col is None:
                continue
            vals = to_list(col, name)
            if len(vals) != n:
                raise CorpusError(f"{name} has {len(vals)} values but there are {n} hypotheses")
            if name != "seg":
                vals = [None if is_missing(v) else v if type(v) is str else str(v)
                        for v in vals]
                if name == "system" and None in vals:
                    raise CorpusError(f"system has a missing value at row {vals.index(None) + 1};"
                                      " every row needs a system name")
            lists[name] = vals
        return cls(None, source=source or hyp_source, _lists=lists, _names=list(lists))

    @classmethod
    def from_files(cls, hyp_path: PathLike, ref_paths: Union[PathLike, Sequence[PathLike]] = (),
                   encoding: str = "utf-8", errors: str = "strict") -> "Corpus":
        """From a hypothesis text file and K reference text files (:func:`read_lines` semantics)."""
        if isinstance(ref_paths, (str, os.PathLike)):
            ref_paths = [ref_paths]
        hyps = read_lines(hyp_path, encoding, errors)
        if not hyps:
            raise CorpusError(f"{source_name(hyp_path)}: empty input (no lines)")
        lists: Dict[str, list] = {"hyp": hyps}
        for k, p in enumerate(ref_paths):  # lists of str already: no re-validation/copy
            ref = read_lines(p, encoding, errors)
            if len(ref) != len(hyps):
                raise count_mismatch(hyp_path, len(hyps), p, len(ref))
            lists[f"ref_{k}"] = ref
        return cls(None, source=source_name(hyp_path), _lists=lists, _names=list(lists))

    @classmethod
    def from_systems(cls, systems: Dict[str, Sequence[str]], refs=None, **kw) -> "Corpus":
        """A long table: the hypotheses of every system, one after the other, each with the
        same K reference streams (the inverse of :meth:`by_system`)."""
        if not systems:
            raise CorpusError("no systems given")
        hyps: List[str] = []
        names: List[str] = []
        streams = None
        n = None
        for name, h in systems.items():
            h = as_text_list(h, f"system {name!r}")
            if n is None:
                n = len(h)
                if refs is not None:
                    streams = as_ref_streams(refs, n, "refs")
            elif len(h) != n:
                first = next(iter(systems))
                raise CorpusError(
                    f"system {name!r} has {len(h)} segments but system {first!r} has {n}")
            hyps += h
            names += [str(name)] * len(h)
        long_refs = None if streams is None else [s * len(systems) for s in streams]
        return cls.from_lists(hyps, long_refs, system=names, **kw)

    @classmethod
    def from_table(cls, table, hyp: str = "hyp", refs: Optional[Sequence[str]] = None, *,
                   system=None, doc=None, seg=None, source: str = "<table>") -> "Corpus":
        """From a pyarrow Table/RecordBatch, a pandas or polars DataFrame, or anything with the
        Arrow PyCapsule stream interface; column arguments as in :func:`read_table`."""
        import pyarrow as pa

        if isinstance(table, pa.RecordBatch):
            table = pa.Table.from_batches([table])
        elif not isinstance(table, pa.Table):
            if hasattr(table, "iloc"):  # pandas
                table = pa.Table.from_pandas(table, preserve_index=False)
            elif hasattr(table, "to_arrow"):
                table = table.to_arrow()
            else:
                table = pa.table(table)
        spec = _resolve(table.schema.names, source, hyp, refs, system, doc, seg)
        return cls(_normalise(table.select(spec.source_columns()), spec, source), source=source)

    @classmethod
    def _from_column_lists(cls, spec: _Spec, cols: List[list], source: str) -> "Corpus":
        lists = dict(zip(spec.target_names(), cols))
        return cls(None, source=source, _lists=lists, _names=spec.target_names())

    # ---- access ------------------------------------------------------------------------------
    def __len__(self) -> int:
        if "hyp" in self._lists:
            return len(self._lists["hyp"])
        return self._table.num_rows

    @property
    def columns(self) -> List[str]:
        return list(self._names)

    @property
    def n_refs(self) -> int:
        """K, the number of reference streams."""
        return sum(1 for c in self._names if c.startswith("ref_"))

    def column(self, name: str) -> list:
        """One column as a Python list (cached)."""
        if name not in self._names:
            raise CorpusError(f"{self.source}: no column {name!r} (have {', '.join(self._names)})")
        if name not in self._lists:
            self._lists[name] = self._table.column(name).to_pylist()
        return self._lists[name]

    def hyps(self) -> List[str]:
        """The N hypotheses, a new list of ``str``."""
        return list(self.column("hyp"))

    def ref_streams(self) -> List[List[Optional[str]]]:
        """K new lists of N ``str``-or-``None`` (``refs[k][i]``), what the metrics take."""
        return [list(self.column(f"ref_{k}")) for k in range(self.n_refs)]

    @property
    def table(self):
        """The pyarrow Table (built from the lists on first use)."""
        if self._table is None:
            import pyarrow as pa

            arrays = []
            for n in self._names:
                vals = self._lists[n]
                arrays.append(pa.array(vals) if n == "seg" else pa.array(vals, pa.string()))
            self._table = pa.Table.from_arrays(arrays, names=self._names)
        return self._table

    def to_pandas(self):
        return self.table.to_pandas()

    def systems(self) -> List[str]:
        """Distinct system names in order of first appearance ([] without a system column)."""
        if "system" not in self._names:
            return []
        return list(dict.fromkeys(self.column("system")))

    def by_system(self) -> Tuple[Dict[str, List[str]], List[List[Optional[str]]]]:
        """Split a long multi-system table into ``({system: hyps}, refs)`` with ONE shared set of
        K reference streams. Every system must have the same segments in the same order: the
        same count, the same references and (where present) the same ``doc``/``seg`` keys;
        otherwise :class:`CorpusError` names the system, the segment and what differs.
        Without a system column: ``({'': hyps}, refs)``."""
        if "system" not in self._names:
            return {"": self.hyps()}, self.ref_streams()
        sys_col = self.column("system")
        rows: Dict[str, List[int]] = {}
        for i, s in enumerate(sys_col):
            rows.setdefault(s, []).append(i)
        names = list(rows)
        hyp = self.column("hyp")
        keyed = [c for c in ("doc", "seg") if c in self._names] + \
                [f"ref_{k}" for k in range(self.n_refs)]
        cols = {c: self.column(c) for c in keyed}
        base = names[0]
        base_rows = rows[base]
        base_vals = {c: [cols[c][i] for i in base_rows] for c in keyed}
        out = {base: [hyp[i] for i in base_rows]}
        for name in names[1:]:
            r = rows[name]
            if len(r) != len(base_rows):
                raise CorpusError(
                    f"{self.source}: system {name!r} has {len(r)} segments but system {base!r} "
                    f"has {len(base_rows)}; every system must have the same segments")
            for c in keyed:
                vals = [cols[c][i] for i in r]
                if vals != base_vals[c]:
                    j = next(j for j, (a, b) in enumerate(zip(vals, base_vals[c])) if a != b)
                    raise CorpusError(
                        f"{self.source}: system {name!r} differs from system {base!r} at its "
                        f"segment {j + 1} (row {r[j] + 1}): {c} {vals[j]!r} != {base_vals[c][j]!r}; "
                        "every system must have the same segments in the same order")
            out[name] = [hyp[i] for i in r]
        refs = [base_vals[f"ref_{k}"] for k in range(self.n_refs)]
        return out, refs

    def __eq__(self, other) -> bool:
        if not isinstance(other, Corpus):
            return NotImplemented
        return self._names == other._names and all(
            self.column(c) == other.column(c) for c in self._names)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Corpus(n={len(self)}, refs={self.n_refs}, columns={self._names}, "
                f"source={self.source!r})")


# ==================================================================================================
# One entry point
# ==================================================================================================

def load_corpus(hyps, refs=None, *, hyp: str = "hyp", ref_columns: Optional[Sequence[str]] = None,
                system=None, doc=None, seg=None, fmt: Optional[str] = None,
                encoding: str = "utf-8", errors: str = "strict") -> Corpus:
    """A :class:`Corpus` from whatever the user has.

    * ``hyps`` a path (``str``/``PathLike``; ``-`` = stdin): a table file (format from ``fmt`` or
      the extension, columns ``hyp``/``ref_columns``/... as in :func:`read_table`) or a plain text
      file (one segment per line); then ``refs`` are K reference text files (a path or a list).
    * ``hyps`` a table (pyarrow Table/RecordBatch, pandas/polars DataFrame): named columns.
    * ``hyps`` a sequence (list, tuple, numpy, pandas Series, pyarrow Array): ``refs`` are K
      in-memory streams (``refs[k][i]``), or reference files given as ``PathLike`` objects.
    """
    if isinstance(hyps, (str, os.PathLike)):
        f = fmt or (guess_format(hyps) if hyps != "-" else "text")
        if f != "text":
            if refs is not None:
                raise CorpusError(
                    f"{source_name(hyps)} is a {f} table: name its reference columns with "
                    "ref_columns=[...] instead of passing refs")
            return read_table(hyps, hyp, ref_columns, f, system=system, doc=doc, seg=seg,
                              encoding=encoding, errors=errors)
        if refs is None:
            refs = []
        return Corpus.from_files(hyps, refs, encoding, errors)
    if is_tabular(hyps):
        if refs is not None:
            raise CorpusError("hyps is a table: name its reference columns with ref_columns=[...]")
        return Corpus.from_table(hyps, hyp, ref_columns, system=system, doc=doc, seg=seg)
    if isinstance(refs, os.PathLike) or (
            isinstance(refs, (list, tuple)) and refs
            and all(isinstance(r, os.PathLike) for r in refs)):
        paths = [refs] if isinstance(refs, os.PathLike) else list(refs)
        streams = [read_lines(p, encoding, errors) for p in paths]
        return Corpus.from_lists(hyps, streams, system=system, doc=doc, seg=seg,
                                 ref_sources=[source_name(p) for p in paths])
    return Corpus.from_lists(hyps, refs, system=system, doc=doc, seg=seg)
