"""A COMET model's files: the model folder, its hyper-parameters and its encoder's config and tokenizer.

A COMET model folder (what ``comet.download_model`` fetches) holds::

    hparams.yaml              the hyper-parameters (read by mtscore's flat-YAML reader)
    checkpoints/model.ckpt    a PyTorch Lightning checkpoint (read by the restricted reader)

:func:`resolve_comet_model` takes a local folder (or its ``checkpoints/model.ckpt``), a Hugging Face
name (``Unbabel/wmt22-comet-da``) or a bare name, which means the repository of that name under
``Unbabel`` (``wmt22-comet-da`` -> ``Unbabel/wmt22-comet-da``; all released COMET models live there).
Names are looked up in the Hugging Face cache and downloaded (two files) only when
``HF_HUB_OFFLINE`` is not set and huggingface_hub (the ``hub`` extra) is installed; see
:func:`mtscore.engine.encoder.hub.fetch_repo_files`.

The encoder's ``config.json`` and tokenizer (``tokenizer.json`` or ``sentencepiece.bpe.model``, never
its weights: they are in the checkpoint) come from the ``encoder`` argument when given (a local
folder or a Hub name), else from the Hub repository named by ``pretrained_model`` in
``hparams.yaml`` (``xlm-roberta-large``, ``microsoft/infoxlm-large``), cache first as above; a
cached snapshot under the Hub's new name of a renamed encoder (``FacebookAI/xlm-roberta-large``,
:data:`RENAMED_ENCODERS`) serves too.

The hyper-parameters are checked here, before any weight is read (:func:`check_hparams`); every
error is one line naming the file (or option) and the key.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checkpoints import CheckpointError, read_hparams
from ..encoder.hub import ModelSource, fetch_repo_files, looks_like_repo_id

__all__ = [
    "ACTIVATIONS",
    "CLASS_IDENTIFIERS",
    "COMET_ORG",
    "ENCODER_MODELS",
    "CometModelFiles",
    "check_hparams",
    "comet_repo_id",
    "estimator_activation",
    "resolve_comet_model",
]

#: the COMET model classes mtscore scores (``class_identifier`` in hparams.yaml)
CLASS_IDENTIFIERS = ("regression_metric", "referenceless_regression_metric", "unified_metric")
#: ``encoder_model`` values whose encoder mtscore builds (XLM-R large / InfoXLM large are XLM-R)
ENCODER_MODELS = ("XLM-RoBERTa",)
#: the Hub organisation a bare model name belongs to
COMET_ORG = "Unbabel"
#: ``pool`` values of the regression classes: every value unbabel-comet 2.2.7's
#: ``compute_sentence_embedding`` accepts (``unified_metric`` always takes the first token; see :mod:`.graph`)
POOLS = ("avg", "cls", "max", "default")
#: ``layer_transformation`` values: "sparsemax" is sparsemax, the others softmax (as in unbabel-comet)
LAYER_TRANSFORMATIONS = ("softmax", "sparsemax", "sparsemax_patch")
#: ``input_segments`` of a unified_metric that mtscore scores (the joint <s> mt </s></s> src </s>)
UNIFIED_SEGMENTS = ("mt", "src")

#: estimator activations (``torch.nn`` classes, named as ``name.title()`` finds them, as unbabel-comet does)
ACTIVATIONS = ("Tanh", "Sigmoid")

#: encoders the Hub has renamed since COMET's files named them: the cache may hold either name
RENAMED_ENCODERS = {"xlm-roberta-large": "FacebookAI/xlm-roberta-large",
                    "xlm-roberta-base": "FacebookAI/xlm-roberta-base"}

_MODEL_FILES = ("hparams.yaml", "checkpoints/model.ckpt")
_ENCODER_PATTERNS = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                     "sentencepiece.bpe.model")
_ENCODER_REQUIRED = (("config.json",), ("tokenizer.json", "sentencepiece.bpe.model"))


@dataclass(frozen=True)
class CometModelFiles:
    """Where a COMET model's files are and what its hyper-parameters say.

    ``name``: the Hub repository id, or the folder's name for a local folder (for signatures);
    ``folder``: the model folder; ``revision``: the Hub commit (None for a local folder);
    ``hparams``: ``hparams.yaml`` as read (checked by :func:`check_hparams`);
    ``encoder_name``, ``encoder_folder``, ``encoder_revision``: the same for the encoder's config and
    tokenizer; ``config``: the encoder's ``config.json``."""

    name: str
    folder: Path
    revision: str | None
    hparams: Mapping[str, Any]
    encoder_name: str
    encoder_folder: Path
    encoder_revision: str | None
    config: Mapping[str, Any]
    #: the ``.ckpt`` file given instead of the folder (None: ``checkpoints/model.ckpt``)
    checkpoint_file: Path | None = None
    #: the encoder's folder was given (``encoder=`` / ``--comet-encoder``) instead of the one
    #: hparams.yaml's ``pretrained_model`` names: the signature then names its files' hash
    encoder_given: bool = False

    @property
    def hparams_file(self) -> Path:
        return self.folder / "hparams.yaml"

    @property
    def checkpoint(self) -> Path:
        """The checkpoint read: the ``.ckpt`` file given, else the folder's ``checkpoints/model.ckpt``."""
        return self.checkpoint_file or self.folder / "checkpoints" / "model.ckpt"

    @property
    def class_identifier(self) -> str:
        return str(self.hparams["class_identifier"])

    @property
    def encoder_files(self) -> list[Path]:
        """The encoder files the tokenizer is built from, in a fixed order: ``tokenizer.json`` (else
        ``sentencepiece.bpe.model``), ``special_tokens_map.json`` and ``tokenizer_config.json`` where
        present, and ``config.json``."""
        d = self.encoder_folder
        out = [self.tokenizer_file or d / "sentencepiece.bpe.model"]
        out += [d / f for f in ("special_tokens_map.json", "tokenizer_config.json") if (d / f).is_file()]
        return [*out, d / "config.json"]

    def encoder_sha256(self) -> str:
        """sha256 (hex) of the lines ``<file name> <file's sha256>\\n`` of :attr:`encoder_files`:
        the identity of the tokenizer and config a signature names (``enc:`` its first 12)."""
        from ..encoder.model_dir import memo_file_sha256

        h = hashlib.sha256()
        for f in self.encoder_files:
            h.update(f"{f.name} {memo_file_sha256(f)}\n".encode())
        return h.hexdigest()

    @property
    def tokenizer_file(self) -> Path | None:
        """``tokenizer.json`` of the encoder, or None when only ``sentencepiece.bpe.model`` is there."""
        f = self.encoder_folder / "tokenizer.json"
        return f if f.is_file() else None


