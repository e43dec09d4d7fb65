"""Sentence encoders for BERTScore on ONNX Runtime (no torch at run time).

``load_encoder(model, layer)`` returns an :class:`Encoder`; Hugging Face model directories are
exported to ONNX directly from their weights (``onnx_builder``) and cached (``cache``; an
unwritable cache falls back to a temporary directory with an :class:`EncoderCacheWarning`).
"""
from .cache import EncoderCacheError, EncoderCacheWarning
from .hub import ModelSource, resolve_model, resolve_source
from .model_dir import EncoderError, EncoderWarning, default_model_dir
from .runtime import DEFAULT_BATCH_TOKENS, Encoder, cuda_available, load_encoder

__all__ = [
           "DEFAULT_BATCH_TOKENS",
           "Encoder",
           "EncoderCacheError",
           "EncoderCacheWarning",
           "EncoderError",
           "EncoderWarning",
           "ModelSource",
           "cuda_available",
           "default_model_dir",
           "load_encoder",
           "resolve_model",
           "resolve_source",
]
