"""Plain-Python twins of ``mtscore/kernels/_pairwise.pyx`` (tests only): the same names,
signatures, array layouts and dtypes.

:func:`group_ngrams` numbers n-gram tuples with a dict in the kernel's first-seen order
(samples, then streams, then orders, then positions); the matrix twins count clipped matches
with Counters over each sample's entries and score them with the ``ngram`` twins' formulas.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import numpy.typing as npt

from .ngram import bleu_sentence_scores, chrf_f

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]


def group_ngrams(streams: list, orders: list) -> tuple[_I32, _I32, _I64, _I64, int]:
    """Twin of ``_pairwise.group_ngrams``."""
    if len(orders) != len(streams):
        raise ValueError("group_ngrams: one order per stream")
    if not streams:
        raise ValueError("group_ngrams: no streams")
    vals = [np.asarray(s[0], dtype=np.int32).tolist() for s in streams]
    offs = [np.asarray(s[1], dtype=np.int64).tolist() for s in streams]
    S = len(offs[0]) - 1
    if S < 0:
        raise ValueError("group_ngrams: offsets must hold S + 1 entries")
    ords = [int(o) for o in orders]
    for k, (v, o) in enumerate(zip(vals, offs)):
        if ords[k] < 0:
            raise ValueError(f"group_ngrams: order of stream {k} is negative")
        if len(o) != S + 1:
            raise ValueError(f"group_ngrams: stream {k} has {len(o) - 1} samples, expected {S}")
        if o[0] < 0 or o[S] > len(v):
            raise ValueError(f"group_ngrams: offsets of stream {k} are outside its values")
        for s in range(S):
            if o[s + 1] < o[s]:
                raise ValueError(f"group_ngrams: offsets of stream {k} decrease at sample {s}")
    n_orders = sum(ords)
    gid: dict[tuple, int] = {}
    ids: list[int] = []
    counts: list[int] = []
    offsets = [0]
    totals = np.zeros((S, n_orders), dtype=np.int64)
    for s in range(S):
        oi = 0
        for k in range(len(streams)):
            seq = vals[k][offs[k][s]:offs[k][s + 1]]
            for n in range(1, ords[k] + 1):
                c: Counter = Counter()
                for p in range(len(seq) - n + 1):
                    g = gid.setdefault((k, *tuple(seq[p:p + n])), len(gid))
                    c[g] += 1  # a Counter keeps first-insertion order
                ids.extend(c)
                counts.extend(c.values())
                totals[s, oi] = max(0, len(seq) - n + 1)
                offsets.append(len(ids))
                oi += 1
    return (np.array(ids, dtype=np.int32), np.array(counts, dtype=np.int32),
            np.array(offsets, dtype=np.int64), totals, len(gid))


def _check_matrix(ids, counts, offsets, totals, n_ids, rows, cols, symmetric, out, part,
                  name: str) -> None:
    S, n_orders = totals.shape
    if (len(offsets) != S * n_orders + 1 or len(ids) != len(counts) or offsets[S * n_orders] > len(ids)
            or offsets[0] != 0):
        raise ValueError(f"{name}: ids, counts, offsets and totals do not describe one group")
    for i in range(S * n_orders):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"{name}: offsets decrease at {i}")
    for i, x in enumerate(ids):
        if x < 0 or x >= n_ids:
            raise ValueError(f"{name}: id {x} at entry {i} is outside [0, n_ids)")
    if out.shape[0] != len(rows) or out.shape[1] != len(cols):
        raise ValueError(f"{name}: out must be (len(rows), len(cols))")
    if symmetric and len(rows) != len(cols):
        raise ValueError(f"{name}: symmetric needs rows == cols")
    for i, r in enumerate(rows):
        if r < 0 or r >= S:
            raise ValueError(f"{name}: rows[{i}] = {r} is not a sample")
        if symmetric and r != cols[i]:
            raise ValueError(f"{name}: symmetric needs rows == cols")
    for i, c in enumerate(cols):
        if c < 0 or c >= S:
            raise ValueError(f"{name}: cols[{i}] = {c} is not a sample")
    for i, b in enumerate(part):
        if b < 0 or b >= len(cols):
            raise ValueError(f"{name}: part[{i}] = {b} is not a column")


def _bags(ids, counts, offsets, n_orders: int, s: int) -> list[Counter]:
    return [Counter(dict(zip(ids[offsets[s * n_orders + o]:offsets[s * n_orders + o + 1]].tolist(),
                             counts[offsets[s * n_orders + o]:offsets[s * n_orders + o + 1]].tolist())))
            for o in range(n_orders)]


def _matches(a: list[Counter], b: list[Counter]) -> list[int]:
    return [sum((x & y).values()) for x, y in zip(a, b)]


def _cells(rows, cols, symmetric: bool, part):
    """(a, b) cells a column set fills: every row, or rows a >= b when symmetric."""
    for b in np.asarray(part).tolist():
        for a in range(b if symmetric else 0, len(rows)):
            yield a, b


def chrf_matrix(ids: _I32, counts: _I32, offsets: _I64, totals: _I64, n_ids: int, rows: _I64,
                cols: _I64, symmetric: bool, factor: float, eps_smoothing: bool, out: _F64,
                part: _I64) -> None:
    """Twin of ``_pairwise.chrf_matrix``."""
    _check_matrix(ids, counts, offsets, totals, n_ids, rows, cols, symmetric, out, part,
                  "chrf_matrix")
    n_orders = totals.shape[1]
    if n_orders < 1:
        raise ValueError("chrf_matrix: no n-gram orders")
    tot = totals.tolist()

    def score(h: int, r: int, m: list[int]) -> float:
        row: list[int] = []
        for o in range(n_orders):
            row += [tot[h][o] if tot[r][o] > 0 else 0, tot[r][o], m[o]]
        return chrf_f(row, factor, eps_smoothing)

    for a, b in _cells(rows, cols, symmetric, part):
        r, c = int(rows[a]), int(cols[b])
        m = _matches(_bags(ids, counts, offsets, n_orders, r), _bags(ids, counts, offsets, n_orders, c))
        out[a, b] = score(r, c, m)
        if symmetric and a != b:
            out[b, a] = score(c, r, m)


def bleu_matrix(ids: _I32, counts: _I32, offsets: _I64, totals: _I64, n_ids: int, rows: _I64,
                cols: _I64, symmetric: bool, smooth: int, smooth_value: float,
                effective_order: bool, neumaier: bool, out: _F64, part: _I64) -> None:
    """Twin of ``_pairwise.bleu_matrix``."""
    _check_matrix(ids, counts, offsets, totals, n_ids, rows, cols, symmetric, out, part,
                  "bleu_matrix")
    N = totals.shape[1]
    if N < 1:
        raise ValueError("bleu_matrix: max_order must be >= 1")
    tot = totals.tolist()

    def score(h: int, r: int, m: list[int]) -> float:
        st = np.array([[tot[h][0], tot[r][0]] + m + tot[h]], dtype=np.int64)
        return float(bleu_sentence_scores(st, N, smooth, smooth_value, effective_order, neumaier)[0])

    for a, b in _cells(rows, cols, symmetric, part):
        r, c = int(rows[a]), int(cols[b])
        m = _matches(_bags(ids, counts, offsets, N, r), _bags(ids, counts, offsets, N, c))
        out[a, b] = score(r, c, m)
        if symmetric and a != b:
            out[b, a] = score(c, r, m)
