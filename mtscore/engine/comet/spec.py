"""The architecture of a COMET model, derived from its hyper-parameters, its encoder's ``config.json``
and the checkpoint's tensors, and checked against them.

unbabel-comet 2.2.7 builds (``comet/models/base.py``, ``regression/*``, ``multitask/unified_metric.py``,
``modules/{layerwise_attention,feedforward}.py``):

* ``encoder.model``: an ``XLMRobertaModel`` without pooler, dims from ``config.json``;
* ``layerwise_attention`` (when ``layer``/``sent_layer`` is ``mix``): ``scalar_parameters.{0..L}``
  (L = layers; one ``[1]`` tensor per hidden state) and ``gamma`` ``[1]``; the weights are
  ``sparsemax`` of the scalars when ``layer_transformation == "sparsemax"``, else ``softmax``
  (``sparsemax_patch`` too); ``layer_norm`` normalises each hidden state per sentence before the mix;
  a layer number instead takes that one hidden state;
* pooling (``pool``, the regression classes): ``avg`` (mean over the non-pad tokens), ``max``
  (maximum over the non-pad tokens), ``cls`` (first token of the mix / layer), ``default`` (the
  encoder's own sentence embedding: the first token of the **last** hidden state, whatever
  ``layer`` says; the mix, if any, is built and its tensors are in the checkpoint, but unused);
  the first token of the joint ``<s> mt </s></s> src </s>`` for ``unified_metric``;
* features: ``[mt; ref; mt*ref; |mt-ref|; mt*src; |mt-src|]`` (regression_metric),
  ``[mt; src; mt*src; |mt-src|]`` (referenceless_regression_metric), the pooled joint embedding
  (unified_metric);
* ``estimator.ff``: ``Linear, act, Dropout`` per entry of ``hidden_sizes`` then ``Linear(.., 1)`` and
  the optional ``final_activation``: the linear layers are ``ff.0``, ``ff.3``, ``ff.6``, ...

unbabel-comet loads with ``strict=False``; here every tensor must be there with its shape, and no
tensor may be left over, except a few that are known and unused (:data:`IGNORED`): the
``position_ids`` buffer older transformers saved, a pooler, the layer-mix dropout buffers.

A spec without its encoder (``head_only``; :func:`comet_head_spec`) is rebuilt from the head's
tensors alone (:func:`head_tensors`: estimator, layer-mix scalars, gamma) by the same derivation and
checks: a warm load takes it from the cache (:mod:`.head_cache`) and scores with the cached ONNX
export, without reading the checkpoint; such a spec cannot build a graph.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from ..checkpoints import CheckpointError, read_checkpoint
from .model import CometModelFiles, check_hparams, estimator_activation

__all__ = ["FEATURES", "IGNORED", "CometSpec", "EncoderDims", "EstimatorLayer", "Pool", "comet_head_spec",
           "comet_spec", "head_tensors", "load_comet_spec"]

ENCODER_PREFIX = "encoder.model."
#: the sentence features each class feeds the estimator, in order (each ``hidden`` wide)
FEATURES: dict[str, tuple[str, ...]] = {
    "regression_metric": ("mt", "ref", "mt*ref", "|mt-ref|", "mt*src", "|mt-src|"),
    "referenceless_regression_metric": ("mt", "src", "mt*src", "|mt-src|"),
    "unified_metric": ("joint",),
}
#: tensors that may be in a checkpoint and are not used (name -> what they are)
IGNORED = {
    ENCODER_PREFIX + "embeddings.position_ids": "a buffer older transformers versions saved",
    ENCODER_PREFIX + "pooler.dense.weight": "the pooler, which COMET does not use",
    ENCODER_PREFIX + "pooler.dense.bias": "the pooler, which COMET does not use",
    "layerwise_attention.dropout_mask": "the layer-dropout buffer (training only)",
    "layerwise_attention.dropout_fill": "the layer-dropout buffer (training only)",
}
_SHOWN = 5  # entries listed per kind of mismatch
#: the sentence pooling (:data:`~.model.POOLS`; see :mod:`.graph` for the math)
Pool = Literal["avg", "cls", "max", "default"]


@dataclass(frozen=True)
class EncoderDims:
    """The XLM-R encoder's sizes from ``config.json``."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    positions: int
    type_vocab: int
    pad_token_id: int


