# cython: language_level=3
"""METEOR alignment kernel: staged greedy unigram matching, chunk count and score.

Input is integer keys only (no text): each token of a hypothesis or reference carries one key
per matching stage (``keys[t, s]``, e.g. stage 0 the lowercased word's id, stage 1 its stem's
id). Stage ``s`` pairs still-unmatched hypothesis tokens with still-unmatched reference tokens
of equal key, NLTK's way: hypothesis tokens from right to left, each taking the highest
still-free reference position with its key. One stage (``syn_stage``) may be a set stage: the
hypothesis key is then a row of a CSR table of keys (its synonyms, itself included) and the
token takes the highest free reference position whose key is any of them.

After the stages, ``chunks`` counts the runs of matches adjacent in both the hypothesis and the
reference (matches ordered by hypothesis position), and the score is, with ``m`` matches whose
stage weights sum to ``w``::

    P = w / |hyp|; R = w / |ref|; F = P R / (alpha P + (1 - alpha) R)
    score = (1 - gamma (chunks / m) ** beta) F

0 when ``m``, ``|hyp|``, ``|ref|`` or the denominator of F is 0 (NLTK's ZeroDivisionError
branch), with NLTK's float operation order, so unit weights reproduce ``single_meteor_score``
bit for bit. Several references: the highest score (the first on ties).

Each linked list "free reference positions per key" is a ``head`` array over all keys plus a
``next`` array over positions, so a stage costs O(|hyp| + |ref|) (O(|hyp| x synonyms) for the
set stage), not O(|hyp| x |ref|). Runs without the GIL. Twin: ``kernels/reference/meteor.py``.
"""
from libc.stdlib cimport malloc, free
from libc.stdint cimport int64_t, int32_t
from libc.math cimport pow, NAN

import numpy as np
cimport numpy as cnp

cnp.import_array()


cdef struct Work:
    int32_t* head      # (n_keys,) highest free reference position with this key, or -1
    int32_t* nxt       # (max ref length,) the next lower free position with the same key
    int32_t* hmatch    # (max hyp length,) reference position matched to hyp token i, or -1
    double* hweight    # (max hyp length,) weight of that match
    char* rused        # (max ref length,)


cdef double _pair(const int32_t[:, ::1] hk, Py_ssize_t h0, Py_ssize_t lh,
                  const int32_t[:, ::1] rk, Py_ssize_t r0, Py_ssize_t lr,
                  const double[::1] weights, const int32_t[::1] syn_values,
                  const int64_t[::1] syn_offsets, int syn_stage,
                  double alpha, double beta, double gamma, Work* w,
                  double* matches_out, double* chunks_out) noexcept nogil:
    cdef Py_ssize_t i, j, s, t, n_stages = hk.shape[1]
    cdef int32_t k, best, best_key
    cdef int64_t m = 0, chunks = 0, prev_i = -2, prev_j = -2
    cdef double wsum = 0.0, precision, recall, den, fmean, frag
    for i in range(lh):
        w.hmatch[i] = -1
    for j in range(lr):
        w.rused[j] = 0
    for s in range(n_stages):
        for j in range(lr):  # ascending, so each key's list is read from its highest position
            if not w.rused[j]:
                k = rk[r0 + j, s]
                w.nxt[j] = w.head[k]
                w.head[k] = <int32_t>j
        for i in range(lh - 1, -1, -1):
            if w.hmatch[i] >= 0:
                continue
            if s != syn_stage:
                best_key = hk[h0 + i, s]
                best = w.head[best_key]
            else:
                best = -1
                best_key = -1
                for t in range(syn_offsets[hk[h0 + i, s]], syn_offsets[hk[h0 + i, s] + 1]):
                    k = syn_values[t]
                    if w.head[k] > best:
                        best = w.head[k]
                        best_key = k
            if best >= 0:
                w.hmatch[i] = best
                w.hweight[i] = weights[s]
                w.rused[best] = 1
                w.head[best_key] = w.nxt[best]
        for j in range(lr):
            w.head[rk[r0 + j, s]] = -1
    for i in range(lh):
        j = w.hmatch[i]
        if j < 0:
            continue
        m += 1
        wsum += w.hweight[i]
        if not (i == prev_i + 1 and j == prev_j + 1):
            chunks += 1
        prev_i = i
        prev_j = j
    matches_out[0] = <double>m
    chunks_out[0] = <double>chunks
    if m == 0 or lh == 0 or lr == 0:
        return 0.0
    precision = wsum / <double>lh
    recall = wsum / <double>lr
    den = alpha * precision + (1 - alpha) * recall
    if den == 0.0:
        return 0.0
    fmean = (precision * recall) / den
    frag = <double>chunks / <double>m
    return (1 - gamma * pow(frag, beta)) * fmean


cdef int _check_keys(const int32_t[:, ::1] keys, Py_ssize_t n_keys, int syn_stage,
                     Py_ssize_t n_rows, bint is_hyp) except -1:
    cdef Py_ssize_t t, s
    cdef int32_t k
    for t in range(keys.shape[0]):
        for s in range(keys.shape[1]):
            k = keys[t, s]
            if s == syn_stage and is_hyp:
                if k < 0 or k >= n_rows:
                    raise ValueError(f"meteor_scores: hypothesis key {k} of the synonym stage is not "
                                     f"a row of the synonym table ({n_rows} rows)")
            elif k < 0 or k >= n_keys:
                what = "hypothesis" if is_hyp else "reference"
                raise ValueError(f"meteor_scores: {what} key {k} outside [0, n_keys={n_keys})")
    return 0


