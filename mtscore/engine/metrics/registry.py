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


def make_metric(name: str, **kwargs):
    """A metric object from its name (bleu, chrf, chrf++, ter, wer, per, cer, eed, meteor) and constructor arguments."""
    key = name.lower()
    if key not in METRICS:
        raise ValueError(f"unknown metric {name!r}; choose from {', '.join(METRICS)}")
    mod, cls, defaults = METRICS[key]
    return getattr(importlib.import_module(mod), cls)(**{**defaults, **kwargs})
