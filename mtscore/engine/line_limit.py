"""The longest line a metric accepts, checked when its input is coerced (before any work).

A metric's memory grows with its longest line: the n-gram tables of one line hold up to
``order`` entries per token (BLEU) or per character (chrF: six character orders, tens of bytes
each), so a single line of tens of millions of characters whose n-grams do not repeat needs
gigabytes. Such a line is almost always a broken file (a missing newline conversion, a binary
file), so it is refused up front with a one-line error naming it and the limit, instead of a
MemoryError after minutes. ``Metric.max_line_chars`` (per metric object; 0 or None: no limit)
raises or lifts the limit; the command line's ``--max-line-chars`` sets it.
"""
from __future__ import annotations

from collections.abc import Sequence

from .corpus_error import CorpusError

__all__ = ["MAX_LINE_CHARS", "LineTooLongError", "check_line_lengths"]

#: default limit, in characters (code points): ~100,000 times a long MT segment; a line this
#: long costs chrF ~0.5-1.5 GB where its n-grams do not repeat
MAX_LINE_CHARS = 10_000_000


class LineTooLongError(CorpusError):
    """A line longer than the metric's ``max_line_chars``."""


def check_line_lengths(texts: Sequence[str | None], what: str,
                       limit: int | None = MAX_LINE_CHARS) -> None:
    """Raise :class:`LineTooLongError` (a ``ValueError``) naming the first line of ``texts``
    (str or None items) longer than ``limit`` characters; ``limit`` 0 or None: no check.
    One C-level pass (``max(map(len, texts))``) when every line is within the limit."""
    if not limit or limit < 0:
        return
    try:
        longest = max(map(len, texts), default=0)  # type: ignore[arg-type]  # None: below
    except TypeError:  # None among the references
        longest = max((len(t) for t in texts if t is not None), default=0)
    if longest <= limit:
        return
    i, line = next((i, t) for i, t in enumerate(texts) if t is not None and len(t) > limit)
    raise LineTooLongError(
        f"{what}: line {i + 1} has {len(line):,} characters, more than the limit of "
        f"{limit:,} (max_line_chars; on the command line --max-line-chars N, 0 = no limit).")