@dataclass(frozen=True)
class EstimatorLayer:
    """One linear layer of the estimator: ``y = act(x @ weight.T + bias)``; ``weight`` float32
    ``[out, in]``, ``bias`` float32 ``[out]``, ``activation`` "Tanh", "Sigmoid" or None."""

    weight: np.ndarray = field(repr=False)
    bias: np.ndarray = field(repr=False)
    activation: str | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """``(out, in)``."""
        return int(self.weight.shape[0]), int(self.weight.shape[1])


@dataclass(frozen=True)
class CometSpec:
    """A checked COMET architecture with its weights.

    ``layer``: None for the layer mix, else the hidden state taken (0 = embeddings);
    ``mix``: "softmax" or "sparsemax" (None without a mix); ``scalar_parameters``: float32
    ``[layers + 1]`` (the unnormalised mix scalars) and ``gamma`` (float) with a mix;
    ``layer_norm``: per-sentence layer norm of each hidden state before the mix; ``pool``: "avg",
    "max", "cls" (over the mix / layer) or "default" (first token of the last hidden state; the mix
    and ``layer`` are then unused), always "cls" for ``unified_metric``; ``features``: see
    :data:`FEATURES`; ``estimator``: the linear layers in order, the last one ``[1, ...]``;
    ``encoder_config`` / ``encoder_weights``: what
    :func:`mtscore.engine.encoder.onnx_builder.build_encoder_graph` takes (``encoder.model.``
    stripped; arrays as stored); ``ignored``: checkpoint tensors present and unused.

    ``head_only``: True for a spec without the encoder: rebuilt by :func:`comet_head_spec` from the
    cached head of a checkpoint whose ONNX export is cached too, or a full spec whose weights
    :func:`~.scorer.load_comet` dropped once the export held them; ``encoder_weights`` is then
    empty; it scores with the exported graph but cannot build one
    (:func:`~.graph.build_comet_embedding_graph` refuses it). A full spec (``head_only`` False)
    has an empty ``encoder_weights`` only after an export with ``consume_weights`` took them (even
    one that failed half-way); building from it again is refused the same way."""

    class_identifier: str
    dims: EncoderDims
    layer: int | None
    mix: Literal["softmax", "sparsemax"] | None
    layer_norm: bool
    scalar_parameters: np.ndarray | None
    gamma: float | None
    pool: Pool
    features: tuple[str, ...]
    estimator: tuple[EstimatorLayer, ...]
    encoder_config: dict[str, Any] = field(repr=False)
    encoder_weights: dict[str, np.ndarray] = field(repr=False)
    ignored: tuple[str, ...] = ()
    head_only: bool = False

    def __post_init__(self) -> None:
        # an encoder always has weights (embeddings at least): empty ones mean a spec built without
        # them, which must say so, or a graph would be built from nothing
        if self.head_only and self.encoder_weights:
            raise ValueError(f"{self.class_identifier}: a head_only spec holds no encoder weights, "
                             f"got {len(self.encoder_weights)}")
        if not self.head_only and not self.encoder_weights:
            raise ValueError(f"{self.class_identifier}: no encoder weights; only a head_only spec "
                             "(whose graph is already exported) may lack them")

    @property
    def feature_dim(self) -> int:
        return len(self.features) * self.dims.hidden


