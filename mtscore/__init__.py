"""mtscore: compiled, sacrebleu-identical MT evaluation.

Public names are imported lazily so that ``import mtscore`` (and the CLI) stays fast. The
metric classes (``mtscore.BLEU``, ``mtscore.BERTScore``, ...) are those of the metric registry
(:mod:`mtscore.engine.metrics.registry`), read on first use.
"""
from ._version import __version__ as __version__

_LAZY = {
    "score": ("mtscore.bindings.api.batch", "score"),
    "score_files": ("mtscore.bindings.api.batch", "score_files"),
    "score_table": ("mtscore.bindings.api.batch", "score_table"),
    "score_stream": ("mtscore.bindings.api.batch", "score_stream"),
    "score_ray": ("mtscore.bindings.ray", "score_ray"),
    "compare_stats": ("mtscore.engine.significance", "compare_stats"),
    "compare": ("mtscore.engine.significance", "compare"),
    "report": ("mtscore.bindings.report", "report"),
    "compare_segment_scores": ("mtscore.engine.significance", "compare_segment_scores"),
    "register_metric": ("mtscore.engine.metrics.registry", "register_metric"),
    "MetricSpec": ("mtscore.engine.metrics.spec", "MetricSpec"),
    "Option": ("mtscore.engine.metrics.spec", "Option"),
    "OptionGroup": ("mtscore.engine.metrics.spec", "OptionGroup"),
    "decoder": ("mtscore.decoder", None),  # the module: sentence_scores, pairwise, mbr, n-best
}


def _exports() -> dict:
    """``_LAZY`` plus the registry's metric classes (``{"BLEU": (module, "BLEU"), ...}``)."""
    from .engine.metrics.registry import specs

    return {**{s.cls: (s.module, s.cls) for s in specs() if s.export}, **_LAZY}


def __getattr__(name):
    if name == "__all__":
        return [*sorted(_exports()), "__version__"]
    try:
        mod, attr = _LAZY[name] if name in _LAZY else _exports()[name]
    except KeyError:
        raise AttributeError(f"module 'mtscore' has no attribute {name!r}") from None
    import importlib

    module = importlib.import_module(mod)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__():
    return __getattr__("__all__")
