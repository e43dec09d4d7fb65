"""mtscore: compiled, sacrebleu-identical MT evaluation.

Public names are imported lazily so that ``import mtscore`` (and the CLI) stays fast.
"""
from ._version import __version__

_LAZY = {
    "BLEU": ("mtscore.engine.metrics.bleu", "BLEU"),
    "CHRF": ("mtscore.engine.metrics.chrf", "CHRF"),
    "TER": ("mtscore.engine.metrics.ter", "TER"),
    "WER": ("mtscore.engine.metrics.wer", "WER"),
    "PER": ("mtscore.engine.metrics.wer", "PER"),
    "CER": ("mtscore.engine.metrics.wer", "CER"),
    "EED": ("mtscore.engine.metrics.eed", "EED"),
    "METEOR": ("mtscore.engine.metrics.meteor", "METEOR"),
    "BERTScore": ("mtscore.engine.bertscore", "BERTScore"),
    "score": ("mtscore.bindings.api", "score"),
    "score_files": ("mtscore.bindings.api", "score_files"),
    "score_table": ("mtscore.bindings.api", "score_table"),
    "score_stream": ("mtscore.bindings.api", "score_stream"),
    "score_ray": ("mtscore.bindings.ray", "score_ray"),
    "compare_stats": ("mtscore.engine.significance", "compare_stats"),
    "compare": ("mtscore.engine.significance", "compare"),
    "compare_segment_scores": ("mtscore.engine.significance", "compare_segment_scores"),
    "decoder": ("mtscore.decoder", None),  # the module: sentence_scores, pairwise, mbr, n-best
}

__all__ = [*sorted(_LAZY), "__version__"]


def __getattr__(name):
    try:
        mod, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'mtscore' has no attribute {name!r}") from None
    import importlib

    module = importlib.import_module(mod)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