def _dims(config: Mapping[str, Any], where: str) -> EncoderDims:
    def num(key: str, default: int | None = None) -> int:
        v = config.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise CheckpointError(f"{where}: {key}: {v!r}: expected a non-negative integer")
        return v

    dims = EncoderDims(hidden=num("hidden_size"), layers=num("num_hidden_layers"), heads=num("num_attention_heads"),
                       intermediate=num("intermediate_size"), vocab=num("vocab_size"),
                       positions=num("max_position_embeddings"), type_vocab=num("type_vocab_size", 1),
                       pad_token_id=num("pad_token_id", 1))
    if dims.heads == 0 or dims.hidden % dims.heads:
        raise CheckpointError(f"{where}: hidden_size {dims.hidden} is not a multiple of num_attention_heads "
                              f"{dims.heads}")
    pet = config.get("position_embedding_type", "absolute")
    if pet not in (None, "absolute"):
        raise CheckpointError(f"{where}: position_embedding_type {pet!r} is not supported (XLM-R uses absolute)")
    if config.get("hidden_act", "gelu") != "gelu":
        raise CheckpointError(f"{where}: hidden_act {config.get('hidden_act')!r} is not supported (XLM-R uses gelu)")
    return dims


def _encoder_shapes(d: EncoderDims) -> dict[str, tuple[int, ...]]:
    """Every parameter of ``XLMRobertaModel(add_pooling_layer=False)`` with its shape."""
    H, F = d.hidden, d.intermediate
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (d.vocab, H),
        "embeddings.position_embeddings.weight": (d.positions, H),
        "embeddings.LayerNorm.weight": (H,), "embeddings.LayerNorm.bias": (H,),
    }
    if d.type_vocab:
        shapes["embeddings.token_type_embeddings.weight"] = (d.type_vocab, H)
    for i in range(d.layers):
        p = f"encoder.layer.{i}."
        for lin, (out, inp) in {"attention.self.query": (H, H), "attention.self.key": (H, H),
                                "attention.self.value": (H, H), "attention.output.dense": (H, H),
                                "intermediate.dense": (F, H), "output.dense": (H, F)}.items():
            shapes[p + lin + ".weight"] = (out, inp)
            shapes[p + lin + ".bias"] = (out,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + ln + ".weight"] = (H,)
            shapes[p + ln + ".bias"] = (H,)
    return {ENCODER_PREFIX + k: v for k, v in shapes.items()}


def _estimator_shapes(in_dim: int, hidden_sizes: list[int]) -> dict[str, tuple[int, ...]]:
    sizes = [in_dim, *hidden_sizes, 1]
    shapes: dict[str, tuple[int, ...]] = {}
    for j in range(len(sizes) - 1):
        shapes[f"estimator.ff.{3 * j}.weight"] = (sizes[j + 1], sizes[j])
        shapes[f"estimator.ff.{3 * j}.bias"] = (sizes[j + 1],)
    return shapes


def _ignored_shapes(d: EncoderDims) -> dict[str, tuple[int, ...]]:
    return {ENCODER_PREFIX + "embeddings.position_ids": (1, d.positions),
            ENCODER_PREFIX + "pooler.dense.weight": (d.hidden, d.hidden),
            ENCODER_PREFIX + "pooler.dense.bias": (d.hidden,),
            "layerwise_attention.dropout_mask": (d.layers + 1,),
            "layerwise_attention.dropout_fill": (d.layers + 1,)}


def _listed(names: list[str]) -> str:
    more = f" (+{len(names) - _SHOWN} more)" if len(names) > _SHOWN else ""
    return ", ".join(names[:_SHOWN]) + more


