"""The cached ONNX export of a COMET model's sentence-embedding graph (:mod:`.graph`).

Stored in the encoder cache (:mod:`mtscore.engine.encoder.cache`: ``$MTSCORE_CACHE/encoders``,
else ``$XDG_CACHE_HOME/mtscore/encoders``, else ``~/.cache/mtscore/encoders``) in a folder
``comet-<class>-<dtype>-<key>`` holding ``model.onnx``, for a real (XLM-R large) model
``model.onnx.data`` beside it (external data), and ``manifest.json`` written last. The key is a hash
of the checkpoint's sha256, the graph and builder versions, the opset, the dtype and everything the
graph takes from ``hparams.yaml`` / ``config.json`` (mix kind, scalars, gamma, layer, layer norm,
pooling, encoder config), so a changed file or a new mtscore graph gets a new export. The cache's
policies apply: a read-only cache holding the export is used as it is; an unwritable one makes the
export go to a temporary folder with an ``EncoderCacheWarning``.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from ..encoder import cache, onnx_builder
from .graph import GRAPH_VERSION, OUTPUT, build_comet_embedding_graph
from .spec import CometSpec

__all__ = ["cached_comet_embedding", "comet_export_key", "export_comet_embedding"]

_DTYPES = {"float32": np.float32, "float16": np.float16}


def _graph_options(spec: CometSpec) -> dict:
    """Everything besides the encoder weights that shapes the graph."""
    return {
        "class": spec.class_identifier, "layer": spec.layer, "mix": spec.mix, "layer_norm": spec.layer_norm,
        "scalars": None if spec.scalar_parameters is None else [repr(float(v)) for v in spec.scalar_parameters],
        "gamma": None if spec.gamma is None else repr(float(spec.gamma)), "pool": spec.pool,
        "pad_token_id": spec.dims.pad_token_id, "encoder_config": spec.encoder_config,
    }


def comet_export_key(spec: CometSpec, checkpoint_sha256: str, dtype: str) -> str:
    """The cache key (20 hex digits) of the export of ``spec`` from the checkpoint whose sha256 is
    ``checkpoint_sha256``, in ``dtype``."""
    blob = json.dumps({"checkpoint_sha256": checkpoint_sha256, "dtype": dtype, "graph_version": GRAPH_VERSION,
                       "builder_version": onnx_builder.BUILDER_VERSION, "opset": onnx_builder.OPSET,
                       "graph": _graph_options(spec)}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _export_folder(spec: CometSpec, checkpoint_sha256: str, dtype: str,
                   cache_dir: str | None) -> tuple[cache.CacheLocation, Path]:
    if dtype not in _DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {', '.join(_DTYPES)}")
    if len(checkpoint_sha256) != 64 or any(c not in "0123456789abcdef" for c in checkpoint_sha256):
        raise ValueError(f"checkpoint_sha256 {checkpoint_sha256!r}: expected 64 lowercase hex digits")
    key = comet_export_key(spec, checkpoint_sha256, dtype)
    loc = cache.cache_location(cache_dir)
    return loc, loc.path / "encoders" / f"comet-{spec.class_identifier}-{dtype}-{key}"


def cached_comet_embedding(spec: CometSpec, checkpoint_sha256: str, dtype: str = "float32", *,
                           cache_dir: str | None = None) -> Path | None:
    """The path of the cached export :func:`export_comet_embedding` gives, or None when it is not
    cached (whole, with its manifest): a lookup that never builds or writes anything, so it also
    serves a ``head_only`` spec, which cannot build the graph."""
    _, folder = _export_folder(spec, checkpoint_sha256, dtype, cache_dir)
    man = cache.read_manifest(folder)
    return None if man is None else Path(man["onnx"])


def export_comet_embedding(spec: CometSpec, checkpoint_sha256: str, dtype: str = "float32", *,
                           cache_dir: str | None = None, force: bool = False,
                           consume_weights: bool = False) -> Path:
    """The path of the ONNX file computing ``spec``'s sentence embedding (inputs ``input_ids`` /
    ``attention_mask`` int64 ``[batch, seq]``, output ``sentemb`` float32 ``[batch, hidden]``),
    built and cached on first use. ``checkpoint_sha256``: the hash of the ``.ckpt`` the spec was read
    from (the caller has it for the signature). ``dtype``: "float32" or "float16" (the encoder only;
    see :func:`~.graph.build_comet_embedding_graph`). Open the file by path (its weights may be in
    ``model.onnx.data`` beside it). ``force``: rebuild even when cached. A ``head_only`` spec
    (no encoder weights) only finds a cached export: ValueError when there is none (or ``force``).

    Memory: the large weights are written to ``model.onnx.data`` while the graph is built
    (:class:`~mtscore.engine.encoder.cache.ExternalData`; the files are those :func:`save_model`
    writes from the finished graph), so no protobuf copy of them is held; ``consume_weights``:
    the spec's ``encoder_weights`` dict is emptied as the graph takes each weight (a built export
    then holds the only copy; :func:`~.scorer.load_comet` drops the weights after the export
    anyway), and the spec cannot build another graph. A cached export consumes nothing."""
    loc, folder = _export_folder(spec, checkpoint_sha256, dtype, cache_dir)
    man = None if force else cache.read_manifest(folder)
    if man is not None:
        return Path(man["onnx"])
    if spec.head_only:  # before anything is created: the graph builder needs the encoder weights
        raise ValueError(f"{spec.class_identifier}: the ONNX export of the COMET model {checkpoint_sha256[:12]} "
                         "is not cached and a head_only spec (no encoder weights) cannot build it; read the "
                         "checkpoint (load_comet_spec)")
    folder = cache.build_folder(folder, loc.describe(), f"ONNX export of the COMET model {checkpoint_sha256[:12]}")
    onnx_path = folder / "model.onnx"
    with cache.ExternalData(onnx_path) as sink:
        model = build_comet_embedding_graph(spec, dtype=_DTYPES[dtype], sink=sink, consume=consume_weights)
        external = cache.save_model(model, onnx_path, sink)
        del model
    cache.write_manifest(folder, {
        "onnx": str(onnx_path), "kind": "comet-sentence-embedding", "output": OUTPUT,
        "checkpoint_sha256": checkpoint_sha256, "class_identifier": spec.class_identifier,
        "hidden_size": spec.dims.hidden, "num_layers": spec.dims.layers, "dtype": dtype,
        "opset": onnx_builder.OPSET, "graph_version": GRAPH_VERSION, "builder_version": onnx_builder.BUILDER_VERSION,
        "graph": _graph_options(spec), "exporter": "mtscore-onnx-builder", **(external or {}),
    })
    return onnx_path
