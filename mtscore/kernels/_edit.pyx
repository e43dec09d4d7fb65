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
* :func:`word_table` + :func:`word_stats_range`: the same statistics on jiwer's words, the
  references' words stored once (code points, hashes) and each hypothesis' words interned in
  a per-segment table (ids that only agree within a segment: no corpus vocabulary, faster);
* :func:`levenshtein`: the distance of one pair of sequences;
* :func:`eed_scores`: extended edit distance (Stanchev et al. 2019) of code-point sequences,
  the best (lowest) over each segment's references, with torchmetrics' float64 operation
  order.

Everything after the string pointers are collected runs without the GIL. The plain-Python twin
is ``mtscore/kernels/reference/edit.py`` (textbook dynamic programmes).
"""
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset
from libc.stdint cimport uint64_t, int64_t, int32_t, uint16_t, uint8_t
from libc.math cimport pow, NAN

import numpy as np
cimport numpy as cnp
from mtscore.kernels._ucs4 cimport (
    PyUnicode_READY, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, UBuf, ubuf_load,
    ubuf_reserve, is_space, hash_cps, cps_equal, HASH_INIT, hash_step, hash_finish)
from mtscore.kernels._text cimport Vocab, VocabC, IBuf, ibuf_push, vocab_intern

cnp.import_array()

#: how several references combine into one segment's ``[errors, length]`` (``multi_ref``)
MULTI_CLOSEST = 0   # fewest errors; ties: the longer reference, then the first
MULTI_AVERAGE = 1   # fewest errors over the MEAN reference length (Tercom / mWER convention)
MULTI_BEST = 2      # lowest errors / length (jiwer's rate); ties: the first

MEASURE_LEVENSHTEIN = 0
MEASURE_PER = 1


# ---- text -> CSR ---------------------------------------------------------------------------
cdef int _collect(list texts, int* kinds, void** datas, Py_ssize_t* lens,
                  Py_ssize_t first=0) except -1:
    """The PEP 393 storage of each string (``first``: the index of ``texts[0]`` in messages)."""
    cdef Py_ssize_t i
    cdef object t
    for i in range(len(texts)):
        t = texts[i]
        if type(t) is not str:
            raise TypeError(f"segment {i + first} is {type(t).__name__}, expected str")
        PyUnicode_READY(t)
        kinds[i] = PyUnicode_KIND(t)
        datas[i] = PyUnicode_DATA(t)
        lens[i] = PyUnicode_GET_LENGTH(t)
    return 0


cdef struct Texts:
    # the PEP 393 storage of N strings, read without the GIL (the list keeps them alive)
    int* kinds
    void** datas
    Py_ssize_t* lens
    Py_ssize_t total        # code points in all


cdef int texts_open(Texts* t, list texts, Py_ssize_t first=0) except -1:
    """Fill ``t`` from ``texts`` (TypeError naming the first non-str segment, counted from
    ``first``); free with :func:`texts_close` (on error it is freed already)."""
    cdef Py_ssize_t N = len(texts), i
    t.kinds = <int*> malloc((N + 1) * sizeof(int))
    t.datas = <void**> malloc((N + 1) * sizeof(void*))
    t.lens = <Py_ssize_t*> malloc((N + 1) * sizeof(Py_ssize_t))
    t.total = 0
    if t.kinds == NULL or t.datas == NULL or t.lens == NULL:
        texts_close(t)
        raise MemoryError()
    try:
        _collect(texts, t.kinds, t.datas, t.lens, first)
    except BaseException:
        texts_close(t)
        raise
    for i in range(N):
        t.total += t.lens[i]
    return 0


cdef void texts_close(Texts* t) noexcept:
    free(t.kinds); free(t.datas); free(t.lens)
    t.kinds = NULL; t.datas = NULL; t.lens = NULL


# ASCII whitespace (str.isspace) as a table: the word scanner tests every code point
cdef uint8_t ASCII_SPACE[128]

cdef void _init_ascii_space():
    cdef int c
    for c in range(128):
        ASCII_SPACE[c] = 1 if is_space(c) else 0

_init_ascii_space()


cdef inline bint _space(Py_UCS4 c) noexcept nogil:
    if c < 128:
        return ASCII_SPACE[c]
    return is_space(c)


cdef int _jiwer_spans(const Py_UCS4* p, Py_ssize_t n, IBuf* spans) noexcept nogil:
    """Words of ``p[0:n]`` as jiwer's wer_default makes them (``re.sub(r"\\s\\s+", " ")``,
    ``strip()``, ``split(" ")`` without empty strings), appended to ``spans`` as (start, length)
    pairs. A separator is a run of two or more whitespace characters, or a lone U+0020; a lone
    other whitespace character (a tab between two letters) stays inside its word. 0, or -1
    when out of memory or the string is longer than 2**31 - 1 code points."""
    cdef Py_ssize_t lo = 0, hi = n, k, r, start
    if n > 0x7FFFFFFF:
        return -1
    while lo < hi and _space(p[lo]):
        lo += 1
    while hi > lo and _space(p[hi - 1]):
        hi -= 1
    start = lo
    k = lo
    while True:
        while k < hi and not _space(p[k]):
            k += 1
        if k >= hi:
            break
        # p[k] starts a whitespace run; it ends before hi (p[hi - 1] is not whitespace)
        r = k + 1
        while _space(p[r]):
            r += 1
        if r - k >= 2 or p[k] == 32:
            if ibuf_push(spans, <int32_t> start) != 0 or ibuf_push(spans, <int32_t> (k - start)) != 0:
                return -1
            start = r
        k = r
    if hi > start:
        if ibuf_push(spans, <int32_t> start) != 0 or ibuf_push(spans, <int32_t> (hi - start)) != 0:
            return -1
    return 0


cdef struct HBuf:
    uint64_t* p
    Py_ssize_t n
    Py_ssize_t cap


cdef inline int hbuf_push(HBuf* b, uint64_t v) noexcept nogil:
    cdef uint64_t* q
    cdef Py_ssize_t cap
    if b.n == b.cap:
        cap = b.cap * 2 if b.cap else 256
        q = <uint64_t*> realloc(b.p, cap * sizeof(uint64_t))
        if q == NULL:
            return -1
        b.p = q
        b.cap = cap
    b.p[b.n] = v
    b.n += 1
    return 0


cdef int _jiwer_words_hashed(const Py_UCS4* p, Py_ssize_t n, Py_ssize_t base, IBuf* spans,
                             HBuf* hashes) noexcept nogil:
    """:func:`_jiwer_spans` (starts offset by ``base``) and each word's ``hash_cps`` in the
    same pass over the code points (one loop exit per word instead of two)."""
    cdef Py_ssize_t lo = 0, hi = n, k, start
    cdef uint64_t h = HASH_INIT
    cdef Py_UCS4 c
    if n + base > 0x7FFFFFFF:
        return -1
    while lo < hi and _space(p[lo]):
        lo += 1
    while hi > lo and _space(p[hi - 1]):
        hi -= 1
    start = lo
    k = lo
    while k < hi:
        c = p[k]
        if not _space(c) or (c != 32 and not _space(p[k + 1])):
            # a word character, or a lone whitespace character other than U+0020 inside a
            # word (p[hi - 1] is not whitespace, so p[k + 1] exists)
            h = hash_step(h, c)
            k += 1
            continue
        if ibuf_push(spans, <int32_t> (start + base)) != 0 or ibuf_push(spans, <int32_t> (k - start)) != 0 \
                or hbuf_push(hashes, hash_finish(h)) != 0:
            return -1
        k += 1
        while _space(p[k]):
            k += 1
        start = k
        h = HASH_INIT
    if hi > start:
        if ibuf_push(spans, <int32_t> (start + base)) != 0 or ibuf_push(spans, <int32_t> (hi - start)) != 0 \
                or hbuf_push(hashes, hash_finish(h)) != 0:
            return -1
    return 0


cdef int _jiwer_split(const Py_UCS4* p, Py_ssize_t n, VocabC* v, IBuf* spans, IBuf* out) noexcept nogil:
    """The words of ``p[0:n]`` (:func:`_jiwer_spans`) interned in ``v``, ids appended to ``out``."""
    cdef Py_ssize_t k
    cdef int32_t tid
    spans.n = 0
    if _jiwer_spans(p, n, spans) != 0:
        return -1
    for k in range(0, spans.n, 2):
        tid = vocab_intern(v, p + spans.p[k], spans.p[k + 1])
        if tid < 0 or ibuf_push(out, tid) != 0:
            return -1
    return 0


def jiwer_words(list texts, Vocab vocab):
    """Split each of N strings into words exactly as jiwer's default WER transform does
    (``RemoveMultipleSpaces``, ``Strip``, ``ReduceToListOfListOfWords``) and intern them in
    ``vocab``: returns ``(ids int32, offsets int64 (N + 1,))``."""
    cdef Py_ssize_t N = len(texts), i
    cdef Texts T
    texts_open(&T, texts)
    cdef int* kinds = T.kinds
    cdef void** datas = T.datas
    cdef Py_ssize_t* lens = T.lens
    offsets = np.empty(N + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    cdef UBuf buf
    cdef IBuf out, spans
    buf.p = NULL; buf.n = 0; buf.cap = 0
    out.p = NULL; out.n = 0; out.cap = 0
    spans.p = NULL; spans.n = 0; spans.cap = 0
    cdef VocabC* vc = &vocab.v
    cdef int err = 0
    with nogil:
        off[0] = 0
        for i in range(N):
            if ubuf_load(&buf, kinds[i], datas[i], lens[i], 1) != 0 or \
                    _jiwer_split(buf.p, lens[i], vc, &spans, &out) != 0:
                err = 1
                break
            off[i + 1] = out.n
    texts_close(&T); free(buf.p); free(spans.p)
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
    cdef Texts T
    texts_open(&T, texts)
    cdef int* kinds = T.kinds
    cdef void** datas = T.datas
    cdef Py_ssize_t* lens = T.lens
    total = T.total
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
    texts_close(&T); free(buf.p)
    if err:
        raise MemoryError("code_points: out of memory")
    return values[:j].copy() if j < total else values, offsets


# ---- bit-parallel Levenshtein --------------------------------------------------------------
cdef struct Pattern:
    # match vectors of one pattern (the hypothesis): symbol s has bit k of block w set in
    # peq[(slot[s] - 1) * blocks + w] when pattern[64 * w + k] == s
    int32_t* slot          # (nsym,) 0 = not in the pattern, else row + 1; reset after each use
    Py_ssize_t slot_cap    # entries of slot
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


# ---- one segment's references -> [errors, length] ------------------------------------------
cdef struct Pick:
    Py_ssize_t e          # errors of the chosen reference (-1: none yet)
    Py_ssize_t l          # its length
    double rate
    Py_ssize_t sum_l      # summed lengths (MULTI_AVERAGE)
    Py_ssize_t k          # references seen


cdef inline void pick_init(Pick* p) noexcept nogil:
    p.e = -1
    p.l = 0
    p.rate = 0.0
    p.sum_l = 0
    p.k = 0


cdef inline void pick(Pick* p, int multi_ref, Py_ssize_t e, Py_ssize_t ln) noexcept nogil:
    """Fold reference (``e`` errors, ``ln`` symbols) into the segment's choice."""
    cdef double rate
    p.sum_l += ln
    p.k += 1
    if multi_ref == 2:  # best: lowest rate (jiwer's: errors themselves for an empty reference)
        rate = (<double> e) / (<double> ln) if ln else <double> e
        if p.e < 0 or rate < p.rate:
            p.e = e
            p.l = ln
            p.rate = rate
    elif p.e < 0 or e < p.e or (e == p.e and ln > p.l):  # fewest errors, then the longest
        p.e = e
        p.l = ln


