# cython: language_level=3
"""Edit-distance kernels, part 2 of 3: distances on numbers (no text involved; every symbol a
non-negative int32, token id or code point, in CSR arrays as ``_edit_csr`` makes them):

* :func:`edit_stats_range`: per segment ``[errors, reference length]`` against its best
  reference, errors being the Levenshtein distance (bit-parallel: Myers 1999 in Hyyro's
  formulation, 64 symbols per machine word, blocks of words for longer hypotheses) or the
  position-independent errors of PER (``max(|h|, |r|) - bag-of-words matches``);
* :func:`levenshtein`: the distance of one pair of sequences;
* :func:`eed_scores`: extended edit distance (Stanchev et al. 2019) of code-point sequences,
  the best (lowest) over each segment's references, with torchmetrics' float64 operation
  order.

The bit-parallel pattern and PER are also used by ``_edit_words`` (``_edit_distance.pxd``).
Everything after the arguments are checked runs without the GIL. The plain-Python twin is
``mtscore/kernels/reference/edit_distance.py`` (textbook dynamic programmes).
"""
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.math cimport NAN

import numpy as np
cimport numpy as cnp
from mtscore.kernels._edit_buffers cimport Pattern, Pick, pick_init, pick, picked_length

cnp.import_array()

#: how several references combine into one segment's ``[errors, length]`` (``multi_ref``; also
#: the values ``_edit_words`` takes)
MULTI_CLOSEST = 0   # fewest errors; ties: the longer reference, then the first
MULTI_AVERAGE = 1   # fewest errors over the MEAN reference length (Tercom / mWER convention)
MULTI_BEST = 2      # lowest errors / length (jiwer's rate); ties: the first

MEASURE_LEVENSHTEIN = 0
MEASURE_PER = 1


# ---- bit-parallel Levenshtein --------------------------------------------------------------
cdef int pattern_init(Pattern* P, Py_ssize_t nsym) noexcept nogil:
    P.slot = <int32_t*> calloc(nsym + 1, sizeof(int32_t))
    P.slot_cap = nsym + 1
    P.peq = NULL
    P.peq_cap = 0
    P.vp = NULL
    P.vn = NULL
    P.vcap = 0
    P.m = 0
    P.rows = 0
    P.blocks = 0
    return 0 if P.slot != NULL else -1


cdef int pattern_reserve(Pattern* P, Py_ssize_t nsym) noexcept nogil:
    """Room for symbols 0..nsym in ``slot`` (all zero between patterns, so a bigger table is
    allocated zeroed)."""
    if nsym + 1 <= P.slot_cap:
        return 0
    free(P.slot)
    P.slot_cap = 2 * (nsym + 1)
    P.slot = <int32_t*> calloc(P.slot_cap, sizeof(int32_t))
    return 0 if P.slot != NULL else -1


cdef void pattern_free(Pattern* P) noexcept nogil:
    free(P.slot)
    free(P.peq)
    free(P.vp)
    free(P.vn)


cdef int pattern_set(Pattern* P, const int32_t* p, Py_ssize_t m) noexcept nogil:
    """Load pattern ``p[0:m]`` (after :func:`pattern_clear` of the previous one)."""
    cdef Py_ssize_t k, w, r, B = (m + 63) >> 6
    cdef uint64_t* q
    cdef int32_t s
    P.syms = p
    P.m = m
    P.blocks = B
    P.rows = 0
    if B > P.vcap:
        free(P.vp)
        free(P.vn)
        P.vp = <uint64_t*> malloc(B * sizeof(uint64_t))
        P.vn = <uint64_t*> malloc(B * sizeof(uint64_t))
        if P.vp == NULL or P.vn == NULL:
            return -1
        P.vcap = B
    for k in range(m):
        s = p[k]
        if P.slot[s] == 0:
            r = P.rows
            if (r + 1) * B > P.peq_cap:
                q = <uint64_t*> realloc(P.peq, 2 * (r + 1) * B * sizeof(uint64_t))
                if q == NULL:
                    return -1
                P.peq = q
                P.peq_cap = 2 * (r + 1) * B
            for w in range(B):
                P.peq[r * B + w] = 0
            P.rows = r + 1
            P.slot[s] = <int32_t> (r + 1)
        r = P.slot[s] - 1
        P.peq[r * B + (k >> 6)] |= (<uint64_t> 1) << (k & 63)
    return 0


cdef void pattern_clear(Pattern* P) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(P.m):
        P.slot[P.syms[k]] = 0
    P.m = 0
    P.rows = 0


