"""Readers of other tools' model checkpoints that never run the checkpoint's code.

:func:`read_checkpoint` reads a PyTorch / PyTorch Lightning ``.ckpt``/``.pt`` zip (the format of
``torch.save`` since torch 1.6) into numpy arrays with a restricted unpickler that rebuilds tensors
and plain containers and refuses every other global (:mod:`.lightning`); :func:`read_hparams` reads
the flat ``hparams.yaml`` of a COMET model folder without PyYAML (:mod:`.hparams_yaml`). Neither
imports torch.
"""
from .checkpoint_error import CheckpointError
from .lightning import (
    ALLOWED_GLOBALS,
    SKIPPED_GLOBALS,
    read_checkpoint,
    read_checkpoint_object,
    read_hparams,
)

__all__ = [
    "ALLOWED_GLOBALS",
    "SKIPPED_GLOBALS",
    "CheckpointError",
    "read_checkpoint",
    "read_checkpoint_object",
    "read_hparams",
]
