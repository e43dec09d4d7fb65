"""Writing output files without ever destroying what should not be destroyed (the errors
contract: a failed or interrupted run leaves no partial output, and no output replaces a file it
should not). The one helper every output and cache write uses. Imports nothing from the package
but :mod:`mtscore.errors` (which imports nothing).

* A regular file (or a new name) is written to a temporary file beside it and renamed over it:
  the whole file appears at once or not at all.
* A symbolic link is followed: its target is replaced that way, the link stays a link.
* A character device, FIFO or socket (``/dev/null``, ``/dev/stdout``, ``mkfifo``) is written to
  directly, as a shell redirection would; it is never replaced by a regular file.
* Temporary files are removed when the process gets SIGTERM (or SIGINT / SIGHUP) while one is
  being written (:func:`atomic_write` installs the handler for the duration of the write, in the
  main thread only).
* :func:`same_file` says whether an output names one of the inputs (``-o`` onto a reference),
  so a command can refuse before any work.
"""
from __future__ import annotations

import contextlib
import errno as errno_
import os
import stat
import threading
from collections.abc import Iterable
from typing import IO, Callable, Union

from ..errors import UserError

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "OutputError",
    "atomic_write",
    "first_clash",
    "is_stream",
    "pending_temporary_files",
    "register_temporary",
    "same_file",
]


class OutputError(UserError, OSError):
    """A file could not be written. ``filename`` is the requested path (never the temporary
    file), ``strerror`` the reason; ``str()`` reads ``cannot write LABEL: reason``. A
    :class:`~mtscore.errors.UserError` (the user can fix the path) that is still an ``OSError``."""

    def __init__(self, code: int | None, reason: str, path: str, label: str):
        super().__init__(code, reason, path)
        self.label = label

    def __str__(self) -> str:
        return f"cannot write {self.label}: {self.strerror}"


def is_stream(path: PathLike) -> bool:
    """Whether ``path`` exists and is not a regular file or a folder (a character or block
    device, a FIFO, a socket; symbolic links followed): written to directly, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether ``a`` and ``b`` name one existing file (``os.path.samefile``: links, relative
    paths and hard links resolved). Devices and FIFOs never count (``-o /dev/stdout`` beside
    ``-i /dev/stdin`` is no clash worth refusing); missing files are not the same."""
    try:
        if is_stream(a) or is_stream(b):
            return False
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def first_clash(output: PathLike, inputs: Iterable[PathLike]) -> str | None:
    """The first of ``inputs`` that is the same file as ``output`` (see :func:`same_file`), or None."""
    for p in inputs:
        if same_file(output, p):
            return os.fspath(p)
    return None


# ---- temporary files removed on a terminating signal ---------------------------------------
_pending: set[str] = set()
_lock = threading.Lock()
_SIGNALS = ("SIGTERM", "SIGHUP")


def pending_temporary_files() -> set[str]:
    """The temporary files being written now (removed by the signal handler). For tests."""
    with _lock:
        return set(_pending)


def _remove_pending_and_reraise(signum, frame) -> None:  # pragma: no cover - runs in a killed process
    import signal

    with _lock:
        paths = list(_pending)
        _pending.clear()
    for p in paths:
        with contextlib.suppress(OSError):
            os.unlink(p)
    # die of the same signal, as the default action would have (exit status 128 + signum)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


class _CleanupOnSignal:
    """Register ``tmp`` for removal and, in the main thread, route SIGTERM/SIGHUP through
    :func:`_remove_pending_and_reraise` while it exists (the previous handlers come back after;
    a handler the program installed itself is left alone). SIGINT needs nothing: it raises
    KeyboardInterrupt, and the ``finally`` of the writer removes the file."""

    def __init__(self, tmp: str):
        self.tmp = tmp
        self.saved: list = []

    def __enter__(self):
        with _lock:
            _pending.add(self.tmp)
        if threading.current_thread() is threading.main_thread():
            import signal

            for name in _SIGNALS:
                sig = getattr(signal, name, None)
                if sig is None:
                    continue
                try:
                    old = signal.getsignal(sig)
                    if old in (signal.SIG_DFL, None):
                        signal.signal(sig, _remove_pending_and_reraise)
                        self.saved.append((sig, old))
                except (ValueError, OSError):  # not allowed here (embedded interpreter)
                    pass
        return self

    def __exit__(self, *exc) -> None:
        import signal

        for sig, old in self.saved:
            with contextlib.suppress(ValueError, OSError):  # pragma: no cover
                signal.signal(sig, old if old is not None else signal.SIG_DFL)
        with _lock:
            _pending.discard(self.tmp)


def register_temporary(tmp: str) -> _CleanupOnSignal:
    """A context manager: ``tmp`` is removed if a terminating signal arrives while it is open
    (for writers that manage their own temporary file, e.g. a streamed Parquet writer)."""
    return _CleanupOnSignal(tmp)


def temporary_beside(target: str) -> tuple[int, str]:
    """``(fd, name)`` of a new temporary file beside ``target`` (``.<name>.*.tmp``, the same file
    system, so it can be renamed over it) with the usual permissions, 0666 less the umask, not
    mkstemp's 0600. The caller registers it (:func:`register_temporary`) and removes or renames
    it; an ``OSError`` is the caller's to name."""
    import tempfile  # here: it pulls in random/hashlib, ~5 ms a CLI run that writes no file need not pay

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(target)),
                               prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
    except OSError:
        os.close(fd)
        os.unlink(tmp)
        raise
    return fd, tmp


def atomic_write(path: PathLike, write: Callable[[IO[bytes]], object], what: str = "") -> None:
    """Call ``write(f)`` on a binary file object for ``path``, then put the result in place.

    A regular file or a new name: ``write`` fills a temporary file beside the target (the same
    file system), which is then renamed over it, so the file appears whole or not at all
    (concurrent writers each use their own temporary file, the last rename wins; the file gets
    the usual permissions, 0666 less the umask). A symbolic link is followed and its target
    replaced that way. A device, FIFO or socket is opened and written to directly. Any failure
    removes the temporary file; an OSError becomes :class:`OutputError` naming ``path`` (and
    ``what``, e.g. the ``--output`` option)."""
    path = os.fspath(path)
    label = f"{what} {path}" if what else path
    if os.path.isdir(path):
        raise OutputError(errno_.EISDIR, "is a folder, expected a file name", path, label)
    if is_stream(path):
        try:
            with open(path, "wb") as f:
                write(f)
        except OSError as e:
            raise OutputError(e.errno, e.strerror or str(e), path, label) from None
        return
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        fd, tmp = temporary_beside(target)
    except OSError as e:
        why = "its folder does not exist" if isinstance(e, FileNotFoundError) else (e.strerror or str(e))
        raise OutputError(e.errno, why, path, label) from None
    try:
        with register_temporary(tmp):
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.replace(tmp, target)
    except OSError as e:
        raise OutputError(e.errno, e.strerror or str(e), path, label) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
