"""SentencePiece tokenizers (spm / flores101 / flores200 / spBLEU-1K) as sacrebleu defines them.

The model file is taken from (in order): ``$MTSCORE_SPM_MODEL`` (explicit path), the mtscore cache
directory, sacrebleu's cache (``$SACREBLEU`` or ``~/.sacrebleu``)/models; it is downloaded only when
none exists, and a clear error explains how to provide it when the network is unavailable.
"""
from __future__ import annotations

import os
from pathlib import Path

from .missing_extra import MissingExtraError, install_hint
from .user_cache import cache_dir

SPM_MODELS = {
    "spm": ("https://dl.fbaipublicfiles.com/fairseq/models/flores/sacrebleu_tokenizer_spm.model",
            "flores101", "sacrebleu_tokenizer_spm.model"),
    "flores101": ("https://dl.fbaipublicfiles.com/fairseq/models/flores/sacrebleu_tokenizer_spm.model",
                  "flores101", "sacrebleu_tokenizer_spm.model"),
    "flores200": ("https://dl.fbaipublicfiles.com/large_objects/nllb/models/spm_200/flores200_sacrebleu_tokenizer_spm.model",
                  "flores200", "flores200sacrebleuspm"),
    "spBLEU-1K": ("https://www.dlnlp.ai/spBLEU-1K/spbleu-1k_tokenizer_spm.model",
                  "spBLEU-1K", "spbleu-1k_tokenizer_spm.model"),
}


def candidate_paths(name: str):
    _, _, fname = SPM_MODELS[name]
    env = os.environ.get("MTSCORE_SPM_MODEL")
    if env:
        yield Path(env)
    yield cache_dir() / "models" / fname
    sb = os.environ.get("SACREBLEU") or os.path.expanduser("~/.sacrebleu")
    yield Path(sb) / "models" / fname


def load_spm(name: str):
    try:
        import sentencepiece as spm
    except ImportError:
        raise MissingExtraError(
            f"tokenizer {name!r} needs sentencepiece: {install_hint('spm')}") from None
    url, sig, fname = SPM_MODELS[name]
    path = next((p for p in candidate_paths(name) if p.is_file()), None)
    if path is None:
        target = cache_dir() / "models" / fname
        try:
            import urllib.request

            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".part")
            with urllib.request.urlopen(url, timeout=30) as r, open(tmp, "wb") as f:
                f.write(r.read())
            os.replace(tmp, target)
            path = target
        except Exception as e:  # offline or blocked
            raise RuntimeError(
                f"tokenizer {name!r}: SentencePiece model {fname} not found and could not be "
                f"downloaded from {url} ({e.__class__.__name__}). Download it elsewhere and put it at "
                f"{target} or point MTSCORE_SPM_MODEL at it.") from None
    sp = spm.SentencePieceProcessor()
    sp.Load(str(path))
    return sp, sig
