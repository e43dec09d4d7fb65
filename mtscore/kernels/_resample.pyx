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



def draw_counts(const int64_t[:, ::1] idx, float[:, ::1] counts):
    """How often each row is drawn: ``counts[s, i] = #{m : idx[s, m] == i}``.

    idx: (S, M) int64 row indices in ``[0, N)``; counts: (S, N) float32, overwritten (exact:
    a count is at most M, callers keep M < 2**24). The bootstrap sums are then one BLAS product
    ``counts @ stats`` instead of S x M scattered row reads (exact for non-negative integer
    statistics whenever the computed sum is below 2**24, see ``significance._bootstrap_sums``).
    Raises IndexError if an index is outside ``[0, N)``.
    """
    cdef Py_ssize_t S = idx.shape[0], M = idx.shape[1], N = counts.shape[1]
    cdef Py_ssize_t s, i
    cdef int64_t q
    cdef int bad = 0
    if counts.shape[0] != S:
        raise ValueError(f"draw_counts: counts has {counts.shape[0]} rows, expected {S}")
    if S == 0 or N == 0:
        if M and S:
            raise IndexError("draw_counts: resample index out of range for the statistics matrix")
        return
    with nogil:
        memset(&counts[0, 0], 0, S * N * sizeof(float))
        for s in range(S):
            for i in range(M):
                q = idx[s, i]
                if q < 0 or q >= N:
                    bad = 1
                    break
                counts[s, q] += 1.0
            if bad:
                break
    if bad:
        raise IndexError("draw_counts: resample index out of range for the statistics matrix")


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
    /* n draws of Generator.integers(0, rng + 1) (buffered Lemire on the 32-bit halves), the
       generator state kept in locals (registers) for the whole loop, stored back at the end; MTS_LEMIRE_LOOP(name, T, STORE) defines
       name(g, rng, dst, n) doing STORE(dst, i, draw) for each. One loop body for both uses
       below, so the index test (rejection-heavy ranges included) covers the counting one. */
    #define MTS_NEXT32(v) do { \
        if (has) { v = buf; has = 0; } \
        else { \
            uint64_t hi_, x_, o_; unsigned rot_; \
            st = st * mult + inc; \
            hi_ = (uint64_t)(st >> 64); x_ = hi_ ^ (uint64_t)st; rot_ = (unsigned)(hi_ >> 58); \
            o_ = (x_ >> rot_) | (x_ << ((-rot_) & 63)); \
            buf = (uint32_t)(o_ >> 32); v = (uint32_t)o_; has = 1; \
        } } while (0)
    #define MTS_LEMIRE_LOOP(name, T, STORE) \
    static void name(mts_pcg64* g, uint32_t rng, T* dst, int64_t n) { \
        const mts_u128 mult = ((mts_u128)0x2360ED051FC65DA4ULL << 64) | 0x4385DF649FCCF645ULL; \
        const uint32_t rng_excl = rng + 1; \
        mts_u128 st = g->state; \
        const mts_u128 inc = g->inc; \
        int has = g->has32; \
        uint32_t buf = g->u32; \
        int64_t i; \
        for (i = 0; i < n; i++) { \
            uint32_t v, leftover; \
            uint64_t m; \
            MTS_NEXT32(v); \
            m = (uint64_t)v * rng_excl; \
            leftover = (uint32_t)m; \
            if (__builtin_expect(leftover < rng_excl, 0)) { \
                const uint32_t threshold = (UINT32_MAX - rng) % rng_excl; \
                while (leftover < threshold) { \
                    MTS_NEXT32(v); \
                    m = (uint64_t)v * rng_excl; \
                    leftover = (uint32_t)m; \
                } \
            } \
            STORE(dst, i, (uint32_t)(m >> 32)); \
        } \
        g->state = st; g->has32 = has; g->u32 = buf; \
    }
    #define MTS_STORE_COUNT(dst, i, d) (dst[d] += 1)
    #define MTS_STORE_INDEX(dst, i, d) (dst[i] = (int64_t)(d))
    MTS_LEMIRE_LOOP(mts_pcg64_tally, int32_t, MTS_STORE_COUNT)
    MTS_LEMIRE_LOOP(mts_pcg64_fill, int64_t, MTS_STORE_INDEX)
    """
    ctypedef struct mts_pcg64:
        int has32
        uint32_t u32
    void mts_pcg64_set(mts_pcg64* g, uint64_t sh, uint64_t sl, uint64_t ih, uint64_t il,
                       int has32, uint32_t u32) nogil
    uint64_t mts_pcg64_state_hi(mts_pcg64* g) nogil
    uint64_t mts_pcg64_state_lo(mts_pcg64* g) nogil
    void mts_pcg64_tally(mts_pcg64* g, uint32_t rng, int32_t* tally, int64_t n) nogil
    void mts_pcg64_fill(mts_pcg64* g, uint32_t rng, int64_t* out, int64_t n) nogil

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
    if N > 1 and M > 0:
        with nogil:
            for s in range(S):
                mts_pcg64_fill(&g, rng, &v[s, 0], M)
    return idx, _pcg_store(&g, state)


def pcg64_draw_counts(dict state, float[:, ::1] counts):
    """Draw counts of ``S = counts.shape[0]`` resamples drawn as
    ``rng.integers(0, N, size=(S, N), dtype=np.int64)`` (N = ``counts.shape[1]``) from the
    PCG64 ``state`` (numpy's stream, bit for bit), without materialising the indices:
    ``counts[s, i]`` = how often row i is drawn in resample s (float32, overwritten; see
    :func:`draw_counts`). Returns the state numpy's generator would be left in."""
    cdef Py_ssize_t S = counts.shape[0], N = counts.shape[1]
    cdef Py_ssize_t r, i
    cdef uint32_t rng = <uint32_t> (N - 1) if N > 0 else 0
    cdef mts_pcg64 g
    cdef float* row
    cdef int32_t* tally
    if N == 0:
        raise ValueError("pcg64_draw_counts: no statistics rows")
    _pcg_load(&g, state, N)
    if S == 0:
        return state
    # counted in an int32 row that stays in L2 (the random increments), then converted into
    # the float32 row in one sequential pass
    tally = <int32_t*> calloc(N, sizeof(int32_t))
    if tally == NULL:
        raise MemoryError()
    with nogil:
        for r in range(S):
            row = &counts[r, 0]
            if N == 1:
                tally[0] = 1
            else:
                mts_pcg64_tally(&g, rng, tally, N)
            for i in range(N):
                row[i] = <float> tally[i]
                tally[i] = 0
    free(tally)
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
