"""Atomic file writes: the whole file appears at once or not at all (the errors contract: a
failed or interrupted run leaves no partial output). The one helper every output and cache
write uses. Imports nothing from the package."""
from __future__ import annotations

import errno as errno_
import os
from typing import IO, Callable, Optional, Union

PathLike = Union[str, "os.PathLike[str]"]


class OutputError(OSError):
    """A file could not be written. ``filename`` is the requested path (never the temporary
    file), ``strerror`` the reason; ``str()`` reads ``cannot write LABEL: reason``."""

    def __init__(self, code: Optional[int], reason: str, path: str, label: str):
        super().__init__(code, reason, path)
        self.label = label

    def __str__(self) -> str:
        return f"cannot write {self.label}: {self.strerror}"


def atomic_write(path: PathLike, write: Callable[[IO[bytes]], object], what: str = "") -> None:
    """Call ``write(f)`` on a temporary binary file beside ``path``, then rename it to ``path``
    (the same file system, so the rename is atomic; concurrent writers each use their own
    temporary file, the last rename wins). The file gets the usual permissions (0666 less the
    umask). Any failure removes the temporary file; an OSError becomes :class:`OutputError`
    naming ``path`` (and ``what``, e.g. the ``--output`` option)."""
    import tempfile  # here: it pulls in random/hashlib, ~5 ms a CLI run that writes no file need not pay

    path = os.fspath(path)
    label = f"{what} {path}" if what else path
    if os.path.isdir(path):
        raise OutputError(errno_.EISDIR, "is a folder, expected a file name", path, label)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as e:
        why = "its folder does not exist" if isinstance(e, FileNotFoundError) else (e.strerror or str(e))
        raise OutputError(e.errno, why, path, label) from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except OSError as e:
        raise OutputError(e.errno, e.strerror or str(e), path, label) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
