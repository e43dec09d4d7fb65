"""The decoder API's shared arguments: the metric from a name + options or an object
(:func:`resolve_metric`), its direction (:func:`lower_is_better`) and the checks of ``workers``
and of text sequences that every entry point of :mod:`mtscore.bindings.decoder` applies."""
from __future__ import annotations

from collections.abc import Sequence

from ...engine.metrics.base import Metric
from ...engine.metrics.registry import make_sentence_metric
from ...kernels._lists import first_non_str

__all__ = ["check_workers", "is_seq", "lower_is_better", "resolve_metric", "texts"]


#: set once the sentence-BLEU-without-effective-order warning was given (once per process)
_WARNED: list[bool] = []


def resolve_metric(metric: str | Metric, options: dict, workers: int | None = None) -> Metric:
    """A metric object from a name + constructor options, or the given object (no options).
    By name, sentence-level defaults apply (``registry.SENTENCE_DEFAULTS``: BLEU with
    ``effective_order=True`` unless ``options`` say otherwise, as sacrebleu's sentence mode)."""
    if isinstance(metric, str):
        m = make_sentence_metric(metric, **options)
    else:
        if options:
            raise ValueError(f"metric options {sorted(options)} given with a metric object; pass "
                             "a metric name, or set the options on the object")
        if not hasattr(metric, "pairwise_scores") or not hasattr(metric, "stats_and_scores"):
            raise TypeError(f"metric must be a name or an mtscore metric, got {type(metric).__name__}")
        m = metric
    if workers is not None:
        check_workers(workers)
        m.workers = workers
    if getattr(m, "effective_order", None) is False and not _WARNED:  # BLEU without it: say so once
        import warnings

        _WARNED.append(True)
        warnings.warn("sentence-level BLEU without effective_order: a sentence with no match of "
                      "some n-gram order scores 0 (sacrebleu recommends effective_order=True, "
                      "the default here)", UserWarning, stacklevel=3)
    return m


def check_workers(workers) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError(f"workers must be an int >= 0 (0: all cores), got {workers!r}")


def lower_is_better(metric: Metric) -> bool:
    """Whether lower scores are better (the metric says so: TER, WER, PER, CER, EED are error rates)."""
    return bool(metric.lower_is_better)


def texts(items, what: str) -> list[str]:
    if isinstance(items, str):
        raise TypeError(f"{what} must be a sequence of strings, not a single string")
    out = items if type(items) is list else list(items)
    i = first_non_str(out)  # a C loop over the items
    if i >= 0 and not all(isinstance(x, str) for x in out):  # str subclasses are fine
        i = next(j for j, x in enumerate(out) if not isinstance(x, str))
        raise TypeError(f"{what}[{i}] must be a str, got {type(out[i]).__name__}")
    return out


def is_seq(r) -> bool:
    """A non-string sequence (lists and tuples without the slow ABC check)."""
    return type(r) in (list, tuple) or (not isinstance(r, str) and isinstance(r, Sequence))
