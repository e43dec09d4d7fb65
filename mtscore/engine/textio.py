"""Plain-text files and stdin, one segment per line, with sacrebleu's CLI reading semantics.

* whole files: :func:`read_lines` (each line ``rstrip()``'d; ``*.gz`` transparent; ``-`` = stdin),
  :func:`count_lines` (binary scan), :func:`read_tab_refs` (``--num-refs``: K tab-separated
  references per line), :func:`read_stdin_systems` (tab-separated system columns on stdin);
* streaming with bounded memory: :func:`iter_text_chunks` / :func:`iter_aligned_lines` (aligned
  blocks of several files, line-count mismatches named), :func:`iter_raw_line_blocks` (decoded
  lines of one file in ~``BLOCK_BYTES`` blocks, also used by the table readers).

Decoding and error location are :mod:`.decoding`'s. Imports only the standard library: reading
text never imports pyarrow.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from typing import NamedTuple, Union

from .corpus_error import CorpusError
from .decoding import (
    REPLACE_HINT,
    LineCounter,
    ascii_compatible,
    check_codec,
    check_head,
    decode_error,
    decode_lines,
    decode_text,
    display_encoding,
    line_column,
    split_lines,
)

__all__ = [
    "BLOCK_BYTES",
    "PathLike",
    "TextChunk",
    "count_lines",
    "count_mismatch",
    "iter_aligned_lines",
    "iter_raw_line_blocks",
    "iter_text_chunks",
    "open_binary",
    "read_bytes",
    "read_lines",
    "read_stdin_systems",
    "read_tab_refs",
    "rereadable",
    "source_name",
]

PathLike = Union[str, "os.PathLike[str]"]

#: raw bytes per streamed block (4 MiB); read at call time, so tests may shrink it
BLOCK_BYTES = 1 << 22


def rereadable(path) -> bool:
    """Whether ``path`` can be read twice (a regular file, links followed): not stdin, a FIFO,
    a device or a process substitution (``<(cat hyp)``, ``/dev/fd/N``), which are read once,
    their checks made while streaming."""
    if path == "-":
        return False
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def source_name(path) -> str:
    return "<stdin>" if path == "-" else os.fspath(path)


def open_binary(path):
    """A binary file object: ``-`` = stdin, ``*.gz`` decompressed transparently (like sacrebleu)."""
    if path == "-":
        return sys.stdin.buffer
    p = os.fspath(path)
    if p.endswith(".gz"):
        import gzip

        return gzip.open(p, "rb")
    return open(p, "rb")


def read_error(path, e: BaseException) -> CorpusError:
    """A read failure as one line naming the file: a truncated or corrupt ``.gz`` (gzip's
    EOFError / BadGzipFile / zlib.error name no file) or an OS error while reading."""
    why = str(e) or type(e).__name__
    if isinstance(e, EOFError):
        why = "the compressed file is truncated (it ends before gzip's end-of-stream marker)"
    elif type(e).__name__ in ("BadGzipFile", "error"):  # gzip.BadGzipFile, zlib.error
        why = f"not a valid gzip file ({why})"
    elif isinstance(e, OSError) and e.strerror:
        why = e.strerror
    return CorpusError(f"{source_name(path)}: cannot read: {why}")


#: what reading a (possibly gzip-compressed) stream raises for a bad file, besides OSError
def _read_failures():
    import zlib

    return (EOFError, OSError, zlib.error)


def read_block(f, size: int, path) -> bytes:
    """``f.read(size)`` with read failures turned into :func:`read_error`'s one line."""
    try:
        return f.read(size)
    except _read_failures() as e:
        raise read_error(path, e) from None


def read_bytes(path) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    f = open_binary(path)
    with f:
        return read_block(f, -1, path)


def read_lines(path: PathLike, encoding: str = "utf-8", errors: str = "strict") -> list[str]:
    """All lines of a text file, each ``rstrip()``'d, exactly like sacrebleu's CLI reads files.

    ``path``: a file, ``*.gz`` (decompressed transparently) or ``-`` for stdin. Lines are split on
    ``'\\n'`` only (``newline='\\n'``: a bare ``'\\r'`` stays inside its line, ``'\\r\\n'`` endings are
    removed by the rstrip). Returns a list of N ``str``. Invalid input in ``encoding`` raises
    :class:`CorpusError` naming the file, the 1-based line, the byte column and the offset
    (``errors='replace'`` substitutes U+FFFD instead).
    """
    check_codec(encoding, errors)
    source = source_name(path)
    return decode_lines(read_bytes(path), source, encoding, errors, rstrip=True)


def count_lines(path: PathLike) -> int:
    """Number of lines :func:`read_lines` would return, from a fast binary scan (no decoding;
    exact for ASCII-compatible encodings). Streams the file; ``*.gz`` is decompressed."""
    if path == "-":
        raise CorpusError("cannot count the lines of stdin without consuming it")
    n, last = 0, b"\n"
    with open_binary(path) as f:
        while True:
            block = read_block(f, BLOCK_BYTES, path)
            if not block:
                break
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def read_tab_refs(path: PathLike, num_refs: int, encoding: str = "utf-8",
                  errors: str = "strict") -> list[list[str]]:
    """K = ``num_refs`` reference streams from one file with tab-separated references per line
    (sacrebleu ``--num-refs``): each line is ``rstrip()``'d, then split on the first K-1 tabs.
    A line with fewer fields raises :class:`CorpusError` naming the line."""
    if num_refs < 1:
        raise CorpusError(f"num_refs must be >= 1, got {num_refs}")
    lines = read_lines(path, encoding, errors)
    if num_refs == 1:
        return [lines]
    streams: list[list[str]] = [[] for _ in range(num_refs)]
    for lineno, line in enumerate(lines, 1):
        fields = line.split("\t", num_refs - 1)
        if len(fields) != num_refs:
            raise CorpusError(
                f"{source_name(path)}:{lineno}: expected {num_refs} tab-separated references, "
                f"found {len(fields)}")
        for k, f in enumerate(fields):
            streams[k].append(f)
    return streams


