"""The base class of the errors a user can fix: bad input, options or files, a missing extra.

Every user-facing error of the library derives from :class:`UserError` as well as from the
built-in class it always had (``CorpusError`` and ``AnalysisInputError`` are still
``ValueError``\\ s, ``MissingExtraError`` an ``ImportError``, ``EncoderError`` a ``RuntimeError``,
``OutputError`` an ``OSError``), so callers can catch either. The command line prints one as one
line, ``mtscore: error: <message>`` (an ``OSError`` one as its file errors: ``PATH: reason``), and
exits 1 (2 for a :class:`~mtscore.bindings.cli.inputs.UsageError`); anything else that escapes is
a bug and keeps its traceback.

Derived classes: :class:`~mtscore.engine.corpus_error.CorpusError` (bad corpus input; with
``LineTooLongError``), :class:`~mtscore.engine.strict_numbers.NumberSyntaxError`,
:class:`~mtscore.engine.missing_extra.MissingExtraError`,
:class:`~mtscore.engine.metrics.base.MissingReferenceError`,
:class:`~mtscore.engine.encoder.EncoderError` (a ``RuntimeError``: a model folder or ONNX file that
cannot be used), :class:`~mtscore.engine.atomic.OutputError` (an ``OSError``: an output that cannot
be written), :class:`~mtscore.engine.checkpoints.CheckpointError` (a ``ValueError``: a torch/Lightning
checkpoint or model folder that cannot be read, or a checkpoint pickle asking for a refused global),
:class:`~mtscore.engine.comet.CometInputError` (a ``ValueError``: segments that do not fit a COMET model),
:class:`~mtscore.analysis.errors.AnalysisInputError`,
:class:`~mtscore.bindings.decoder.NBestFormatError`,
:class:`~mtscore.bindings.cli.inputs.CLIError` (and ``UsageError``).

This module imports nothing: the metric path and every layer can import it at no cost.
"""

__all__ = ["UserError"]


class UserError(Exception):
    """An error the user can fix; its message is the whole story (file, line or option, and
    what to do), one line."""
