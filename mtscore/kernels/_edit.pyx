# cython: language_level=3
"""Edit-distance kernels: WER / CER / PER statistics and EED.

Text -> CSR (``values`` int32, ``offsets`` int64 of length N + 1, as in ``_text``):

* :func:`jiwer_words`: jiwer's default word transform (``RemoveMultipleSpaces`` -> ``Strip`` ->
  ``split(" ")`` dropping empty strings), tokens interned in a ``_text.Vocab``;
* :func:`code_points`: the code points of each string, optionally ``str.strip()``-ed first
  (jiwer's CER transform; EED's already preprocessed strings).

Numbers (no text involved; every symbol a non-negative int32, token id or code point):

* :func:`edit_stats_range`: per segment ``[errors, reference length]`` against its best
  reference, errors being the Levenshtein distance (bit-parallel: Myers 1999 in Hyyro's
  formulation, 64 symbols per machine word, blocks of words for longer hypotheses) or the
  position-independent errors of PER (``max(|h|, |r|) - bag-of-words matches``);
* :func:`levenshtein`: the distance of one pair of sequences;
* :func:`eed_scores`: extended edit distance (Stanchev et al. 2019) of code-point sequences,
  the best (lowest) over each segment's references, with torchmetrics' float64 operation
  order.

Everything after the string pointers are collected runs without the GIL. The plain-Python twin
is ``mtscore/kernels/reference/edit.py`` (textbook dynamic programmes).
"""
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset
from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.math cimport pow, NAN

import numpy as np
cimport numpy as cnp
from mtscore.kernels._ucs4 cimport (
    PyUnicode_READY, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, UBuf, ubuf_load,
    is_space)
from mtscore.kernels._text cimport Vocab, VocabC, IBuf, ibuf_push, vocab_intern

cnp.import_array()

#: how several references combine into one segment's ``[errors, length]`` (``multi_ref``)
MULTI_CLOSEST = 0   # fewest errors; ties: the longer reference, then the first
MULTI_AVERAGE = 1   # fewest errors over the MEAN reference length (Tercom / mWER convention)
MULTI_BEST = 2      # lowest errors / length (jiwer's rate); ties: the first

MEASURE_LEVENSHTEIN = 0
MEASURE_PER = 1


# ---- text -> CSR ---------------------------------------------------------------------------
cdef int _collect(list texts, int* kinds, void** datas, Py_ssize_t* lens) except -1:
    cdef Py_ssize_t i
    cdef object t
    for i in range(len(texts)):
        t = texts[i]
        if type(t) is not str:
            raise TypeError(f"segment {i} is {type(t).__name__}, expected str")
        PyUnicode_READY(t)
        kinds[i] = PyUnicode_KIND(t)
        datas[i] = PyUnicode_DATA(t)
        lens[i] = PyUnicode_GET_LENGTH(t)
    return 0


cdef int _jiwer_split(const Py_UCS4* p, Py_ssize_t n, VocabC* v, IBuf* out) noexcept nogil:
    """Tokens of ``p[0:n]`` as jiwer's wer_default makes them: ``re.sub(r"\\s\\s+", " ")``,
    ``strip()``, ``split(" ")`` without empty strings. So a separator is a run of two or more
    whitespace characters, or a lone U+0020; a lone other whitespace character (a tab between
    two letters) stays inside its token. 0, or -1 when out of memory."""
    cdef Py_ssize_t lo = 0, hi = n, k, r, start
    cdef int32_t tid
    while lo < hi and is_space(p[lo]):
        lo += 1
    while hi > lo and is_space(p[hi - 1]):
        hi -= 1
    start = lo
    k = lo
    while k < hi:
        if is_space(p[k]):
            r = k + 1
            while r < hi and is_space(p[r]):
                r += 1
            if r - k >= 2 or p[k] == 32:
                if k > start:
                    tid = vocab_intern(v, p + start, k - start)
                    if tid < 0 or ibuf_push(out, tid) != 0:
                        return -1
                start = r
            k = r
        else:
            k += 1
    if hi > start:
        tid = vocab_intern(v, p + start, hi - start)
        if tid < 0 or ibuf_push(out, tid) != 0:
            return -1
    return 0


