# cython: language_level=3
"""All-pairs n-gram matrices (MBR, n-best, consensus): chrF/chrF++ and sentence BLEU of every
(row sample, column sample) pair of a group, each cell bit-identical to sacrebleu's
``sentence_score(row, [column])``.

A group's n-grams are interned once (:func:`group_ngrams`): every distinct n-gram of the group
gets a dense group id, and every sample a list of ``(id, count)`` entries per order. The n-gram
of order n at position p has the key

    order 1:  (stream << 32) | symbol                       (stream 0: chars/tokens, 1: words)
    order n:  ((id of its (n-1)-gram prefix + 1 + K) << 32) | symbol     (K = number of streams)

so keys are exact (no unchecked hashing) and the two forms never collide. A pair's clipped
matches ``sum(min(count_row, count_col))`` per order then come from scattering the column
sample's counts into a dense array over the group ids and walking the row sample's entries
(L1/L2-resident for groups of hundreds of samples). Matches are symmetric, so a group scored
against itself computes each unordered pair once and fills both cells. The score of a cell needs
only the matches and the per-sample n-gram totals, with sacrebleu's formulas (``chrf_f``,
``bleu_row`` in _ngram_common.pxd, shared with ``_ngram`` and ``_sentence``).

The matrix functions fill the columns listed in ``part`` of ``out`` without the GIL, so several
threads can fill disjoint column sets of one matrix. Plain-Python twins:
mtscore/kernels/reference/pairwise.py.
"""
from libc.stdlib cimport malloc, free, calloc
from libc.stdint cimport int64_t, int32_t, uint32_t

import numpy as np
cimport numpy as cnp

from mtscore.kernels._ngram_common cimport (
    Table, table_init, table_free, table_get_or_add, chrf_f, bleu_row)

cnp.import_array()


