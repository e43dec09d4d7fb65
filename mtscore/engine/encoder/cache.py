"""Exported-encoder cache: ``$XDG_CACHE_HOME/mtscore/encoders`` (or ``~/.cache/mtscore/encoders``).

Each export is a folder holding ``model.onnx`` and ``manifest.json`` with the source hash
(sha256 of the weights file), layer, opset, dtype, builder version and options. A folder is
found again by a cheap key (path, size, mtime of config/weights + options), so a warm start
never re-hashes 90 MB of weights. Files are written to a temp name and renamed: a crashed
export never leaves a half-written model behind.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Optional

import numpy as np

from . import onnx_builder
from .model_dir import EncoderError, file_sha256, load_weights, quick_key, read_config, weights_file


def cache_root(cache_dir: Optional[str] = None) -> Path:
    if cache_dir:
        return Path(cache_dir).expanduser()
    env = os.environ.get("MTSCORE_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mtscore"


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _save_model(model, path: Path) -> None:
    _atomic_write_bytes(path, model.SerializeToString())


def export_encoder(model_dir: Path, layer: int, dtype: str = "float32", fused: bool = False,
                   cache_dir: Optional[str] = None, force: bool = False) -> dict:
    """Export (or find the cached export of) ``hidden_states[layer]`` of a HF model directory.

    Returns the manifest dict; ``manifest["onnx"]`` is the path of the ONNX file.
    """
    model_dir = Path(model_dir)
    config = read_config(model_dir)
    wfile = weights_file(model_dir)
    opts = f"L{layer}|{dtype}|fused={int(fused)}|v{onnx_builder.BUILDER_VERSION}|opset{onnx_builder.OPSET}"
    key = quick_key(model_dir / "config.json", wfile) + "-" + quick_key_str(opts)
    name = f"{config.get('model_type', 'model')}-L{layer}-{dtype}{'-fused' if fused else ''}-{key}"
    folder = cache_root(cache_dir) / "encoders" / name
    mfile = folder / "manifest.json"
    if mfile.is_file() and not force:
        try:
            man = json.loads(mfile.read_text())
            if Path(man["onnx"]).is_file():
                return man
        except (ValueError, KeyError):
            pass

    src_hash = file_sha256(wfile)
    mt = config.get("model_type", "")
    if mt in onnx_builder.SUPPORTED:
        weights = load_weights(wfile)
        np_dtype = np.float16 if dtype == "float16" else np.float32
        model = onnx_builder.build_encoder_graph(config, weights, layer, dtype=np_dtype)
        del weights
        exporter = "mtscore-onnx-builder"
    else:
        try:
            import torch  # noqa: F401
        except ImportError:
            raise EncoderError(
                f"{model_dir / 'config.json'}: model_type {mt!r} is not supported by mtscore's torch-free "
                f"exporter (supported: {', '.join(sorted(onnx_builder.SUPPORTED))}); install torch and "
                "transformers (pip install torch transformers) to export it with torch.onnx, or pass "
                "a ready .onnx file as --model") from None
        from .torch_export import torch_export

        model = torch_export(model_dir, layer)
        exporter = "torch.onnx"
    onnx_path = folder / "model.onnx"
    _save_model(model, onnx_path)
    del model
    if fused:
        onnx_path = _fuse(onnx_path, config)
    hidden, heads, n_layers = _dims(config)
    man = {
        "onnx": str(onnx_path),
        "source": str(model_dir),
        "source_file": wfile.name,
        "source_sha256": src_hash,
        "model_type": mt,
        "layer": layer,
        "num_layers": n_layers,
        "hidden_size": hidden,
        "opset": onnx_builder.OPSET,
        "dtype": dtype,
        "fused": fused,
        "exporter": exporter,
        "builder_version": onnx_builder.BUILDER_VERSION,
    }
    _atomic_write_bytes(mfile, json.dumps(man, indent=1).encode())
    return man


def quick_key_str(s: str) -> str:
    import hashlib

    return hashlib.sha1(s.encode()).hexdigest()[:8]


def _dims(config: dict):
    try:
        return onnx_builder.model_dims(config)
    except KeyError:
        return None, None, None


def _fuse(onnx_path: Path, config: dict) -> Path:
    """Rewrite with onnxruntime's fused transformer ops (Attention, SkipLayerNorm, BiasGelu)."""
    from onnxruntime.transformers.optimizer import optimize_model

    hidden, heads, _ = _dims(config)
    opt = optimize_model(str(onnx_path), model_type="bert", num_heads=heads, hidden_size=hidden,
                         opt_level=0)
    out = onnx_path.with_name("model.fused.onnx")
    _save_model(opt.model, out)
    return out


def quantized_path(onnx_path: Path) -> Path:
    """int8 dynamic quantisation (approximate: F moves by ~0.01 on MiniLM); cached next to the fp32 file."""
    out = Path(onnx_path).with_name(Path(onnx_path).stem + ".int8.onnx")
    if out.is_file():
        return out
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".onnx")
    os.close(fd)
    try:
        quantize_dynamic(str(onnx_path), tmp, weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def onnx_file_hash(path: Path, cache_dir: Optional[str] = None) -> str:
    """sha256 of a user-supplied .onnx file, memoised in the cache by (path, size, mtime)."""
    idx = cache_root(cache_dir) / "onnx-hashes" / (quick_key(Path(path)) + ".txt")
    if idx.is_file():
        return idx.read_text().strip()
    h = file_sha256(Path(path))
    try:
        _atomic_write_bytes(idx, h.encode())
    except OSError:
        pass
    return h