def comet_repo_id(model: str) -> str:
    """The Hub repository of a model name: ``ORG/NAME`` as given, a bare ``NAME`` under Unbabel."""
    return model if "/" in model else f"{COMET_ORG}/{model}"


def estimator_activation(name: Any) -> str | None:
    """The ``torch.nn`` class an activation name means to unbabel-comet (``name.title()``: "tanh" ->
    "Tanh") when it is one of :data:`ACTIVATIONS`, else None."""
    if not isinstance(name, str):
        return None
    t = name.title()
    return t if t in ACTIVATIONS else None


def _layer_ok(value: Any) -> bool:
    return value == "mix" or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def check_hparams(hparams: Mapping[str, Any], path: Path | str) -> None:
    """Refuse, with a :class:`CheckpointError` naming ``path`` and the key, hyper-parameters that
    mtscore does not score: a missing or unknown ``class_identifier`` (the supported ones listed),
    an ``encoder_model`` other than XLM-RoBERTa, a ``pool`` other than avg/cls/max/default (regression
    classes; unbabel-comet 2.2.7 knows no other and fails on it only when it first scores),
    a ``layer`` / ``sent_layer`` other than ``mix`` or a layer number, a true ``use_context``
    (document context), a missing or unknown ``layer_transformation`` or ``layer_norm`` (with
    ``mix``: mtscore does not guess unbabel-comet's class defaults), a missing ``pretrained_model``
    or ``hidden_sizes``, a missing or unknown ``activations`` / ``final_activation`` (Tanh,
    Sigmoid; null for the final one), and for ``unified_metric`` a ``layer`` that differs from
    ``sent_layer``, word-level training or ``input_segments`` other than ``[mt, src]``. (Layer
    numbers are checked against the encoder in :mod:`.spec`.)"""
    def refuse(key: str, what: str) -> CheckpointError:
        return CheckpointError(f"{path}: {key}: {what}")

    cid = hparams.get("class_identifier")
    if cid not in CLASS_IDENTIFIERS:
        shown = "missing" if cid is None else f"{cid!r} is not supported"
        raise refuse("class_identifier", f"{shown} (supported: {', '.join(CLASS_IDENTIFIERS)})")
    enc = hparams.get("encoder_model", "XLM-RoBERTa")
    if enc not in ENCODER_MODELS:
        raise refuse("encoder_model", f"{enc!r} is not supported (supported: {', '.join(ENCODER_MODELS)})")
    pm = hparams.get("pretrained_model")
    if not isinstance(pm, str) or not pm:
        raise refuse("pretrained_model", "missing; it names the encoder whose config and tokenizer COMET uses")
    if hparams.get("use_context"):
        raise refuse("use_context", "true (document-level context pooling) is not supported")
    hs = hparams.get("hidden_sizes")
    if not isinstance(hs, list) or not hs or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0
                                                      for h in hs):
        raise refuse("hidden_sizes", f"{hs!r}: expected a non-empty list of positive integers")
    for key in ("activations", "final_activation"):
        if key not in hparams:
            raise refuse(key, "missing (mtscore does not guess unbabel-comet's class defaults)")
        act = hparams[key]
        if not (act is None and key == "final_activation") and estimator_activation(act) is None:
            allowed = ", ".join(ACTIVATIONS) + (", null" if key == "final_activation" else "")
            raise refuse(key, f"{act!r} is not supported (supported: {allowed})")
    layer_key = "sent_layer" if cid == "unified_metric" else "layer"
    layer = hparams.get(layer_key, "mix")
    if not _layer_ok(layer):
        raise refuse(layer_key, f"{layer!r} is not supported (supported: mix, or a layer number)")
    if layer == "mix":
        for key in ("layer_transformation", "layer_norm"):
            if key not in hparams:
                raise refuse(key, f"missing (needed with {layer_key}: mix; unbabel-comet would take its "
                                  "class default, mtscore does not guess)")
        lt = hparams["layer_transformation"]
        if lt not in LAYER_TRANSFORMATIONS:
            raise refuse("layer_transformation",
                         f"{lt!r} is not supported (supported: {', '.join(LAYER_TRANSFORMATIONS)})")
        if not isinstance(hparams["layer_norm"], bool):
            raise refuse("layer_norm", f"{hparams['layer_norm']!r}: expected true or false")
    if cid == "unified_metric":
        if "layer" in hparams and hparams["layer"] != layer:
            raise refuse("layer", f"{hparams['layer']!r} differs from sent_layer {layer!r} (which one "
                                  "unified_metric mixes is then unclear)")
        if hparams.get("word_level_training"):
            raise refuse("word_level_training", "true (word-level tags, as in xCOMET) is not supported")
        seg = hparams.get("input_segments", list(UNIFIED_SEGMENTS))
        if seg != list(UNIFIED_SEGMENTS):
            raise refuse("input_segments", f"{seg!r} is not supported (supported: [mt, src])")
    else:
        pool = hparams.get("pool")
        if pool is None:
            raise refuse("pool", f"missing (supported: {', '.join(POOLS)})")
        if pool not in POOLS:
            raise refuse("pool", f"{pool!r} is not supported (supported: {', '.join(POOLS)}: the values "
                                 "unbabel-comet 2.2.7 accepts)")


