"""Moses n-best files (``id ||| hypothesis ||| features ||| score``): :func:`read_moses_nbest`
and :func:`parse_moses_nbest` into :class:`NBestEntry` lists, one per source; malformed lines
raise :class:`NBestFormatError` naming ``file:line``."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from ...errors import UserError

__all__ = ["NBestEntry", "NBestFormatError", "parse_moses_nbest", "read_moses_nbest"]


class NBestEntry(NamedTuple):
    """One line of a Moses n-best list: ``id ||| hypothesis ||| features ||| score``."""

    id: int
    hypothesis: str
    features: str
    score: float
    line: int


class NBestFormatError(UserError, ValueError):
    """A malformed line of a Moses n-best file (the message names file:line)."""


def parse_moses_nbest(lines: Iterable[str], name: str = "<n-best>") -> list[list[NBestEntry]]:
    """Moses n-best lines -> one list of entries per source id (0 .. max id; a source with no
    line gets an empty list). Lines of one id must be contiguous, ids ascending."""
    out: list[list[NBestEntry]] = []
    last = -1
    for no, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split(" ||| ")
        if len(fields) < 4:
            raise NBestFormatError(
                f"{name}:{no}: expected 'id ||| hypothesis ||| features ||| score' "
                f"(fields separated by ' ||| '), found {len(fields)} field(s)")
        sid, hyp, feats, score = fields[0].strip(), fields[1], fields[2].strip(), fields[3].strip()
        try:
            i = int(sid)
        except ValueError:
            raise NBestFormatError(f"{name}:{no}: sentence id {sid!r} is not an integer") from None
        if i < 0:
            raise NBestFormatError(f"{name}:{no}: sentence id {i} is negative")
        try:
            sc = float(score)
        except ValueError:
            raise NBestFormatError(f"{name}:{no}: total score {score!r} is not a number") from None
        if i < last:
            raise NBestFormatError(f"{name}:{no}: sentence id {i} after id {last}: the entries of "
                                   "a sentence must be contiguous, ids ascending")
        while len(out) <= i:
            out.append([])
        out[i].append(NBestEntry(i, hyp.strip(), feats, sc, no))
        last = i
    return out


def read_moses_nbest(path: str | Path, encoding: str = "utf-8") -> list[list[NBestEntry]]:
    """Read a Moses n-best file (``id ||| hypothesis ||| features ||| score``; .gz ok): one list
    of :class:`NBestEntry` per source. Malformed lines raise :class:`NBestFormatError` (a
    ValueError) naming ``file:line``; invalid UTF-8 likewise."""
    import gzip

    p = Path(path)
    opener: Any = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rb") as f:
        data = f.read()
    lines = []
    for no, raw in enumerate(data.split(b"\n"), 1):  # decoded per line: errors name their line
        try:
            lines.append(raw.decode(encoding))
        except UnicodeDecodeError as e:
            raise NBestFormatError(f"{p}:{no}: invalid {encoding}: {e.reason}") from None
    return parse_moses_nbest(lines, str(p))
