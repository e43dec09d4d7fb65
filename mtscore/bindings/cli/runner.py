"""The one error runner of the command line: every command runs its work through
:func:`run_command`, which turns user errors into one line ``PROG: error: ...`` and an exit
status (the errors contract, docs/errors.md). Two policies, so that each command keeps the
output it always had:

* :data:`SCORING` (``mtscore``, ``score-table``, ``mbr``, ``nbest``, ``bertscore baseline``):
  a :class:`~mtscore.errors.UserError` exits 1 (2 for a usage error), as do file errors
  (``PATH: file not found``), ``ValueError``/``TypeError``/``RuntimeError``/``ImportError``;
  warnings are printed as one line each, Ctrl-C exits 130 with one line, the worker pools are
  joined before returning.
* :data:`ANALYSIS` (``meta ...``, ``human ...``): a :class:`~mtscore.errors.UserError`, a
  file error (``PATH: <strerror>``) or a missing optional dependency exits 1; anything else is
  a bug and keeps its traceback.
"""
from __future__ import annotations

import errno
import sys

from ...errors import UserError
from .inputs import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing ``typing`` is a share of ``mtscore --help``'s start-up
    from typing import Any, Callable

__all__ = ["ANALYSIS", "EXIT_ERROR", "EXIT_USAGE", "SCORING", "ErrorPolicy", "os_error_line",
           "run_command"]

EXIT_USAGE = 2
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130

_OS_REASONS = {errno.ENOENT: "file not found", errno.EISDIR: "is a folder, expected a file",
               errno.ENOTDIR: "a part of the path is a file, not a folder",
               errno.EACCES: "permission denied"}


def os_error_line(e: OSError) -> str:
    """``PATH: reason`` for a file error (not Python's ``[Errno 2] No such file or directory:
    'PATH'``); errors without a file name, or with their own wording (an ``OSError`` subclass
    with its own ``__str__``, e.g. the output writer's), as they are."""
    if e.filename is None or type(e).__str__ is not OSError.__str__:
        return str(e)
    return f"{e.filename}: {_OS_REASONS.get(e.errno or 0, e.strerror or str(e))}"


def _strerror_line(e: OSError) -> str:
    """``PATH: <strerror>`` (the analysis commands' wording), the message alone without a path."""
    return f"{e.filename}: {e.strerror}" if e.filename else str(e)


class ErrorPolicy:
    """What :func:`run_command` reports as a one-line error, and how (a plain slotted class, not
    a ``NamedTuple``: building one of those costs a share of ``mtscore --help``'s start-up)."""

    __slots__ = ("managed", "os_line", "user_errors")

    def __init__(self, user_errors: tuple[type[BaseException], ...], os_line: Callable[[OSError], str],
                 managed: bool) -> None:
        #: besides :class:`~mtscore.errors.UserError` and ``OSError``: exceptions printed as one line
        self.user_errors = user_errors
        #: the line for a file error
        self.os_line = os_line
        #: one-line warnings, Ctrl-C as one line (exit 130), worker pools joined before returning
        self.managed = managed


SCORING = ErrorPolicy((ValueError, TypeError, RuntimeError, ImportError), os_error_line, True)
ANALYSIS = ErrorPolicy((ImportError,), _strerror_line, False)


def run_command(fn: Callable[[Any], int], args: Any, prog: str, policy: ErrorPolicy = SCORING) -> int:
    """``fn(args)`` under the errors contract of ``policy``: user errors print one line
    ``prog: error: ...`` and return 1 (2 for a :class:`~.inputs.UsageError`); anything else is a
    bug and keeps its traceback."""
    if not policy.managed:
        try:
            return fn(args)
        except Exception as e:
            status = _user_error(e, prog, policy)
            if status is None:
                raise
            return status
    import warnings

    from ...engine.parallel import shutdown_pools

    def one_line(message, category, filename, lineno, file=None, line=None):
        print(f"{prog}: warning: {message}", file=sys.stderr)

    try:
        try:
            with warnings.catch_warnings():
                warnings.showwarning = one_line  # lossy operations: one line each
                return fn(args)
        finally:
            shutdown_pools()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        status = _user_error(e, prog, policy)
        if status is None:
            raise
        return status


def _user_error(e: Exception, prog: str, policy: ErrorPolicy) -> int | None:
    """Print ``e`` as one line and return the exit status; None for a bug (re-raised). A file
    error first: one that is also a :class:`~mtscore.errors.UserError` (``OutputError``) gets
    the policy's file-error line, as every ``OSError`` does."""
    if isinstance(e, OSError):
        print(f"{prog}: error: {policy.os_line(e)}", file=sys.stderr)
        return EXIT_ERROR
    if isinstance(e, UserError):
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_USAGE if isinstance(e, UsageError) else EXIT_ERROR
    if isinstance(e, policy.user_errors):
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    return None