cdef inline double picked_length(Pick* p, int multi_ref) noexcept nogil:
    if multi_ref == 1:  # average: the mean length of all the segment's references
        return (<double> p.sum_l) / (<double> p.k)
    return <double> p.l


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


# ---- words straight from the strings: WER / PER without a global vocabulary -----------------
# Levenshtein and PER only ever compare a hypothesis word with a reference word of the same
# segment, so words need ids that agree within one segment only: the hypothesis' words are
# interned in a small per-segment table (it stays in L1), and a reference word that is not in it
# gets one shared "absent" id that matches nothing. This spares the global vocabulary's hashing
# into a table of every word of the corpus (its cache misses cost more than the distance).
cdef struct Local:
    int32_t* table        # cap slots: id + 1, 0 = empty
    Py_ssize_t cap        # power of two
    uint64_t* hashes      # per id
    int32_t* starts       # per id: offset of the word in the segment's code-point buffer
    int32_t* lens
    int32_t* spos         # per id: its slot (to empty the table after the segment)
    Py_ssize_t n
    Py_ssize_t idcap


cdef void local_free(Local* L) noexcept nogil:
    free(L.table); free(L.hashes); free(L.starts); free(L.lens); free(L.spos)


cdef int local_prepare(Local* L, Py_ssize_t ntok) noexcept nogil:
    """An empty table with room for ``ntok`` words at load <= 1/2."""
    cdef Py_ssize_t cap = L.cap, k
    for k in range(L.n):
        L.table[L.spos[k]] = 0
    L.n = 0
    if cap < 16:
        cap = 16
    while cap < 2 * ntok:
        cap *= 2
    if cap != L.cap:
        free(L.table)
        L.table = <int32_t*> calloc(cap, sizeof(int32_t))
        if L.table == NULL:
            return -1
        L.cap = cap
    if ntok > L.idcap:
        free(L.hashes); free(L.starts); free(L.lens); free(L.spos)
        L.idcap = 2 * ntok
        L.hashes = <uint64_t*> malloc(L.idcap * sizeof(uint64_t))
        L.starts = <int32_t*> malloc(L.idcap * sizeof(int32_t))
        L.lens = <int32_t*> malloc(L.idcap * sizeof(int32_t))
        L.spos = <int32_t*> malloc(L.idcap * sizeof(int32_t))
        if L.hashes == NULL or L.starts == NULL or L.lens == NULL or L.spos == NULL:
            return -1
    return 0


