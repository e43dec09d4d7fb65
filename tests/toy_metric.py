"""The toy metric of the contract tests: the share of hypothesis words found in some reference of
the segment. Statistics per segment: ``[words found, hypothesis words]`` (int64, additive).

``test_metric_contract.py`` runs every contract check on it beside the registered metrics;
``test_check_metric.py`` breaks one rule of the contract in each subclass (``_row`` is the one
segment's statistics row, for subclasses that change it)."""
from __future__ import annotations

import numpy as np

from mtscore.engine.metrics.base import Metric, Score, Signature


class PreparedWords:
    """Prepared references of the toy metric: the word sets of each segment's references."""

    def __init__(self, sets: list[list[set]], num_refs: int):
        self.sets = sets
        self.n = len(sets)
        self.num_refs = num_refs

    def slice(self, a: int, z: int) -> PreparedWords:
        return PreparedWords(self.sets[a:z], self.num_refs)

    def missing(self) -> np.ndarray | None:
        m = np.array([not s for s in self.sets], dtype=bool)
        return m if m.any() else None


class WordRecall(Metric):
    """Toy metric: the share of hypothesis words found in some reference of the segment.
    Statistics per segment: ``[words found, hypothesis words]`` (int64, additive)."""

    def prepare(self, refs, rows=None) -> PreparedWords:
        streams = self._coerce_refs(refs)
        counts = {sum(r[i] is not None for r in streams) for i in range(len(streams[0]))}
        self.num_refs = counts.pop() if len(counts) == 1 else -1
        return PreparedWords([[set(r[i].split()) for r in streams if r[i] is not None]
                              for i in range(len(streams[0]))], self.num_refs)

    def _row(self, hyp: str, sets: list[set]) -> list[int]:
        words = hyp.split()
        return [sum(any(w in s for s in sets) for w in words), len(words)]

    def stats(self, hyps, prepared: PreparedWords) -> np.ndarray:
        hyps = self._coerce_hyps(hyps)
        skip = self._skipped(prepared)
        out = np.zeros((len(hyps), 2), dtype=np.int64)
        for i, (h, sets) in enumerate(zip(hyps, prepared.sets)):
            out[i] = self._row(h, sets)
        if skip is not None:
            out[skip] = 0
        return out

    def compute_score_from_stats(self, stats) -> Score:
        found, total = stats[0], stats[1]
        return Score("WordRecall", 100.0 * found / total if total else 0.0)

    def stats_columns(self) -> int:
        return 2

    def get_signature(self) -> Signature:
        return Signature(self.__dict__)
