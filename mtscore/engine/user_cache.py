"""mtscore's per-user cache directory (the ``intl`` tokenizer table, SentencePiece models), in a
module of its own so that the tokenizer registry and ``spm`` share it without importing each
other."""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    base = os.environ.get("MTSCORE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mtscore")
    return Path(base)
