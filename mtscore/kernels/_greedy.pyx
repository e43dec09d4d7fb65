# cython: language_level=3
"""BERTScore greedy cosine matching (bert_score ``greedy_cos_idf`` semantics), nogil.

Embeddings of all sentences are concatenated row-wise (float32, already L2-normalised);
sentence ``s`` is rows ``off[s]:off[s+1]`` with per-token weights ``w[off[s]:off[s+1]]``
(idf, or 1 with 0 for [CLS]/[SEP]).
For each pair ``p`` (candidate ``hyp[p]``, reference ``ref[p]``):

    P = sum_i w_h[i] * max_j cos(h_i, r_j) / sum_i w_h[i]
    R = sum_j w_r[j] * max_i cos(h_i, r_j) / sum_j w_r[j]
    F = 2PR / (P + R)     (computed before the empty-sentence rule; NaN -> 0)
    P = R = 0 when either sentence has exactly 2 tokens ([CLS][SEP], i.e. empty)

``clamp_p[p]`` / ``clamp_r[p]`` (bert_score's padding quirk): the precision (recall) maxima
also range over a zero-filled padded position, i.e. are at least 0.

The cosines of a pair are float32 (as bert_score's ``torch.bmm``), from a register-blocked
product (``_greedy_cosines.h``: float32 sums of 64 products, float64 across blocks, rounded
once); the maxima and the weighted sums are taken in float64. No BLAS: a BLAS call per pair is
slow on small matrices when the BLAS starts its own threads. ``greedy_prf(..., out=, start=,
stop=)`` scores a slice of the pairs, so callers can split the pairs over threads (the work runs
without the GIL).
"""
import numpy as np
cimport cython
cimport numpy as cnp
from libc.math cimport isnan
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

cnp.import_array()

DEF IB = 4     # candidate rows per register block (_greedy_cosines.h)
DEF JB = 8     # reference columns per register block

cdef extern from "_greedy_cosines.h" nogil:
    void mts_greedy_cosines(const float* Hp, Py_ssize_t nhp, const float* Rt, Py_ssize_t nrp, Py_ssize_t d,
                            float* S)


cdef void _pair(const float* Hm, Py_ssize_t nh, const double* wh, const float* Rm, Py_ssize_t nr,
                const double* wr, Py_ssize_t d, bint clamp_p, bint clamp_r, float* S, float* Hp,
                float* Rt, double* colmax, double* out) noexcept nogil:
    """P, R, F of one pair into out[0:3]; scratch: S (nhp * nrp floats), Hp (nhp * d), Rt
    (d * nrp), colmax (nr doubles), nhp/nrp: nh/nr rounded up to IB/JB."""
    cdef Py_ssize_t i, j, k, nhp = (nh + IB - 1) // IB * IB, nrp = (nr + JB - 1) // JB * JB
    cdef double rowmax, s
    cdef double psum = 0.0, pw = 0.0, rsum = 0.0, rw = 0.0, P, R, F
    if nh > 0 and nr > 0:
        memcpy(Hp, Hm, nh * d * sizeof(float))
        memset(Hp + nh * d, 0, (nhp - nh) * d * sizeof(float))
        for j in range(nr):
            for k in range(d):
                Rt[k * nrp + j] = Rm[j * d + k]
        for j in range(nr, nrp):
            for k in range(d):
                Rt[k * nrp + j] = 0.0
        mts_greedy_cosines(Hp, nhp, Rt, nrp, d, S)
    for j in range(nr):
        colmax[j] = 0.0 if clamp_r else -1.0e300
    for i in range(nh):
        rowmax = 0.0 if clamp_p else -1.0e300
        for j in range(nr):
            s = S[i * nrp + j]
            if s > rowmax:
                rowmax = s
            if s > colmax[j]:
                colmax[j] = s
        psum = psum + rowmax * wh[i]
        pw = pw + wh[i]
    for j in range(nr):
        rsum = rsum + colmax[j] * wr[j]
        rw = rw + wr[j]
    P = psum / pw  # IEEE: 0/0 -> NaN exactly like bert_score's w / w.sum()
    R = rsum / rw
    F = 2.0 * P * R / (P + R)
    if nh == 2 or nr == 2:
        P = 0.0
        R = 0.0
    if isnan(F):
        F = 0.0
    out[0] = P
    out[1] = R
    out[2] = F


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _pairs(const float* hbase, const cnp.int64_t[::1] hoff, const double[::1] hw,
                 const float* rbase, const cnp.int64_t[::1] roff, const double[::1] rw_,
                 const cnp.int64_t[::1] hyp, const cnp.int64_t[::1] ref,
                 const cnp.uint8_t[::1] clamp_p, const cnp.uint8_t[::1] clamp_r,
                 double[:, ::1] out, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t d, float* S,
                 float* Hp, float* Rt, double* colmax) noexcept nogil:
    cdef Py_ssize_t p, h0, r0, nh, nr
    for p in range(start, stop):
        h0 = hoff[hyp[p]]
        r0 = roff[ref[p]]
        nh = hoff[hyp[p] + 1] - h0
        nr = roff[ref[p] + 1] - r0
        _pair(hbase + h0 * d if nh else NULL, nh, &hw[h0] if nh else NULL,
              rbase + r0 * d if nr else NULL, nr, &rw_[r0] if nr else NULL,
              d, clamp_p[p], clamp_r[p], S, Hp, Rt, colmax, &out[p, 0])