def _check_tensors(state: Mapping[str, np.ndarray], expected: Mapping[str, tuple[int, ...]],
                   optional: Mapping[str, tuple[int, ...]], ckpt: str, origin: str) -> list[str]:
    """Raise one CheckpointError listing the first few missing, unexpected, misshaped and
    non-float tensors; return the optional ones present."""
    missing = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected and k not in optional]
    shaped = [f"{k} {list(state[k].shape)} (expected {list(want)})"
              for table in (expected, optional) for k, want in table.items()
              if k in state and tuple(state[k].shape) != want]
    typed = [f"{k} {state[k].dtype}" for k in expected if k in state and state[k].dtype.kind != "f"]
    parts = [f"{what}: {_listed(items)}" for what, items in
             (("missing", missing), ("unexpected", extra), ("wrong shape", shaped), ("not floating point", typed))
             if items]
    if parts:
        raise CheckpointError(f"{ckpt}: the tensors do not match the architecture of {origin}: " + "; ".join(parts))
    return [k for k in optional if k in state]


def comet_spec(hparams: Mapping[str, Any], config: Mapping[str, Any], state: Mapping[str, np.ndarray], *,
               hparams_path: Path | str = "hparams.yaml", config_path: Path | str = "config.json",
               checkpoint_path: Path | str = "model.ckpt") -> CometSpec:
    """The :class:`CometSpec` of a model from its hyper-parameters, its encoder's ``config.json`` and
    its state dict (``{name: array}``, as :func:`~mtscore.engine.checkpoints.read_checkpoint` gives).
    The paths only name the files in errors. Raises :class:`CheckpointError`: unsupported
    hyper-parameters (:func:`~.model.check_hparams`), a bad ``config.json``, a layer number beyond the
    encoder, or tensors missing, left over, misshaped or not floating point (the first few of each
    listed in one line)."""
    return _derive(hparams, config, state, None, str(hparams_path), str(config_path), str(checkpoint_path))


def comet_head_spec(hparams: Mapping[str, Any], config: Mapping[str, Any], head: Mapping[str, np.ndarray],
                    ignored: Sequence[str], *, hparams_path: Path | str = "hparams.yaml",
                    config_path: Path | str = "config.json", head_path: Path | str = "head.npz") -> CometSpec:
    """The ``head_only`` :class:`CometSpec` (no encoder weights) of a model whose head tensors
    (:func:`head_tensors` of its full spec) are ``head``, derived and checked as :func:`comet_spec`
    derives and checks the whole state dict; ``ignored``: the full spec's ``ignored`` (names of
    :data:`IGNORED`). Only for scoring with an ONNX export already built from the full spec.
    Raises :class:`CheckpointError` (naming ``head_path``) as :func:`comet_spec` does, and for an
    ``ignored`` name that is not in :data:`IGNORED`."""
    unknown = [k for k in ignored if k not in IGNORED]
    if unknown:
        raise CheckpointError(f"{head_path}: ignored tensors not known to be unused: {_listed(unknown)}")
    return _derive(hparams, config, head, tuple(ignored), str(hparams_path), str(config_path), str(head_path))


def head_tensors(spec: CometSpec) -> dict[str, np.ndarray]:
    """The checkpoint tensors besides the encoder that ``spec`` was derived from, as float32 under
    their checkpoint names (``estimator.ff.{3j}.weight``/``.bias``; with a layer mix
    ``layerwise_attention.scalar_parameters.{i}`` ``[1]`` and ``layerwise_attention.gamma`` ``[1]``):
    what :func:`comet_head_spec` takes to rebuild ``spec`` without the encoder, bit for bit."""
    out: dict[str, np.ndarray] = {}
    for j, layer in enumerate(spec.estimator):
        out[f"estimator.ff.{3 * j}.weight"] = layer.weight
        out[f"estimator.ff.{3 * j}.bias"] = layer.bias
    if spec.layer is None:
        assert spec.scalar_parameters is not None
        assert spec.gamma is not None
        for i, v in enumerate(spec.scalar_parameters):
            out[f"layerwise_attention.scalar_parameters.{i}"] = np.array([v], dtype=np.float32)
        out["layerwise_attention.gamma"] = np.array([spec.gamma], dtype=np.float32)
    return out


