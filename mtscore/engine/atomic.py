"""Atomic file writes: the whole file appears at once or not at all (the errors contract: a
failed or interrupted run leaves no partial output). Imports nothing from the package."""
from __future__ import annotations

import os
import tempfile
from typing import IO, Callable, Union

PathLike = Union[str, "os.PathLike[str]"]


class OutputError(OSError):
    """An output file could not be written; the message names the requested path."""

    def __init__(self, message: str, errno: "int | None" = None):
        super().__init__(message)
        self.errno = errno


def atomic_write(path: PathLike, write: Callable[[IO[bytes]], object], what: str = "") -> None:
    """Call ``write(f)`` on a temporary binary file beside ``path``, then rename it to ``path``
    (the same file system, so the rename is atomic; concurrent writers each use their own
    temporary file, the last rename wins). Any failure removes the temporary file; an OSError
    is re-raised naming ``path`` (and ``what``, e.g. the ``--output`` option), never the
    temporary name."""
    path = os.fspath(path)
    label = f"{what} {path}" if what else path
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise OutputError(f"cannot write {label}: it is a directory")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as e:
        raise OutputError(f"cannot write {label}: {e.strerror} ({directory})", e.errno) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except OSError as e:
        raise OutputError(f"cannot write {label}: {e.strerror}", e.errno) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
