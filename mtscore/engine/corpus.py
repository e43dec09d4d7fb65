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
from typing import (Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple,
                    Union)

__all__ = [
    "CorpusError", "Corpus", "TextChunk", "TABLE_FORMATS",
    "as_text_list", "as_ref_streams",
    "read_lines", "count_lines", "read_tab_refs", "read_stdin_systems", "iter_text_chunks",
    "guess_format", "read_table", "iter_batches", "batch_lists", "load_corpus",
]

PathLike = Union[str, "os.PathLike[str]"]

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
_BLOCK_BYTES = 1 << 22  # 4 MiB of raw text per streamed block
_REPLACE_HINT = "use --encoding-errors replace (errors='replace' in Python) to substitute"


class CorpusError(ValueError):
    """Bad corpus input (mismatched lengths, invalid encoding, missing column, ...).

    The message is one line naming the file (or argument), the line/row where known, and the fix.
    """


# ==================================================================================================
# In-memory coercion (called by every metric; must stay cheap and import nothing heavy)
# ==================================================================================================

def _is_tabular(x) -> bool:
    """pandas/polars DataFrame, pyarrow Table/RecordBatch (things with named columns)."""
    return hasattr(x, "column_names") or (hasattr(x, "columns") and not hasattr(x, "dtype")
                                          and not isinstance(x, (list, tuple)))


def _table_columns(x) -> list:
    """The columns of a tabular object, in order, as array-likes."""
    if hasattr(x, "column_names") and hasattr(x, "column"):  # pyarrow Table / RecordBatch
        return [x.column(i) for i in range(x.num_columns)]
    if hasattr(x, "get_columns"):  # polars
        return list(x.get_columns())
    return [x[c] for c in x.columns]  # pandas


def _to_list(x, what: str) -> list:
    """A fresh Python list from a 1-D sequence (list, tuple, numpy, pandas, pyarrow, iterable)."""
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, str):
        raise TypeError(f"{what} should be a sequence of strings, not a single string.")
    if isinstance(x, (bytes, bytearray)):
        raise TypeError(f"{what} should be a sequence of strings, not bytes.")
    if x is None:
        raise TypeError(f"{what} is None; expected a sequence of strings.")
    if _is_tabular(x):
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


def _is_missing(v) -> bool:
    """None, float NaN, pandas NA/NaT (how missing values arrive from numpy/pandas)."""
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


def as_text_list(x, what: str, allow_none: bool = False) -> List[Optional[str]]:
    """``x`` as a fresh ``list`` of ``str`` (length N), or ``str``/``None`` if ``allow_none``.

    Accepts list, tuple, numpy arrays (``<U`` or object dtype), pandas Series, pyarrow
    Array/ChunkedArray and other iterables. ``str`` subclasses (``numpy.str_``) become ``str``;
    with ``allow_none`` missing values (None, NaN, pandas NA, Arrow null) become ``None``.
    Raises ``TypeError`` naming ``what`` and the first bad element.
    """
    from ..kernels._lists import first_non_str

    out = _to_list(x, what)
    if first_non_str(out, allow_none) < 0:  # fast path, one C loop
        return out
    for i, s in enumerate(out):
        if type(s) is str:
            continue
        if isinstance(s, str):
            out[i] = str(s)
        elif _is_missing(s):
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
    if _is_tabular(refs):  # one stream per column
        return _table_columns(refs)
    if isinstance(refs, (list, tuple)):
        return list(refs)
    if getattr(refs, "ndim", None) == 2 and hasattr(refs, "tolist"):  # numpy (K, N)
        return refs.tolist()
    if hasattr(refs, "to_pylist") and not hasattr(refs, "ndim"):  # pyarrow ListArray etc.
        return refs.to_pylist()
    return _to_list(refs, what)


def as_ref_streams(refs, n: Optional[int], what: str) -> List[List[Optional[str]]]:
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


# ==================================================================================================
# Raw bytes, decoding and error location
# ==================================================================================================

def _name(path) -> str:
    return "<stdin>" if path == "-" else os.fspath(path)


def _check_codec(encoding: str, errors: str) -> None:
    import codecs

    try:
        codecs.lookup(encoding)
    except LookupError:
        raise CorpusError(f"unknown encoding {encoding!r}") from None
    try:
        codecs.lookup_error(errors)
    except LookupError:
        raise CorpusError(
            f"unknown encoding error handler {errors!r} (use 'strict', 'replace', ...)") from None