def _derive(hparams: Mapping[str, Any], config: Mapping[str, Any], state: Mapping[str, np.ndarray],
            head_only_ignored: tuple[str, ...] | None, hparams_path: str, config_path: str,
            tensors_path: str) -> CometSpec:
    """:func:`comet_spec` (``head_only_ignored`` None: ``state`` is the whole state dict) or
    :func:`comet_head_spec` (``state`` holds the head's tensors only; the spec's ``ignored`` given)."""
    head_only = head_only_ignored is not None
    check_hparams(hparams, hparams_path)
    cid = str(hparams["class_identifier"])
    d = _dims(config, config_path)
    layer_key = "sent_layer" if cid == "unified_metric" else "layer"
    layer_value = hparams.get(layer_key, "mix")
    layer = None if layer_value == "mix" else int(layer_value)
    if layer is not None and layer > d.layers:
        raise CheckpointError(f"{hparams_path}: {layer_key}: {layer} is beyond the encoder's {d.layers} layers "
                              f"({config_path})")
    features = FEATURES[cid]
    hidden_sizes = list(hparams["hidden_sizes"])
    expected = {} if head_only else _encoder_shapes(d)
    if layer is None:
        expected.update({f"layerwise_attention.scalar_parameters.{i}": (1,) for i in range(d.layers + 1)})
        expected["layerwise_attention.gamma"] = (1,)
    expected.update(_estimator_shapes(len(features) * d.hidden, hidden_sizes))
    ignored = _check_tensors(state, expected, {} if head_only else _ignored_shapes(d), tensors_path,
                             f"{hparams_path} and {config_path}")
    if head_only_ignored is not None:
        ignored = list(head_only_ignored)

    def f32(name: str) -> np.ndarray:
        return np.ascontiguousarray(state[name], dtype=np.float32)

    act = estimator_activation(hparams["activations"])
    final = estimator_activation(hparams["final_activation"]) if hparams["final_activation"] is not None else None
    n_lin = len(hidden_sizes) + 1
    estimator = tuple(EstimatorLayer(f32(f"estimator.ff.{3 * j}.weight"), f32(f"estimator.ff.{3 * j}.bias"),
                                     act if j < n_lin - 1 else final) for j in range(n_lin))
    scalars = gamma = None
    mix: Literal["softmax", "sparsemax"] | None = None
    if layer is None:
        scalars = np.concatenate([f32(f"layerwise_attention.scalar_parameters.{i}") for i in range(d.layers + 1)])
        gamma = float(f32("layerwise_attention.gamma")[0])
        mix = "sparsemax" if hparams["layer_transformation"] == "sparsemax" else "softmax"
    pool = cast(Pool, "cls" if cid == "unified_metric" else hparams["pool"])  # a POOLS value: check_hparams
    encoder_config = dict(config)
    encoder_config["model_type"] = "xlm-roberta"  # COMET builds XLMRobertaModel whatever config.json says
    weights = {} if head_only else {k[len(ENCODER_PREFIX):]: v for k, v in state.items()
                                    if k.startswith(ENCODER_PREFIX) and k in expected}
    return CometSpec(class_identifier=cid, dims=d, layer=layer, mix=mix,
                     layer_norm=bool(hparams.get("layer_norm", False)) if layer is None else False,
                     scalar_parameters=scalars, gamma=gamma, pool=pool, features=features, estimator=estimator,
                     encoder_config=encoder_config, encoder_weights=weights, ignored=tuple(ignored),
                     head_only=head_only)


def load_comet_spec(files: CometModelFiles) -> CometSpec:
    """:func:`comet_spec` of a resolved model: its checkpoint read with the restricted reader."""
    state = read_checkpoint(files.checkpoint)
    return comet_spec(files.hparams, files.config, state, hparams_path=files.hparams_file,
                      config_path=files.encoder_folder / "config.json", checkpoint_path=files.checkpoint)
