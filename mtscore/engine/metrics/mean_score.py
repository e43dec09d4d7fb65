"""Metrics whose corpus score is the mean of their sentence scores (EED, METEOR).

Their per-segment statistics are ``[sentence score 0..1, 1]`` (``[0, 0]`` for a segment left out),
so the corpus score, the sum over segments and the score of any row follow from the statistics
alone; this class holds those hooks of the metric contract once."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Callable

import numpy as np

from .base import Metric, Score
from .symbols import PreparedSymbols

__all__ = ["MeanSentenceMetric", "sum_mean_stats"]


def sum_mean_stats(stats) -> list:
    """``[sum of the scores (added in segment order), count]`` of ``[score, count]`` statistics
    ``(N, 2)``: the sum of every metric scored as a mean of segment scores."""
    stats = np.asarray(stats, dtype=np.float64)
    if len(stats) == 0:
        return [0.0, 0]
    return [float(np.add.accumulate(stats[:, 0])[-1]), int(stats[:, 1].sum())]


class MeanSentenceMetric(Metric):
    """A :class:`Metric` scored as the mean of sentence scores; subclasses set ``_SCORE_TYPE``
    (called with ``(mean 0..1, count)``) and ``_NAME`` (used in messages) and implement
    :meth:`sentence_values`."""

    _SCORE_TYPE: Callable[[float, float], Score]
    _NAME: str

    def sentence_values(self, hyps: list[str], prepared: PreparedSymbols) -> np.ndarray:
        """float64 ``(N,)``: each segment's sentence score 0..1, NaN where it has no reference."""
        raise NotImplementedError  # pragma: no cover - abstract

    def stats(self, hyps, prepared: PreparedSymbols, warn: bool = True) -> np.ndarray:
        """``(N, 2)`` float64 ``[sentence score 0..1, 1]`` (``[0, 0]`` without a reference)."""
        hyps = self._coerce_hyps(hyps)
        if len(hyps) != prepared.n:
            raise ValueError(
                f"{self._NAME}: {len(hyps)} hypotheses but {prepared.n} reference segments; "
                "the hypothesis and reference files must have the same number of lines.")
        self._skipped(prepared, warn)  # the policy; sentence_values is NaN there (zero rows)
        scores = self.sentence_values(hyps, prepared)
        out = np.ones((len(hyps), 2), dtype=np.float64)
        out[:, 0] = scores
        out[np.isnan(scores)] = 0.0
        return out

    def rows_stats_and_scores(self, hyps: list[str], rows: np.ndarray, prepared: PreparedSymbols,
                              sentence_level: bool = True):
        st = self.stats(hyps, prepared.gather(np.asarray(rows, dtype=np.int64)), warn=False)
        return st, (self.scores_from_stats(st) if sentence_level else None)

    def sum_stats(self, stats) -> list:
        """``[sum of sentence scores (added in segment order), count]``."""
        return sum_mean_stats(stats)

    def compute_score_from_stats(self, stats) -> Score:
        total, count = stats[0], stats[1]
        return self._SCORE_TYPE(float(total) / float(count) if count > 0 else 0.0, count)

    def stats_columns(self) -> int:
        return 2

    def stats_layout(self) -> str:
        return "sentence score 0..1, count"

    def _scores_of_checked(self, stats: np.ndarray) -> np.ndarray:
        stats = stats.astype(np.float64, copy=False)
        mean = np.divide(stats[:, 0], stats[:, 1], out=np.zeros(len(stats)), where=stats[:, 1] > 0)
        return 100 * mean

    if TYPE_CHECKING:  # Metric.sentence_score, typed with this metric's Score
        def sentence_score(self, hypothesis: str, references: Sequence[str | None]) -> Score: ...