cdef inline int32_t local_id(Local* L, const Py_UCS4* buf, int32_t start, int32_t n,
                             uint64_t h, bint insert) noexcept nogil:
    """Id of the word ``buf[start:start + n]`` whose ``hash_cps`` is ``h`` (inserted when new
    and ``insert``; else -1)."""
    cdef Py_ssize_t mask = L.cap - 1
    cdef Py_ssize_t j = <Py_ssize_t> (h & <uint64_t> mask)
    cdef int32_t e
    while True:
        e = L.table[j]
        if e == 0:
            break
        e -= 1
        if L.hashes[e] == h and L.lens[e] == n and cps_equal(buf + L.starts[e], buf + start, n):
            return e
        j = (j + 1) & mask
    if not insert:
        return -1
    e = <int32_t> L.n
    L.hashes[e] = h
    L.starts[e] = start
    L.lens[e] = n
    L.spos[e] = <int32_t> j
    L.table[j] = e + 1
    L.n += 1
    return e


cdef inline int load_at(UBuf* b, Py_ssize_t off, int kind, const void* data, Py_ssize_t n) noexcept nogil:
    """Widen ``n`` code points of PEP 393 storage into ``b.p[off:off + n]``."""
    cdef Py_ssize_t k
    cdef const uint8_t* d1
    cdef const uint16_t* d2
    cdef Py_UCS4* q
    if ubuf_reserve(b, off + n + 1) != 0:
        return -1
    q = b.p + off
    if kind == 1:
        d1 = <const uint8_t*> data
        for k in range(n):
            q[k] = d1[k]
    elif kind == 2:
        d2 = <const uint16_t*> data
        for k in range(n):
            q[k] = d2[k]
    else:
        memcpy(q, data, n * sizeof(Py_UCS4))
    return 0


