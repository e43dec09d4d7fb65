"""The results of the significance tests: one system's :class:`TestResult` per metric, and the
:class:`ComparisonResult` of a comparison of several systems (p-values, CIs, signatures; JSON and
sacrebleu's ``PairedTest`` shapes).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ComparisonResult", "TestResult"]


@dataclass
class TestResult:
    """One system's result for one metric (field order = sacrebleu's ``Result``).

    score: corpus score; p_value: vs. the baseline (None for the baseline itself); mean / ci:
    bootstrap mean and 95% CI half-width (numpy scalars with sacrebleu's dtypes) or None."""

    score: Any
    p_value: float | None = None
    mean: Any = None
    ci: Any = None

    __test__ = False  # not a pytest class


@dataclass
class ComparisonResult:
    """Output of :func:`compare`.

    systems: names, baseline first (baseline mode) or in input order (all-pairs mode);
    results[metric][i]: :class:`TestResult` of ``systems[i]``; signatures[metric]: the metric's
    signature (``seed``, ``bs``/``ar`` added as sacrebleu adds them); p_values[metric]: (M, M)
    float64 matrix of pairwise p-values (all-pairs mode; NaN on the diagonal), else None.
    """

    systems: list[str]
    baseline: str | None
    test: str
    n_samples: int
    seed: str
    metrics: list[str]
    results: dict[str, list[TestResult]]
    signatures: dict[str, Any]
    p_values: dict[str, np.ndarray] | None = None
    n_ar_confidence: int = -1
    extra: dict[str, Any] = field(default_factory=dict)

    def p_value(self, metric: str, a: str, b: str | None = None) -> float | None:
        """p-value of system ``a`` vs ``b`` (or vs the baseline when ``b`` is None)."""
        if b is None:
            return self.results[metric][self.systems.index(a)].p_value
        if self.p_values is None:
            raise ValueError("p_value(a, b): run compare(..., all_pairs=True) for pairwise p-values")
        return float(self.p_values[metric][self.systems.index(a), self.systems.index(b)])

    def to_sacrebleu(self) -> tuple[dict[str, Any], dict[str, list]]:
        """``(signatures, scores)`` in the shape ``sacrebleu.significance.PairedTest()`` returns."""
        scores: dict[str, list] = {"System": list(self.systems)}
        for name in self.metrics:
            scores[name] = list(self.results[name])
        return dict(self.signatures), scores

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (floats, lists)."""
        def f(v):
            return None if v is None else float(v)
        d: dict[str, Any] = {
            "test": self.test, "n_samples": self.n_samples, "seed": self.seed,
            "baseline": self.baseline, "systems": list(self.systems),
            "signatures": {k: str(v) for k, v in self.signatures.items()},
            "results": {m: [{"system": s, "score": f(r.score), "p_value": f(r.p_value), "mean": f(r.mean),
                             "ci": f(r.ci)} for s, r in zip(self.systems, self.results[m])]
                        for m in self.metrics},
        }
        if self.p_values is not None:
            d["p_values"] = {m: [[None if np.isnan(x) else float(x) for x in row] for row in v.tolist()]
                             for m, v in self.p_values.items()}
        return d
