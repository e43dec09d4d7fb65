# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Resampling sums for bootstrap and approximate-randomisation tests.

Compute only: numpy buffers in, numpy buffers out, no Python objects in the loops, GIL released.
Plain-Python twin: ``mtscore/kernels/reference/resample.py``.
"""
from libc.stdint cimport int64_t, uint8_t

ctypedef fused num_t:
    float
    double
    int64_t


def resample_sums(const num_t[:, ::1] stats, const int64_t[:, ::1] idx, num_t[:, ::1] out):
    """Bootstrap sums: ``out[s, j] = stats[idx[s, 0], j] + stats[idx[s, 1], j] + ...``.

    stats: (N, K) float32 / float64 / int64, C-contiguous; idx: (S, M) int64 row indices into
    ``stats`` (M is usually N); out: (S, K) of the same dtype as ``stats``, overwritten.

    The accumulation is sequential in resample order, in the precision of ``num_t``, which is
    exactly what numpy does for ``stats[idx[s]].sum(0)`` on a C-contiguous float32 array
    (sacrebleu's bootstrap), so float32 results are bit-identical to sacrebleu's.
    Raises IndexError if an index is outside ``[0, N)``.
    """
    cdef Py_ssize_t S = idx.shape[0], M = idx.shape[1], N = stats.shape[0], K = stats.shape[1]
    cdef Py_ssize_t s, i, j
    cdef int64_t r
    cdef const num_t* row
    cdef num_t* acc
    cdef int bad = 0
    if out.shape[0] != S or out.shape[1] != K:
        raise ValueError(f"resample_sums: out has shape ({out.shape[0]}, {out.shape[1]}), expected ({S}, {K})")
    with nogil:
        for s in range(S):
            acc = &out[s, 0]
            for j in range(K):
                acc[j] = 0
            for i in range(M):
                r = idx[s, i]
                if r < 0 or r >= N:
                    bad = 1
                    break
                row = &stats[r, 0]
                for j in range(K):
                    acc[j] = acc[j] + row[j]
            if bad:
                break
    if bad:
        raise IndexError("resample_sums: resample index out of range for the statistics matrix")


def masked_sums(const int64_t[:, ::1] stats, const uint8_t[:, ::1] mask, int64_t[:, ::1] out):
    """Approximate-randomisation sums: ``out[t, j] = sum_i [mask[t, i] != 0] * stats[i, j]``.

    stats: (N, K) int64, C-contiguous; mask: (T, N) uint8 (a bool array viewed as uint8);
    out: (T, K) int64, overwritten. Exact integer arithmetic (equals ``mask @ stats``).
    """
    cdef Py_ssize_t T = mask.shape[0], N = stats.shape[0], K = stats.shape[1]
    cdef Py_ssize_t t, i, j
    cdef const int64_t* row
    cdef int64_t* acc
    if mask.shape[1] != N:
        raise ValueError(f"masked_sums: mask has {mask.shape[1]} columns, stats has {N} rows")
    if out.shape[0] != T or out.shape[1] != K:
        raise ValueError(f"masked_sums: out has shape ({out.shape[0]}, {out.shape[1]}), expected ({T}, {K})")
    with nogil:
        for t in range(T):
            acc = &out[t, 0]
            for j in range(K):
                acc[j] = 0
            for i in range(N):
                if mask[t, i]:
                    row = &stats[i, 0]
                    for j in range(K):
                        acc[j] = acc[j] + row[j]