def word_table(list texts):
    """jiwer's words of N strings (:func:`jiwer_words`) as a table a per-segment kernel can
    probe without scanning the text again: ``(cps int32, word_start int64, word_len int32,
    word_hash uint64, offsets int64 (N + 1,))``; string i's words are ``offsets[i]:offsets[i+1]``,
    word k is ``cps[word_start[k]:word_start[k] + word_len[k]]`` (the strings' code points,
    concatenated) and ``word_hash[k]`` its ``hash_cps`` (FNV-1a 64 + finaliser)."""
    cdef Py_ssize_t N = len(texts), i, total = 0, nw, k
    cdef Texts T
    texts_open(&T, texts)
    cdef int* kinds = T.kinds
    cdef void** datas = T.datas
    cdef Py_ssize_t* lens = T.lens
    total = T.total
    cps = np.empty(total, dtype=np.int32)
    offsets = np.empty(N + 1, dtype=np.int64)
    bases = np.empty(N + 1, dtype=np.int64)
    cdef int32_t[::1] cv = cps
    cdef int64_t[::1] off = offsets
    cdef int64_t[::1] sb = bases
    cdef UBuf buf
    cdef IBuf spans
    cdef HBuf hashes
    memset(&buf, 0, sizeof(UBuf))
    memset(&spans, 0, sizeof(IBuf))
    memset(&hashes, 0, sizeof(HBuf))
    cdef int err = 0
    with nogil:
        off[0] = 0
        sb[0] = 0
        for i in range(N):
            if ubuf_load(&buf, kinds[i], datas[i], lens[i], 1) != 0 or \
                    _jiwer_words_hashed(buf.p, lens[i], 0, &spans, &hashes) != 0:
                err = 1
                break
            for k in range(lens[i]):
                cv[sb[i] + k] = <int32_t> buf.p[k]
            sb[i + 1] = sb[i] + lens[i]
            off[i + 1] = spans.n >> 1
    texts_close(&T); free(buf.p)
    if err:
        free(spans.p); free(hashes.p)
        raise MemoryError("word_table: out of memory (or a string over 2**31 code points)")
    nw = spans.n >> 1
    word_start = np.empty(nw, dtype=np.int64)
    word_len = np.empty(nw, dtype=np.int32)
    word_hash = np.empty(nw, dtype=np.uint64)
    cdef int64_t[::1] ws = word_start
    cdef int32_t[::1] wl = word_len
    cdef uint64_t[::1] wh = word_hash
    with nogil:
        k = 0
        for i in range(N):  # starts within each string -> within cps
            while k < off[i + 1]:
                ws[k] = sb[i] + spans.p[2 * k]
                wl[k] = spans.p[2 * k + 1]
                wh[k] = hashes.p[k]
                k += 1
    free(spans.p); free(hashes.p)
    return cps, word_start, word_len, word_hash, offsets


