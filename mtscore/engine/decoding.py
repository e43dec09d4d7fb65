"""Decoding bytes to text, and locating what cannot be decoded.

Every reader decodes through here so that invalid input gets the same one-line
:class:`CorpusError` everywhere: file (or ``<stdin>``), 1-based line, column (bytes for
ASCII-compatible encodings, characters otherwise), offset, the bad bytes, and the
``--encoding-errors replace`` hint. Locating an error is done on the error path only.
Imports only the standard library (``codecs``, inside the functions).
"""
from __future__ import annotations

from collections.abc import Iterable

from .corpus_error import CorpusError

__all__ = [
    "DECODE_BLOCK",
    "REPLACE_HINT",
    "LineCounter",
    "ascii_compatible",
    "check_codec",
    "check_head",
    "decode_error",
    "decode_lines",
    "decode_text",
    "display_encoding",
    "line_column",
    "sniff_wide",
    "split_lines",
]


REPLACE_HINT = "use --encoding-errors replace (errors='replace' in Python) to substitute"


def check_codec(encoding: str, errors: str) -> None:
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


def ascii_compatible(encoding: str) -> bool:
    """True when b'\\n' in the encoded stream is always a newline (UTF-8, Latin-x, cp125x, ...)."""
    import codecs

    name = codecs.lookup(encoding).name
    if name.startswith(("utf-16", "utf-32", "utf-7")):
        return False
    try:
        return "\n\t\r".encode(encoding) == b"\n\t\r"
    except Exception:  # pragma: no cover - exotic codecs
        return False


def display_encoding(encoding: str) -> str:
    import codecs

    name = codecs.lookup(encoding).name
    return {"utf-8": "UTF-8", "utf-8-sig": "UTF-8"}.get(name, encoding)


def line_column(prefix_chunks: Iterable[bytes | memoryview], encoding: str) -> tuple[int, int]:
    """(1-based line, 1-based column) of the byte just after ``prefix_chunks``.

    The column counts bytes for ASCII-compatible encodings, characters otherwise.
    """
    line, col = 1, 1
    if ascii_compatible(encoding):
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


#: (byte-order mark, what the file is, the codec that reads it), longest marks first
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 LE", "utf-32"), (b"\x00\x00\xfe\xff", "UTF-32 BE", "utf-32"),
              (b"\xff\xfe", "UTF-16 LE", "utf-16"), (b"\xfe\xff", "UTF-16 BE", "utf-16"))


def sniff_wide(head: bytes, encoding: str = "utf-8"):
    """``(what, why, codec)`` when the first bytes of a file read as ``encoding`` (an
    ASCII-compatible one: UTF-8, Latin-x, cp125x...) are those of a UTF-16/UTF-32 file: a
    UTF-16/32 byte-order mark, or ASCII characters alternating with NUL bytes; else None.
    Only ``head[:4]`` is looked at. For UTF-8 a wide byte-order mark alone decides (it is
    invalid UTF-8); other single-byte codecs could read it as text (``'ÿþ'``), so they also
    need the NUL bytes a wide ASCII character has."""
    head = bytes(head[:4])
    if len(head) < 2 or not ascii_compatible(encoding):
        return None
    utf8 = display_encoding(encoding) == "UTF-8"
    for bom, what, codec in _WIDE_BOMS:
        if head.startswith(bom):
            wide_ascii = len(head) == 4 and (head[3] == 0 if what == "UTF-16 LE" else
                                             head[2] == 0 if what == "UTF-16 BE" else True)
            if utf8 or wide_ascii:
                return what, f"it starts with a {what} byte-order mark", codec
            return None
    if len(head) == 4:
        z = (head[0] == 0, head[1] == 0, head[2] == 0, head[3] == 0)
        pattern = {(False, True, True, True): ("UTF-32 LE", "utf-32-le"),
                   (True, True, True, False): ("UTF-32 BE", "utf-32-be"),
                   (False, True, False, True): ("UTF-16 LE", "utf-16-le"),
                   (True, False, True, False): ("UTF-16 BE", "utf-16-be")}.get(z)
        if pattern:
            return pattern[0], "its first characters alternate with NUL bytes", pattern[1]
    return None


def check_head(head: bytes, source: str, encoding: str, how: str = "") -> None:
    """Raise :class:`CorpusError` when ``head`` (the first bytes of ``source``) shows a
    UTF-16/UTF-32 file that is about to be read as ``encoding`` (see :func:`sniff_wide`):
    read as UTF-8 such a file is a decoding error at best, and its b"\\n" count (line counts
    by a binary scan) is not its line count. ``how``: how to name the encoding to the user,
    ``{codec}`` is replaced (default: the ``--encoding`` option and the Python argument)."""
    found = sniff_wide(head, encoding)
    if found is None:
        return
    what, why, codec = found
    how = (how or "pass --encoding {codec} (encoding='{codec}' in Python)").format(codec=codec)
    raise CorpusError(
        f"{source}:1: the file looks {what}, not {display_encoding(encoding)} ({why}); convert it "
        f"to UTF-8 (iconv -f {_iconv_name(codec)} -t UTF-8) or {how}")