def group_ngrams(list streams, list orders):
    """Intern the n-grams of a group of S samples.

    streams : K pairs ``(values int32, offsets int64 (S + 1,))``, the same S samples in each
              (chrF: code points; chrF++: code points and word ids; BLEU: token ids)
    orders  : K ints >= 0, the n-gram orders of each stream (O = sum(orders) orders in all,
              stream 0's first)

    Returns ``(ids int32 (E,), counts int32 (E,), offsets int64 (S * O + 1,), totals int64 (S, O),
    n_ids)``: the entries of sample s, order o are ``offsets[s * O + o]:offsets[s * O + o + 1]``
    (one per distinct n-gram, first-seen order of positions); ``totals[s, o]`` is the number of
    n-grams of that order (the sum of its counts); ids are dense in ``[0, n_ids)``, numbered in
    first-seen order (samples, then streams, then orders, then positions).
    """
    cdef Py_ssize_t K = len(streams), S, s, k, o, p, L, need = 0, e, E = 0
    if len(orders) != K:
        raise ValueError("group_ngrams: one order per stream")
    if K == 0:
        raise ValueError("group_ngrams: no streams")
    cdef list vals_l = [np.ascontiguousarray(x[0], dtype=np.int32) for x in streams]
    cdef list offs_l = [np.ascontiguousarray(x[1], dtype=np.int64) for x in streams]
    S = offs_l[0].shape[0] - 1
    if S < 0:
        raise ValueError("group_ngrams: offsets must hold S + 1 entries")
    cdef int O = 0, n
    cdef int* ords = <int*> malloc(K * sizeof(int))
    cdef const int32_t** vals = <const int32_t**> calloc(K, sizeof(void*))
    cdef const int64_t** offs = <const int64_t**> calloc(K, sizeof(void*))
    cdef const int32_t[::1] vv
    cdef const int64_t[::1] oo
    try:
        for k in range(K):
            ords[k] = int(orders[k])
            if ords[k] < 0:
                raise ValueError(f"group_ngrams: order of stream {k} is negative")
            O += ords[k]
            vv = vals_l[k]
            oo = offs_l[k]
            if oo.shape[0] != S + 1:
                raise ValueError(f"group_ngrams: stream {k} has {oo.shape[0] - 1} samples, expected {S}")
            if oo[0] < 0 or oo[S] > vv.shape[0]:
                raise ValueError(f"group_ngrams: offsets of stream {k} are outside its values")
            for s in range(S):
                if oo[s + 1] < oo[s]:
                    raise ValueError(f"group_ngrams: offsets of stream {k} decrease at sample {s}")
                need += (oo[s + 1] - oo[s]) * ords[k]
            vals[k] = &vv[0] if vv.shape[0] else NULL
            offs[k] = &oo[0]
    except BaseException:
        free(ords); free(vals); free(offs)
        raise
    if need >= 2147483647:
        free(ords); free(vals); free(offs)
        raise ValueError("group_ngrams: a group of more than 2^31 n-gram positions")
    ids = np.empty(need, dtype=np.int32)
    counts = np.empty(need, dtype=np.int32)
    offsets = np.zeros(S * O + 1, dtype=np.int64)
    totals = np.zeros((S, O), dtype=np.int64)
    cdef int32_t[::1] gid = ids
    cdef int32_t[::1] gcnt = counts
    cdef int64_t[::1] goff = offsets
    cdef int64_t[:, ::1] tot = totals
    cdef int32_t* cur = <int32_t*> malloc((need + 1) * sizeof(int32_t))   # ids of order n - 1
    cdef int32_t* nxt = <int32_t*> malloc((need + 1) * sizeof(int32_t))
    cdef int32_t* cnt = <int32_t*> calloc(need + 1, sizeof(int32_t))      # per-id count, per sample
    cdef int32_t* tmp
    cdef Table t
    cdef int32_t n_ids = 0, g, first
    cdef int64_t key
    cdef const int32_t* sym
    cdef int oi = 0
    cdef Py_ssize_t cap = 1024
    while cap < 2 * need + 16:   # load <= 1/2; the table wants a power of two
        cap *= 2
    if cur == NULL or nxt == NULL or cnt == NULL or table_init(&t, cap) != 0:
        free(ords); free(vals); free(offs); free(cur); free(nxt); free(cnt)
        raise MemoryError()
    with nogil:
        for s in range(S):
            oi = 0
            for k in range(K):
                L = offs[k][s + 1] - offs[k][s]
                sym = vals[k] + offs[k][s] if vals[k] != NULL else NULL
                for n in range(1, ords[k] + 1):
                    first = <int32_t> E
                    for p in range(L - n + 1):
                        if n == 1:
                            key = ((<int64_t> k) << 32) | (<int64_t> <uint32_t> sym[p])
                        else:
                            key = ((<int64_t> cur[p] + 1 + K) << 32) | \
                                (<int64_t> <uint32_t> sym[p + n - 1])
                        g = table_get_or_add(&t, key, n_ids)
                        if g == n_ids:
                            n_ids += 1
                        nxt[p] = g
                        if cnt[g] == 0:
                            gid[E] = g
                            E += 1
                        cnt[g] += 1
                    if L - n + 1 > 0:
                        tot[s, oi] = L - n + 1
                    for e in range(first, E):
                        gcnt[e] = cnt[gid[e]]
                        cnt[gid[e]] = 0
                    goff[s * O + oi + 1] = E
                    oi += 1
                    tmp = cur
                    cur = nxt
                    nxt = tmp
    table_free(&t)
    free(ords); free(vals); free(offs); free(cur); free(nxt); free(cnt)
    return ids[:E].copy(), counts[:E].copy(), offsets, totals, int(n_ids)


cdef int _check_matrix(const int32_t[::1] ids, const int32_t[::1] counts,
                       const int64_t[::1] offsets, const int64_t[:, ::1] totals, Py_ssize_t n_ids,
                       const int64_t[::1] rows, const int64_t[::1] cols, bint symmetric,
                       double[:, ::1] out, const int64_t[::1] part, str name) except -1:
    cdef Py_ssize_t S = totals.shape[0], O = totals.shape[1], i
    if offsets.shape[0] != S * O + 1 or ids.shape[0] != counts.shape[0] \
            or offsets[S * O] > ids.shape[0] or offsets[0] != 0:
        raise ValueError(f"{name}: ids, counts, offsets and totals do not describe one group")
    for i in range(S * O):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"{name}: offsets decrease at {i}")
    for i in range(ids.shape[0]):
        if ids[i] < 0 or ids[i] >= n_ids:
            raise ValueError(f"{name}: id {ids[i]} at entry {i} is outside [0, n_ids)")
    if out.shape[0] != rows.shape[0] or out.shape[1] != cols.shape[0]:
        raise ValueError(f"{name}: out must be (len(rows), len(cols))")
    if symmetric and rows.shape[0] != cols.shape[0]:
        raise ValueError(f"{name}: symmetric needs rows == cols")
    for i in range(rows.shape[0]):
        if rows[i] < 0 or rows[i] >= S:
            raise ValueError(f"{name}: rows[{i}] = {rows[i]} is not a sample")
        if symmetric and rows[i] != cols[i]:
            raise ValueError(f"{name}: symmetric needs rows == cols")
    for i in range(cols.shape[0]):
        if cols[i] < 0 or cols[i] >= S:
            raise ValueError(f"{name}: cols[{i}] = {cols[i]} is not a sample")
    for i in range(part.shape[0]):
        if part[i] < 0 or part[i] >= cols.shape[0]:
            raise ValueError(f"{name}: part[{i}] = {part[i]} is not a column")
    return 0