cdef struct WordWork:
    UBuf buf              # the hypothesis' code points
    IBuf spans
    HBuf hashes
    IBuf hsym
    IBuf rsym
    Local L
    Pattern P
    int32_t* count        # PER: hypothesis word counts, by local id
    int32_t* used
    Py_ssize_t count_cap


cdef int word_segment(WordWork* w, int measure, int multi_ref, int hkind, const void* hdata,
                      Py_ssize_t hn, const Py_UCS4* cps, const int64_t* word_start,
                      const int32_t* word_len, const uint64_t* word_hash,
                      const int64_t* ref_words, Py_ssize_t r0, Py_ssize_t r1,
                      double* out) noexcept nogil:
    """``out[0:2]`` = ``[errors, length]`` of one hypothesis against references ``r0:r1`` of
    a :func:`word_table`. 0, or -1 when out of memory."""
    cdef Py_ssize_t k, a, nh, nr, u, e, q
    cdef int32_t id_
    cdef Pick sel
    cdef uint64_t h
    cdef Py_ssize_t mask
    cdef int32_t t, ln
    cdef const Py_UCS4* word
    if load_at(&w.buf, 0, hkind, hdata, hn) != 0:
        return -1
    w.spans.n = 0
    w.hashes.n = 0
    if _jiwer_words_hashed(w.buf.p, hn, 0, &w.spans, &w.hashes) != 0:
        return -1
    nh = w.spans.n >> 1
    if local_prepare(&w.L, nh) != 0:
        return -1
    w.hsym.n = 0
    for k in range(nh):
        if ibuf_push(&w.hsym, local_id(&w.L, w.buf.p, w.spans.p[2 * k], w.spans.p[2 * k + 1],
                                       w.hashes.p[k], True)) != 0:
            return -1
    u = w.L.n  # ids 0..u-1; u itself: a reference word absent from the hypothesis
    if measure == 0:
        if pattern_reserve(&w.P, u) != 0 or pattern_set(&w.P, w.hsym.p, nh) != 0:
            return -1
    else:
        if u + 1 > w.count_cap:
            free(w.count); free(w.used)
            w.count_cap = 2 * (u + 1)
            w.count = <int32_t*> calloc(w.count_cap, sizeof(int32_t))
            w.used = <int32_t*> calloc(w.count_cap, sizeof(int32_t))
            if w.count == NULL or w.used == NULL:
                return -1
        for k in range(nh):
            w.count[w.hsym.p[k]] += 1
    pick_init(&sel)
    mask = w.L.cap - 1
    for a in range(r0, r1):
        nr = ref_words[a + 1] - ref_words[a]
        w.rsym.n = 0
        for k in range(ref_words[a], ref_words[a + 1]):
            # probe the hypothesis' table with the reference word's stored hash
            h = word_hash[k]
            ln = word_len[k]
            word = cps + word_start[k]
            id_ = <int32_t> u
            q = <Py_ssize_t> (h & <uint64_t> mask)
            while True:
                t = w.L.table[q]
                if t == 0:
                    break
                t -= 1
                if w.L.hashes[t] == h and w.L.lens[t] == ln and cps_equal(w.buf.p + w.L.starts[t], word, ln):
                    id_ = t
                    break
                q = (q + 1) & mask
            if ibuf_push(&w.rsym, id_) != 0:
                return -1
        if measure == 0:
            e = levenshtein_text(&w.P, w.rsym.p, nr)
        else:
            e = per_errors(w.count, w.used, w.hsym.p, nh, w.rsym.p, nr)
        pick(&sel, multi_ref, e, nr)
    if measure == 0:
        pattern_clear(&w.P)
    else:
        for k in range(nh):
            w.count[w.hsym.p[k]] = 0
    out[0] = <double> sel.e
    out[1] = picked_length(&sel, multi_ref)
    return 0


