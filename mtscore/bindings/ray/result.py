"""What :func:`~mtscore.bindings.ray.score_ray` returns: corpus scores from the summed
statistics, and significance tests on the gathered matrices with the local code."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...engine.metrics.base import Metric, Score
from .gather import Group


class RayScoreResult:
    """Result of :func:`score_ray`.

    corpus      : ``{metric: Score}`` (one system, no test-set column), ``{system: {metric: Score}}``
                  (a ``system`` column), and with a test-set column ``{test_set: <one of those>}``
                  -- the layout of ``mtscore.score_table``'s ``corpus`` per test set
    stats       : with ``keep_stats=True``: ``{system: {metric: (N, k) ndarray}}`` (per test set
                  ``{test_set: {...}}``), equal to ``mtscore.score(...).stats``
    signatures  : ``{metric: str}``; the fields that depend on where the statistics were computed
                  are the workers' (``run_facts``: COMET's ``prec`` on the actors' GPUs, not the
                  driver copy's CPU fp32; values that differ between workers joined by ``+``)
    segments    : the Parquet path of the sentence scores (``segments=``), or None
    n           : ``{(test_set, system): number of segments}``
    metrics     : ``{name: metric object}`` (the driver's copies; they score resamples)
    run_facts   : ``{metric: {signature field: [values the workers reported, sorted]}}``
    """

    def __init__(self, groups: dict[tuple[str, str], Group], metrics: dict[str, Metric],
                 has_test_set: bool, has_system: bool, keep_stats: bool, segments: str | None,
                 run_facts: Mapping[str, Mapping[str, set[str]]] | None = None):
        self.run_facts = {name: {k: sorted(v) for k, v in fields.items()}
                          for name, fields in (run_facts or {}).items()}
        for name, fields in self.run_facts.items():  # before any signature is made
            take = getattr(metrics.get(name), "take_run_facts", None)
            if take is not None:
                take({k: "+".join(v) for k, v in fields.items()})
        self._groups = groups
        self.metrics = metrics
        self._has_test_set = has_test_set
        self._has_system = has_system
        self._keep = keep_stats
        self.segments = segments
        self.n = {k: g.n for k, g in groups.items()}
        self.corpus: dict[str, Any] = {}
        self.stats: dict[str, Any] = {}
        self.signatures: dict[str, str] = {}
        self._scores: dict[tuple[str, str], dict[str, Score]] = {}
        for ts in self.test_sets():
            num_refs = _num_refs([g.ref_counts for (t, _), g in groups.items() if t == ts])
            for (t, sy), g in groups.items():
                if t != ts:
                    continue
                row = {}
                for name, metric in metrics.items():
                    metric.num_refs = num_refs
                    row[name] = metric.compute_score_from_stats(g.sum_row(name, metric))
                self._scores[(t, sy)] = row
            for name, metric in metrics.items():
                metric.num_refs = num_refs
                self.signatures[name] = str(metric.get_signature())
        for (t, sy), row in self._scores.items():
            inner = self.corpus.setdefault(t, {}) if has_test_set else self.corpus
            if has_system:
                inner[sy] = row
            else:
                inner.update(row)
            if keep_stats:
                sinner = self.stats.setdefault(t, {}) if has_test_set else self.stats
                sinner[sy if has_system else "hyp"] = {m: groups[(t, sy)].stats(m) for m in metrics}

    @property
    def has_test_set(self) -> bool:
        """Whether the input had a test-set column (``corpus`` is then keyed by test set)."""
        return self._has_test_set

    def test_sets(self) -> list[str]:
        return list(dict.fromkeys(t for t, _ in self._groups))

    def systems(self, test_set: str = "") -> list[str]:
        return [s for t, s in self._groups if t == test_set]

    def group_stats(self, test_set: str = "", system: str = "") -> dict[str, np.ndarray]:
        """``{metric: (N, k)}`` of one (test set, system); needs ``keep_stats=True``."""
        if not self._keep:
            raise ValueError("score_ray(..., keep_stats=True) keeps the statistics matrices that "
                             "significance tests need; this run kept only their sums")
        g = self._groups[(test_set, system)]
        return {m: g.stats(m) for m in self.metrics}

    def corpus_row(self, test_set: str, system: str, metric: str) -> list:
        """The summed statistics row of one (test set, system) and metric (what the corpus
        score was computed from)."""
        return self._groups[(test_set, system)].sum_row(metric, self.metrics[metric])

    def compare(self, test: str = "bs", n: int | None = None, seed=None, test_set: str = "",
                baseline: str | None = None, all_pairs: bool = False, n_ar_confidence: int = -1):
        """Paired bootstrap (``bs``) / approximate randomisation (``ar``) of the systems of
        ``test_set`` on the gathered statistics: :func:`mtscore.compare_stats`, so the result
        equals the local ``mtscore.compare`` for the same seed. The first system (or
        ``baseline``) is the baseline."""
        from ...engine.significance import compare_stats

        names = self.systems(test_set)
        if baseline is not None:
            if baseline not in names:
                raise ValueError(f"compare: baseline {baseline!r} is not one of the systems {names}")
            names.insert(0, names.pop(names.index(baseline)))
        metrics = list(self.metrics.values())
        stats = [[self.group_stats(test_set, s)[m] for m in self.metrics] for s in names]
        self._set_num_refs(test_set)
        return compare_stats(names, metrics, stats, test=test, n=n, seed=seed, all_pairs=all_pairs,
                             n_ar_confidence=n_ar_confidence)

    def confidence(self, n: int = 1000, seed=None, test_set: str = "", system: str = "") -> dict[str, Score]:
        """Single-system bootstrap 95% CIs (sacrebleu's ``--confidence``) of every metric:
        ``{metric: Score}`` with ``_mean`` / ``_ci`` set, equal to the local result."""
        from ...engine.significance import bootstrap_ci

        self._set_num_refs(test_set)
        out = {}
        for name, st in self.group_stats(test_set, system).items():
            m = self.metrics[name]
            sc = m.compute_score_from_stats(m.sum_stats(st))
            out[name] = bootstrap_ci(m, st, sc, n, seed=seed)
        return out

    def _set_num_refs(self, test_set: str) -> None:
        num_refs = _num_refs([g.ref_counts for (t, _), g in self._groups.items() if t == test_set])
        for m in self.metrics.values():
            m.num_refs = num_refs

    def __repr__(self) -> str:
        return f"RayScoreResult({len(self._groups)} group(s), {sum(self.n.values())} segments)"


def _num_refs(counts: Sequence[set]) -> int:
    seen = set().union(*counts) if counts else set()
    return next(iter(seen)) if len(seen) == 1 else -1
