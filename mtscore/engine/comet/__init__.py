"""COMET (Rei et al., 2020; unbabel-comet 2.2.7) on mtscore's runtime, without torch.

:mod:`.model` locates a COMET model (a folder, or a Hugging Face name) and its encoder's config and
tokenizer and checks its ``hparams.yaml``.
"""
from .model import (
    CLASS_IDENTIFIERS,
    CometModelFiles,
    check_hparams,
    comet_repo_id,
    resolve_comet_model,
)

__all__ = [
    "CLASS_IDENTIFIERS",
    "CometModelFiles",
    "check_hparams",
    "comet_repo_id",
    "resolve_comet_model",
]
