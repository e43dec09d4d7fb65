"""Plain-Python twin of ``mtscore/kernels/_lists.pyx`` (tests only): the same names, signatures,
results and errors, as list comprehensions and dicts."""
from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

_T = TypeVar("_T")


def first_non_str(items: list[Any], allow_none: bool = False) -> int:
    for i, x in enumerate(items):
        if type(x) is not str and not (allow_none and x is None):
            return i
    return -1


def present_row(items: list[Any]) -> npt.NDArray[np.uint8] | None:
    if all(x is not None for x in items):
        return None
    return np.array([x is not None for x in items], dtype=np.uint8)


def dedupe_index(rows: list[Hashable], max_distinct: int = -1
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    index: dict[Hashable, int] = {}
    first: list[int] = []
    seg = []
    for i, r in enumerate(rows):
        if r not in index:
            if 0 <= max_distinct == len(first):
                return None
            index[r] = len(first)
            first.append(i)
        seg.append(index[r])
    return np.array(first, dtype=np.int64), np.array(seg, dtype=np.int64)


def dedupe_columns(columns: list[Any]) -> tuple[list[str], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    cols = [list(c) for c in columns]
    n = len(cols[0]) if cols else 0
    for s, c in enumerate(cols):
        if len(c) != n:
            raise ValueError(f"column {s} has {len(c)} items, expected {n}")
    strings: list[str] = []
    rows: list[int] = []
    index = np.empty((len(cols), n), dtype=np.int64)
    for i in range(n):
        seen: dict[str, int] = {}
        for s, c in enumerate(cols):
            t = c[i]
            if type(t) is not str:
                raise TypeError(f"column {s} item {i} is {type(t).__name__}, not str")
            if t not in seen:
                seen[t] = len(strings)
                strings.append(t)
                rows.append(i)
            index[s, i] = seen[t]
    return strings, np.array(rows, dtype=np.int64), index


def take(items: list[_T], idx: npt.NDArray[np.int64]) -> list[_T]:
    out = []
    for i in np.asarray(idx).tolist():
        if i < 0 or i >= len(items):
            raise IndexError(f"take: index {i} out of range for {len(items)} items")
        out.append(items[i])
    return out


def count_ending_with_space_period(texts: list[str]) -> int:
    return sum(1 for t in texts if t.endswith(" ."))