def greedy_prf(const float[:, ::1] hemb, const cnp.int64_t[::1] hoff, const double[::1] hw,
               const float[:, ::1] remb, const cnp.int64_t[::1] roff, const double[::1] rw_,
               const cnp.int64_t[::1] hyp, const cnp.int64_t[::1] ref,
               const cnp.uint8_t[::1] clamp_p, const cnp.uint8_t[::1] clamp_r,
               out=None, Py_ssize_t start=0, stop=None):
    """Return float64 ``[n_pairs, 3]`` (P, R, F) for the pairs ``(hyp[p], ref[p])``.

    Candidates come from (``hemb`` float32 [Th, D], ``hoff`` int64 [nh+1], ``hw`` float64 [Th]),
    references from (``remb``, ``roff``, ``rw_``); both may be the same arrays. ``hyp``/``ref``
    int64 [n] index sentences; ``clamp_p``/``clamp_r`` uint8 [n].
    ``out``/``start``/``stop``: score only pairs ``start:stop`` into rows ``start:stop`` of ``out``
    (float64 ``[n, 3]``, C-contiguous) and return it, so callers can split the pairs over threads
    (the work runs without the GIL); by default a new array for all pairs.
    """
    cdef Py_ssize_t n = hyp.shape[0]
    cdef Py_ssize_t d = hemb.shape[1]
    cdef Py_ssize_t p, maxh = 1, maxr = 1
    cdef Py_ssize_t stop_ = n if stop is None else stop
    if ref.shape[0] != n or clamp_p.shape[0] != n or clamp_r.shape[0] != n:
        raise ValueError("hyp, ref, clamp_p, clamp_r must have the same length")
    if hw.shape[0] != hemb.shape[0] or rw_.shape[0] != remb.shape[0]:
        raise ValueError("weights must have one entry per embedding row")
    if n and remb.shape[1] != d:
        raise ValueError("candidate and reference embeddings differ in width")
    if not 0 <= start <= stop_ <= n:
        raise ValueError(f"start={start}, stop={stop}: expected 0 <= start <= stop <= {n}")
    out_arr = np.zeros((n, 3), dtype=np.float64) if out is None else out
    cdef double[:, ::1] o = out_arr
    if o.shape[0] != n or o.shape[1] != 3:
        raise ValueError(f"out must be float64 [{n}, 3]")
    for p in range(start, stop_):  # checked here, so the loop below runs without bounds checks
        if not (0 <= hyp[p] < hoff.shape[0] - 1 and 0 <= ref[p] < roff.shape[0] - 1):
            raise IndexError(f"pair {p}: sentence index out of range")
        if hoff[hyp[p]] < 0 or hoff[hyp[p] + 1] > hemb.shape[0] or roff[ref[p]] < 0 \
                or roff[ref[p] + 1] > remb.shape[0]:
            raise IndexError(f"pair {p}: offsets outside the embedding rows")
        if hoff[hyp[p] + 1] - hoff[hyp[p]] > maxh:
            maxh = hoff[hyp[p] + 1] - hoff[hyp[p]]
        if roff[ref[p] + 1] - roff[ref[p]] > maxr:
            maxr = roff[ref[p] + 1] - roff[ref[p]]
    if start == stop_:
        return out_arr
    maxh = (maxh + IB - 1) // IB * IB
    maxr = (maxr + JB - 1) // JB * JB
    cdef float* S = <float*>malloc(maxh * maxr * sizeof(float))
    cdef float* Hp = <float*>malloc(maxh * d * sizeof(float))
    cdef float* Rt = <float*>malloc(maxr * d * sizeof(float))
    cdef double* colmax = <double*>malloc(maxr * sizeof(double))
    if S == NULL or Hp == NULL or Rt == NULL or colmax == NULL:
        free(S)
        free(Hp)
        free(Rt)
        free(colmax)
        raise MemoryError()
    cdef const float* hbase = &hemb[0, 0] if hemb.shape[0] else NULL
    cdef const float* rbase = &remb[0, 0] if remb.shape[0] else NULL
    try:
        with nogil:
            _pairs(hbase, hoff, hw, rbase, roff, rw_, hyp, ref, clamp_p, clamp_r, o, start, stop_, d,
                   S, Hp, Rt, colmax)
    finally:
        free(S)
        free(Hp)
        free(Rt)
        free(colmax)
    return out_arr
