"""The metric adapter of the significance tests: statistics, exact totals and scores of summed
rows from an mtscore metric or a sacrebleu metric object (sacrebleu's objects spell the hooks
with an underscore and cache references themselves).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..metrics import bootstrap
from ..metrics.base import Metric
from ..metrics.bootstrap import RowScorer

__all__ = [
    "corpus_score",
    "exact_total",
    "prepare_refs",
    "row_scorer",
    "score_fn",
    "segment_stats",
    "systems_stats",
    "without_skipped",
]


def score_fn(metric):
    """The score of one summed row (sacrebleu's metric objects spell it with an underscore)."""
    return bootstrap.score_fn(metric, isinstance(metric, Metric))


def row_scorer(metric, k: int) -> RowScorer:
    """Scores of many summed rows of ``metric`` (an mtscore or a sacrebleu metric)."""
    return RowScorer(metric, k, isinstance(metric, Metric))


def segment_stats(metric, hyps, refs=None) -> np.ndarray:
    """``(N, k)`` statistics matrix from an mtscore metric or a sacrebleu metric object."""
    if isinstance(metric, Metric):
        return np.asarray(metric.corpus_stats(hyps, refs))
    return np.array(metric._extract_corpus_statistics(hyps, refs))


def systems_stats(metric, systems) -> list[np.ndarray]:
    """Statistics of every system against the metric's prepared references (mtscore metrics:
    one call, repeated outputs scored once; sacrebleu metrics: system by system). Systems of
    another length than the references raise the metric's error."""
    if isinstance(metric, Metric):
        return [np.asarray(st) for st in metric.systems_stats(systems)]
    return [segment_stats(metric, h, None) for h in systems]


def prepare_refs(metric, refs) -> None:
    """Prepare references once for all systems (mtscore: ``prepare_references``; sacrebleu:
    the metric's reference cache)."""
    if refs is None:
        return
    if isinstance(metric, Metric):
        metric.prepare_references(refs)
    else:
        metric._ref_cache = metric._cache_references(refs)


def exact_total(metric, stats: np.ndarray) -> list:
    """Column sums as sacrebleu's ``sum_of_lists`` gives them (Python ints; floats summed
    sequentially)."""
    if isinstance(metric, Metric):
        return metric.sum_stats(stats)
    if stats.dtype.kind in "iub":
        return [int(x) for x in stats.sum(axis=0, dtype=np.int64)]
    return [float(x) for x in np.cumsum(stats, axis=0)[-1]]


def corpus_score(metric, stats: np.ndarray):
    """The corpus ``Score`` of an (N, k) statistics matrix (exact totals, the metric's formula)."""
    return score_fn(metric)(exact_total(metric, stats))


def without_skipped(metrics: Sequence[Any], stats: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """Drop the segments that a metric's ``missing_refs="skip"`` left out (no reference) from
    every system's statistics, so resampling draws only scored segments."""
    masks = [x for x in (m.skipped_segments() for m in metrics if isinstance(m, Metric)) if x is not None]
    if not masks:
        return stats
    keep = ~np.logical_or.reduce(masks)
    return [[st[keep] for st in row] for row in stats]
