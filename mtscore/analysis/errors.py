"""The user-input error of ``mtscore meta`` / ``mtscore human`` (the errors contract).

:class:`AnalysisInputError` is raised where bad input is detected (a file, line and column
or an option, and what to do); the CLI prints it as one line, ``mtscore: error: <message>``,
and exits 1. Anything else that escapes is a bug and keeps its traceback. It subclasses
``ValueError`` so library callers that already catch ``ValueError`` keep working.
"""
from __future__ import annotations

from ..errors import UserError

__all__ = ["AnalysisInputError"]


class AnalysisInputError(UserError, ValueError):
    """Bad user input (a file's content, an option value): the message is the whole story."""