def _open_binary(path):
    """A binary file object: ``-`` = stdin, ``*.gz`` decompressed transparently (like sacrebleu)."""
    if path == "-":
        return sys.stdin.buffer
    p = os.fspath(path)
    if p.endswith(".gz"):
        import gzip

        return gzip.open(p, "rb")
    return open(p, "rb")


def _read_bytes(path) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    f = _open_binary(path)
    try:
        with f:
            return f.read()
    except (EOFError, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise CorpusError(f"{_name(path)}: cannot read ({e})") from None


def _ascii_compatible(encoding: str) -> bool:
    """True when b'\\n' in the encoded stream is always a newline (UTF-8, Latin-x, cp125x, ...)."""
    import codecs

    name = codecs.lookup(encoding).name
    if name.startswith(("utf-16", "utf-32", "utf-7")):
        return False
    try:
        return "\n\t\r".encode(encoding) == b"\n\t\r"
    except Exception:  # pragma: no cover - exotic codecs
        return False


def _display_encoding(encoding: str) -> str:
    import codecs

    name = codecs.lookup(encoding).name
    return {"utf-8": "UTF-8", "utf-8-sig": "UTF-8"}.get(name, encoding)


def _position(prefix_chunks: Iterable[bytes], encoding: str) -> Tuple[int, int]:
    """(1-based line, 1-based column) of the byte just after ``prefix_chunks``.

    The column counts bytes for ASCII-compatible encodings, characters otherwise.
    """
    line, col = 1, 1
    if _ascii_compatible(encoding):
        for chunk in prefix_chunks:
            chunk = bytes(chunk)
            nl = chunk.count(b"\n")
            if nl:
                line += nl
                col = len(chunk) - chunk.rfind(b"\n")
            else:
                col += len(chunk)
        return line, col
    import codecs

    dec = codecs.getincrementaldecoder(encoding)("replace")
    for chunk in prefix_chunks:
        text = dec.decode(bytes(chunk))
        nl = text.count("\n")
        if nl:
            line += nl
            col = len(text) - text.rfind("\n")
        else:
            col += len(text)
    return line, col


def _decode_error(source: str, e: UnicodeDecodeError, offset: int, line: int, col: int,
                  encoding: str, head: bytes = b"") -> CorpusError:
    bad = bytes(e.object[e.start:e.end])[:4]
    what = "byte" if len(bad) == 1 else "bytes"
    hexes = " ".join(f"0x{b:02x}" for b in bad)
    hint = ""
    if head[:2] == b"\x1f\x8b":
        hint = "; the file looks gzip-compressed (name it *.gz)"
    return CorpusError(
        f"{source}:{line}: invalid {_display_encoding(encoding)} ({what} {hexes} at column {col}, "
        f"offset {offset}){hint}; {_REPLACE_HINT}")


def _decode(data: bytes, source: str, encoding: str, errors: str) -> str:
    """Decode a whole buffer once; on failure, locate the line (error path only).

    Uses the codec's incremental decoder, as text-mode files do (it differs from
    ``bytes.decode`` for UTF-16/32 without a BOM)."""
    import codecs

    try:
        return codecs.getincrementaldecoder(encoding)(errors).decode(data, final=True)
    except UnicodeDecodeError as e:
        line, col = _position([memoryview(data)[:e.start]], encoding)
        raise _decode_error(source, e, e.start, line, col, encoding, data[:2]) from None
    except UnicodeError as e:  # e.g. "UTF-16 stream does not start with BOM"
        raise CorpusError(f"{source}: cannot decode as {encoding} ({e})") from None


def _block_safe(encoding: str) -> bool:
    """Stateless codecs in which byte 0x0A is always '\n' and never part of a character:
    a buffer may be cut after any b'\n' and the pieces decoded separately."""
    import codecs

    name = codecs.lookup(encoding).name
    return name in ("utf-8", "ascii") or name.startswith(
        ("latin", "iso8859", "cp", "koi8", "mac-", "windows-"))


_DECODE_BLOCK = 1 << 16


def _decode_lines(data: bytes, source: str, encoding: str, errors: str,
                  rstrip: bool = False) -> List[str]:
    """``data`` decoded and split on '\n' (a final '\n' ends the last line, not a new one).

    For UTF-8 and other block-safe codecs the buffer is decoded in ~64 KiB pieces cut after a
    newline: ~30% faster than one big decode and no transient copy of the whole text (a 1 GB
    file would otherwise need a 1-4 GB str). Other codecs decode in one go.
    """
    if not _block_safe(encoding):
        lines = _split_lines(_decode(data, source, encoding, errors))
        return [x.rstrip() for x in lines] if rstrip else lines
    out: List[str] = []
    n = len(data)
    mv = memoryview(data)
    s = 0
    while s < n:
        e = n
        if s + _DECODE_BLOCK < n:
            e = data.rfind(b"\n", s, s + _DECODE_BLOCK) + 1
            if e <= s:  # a line longer than the block
                e = data.find(b"\n", s + _DECODE_BLOCK) + 1 or n
        try:
            text = str(mv[s:e], encoding, errors)
        except UnicodeDecodeError as err:
            pos = s + err.start
            line, col = _position([mv[:pos]], encoding)
            raise _decode_error(source, err, pos, line, col, encoding, data[:2]) from None
        lines = text.split("\n")
        if e < n or lines[-1] == "":
            lines.pop()  # the piece ends with '\n'
        out += [x.rstrip() for x in lines] if rstrip else lines
        s = e
    return out


def _split_lines(text: str) -> List[str]:
    """Lines split on '\\n' only (``newline='\\n'``: a bare '\\r' stays inside its line)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


# ==================================================================================================
# Plain text files (sacrebleu CLI semantics)
# ==================================================================================================

def read_lines(path: PathLike, encoding: str = "utf-8", errors: str = "strict") -> List[str]:
    """All lines of a text file, each ``rstrip()``'d, exactly like sacrebleu's CLI reads files.

    ``path``: a file, ``*.gz`` (decompressed transparently) or ``-`` for stdin. Lines are split on
    ``'\\n'`` only (``newline='\\n'``: a bare ``'\\r'`` stays inside its line, ``'\\r\\n'`` endings are
    removed by the rstrip). Returns a list of N ``str``. Invalid input in ``encoding`` raises
    :class:`CorpusError` naming the file, the 1-based line, the byte column and the offset
    (``errors='replace'`` substitutes U+FFFD instead).
    """
    _check_codec(encoding, errors)
    source = _name(path)
    return _decode_lines(_read_bytes(path), source, encoding, errors, rstrip=True)


def count_lines(path: PathLike) -> int:
    """Number of lines :func:`read_lines` would return, from a fast binary scan (no decoding;
    exact for ASCII-compatible encodings). Streams the file; ``*.gz`` is decompressed."""
    if path == "-":
        raise CorpusError("cannot count the lines of stdin without consuming it")
    n, last = 0, b"\n"
    with _open_binary(path) as f:
        while True:
            block = f.read(_BLOCK_BYTES)
            if not block:
                break
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def read_tab_refs(path: PathLike, num_refs: int, encoding: str = "utf-8",
                  errors: str = "strict") -> List[List[str]]:
    """K = ``num_refs`` reference streams from one file with tab-separated references per line
    (sacrebleu ``--num-refs``): each line is ``rstrip()``'d, then split on the first K-1 tabs.
    A line with fewer fields raises :class:`CorpusError` naming the line."""
    if num_refs < 1:
        raise CorpusError(f"num_refs must be >= 1, got {num_refs}")
    lines = read_lines(path, encoding, errors)
    if num_refs == 1:
        return [lines]
    streams: List[List[str]] = [[] for _ in range(num_refs)]
    for lineno, line in enumerate(lines, 1):
        fields = line.split("\t", num_refs - 1)
        if len(fields) != num_refs:
            raise CorpusError(
                f"{_name(path)}:{lineno}: expected {num_refs} tab-separated references, "
                f"found {len(fields)}")
        for k, f in enumerate(fields):
            streams[k].append(f)
    return streams


def read_stdin_systems(stream=None, encoding: str = "utf-8", errors: str = "strict",
                       source: str = "<stdin>") -> List[List[str]]:
    """System outputs from tab-separated columns on stdin, with sacrebleu's CLI semantics.

    ``stream``: a binary or text file object (default ``sys.stdin.buffer``). Lines are split with
    universal newlines (``'\\r'``, ``'\\r\\n'`` and ``'\\n'`` all end a line, as sacrebleu's
    ``TextIOWrapper`` over stdin does). The first line's tab count fixes the number of systems S;
    every line is ``rstrip()``'d and split on tabs; fields of lines 2.. are ``rstrip()``'d too
    (sacrebleu leaves the first line's fields as they are, and so do we). Returns S lists of N
    ``str``. A line with a different field count raises :class:`CorpusError` naming the line.
    """
    if stream is None:
        stream = sys.stdin.buffer
    data = stream.read()
    if isinstance(data, (bytes, bytearray)):
        _check_codec(encoding, errors)
        data = _decode(bytes(data), source, encoding, errors)
    if data == "":
        raise CorpusError(f"{source}: empty input (no lines)")
    # universal newlines, as io.TextIOWrapper(newline=None) reads them
    lines = _split_lines(data.replace("\r\n", "\n").replace("\r", "\n"))
    first = lines[0].rstrip().split("\t")
    systems: List[List[str]] = [[f] for f in first]
    n_sys = len(first)
    for lineno, line in enumerate(lines[1:], 2):
        fields = line.rstrip().split("\t")
        if len(fields) != n_sys:
            raise CorpusError(
                f"{source}:{lineno}: found {len(fields)} tab-separated fields but the first line "
                f"has {n_sys} (one column per system)")
        for s, f in zip(systems, fields):
            s.append(f.rstrip())
    return systems


def _iter_raw_line_blocks(path, encoding: str, errors: str,
                          block_bytes: Optional[int] = None) -> Iterator[List[str]]:
    """Decoded lines (not stripped) in blocks of about ``block_bytes``; memory is bounded by the
    block size plus the longest line. Files split on '\n' only (sacrebleu opens them with
    ``newline='\n'``); stdin (``path == '-'``) with universal newlines, as sacrebleu's
    ``TextIOWrapper`` over stdin reads it. Decoding errors name the line."""
    import codecs

    source = _name(path)
    block_bytes = block_bytes or _BLOCK_BYTES
    dec = codecs.getincrementaldecoder(encoding)(errors)
    universal = path == "-"
    pending = ""
    offset = 0  # bytes fed to the decoder so far
    seen = _LineCounter()  # newlines in the bytes read so far (error positions on stdin)
    f = _open_binary(path)
    try:
        head = b""
        while True:
            raw = f.read(block_bytes)
            if offset == 0:
                head = raw[:2]
            state = dec.getstate()
            try:
                text = dec.decode(raw, final=not raw)
            except UnicodeDecodeError as e:
                err_offset = offset - len(state[0]) + e.start
                if universal:  # stdin cannot be re-read: position from the bytes counted so far
                    line, col = seen.position(raw, err_offset - offset, offset, encoding)
                    raise _decode_error(source, e, err_offset, line, col, encoding, head) from None
                raise _locate_stream_error(path, source, e, err_offset, encoding, head) from None
            except UnicodeError as e:
                raise CorpusError(f"{source}: cannot decode as {encoding} ({e})") from None
            seen.add(raw, offset)
            offset += len(raw)
            if universal:
                text = (pending + text).replace("\r\n", "\n")
                pending = ""
                if text.endswith("\r") and raw:  # may be the first half of a CRLF
                    text, pending = text[:-1], "\r"
                text = text.replace("\r", "\n")
            if text:
                lines = (pending + text).split("\n")
                pending = lines.pop()
                if lines:
                    yield lines
            if not raw:
                break
    finally:
        if path != "-":
            f.close()
    if pending:
        yield [pending]


class _LineCounter:
    """Newlines and the offset of the last one in the bytes read so far, so that a decoding
    error on a stream that cannot be re-read (stdin) still names its line and column (bytes
    for ASCII-compatible encodings; other encodings get the offset's line from the same count)."""

    __slots__ = ("lines", "last_nl")

    def __init__(self) -> None:
        self.lines = 0
        self.last_nl = -1  # absolute offset of the last b"\n"

    def add(self, raw: bytes, start: int) -> None:
        nl = raw.count(b"\n")
        if nl:
            self.lines += nl
            self.last_nl = start + raw.rfind(b"\n")

    def position(self, raw: bytes, upto: int, start: int, encoding: str) -> Tuple[int, int]:
        """(1-based line, 1-based column) of absolute offset ``start + upto``."""
        upto = max(0, upto)
        head = raw[:upto]
        nl = head.count(b"\n")
        last = start + head.rfind(b"\n") if nl else self.last_nl
        return self.lines + nl + 1, start + upto - last


def _locate_stream_error(path, source, e, err_offset, encoding, head) -> CorpusError:
    if path == "-":  # cannot re-read stdin: report the offset only
        return CorpusError(
            f"{source}: invalid {_display_encoding(encoding)} at offset {err_offset}; {_REPLACE_HINT}")

    def prefix():
        left = err_offset
        with _open_binary(path) as f:
            while left > 0:
                chunk = f.read(min(left, _BLOCK_BYTES))
                if not chunk:
                    break
                left -= len(chunk)
                yield chunk

    line, col = _position(prefix(), encoding)
    return _decode_error(source, e, err_offset, line, col, encoding, head)


class TextChunk(NamedTuple):
    """One aligned chunk from :func:`iter_text_chunks`."""
    start: int                   #: 0-based index of the chunk's first segment
    hyps: List[str]              #: n hypotheses
    refs: List[List[str]]        #: K streams of n references


def iter_text_chunks(hyp_path: PathLike, ref_paths: Sequence[PathLike] = (),
                     batch_size: int = 65536, encoding: str = "utf-8", errors: str = "strict",
                     precount: bool = True) -> Iterator[TextChunk]:
    """Stream aligned chunks of at most ``batch_size`` segments from a hypothesis file and K
    reference files (read like :func:`read_lines`: ``rstrip()``'d, ``.gz`` transparent).

    Memory is bounded by a few 4 MiB blocks per file plus ``batch_size`` segments.
    With ``precount`` (default) the line counts are compared by a fast binary scan before the
    first chunk is yielded, so a mismatch fails before any work; the mismatch is also detected
    while streaming (stdin, ``precount=False``). Either way :class:`CorpusError` names both files
    and their line counts.
    """
    for start, blocks in iter_aligned_lines([hyp_path, *ref_paths], batch_size, encoding, errors,
                                            precount):
        yield TextChunk(start, blocks[0], blocks[1:])


def iter_aligned_lines(paths: Sequence[PathLike], batch_size: int = 65536,
                       encoding: str = "utf-8", errors: str = "strict",
                       precount: bool = True) -> Iterator[Tuple[int, List[List[str]]]]:
    """``(start, [lines of paths[0], lines of paths[1], ...])`` in aligned blocks of at most
    ``batch_size`` lines, each line ``rstrip()``'d (one path may be ``'-'``, stdin). Line counts
    must agree: the first path is the one the others are compared with (precounted by a binary
    scan when no path is stdin). See :func:`iter_text_chunks` for memory and errors."""
    if batch_size < 1:
        raise CorpusError(f"batch_size must be >= 1, got {batch_size}")
    _check_codec(encoding, errors)
    paths = list(paths)
    if precount and "-" not in paths and _ascii_compatible(encoding):
        counts = [count_lines(p) for p in paths]
        for p, c in zip(paths[1:], counts[1:]):
            if c != counts[0]:
                raise _count_mismatch(paths[0], counts[0], p, c)
        if counts[0] == 0:
            raise CorpusError(f"{_name(paths[0])}: empty input (no lines)")
    gens = [_iter_raw_line_blocks(p, encoding, errors) for p in paths]
    bufs: List[List[str]] = [[] for _ in paths]
    done = [False] * len(paths)
    start = 0
    while True:
        for i, g in enumerate(gens):
            while not done[i] and len(bufs[i]) < batch_size:
                block = next(g, None)
                if block is None:
                    done[i] = True
                else:
                    bufs[i].extend(s.rstrip() for s in block)
        n = min(len(b) for b in bufs)
        if n == 0:
            if any(bufs):  # some file still has lines: count all of them for the message
                counts = [start + len(b) + sum(len(blk) for blk in g) for b, g in zip(bufs, gens)]
                p = next(i for i in range(1, len(paths)) if counts[i] != counts[0])
                raise _count_mismatch(paths[0], counts[0], paths[p], counts[p])
            if start == 0:
                raise CorpusError(f"{_name(paths[0])}: empty input (no lines)")
            return
        n = min(n, batch_size)
        chunk = [b[:n] for b in bufs]
        bufs = [b[n:] for b in bufs]
        yield start, chunk
        start += n


def _count_mismatch(hyp, n_hyp, ref, n_ref) -> CorpusError:
    return CorpusError(
        f"line-count mismatch: {_name(hyp)} has {n_hyp} lines but {_name(ref)} has {n_ref} lines")


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
                f"{_name(path)}: cannot tell the table format from the extension; pass fmt= one "
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
    source = _name(path)
    _check_codec(encoding, errors)
    lines = _decode_lines(_read_bytes(path), source, encoding, errors)
    if not lines:
        raise CorpusError(f"{source}: empty file (no header line)")
    header = _tsv_header(lines[0], source)
    spec = _resolve(header, source, *spec_args)
    idx = [header.index(c) for c in spec.source_columns()]
    return spec, _tsv_columns(lines[1:], len(header), idx, 2, source)


def _iter_tsv_lists(path, spec_args, encoding, errors,
                    batch_size) -> Iterator[Tuple[_Spec, List[List[str]]]]:
    source = _name(path)
    header, spec, idx = None, None, None
    lineno = 1
    for block in _iter_raw_line_blocks(path, encoding, errors):
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

    with _open_binary(path) as f:
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

    source = _name(path)
    _check_codec(encoding, errors)
    first = None if path == "-" else _jsonl_first_object(path, source)
    spec = None if first is None else _resolve(list(first), source, *spec_args)
    lineno = 1
    for block in _iter_raw_line_blocks(path, encoding, errors, block_bytes):
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
            raise CorpusError(f"{_name(path)}: not an Arrow IPC/Feather file ({e})") from None


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
    source = _name(path)
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
    with _open_binary(path) as f:
        first = f.readline().decode("utf-8", "replace")
    if not first.strip():
        raise CorpusError(f"{source}: empty file (no header line)")
    return next(csv.reader(io.StringIO(first)))


def _csv_error(path, source, err, encoding, errors) -> CorpusError:
    """Name the line of an encoding error (pyarrow.csv only says "invalid UTF8")."""
    for _ in _iter_raw_line_blocks(path, encoding, errors):  # raises a located CorpusError
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
    source = _name(path)
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
        _check_codec(encoding, errors)
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
                    raise _count_mismatch(hyp_source, n, s, len(r))
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
            vals = _to_list(col, name)
            if len(vals) != n:
                raise CorpusError(f"{name} has {len(vals)} values but there are {n} hypotheses")
            if name != "seg":
                vals = [None if _is_missing(v) else v if type(v) is str else str(v)
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
            raise CorpusError(f"{_name(hyp_path)}: empty input (no lines)")
        lists: Dict[str, list] = {"hyp": hyps}
        for k, p in enumerate(ref_paths):  # lists of str already: no re-validation/copy
            ref = read_lines(p, encoding, errors)
            if len(ref) != len(hyps):
                raise _count_mismatch(hyp_path, len(hyps), p, len(ref))
            lists[f"ref_{k}"] = ref
        return cls(None, source=_name(hyp_path), _lists=lists, _names=list(lists))

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
                    f"{_name(hyps)} is a {f} table: name its reference columns with "
                    "ref_columns=[...] instead of passing refs")
            return read_table(hyps, hyp, ref_columns, f, system=system, doc=doc, seg=seg,
                              encoding=encoding, errors=errors)
        if refs is None:
            refs = []
        return Corpus.from_files(hyps, refs, encoding, errors)
    if _is_tabular(hyps):
        if refs is not None:
            raise CorpusError("hyps is a table: name its reference columns with ref_columns=[...]")
        return Corpus.from_table(hyps, hyp, ref_columns, system=system, doc=doc, seg=seg)
    if isinstance(refs, os.PathLike) or (
            isinstance(refs, (list, tuple)) and refs
            and all(isinstance(r, os.PathLike) for r in refs)):
        paths = [refs] if isinstance(refs, os.PathLike) else list(refs)
        streams = [read_lines(p, encoding, errors) for p in paths]
        return Corpus.from_lists(hyps, streams, system=system, doc=doc, seg=seg,
                                 ref_sources=[_name(p) for p in paths])
    return Corpus.from_lists(hyps, refs, system=system, doc=doc, seg=seg)
