"""List helpers for the Python layer: C loops over the items of a Python list."""
from collections.abc import Hashable
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

_T = TypeVar("_T")

def first_non_str(items: list[Any], allow_none: bool = False) -> int:
    """Index of the first item that is not exactly ``str`` (None allowed on request), or -1."""

def present_row(items: list[Any]) -> npt.NDArray[np.uint8] | None:
    """uint8 (N,): 1 where the item is not None; None when no item is None."""

@overload
def dedupe_index(rows: list[Hashable]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(first int64 (U,), seg_map int64 (N,)): first occurrence of each distinct row, row -> distinct."""

@overload
def dedupe_index(
    rows: list[Hashable], max_distinct: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """As above, or None when more than ``max_distinct`` (>= 0) rows are distinct."""

def dedupe_columns(
    columns: list[Any],
) -> tuple[list[str], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """S columns of N str -> (U distinct strings, rows int64 (U,), index int64 (S, N)), segment-major."""

def take(items: list[_T], idx: npt.NDArray[np.int64]) -> list[_T]:
    """``[items[i] for i in idx]`` (idx int64 (M,), IndexError outside [0, len(items)))."""

def count_ending_with_space_period(texts: list[str]) -> int:
    """How many strings end with " ." (sacrebleu's already-tokenized warning)."""
