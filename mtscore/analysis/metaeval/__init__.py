"""Modern meta-evaluation (WMT22+, mt-metrics-eval parity) on Numba kernels.

Submodules (Numba is imported on the first statistic call, never on import):

* :mod:`.stats` - Kendall variants ('b', '23', 'acc23') averaged by none/sys/item, pairwise
  (system) accuracy, tie-calibrated pairwise accuracy (acc_eq / tau_eq, optimal epsilon).
* :mod:`.soft` - soft pairwise accuracy (Thompson et al. 2024) and its PERM-BOTH test.
* :mod:`.significance` - PERM-BOTH and pairwise permutation tests (k-block early stopping),
  greedy significance clusters, all-metrics comparison.
* :mod:`.ratings` - MQM-style standalone ratings (JSONL) into (systems x segments) scores.
* :mod:`.wmt` - WMT20/WMT21 segment-level tasks from ``shared/data``.

Arrays: human scores (S, N) float64 (systems x items, NaN = unrated), metrics (S, N) or
(M, S, N) float64, higher is better.
"""
from .ratings import MQMScores, read_mqm_ratings
from .results import PermutationResult
from .significance import (
                           MetricComparison,
                           compare_metrics,
                           pairwise_permutation_test,
                           permutation_test,
                           significance_clusters,
)
from .soft import pairwise_pvalues, soft_pairwise_accuracy, soft_permutation_test
from .stats import TieCalibration, kendall_variant, pairwise_accuracy, tie_calibrated_accuracy

__all__ = [
                           "MQMScores",
                           "MetricComparison",
                           "PermutationResult",
                           "TieCalibration",
                           "compare_metrics",
                           "kendall_variant",
                           "pairwise_accuracy",
                           "pairwise_permutation_test",
                           "pairwise_pvalues",
                           "permutation_test",
                           "read_mqm_ratings",
                           "significance_clusters",
                           "soft_pairwise_accuracy",
                           "soft_permutation_test",
                           "tie_calibrated_accuracy",
]
