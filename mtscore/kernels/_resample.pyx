# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Resampling sums for bootstrap and approximate-randomisation tests.

Compute only: numpy buffers in, numpy buffers out, no Python objects in the loops, GIL released.
Plain-Python twin: ``mtscore/kernels/reference/resample.py``.
"""
from libc.stdint cimport int64_t, int32_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset

import numpy as np

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



cdef void counts_dot(const int32_t* counts, Py_ssize_t N, const int32_t* stats, Py_ssize_t K,
                     Py_ssize_t R, double* scratch, int64_t* out) noexcept nogil:
    """``out[r * K + j] = sum_i counts[r * N + i] * stats[i * K + j]`` for r < R <= 4: one pass
    over ``stats`` for four resamples. float64 products and sums of integers stay exact below
    2**53 (checked by the callers) and vectorise where int64 multiplies do not."""
    cdef Py_ssize_t i, j, r
    cdef double c0, c1, c2, c3, v
    cdef const int32_t* row
    cdef double* a0 = scratch
    cdef double* a1 = scratch + K
    cdef double* a2 = scratch + 2 * K
    cdef double* a3 = scratch + 3 * K
    memset(scratch, 0, 4 * K * sizeof(double))
    for i in range(N):
        c0 = counts[i]
        c1 = counts[N + i]
        c2 = counts[2 * N + i]
        c3 = counts[3 * N + i]
        row = stats + i * K
        for j in range(K):
            v = row[j]
            a0[j] += c0 * v
            a1[j] += c1 * v
            a2[j] += c2 * v
            a3[j] += c3 * v
    for r in range(R):
        for j in range(K):
            out[r * K + j] = <int64_t> scratch[r * K + j]


cdef int count_buffers(Py_ssize_t N, Py_ssize_t K, int32_t** counts, double** scratch) except -1:
    """Counts of four resamples (4 x N) and the dot-pass accumulators (4 x K)."""
    counts[0] = <int32_t*> calloc(4 * N + 4, sizeof(int32_t))
    scratch[0] = <double*> calloc(4 * K, sizeof(double))
    if counts[0] == NULL or scratch[0] == NULL:
        free(counts[0])
        free(scratch[0])
        raise MemoryError()
    return 0


def count_sums(const int32_t[:, ::1] stats, const int64_t[:, ::1] idx, int64_t[:, ::1] out):
    """Bootstrap sums in exact integer arithmetic: ``out[s, j] = sum_i stats[idx[s, i], j]``.

    stats: (N, K) int32 (non-negative counts; the caller keeps M * max(stats) below 2**53),
    idx: (S, M) int64, out: (S, K) int64, overwritten. Instead of gathering M random rows per
    resample it counts how often each row is drawn (an L2-resident array per resample) and then
    streams ``stats`` once per four resamples (:func:`counts_dot`). Raises IndexError if an
    index is outside ``[0, N)``.
    """
    cdef Py_ssize_t S = idx.shape[0], M = idx.shape[1], N = stats.shape[0], K = stats.shape[1]
    cdef Py_ssize_t s0, r, R, i
    cdef int64_t q
    cdef int bad = 0
    if out.shape[0] != S or out.shape[1] != K:
        raise ValueError(f"count_sums: out has shape ({out.shape[0]}, {out.shape[1]}), expected ({S}, {K})")
    if S == 0 or K == 0:
        return
    cdef int32_t* counts = NULL
    cdef double* scratch = NULL
    count_buffers(N, K, &counts, &scratch)
    with nogil:
        for s0 in range(0, S, 4):
            R = S - s0 if S - s0 < 4 else 4
            memset(counts, 0, 4 * N * sizeof(int32_t))
            for r in range(R):
                for i in range(M):
                    q = idx[s0 + r, i]
                    if q < 0 or q >= N:
                        bad = 1
                        break
                    counts[r * N + q] += 1
                if bad:
                    break
            if bad:
                break
            counts_dot(counts, N, &stats[0, 0], K, R, scratch, &out[s0, 0])
    free(counts)
    free(scratch)
    if bad:
        raise IndexError("count_sums: resample index out of range for the statistics matrix")


# ---- numpy's PCG64 + bounded-integer draws, fused with the counting -----------------------
cdef extern from *:
    """
    /* numpy.random.PCG64 (XSL-RR 128/64, step then output) with its 32-bit buffering, and
       Generator.integers' buffered Lemire method for ranges below 2**32: the same stream as
       rng.integers(0, n, size=..., dtype=np.int64) (numpy/random/src/distributions). */
    typedef unsigned __int128 mts_u128;
    typedef struct { mts_u128 state, inc; int has32; uint32_t u32; } mts_pcg64;
    static inline void mts_pcg64_set(mts_pcg64* g, uint64_t sh, uint64_t sl, uint64_t ih,
                                     uint64_t il, int has32, uint32_t u32) {
        g->state = ((mts_u128)sh << 64) | sl; g->inc = ((mts_u128)ih << 64) | il;
        g->has32 = has32; g->u32 = u32;
    }
    static inline uint64_t mts_pcg64_state_hi(mts_pcg64* g) { return (uint64_t)(g->state >> 64); }
    static inline uint64_t mts_pcg64_state_lo(mts_pcg64* g) { return (uint64_t)g->state; }
    static inline uint64_t mts_pcg64_next64(mts_pcg64* g) {
        const mts_u128 mult = ((mts_u128)0x2360ED051FC65DA4ULL << 64) | 0x4385DF649FCCF645ULL;
        g->state = g->state * mult + g->inc;
        uint64_t hi = (uint64_t)(g->state >> 64), x = hi ^ (uint64_t)g->state;
        unsigned rot = (unsigned)(hi >> 58);
        return (x >> rot) | (x << ((-rot) & 63));
    }
    static inline uint32_t mts_pcg64_next32(mts_pcg64* g) {
        uint64_t n;
        if (g->has32) { g->has32 = 0; return g->u32; }
        n = mts_pcg64_next64(g);
        g->has32 = 1; g->u32 = (uint32_t)(n >> 32);
        return (uint32_t)(n & 0xffffffffULL);
    }
    static inline uint32_t mts_lemire32(mts_pcg64* g, uint32_t rng) {
        const uint32_t rng_excl = rng + 1;
        uint64_t m = (uint64_t)mts_pcg64_next32(g) * rng_excl;
        uint32_t leftover = (uint32_t)(m & 0xffffffffULL);
        if (leftover < rng_excl) {
            const uint32_t threshold = (UINT32_MAX - rng) % rng_excl;
            while (leftover < threshold) {
                m = (uint64_t)mts_pcg64_next32(g) * rng_excl;
                leftover = (uint32_t)(m & 0xffffffffULL);
            }
        }
        return (uint32_t)(m >> 32);
    }
    """
    ctypedef struct mts_pcg64:
        int has32
        uint32_t u32
    void mts_pcg64_set(mts_pcg64* g, uint64_t sh, uint64_t sl, uint64_t ih, uint64_t il,
                       int has32, uint32_t u32) nogil
    uint64_t mts_pcg64_state_hi(mts_pcg64* g) nogil
    uint64_t mts_pcg64_state_lo(mts_pcg64* g) nogil
    uint64_t mts_pcg64_next64(mts_pcg64* g) nogil
    uint32_t mts_lemire32(mts_pcg64* g, uint32_t rng) nogil

cdef uint64_t M64 = 0xFFFFFFFFFFFFFFFF


def pcg64_draw_indices(dict state, Py_ssize_t S, Py_ssize_t N, Py_ssize_t M=-1):
    """``(idx, new_state)``: idx equals ``rng.integers(0, N, size=(S, M), dtype=np.int64)``
    (M defaults to N) for a ``numpy.random.Generator(PCG64)`` whose ``bit_generator.state`` is
    ``state``; ``new_state`` is the state numpy leaves behind. The draws of
    :func:`pcg64_count_sums`, materialised (tests)."""
    cdef mts_pcg64 g
    cdef Py_ssize_t s, i
    if M < 0:
        M = N
    _pcg_load(&g, state, N)
    idx = np.zeros((S, M), dtype=np.int64)
    cdef int64_t[:, ::1] v = idx
    cdef uint32_t rng = <uint32_t> (N - 1)
    if N > 1:
        with nogil:
            for s in range(S):
                for i in range(M):
                    v[s, i] = mts_lemire32(&g, rng)
    return idx, _pcg_store(&g, state)


def pcg64_count_sums(dict state, const int32_t[:, ::1] stats, int64_t[:, ::1] out):
    """Bootstrap sums of ``out.shape[0]`` resamples drawn as
    ``rng.integers(0, N, size=(S, N), dtype=np.int64)`` from the PCG64 ``state`` (numpy's
    stream, bit for bit), without materialising the indices: ``out[s] = sum_i stats[idx[s, i]]``
    in exact integers (the caller keeps N * max(stats) below 2**53). Four resamples at a time:
    the draws of each are counted in its own row of counts (L2-resident while counting), then
    one pass over ``stats`` adds count * row for the four. Returns the new generator state."""
    cdef Py_ssize_t S = out.shape[0], N = stats.shape[0], K = stats.shape[1]
    cdef Py_ssize_t s0, r, R, i
    cdef uint32_t rng = <uint32_t> (N - 1) if N > 0 else 0
    cdef mts_pcg64 g
    if out.shape[1] != K:
        raise ValueError(f"pcg64_count_sums: out has {out.shape[1]} columns, expected {K}")
    if N == 0:
        raise ValueError("pcg64_count_sums: no statistics rows")
    _pcg_load(&g, state, N)
    if S == 0 or K == 0:
        return state
    cdef int32_t* counts = NULL
    cdef double* scratch = NULL
    count_buffers(N, K, &counts, &scratch)
    with nogil:
        for s0 in range(0, S, 4):
            R = S - s0 if S - s0 < 4 else 4
            memset(counts, 0, 4 * N * sizeof(int32_t))
            if N == 1:
                for r in range(R):
                    counts[r * N] = 1
            else:
                for r in range(R):
                    for i in range(N):
                        counts[r * N + mts_lemire32(&g, rng)] += 1
            counts_dot(counts, N, &stats[0, 0], K, R, scratch, &out[s0, 0])
    free(counts)
    free(scratch)
    return _pcg_store(&g, state)


cdef void _pcg_load(mts_pcg64* g, dict state, Py_ssize_t N) except *:
    if state.get("bit_generator") != "PCG64":
        raise ValueError("not a PCG64 state")
    if N > 0x7FFFFFFF:
        raise ValueError("range too large for the 32-bit path")
    st = state["state"]["state"]
    inc = state["state"]["inc"]
    mts_pcg64_set(g, <uint64_t> ((st >> 64) & M64), <uint64_t> (st & M64),
                  <uint64_t> ((inc >> 64) & M64), <uint64_t> (inc & M64),
                  <int> state["has_uint32"], <uint32_t> state["uinteger"])


cdef dict _pcg_store(mts_pcg64* g, dict state):
    st = (int(mts_pcg64_state_hi(g)) << 64) | int(mts_pcg64_state_lo(g))
    return {"bit_generator": "PCG64", "state": {"state": st, "inc": state["state"]["inc"]},
            "has_uint32": int(g.has32), "uinteger": int(g.u32)}