cdef Py_ssize_t levenshtein_text(Pattern* P, const int32_t* t, Py_ssize_t n) noexcept nogil:
    """Levenshtein distance (unit costs) between the loaded pattern and ``t[0:n]``: one pass
    over ``t``, ``blocks`` words per symbol (Hyyro 2003; Myers 1999's block extension with the
    horizontal carries between words). Bits above the pattern's last one in the top block hold
    garbage that never reaches lower bits (carries and shifts only move upwards)."""
    cdef Py_ssize_t m = P.m, B = P.blocks, j, w
    cdef Py_ssize_t score = m
    cdef int32_t r
    cdef uint64_t PM, X, D0, HP, HN, VP, VN, last, hp_c, hn_c, hp_t, hn_t
    cdef const uint64_t* row
    if m == 0:
        return n
    if n == 0:
        return m
    last = (<uint64_t> 1) << ((m - 1) & 63)
    if B == 1:
        VP = ~(<uint64_t> 0)
        VN = 0
        for j in range(n):
            r = P.slot[t[j]]
            PM = P.peq[r - 1] if r else 0
            X = PM | VN
            D0 = (((X & VP) + VP) ^ VP) | X
            HP = VN | ~(D0 | VP)
            HN = VP & D0
            if HP & last:
                score += 1
            elif HN & last:
                score -= 1
            X = (HP << 1) | 1
            VP = (HN << 1) | ~(D0 | X)
            VN = X & D0
        return score
    for w in range(B):
        P.vp[w] = ~(<uint64_t> 0)
        P.vn[w] = 0
    for j in range(n):
        r = P.slot[t[j]]
        row = P.peq + (r - 1) * B if r else NULL
        hp_c = 1    # row 0 of the global alignment grows by one per text symbol
        hn_c = 0
        for w in range(B):
            PM = row[w] if r else 0
            VP = P.vp[w]
            VN = P.vn[w]
            X = PM | hn_c
            D0 = (((X & VP) + VP) ^ VP) | X | VN
            HP = VN | ~(D0 | VP)
            HN = D0 & VP
            hp_t = hp_c
            hn_t = hn_c
            if w < B - 1:
                hp_c = HP >> 63
                hn_c = HN >> 63
            else:
                hp_c = 1 if (HP & last) else 0
                hn_c = 1 if (HN & last) else 0
            HP = (HP << 1) | hp_t
            HN = (HN << 1) | hn_t
            P.vp[w] = HN | ~(D0 | HP)
            P.vn[w] = HP & D0
        score += <Py_ssize_t> hp_c - <Py_ssize_t> hn_c
    return score


# ---- position-independent errors -----------------------------------------------------------
cdef Py_ssize_t per_errors(int32_t* count, int32_t* used, const int32_t* h, Py_ssize_t nh,
                           const int32_t* r, Py_ssize_t nr) noexcept nogil:
    """``max(nh, nr) - matches``, matches = the size of the multiset intersection of the two
    bags of symbols; ``count`` holds the hypothesis' symbol counts (filled by the caller),
    ``used`` is all zero on entry and on return."""
    cdef Py_ssize_t k, matches = 0
    cdef int32_t s
    for k in range(nr):
        s = r[k]
        if used[s] < count[s]:
            matches += 1
        used[s] += 1
    for k in range(nr):
        used[r[k]] = 0
    return (nh if nh > nr else nr) - matches


cdef int _check_csr(const int32_t[::1] values, const int64_t[::1] offsets, str what,
                    str name) except -1:
    cdef Py_ssize_t i, n = offsets.shape[0]
    if n < 1 or offsets[0] != 0 or offsets[n - 1] != values.shape[0]:
        raise ValueError(f"{name}: {what} offsets must start at 0 and end at len({what} values)")
    for i in range(n - 1):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"{name}: {what} offsets must not decrease")
    return 0


cdef int32_t _max_symbol(const int32_t[::1] a, const int32_t[::1] b, str name) except -2:
    cdef Py_ssize_t k
    cdef int32_t mx = 0, mn = 0
    with nogil:
        for k in range(a.shape[0]):
            if a[k] > mx:
                mx = a[k]
            if a[k] < mn:
                mn = a[k]
        for k in range(b.shape[0]):
            if b[k] > mx:
                mx = b[k]
            if b[k] < mn:
                mn = b[k]
    if mn < 0:
        raise ValueError(f"{name}: symbols must be non-negative")
    return mx


cdef int _check_segments(const int32_t[::1] hyp, const int64_t[::1] hyp_offsets,
                         const int32_t[::1] ref, const int64_t[::1] ref_offsets,
                         const int64_t[::1] seg_refs, str name) except -1:
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1, i
    _check_csr(hyp, hyp_offsets, "hypothesis", name)
    _check_csr(ref, ref_offsets, "reference", name)
    if seg_refs.shape[0] != N + 1 or seg_refs[0] != 0 or seg_refs[N] > ref_offsets.shape[0] - 1:
        raise ValueError(f"{name}: seg_refs must hold N + 1 offsets into the references")
    for i in range(N):
        if seg_refs[i + 1] < seg_refs[i]:
            raise ValueError(f"{name}: seg_refs must not decrease")
    return 0


