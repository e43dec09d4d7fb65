"""Metric options given by name, one way for every face that takes metric names
(``mtscore.score``, ``score_table``, ``score_stream``, ``score_files``, ``score_ray``):
``metric_kwargs={registered metric name or family: {constructor argument: value}}``, with the
older ``bleu_kwargs`` / ``chrf_kwargs`` / ``ter_kwargs`` / ``bertscore_kwargs`` arguments as
aliases of its entries.

:func:`merge_metric_options` checks and merges both spellings into one
``{registered name: options}`` dict; :func:`options_for` picks a metric's options from it (its
own entry, else its family's: chrf++ takes ``"chrf"``'s).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engine.metrics.registry import METRICS, get_spec


def merge_metric_options(metric_kwargs: Mapping[str, Mapping[str, Any]] | None, *,
                         caller: str = "score", **aliases: Mapping[str, Any] | None) -> dict[str, dict]:
    """``{registered metric name (lower case): options dict}`` of ``metric_kwargs`` (names in
    any case) and the older ``<name>_kwargs`` arguments, given as ``aliases`` ``name=options``
    (None: not given).

    caller : the function named in the errors (``"score"``, ``"score_ray"``, ...)

    Raises ValueError for an unregistered name (listing the registered ones) and for one
    metric given twice (both ways, or in two cases); TypeError for a ``metric_kwargs`` or an
    entry that is not a dict.
    """
    out: dict[str, dict] = {}
    given: dict[str, str] = {}  # name -> how it was given (for the errors)
    if metric_kwargs is not None and not isinstance(metric_kwargs, Mapping):
        raise TypeError(f"{caller}: metric_kwargs must be a dict {{metric name: {{option: value}}}}, "
                        f"got {type(metric_kwargs).__name__}")
    for key, kw in (metric_kwargs or {}).items():
        name = key.lower() if isinstance(key, str) else key
        if name not in METRICS:
            raise ValueError(f"{caller}: metric_kwargs names an unknown metric {key!r}; "
                             f"registered metrics: {', '.join(METRICS)}")
        _add(out, given, name, kw, f"metric_kwargs[{key!r}]", caller)
    for name, alias in aliases.items():
        if alias is not None:
            _add(out, given, name, alias, f"{name}_kwargs", caller)
    return out


def options_for(name: str, options: Mapping[str, Mapping[str, Any]]) -> dict:
    """A copy of the options of registered metric ``name`` in ``options`` (a
    :func:`merge_metric_options` result): its own entry, else its family's, else ``{}``.
    An unknown ``name`` is the registry's error (:func:`~mtscore.engine.metrics.registry.get_spec`)."""
    spec = get_spec(name)
    return dict(options.get(name, options.get(spec.family, {})))


def _add(out: dict[str, dict], given: dict[str, str], name: str, kw, how: str, caller: str) -> None:
    if name in given:
        raise ValueError(f"{caller}: options for metric {name!r} given twice: as {given[name]} "
                         f"and as {how}; give them once")
    if not isinstance(kw, Mapping):
        raise TypeError(f"{caller}: {how} must be a dict of constructor arguments, got {type(kw).__name__}")
    out[name], given[name] = dict(kw), how
