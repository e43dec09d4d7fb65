"""The error of the checkpoint readers, in a module of its own so that the pickle reader and the
hparams.yaml reader raise the same class without importing each other."""
from ...errors import UserError

__all__ = ["CheckpointError"]


class CheckpointError(UserError, ValueError):
    """A checkpoint file or model folder cannot be used: missing, damaged, of a format the reader
    does not know, or (for a pickle) asking for a global outside the reader's allow-list. The
    message names the file and the problem. A :class:`~mtscore.errors.UserError` that is also a
    ``ValueError``."""