def edit_stats_range(const int32_t[::1] hyp, const int64_t[::1] hyp_offsets,
                     const int32_t[::1] ref, const int64_t[::1] ref_offsets,
                     const int64_t[::1] seg_refs, double[:, ::1] out, int measure=0,
                     int multi_ref=0, Py_ssize_t start=0, Py_ssize_t stop=-1):
    """Fill ``out[start:stop]`` (float64 (N, 2)) with ``[errors, reference length]``.

    CSR inputs: ``hyp`` int32 symbols + ``hyp_offsets`` int64 (N + 1); ``ref`` + ``ref_offsets``
    (R + 1); ``seg_refs`` int64 (N + 1): segment i's references are ``seg_refs[i]:seg_refs[i+1]``.
    ``measure``: 0 Levenshtein distance, 1 PER errors. ``multi_ref``: 0 closest (fewest errors;
    ties: longer, then first), 1 average (fewest errors, mean reference length), 2 best (lowest
    ``errors / length``, or ``errors`` for an empty reference; ties: first). A segment without
    references gets ``[0, 0]``. ``stop = -1``: N. Runs without the GIL: threads may fill
    disjoint ranges of one ``out``."""
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1
    if stop < 0:
        stop = N
    _check_segments(hyp, hyp_offsets, ref, ref_offsets, seg_refs, "edit_stats_range")
    if out.shape[0] != N or out.shape[1] != 2:
        raise ValueError("edit_stats_range: out must have shape (N, 2)")
    if measure not in (0, 1) or multi_ref not in (0, 1, 2):
        raise ValueError("edit_stats_range: measure must be 0 or 1 and multi_ref 0, 1 or 2")
    if start < 0 or stop > N or start > stop:
        raise ValueError(f"edit_stats_range: bad range [{start}, {stop}) for {N} segments")
    if stop == start:
        return
    cdef Py_ssize_t nsym = <Py_ssize_t> _max_symbol(hyp, ref, "edit_stats_range") + 1
    cdef Pattern P
    cdef int32_t* count = NULL
    cdef int32_t* used = NULL
    cdef int err = 0
    cdef Py_ssize_t i, k, a, e, ln, nh
    cdef Pick sel
    cdef const int32_t* hp
    cdef const int32_t* rp = &ref[0] if ref.shape[0] else NULL
    with nogil:
        if measure == 0:
            err = pattern_init(&P, nsym)
        else:
            P.slot = NULL; P.peq = NULL; P.vp = NULL; P.vn = NULL
            count = <int32_t*> calloc(nsym, sizeof(int32_t))
            used = <int32_t*> calloc(nsym, sizeof(int32_t))
            err = 0 if (count != NULL and used != NULL) else -1
        i = start
        while i < stop and err == 0:
            if seg_refs[i + 1] == seg_refs[i]:
                out[i, 0] = 0.0
                out[i, 1] = 0.0
                i += 1
                continue
            hp = &hyp[hyp_offsets[i]] if hyp_offsets[i + 1] > hyp_offsets[i] else NULL
            nh = hyp_offsets[i + 1] - hyp_offsets[i]
            if measure == 0:
                if pattern_set(&P, hp, nh) != 0:
                    err = -1
                    break
            else:
                for k in range(nh):
                    count[hp[k]] += 1
            pick_init(&sel)
            for a in range(seg_refs[i], seg_refs[i + 1]):
                ln = ref_offsets[a + 1] - ref_offsets[a]
                if measure == 0:
                    e = levenshtein_text(&P, rp + ref_offsets[a] if ln else NULL, ln)
                else:
                    e = per_errors(count, used, hp, nh, rp + ref_offsets[a] if ln else NULL, ln)
                pick(&sel, multi_ref, e, ln)
            out[i, 0] = <double> sel.e
            out[i, 1] = picked_length(&sel, multi_ref)
            if measure == 0:
                pattern_clear(&P)
            else:
                for k in range(nh):
                    count[hp[k]] = 0
            i += 1
        if measure == 0:
            pattern_free(&P)
        free(count)
        free(used)
    if err:
        raise MemoryError("edit_stats_range: out of memory")


def levenshtein(const int32_t[::1] a, const int32_t[::1] b):
    """Levenshtein distance (unit costs) between two int32 symbol sequences."""
    cdef Py_ssize_t nsym = <Py_ssize_t> _max_symbol(a, b, "levenshtein") + 1
    cdef Pattern P
    cdef Py_ssize_t d = 0
    cdef int err = 0
    with nogil:
        err = pattern_init(&P, nsym)
        if err == 0:
            err = pattern_set(&P, &a[0] if a.shape[0] else NULL, a.shape[0])
        if err == 0:
            d = levenshtein_text(&P, &b[0] if b.shape[0] else NULL, b.shape[0])
        pattern_free(&P)
    if err:
        raise MemoryError("levenshtein: out of memory")
    return d