cdef int _check_csr(const int64_t[::1] offsets, Py_ssize_t n_values, str what) except -1:
    cdef Py_ssize_t i
    if offsets.shape[0] < 1 or offsets[0] != 0 or offsets[offsets.shape[0] - 1] != n_values:
        raise ValueError(f"meteor_scores: {what} offsets must start at 0 and end at the number of values")
    for i in range(offsets.shape[0] - 1):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"meteor_scores: {what} offsets must not decrease")
    return 0


def meteor_scores(const int32_t[:, ::1] hyp_keys, const int64_t[::1] hyp_offsets,
                  const int32_t[:, ::1] ref_keys, const int64_t[::1] ref_offsets,
                  const int64_t[::1] ref_lo, const int64_t[::1] ref_hi,
                  const double[::1] weights, const int32_t[::1] syn_values,
                  const int64_t[::1] syn_offsets, int syn_stage, Py_ssize_t n_keys,
                  double alpha, double beta, double gamma, double[:, ::1] out,
                  Py_ssize_t start=0, Py_ssize_t stop=-1):
    """Fill ``out[start:stop]`` (float64 (N, 3)) with ``[score, matches, chunks]`` of
    hypothesis i against its best reference among ``ref_lo[i]:ref_hi[i]`` (``[NaN, 0, 0]``
    when it has none).

    ``hyp_keys`` int32 (T_h, S) and ``ref_keys`` int32 (T_r, S): per token, one key per stage,
    in ``[0, n_keys)`` (the synonym stage's hypothesis keys: rows of ``syn_offsets``);
    ``hyp_offsets`` int64 (N + 1), ``ref_offsets`` int64 (R + 1): CSR segments;
    ``weights`` float64 (S,); ``syn_values`` int32 / ``syn_offsets`` int64: the synonym table
    (``syn_stage`` -1: none).
    """
    cdef Py_ssize_t n = hyp_offsets.shape[0] - 1, n_refs = ref_offsets.shape[0] - 1
    cdef Py_ssize_t n_stages = hyp_keys.shape[1], i, r, lh, lr, max_h = 0, max_r = 0, n_rows
    cdef double score, best, matches, chunks, best_m, best_c
    cdef Work w
    if stop < 0:
        stop = n
    if not (0 <= start <= stop <= n):
        raise ValueError(f"meteor_scores: range {start}:{stop} outside 0:{n}")
    if ref_keys.shape[1] != n_stages or weights.shape[0] != n_stages:
        raise ValueError("meteor_scores: hyp_keys, ref_keys and weights must have the same number of stages")
    if not (-1 <= syn_stage < n_stages):
        raise ValueError(f"meteor_scores: syn_stage {syn_stage} is not -1 or a stage")
    if out.shape[0] != n or out.shape[1] != 3:
        raise ValueError(f"meteor_scores: out must be float64 ({n}, 3)")
    if ref_lo.shape[0] != n or ref_hi.shape[0] != n:
        raise ValueError(f"meteor_scores: ref_lo and ref_hi must have {n} entries")
    _check_csr(hyp_offsets, hyp_keys.shape[0], "hypothesis")
    _check_csr(ref_offsets, ref_keys.shape[0], "reference")
    _check_csr(syn_offsets, syn_values.shape[0], "synonym")
    n_rows = syn_offsets.shape[0] - 1
    if n_keys < 0 or n_keys > 2147483647:
        raise ValueError("meteor_scores: n_keys must be in [0, 2**31)")
    _check_keys(hyp_keys, n_keys, syn_stage, n_rows, True)
    _check_keys(ref_keys, n_keys, syn_stage, n_rows, False)
    for i in range(syn_values.shape[0]):
        if syn_values[i] < 0 or syn_values[i] >= n_keys:
            raise ValueError(f"meteor_scores: synonym key {syn_values[i]} outside [0, n_keys={n_keys})")
    for i in range(start, stop):
        if not (0 <= ref_lo[i] <= ref_hi[i] <= n_refs):
            raise ValueError(f"meteor_scores: references {ref_lo[i]}:{ref_hi[i]} of segment {i} outside 0:{n_refs}")
        max_h = max(max_h, hyp_offsets[i + 1] - hyp_offsets[i])
        for r in range(ref_lo[i], ref_hi[i]):
            max_r = max(max_r, ref_offsets[r + 1] - ref_offsets[r])
    if max_r > 2147483647:
        raise ValueError("meteor_scores: a reference longer than 2**31 - 1 tokens")
    w.head = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
    w.nxt = <int32_t*>malloc(max(max_r, 1) * sizeof(int32_t))
    w.rused = <char*>malloc(max(max_r, 1))
    w.hmatch = <int32_t*>malloc(max(max_h, 1) * sizeof(int32_t))
    w.hweight = <double*>malloc(max(max_h, 1) * sizeof(double))
    try:
        if not (w.head and w.nxt and w.rused and w.hmatch and w.hweight):
            raise MemoryError()
        with nogil:
            for i in range(n_keys):
                w.head[i] = -1
            for i in range(start, stop):
                lh = hyp_offsets[i + 1] - hyp_offsets[i]
                best = NAN
                best_m = 0.0
                best_c = 0.0
                for r in range(ref_lo[i], ref_hi[i]):
                    lr = ref_offsets[r + 1] - ref_offsets[r]
                    score = _pair(hyp_keys, hyp_offsets[i], lh, ref_keys, ref_offsets[r], lr,
                                  weights, syn_values, syn_offsets, syn_stage, alpha, beta, gamma,
                                  &w, &matches, &chunks)
                    if r == ref_lo[i] or score > best:
                        best = score
                        best_m = matches
                        best_c = chunks
                out[i, 0] = best
                out[i, 1] = best_m
                out[i, 2] = best_c
    finally:
        free(w.head)
        free(w.nxt)
        free(w.rused)
        free(w.hmatch)
        free(w.hweight)
