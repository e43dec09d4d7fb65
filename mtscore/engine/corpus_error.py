"""The exception for bad corpus input, in a module of its own so that everything that raises or
catches it (coercion on the metric path, file readers, the CLI) can import it at no cost: it
imports only :mod:`mtscore.errors`, which imports nothing. (``bindings/cli/parser.py`` holds the
argparse plumbing of the command-line faces; importing argparse would cost the metric path
~2 ms.)"""

from ..errors import UserError

__all__ = ["CorpusError"]


class CorpusError(UserError, ValueError):
    """Bad corpus input (mismatched lengths, invalid encoding, missing column, ...).

    The message is one line naming the file (or argument), the line/row where known, and the fix.
    """
