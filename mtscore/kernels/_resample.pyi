"""Resampling sums for bootstrap and approximate-randomisation tests."""
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

_Num = TypeVar("_Num", np.float32, np.float64, np.int64)
_I64 = npt.NDArray[np.int64]
_F32 = npt.NDArray[np.float32]

def resample_sums(stats: npt.NDArray[_Num], idx: _I64, out: npt.NDArray[_Num]) -> None:
    """out (S, K) = sums of rows idx (S, M) int64 of stats (N, K) float32/float64/int64, sequential in stats' dtype."""

def masked_sums(stats: _I64, mask: npt.NDArray[np.uint8], out: _I64) -> None:
    """out (T, K) int64 = mask (T, N) uint8 @ stats (N, K) int64, exact."""

def draw_counts(idx: _I64, counts: _F32) -> None:
    """counts (S, N) float32 = how often each row occurs in idx (S, M) int64."""

def pcg64_draw_indices(
    state: dict[str, Any], S: int, N: int, M: int = -1
) -> tuple[_I64, dict[str, Any]]:
    """(idx int64 (S, M), new PCG64 state): numpy's rng.integers(0, N, size=(S, M)) for that state."""

def pcg64_draw_counts(state: dict[str, Any], counts: _F32) -> dict[str, Any]:
    """Fill counts (S, N) float32 with draw counts of S resamples of N rows; the new PCG64 state."""
