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
Dot products are accumulated in float64.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport isnan

cnp.import_array()


cdef inline double _dot(const float* a, const float* b, Py_ssize_t d) noexcept nogil:
    cdef double acc = 0.0
    cdef Py_ssize_t k
    for k in range(d):
        acc += <double>a[k] * <double>b[k]
    return acc


def greedy_prf(const float[:, ::1] hemb, const cnp.int64_t[::1] hoff, const double[::1] hw,
               const float[:, ::1] remb, const cnp.int64_t[::1] roff, const double[::1] rw_,
               const cnp.int64_t[::1] hyp, const cnp.int64_t[::1] ref,
               const cnp.uint8_t[::1] clamp_p, const cnp.uint8_t[::1] clamp_r):
    """Return float64 ``[n_pairs, 3]`` (P, R, F) for the pairs ``(hyp[p], ref[p])``.

    Candidates come from (``hemb`` float32 [Th, D], ``hoff`` int64 [nh+1], ``hw`` float64 [Th]),
    references from (``remb``, ``roff``, ``rw_``); both may be the same arrays. ``hyp``/``ref``
    int64 [n] index sentences; ``clamp_p``/``clamp_r`` uint8 [n].
    """
    cdef Py_ssize_t n = hyp.shape[0]
    cdef Py_ssize_t d = hemb.shape[1]
    if ref.shape[0] != n or clamp_p.shape[0] != n or clamp_r.shape[0] != n:
        raise ValueError("hyp, ref, clamp_p, clamp_r must have the same length")
    if hw.shape[0] != hemb.shape[0] or rw_.shape[0] != remb.shape[0]:
        raise ValueError("weights must have one entry per embedding row")
    if n and remb.shape[1] != d:
        raise ValueError("candidate and reference embeddings differ in width")
    out_arr = np.zeros((n, 3), dtype=np.float64)
    cdef double[:, ::1] out = out_arr
    cdef Py_ssize_t maxlen = 0, s
    for s in range(roff.shape[0] - 1):
        if roff[s + 1] - roff[s] > maxlen:
            maxlen = roff[s + 1] - roff[s]
    colmax_arr = np.empty(max(maxlen, 1), dtype=np.float64)
    cdef double[::1] colmax = colmax_arr
    cdef Py_ssize_t p, i, j, h0, h1, r0, r1, nh, nr
    cdef double sim, rowmax, psum, pw, rsum, rw, P, R, F
    with nogil:
        for p in range(n):
            h0 = hoff[hyp[p]]
            h1 = hoff[hyp[p] + 1]
            r0 = roff[ref[p]]
            r1 = roff[ref[p] + 1]
            nh = h1 - h0
            nr = r1 - r0
            for j in range(nr):
                colmax[j] = 0.0 if clamp_r[p] else -1.0e300
            psum = 0.0
            pw = 0.0
            for i in range(nh):
                rowmax = 0.0 if clamp_p[p] else -1.0e300
                for j in range(nr):
                    sim = _dot(&hemb[h0 + i, 0], &remb[r0 + j, 0], d)
                    if sim > rowmax:
                        rowmax = sim
                    if sim > colmax[j]:
                        colmax[j] = sim
                psum = psum + rowmax * hw[h0 + i]
                pw = pw + hw[h0 + i]
            rsum = 0.0
            rw = 0.0
            for j in range(nr):
                rsum = rsum + colmax[j] * rw_[r0 + j]
                rw = rw + rw_[r0 + j]
            P = psum / pw  # IEEE: 0/0 -> NaN exactly like bert_score's w / w.sum()
            R = rsum / rw
            F = 2.0 * P * R / (P + R)
            if nh == 2 or nr == 2:
                P = 0.0
                R = 0.0
            if isnan(F):
                F = 0.0
            out[p, 0] = P
            out[p, 1] = R
            out[p, 2] = F
    return out_arr