def _local_model_folder(model: str) -> Path | None:
    """The model folder of a local path: the folder itself, or two levels above a ``.ckpt`` file
    (where unbabel-comet's ``load_from_checkpoint`` looks for hparams.yaml)."""
    p = Path(model).expanduser()
    if not p.exists():
        return None
    p = p.absolute()
    if p.is_file():
        if p.suffix != ".ckpt":
            raise CheckpointError(f"--comet-model {model}: a file that is not a .ckpt; pass the COMET model "
                                  "folder (hparams.yaml and checkpoints/model.ckpt)")
        return p.parent.parent
    return p


def _model_source(model: str, revision: str | None) -> ModelSource:
    folder = _local_model_folder(model)
    if folder is not None:
        return ModelSource(folder, folder.name, None)
    if not looks_like_repo_id(model):
        raise CheckpointError(
            f"--comet-model {model!r}: no such file or folder, and not a COMET model name; pass a model "
            f"folder (hparams.yaml and checkpoints/model.ckpt) or a name such as {COMET_ORG}/wmt22-comet-da")
    return fetch_repo_files(comet_repo_id(model), _MODEL_FILES, [(f,) for f in _MODEL_FILES],
                            revision=revision, option="--comet-model",
                            local="pass the model folder (hparams.yaml and checkpoints/model.ckpt)")


