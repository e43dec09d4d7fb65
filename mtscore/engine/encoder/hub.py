"""Where a model named like bert_score names it comes from, in order:

1. a local path (a Hugging Face model directory or an ``.onnx`` file);
2. the Hugging Face cache (``huggingface_hub``'s layout ``models--ORG--NAME/{refs,snapshots}``),
   located like ``huggingface_hub`` does: ``HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
   ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``; read when this is
   called, so a variable set after import counts. ``revision`` is a branch, tag or commit
   (default ``main``);
3. a download through ``huggingface_hub`` (only the files the encoder reads), unless
   ``HF_HUB_OFFLINE`` is set: then, or when the download fails, one :class:`EncoderError` names
   the model, the cache looked in and the ways to fix it.

The resolved commit hash (the snapshot folder's name) is returned with the path: the ONNX export
cache keys on it, so a model updated on the Hub gets a new export.

:func:`fetch_repo_files` does steps 2-3 for repositories that are not an encoder's weights (a COMET
model folder; an encoder's config and tokenizer alone), with the files and the option name given.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from ..missing_extra import install_hint
from .model_dir import DEFAULT_MODEL_NAME, EncoderError, default_model_dir

#: files the encoder reads (config, tokenizer, weights); everything else in a repo is skipped
TOKENIZER_FILES = ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   # vocabularies: small, and what a repo without tokenizer.json needs to make one
                   "vocab.txt", "vocab.json", "merges.txt", "*.model"]
WEIGHT_FILES = ["model.safetensors", "pytorch_model.bin"]
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_TRUE = {"1", "on", "yes", "true"}


class ModelSource(NamedTuple):
    """A resolved model: ``path`` (directory or .onnx file), ``name`` (for signatures: the repo id
    or the folder name) and ``revision`` (the Hub commit hash; None for a local path)."""

    path: Path
    name: str
    revision: str | None


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache folder, from the environment as it is now."""
    env = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if env:
        return Path(env).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return Path(home).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg).expanduser() / "huggingface" / "hub"


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is set to 1/on/yes/true."""
    return any(os.environ.get(v, "").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def looks_like_repo_id(model: str) -> bool:
    """``name`` or ``org/name`` with the characters the Hub allows (not a path with ./ or ~)."""
    return bool(_REPO_ID.match(model)) and ".." not in model


def is_default_model(model: str | None) -> bool:
    """None, "default" or the packaged model's name (its Hub name too): the packaged MiniLM."""
    return model is None or model in ("default", DEFAULT_MODEL_NAME, "sentence-transformers/" + DEFAULT_MODEL_NAME)


def resolve_model(model: str | None, revision: str | None = None) -> Path:
    """The path of :func:`resolve_source` (the packaged default for None)."""
    return resolve_source(model, revision).path


def resolve_source(model: str | None, revision: str | None = None) -> ModelSource:
    """The packaged default (``model`` None or its name; its files are checked against their
    pinned hashes, :mod:`.model_hashes`), else a local path, else the Hugging Face cache, else a
    download (see the module docstring)."""
    if is_default_model(model) and revision is None:
        from .model_hashes import verify_default_files

        default_dir = default_model_dir()
        verify_default_files(default_dir)  # pinned hashes (the weights: at export, see model_hashes)
        return ModelSource(default_dir, DEFAULT_MODEL_NAME, None)
    assert model is not None
    p = Path(model).expanduser()
    if p.exists():
        p = p.absolute()
        return ModelSource(p, p.name if p.name != "model" else p.parent.name, None)
    if not looks_like_repo_id(model):
        raise EncoderError(
            f"--model {model!r}: no such file or directory, and not a Hugging Face model name "
            "(ORG/NAME); pass a local model directory, an .onnx file, or a name such as roberta-large")
    hf = _import_hub(model)
    cache = hub_cache_dir()
    folder = _cached_snapshot(hf, model, revision, cache)
    if folder is None:
        folder = _download(hf, model, revision, cache)
    return ModelSource(folder, model, folder.name)


def _import_hub(model: str, option: str = "--model"):
    try:
        import huggingface_hub
    except ImportError:
        raise EncoderError(
            f"{option} {model!r}: not a local path; loading models by name needs huggingface_hub: "
            f"{install_hint('hub')} (or pass a local model directory)") from None
    return huggingface_hub


