"""Corpus ingestion (placeholder API; the full reader lands with the ingestion work)."""
from __future__ import annotations

from typing import List, Optional


def _to_list(x, what: str) -> list:
    if isinstance(x, str):
        raise TypeError(f"{what} should be a sequence of strings, not a single string.")
    if isinstance(x, (list, tuple)):
        return list(x)
    if hasattr(x, "to_pylist"):  # pyarrow Array / ChunkedArray
        return x.to_pylist()
    if hasattr(x, "tolist"):  # numpy array, pandas Series
        return x.tolist()
    try:
        return list(x)
    except TypeError:
        raise TypeError(f"{what} should be a sequence of strings, got {type(x).__name__}.") from None


def as_text_list(x, what: str, allow_none: bool = False) -> List[Optional[str]]:
    out = _to_list(x, what)
    for i, s in enumerate(out):
        if not isinstance(s, str) and not (allow_none and s is None):
            raise TypeError(f"{what}: element {i} is {type(s).__name__}, expected str.")
    return out


def as_ref_streams(refs, n: Optional[int], what: str) -> List[List[Optional[str]]]:
    if isinstance(refs, str):
        raise TypeError(f"{what} should be a sequence of reference streams, not a string.")
    streams = _to_list(refs, what)
    if not streams:
        raise ValueError(f"{what}: no reference streams given.")
    if all(isinstance(s, str) or s is None for s in streams):
        raise TypeError(
            f"{what} should be a list of K reference streams (each a list of N strings); "
            "got a flat list of strings. Wrap a single stream as [refs].")
    streams = [as_text_list(s, f"{what}[{k}]", allow_none=True) for k, s in enumerate(streams)]
    lens = {len(s) for s in streams}
    if n is not None and (len(lens) != 1 or n not in lens):
        layout = ""
        if len(streams) == n and all(len(s) == len(streams) for s in streams[:1]):
            layout = ""
        if len(streams) == n:
            layout = (" It looks like an N x K (segment-major) layout; references must be K streams"
                      " of N segments: refs[k][i]. Transpose with list(zip(*refs)).")
        raise ValueError(
            f"{what}: reference stream lengths {sorted(lens)} do not match the {n} hypotheses."
            + layout)
    if len(lens) != 1:
        raise ValueError(f"{what}: reference streams have different lengths {sorted(lens)}.")
    return streams