def word_stats_range(list hyps, const int32_t[::1] cps, const int64_t[::1] word_start,
                     const int32_t[::1] word_len, const uint64_t[::1] word_hash,
                     const int64_t[::1] ref_words, const int64_t[::1] ref_lo,
                     const int64_t[::1] ref_hi, double[:, ::1] out, int measure=0,
                     int multi_ref=0, Py_ssize_t start=0, Py_ssize_t stop=-1):
    """Fill ``out[start:stop]`` (float64 (N, 2)) with ``[errors, reference length]`` of
    hypothesis i (``hyps``: N str, split into jiwer's words) against references
    ``ref_lo[i]:ref_hi[i]`` of a :func:`word_table` of the references (``cps``, ``word_start``,
    ``word_len``, ``word_hash``; ``ref_words`` = its offsets). The same numbers as
    :func:`edit_stats_range` on :func:`jiwer_words` ids, without a corpus vocabulary: words get
    ids that agree within the segment only (a reference word is found in a small table of the
    hypothesis' words by its stored hash and compared in full; one that is absent gets an id
    that matches nothing). ``measure`` and ``multi_ref`` as there; a hypothesis without
    references gets ``[0, 0]``. Runs without the GIL after reading the hypotheses' storage:
    threads may fill disjoint ranges of one ``out``."""
    cdef Py_ssize_t N = len(hyps), i, R = ref_words.shape[0] - 1, W = word_start.shape[0]
    if stop < 0:
        stop = N
    if ref_lo.shape[0] != N or ref_hi.shape[0] != N or out.shape[0] != N or out.shape[1] != 2:
        raise ValueError("word_stats_range: ref_lo, ref_hi and out must have N rows (out: (N, 2))")
    if word_len.shape[0] != W or word_hash.shape[0] != W or R < 0 or ref_words[0] != 0 \
            or ref_words[R] != W:
        raise ValueError("word_stats_range: inconsistent word table")
    for i in range(R):
        if ref_words[i + 1] < ref_words[i]:
            raise ValueError("word_stats_range: inconsistent word table")
    for i in range(W):
        if word_start[i] < 0 or word_len[i] < 0 or word_start[i] + word_len[i] > cps.shape[0]:
            raise ValueError("word_stats_range: inconsistent word table")
    if measure not in (0, 1) or multi_ref not in (0, 1, 2):
        raise ValueError("word_stats_range: measure must be 0 or 1 and multi_ref 0, 1 or 2")
    if start < 0 or stop > N or start > stop:
        raise ValueError(f"word_stats_range: bad range [{start}, {stop}) for {N} segments")
    for i in range(start, stop):
        if ref_lo[i] < 0 or ref_hi[i] > R or ref_lo[i] > ref_hi[i]:
            raise ValueError(f"word_stats_range: reference range of segment {i} out of bounds")
    if stop == start:
        return
    cdef Texts T
    texts_open(&T, hyps[start:stop], start)
    cdef int* kinds = T.kinds
    cdef void** datas = T.datas
    cdef Py_ssize_t* lens = T.lens
    cdef WordWork w
    memset(&w, 0, sizeof(WordWork))
    cdef int err = pattern_init(&w.P, 64)
    cdef const Py_UCS4* cp = <const Py_UCS4*> &cps[0] if cps.shape[0] else NULL
    cdef const int64_t* wsp = &word_start[0] if W else NULL
    cdef const int32_t* wlp = &word_len[0] if W else NULL
    cdef const uint64_t* whp = &word_hash[0] if W else NULL
    with nogil:
        i = start
        while i < stop and err == 0:
            if ref_hi[i] == ref_lo[i]:
                out[i, 0] = 0.0
                out[i, 1] = 0.0
            else:
                err = word_segment(&w, measure, multi_ref, kinds[i - start], datas[i - start],
                                   lens[i - start], cp, wsp, wlp, whp, &ref_words[0],
                                   ref_lo[i], ref_hi[i], &out[i, 0])
            i += 1
        pattern_free(&w.P)
        local_free(&w.L)
        free(w.buf.p); free(w.spans.p); free(w.hashes.p); free(w.hsym.p); free(w.rsym.p)
        free(w.count); free(w.used)
    texts_close(&T)
    if err:
        raise MemoryError("word_stats_range: out of memory (or a string over 2**31 code points)")


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