def _cached_snapshot(hf, model: str, revision: str | None, cache: Path) -> Path | None:
    """The cached snapshot folder of ``model`` at ``revision`` holding a config and weights, or None."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        folder = Path(hf.snapshot_download(model, revision=revision, cache_dir=str(cache),
                                           local_files_only=True,
                                           allow_patterns=TOKENIZER_FILES + WEIGHT_FILES))
    except (LocalEntryNotFoundError, OSError, ValueError):
        return None
    if (folder / "config.json").is_file() and any((folder / w).is_file() for w in WEIGHT_FILES):
        return folder
    return None


def _offline_error(model: str, revision: str | None, cache: Path, why: str,
                   option: str = "--model", local: str = "pass a local model directory") -> EncoderError:
    rev = f" at revision {revision!r}" if revision else ""
    return EncoderError(
        f"{option} {model!r}{rev}: not in the Hugging Face cache {cache} and {why}. Fix: run once with "
        f"network access (unset HF_HUB_OFFLINE), or `hf download {model}` on a machine that has it "
        f"and copy the cache (HF_HOME), or {local}")


def _download(hf, model: str, revision: str | None, cache: Path) -> Path:
    """Download config, tokenizer and weights (safetensors, else pytorch_model.bin) into the cache."""
    if hub_offline():
        raise _offline_error(model, revision, cache, "HF_HUB_OFFLINE is set (no download tried)")
    try:
        folder = Path(hf.snapshot_download(model, revision=revision, cache_dir=str(cache),
                                           allow_patterns=TOKENIZER_FILES + WEIGHT_FILES[:1]))
        if not (folder / WEIGHT_FILES[0]).is_file():
            folder = Path(hf.snapshot_download(model, revision=revision, cache_dir=str(cache),
                                               allow_patterns=TOKENIZER_FILES + WEIGHT_FILES[1:]))
    except Exception as e:  # connection, 404, gated repo: huggingface_hub raises many types
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise _offline_error(model, revision, cache, f"the download failed ({type(e).__name__}: {first})") from None
    if not (folder / "config.json").is_file():
        raise EncoderError(f"--model {model!r}: the Hub repository has no config.json; "
                           "it is not a transformers model")
    return folder


def _missing(folder: Path, required: Sequence[Sequence[str]]) -> list[str]:
    """The entries of ``required`` (each: alternatives, one of which must be a file) absent in ``folder``."""
    return [" or ".join(alts) for alts in required if not any((folder / f).is_file() for f in alts)]


def fetch_repo_files(repo_id: str, patterns: Sequence[str], required: Sequence[Sequence[str]], *,
                     revision: str | None = None, option: str = "--model",
                     local: str = "pass a local model directory",
                     cached_as: Sequence[str] = ()) -> ModelSource:
    """The snapshot folder of a Hub repository holding the files ``patterns`` select, for models
    other than an encoder's weights (a COMET model folder, a tokenizer and config without weights).

    ``required`` lists what the folder must hold, each entry a tuple of alternative file names
    (relative paths). Looked up in the Hugging Face cache first (the snapshot counts only when it
    holds every required entry); else downloaded through ``huggingface_hub`` unless
    ``HF_HUB_OFFLINE`` is set. ``cached_as``: other names of the same repository (the Hub renamed
    e.g. ``xlm-roberta-large`` to ``FacebookAI/xlm-roberta-large``) whose cached snapshots serve too,
    tried after ``repo_id``; the name of the snapshot found is the result's ``name``; a download
    always asks for ``repo_id``. Errors are one :class:`EncoderError` naming ``option`` and the
    repository: huggingface_hub missing, not cached while offline (naming HF_HUB_OFFLINE and the
    ``hf download`` command; ``local`` is the last way out it offers), a failed download, a
    repository without a required file."""
    hf = _import_hub(repo_id, option)
    cache = hub_cache_dir()
    from huggingface_hub.errors import LocalEntryNotFoundError

    for name in (repo_id, *cached_as):
        try:
            folder = Path(hf.snapshot_download(name, revision=revision, cache_dir=str(cache),
                                               local_files_only=True, allow_patterns=list(patterns)))
        except (LocalEntryNotFoundError, OSError, ValueError):
            continue
        if not _missing(folder, required):
            return ModelSource(folder, name, folder.name)
    if hub_offline():
        raise _offline_error(repo_id, revision, cache, "HF_HUB_OFFLINE is set (no download tried)", option, local)
    try:
        folder = Path(hf.snapshot_download(repo_id, revision=revision, cache_dir=str(cache),
                                           allow_patterns=list(patterns)))
    except Exception as e:  # connection, 404, gated repo: huggingface_hub raises many types
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise _offline_error(repo_id, revision, cache, f"the download failed ({type(e).__name__}: {first})",
                             option, local) from None
    missing = _missing(folder, required)
    if missing:
        raise EncoderError(f"{option} {repo_id!r}: the Hub repository has no {', '.join(missing)}")
    return ModelSource(folder, repo_id, folder.name)