cdef inline void pair_matches(const int32_t* D, const int32_t* ids, const int32_t* counts,
                              const int64_t* offsets, int64_t s, int O, int64_t* m) noexcept nogil:
    """m[o] = sum over sample s's entries of order o of min(count, D[id])."""
    cdef int o
    cdef int64_t e, mm
    cdef int32_t c, d
    for o in range(O):
        mm = 0
        for e in range(offsets[s * O + o], offsets[s * O + o + 1]):
            c = counts[e]
            d = D[ids[e]]
            mm += c if c < d else d
        m[o] = mm


cdef inline void load_sample(int32_t* D, const int32_t* ids, const int32_t* counts,
                             const int64_t* offsets, int64_t s, int O, bint clear) noexcept nogil:
    cdef int64_t e
    for e in range(offsets[s * O], offsets[s * O + O]):
        D[ids[e]] = 0 if clear else counts[e]


cdef inline double chrf_cell(const int64_t* th, const int64_t* tr, const int64_t* m, int O,
                             int64_t* st, double factor, bint eps_smoothing) noexcept nogil:
    """chrF of hypothesis totals th, reference totals tr and matches m (sacrebleu zeroes the
    hypothesis count of an order the reference has no n-gram of)."""
    cdef int o
    for o in range(O):
        st[3 * o] = th[o] if tr[o] > 0 else 0
        st[3 * o + 1] = tr[o]
        st[3 * o + 2] = m[o]
    return chrf_f(st, O, factor, eps_smoothing)


def chrf_matrix(const int32_t[::1] ids, const int32_t[::1] counts, const int64_t[::1] offsets,
                const int64_t[:, ::1] totals, Py_ssize_t n_ids, const int64_t[::1] rows,
                const int64_t[::1] cols, bint symmetric, double factor, bint eps_smoothing,
                double[:, ::1] out, const int64_t[::1] part):
    """chrF of row sample ``rows[a]`` (hypothesis) against column sample ``cols[b]`` (the only
    reference) into ``out[a, b]`` (float64 (len(rows), len(cols))), for the columns b in
    ``part`` (int64). ``symmetric`` (rows == cols): column b fills the cells (a, b) and (b, a)
    for a >= b only, from the same matches. Inputs: :func:`group_ngrams`; the orders are
    chrF's char orders then word orders (any split: chrF treats them alike). GIL released."""
    _check_matrix(ids, counts, offsets, totals, n_ids, rows, cols, symmetric, out, part,
                  "chrf_matrix")
    cdef int O = totals.shape[1]
    if O < 1:
        raise ValueError("chrf_matrix: no n-gram orders")
    cdef Py_ssize_t nr = rows.shape[0], npart = part.shape[0], q, a, b, a0
    cdef int32_t* D = <int32_t*> calloc(n_ids + 1, sizeof(int32_t))
    cdef int64_t* m = <int64_t*> malloc((O + 1) * sizeof(int64_t))
    cdef int64_t* st = <int64_t*> malloc((3 * O + 1) * sizeof(int64_t))
    if D == NULL or m == NULL or st == NULL:
        free(D); free(m); free(st)
        raise MemoryError()
    cdef const int32_t* pid = &ids[0] if ids.shape[0] else NULL
    cdef const int32_t* pcnt = &counts[0] if counts.shape[0] else NULL
    cdef int64_t r, c
    with nogil:
        for q in range(npart):
            b = part[q]
            c = cols[b]
            load_sample(D, pid, pcnt, &offsets[0], c, O, False)
            a0 = b if symmetric else 0
            for a in range(a0, nr):
                r = rows[a]
                pair_matches(D, pid, pcnt, &offsets[0], r, O, m)
                out[a, b] = chrf_cell(&totals[r, 0], &totals[c, 0], m, O, st, factor,
                                      eps_smoothing)
                if symmetric and a != b:
                    out[b, a] = chrf_cell(&totals[c, 0], &totals[r, 0], m, O, st, factor,
                                          eps_smoothing)
            load_sample(D, pid, pcnt, &offsets[0], c, O, True)
    free(D); free(m); free(st)


