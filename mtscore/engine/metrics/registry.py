"""Metric names used by the batch API, ``compare`` and the CLI."""
from __future__ import annotations

import importlib

#: metric name -> (module, class, default constructor arguments)
METRICS = {
    "bleu": ("mtscore.engine.metrics.bleu", "BLEU", {}),
    "chrf": ("mtscore.engine.metrics.chrf", "CHRF", {}),
    "chrf++": ("mtscore.engine.metrics.chrf", "CHRF", {"word_order": 2}),
    "ter": ("mtscore.engine.metrics.ter", "TER", {}),
    "wer": ("mtscore.engine.metrics.wer", "WER", {}),
    "per": ("mtscore.engine.metrics.wer", "PER", {}),
    "cer": ("mtscore.engine.metrics.wer", "CER", {}),
    "eed": ("mtscore.engine.metrics.eed", "EED", {}),
    "meteor": ("mtscore.engine.metrics.meteor", "METEOR", {}),
}


#: constructor defaults where a metric scores single sentences (the decoder API, n-best, MBR,
#: RL rewards): BLEU with effective order, as sacrebleu's ``--sentence-level`` and the advice of
#: its ``sentence_score`` (without it, a short sentence with no 4-gram match scores 0, an exact
#: match of two words included)
SENTENCE_DEFAULTS = {"bleu": {"effective_order": True}}


def sentence_options(name: str, options: dict) -> dict:
    """``options`` over :data:`SENTENCE_DEFAULTS` of metric ``name`` (the caller's options win)."""
    return {**SENTENCE_DEFAULTS.get(name.lower(), {}), **options}


def make_sentence_metric(name: str, **kwargs):
    """:func:`make_metric` with :data:`SENTENCE_DEFAULTS` (the caller's options win)."""
    return make_metric(name, **sentence_options(name, kwargs))


def make_metric(name: str, **kwargs):
    """A metric object from its name (bleu, chrf, chrf++, ter, wer, per, cer, eed, meteor) and constructor arguments."""
    key = name.lower()
    if key not in METRICS:
        raise ValueError(f"unknown metric {name!r}; choose from {', '.join(METRICS)}")
    mod, cls, defaults = METRICS[key]
    for opt, value in defaults.items():  # a name that fixes an option means it ("chrf++": word order 2)
        if opt in kwargs and kwargs[opt] != value:
            raise ValueError(f"metric {name!r} means {opt}={value!r}, but {opt}={kwargs[opt]!r} was given; "
                             f"use the plain name (e.g. 'chrf') with {opt}={kwargs[opt]!r}")
    klass = getattr(importlib.import_module(mod), cls)
    try:
        return klass(**{**defaults, **kwargs})
    except TypeError:
        _check_options(name, klass, kwargs)  # names the unknown options, if that was it
        raise


def _check_options(name: str, klass, kwargs: dict) -> None:
    """A ``TypeError`` naming the unknown options and the known ones (not Python's bare
    "unexpected keyword argument" of the constructor). Only on the error path: ``inspect``
    costs milliseconds to import."""
    import inspect

    params = inspect.signature(klass).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(set(kwargs) - set(params))
    if unknown:
        known = ", ".join(n for n in params if n != "references")
        raise TypeError(f"{name}: unknown option(s) {', '.join(unknown)}; its options: {known}") from None