# ---- EED -----------------------------------------------------------------------------------
cdef double eed_pair(const int32_t* h, Py_ssize_t n, const int32_t* r, Py_ssize_t m,
                     double* row, double* nxt, int64_t* visits, double alpha, double rho,
                     double deletion, double insertion) noexcept nogil:
    """EED of hypothesis ``h[0:n]`` against reference ``r[0:m]`` (code points, preprocessed):
    the CDER grid with deletion / substitution / insertion costs, a long jump of cost ``alpha``
    after each reference blank, and the coverage penalty ``rho`` per surplus visit. Every
    float operation is torchmetrics' ``_eed_function``'s, in its order (min() keeps the first
    of equal values, which are the same double)."""
    cdef Py_ssize_t i, w, mi
    cdef double a, b, c, v, mv, jump, coverage, score
    cdef double* tmp
    cdef int32_t ch
    cdef int64_t cov = 0
    for i in range(n + 1):
        row[i] = 1.0
        visits[i] = -1
    row[0] = 0.0
    for w in range(1, m + 1):
        ch = r[w - 1]
        nxt[0] = row[0] + 1.0
        for i in range(1, n + 1):
            a = nxt[i - 1] + deletion
            b = row[i - 1] + (0.0 if h[i - 1] == ch else 1.0)
            c = row[i] + insertion
            v = a
            if b < v:
                v = b
            if c < v:
                v = c
            nxt[i] = v
        mi = 0
        mv = nxt[0]
        for i in range(1, n + 1):
            if nxt[i] < mv:
                mv = nxt[i]
                mi = i
        visits[mi] += 1
        if ch == 32:
            jump = alpha + nxt[mi]
            for i in range(n + 1):
                if jump < nxt[i]:
                    nxt[i] = jump
        tmp = row
        row = nxt
        nxt = tmp
    for i in range(n + 1):
        cov += visits[i] if visits[i] >= 0 else 1
    coverage = rho * <double> cov
    score = (row[n] + coverage) / (<double> m + coverage)
    return score if score < 1.0 else 1.0


def eed_scores(const int32_t[::1] hyp, const int64_t[::1] hyp_offsets,
               const int32_t[::1] ref, const int64_t[::1] ref_offsets,
               const int64_t[::1] seg_refs, double alpha=2.0, double rho=0.3,
               double deletion=0.2, double insertion=1.0):
    """EED of each of N segments: float64 (N,), the lowest score over the segment's
    references (NaN for a segment without references). CSR inputs as in
    :func:`edit_stats_range`, values being code points of preprocessed strings."""
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1, i, a, n, m, maxn = 0
    _check_segments(hyp, hyp_offsets, ref, ref_offsets, seg_refs, "eed_scores")
    if not (alpha >= 0 and rho >= 0 and deletion >= 0 and insertion >= 0):
        raise ValueError("eed_scores: alpha, rho, deletion and insertion must be non-negative")
    if rho == 0:
        for a in range(ref_offsets.shape[0] - 1):
            if ref_offsets[a + 1] == ref_offsets[a]:
                raise ValueError("eed_scores: an empty reference with rho = 0 divides by zero")
    for i in range(N):
        if hyp_offsets[i + 1] - hyp_offsets[i] > maxn:
            maxn = hyp_offsets[i + 1] - hyp_offsets[i]
    scores = np.empty(N, dtype=np.float64)
    cdef double[::1] res = scores
    cdef double* row = <double*> malloc((maxn + 1) * sizeof(double))
    cdef double* nxt = <double*> malloc((maxn + 1) * sizeof(double))
    cdef int64_t* visits = <int64_t*> malloc((maxn + 1) * sizeof(int64_t))
    if row == NULL or nxt == NULL or visits == NULL:
        free(row); free(nxt); free(visits)
        raise MemoryError("eed_scores: out of memory")
    cdef double s, best
    cdef const int32_t* hp
    cdef const int32_t* rp = &ref[0] if ref.shape[0] else NULL
    with nogil:
        for i in range(N):
            n = hyp_offsets[i + 1] - hyp_offsets[i]
            hp = &hyp[hyp_offsets[i]] if n else NULL
            best = NAN
            for a in range(seg_refs[i], seg_refs[i + 1]):
                m = ref_offsets[a + 1] - ref_offsets[a]
                s = eed_pair(hp, n, rp + ref_offsets[a] if m else NULL, m, row, nxt, visits,
                             alpha, rho, deletion, insertion)
                if a == seg_refs[i] or s < best:
                    best = s
            res[i] = best
    free(row); free(nxt); free(visits)
    return scores