cdef inline double bleu_cell(const int64_t* th, const int64_t* tr, const int64_t* m, int N,
                             int64_t* st, int smooth, double smooth_value, bint effective_order,
                             bint neumaier, double* prec, double* logs) noexcept nogil:
    """Sentence BLEU of a hypothesis (totals th: th[0] = its length) against one reference."""
    cdef int o
    st[0] = th[0]
    st[1] = tr[0]
    for o in range(N):
        st[2 + o] = m[o]
        st[2 + N + o] = th[o]
    return bleu_row(st, N, smooth, smooth_value, effective_order, neumaier, prec, logs, NULL)


def bleu_matrix(const int32_t[::1] ids, const int32_t[::1] counts, const int64_t[::1] offsets,
                const int64_t[:, ::1] totals, Py_ssize_t n_ids, const int64_t[::1] rows,
                const int64_t[::1] cols, bint symmetric, int smooth, double smooth_value,
                bint effective_order, bint neumaier, double[:, ::1] out,
                const int64_t[::1] part):
    """Sentence BLEU of row sample ``rows[a]`` against column sample ``cols[b]`` (the only
    reference) into ``out[a, b]``, for the columns b in ``part``; the group's orders are
    1..max_order of one token stream (:func:`group_ngrams`), so ``totals[s, 0]`` is the length.
    smooth: 0 none, 1 floor, 2 add-k, 3 exp (as ``_ngram.bleu_sentence_scores``).
    ``symmetric``: as :func:`chrf_matrix`. GIL released."""
    _check_matrix(ids, counts, offsets, totals, n_ids, rows, cols, symmetric, out, part,
                  "bleu_matrix")
    cdef int N = totals.shape[1]
    if N < 1:
        raise ValueError("bleu_matrix: max_order must be >= 1")
    cdef Py_ssize_t nr = rows.shape[0], npart = part.shape[0], q, a, b, a0
    cdef int32_t* D = <int32_t*> calloc(n_ids + 1, sizeof(int32_t))
    cdef int64_t* m = <int64_t*> malloc((N + 1) * sizeof(int64_t))
    cdef int64_t* st = <int64_t*> malloc((2 * N + 3) * sizeof(int64_t))
    cdef double* prec = <double*> malloc((N + 1) * sizeof(double))
    cdef double* logs = <double*> malloc((N + 1) * sizeof(double))
    if D == NULL or m == NULL or st == NULL or prec == NULL or logs == NULL:
        free(D); free(m); free(st); free(prec); free(logs)
        raise MemoryError()
    cdef const int32_t* pid = &ids[0] if ids.shape[0] else NULL
    cdef const int32_t* pcnt = &counts[0] if counts.shape[0] else NULL
    cdef int64_t r, c
    with nogil:
        for q in range(npart):
            b = part[q]
            c = cols[b]
            load_sample(D, pid, pcnt, &offsets[0], c, N, False)
            a0 = b if symmetric else 0
            for a in range(a0, nr):
                r = rows[a]
                pair_matches(D, pid, pcnt, &offsets[0], r, N, m)
                out[a, b] = bleu_cell(&totals[r, 0], &totals[c, 0], m, N, st, smooth,
                                      smooth_value, effective_order, neumaier, prec, logs)
                if symmetric and a != b:
                    out[b, a] = bleu_cell(&totals[c, 0], &totals[r, 0], m, N, st, smooth,
                                          smooth_value, effective_order, neumaier, prec, logs)
            load_sample(D, pid, pcnt, &offsets[0], c, N, True)
    free(D); free(m); free(st); free(prec); free(logs)
