"""Result type shared by the permutation tests."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PermutationResult"]


@dataclass
class PermutationResult:
    """``p_value`` for "metric 2 correlates better than metric 1", ``delta`` = stat(metric 2) -
    stat(metric 1), ``n_draws`` used, ``draws`` (n_draws, 2) float64 of resampled
    (stat 2, stat 1)."""
    p_value: float
    delta: float
    n_draws: int
    draws: np.ndarray
