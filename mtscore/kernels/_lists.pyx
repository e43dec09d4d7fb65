# cython: language_level=3
"""List helpers for the Python layer: C loops over the items of a Python list (type checks,
``None`` masks, de-duplication, gathers), no per-item Python calls.

Not tokenizers (those are ``_text``): these serve corpus ingestion and the metrics' batching.
Plain-Python twin: ``mtscore/kernels/reference/lists.py``.
"""
from libc.stdint cimport int64_t, uint8_t, uint16_t

import numpy as np
cimport numpy as cnp
from mtscore.kernels._ucs4 cimport PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND

cnp.import_array()


def first_non_str(list items, bint allow_none=False):
    """Index of the first item whose type is not exactly ``str`` (``None`` allowed with
    ``allow_none``), or -1 when every item is."""
    cdef Py_ssize_t i
    cdef object x
    for i in range(len(items)):
        x = items[i]
        if type(x) is not str and not (allow_none and x is None):
            return i
    return -1


def present_row(list items):
    """uint8 (N,) array: 1 where the item is not None; ``None`` when no item is None."""
    cdef Py_ssize_t i, n = len(items)
    for i in range(n):
        if items[i] is None:
            break
    else:
        return None
    out = np.ones(n, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    for i in range(n):
        if items[i] is None:
            o[i] = 0
    return out


def dedupe_index(list rows, Py_ssize_t max_distinct=-1):
    """``(first, seg_map)`` (int64): the index of the first occurrence of each distinct row, in
    first-seen order, and per row the number of its distinct row (rows: hashable items,
    compared with ``==``). With ``max_distinct`` >= 0, ``None`` as soon as more than that many
    distinct rows are seen (a caller that only wants heavy repetition stops early).

    An open-addressing table of (hash, distinct row) slots in C: no dict, no boxed ints; rows
    are compared only when their hashes are equal."""
    cdef Py_ssize_t n = len(rows), i, m = 0, j, s, cap = 16
    cdef Py_ssize_t limit = n if max_distinct < 0 or max_distinct > n else max_distinct
    cdef Py_hash_t h
    cdef object r
    while cap < 2 * (limit + 1):
        cap <<= 1
    cdef Py_ssize_t mask = cap - 1
    slots_a = np.full(cap, -1, dtype=np.int64)
    hashes_a = np.empty(cap, dtype=np.int64)
    seg = np.empty(n, dtype=np.int64)
    first = np.empty(limit + 1, dtype=np.int64)
    cdef int64_t[::1] slots = slots_a
    cdef int64_t[::1] hashes = hashes_a
    cdef int64_t[::1] sm = seg
    cdef int64_t[::1] fv = first
    for i in range(n):
        r = rows[i]
        h = hash(r)
        j = <Py_ssize_t> (<size_t> h & <size_t> mask)
        while True:
            s = slots[j]
            if s < 0:
                if m == limit:  # only with max_distinct: m <= i < n otherwise
                    return None
                slots[j] = m
                hashes[j] = h
                fv[m] = i
                sm[i] = m
                m += 1
                break
            if hashes[j] == h:
                if rows[fv[s]] is r or rows[fv[s]] == r:
                    sm[i] = s
                    break
            j = (j + 1) & mask
    return first[:m].copy(), seg


def dedupe_columns(list columns):
    """Distinct (segment, string) pairs of S equally long columns of ``str`` (S systems' outputs
    for the same N segments), in segment-major order.

    Returns ``(strings, rows, index)``: ``strings`` the U distinct pairs' strings (list), ``rows``
    int64 (U,) the segment of each, ``index`` int64 (S, N) with ``columns[s][i] ==
    strings[index[s, i]]``. Segment-major order lets a stats kernel load a segment's reference
    table once for all its distinct hypotheses. Few columns are compared pairwise (length
    first); many go through a per-segment dict.
    """
    cdef Py_ssize_t S = len(columns), N = len(columns[0]) if columns else 0
    cdef Py_ssize_t i, s, u, m = 0, first_u
    cdef list cols = [list(c) if type(c) is not list else c for c in columns]
    for s in range(S):
        if len(<list> cols[s]) != N:
            raise ValueError(f"column {s} has {len(<list> cols[s])} items, expected {N}")
    index = np.empty((S, N), dtype=np.int64)
    rows_a = np.empty(S * N, dtype=np.int64)
    cdef int64_t[:, ::1] ix = index
    cdef int64_t[::1] rw = rows_a
    cdef list strings = []
    cdef list col
    cdef object t, x
    cdef Py_ssize_t lt
    cdef bint pairwise = S <= 32
    cdef dict seen = {}
    for i in range(N):
        first_u = m
        if not pairwise:
            seen.clear()
        for s in range(S):
            t = (<list> cols[s])[i]
            if type(t) is not str:
                raise TypeError(f"column {s} item {i} is {type(t).__name__}, not str")
            if pairwise:
                lt = PyUnicode_GET_LENGTH(t)
                for u in range(first_u, m):
                    x = strings[u]
                    if x is t or (PyUnicode_GET_LENGTH(x) == lt and <str> x == <str> t):
                        ix[s, i] = u
                        break
                else:
                    strings.append(t)
                    rw[m] = i
                    ix[s, i] = m
                    m += 1
            else:
                x = seen.get(t)
                if x is None:
                    seen[t] = m
                    strings.append(t)
                    rw[m] = i
                    ix[s, i] = m
                    m += 1
                else:
                    ix[s, i] = <Py_ssize_t> x
    return strings, rows_a[:m].copy(), index


def take(list items, const int64_t[::1] idx):
    """``[items[i] for i in idx]`` in one C loop (indices checked)."""
    cdef Py_ssize_t n = idx.shape[0], m = len(items), j
    cdef int64_t i
    cdef list out = [None] * n
    for j in range(n):
        i = idx[j]
        if i < 0 or i >= m:
            raise IndexError(f"take: index {i} out of range for {m} items")
        out[j] = items[i]
    return out


def count_ending_with_space_period(list texts):
    """How many strings end with " ." (sacrebleu's already-tokenized warning), without Python loops."""
    cdef Py_ssize_t i, n, c = 0
    cdef int kind
    cdef object t
    for i in range(len(texts)):
        t = texts[i]
        n = PyUnicode_GET_LENGTH(t)
        if n >= 2:
            kind = PyUnicode_KIND(t)
            if kind == 1:
                if (<uint8_t*> PyUnicode_DATA(t))[n - 1] == 46 and (<uint8_t*> PyUnicode_DATA(t))[n - 2] == 32:
                    c += 1
            elif kind == 2:
                if (<uint16_t*> PyUnicode_DATA(t))[n - 1] == 46 and (<uint16_t*> PyUnicode_DATA(t))[n - 2] == 32:
                    c += 1
            else:
                if (<Py_UCS4*> PyUnicode_DATA(t))[n - 1] == 46 and (<Py_UCS4*> PyUnicode_DATA(t))[n - 2] == 32:
                    c += 1
    return c