def _iconv_name(codec: str) -> str:
    """``utf-16`` -> ``UTF-16`` (iconv reads the byte-order mark), ``utf-16-le`` -> ``UTF-16LE``."""
    return codec.upper().replace("-LE", "LE").replace("-BE", "BE")


def decode_error(source: str, e: UnicodeDecodeError, offset: int, line: int, col: int,
                 encoding: str, head: bytes = b"") -> CorpusError:
    bad = bytes(e.object[e.start:e.end])[:4]
    what = "byte" if len(bad) == 1 else "bytes"
    hexes = " ".join(f"0x{b:02x}" for b in bad)
    hint = ""
    wide = sniff_wide(head, encoding)
    if head[:2] == b"\x1f\x8b":
        hint = "; the file looks gzip-compressed (name it *.gz)"
    elif wide is not None:
        hint = (f"; the file looks {wide[0]} ({wide[1]}): convert it to UTF-8 or pass "
                f"--encoding {wide[2]} (encoding='{wide[2]}' in Python)")
    return CorpusError(
        f"{source}:{line}: invalid {display_encoding(encoding)} ({what} {hexes} at column {col}, "
        f"offset {offset}){hint}; {REPLACE_HINT}")


def decode_text(data: bytes, source: str, encoding: str, errors: str) -> str:
    """Decode a whole buffer once; on failure, locate the line (error path only).

    Uses the codec's incremental decoder, as text-mode files do (it differs from
    ``bytes.decode`` for UTF-16/32 without a BOM)."""
    import codecs

    check_head(data[:4], source, encoding)
    try:
        return codecs.getincrementaldecoder(encoding)(errors).decode(data, final=True)
    except UnicodeDecodeError as e:
        line, col = line_column([memoryview(data)[:e.start]], encoding)
        raise decode_error(source, e, e.start, line, col, encoding, data[:4]) from None
    except UnicodeError as e:  # e.g. "UTF-16 stream does not start with BOM"
        raise CorpusError(f"{source}: cannot decode as {encoding} ({e})") from None


def _block_safe(encoding: str) -> bool:
    """Stateless codecs in which byte 0x0A is always '\n' and never part of a character:
    a buffer may be cut after any b'\n' and the pieces decoded separately."""
    import codecs

    name = codecs.lookup(encoding).name
    return name in ("utf-8", "ascii") or name.startswith(
        ("latin", "iso8859", "cp", "koi8", "mac-", "windows-"))


#: bytes decoded per piece by decode_lines (~64 KiB, cut after a newline); tests may shrink it
DECODE_BLOCK = 1 << 16


def decode_lines(data: bytes, source: str, encoding: str, errors: str,
                 rstrip: bool = False) -> list[str]:
    """``data`` decoded and split on '\n' (a final '\n' ends the last line, not a new one).

    For UTF-8 and other block-safe codecs the buffer is decoded in ~64 KiB pieces cut after a
    newline: ~30% faster than one big decode and no transient copy of the whole text (a 1 GB
    file would otherwise need a 1-4 GB str). Other codecs decode in one go.
    """
    if not _block_safe(encoding):
        lines = split_lines(decode_text(data, source, encoding, errors))
        return [x.rstrip() for x in lines] if rstrip else lines
    check_head(data[:4], source, encoding)
    out: list[str] = []
    n = len(data)
    mv = memoryview(data)
    s = 0
    while s < n:
        e = n
        if s + DECODE_BLOCK < n:
            e = data.rfind(b"\n", s, s + DECODE_BLOCK) + 1
            if e <= s:  # a line longer than the block
                e = data.find(b"\n", s + DECODE_BLOCK) + 1 or n
        try:
            text = str(mv[s:e], encoding, errors)
        except UnicodeDecodeError as err:
            pos = s + err.start
            line, col = line_column([mv[:pos]], encoding)
            raise decode_error(source, err, pos, line, col, encoding, data[:4]) from None
        lines = text.split("\n")
        if e < n or lines[-1] == "":
            lines.pop()  # the piece ends with '\n'
        out += [x.rstrip() for x in lines] if rstrip else lines
        s = e
    return out


def split_lines(text: str) -> list[str]:
    """Lines split on '\\n' only (``newline='\\n'``: a bare '\\r' stays inside its line)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class LineCounter:
    """Newlines and the offset of the last one in the bytes read so far, so that a decoding
    error on a stream that cannot be re-read (stdin) still names its line and column (bytes
    for ASCII-compatible encodings; other encodings get the offset's line from the same count)."""

    __slots__ = ("last_nl", "lines")

    def __init__(self) -> None:
        self.lines = 0
        self.last_nl = -1  # absolute offset of the last b"\n"

    def add(self, raw: bytes, start: int) -> None:
        nl = raw.count(b"\n")
        if nl:
            self.lines += nl
            self.last_nl = start + raw.rfind(b"\n")

    def position(self, raw: bytes, upto: int, start: int, encoding: str) -> tuple[int, int]:
        """(1-based line, 1-based column) of absolute offset ``start + upto``."""
        upto = max(0, upto)
        head = raw[:upto]
        nl = head.count(b"\n")
        last = start + head.rfind(b"\n") if nl else self.last_nl
        return self.lines + nl + 1, start + upto - last