def _encoder_source(encoder: str, from_hparams: Path | None) -> ModelSource:
    """The folder of the encoder's config and tokenizer: a local folder, else the Hub."""
    option = f"{from_hparams}: pretrained_model" if from_hparams is not None else "--comet-encoder"
    p = Path(encoder).expanduser()
    if p.is_dir():
        p = p.absolute()
        missing = [" or ".join(alts) for alts in _ENCODER_REQUIRED if not any((p / f).is_file() for f in alts)]
        if missing:
            raise CheckpointError(f"{option} {encoder}: the folder has no {', '.join(missing)} (the encoder's "
                                  "config and tokenizer)")
        return ModelSource(p, p.name, None)
    if not looks_like_repo_id(encoder):
        raise CheckpointError(f"{option} {encoder!r}: no such folder, and not a Hugging Face model name")
    renamed = {**RENAMED_ENCODERS, **{new: old for old, new in RENAMED_ENCODERS.items()}}
    also = (renamed[encoder],) if encoder in renamed else ()
    return fetch_repo_files(encoder, _ENCODER_PATTERNS, _ENCODER_REQUIRED, option=option, cached_as=also,
                            local="pass --comet-encoder DIR, a folder with its config.json and tokenizer.json "
                                  "(or sentencepiece.bpe.model)")


def _read_config(folder: Path) -> dict[str, Any]:
    f = folder / "config.json"
    try:
        config = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{f}: not a readable JSON file ({e})") from None
    if not isinstance(config, dict):
        raise CheckpointError(f"{f}: expected a JSON object, got {type(config).__name__}")
    return config


def resolve_comet_model(model: str | os.PathLike[str], *, revision: str | None = None,
                        encoder: str | os.PathLike[str] | None = None) -> CometModelFiles:
    """Locate a COMET model and its encoder's config and tokenizer; read and check ``hparams.yaml``.

    ``model``: a model folder, its ``checkpoints/model.ckpt``, a Hub name (``Unbabel/wmt22-comet-da``)
    or a bare name (``wmt22-comet-da``, looked up under Unbabel); ``revision``: a Hub branch, tag or
    commit of the model (names only); ``encoder``: a local folder or Hub name holding the encoder's
    ``config.json`` and ``tokenizer.json`` (or ``sentencepiece.bpe.model``), instead of
    ``pretrained_model`` from hparams.yaml. The checkpoint is not read here (see :mod:`.spec`), only
    required to exist. Raises :class:`CheckpointError` (files, hyper-parameters) or
    :class:`~mtscore.engine.encoder.EncoderError` (a Hub name that is not cached while offline, a
    failed download); both are :class:`~mtscore.errors.UserError`.
    """
    model = os.fspath(model)
    src = _model_source(model, revision)
    hparams = read_hparams(src.path)  # CheckpointError naming the folder when hparams.yaml is missing
    hfile = src.path / "hparams.yaml"
    check_hparams(hparams, hfile)
    given = Path(model).expanduser()
    # a .ckpt file given (e.g. checkpoints/epoch=3.ckpt): that file is read, as unbabel-comet's
    # load_from_checkpoint reads it, with the hparams.yaml two levels above it
    ckpt_file = given.absolute() if src.revision is None and given.is_file() else None
    ckpt = ckpt_file or src.path / "checkpoints" / "model.ckpt"
    if not ckpt.is_file():
        raise CheckpointError(f"{src.path}: checkpoints/model.ckpt missing; a COMET model folder holds "
                              "hparams.yaml and checkpoints/model.ckpt")
    if encoder is not None:
        enc = _encoder_source(os.fspath(encoder), None)
    else:
        enc = _encoder_source(str(hparams["pretrained_model"]), hfile)
    return CometModelFiles(name=src.name, folder=src.path, revision=src.revision, hparams=hparams,
                           encoder_name=enc.name, encoder_folder=enc.path, encoder_revision=enc.revision,
                           config=_read_config(enc.path), checkpoint_file=ckpt_file,
                           encoder_given=encoder is not None)
