"""COMET (Rei et al., 2020; unbabel-comet 2.2.7) on mtscore's runtime, without torch.

:mod:`.model` locates a COMET model (a folder, or a Hugging Face name) and its encoder's config and
tokenizer and checks its ``hparams.yaml``; :mod:`.spec` derives the architecture from the
hyper-parameters, ``config.json`` and the checkpoint's tensors, and checks every tensor;
:mod:`.graph` builds the sentence-embedding ONNX graph (encoder + layer mix + pooling) and
:mod:`.export` caches it (:mod:`.head_cache` keeps the rest of the spec, so a warm load reads no
checkpoint); :mod:`.head` builds the estimator's features and runs the estimator
(numpy float32, or an ONNX graph); :mod:`.scorer` puts them together: :func:`load_comet` ->
:class:`CometScorer` (``score``, ``embed``).
"""
from .export import export_comet_embedding
from .graph import build_comet_embedding_graph
from .head import build_head_graph, comet_features, head_inputs, head_scores, head_scores_pairs
from .model import (
    CLASS_IDENTIFIERS,
    CometModelFiles,
    check_hparams,
    comet_repo_id,
    resolve_comet_model,
)
from .scorer import (
    CometInputError,
    CometReferencesIgnoredWarning,
    CometScorer,
    comet_graph_path,
    load_comet,
)
from .spec import FEATURES, CometSpec, EncoderDims, EstimatorLayer, comet_spec, load_comet_spec

__all__ = [
    "CLASS_IDENTIFIERS",
    "FEATURES",
    "CometInputError",
    "CometModelFiles",
    "CometReferencesIgnoredWarning",
    "CometScorer",
    "CometSpec",
    "EncoderDims",
    "EstimatorLayer",
    "build_comet_embedding_graph",
    "build_head_graph",
    "check_hparams",
    "comet_features",
    "comet_graph_path",
    "comet_repo_id",
    "comet_spec",
    "export_comet_embedding",
    "head_inputs",
    "head_scores",
    "head_scores_pairs",
    "load_comet",
    "load_comet_spec",
    "resolve_comet_model",
]
