"""Progress bars with one rule for every command.

The rule (:func:`progress_enabled`):

* ``enabled=True`` (``--progress``, ``verbose=True``): a bar, wherever stderr goes;
* ``enabled=False``: no bar;
* ``enabled=None`` (the default): a bar only when stderr is a terminal and the environment
  variable ``CI`` is not set to a true value (``true``, ``1``, ``yes``, ``on``): CI logs and files
  that stderr is redirected to never receive tqdm's carriage-return lines.

:func:`progress_bar` returns a ``tqdm`` bar on stderr (``leave=False``: it is erased when it
closes, so the report that follows is not interleaved with bars) or, when the rule says no or
tqdm is missing, a :class:`NullBar` with the same small interface (``update``, ``close``,
``set_description``, ``total``, context manager), so callers never test for None.
Move a bar per unit of real work (an encoder batch, a system), not per large chunk: a bar that
sits at 0 % for minutes says nothing.
"""
from __future__ import annotations

import os
import sys
from typing import Any, TextIO

__all__ = ["NullBar", "progress_bar", "progress_enabled"]

_TRUE = {"1", "true", "yes", "on"}


def progress_enabled(enabled: bool | None = None, stream: TextIO | None = None) -> bool:
    """True when a bar should be drawn: forced by ``enabled``, else when ``stream`` (default
    stderr) is a terminal and ``CI`` is not true."""
    if enabled is not None:
        return bool(enabled)
    if os.environ.get("CI", "").strip().lower() in _TRUE:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class NullBar:
    """A bar that draws nothing (the bar when progress is off)."""

    disable = True

    def __init__(self, total: float | None = None):
        self.total = total
        self.n: float = 0

    def update(self, n: float = 1) -> None:
        self.n += n

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> NullBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def progress_bar(total: float | None, desc: str, enabled: bool | None = None, unit: str = "it",
                 leave: bool = False) -> Any:
    """A ``tqdm`` bar on stderr of ``total`` ``unit``\\ s labelled ``desc`` when
    :func:`progress_enabled` (``enabled``) says so, else a :class:`NullBar`."""
    if not progress_enabled(enabled):
        return NullBar(total)
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is a dependency; a broken install only loses the bar
        return NullBar(total)
    return tqdm(total=total, desc=desc, unit=unit, leave=leave, file=sys.stderr, dynamic_ncols=True)