def read_stdin_systems(stream=None, encoding: str = "utf-8", errors: str = "strict",
                       source: str = "<stdin>") -> list[list[str]]:
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
        check_codec(encoding, errors)
        data = decode_text(bytes(data), source, encoding, errors)
    if data == "":
        raise CorpusError(f"{source}: empty input (no lines)")
    # universal newlines, as io.TextIOWrapper(newline=None) reads them
    lines = split_lines(data.replace("\r\n", "\n").replace("\r", "\n"))
    first = lines[0].rstrip().split("\t")
    systems: list[list[str]] = [[f] for f in first]
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


def iter_raw_line_blocks(path, encoding: str, errors: str,
                         block_bytes: int | None = None) -> Iterator[list[str]]:
    """Decoded lines (not stripped) in blocks of about ``block_bytes``; memory is bounded by the
    block size plus the longest line. Files split on '\n' only (sacrebleu opens them with
    ``newline='\n'``); stdin (``path == '-'``) with universal newlines, as sacrebleu's
    ``TextIOWrapper`` over stdin reads it. Decoding errors name the line."""
    import codecs

    source = source_name(path)
    block_bytes = block_bytes or BLOCK_BYTES
    dec = codecs.getincrementaldecoder(encoding)(errors)
    universal = path == "-"
    once = not rereadable(path)  # error positions from the bytes counted so far
    pending = ""
    offset = 0  # bytes fed to the decoder so far
    seen = LineCounter()  # newlines in the bytes read so far (error positions on stdin)
    f = open_binary(path)
    try:
        head = b""
        while True:
            raw = read_block(f, block_bytes, path)
            if offset == 0:
                head = raw[:2]
                check_head(raw[:4], source, encoding)
            state = dec.getstate()
            try:
                text = dec.decode(raw, final=not raw)
            except UnicodeDecodeError as e:
                err_offset = offset - len(state[0]) + e.start
                if once:  # stdin or a pipe cannot be re-read: position from the bytes counted so far
                    line, col = seen.position(raw, err_offset - offset, offset, encoding)
                    raise decode_error(source, e, err_offset, line, col, encoding, head) from None
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


def _locate_stream_error(path, source, e, err_offset, encoding, head) -> CorpusError:
    if path == "-":  # cannot re-read stdin: report the offset only
        return CorpusError(
            f"{source}: invalid {display_encoding(encoding)} at offset {err_offset}; {REPLACE_HINT}")

    def prefix():
        left = err_offset
        with open_binary(path) as f:
            while left > 0:
                chunk = read_block(f, min(left, BLOCK_BYTES), path)
                if not chunk:
                    break
                left -= len(chunk)
                yield chunk

    line, col = line_column(prefix(), encoding)
    return decode_error(source, e, err_offset, line, col, encoding, head)


class TextChunk(NamedTuple):
    """One aligned chunk from :func:`iter_text_chunks`."""
    start: int                   #: 0-based index of the chunk's first segment
    hyps: list[str]              #: n hypotheses
    refs: list[list[str]]        #: K streams of n references


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
                       precount: bool = True) -> Iterator[tuple[int, list[list[str]]]]:
    """``(start, [lines of paths[0], lines of paths[1], ...])`` in aligned blocks of at most
    ``batch_size`` lines, each line ``rstrip()``'d (one path may be ``'-'``, stdin). Line counts
    must agree: the first path is the one the others are compared with (precounted by a binary
    scan when no path is stdin). See :func:`iter_text_chunks` for memory and errors."""
    if batch_size < 1:
        raise CorpusError(f"batch_size must be >= 1, got {batch_size}")
    check_codec(encoding, errors)
    paths = list(paths)
    if precount and all(rereadable(p) for p in paths) and ascii_compatible(encoding):
        for p in paths:  # a UTF-16 file's b"\n" count is not its line count: name it first
            with open_binary(p) as f:
                check_head(read_block(f, 4, p), source_name(p), encoding)
        counts = [count_lines(p) for p in paths]
        for p, c in zip(paths[1:], counts[1:]):
            if c != counts[0]:
                raise count_mismatch(paths[0], counts[0], p, c)
        if counts[0] == 0:
            raise CorpusError(f"{source_name(paths[0])}: empty input (no lines)")
    gens = [iter_raw_line_blocks(p, encoding, errors) for p in paths]
    bufs: list[list[str]] = [[] for _ in paths]
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
                k = next(i for i in range(1, len(paths)) if counts[i] != counts[0])
                raise count_mismatch(paths[0], counts[0], paths[k], counts[k])
            if start == 0:
                raise CorpusError(f"{source_name(paths[0])}: empty input (no lines)")
            return
        n = min(n, batch_size)
        chunk = [b[:n] for b in bufs]
        bufs = [b[n:] for b in bufs]
        yield start, chunk
        start += n


def count_mismatch(hyp, n_hyp, ref, n_ref) -> CorpusError:
    return CorpusError(
        f"line-count mismatch: {source_name(hyp)} has {n_hyp} lines but {source_name(ref)} has {n_ref} lines")
