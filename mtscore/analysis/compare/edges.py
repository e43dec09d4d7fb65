"""Bucket edges as compare-mt defines them (``Bucketer.set_bucket_cutoffs`` and
``cutoff_into_bucket``): edges ``e_0 < e_1 < ... < e_{B-2}`` make B buckets, ``value < e_0``,
``e_{i-1} <= value < e_i`` and ``value >= e_{B-2}``, labelled ``<e_0``, ``[e_{i-1},e_i)`` (or the
single integer ``e_{i-1}`` when integer edges differ by one) and ``>=e_{B-2}``.
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from ..errors import AnalysisInputError

__all__ = ["bucket_index", "bucket_indices", "bucket_labels", "check_edges"]


def bucket_labels(edges: Sequence[float], integer: bool = True) -> tuple[str, ...]:
    """The B = len(edges) + 1 labels compare-mt prints for ``edges``; ``integer``: an interval
    ``[x-1,x)`` of integer edges is labelled ``x-1`` (compare-mt's ``num_type='int'``)."""
    e = check_edges(edges)
    out = []
    for i, x in enumerate(e):
        if i == 0:
            out.append(f"<{x}")
        elif integer and x - 1 == e[i - 1]:
            out.append(f"{x - 1}")
        else:
            out.append(f"[{e[i - 1]},{x})")
    out.append(f">={e[-1]}")
    return tuple(out)


def bucket_index(value: float, edges: Sequence[float]) -> int:
    """The bucket of ``value``: the first i with ``value < edges[i]``, else ``len(edges)``."""
    return bisect.bisect_right(edges, value)


def bucket_indices(values: Sequence[float] | np.ndarray, edges: Sequence[float]) -> np.ndarray:
    """:func:`bucket_index` of every value, int64 (N,)."""
    e = np.asarray(check_edges(edges), dtype=np.float64)
    return np.searchsorted(e, np.asarray(values, dtype=np.float64), side="right").astype(np.int64)


def check_edges(edges: Sequence[float], what: str = "edges") -> tuple[float, ...]:
    """Bucket edges as a tuple after checking they are a non-empty, strictly increasing sequence
    of numbers (an :class:`AnalysisInputError` naming ``what`` otherwise)."""
    try:
        out = tuple(edges)
    except TypeError:
        raise AnalysisInputError(f"{what} must be a sequence of numbers, got {edges!r}") from None
    if not out:
        raise AnalysisInputError(f"{what} must hold at least one edge")
    for x in out:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or x != x:
            raise AnalysisInputError(f"{what} must be numbers, got {x!r}")
    for a, b in zip(out, out[1:]):
        if not a < b:
            raise AnalysisInputError(f"{what} must increase strictly, got {a!r} then {b!r}")
    return out