def jiwer_words(list texts, Vocab vocab):
    """Split each of N strings into words exactly as jiwer's default WER transform does
    (``RemoveMultipleSpaces``, ``Strip``, ``ReduceToListOfListOfWords``) and intern them in
    ``vocab``: returns ``(ids int32, offsets int64 (N + 1,))``."""
    cdef Py_ssize_t N = len(texts), i
    cdef int* kinds = <int*> malloc((N + 1) * sizeof(int))
    cdef void** datas = <void**> malloc((N + 1) * sizeof(void*))
    cdef Py_ssize_t* lens = <Py_ssize_t*> malloc((N + 1) * sizeof(Py_ssize_t))
    if kinds == NULL or datas == NULL or lens == NULL:
        free(kinds); free(datas); free(lens)
        raise MemoryError()
    try:
        _collect(texts, kinds, datas, lens)
    except BaseException:
        free(kinds); free(datas); free(lens)
        raise
    offsets = np.empty(N + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    cdef UBuf buf
    cdef IBuf out
    buf.p = NULL; buf.n = 0; buf.cap = 0
    out.p = NULL; out.n = 0; out.cap = 0
    cdef VocabC* vc = &vocab.v
    cdef int err = 0
    with nogil:
        off[0] = 0
        for i in range(N):
            if ubuf_load(&buf, kinds[i], datas[i], lens[i], 1) != 0 or \
                    _jiwer_split(buf.p, lens[i], vc, &out) != 0:
                err = 1
                break
            off[i + 1] = out.n
    free(kinds); free(datas); free(lens); free(buf.p)
    if err:
        free(out.p)
        raise MemoryError("jiwer_words: out of memory")
    values = np.empty(out.n, dtype=np.int32)
    cdef int32_t[::1] vals = values
    if out.n:
        memcpy(&vals[0], out.p, out.n * sizeof(int32_t))
    free(out.p)
    return values, offsets


def code_points(list texts, bint strip=False):
    """The code points of each of N strings (``str.strip()``-ed first when ``strip``: jiwer's
    CER transform): ``(values int32, offsets int64 (N + 1,))``."""
    cdef Py_ssize_t N = len(texts), i, total = 0
    cdef int* kinds = <int*> malloc((N + 1) * sizeof(int))
    cdef void** datas = <void**> malloc((N + 1) * sizeof(void*))
    cdef Py_ssize_t* lens = <Py_ssize_t*> malloc((N + 1) * sizeof(Py_ssize_t))
    if kinds == NULL or datas == NULL or lens == NULL:
        free(kinds); free(datas); free(lens)
        raise MemoryError()
    try:
        _collect(texts, kinds, datas, lens)
    except BaseException:
        free(kinds); free(datas); free(lens)
        raise
    for i in range(N):
        total += lens[i]
    values = np.empty(total, dtype=np.int32)
    offsets = np.empty(N + 1, dtype=np.int64)
    cdef int32_t[::1] vals = values
    cdef int64_t[::1] off = offsets
    cdef UBuf buf
    buf.p = NULL; buf.n = 0; buf.cap = 0
    cdef Py_ssize_t lo, hi, k, j = 0
    cdef int err = 0
    with nogil:
        off[0] = 0
        for i in range(N):
            if ubuf_load(&buf, kinds[i], datas[i], lens[i], 1) != 0:
                err = 1
                break
            lo = 0
            hi = lens[i]
            if strip:
                while lo < hi and is_space(buf.p[lo]):
                    lo += 1
                while hi > lo and is_space(buf.p[hi - 1]):
                    hi -= 1
            for k in range(lo, hi):
                vals[j] = <int32_t> buf.p[k]
                j += 1
            off[i + 1] = j
    free(kinds); free(datas); free(lens); free(buf.p)
    if err:
        raise MemoryError("code_points: out of memory")
    return values[:j].copy() if j < total else values, offsets


# ---- bit-parallel Levenshtein --------------------------------------------------------------
cdef struct Pattern:
    # match vectors of one pattern (the hypothesis): symbol s has bit k of block w set in
    # peq[(slot[s] - 1) * blocks + w] when pattern[64 * w + k] == s
    int32_t* slot          # (nsym,) 0 = not in the pattern, else row + 1; reset after each use
    uint64_t* peq          # rows * blocks words
    Py_ssize_t peq_cap     # words allocated
    const int32_t* syms    # the pattern (to reset slot)
    Py_ssize_t m           # pattern length
    Py_ssize_t blocks
    Py_ssize_t rows
    uint64_t* vp           # per-block vertical deltas (blocks words each)
    uint64_t* vn
    Py_ssize_t vcap


cdef int pattern_init(Pattern* P, Py_ssize_t nsym) noexcept nogil:
    P.slot = <int32_t*> calloc(nsym + 1, sizeof(int32_t))
    P.peq = NULL
    P.peq_cap = 0
    P.vp = NULL
    P.vn = NULL
    P.vcap = 0
    P.m = 0
    P.rows = 0
    P.blocks = 0
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
    cdef Py_ssize_t i, k, a, e, ln, best_e, best_l, sum_l, nh
    cdef double rate, best_rate
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
            best_e = -1
            best_l = 0
            best_rate = 0.0
            sum_l = 0
            for a in range(seg_refs[i], seg_refs[i + 1]):
                ln = ref_offsets[a + 1] - ref_offsets[a]
                if measure == 0:
                    e = levenshtein_text(&P, rp + ref_offsets[a] if ln else NULL, ln)
                else:
                    e = per_errors(count, used, hp, nh, rp + ref_offsets[a] if ln else NULL, ln)
                sum_l += ln
                if multi_ref == 2:
                    rate = (<double> e) / (<double> ln) if ln else <double> e
                    if best_e < 0 or rate < best_rate:
                        best_e, best_l, best_rate = e, ln, rate
                elif best_e < 0 or e < best_e or (e == best_e and ln > best_l):
                    best_e, best_l = e, ln
            out[i, 0] = <double> best_e
            if multi_ref == 1:
                out[i, 1] = (<double> sum_l) / (<double> (seg_refs[i + 1] - seg_refs[i]))
            else:
                out[i, 1] = <double> best_l
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
