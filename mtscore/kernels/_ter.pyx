# cython: language_level=3
"""TER kernels: the Tercom normaliser (code points -> interned token ids) and sacrebleu 2.6.0's
``translation_edit_rate`` (shift search + banded edit distance) on int32 token ids.

Layout of the inputs (CSR, as everywhere in mtscore):

* hypotheses: ``hyp_ids`` int32 (all tokens), ``hyp_offsets`` int64 of length N + 1;
* references: ``ref_ids`` int32, ``ref_offsets`` int64 (one entry per reference string + 1) and
  ``seg_refs`` int64 of length N + 1: segment i has the references
  ``seg_refs[i] .. seg_refs[i+1]-1`` (a variable number, ``None`` references are simply absent).

Outputs: per segment ``edits`` and ``ref_len`` (float64), sacrebleu's ``[best_num_edits,
avg_ref_len]``. The per-pair search runs without the GIL; a Python thread pool over disjoint
segment ranges gives multi-core scaling (see ``mtscore.engine.metrics.ter``).

Exactness notes (sacrebleu 2.6.0's ``lib_ter`` behaviour; the plain-Python twin is
``mtscore/kernels/reference/ter.py``):

* the DP band per row is ``[max(0, floor(i*r) - beam), min(m+1, floor(i*r) + beam))`` with
  ``r = m / n`` in double precision, the last row extended to ``m`` (its start is NOT 0);
* ops are chosen diag, then del, then ins, each replacing only when strictly cheaper;
* candidate costs only need the distance, so they are computed cost-only, starting from the
  longest prefix whose DP rows are already known (the current hypothesis or the previous
  candidate): the rows of a prefix do not depend on what follows it, so this is exactly
  sacrebleu's trie cache without the trie;
* a reference shorter than BEAM_WIDTH makes every DP row full (plain Levenshtein): then the
  distances are computed bit-parallel, and a pair whose distance equals the bag-of-words
  bound max(n, m) - |bag(h) & bag(r)| returns it without a shift search (no shift can gain:
  ``shift_free_cost``).
"""
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcmp, memcpy, memset
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.math cimport floor, ceil

import numpy as np
cimport numpy as cnp
from mtscore.kernels._ucs4 cimport (
    PyUnicode_READY, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, Py_UNICODE_ISSPACE,
    UBuf, ubuf_init, ubuf_free, ubuf_reserve, ubuf_load, is_digit, is_13a_punct, is_space,
    HASH_INIT, hash_step, hash_cps_fold, cps_equal, replace_inplace)

cnp.import_array()

cdef enum:
    MAX_SHIFT_SIZE = 10
    MAX_SHIFT_DIST = 50
    BEAM_WIDTH = 25
    MAX_SHIFT_CANDIDATES = 1000
    INF = 1 << 28

cdef enum:
    OP_NOP = 0
    OP_SUB = 1
    OP_INS = 2
    OP_DEL = 3
    OP_UNDEF = 4


# =============================================================================================
# Tercom normaliser + interning (code-point buffers, is_digit, the western punctuation class
# is_13a_punct and the token hash: _ucs4.pxd, shared with the _text tokenizers)
# =============================================================================================
cdef inline bint is_dot_comma(Py_UCS4 c) noexcept nogil:
    return c == 0x2E or c == 0x2C


cdef inline bint is_asian_punct(Py_UCS4 c) noexcept nogil:
    return (c == 0x3001 or c == 0x3002 or c == 0x30FB or (0x3008 <= c <= 0x3011)
            or (0x3014 <= c <= 0x301F) or (0xFF61 <= c <= 0xFF65))


cdef inline bint is_fullwidth_punct(Py_UCS4 c) noexcept nogil:
    return (c == 0xFF0E or c == 0xFF0C or c == 0xFF1F or c == 0xFF1A or c == 0xFF1B
            or c == 0xFF01 or c == 0xFF02 or c == 0xFF08 or c == 0xFF09)


cdef inline bint is_asian_split(Py_UCS4 c) noexcept nogil:
    # union of the four splitting classes of _normalize_asian plus its two punctuation classes
    return ((0x4E00 <= c <= 0x9FFF) or (0x3400 <= c <= 0x4DBF) or (0x31C0 <= c <= 0x31EF)
            or (0x2E80 <= c <= 0x2EFF) or (0x3300 <= c <= 0x33FF) or (0xF900 <= c <= 0xFAFF)
            or (0xFE30 <= c <= 0xFE4F) or (0x3200 <= c <= 0x3F22)
            or is_asian_punct(c) or is_fullwidth_punct(c))


cdef inline bint is_plain_punct(Py_UCS4 c) noexcept nogil:
    # ``[\.,\?:;!\"\(\)]``
    return (c == 0x2E or c == 0x2C or c == 0x3F or c == 0x3A or c == 0x3B or c == 0x21
            or c == 0x22 or c == 0x28 or c == 0x29)


cdef Py_UCS4 REP_QUOT = 0x22, REP_AMP = 0x26, REP_LT = 0x3C, REP_GT = 0x3E
cdef Py_UCS4 LIT_QUOT[6]
cdef Py_UCS4 LIT_AMP[5]
cdef Py_UCS4 LIT_LT[4]
cdef Py_UCS4 LIT_GT[4]
for _i, _c in enumerate("&quot;"):
    LIT_QUOT[_i] = ord(_c)
for _i, _c in enumerate("&amp;"):
    LIT_AMP[_i] = ord(_c)
for _i, _c in enumerate("&lt;"):
    LIT_LT[_i] = ord(_c)
for _i, _c in enumerate("&gt;"):
    LIT_GT[_i] = ord(_c)


cdef int normalize_western(UBuf* a, UBuf* b) noexcept nogil:
    """sacrebleu ``_normalize_general_and_western``: input in ``a``, output in ``a``."""
    cdef Py_ssize_t i, o, n
    cdef Py_UCS4* s
    cdef Py_UCS4* t
    cdef Py_UCS4 c
    cdef UBuf tmp
    s = a.p
    n = a.n
    # r"\n-" -> ""
    i = 0
    o = 0
    while i < n:
        if s[i] == 0x0A and i + 1 < n and s[i + 1] == 0x2D:
            i += 2
        else:
            s[o] = s[i]
            o += 1
            i += 1
    n = o
    # r"\n" -> " "
    for i in range(n):
        if s[i] == 0x0A:
            s[i] = 0x20
    n = replace_inplace(s, n, LIT_QUOT, 6, &REP_QUOT, 1)
    n = replace_inplace(s, n, LIT_AMP, 5, &REP_AMP, 1)
    n = replace_inplace(s, n, LIT_LT, 4, &REP_LT, 1)
    n = replace_inplace(s, n, LIT_GT, 4, &REP_GT, 1)
    # f" {sent} " and the punctuation class -> " c "
    if ubuf_reserve(b, 3 * (n + 2) + 4) < 0:
        return -1
    t = b.p
    o = 0
    # the padding spaces are themselves in the class (0x20), so each becomes three spaces
    t[o] = 0x20; t[o + 1] = 0x20; t[o + 2] = 0x20
    o += 3
    for i in range(n):
        c = s[i]
        if is_13a_punct(c):
            t[o] = 0x20; t[o + 1] = c; t[o + 2] = 0x20
            o += 3
        else:
            t[o] = c
            o += 1
    t[o] = 0x20; t[o + 1] = 0x20; t[o + 2] = 0x20
    o += 3
    n = o
    # r"'s " -> " 's "   (r"'s$" never matches: the string ends with a space)
    if ubuf_reserve(a, 2 * n + 4) < 0:
        return -1
    s = a.p
    i = 0
    o = 0
    while i < n:
        if t[i] == 0x27 and i + 2 < n and t[i + 1] == 0x73 and t[i + 2] == 0x20:
            s[o] = 0x20; s[o + 1] = 0x27; s[o + 2] = 0x73; s[o + 3] = 0x20
            o += 4
            i += 3
        else:
            s[o] = t[i]
            o += 1
            i += 1
    n = o
    # r"([^0-9])([\.,])" -> r"\1 \2 "
    if ubuf_reserve(b, 2 * n + 4) < 0:
        return -1
    t = b.p
    i = 0
    o = 0
    while i < n:
        if i + 1 < n and not is_digit(s[i]) and is_dot_comma(s[i + 1]):
            t[o] = s[i]; t[o + 1] = 0x20; t[o + 2] = s[i + 1]; t[o + 3] = 0x20
            o += 4
            i += 2
        else:
            t[o] = s[i]
            o += 1
            i += 1
    n = o
    # r"([\.,])([^0-9])" -> r" \1 \2"
    if ubuf_reserve(a, 2 * n + 4) < 0:
        return -1
    s = a.p
    i = 0
    o = 0
    while i < n:
        if i + 1 < n and is_dot_comma(t[i]) and not is_digit(t[i + 1]):
            s[o] = 0x20; s[o + 1] = t[i]; s[o + 2] = 0x20; s[o + 3] = t[i + 1]
            o += 4
            i += 2
        else:
            s[o] = t[i]
            o += 1
            i += 1
    n = o
    # r"([0-9])(-)" -> r"\1 \2 "
    if ubuf_reserve(b, 2 * n + 4) < 0:
        return -1
    t = b.p
    i = 0
    o = 0
    while i < n:
        if i + 1 < n and is_digit(s[i]) and s[i + 1] == 0x2D:
            t[o] = s[i]; t[o + 1] = 0x20; t[o + 2] = 0x2D; t[o + 3] = 0x20
            o += 4
            i += 2
        else:
            t[o] = s[i]
            o += 1
            i += 1
    b.n = o
    # result back into a (swap the buffers)
    tmp = a[0]
    a[0] = b[0]
    b[0] = tmp
    return 0


cdef int normalize_asian(UBuf* a, UBuf* b) noexcept nogil:
    """sacrebleu ``_normalize_asian`` (after the western step): every character of the
    splitting classes gets spaces around it. The kana rules are no-ops here (they are anchored
    at both string ends and the string starts with a space)."""
    cdef Py_ssize_t i, o = 0, n = a.n
    cdef Py_UCS4 c
    cdef UBuf tmp
    if ubuf_reserve(b, 3 * n + 4) < 0:
        return -1
    for i in range(n):
        c = a.p[i]
        if is_asian_split(c):
            b.p[o] = 0x20; b.p[o + 1] = c; b.p[o + 2] = 0x20
            o += 3
        else:
            b.p[o] = c
            o += 1
    b.n = o
    tmp = a[0]
    a[0] = b[0]
    b[0] = tmp
    return 0


cdef void remove_punct(UBuf* a, bint asian) noexcept nogil:
    cdef Py_ssize_t i, o = 0
    cdef Py_UCS4 c
    for i in range(a.n):
        c = a.p[i]
        if is_plain_punct(c):
            continue
        if asian and (is_asian_punct(c) or is_fullwidth_punct(c)):
            continue
        a.p[o] = c
        o += 1
    a.n = o


ctypedef struct TokMeta:    # 16 bytes: a first call's vocabulary touches few fresh pages
    uint32_t hash       # low half of hash_cps_fold of the code points (slots use low bits)
    uint32_t start      # byte offset in the arena (arena < 4 GiB)
    int32_t len         # code points
    int32_t width       # bytes per code point: 1, 2 or 4


cdef class TercomVocab:
    """Exact interning of token strings (code-point sequences) to dense int32 ids.

    Ids are assigned in first-seen order; equal strings get equal ids in every call that shares
    the vocab (hash + full comparison of the code points). Not thread-safe: intern under the GIL.
    Each token's code points are kept 1, 2 or 4 bytes wide, the narrowest that holds them (as
    PEP 393 does): a quarter of the memory, hence of the fresh pages a first call touches, for
    Latin-script text.
    """
    cdef uint8_t* chars     # byte arena
    cdef int64_t nchars, cap_chars
    cdef TokMeta* meta      # per token, one cache line for a lookup
    cdef int32_t ntok, cap_tok
    cdef int32_t* table
    cdef uint64_t mask

    def __cinit__(self):
        # small to start (they double as needed): a vocabulary of one pair (ter_corpus_plain)
        # or a first call then touches a few cache lines, not ~40 fresh pages
        self.cap_chars = 1 << 12
        self.chars = <uint8_t*>malloc(self.cap_chars)
        self.cap_tok = 1 << 8
        self.meta = <TokMeta*>malloc(self.cap_tok * sizeof(TokMeta))
        self.mask = (1 << 9) - 1
        self.table = <int32_t*>malloc((self.mask + 1) * sizeof(int32_t))
        if self.chars == NULL or self.meta == NULL or self.table == NULL:
            raise MemoryError("TercomVocab: out of memory")
        cdef uint64_t k
        for k in range(self.mask + 1):
            self.table[k] = -1
        self.ntok = 0
        self.nchars = 0

    def __dealloc__(self):
        free(self.chars)
        free(self.meta)
        free(self.table)

    def __len__(self):
        return self.ntok

    def token(self, int32_t i):
        """The string of token id ``i``."""
        if i < 0 or i >= self.ntok:
            raise IndexError(f"TercomVocab.token: id {i} out of range (size {self.ntok})")
        return "".join([chr(self.cp(i, k)) for k in range(self.meta[i].len)])

    cdef inline uint32_t cp(self, int32_t t, Py_ssize_t k) noexcept nogil:
        """Code point k of token t."""
        cdef const uint8_t* q = self.chars + self.meta[t].start
        if self.meta[t].width == 1:
            return q[k]
        if self.meta[t].width == 2:
            return (<const uint16_t*>q)[k]
        return (<const uint32_t*>q)[k]

    cdef inline bint same(self, int32_t t, const Py_UCS4* s, Py_ssize_t n) noexcept nogil:
        """Token t == s[:n] (the lengths are equal)."""
        cdef const uint8_t* q = self.chars + self.meta[t].start
        cdef const uint16_t* q2
        cdef Py_ssize_t k
        if self.meta[t].width == 1:
            for k in range(n):
                if q[k] != <uint32_t>s[k]:
                    return False
            return True
        if self.meta[t].width == 2:
            q2 = <const uint16_t*>q
            for k in range(n):
                if q2[k] != <uint32_t>s[k]:
                    return False
            return True
        return cps_equal(<const Py_UCS4*>q, s, n)

    cdef int grow_table(self) noexcept nogil:
        cdef uint64_t newmask = (self.mask << 1) | 1
        cdef int32_t* nt = <int32_t*>malloc((newmask + 1) * sizeof(int32_t))
        cdef uint64_t k, slot
        cdef int32_t t
        if nt == NULL:
            return -1
        for k in range(newmask + 1):
            nt[k] = -1
        for t in range(self.ntok):
            slot = self.meta[t].hash & newmask
            while nt[slot] != -1:
                slot = (slot + 1) & newmask
            nt[slot] = t
        free(self.table)
        self.table = nt
        self.mask = newmask
        return 0

    cdef void clear(self) noexcept nogil:
        """Forget every token (ids restart at 0), in time linear in the number of tokens: each
        token's slot is found by its hash, then all are freed."""
        cdef int32_t t
        cdef uint64_t slot
        for t in range(self.ntok):
            slot = self.meta[t].hash & self.mask
            while self.table[slot] != t:
                slot = (slot + 1) & self.mask
            self.meta[t].hash = <uint32_t>slot   # no longer needed as a hash: keep the slot
        for t in range(self.ntok):
            self.table[self.meta[t].hash] = -1
        self.ntok = 0
        self.nchars = 0

    cdef int32_t intern(self, const Py_UCS4* s, Py_ssize_t n) noexcept nogil:
        return self.intern_h(s, n, hash_cps_fold(s, n))

    cdef int32_t intern_h(self, const Py_UCS4* s, Py_ssize_t n, uint64_t h) noexcept nogil:
        """``intern`` of a token whose ``hash_cps_fold`` is ``h``."""
        cdef uint64_t slot = h & self.mask
        cdef int32_t t
        cdef void* p
        cdef int64_t newcap
        cdef uint32_t top
        cdef Py_ssize_t k
        cdef int width
        cdef uint8_t* q
        while True:
            t = self.table[slot]
            if t == -1:
                break
            if self.meta[t].hash == <uint32_t>h and self.meta[t].len == n and self.same(t, s, n):
                return t
            slot = (slot + 1) & self.mask
        # new token
        if self.ntok == self.cap_tok:
            if self.cap_tok >= (1 << 30):
                return -1
            self.cap_tok *= 2
            p = realloc(self.meta, self.cap_tok * sizeof(TokMeta))
            if p == NULL:
                return -1
            self.meta = <TokMeta*>p
        top = 0
        for k in range(n):
            if <uint32_t>s[k] > top:
                top = <uint32_t>s[k]
        width = 1 if top < 256 else (2 if top < 65536 else 4)
        if self.nchars + n * width + 3 >= (<int64_t>1 << 32):
            return -1   # TokMeta.start is 32 bits
        if self.nchars + n * width + 3 > self.cap_chars:
            newcap = self.cap_chars * 2
            while newcap < self.nchars + n * width + 3:
                newcap *= 2
            p = realloc(self.chars, newcap)
            if p == NULL:
                return -1
            self.chars = <uint8_t*>p
            self.cap_chars = newcap
        self.nchars = (self.nchars + width - 1) & ~(<int64_t>width - 1)  # aligned for its width
        q = self.chars + self.nchars
        if width == 1:
            for k in range(n):
                q[k] = <uint8_t>s[k]
        elif width == 2:
            for k in range(n):
                (<uint16_t*>q)[k] = <uint16_t>s[k]
        else:
            memcpy(q, s, n * sizeof(Py_UCS4))
        t = self.ntok
        self.meta[t].hash = <uint32_t>h
        self.meta[t].start = <uint32_t>self.nchars
        self.meta[t].len = <int32_t>n
        self.meta[t].width = width
        self.nchars += n * width
        self.ntok += 1
        self.table[slot] = t
        if <uint64_t>self.ntok * 2 > self.mask:
            if self.grow_table() < 0:
                return -1
        return t


cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_4BYTE_KIND
    bint PyUnicode_IS_ASCII(object o)


# ---- str.lower() of BMP code points, learnt from Python the first time each is seen ---------
# CPython's str.lower() maps each code point on its own (_PyUnicode_ToLowerFull) except U+03A3
# (capital sigma: final or not depends on its neighbours). So a text whose code points all have
# one-code-point lowercase forms, sigma excluded, is lowercased exactly by a per-code-point
# table; any other text goes through str.lower() itself. 256 pages of 256 entries, allocated
# when first needed (under the GIL); 0: not learnt yet.
cdef enum:
    LOWER_SPECIAL = 0xFFFFFFFF      # several code points, or context-dependent (U+03A3)

cdef uint32_t* _lower_pages[256]


cdef uint32_t lower_learn(uint32_t c) except 0:
    """``chr(c).lower()`` as one code point (c a BMP code point >= 128), or LOWER_SPECIAL;
    remembered in the table."""
    cdef uint32_t* page = _lower_pages[c >> 8]
    cdef uint32_t v
    if page == NULL:
        page = <uint32_t*>calloc(256, sizeof(uint32_t))
        if page == NULL:
            raise MemoryError("Tercom normaliser: out of memory")
        _lower_pages[c >> 8] = page
    low = chr(c).lower()
    v = ord(low) if len(low) == 1 and c != 0x3A3 else LOWER_SPECIAL
    page[c & 255] = v
    return v


cdef inline uint32_t lower_known(uint32_t c) noexcept nogil:
    """The table's lowercase of the BMP code point ``c`` >= 128 (0: not learnt yet)."""
    cdef uint32_t* page = _lower_pages[c >> 8]
    return page[c & 255] if page != NULL else 0


cdef int lower_buf(UBuf* a) except -1:
    """``str.lower()`` of the code points in ``a``, in place; 1 when they need Python's own
    (a code point outside the BMP, U+03A3, or a multi-code-point lowercase: ``a`` is then
    partly lowercased and must be reloaded), else 0."""
    cdef Py_ssize_t k
    cdef uint32_t c, v
    for k in range(a.n):
        c = <uint32_t> a.p[k]
        if c < 128:
            if 0x41 <= c <= 0x5A:
                a.p[k] = <Py_UCS4> (c + 0x20)
        elif c <= 0xFFFF:
            v = lower_known(c)
            if v == 0:
                v = lower_learn(c)
            if v == LOWER_SPECIAL:
                return 1
            a.p[k] = <Py_UCS4> v
        else:
            return 1
    return 0


cdef int normalize_one(object s, UBuf* a, UBuf* b, bint normalized, bint no_punct,
                       bint asian_support, bint rstrip=False, bint lowercase=False) except -1:
    """Copy the code points of ``s`` into ``a`` and apply the Tercom steps (result in ``a``).
    ``rstrip`` / ``lowercase``: ``s.rstrip()`` / ``.lower()`` first, as sacrebleu does (in C,
    code point by code point, see ``lower_buf``; Python's own ``str.lower`` for the texts that
    need its context rule or multi-code-point mappings)."""
    cdef Py_ssize_t L
    if not isinstance(s, str):
        raise TypeError(f"Tercom normaliser: got {type(s).__name__}, expected str")
    PyUnicode_READY(s)
    L = PyUnicode_GET_LENGTH(s)
    if ubuf_load(a, PyUnicode_KIND(s), PyUnicode_DATA(s), L, 8) < 0:
        raise MemoryError("Tercom normaliser: out of memory")
    if rstrip:  # str.rstrip(): trailing Py_UNICODE_ISSPACE code points
        while a.n > 0 and Py_UNICODE_ISSPACE(a.p[a.n - 1]):
            a.n -= 1
    if lowercase and lower_buf(a):
        s = (s.rstrip() if rstrip else s).lower()
        PyUnicode_READY(s)
        if ubuf_load(a, PyUnicode_KIND(s), PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s), 8) < 0:
            raise MemoryError("Tercom normaliser: out of memory")
    if normalize_buf(a, b, normalized, no_punct, asian_support) < 0:
        raise MemoryError("Tercom normaliser: out of memory")
    return 0


cdef int normalize_buf(UBuf* a, UBuf* b, bint normalized, bint no_punct,
                       bint asian_support) noexcept nogil:
    """The Tercom steps on the code points in ``a`` (result in ``a``); 0, or -1 when out of
    memory."""
    if a.n > 0 and normalized:
        if normalize_western(a, b) < 0:
            return -1
        if asian_support and normalize_asian(a, b) < 0:
            return -1
    if no_punct:
        remove_punct(a, asian_support)
    return 0


cdef void collapse_spaces(UBuf* a) noexcept nogil:
    """``" ".join(a.split())`` in place: tokens separated by one space, none at the ends."""
    cdef Py_ssize_t k = 0, o = 0
    while k < a.n:
        while k < a.n and Py_UNICODE_ISSPACE(a.p[k]):
            k += 1
        if k >= a.n:
            break
        if o > 0:
            a.p[o] = 0x20
            o += 1
        while k < a.n and not Py_UNICODE_ISSPACE(a.p[k]):
            a.p[o] = a.p[k]
            o += 1
            k += 1
    a.n = o


cdef enum:
    CP_SKIP = 0xFFFFFFFD            # removed (no_punct)
    CP_SPACE = 0xFFFFFFFE           # whitespace: ends a token
    # LOWER_SPECIAL = 0xFFFFFFFF: the text needs Python's own str.lower()

#: what ``plain_tokens`` makes of a code point c < 256: ``_lat1[lowercase + 2 * no_punct][c]``
#: (filled at import from str.lower() and str.isspace())
cdef uint32_t _lat1[4][256]


cdef uint32_t map_wide(uint32_t c, bint lowercase, bint no_punct, bint asian_support) except 0:
    """What ``plain_tokens`` makes of a code point c >= 256 (``_lat1`` below 256): CP_SPACE,
    LOWER_SPECIAL, CP_SKIP, or the (lowercased) code point."""
    cdef uint32_t v
    if is_space(c):
        return CP_SPACE
    if lowercase:
        if c > 0xFFFF:
            return LOWER_SPECIAL
        v = lower_known(c)
        if v == 0:
            v = lower_learn(c)
        if v == LOWER_SPECIAL:
            return v
        c = v
    if no_punct and (is_plain_punct(c) or (asian_support and (
            is_asian_punct(c) or is_fullwidth_punct(c)))):
        return CP_SKIP
    return c


cdef void fill_lat1() except *:
    cdef uint32_t c, v
    cdef int mode
    for mode in range(4):
        for c in range(256):
            v = c
            if mode & 1 and c >= 128:
                v = ord(chr(c).lower())   # one code point for all of Latin-1
            elif mode & 1 and 0x41 <= c <= 0x5A:
                v = c + 0x20
            if Py_UNICODE_ISSPACE(c):
                v = CP_SPACE
            elif mode & 2 and is_plain_punct(v):
                v = CP_SKIP
            _lat1[mode][c] = v


fill_lat1()


ctypedef fused cp_t:      # the three PEP 393 storage widths
    uint8_t
    uint16_t
    Py_UCS4


cdef Py_ssize_t plain_tokens(TercomVocab vocab, const cp_t* data, Py_ssize_t L, bint lowercase,
                             bint no_punct, bint asian_support, Py_UCS4* tok,
                             int32_t* ids) except -2:
    """One pass over the PEP 393 storage of a text (``data``, ``L`` code points):
    whitespace split, ``str.lower()`` per code point (``lowercase``, see ``lower_buf``),
    punctuation removal (``no_punct``) and interning, the ids written to ``ids``; ``tok`` has
    room for ``L`` code points. Returns the number of ids, or -1 when the text needs Python's
    own ``str.lower()`` (then nothing of it is interned that ``str.lower()`` would not give).

    Exact because every step is local to a whitespace-separated token: str.lower() maps no
    code point to or from whitespace and its one context rule (final sigma) is left to Python;
    punctuation removal deletes single non-space code points; rstrip() only drops whitespace
    that the split drops anyway."""
    cdef Py_ssize_t k = 0, t, cnt = 0
    cdef uint32_t c, v
    cdef uint64_t h
    cdef int32_t tid
    cdef const uint32_t* tab = _lat1[(<int>lowercase) + 2 * (<int>no_punct)]
    while k < L:
        c = <uint32_t>data[k]
        v = tab[c] if c < 256 else map_wide(c, lowercase, no_punct, asian_support)
        if v == CP_SPACE:
            k += 1
            continue
        t = 0
        h = HASH_INIT
        while True:
            if v < CP_SKIP:
                tok[t] = v
                t += 1
                h = hash_step(h, v)
            elif v == LOWER_SPECIAL:
                return -1
            k += 1
            if k >= L:
                break
            c = <uint32_t>data[k]
            v = tab[c] if c < 256 else map_wide(c, lowercase, no_punct, asian_support)
            if v == CP_SPACE:
                break
        if t > 0:
            tid = vocab.intern_h(tok, t, h ^ (h >> 29))
            if tid < 0:
                raise MemoryError("tercom_tokenize: out of memory while interning")
            ids[cnt] = tid
            cnt += 1
    return cnt


cdef inline Py_ssize_t plain_tokens_of(object s, TercomVocab vocab, Py_ssize_t L, bint lowercase,
                                       bint no_punct, bint asian_support, Py_UCS4* tok,
                                       int32_t* ids) except -2:
    cdef int kind = PyUnicode_KIND(s)
    cdef const void* data = PyUnicode_DATA(s)
    if kind == 1:
        return plain_tokens(vocab, <const uint8_t*>data, L, lowercase, no_punct, asian_support,
                            tok, ids)
    if kind == 2:
        return plain_tokens(vocab, <const uint16_t*>data, L, lowercase, no_punct, asian_support,
                            tok, ids)
    return plain_tokens(vocab, <const Py_UCS4*>data, L, lowercase, no_punct, asian_support, tok,
                        ids)


cdef Py_ssize_t tokenize_plain(list texts, TercomVocab vocab, bint no_punct, bint asian_support,
                               bint lowercase, UBuf* tok, int32_t** ids, Py_ssize_t* ids_cap,
                               int64_t* offsets) except -1:
    """``tercom_tokenize`` without ``normalized`` (sacrebleu's default TER): each text read
    once, straight from its storage (``plain_tokens``). Returns the number of ids written."""
    cdef Py_ssize_t N = len(texts), i, L, cnt, pos = 0
    cdef object s
    cdef void* p
    offsets[0] = 0
    for i in range(N):
        s = texts[i]
        if not isinstance(s, str):
            raise TypeError(f"Tercom normaliser: got {type(s).__name__}, expected str")
        PyUnicode_READY(s)
        L = PyUnicode_GET_LENGTH(s)
        if pos + L // 2 + 2 > ids_cap[0]:   # at most (L + 1) / 2 tokens
            while pos + L // 2 + 2 > ids_cap[0]:
                ids_cap[0] *= 2
            p = realloc(ids[0], ids_cap[0] * sizeof(int32_t))
            if p == NULL:
                raise MemoryError("tercom_tokenize: out of memory")
            ids[0] = <int32_t*>p
        if ubuf_reserve(tok, L + 8) < 0:
            raise MemoryError("tercom_tokenize: out of memory")
        cnt = plain_tokens_of(s, vocab, L, lowercase, no_punct, asian_support, tok.p, ids[0] + pos)
        if cnt < 0:
            s = s.lower()
            PyUnicode_READY(s)
            L = PyUnicode_GET_LENGTH(s)
            if pos + L // 2 + 2 > ids_cap[0]:
                while pos + L // 2 + 2 > ids_cap[0]:
                    ids_cap[0] *= 2
                p = realloc(ids[0], ids_cap[0] * sizeof(int32_t))
                if p == NULL:
                    raise MemoryError("tercom_tokenize: out of memory")
                ids[0] = <int32_t*>p
            if ubuf_reserve(tok, L + 8) < 0:
                raise MemoryError("tercom_tokenize: out of memory")
            cnt = plain_tokens_of(s, vocab, L, False, no_punct, asian_support, tok.p, ids[0] + pos)
        pos += cnt
        offsets[i + 1] = pos
    return pos


def tercom_normalize_texts(list texts, bint normalized=False, bint no_punct=False,
                           bint asian_support=False, bint rstrip=False, bint lowercase=False):
    """sacrebleu's ``TercomTokenizer`` on each string of ``texts`` (``rstrip``: ``rstrip()``-ed
    first; ``lowercase``: ``lower()``-ed first; sacrebleu does both unless case-sensitive): a
    list of normalised strings, tokens joined by one space."""
    cdef UBuf a, b
    cdef Py_ssize_t i
    cdef list out = []
    ubuf_init(&a)
    ubuf_init(&b)
    try:
        for i in range(len(texts)):
            normalize_one(texts[i], &a, &b, normalized, no_punct, asian_support, rstrip, lowercase)
            collapse_spaces(&a)
            out.append(PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, a.p, a.n))
        return out
    finally:
        ubuf_free(&a)
        ubuf_free(&b)


def tercom_tokenize(list texts, TercomVocab vocab, bint normalized=False,
                    bint no_punct=False, bint asian_support=False, bint rstrip=False,
                    bint lowercase=False):
    """Tercom-normalise and intern ``texts``.

    ``texts``: list of N str; ``rstrip`` / ``lowercase``: apply ``str.rstrip()`` /
    ``str.lower()`` first (sacrebleu's TER does both unless case-sensitive).
    Returns ``(ids, offsets)``: int32 array of token ids and int64 array of length N + 1;
    segment i is ``ids[offsets[i]:offsets[i+1]]``; the tokens of a segment are exactly
    ``TercomTokenizer(...)(text).split()``.
    """
    cdef Py_ssize_t N = len(texts), i, k, start
    cdef Py_ssize_t pos = 0
    cdef UBuf a, b
    cdef int32_t tid
    cdef cnp.ndarray[cnp.int64_t, ndim=1] offsets = np.zeros(N + 1, dtype=np.int64)
    cdef int32_t* ids
    cdef Py_ssize_t ids_cap = 1024
    cdef void* p
    cdef Py_UCS4* d
    ubuf_init(&a)
    ubuf_init(&b)
    ids = <int32_t*>malloc(ids_cap * sizeof(int32_t))
    if ids == NULL:
        raise MemoryError("tercom_tokenize: out of memory")
    try:
        if not normalized:
            pos = tokenize_plain(texts, vocab, no_punct, asian_support, lowercase, &a, &ids,
                                 &ids_cap, <int64_t*>cnp.PyArray_DATA(offsets))
            N = 0   # done
        for i in range(N):
            normalize_one(texts[i], &a, &b, normalized, no_punct, asian_support, rstrip, lowercase)
            # whitespace split + interning; at most (n+1)/2 tokens
            if pos + a.n // 2 + 2 > ids_cap:
                while pos + a.n // 2 + 2 > ids_cap:
                    ids_cap *= 2
                p = realloc(ids, ids_cap * sizeof(int32_t))
                if p == NULL:
                    raise MemoryError("tercom_tokenize: out of memory")
                ids = <int32_t*>p
            d = a.p
            k = 0
            while k < a.n:
                while k < a.n and Py_UNICODE_ISSPACE(d[k]):
                    k += 1
                if k >= a.n:
                    break
                start = k
                while k < a.n and not Py_UNICODE_ISSPACE(d[k]):
                    k += 1
                tid = vocab.intern(d + start, k - start)
                if tid < 0:
                    raise MemoryError("tercom_tokenize: out of memory while interning")
                ids[pos] = tid
                pos += 1
            offsets[i + 1] = pos
        out = np.empty(pos, dtype=np.int32)
        if pos:
            memcpy(cnp.PyArray_DATA(out), ids, pos * sizeof(int32_t))
        return out, offsets
    finally:
        free(ids)
        ubuf_free(&a)
        ubuf_free(&b)


# =============================================================================================
# translation edit rate
# =============================================================================================
ctypedef struct Work:
    int ncap, mcap, tcap
    int band_n, band_m  # the (n, m) the band arrays below were set up for (-1: none)
    int64_t cellcap
    int32_t* cur        # current hypothesis (n)
    int32_t* cand       # candidate (n)
    int32_t* prevcand   # previous candidate (n)
    int32_t* best       # best candidate of the round (n)
    int32_t* lo         # band start per row (n+1)
    int32_t* hi         # band end (exclusive) per row
    int32_t* rs         # first stored column per row
    int32_t* re         # end of stored columns per row
    int64_t* roff       # offset of the row in the band-compressed matrices, minus rs
    int32_t* curmat     # DP costs of the current hypothesis (band-compressed)
    int32_t* candmat    # DP costs of candidates
    int32_t* bwd        # backward DP of the current hypothesis (row i stores [lo_i, hi_i))
    int64_t* boff       # offset of row i in bwd, minus lo_i
    int64_t bcellcap
    uint8_t* trace      # n + m
    int32_t* align      # m
    int32_t* hcum       # n + 1, prefix sums of hypothesis errors
    int32_t* rcum       # m + 1, prefix sums of reference errors
    uint64_t* eq        # n: per word of the current hypothesis, the mask of equal reference words
    uint64_t* eqc       # n: the same for a candidate


cdef void work_free(Work* w) noexcept nogil:
    free(w.cur); free(w.cand); free(w.prevcand); free(w.best)
    free(w.lo); free(w.hi); free(w.rs); free(w.re); free(w.roff)
    free(w.curmat); free(w.candmat); free(w.bwd); free(w.boff)
    free(w.trace); free(w.align); free(w.hcum); free(w.rcum); free(w.eq); free(w.eqc)


cdef void work_init(Work* w) noexcept nogil:
    w.ncap = -1
    w.mcap = -1
    w.tcap = -1
    w.band_n = -1
    w.band_m = -1
    w.cellcap = -1
    w.cur = NULL; w.cand = NULL; w.prevcand = NULL; w.best = NULL
    w.lo = NULL; w.hi = NULL; w.rs = NULL; w.re = NULL; w.roff = NULL
    w.curmat = NULL; w.candmat = NULL; w.bwd = NULL; w.boff = NULL
    w.bcellcap = -1
    w.trace = NULL; w.align = NULL; w.hcum = NULL; w.rcum = NULL
    w.eq = NULL; w.eqc = NULL


cdef inline int grow(void** p, int64_t nbytes) noexcept nogil:
    cdef void* q = realloc(p[0], nbytes if nbytes > 0 else 1)
    if q == NULL:
        return -1
    p[0] = q
    return 0


cdef int work_reserve(Work* w, int n, int m) noexcept nogil:
    cdef int nc, mc
    if n > w.ncap:
        nc = n if n > 2 * w.ncap else 2 * w.ncap
        if nc < 64:
            nc = 64
        if (grow(<void**>&w.cur, nc * 4) or grow(<void**>&w.cand, nc * 4)
                or grow(<void**>&w.prevcand, nc * 4) or grow(<void**>&w.best, nc * 4)
                or grow(<void**>&w.lo, (nc + 1) * 4) or grow(<void**>&w.hi, (nc + 1) * 4)
                or grow(<void**>&w.rs, (nc + 1) * 4) or grow(<void**>&w.re, (nc + 1) * 4)
                or grow(<void**>&w.roff, (nc + 1) * 8) or grow(<void**>&w.hcum, (nc + 1) * 4)
                or grow(<void**>&w.boff, (nc + 1) * 8) or grow(<void**>&w.eq, nc * 8)
                or grow(<void**>&w.eqc, nc * 8)):
            return -1
        w.ncap = nc
    if m > w.mcap:
        mc = m if m > 2 * w.mcap else 2 * w.mcap
        if mc < 64:
            mc = 64
        if (grow(<void**>&w.align, mc * 4) or grow(<void**>&w.rcum, (mc + 1) * 4)):
            return -1
        w.mcap = mc
    if n + m + 1 > w.tcap:
        if grow(<void**>&w.trace, 2 * (n + m + 1)):
            return -1
        w.tcap = 2 * (n + m + 1)
    return 0


cdef int setup_band(Work* w, int n, int m) noexcept nogil:
    """Band per row (sacrebleu BeamEditDistance) and the band-compressed row layout.

    Row i computes columns [lo_i, hi_i); it is stored over [rs_i, re_i) =
    [max(0, lo_i - 1), max(hi_i, hi_{i+1})), i.e. with the INF cells the next row reads."""
    cdef double ratio = <double>m / <double>n
    cdef int beam = BEAM_WIDTH
    cdef int i, pd
    cdef int64_t total = 0
    if n == w.band_n and m == w.band_m:
        return 0    # set up for the previous pair already
    w.band_n = -1
    if m < BEAM_WIDTH:
        # every row is full: floor(i * m / n) <= m < beam, so lo = 0 and hi = m + 1 (and the
        # beam is not widened: that needs m / n > 2 * BEAM_WIDTH); rows stored over [0, m + 1)
        total = (<int64_t>n + 1) * (m + 1)
        if total > w.cellcap:
            if grow(<void**>&w.curmat, total * 4) or grow(<void**>&w.candmat, total * 4):
                return -1
            w.cellcap = total
        if total > w.bcellcap:
            if grow(<void**>&w.bwd, total * 4):
                return -1
            w.bcellcap = total
        for i in range(n + 1):
            w.lo[i] = 0
            w.hi[i] = m + 1
            w.rs[i] = 0
            w.re[i] = m + 1
            w.roff[i] = <int64_t>i * (m + 1)
            w.boff[i] = <int64_t>i * (m + 1)
        w.band_n = n
        w.band_m = m
        return 0
    else:
        if BEAM_WIDTH < ratio / 2.0:
            beam = <int>ceil(ratio / 2.0 + BEAM_WIDTH)
        w.lo[0] = 0
        w.hi[0] = m + 1
        for i in range(1, n + 1):
            pd = <int>floor(<double>i * ratio)
            w.lo[i] = pd - beam if pd - beam > 0 else 0
            w.hi[i] = pd + beam if pd + beam < m + 1 else m + 1
            if i == n:
                w.hi[i] = m + 1
    for i in range(n + 1):
        w.rs[i] = w.lo[i] - 1 if w.lo[i] > 0 else 0
        w.re[i] = w.hi[i]
        if i < n and w.hi[i + 1] > w.re[i]:
            w.re[i] = w.hi[i + 1]
        w.roff[i] = total - w.rs[i]
        total += w.re[i] - w.rs[i]
    if total > w.cellcap:
        if grow(<void**>&w.curmat, total * 4) or grow(<void**>&w.candmat, total * 4):
            return -1
        w.cellcap = total
    total = 0
    for i in range(n + 1):
        w.boff[i] = total - w.lo[i]
        total += w.hi[i] - w.lo[i]
    if total > w.bcellcap:
        if grow(<void**>&w.bwd, total * 4):
            return -1
        w.bcellcap = total
    w.band_n = n
    w.band_m = m
    return 0


cdef void dp_bwd(Work* w, const int32_t* h, const int32_t* r, int n, int m,
                 int i_from) noexcept nogil:
    """Backward banded DP of hypothesis ``h``, rows i_from..0 (row n is the base case):
    B[i][j] = cheapest in-band path from cell (i, j) to (n, m), with the forward moves
    diag (i+1, j+1), del (i+1, j) and ins (i, j+1). Row i depends only on h[i:], so after a
    shift only the rows above the changed region are recomputed."""
    cdef int i, j, lo, hi, lo1, hi1, v, c
    cdef int32_t hv
    cdef int32_t* B0
    cdef int32_t* B1
    for i in range(i_from, -1, -1):
        lo = w.lo[i]
        hi = w.hi[i]
        B0 = w.bwd + w.boff[i]
        if i == n:
            for j in range(hi - 1, lo - 1, -1):
                B0[j] = m - j
            continue
        B1 = w.bwd + w.boff[i + 1]
        lo1 = w.lo[i + 1]
        hi1 = w.hi[i + 1]
        hv = h[i]
        for j in range(hi - 1, lo - 1, -1):
            v = INF
            if lo1 <= j + 1 < hi1:
                v = B1[j + 1] + (hv != r[j])
            if lo1 <= j < hi1:
                c = B1[j] + 1
                if c < v:
                    v = c
            if j + 1 < hi:
                c = B0[j + 1] + 1
                if c < v:
                    v = c
            B0[j] = v


cdef inline int cell_op(const Work* w, const int32_t* h, const int32_t* r, int i,
                        int j) noexcept nogil:
    """The op sacrebleu's BeamEditDistance records at cell (i, j) of the current hypothesis'
    DP (on its edit path: in the band), re-derived from the stored costs with the DP's own
    comparisons: diag, then del, then ins, each replacing only when strictly cheaper. The
    costs are those the DP compared, so this is the op it would have stored."""
    cdef const int32_t* P
    cdef const int32_t* C
    cdef int v = INF, c, op = OP_UNDEF
    if i == 0:
        return OP_INS
    if j == 0:
        return OP_DEL
    P = w.curmat + w.roff[i - 1]
    C = w.curmat + w.roff[i]
    if h[i - 1] == r[j - 1]:
        c = P[j - 1]
        if c < v:
            v = c
            op = OP_NOP
    else:
        c = P[j - 1] + 1
        if c < v:
            v = c
            op = OP_SUB
    c = P[j] + 1
    if c < v:
        v = c
        op = OP_DEL
    c = C[j - 1] + 1
    if c < v:
        op = OP_INS
    return op


cdef void dp_rows_ops(Work* w, const int32_t* h, const int32_t* r, int i0, int i1) noexcept nogil:
    """Rows i0+1..i1 of the current hypothesis into curmat (costs only: the ops of the edit
    path are re-derived from them by ``cell_op``)."""
    cdef int i, j, lo, hi, v, c
    cdef int32_t hv
    cdef const int32_t* P
    cdef int32_t* C
    for i in range(i0 + 1, i1 + 1):
        P = w.curmat + w.roff[i - 1]
        C = w.curmat + w.roff[i]
        lo = w.lo[i]
        hi = w.hi[i]
        for j in range(w.rs[i], lo):
            C[j] = INF
        j = lo
        if lo == 0:
            C[0] = P[0] + 1
            j = 1
        hv = h[i - 1]
        while j < hi:
            v = P[j - 1] + (hv != r[j - 1])
            c = P[j] + 1
            if c < v:
                v = c
            c = C[j - 1] + 1
            if c < v:
                v = c
            C[j] = v
            j += 1
        for j in range(hi, w.re[i]):
            C[j] = INF


cdef inline void dp_rows_cost(Work* w, const int32_t* h, const int32_t* r, int i0, int i1,
                              const int32_t* src) noexcept nogil:
    """Cost-only rows i0+1..i1 of hypothesis ``h`` into candmat; row i0 is read from ``src``
    (a row pointer indexed by column)."""
    cdef int i, j, lo, hi, v, c
    cdef int32_t hv
    cdef const int32_t* P = src
    cdef int32_t* C
    for i in range(i0 + 1, i1 + 1):
        C = w.candmat + w.roff[i]
        lo = w.lo[i]
        hi = w.hi[i]
        for j in range(w.rs[i], lo):
            C[j] = INF
        j = lo
        if lo == 0:
            C[0] = P[0] + 1
            j = 1
        hv = h[i - 1]
        while j < hi:
            v = P[j - 1] + (hv != r[j - 1])
            c = P[j] + 1
            if c < v:
                v = c
            c = C[j - 1] + 1
            if c < v:
                v = c
            C[j] = v
            j += 1
        for j in range(hi, w.re[i]):
            C[j] = INF
        P = C


cdef inline bint better_shift(bint have_best, int gain, int length, int sh, int idx, int best_gain,
                              int best_len, int best_sh, int best_idx) noexcept nogil:
    """sacrebleu's order of shift candidates: the larger gain, then the longer phrase, then the
    earlier start, then the earlier target; any candidate beats none."""
    if not have_best:
        return True
    if gain != best_gain:
        return gain > best_gain
    if length != best_len:
        return length > best_len
    if sh != best_sh:
        return sh < best_sh
    return idx < best_idx


ctypedef fused word_t:     # a hypothesis word: its id, or its mask of equal reference words
    int32_t
    uint64_t


cdef inline void perform_shift(const word_t* src, word_t* dst, int n, int start, int length,
                               int target) noexcept nogil:
    cdef int o = 0, k, e
    if target < start:
        for k in range(target):
            dst[o] = src[k]; o += 1
        for k in range(start, start + length):
            dst[o] = src[k]; o += 1
        for k in range(target, start):
            dst[o] = src[k]; o += 1
        for k in range(start + length, n):
            dst[o] = src[k]; o += 1
    elif target > start + length:
        for k in range(start):
            dst[o] = src[k]; o += 1
        for k in range(start + length, target):
            dst[o] = src[k]; o += 1
        for k in range(start, start + length):
            dst[o] = src[k]; o += 1
        for k in range(target, n):
            dst[o] = src[k]; o += 1
    else:
        e = length + target
        if e > n:
            e = n
        for k in range(start):
            dst[o] = src[k]; o += 1
        for k in range(start + length, e):
            dst[o] = src[k]; o += 1
        for k in range(start, start + length):
            dst[o] = src[k]; o += 1
        for k in range(e, n):
            dst[o] = src[k]; o += 1


cdef inline int lcp(const int32_t* a, const int32_t* b, int n) noexcept nogil:
    cdef int k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


cdef extern from *:
    """
    static inline int mts_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int ctz64 "mts_ctz64"(unsigned long long x) nogil


cdef inline int myers_dist(const uint64_t* eq, int n, int m) noexcept nogil:
    """Levenshtein distance of a hypothesis of n words to a reference of 1 <= m <= 64 words,
    given per hypothesis word the bit mask of the equal reference words (bit j: word j).
    Myers' bit-parallel algorithm (1999) in Hyyro's global form (the row boundary, one more
    deletion per row, shifted in as +1); the bits above m carry garbage that never reaches
    bit m - 1 (carries and shifts only move upwards)."""
    cdef uint64_t vp = (((<uint64_t>1) << (m - 1)) << 1) - 1, vn = 0, eqm, xv, xh, hp, hn
    cdef uint64_t top = (<uint64_t>1) << (m - 1)
    cdef int i, dist = m
    for i in range(n):
        eqm = eq[i]
        xv = eqm | vn
        xh = (((eqm & vp) + vp) ^ vp) | eqm
        hp = vn | ~(xh | vp)
        hn = vp & xh
        if hp & top:
            dist += 1
        elif hn & top:
            dist -= 1
        hp = (hp << 1) | 1
        hn = hn << 1
        vp = hn | ~(xv | hp)
        vn = hp & xv
    return dist


cdef inline void eq_masks(uint64_t* eq, const int32_t* h, int n, const int32_t* r,
                          int m) noexcept nogil:
    """``eq[i]``: bit j set where ``r[j] == h[i]`` (m <= 64)."""
    cdef int i, j
    cdef int32_t hv
    cdef uint64_t eqm
    for i in range(n):
        hv = h[i]
        eqm = 0
        for j in range(m):
            eqm |= (<uint64_t>(r[j] == hv)) << j
        eq[i] = eqm


cdef int shift_free_cost(Work* w, const int32_t* h, int n, const int32_t* r, int m,
                         int* bound) noexcept nogil:
    """sacrebleu's result for a pair whose reference is shorter than BEAM_WIDTH (every DP row
    full: the banded distance is the plain Levenshtein distance) when no shift can lower its
    cost, else -1; ``bound`` gets the bound below. ``w.eq`` needs room for n masks (filled).

    Exact: a shift permutes the hypothesis, so every candidate keeps its bag of words, and any
    alignment of it with M matches costs at least max(n, m) - M >= max(n, m) - C, C the size of
    the bags' intersection. When the hypothesis' own distance already equals that bound, no
    candidate has a positive gain; sacrebleu then takes no shift (a shift needs a gain > 0, and
    a round cut by MAX_SHIFT_CANDIDATES is discarded) and returns the distance. The distance
    is computed bit-parallel (Myers 1999, in Hyyro's global form: the row boundary shifted in
    as +1), the reference positions as bits; C by greedy matching on the same masks (equal
    words have equal masks, so each hypothesis word takes a free position of its own word)."""
    cdef int i, common = 0, dist, big = n if n > m else m
    cdef uint64_t eqm, used = 0
    eq_masks(w.eq, h, n, r, m)
    for i in range(n):
        eqm = w.eq[i] & ~used
        if eqm:
            used |= eqm & (~eqm + 1)   # lowest free position of this word
            common += 1
    bound[0] = big
    if common == 0:
        return big      # no shared word: no shift candidate at all, and distance max(n, m)
    dist = myers_dist(w.eq, n, m)
    bound[0] = big - common
    if dist == big - common:
        return dist
    return -1


cdef int64_t ter_pair(Work* w, const int32_t* h, int n, const int32_t* r, int m) noexcept nogil:
    """sacrebleu ``translation_edit_rate(h, r)[0]``; -1 when out of memory."""
    cdef int checked = 0, shifts = 0, pre, i, j, k, pos_h, pos_r, nt
    cdef int sh, sr, length, rlo, rhi, a, offset, idx, prev_idx, cost, gain
    cdef int best_gain, best_len, best_sh, best_idx, p_cur, p_prev, base
    cdef bint have_best, cand_valid, stop, better, short = m < BEAM_WIDTH
    cdef int bound = -1
    cdef uint64_t bits = 0
    cdef int q, start, valid_to = 0, c2, lcs, fwd_extra
    cdef int32_t hv0
    cdef int bwd_from = n   # backward rows 0..bwd_from are stale (-1: all current)
    cdef const int32_t* src
    cdef const int32_t* F
    cdef const int32_t* Bq
    cdef uint8_t op
    cdef int32_t* tmp
    cdef int32_t* cur
    if m == 0:
        return n
    if n == 0:
        return m
    if n == m and memcmp(h, r, n * sizeof(int32_t)) == 0:
        return 0    # no edits, hence no shift candidate
    if work_reserve(w, n, m) < 0:
        return -1
    if m < BEAM_WIDTH:
        pre = shift_free_cost(w, h, n, r, m, &bound)
        if pre >= 0:
            return pre
    if setup_band(w, n, m) < 0:
        return -1
    cur = w.cur
    memcpy(cur, h, n * sizeof(int32_t))
    for j in range(m + 1):
        w.curmat[w.roff[0] + j] = j
    dp_rows_ops(w, cur, r, 0, n)
    # the backward rows are computed when a candidate first needs them (short segments often
    # have no candidate at all)
    while True:
        pre = w.curmat[w.roff[n] + m]
        if short and pre == bound:
            break   # after a shift: the bound is met, so no candidate of a further round gains
        # ---- trace (backwards), flipped, to alignment + error prefix sums --------------
        i = n
        j = m
        nt = 0
        while i > 0 or j > 0:
            op = <uint8_t>cell_op(w, cur, r, i, j)
            w.trace[nt] = op
            nt += 1
            if op == OP_NOP or op == OP_SUB:
                i -= 1
                j -= 1
            elif op == OP_INS:
                j -= 1
            else:
                i -= 1
        pos_h = -1
        pos_r = -1
        w.hcum[0] = 0
        w.rcum[0] = 0
        for k in range(nt - 1, -1, -1):
            op = w.trace[k]
            if op == OP_NOP or op == OP_SUB:
                pos_h += 1
                pos_r += 1
                w.align[pos_r] = pos_h
                w.hcum[pos_h + 1] = w.hcum[pos_h] + (op == OP_SUB)
                w.rcum[pos_r + 1] = w.rcum[pos_r] + (op == OP_SUB)
            elif op == OP_DEL:      # flipped to an insertion: a hypothesis word
                pos_h += 1
                w.hcum[pos_h + 1] = w.hcum[pos_h] + 1
            else:                   # OP_INS flipped to a deletion: a reference word
                pos_r += 1
                w.align[pos_r] = pos_h
                w.rcum[pos_r + 1] = w.rcum[pos_r] + 1
        # ---- candidates ------------------------------------------------------------------
        fwd_extra = 0
        have_best = False
        best_gain = 0
        best_len = 0
        best_sh = 0
        best_idx = 0
        cand_valid = False
        base = 0
        stop = False
        for sh in range(n):
            rlo = sh - MAX_SHIFT_DIST if sh > MAX_SHIFT_DIST else 0
            rhi = sh + MAX_SHIFT_DIST + 1 if sh + MAX_SHIFT_DIST + 1 < m else m
            hv0 = cur[sh]
            sr = rlo - 1
            if short:   # the positions of the reference words equal to cur[sh], in order
                bits = w.eq[sh] if rhi == m else 0   # (m < BEAM_WIDTH: rhi is m)
                if rlo > 0:
                    bits = (bits >> rlo) << rlo if rlo < 64 else 0
            while True:
                if short:
                    if bits == 0:
                        break
                    sr = <int>ctz64(bits)
                    bits &= bits - 1
                else:
                    sr += 1
                    if sr >= rhi:
                        break
                    if r[sr] != hv0:
                        continue    # no shared word at (sh, sr): nothing is yielded there
                length = 0
                while length < MAX_SHIFT_SIZE and cur[sh + length] == r[sr + length]:
                    length += 1
                    # (sh, sr, length) is yielded here
                    if (w.hcum[sh + length] - w.hcum[sh] != 0
                            and w.rcum[sr + length] - w.rcum[sr] != 0):
                        a = w.align[sr]
                        if not (sh <= a < sh + length):
                            prev_idx = -1
                            for offset in range(-1, length):
                                if sr + offset == -1:
                                    idx = 0
                                else:
                                    idx = w.align[sr + offset] + 1
                                if idx == prev_idx:
                                    continue
                                prev_idx = idx
                                if short:
                                    # every row full: the candidate's plain distance,
                                    # bit-parallel on its permuted masks
                                    perform_shift(<const uint64_t*>w.eq, w.eqc, n, sh, length, idx)
                                    cost = myers_dist(w.eqc, n, m)
                                    gain = pre - cost
                                    checked += 1
                                    better = better_shift(have_best, gain, length, sh, idx, best_gain, best_len, best_sh,
                                                          best_idx)
                                    if better:
                                        have_best = True
                                        best_gain = gain
                                        best_len = length
                                        best_sh = sh
                                        best_idx = idx
                                    continue
                                perform_shift(<const int32_t*>cur, w.cand, n, sh, length, idx)
                                # cost of the candidate: forward rows only over the changed
                                # region [p, q) (from the longest known prefix), then joined
                                # with the backward rows of the unchanged suffix at row q
                                p_cur = lcp(w.cand, cur, n)
                                if p_cur == n:
                                    cost = pre
                                    base = n
                                    valid_to = n
                                else:
                                    if idx < sh:
                                        q = sh + length
                                    elif idx > sh + length:
                                        q = idx
                                    else:
                                        q = length + idx if length + idx < n else n
                                    p_prev = -1
                                    if cand_valid:
                                        p_prev = lcp(w.cand, w.prevcand,
                                                     valid_to if valid_to < n else n)
                                    if p_prev > p_cur:
                                        start = p_prev
                                        src = w.candmat + w.roff[p_prev]
                                    else:
                                        start = p_cur
                                        src = w.curmat + w.roff[p_cur]
                                        base = p_cur
                                    if q < n and bwd_from >= 0 and fwd_extra + n - q <= bwd_from + 1:
                                        # the backward rows are stale: while running the forward
                                        # rows to the end costs less in all than recomputing them,
                                        # do that (ski rental: at most twice the cheaper way; one
                                        # candidate per round is common on short segments)
                                        fwd_extra += n - q
                                        q = n
                                    if start < q:
                                        dp_rows_cost(w, w.cand, r, start, q, src)
                                        valid_to = q
                                    else:
                                        valid_to = start
                                    if q <= base:
                                        F = w.curmat + w.roff[q]
                                    else:
                                        F = w.candmat + w.roff[q]
                                    if q == n:
                                        cost = F[m]
                                    else:
                                        if bwd_from >= 0:
                                            dp_bwd(w, cur, r, n, m, bwd_from)
                                            bwd_from = -1
                                        Bq = w.bwd + w.boff[q]
                                        cost = INF
                                        for j in range(w.lo[q], w.hi[q]):
                                            c2 = F[j] + Bq[j]
                                            if c2 < cost:
                                                cost = c2
                                tmp = w.prevcand
                                w.prevcand = w.cand
                                w.cand = tmp
                                cand_valid = True
                                gain = pre - cost
                                checked += 1
                                better = better_shift(have_best, gain, length, sh, idx, best_gain, best_len, best_sh,
                                                      best_idx)
                                if better:
                                    have_best = True
                                    best_gain = gain
                                    best_len = length
                                    best_sh = sh
                                    best_idx = idx
                            if checked >= MAX_SHIFT_CANDIDATES:
                                stop = True
                                break
                    if sh + length == n or sr + length == m:
                        break
                if stop:
                    break
            if stop:
                break
        # ---- outer loop of translation_edit_rate ------------------------------------------
        if checked >= MAX_SHIFT_CANDIDATES:
            break   # the shift found in this round is discarded (sacrebleu)
        if not have_best or best_gain <= 0:
            break
        shifts += 1
        perform_shift(<const int32_t*>cur, w.best, n, best_sh, best_len, best_idx)
        if short:
            perform_shift(<const uint64_t*>w.eq, w.eqc, n, best_sh, best_len, best_idx)
            w.eq, w.eqc = w.eqc, w.eq
        p_cur = lcp(w.best, cur, n)
        lcs = 0
        while lcs < n - p_cur and w.best[n - 1 - lcs] == cur[n - 1 - lcs]:
            lcs += 1
        tmp = w.cur
        w.cur = w.best
        w.best = tmp
        cur = w.cur
        if p_cur < n:
            dp_rows_ops(w, cur, r, p_cur, n)
            # backward rows i < n - lcs depend on the changed words: stale from now on
            if n - lcs - 1 > bwd_from:
                bwd_from = n - lcs - 1
    return shifts + w.curmat[w.roff[n] + m]


cdef extern from *:
    """
    static inline long long mts_fetch_add(long long* p, long long v) {
        return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    }
    """
    long long mts_fetch_add(long long* p, long long v) nogil


cdef int ter_segments(const int32_t* hyp_ids, const int64_t* hyp_off, const int32_t* ref_ids,
                      const int64_t* ref_off, const int64_t* seg_refs, const int64_t* order,
                      int64_t n_order, int64_t first, long long* counter, int64_t grain,
                      double* out) noexcept nogil:
    """Score the segments ``order[first:n_order]`` (``order`` NULL: segments first..n_order-1)
    into their rows of ``out`` ((N, 2) row-major). With ``counter`` set, the positions are
    claimed ``grain`` at a time from that shared counter (``first`` unused), so any number of
    threads running this function on the same arguments share the work dynamically; without
    it, all are done."""
    cdef Work w
    cdef int64_t i, j, j0, j1, k, best, e, total, nrefs
    cdef int rc = 0
    work_init(&w)
    j0 = first
    while rc == 0:
        if counter != NULL:
            j0 = mts_fetch_add(counter, grain)
            j1 = j0 + grain
        else:
            j1 = n_order
        if j0 >= n_order:
            break
        if j1 > n_order:
            j1 = n_order
        for j in range(j0, j1):
            i = order[j] if order != NULL else j
            best = 10000000000000000
            total = 0
            nrefs = seg_refs[i + 1] - seg_refs[i]
            for k in range(seg_refs[i], seg_refs[i + 1]):
                e = ter_pair(&w, hyp_ids + hyp_off[i], <int>(hyp_off[i + 1] - hyp_off[i]),
                             ref_ids + ref_off[k], <int>(ref_off[k + 1] - ref_off[k]))
                if e < 0:
                    rc = -1
                    break
                total += ref_off[k + 1] - ref_off[k]
                if e < best:
                    best = e
            if rc < 0:
                break
            out[2 * i] = <double>best
            out[2 * i + 1] = <double>total / <double>nrefs
        if counter == NULL:
            break
    work_free(&w)
    return rc


cdef int _check_ter_args(const int64_t[::1] hyp_offsets, const int64_t[::1] seg_refs,
                         double[:, ::1] out, str name) except -1:
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1
    cdef Py_ssize_t i
    if seg_refs.shape[0] != N + 1 or out.shape[0] != N or out.shape[1] != 2:
        raise ValueError(f"{name}: inconsistent shapes of hyp_offsets, seg_refs and out")
    for i in range(N):
        if seg_refs[i + 1] <= seg_refs[i]:
            raise ValueError(f"TER: segment {i} has no reference (all references are None)")
    return 0


def ter_stats_range(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_offsets,
                    const int32_t[::1] ref_ids, const int64_t[::1] ref_offsets,
                    const int64_t[::1] seg_refs, double[:, ::1] out,
                    Py_ssize_t start, Py_ssize_t stop):
    """Fill ``out[start:stop]`` (float64, shape (N, 2)) with ``[edits, avg_ref_len]``.

    Runs without the GIL, so several threads may fill disjoint ranges of the same ``out``.
    Every segment must have at least one reference.
    """
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1
    cdef int rc
    _check_ter_args(hyp_offsets, seg_refs, out, "ter_stats_range")
    if start < 0 or stop > N or start > stop:
        raise ValueError(f"ter_stats_range: bad range [{start}, {stop}) for {N} segments")
    if stop == start:
        return
    with nogil:
        rc = ter_segments(&hyp_ids[0] if hyp_ids.shape[0] else NULL, &hyp_offsets[0],
                          &ref_ids[0] if ref_ids.shape[0] else NULL, &ref_offsets[0],
                          &seg_refs[0], NULL, stop, start, NULL, 0, &out[0, 0])
    if rc < 0:
        raise MemoryError("TER kernel: out of memory")


def ter_stats_shared(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_offsets,
                     const int32_t[::1] ref_ids, const int64_t[::1] ref_offsets,
                     const int64_t[::1] seg_refs, double[:, ::1] out,
                     const int64_t[::1] order, long long[::1] counter, Py_ssize_t grain=4,
                     bint check=True):
    """Work-sharing form of :func:`ter_stats_range`: every thread that calls this with the
    same arguments claims ``grain`` positions of ``order`` (segment indices, int64) at a time
    from ``counter`` (int64 array of length 1, 0 at the start; updated atomically) and fills
    those rows of ``out`` (GIL released), until ``order`` is used up. Costliest segments
    first in ``order`` keeps the threads finishing together. ``check=False`` skips the
    argument checks (the caller ran them once for all threads)."""
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1
    cdef Py_ssize_t n_order = order.shape[0]
    cdef Py_ssize_t j
    cdef int rc
    if counter.shape[0] < 1 or grain < 1:
        raise ValueError("ter_stats_shared: counter must hold one int64 and grain be >= 1")
    if check:
        _check_ter_args(hyp_offsets, seg_refs, out, "ter_stats_shared")
        for j in range(n_order):
            if order[j] < 0 or order[j] >= N:
                raise ValueError(f"ter_stats_shared: order[{j}] = {order[j]} is not a segment")
    if n_order == 0 or N == 0:
        return
    with nogil:
        rc = ter_segments(&hyp_ids[0] if hyp_ids.shape[0] else NULL, &hyp_offsets[0],
                          &ref_ids[0] if ref_ids.shape[0] else NULL, &ref_offsets[0],
                          &seg_refs[0], &order[0], n_order, 0, &counter[0], grain, &out[0, 0])
    if rc < 0:
        raise MemoryError("TER kernel: out of memory")


def ter_pair_ids(const int32_t[::1] hyp, const int32_t[::1] ref):
    """``(edits, len(ref))`` of one token-id pair (sacrebleu ``translation_edit_rate``)."""
    cdef Work w
    cdef int64_t e
    cdef int n = hyp.shape[0], m = ref.shape[0]
    work_init(&w)
    with nogil:
        e = ter_pair(&w, &hyp[0] if n else NULL, n, &ref[0] if m else NULL, m)
        work_free(&w)
    if e < 0:
        raise MemoryError("TER kernel: out of memory")
    return int(e), m


# =============================================================================================
# one hypothesis against its references in one call (TER.sentence_score)
# =============================================================================================
cdef enum:
    KEEP_MAX_TOKENS = 1 << 12   # a scratch whose vocabulary grew past this is not kept


cdef class _SentenceState:
    """The scratch of one ter_sentence call: a vocabulary, normaliser buffers, the token ids of
    every text and the search's work buffers; emptied and kept for the next call."""
    cdef TercomVocab vocab
    cdef Work w
    cdef UBuf a, b
    cdef int32_t* ids
    cdef int64_t* off       # per text + 1 (references first, then the hypothesis)
    cdef int* kinds         # per text (hypothesis first): PEP 393 storage
    cdef const void** datas
    cdef Py_ssize_t* lens
    cdef Py_ssize_t cap_ids, cap_texts

    def __cinit__(self):
        self.vocab = TercomVocab()
        work_init(&self.w)
        ubuf_init(&self.a)
        ubuf_init(&self.b)
        self.ids = NULL
        self.off = NULL
        self.kinds = NULL
        self.datas = NULL
        self.lens = NULL
        self.cap_ids = 0
        self.cap_texts = 0

    def __dealloc__(self):
        work_free(&self.w)
        ubuf_free(&self.a)
        ubuf_free(&self.b)
        free(self.ids); free(self.off); free(self.kinds); free(self.datas); free(self.lens)

    cdef int reserve_texts(self, Py_ssize_t n) except -1:
        if n > self.cap_texts:
            n = n if n > 8 else 8
            self.off = <int64_t*> realloc(self.off, (n + 1) * sizeof(int64_t))
            self.kinds = <int*> realloc(self.kinds, n * sizeof(int))
            self.datas = <const void**> realloc(self.datas, n * sizeof(void*))
            self.lens = <Py_ssize_t*> realloc(self.lens, n * sizeof(Py_ssize_t))
            if self.off == NULL or self.kinds == NULL or self.datas == NULL or self.lens == NULL:
                raise MemoryError()
            self.cap_texts = n
        return 0


cdef _SentenceState _spare_state = None


cdef int _sentence_tokens(_SentenceState s, Py_ssize_t j, bint twice, bint normalized,
                          bint no_punct, bint asian_support, Py_ssize_t* pos) noexcept nogil:
    """Normalise text ``j`` (twice for a reference under ``normalized``, as sacrebleu does) and
    append its token ids at ``s.ids[pos]``. 0, or -1 when out of memory."""
    cdef Py_ssize_t k, start, need
    cdef int32_t tid
    cdef void* p
    if ubuf_load(&s.a, s.kinds[j], s.datas[j], s.lens[j], 8) < 0:
        return -1
    if normalize_buf(&s.a, &s.b, normalized, no_punct, asian_support) < 0:
        return -1
    if twice:
        # sacrebleu tokenizes a reference once when caching it and again when extracting its
        # info; only the normalised form changes on the second pass (str.lower of lowercased
        # text is itself, so the lowercasing in between is the identity)
        collapse_spaces(&s.a)
        if normalize_buf(&s.a, &s.b, normalized, no_punct, asian_support) < 0:
            return -1
    need = pos[0] + s.a.n // 2 + 2
    if need > s.cap_ids:
        need = need if need > 2 * s.cap_ids else 2 * s.cap_ids
        p = realloc(s.ids, need * sizeof(int32_t))
        if p == NULL:
            return -1
        s.ids = <int32_t*> p
        s.cap_ids = need
    k = 0
    while k < s.a.n:
        while k < s.a.n and Py_UNICODE_ISSPACE(s.a.p[k]):
            k += 1
        if k >= s.a.n:
            break
        start = k
        while k < s.a.n and not Py_UNICODE_ISSPACE(s.a.p[k]):
            k += 1
        tid = s.vocab.intern(s.a.p + start, k - start)
        if tid < 0:
            return -1
        s.ids[pos[0]] = tid
        pos[0] += 1
    return 0


cdef int _ter_sentence(_SentenceState s, Py_ssize_t K, bint normalized, bint no_punct,
                       bint asian_support, int64_t* edits, double* ref_len) noexcept nogil:
    """Tokens of the references (texts 1..K) and the hypothesis (text 0), then the fewest
    edits over the references and their mean length (ter_segments for one segment)."""
    cdef Py_ssize_t k, pos = 0
    cdef int64_t e, best = 10000000000000000, total = 0
    s.off[0] = 0
    for k in range(K + 1):
        if _sentence_tokens(s, k + 1 if k < K else 0, k < K and normalized, normalized,
                            no_punct, asian_support, &pos) != 0:
            return -1
        s.off[k + 1] = pos
    for k in range(K):
        e = ter_pair(&s.w, s.ids + s.off[K], <int> (s.off[K + 1] - s.off[K]), s.ids + s.off[k],
                     <int> (s.off[k + 1] - s.off[k]))
        if e < 0:
            return -1
        total += s.off[k + 1] - s.off[k]
        if e < best:
            best = e
    edits[0] = best
    ref_len[0] = <double> total / <double> K
    return 0


def ter_sentence(str hyp not None, object refs, bint normalized=False, bint no_punct=False,
                 bint asian_support=False):
    """TER statistics of one hypothesis against its reference strings ``refs`` (a list or
    tuple, at least one), all already ``rstrip()``-ed and (unless case-sensitive) ``lower()``-ed
    in Python: ``(edits, avg_ref_len)``, sacrebleu's ``[best_num_edits, avg_ref_len]`` of the
    segment (references Tercom-normalised twice under ``normalized``, as sacrebleu does). None
    when a reference is not a ``str``."""
    global _spare_state
    cdef Py_ssize_t K = len(refs), k
    cdef object r
    cdef int rc
    cdef int64_t edits = 0
    cdef double ref_len = 0.0
    if K == 0:
        raise ValueError("ter_sentence: no references")
    cdef _SentenceState s = _spare_state
    if s is None:
        s = _SentenceState()
    else:
        _spare_state = None   # taken under the GIL: no other thread holds it now
    try:
        s.reserve_texts(K + 1)
        for k in range(K + 1):
            r = hyp if k == 0 else refs[k - 1]
            if type(r) is not str:
                return None
            PyUnicode_READY(r)
            s.kinds[k] = PyUnicode_KIND(r)
            s.datas[k] = PyUnicode_DATA(r)
            s.lens[k] = PyUnicode_GET_LENGTH(r)
        with nogil:
            rc = _ter_sentence(s, K, normalized, no_punct, asian_support, &edits, &ref_len)
        if rc != 0:
            raise MemoryError("ter_sentence: out of memory")
        return int(edits), ref_len
    finally:
        s.vocab.clear()
        if s.vocab.mask < 2 * KEEP_MAX_TOKENS and s.cap_ids <= 16 * KEEP_MAX_TOKENS \
                and s.a.cap <= 64 * KEEP_MAX_TOKENS:
            _spare_state = s


def ter_matrix(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_offsets,
               const int32_t[::1] ref_ids, const int64_t[::1] ref_offsets,
               int64_t[:, ::1] edits, const int64_t[::1] part):
    """All-pairs TER edits: ``edits[a, b]`` (int64 (n, m)) = the edits of hypothesis a against
    reference b alone (sacrebleu ``translation_edit_rate``), for the columns b in ``part``
    (int64). CSR inputs: n hypotheses, m references (token ids of one vocabulary). GIL
    released, so threads may fill disjoint column sets of one matrix."""
    cdef Py_ssize_t n = hyp_offsets.shape[0] - 1, m = ref_offsets.shape[0] - 1, q, a, b
    cdef Py_ssize_t i
    if n < 0 or m < 0 or edits.shape[0] != n or edits.shape[1] != m:
        raise ValueError("ter_matrix: edits must be (number of hypotheses, number of references)")
    for i in range(n):
        if hyp_offsets[i + 1] < hyp_offsets[i]:
            raise ValueError(f"ter_matrix: hyp_offsets decrease at {i}")
    for i in range(m):
        if ref_offsets[i + 1] < ref_offsets[i]:
            raise ValueError(f"ter_matrix: ref_offsets decrease at {i}")
    if (n and (hyp_offsets[0] < 0 or hyp_offsets[n] > hyp_ids.shape[0])) or \
            (m and (ref_offsets[0] < 0 or ref_offsets[m] > ref_ids.shape[0])):
        raise ValueError("ter_matrix: offsets outside the id arrays")
    for i in range(part.shape[0]):
        if part[i] < 0 or part[i] >= m:
            raise ValueError(f"ter_matrix: part[{i}] = {part[i]} is not a reference")
    cdef Work w
    cdef int64_t e = 0
    cdef const int32_t* h = &hyp_ids[0] if hyp_ids.shape[0] else NULL
    cdef const int32_t* r = &ref_ids[0] if ref_ids.shape[0] else NULL
    work_init(&w)
    with nogil:
        for q in range(part.shape[0]):
            b = part[q]
            for a in range(n):
                e = ter_pair(&w, h + hyp_offsets[a] if h != NULL else NULL,
                             <int>(hyp_offsets[a + 1] - hyp_offsets[a]),
                             r + ref_offsets[b] if r != NULL else NULL,
                             <int>(ref_offsets[b + 1] - ref_offsets[b]))
                if e < 0:
                    break
                edits[a, b] = e
            if e < 0:
                break
        work_free(&w)
    if e < 0:
        raise MemoryError("TER kernel: out of memory")


# =============================================================================================
# one call from strings to corpus sums (sacrebleu's default TER, references not reused)
# =============================================================================================
ctypedef struct PairTok:
    uint32_t key        # hash of the code points
    int32_t start       # offset in the arena
    int32_t len         # code points
    int32_t slot        # its slot in the table (to clear it)


# The tokens of one (hypothesis, reference) pair: ids only need to be equal within it. The
# tokeniser writes each token's code points straight into the arena; a token seen before is
# looked up and its copy dropped, a new one stays where it was written.
ctypedef struct PairVocab:
    Py_UCS4* cps        # arena
    int64_t cap_cps, ncps
    PairTok* toks
    int32_t cap_tok, ntok
    int32_t* table      # mask + 1 slots, -1: free; at most half full
    uint32_t mask


cdef void pv_init(PairVocab* v) noexcept nogil:
    v.cps = NULL
    v.toks = NULL
    v.table = NULL
    v.cap_cps = 0
    v.ncps = 0
    v.cap_tok = 0
    v.ntok = 0
    v.mask = 0


cdef void pv_free(PairVocab* v) noexcept nogil:
    free(v.cps)
    free(v.toks)
    free(v.table)
    pv_init(v)


cdef int pv_reserve(PairVocab* v, Py_ssize_t L) noexcept nogil:
    """Room for the tokens of one more text of ``L`` code points (at most (L + 1) / 2 tokens,
    L code points); 0, or -1 when out of memory."""
    cdef int64_t need_cps = v.ncps + L + 8, need_tok = v.ntok + L // 2 + 2, cap, size
    cdef int32_t* nt
    cdef int32_t t
    cdef uint32_t slot
    cdef void* p
    if need_cps >= (<int64_t>1 << 31):
        return -1   # PairTok.start is 32 bits
    if need_cps > v.cap_cps:
        cap = v.cap_cps * 2 if v.cap_cps * 2 > need_cps else need_cps
        if cap < 256:
            cap = 256
        p = realloc(v.cps, cap * sizeof(Py_UCS4))
        if p == NULL:
            return -1
        v.cps = <Py_UCS4*>p
        v.cap_cps = cap
    if need_tok > v.cap_tok:
        if need_tok >= (1 << 29):
            return -1
        cap = v.cap_tok * 2 if v.cap_tok * 2 > need_tok else need_tok
        if cap < 64:
            cap = 64
        p = realloc(v.toks, cap * sizeof(PairTok))
        if p == NULL:
            return -1
        v.toks = <PairTok*>p
        v.cap_tok = <int32_t>cap
    if v.table == NULL or 2 * need_tok > <int64_t>v.mask + 1:
        size = 128
        while size < 2 * need_tok:
            size *= 2
        nt = <int32_t*>malloc(size * sizeof(int32_t))
        if nt == NULL:
            return -1
        memset(nt, 0xFF, size * sizeof(int32_t))
        v.mask = <uint32_t>(size - 1)
        for t in range(v.ntok):
            slot = pv_slot(v.toks[t].key, v.mask)
            while nt[slot] != -1:
                slot = (slot + 1) & v.mask
            nt[slot] = t
            v.toks[t].slot = <int32_t>slot
        free(v.table)
        v.table = nt
    return 0


cdef inline uint32_t pv_slot(uint32_t key, uint32_t mask) noexcept nogil:
    return ((key * 0x9E3779B1u) >> 16) & mask


cdef inline void pv_clear(PairVocab* v) noexcept nogil:
    cdef int32_t t
    for t in range(v.ntok):
        v.table[v.toks[t].slot] = -1
    v.ntok = 0
    v.ncps = 0


cdef inline int32_t pv_intern(PairVocab* v, Py_UCS4* tok, int32_t n, uint32_t key) noexcept nogil:
    """The id of the token ``tok[:n]`` written at the arena's end (``v.cps + v.ncps``); kept
    there when it is new."""
    cdef uint32_t slot = pv_slot(key, v.mask)
    cdef int32_t t
    cdef PairTok* pt
    while True:
        t = v.table[slot]
        if t == -1:
            break
        pt = v.toks + t
        if pt.key == key and pt.len == n and cps_equal(v.cps + pt.start, tok, n):
            return t
        slot = (slot + 1) & v.mask
    t = v.ntok
    pt = v.toks + t
    pt.key = key
    pt.start = <int32_t>v.ncps
    pt.len = n
    pt.slot = <int32_t>slot
    v.table[slot] = t
    v.ntok += 1
    v.ncps += n
    return t


cdef Py_ssize_t pair_tokens(PairVocab* v, const cp_t* data, Py_ssize_t L, bint lowercase,
                            bint no_punct, bint asian_support, int32_t* ids) except -2:
    """``plain_tokens`` into a pair's vocabulary (``pv_reserve(v, L)`` done): the same split,
    lowercasing and punctuation removal, each token written at the arena's end and interned
    there (``pv_intern``); -1 when the text needs Python's own ``str.lower()``. The token hash
    is a rotate-xor over the code points (a short dependency chain; collisions only cost a
    comparison)."""
    cdef Py_ssize_t k = 0, cnt = 0
    cdef int32_t t
    cdef uint32_t c, cv, h
    cdef Py_UCS4* tok
    cdef const uint32_t* tab = _lat1[(<int>lowercase) + 2 * (<int>no_punct)]
    while k < L:
        c = <uint32_t>data[k]
        cv = tab[c] if c < 256 else map_wide(c, lowercase, no_punct, asian_support)
        if cv == CP_SPACE:
            k += 1
            continue
        tok = v.cps + v.ncps
        t = 0
        h = 0
        while True:
            if cv < CP_SKIP:
                tok[t] = cv
                t += 1
                h = ((h << 5) | (h >> 27)) ^ cv
            elif cv == LOWER_SPECIAL:
                return -1
            k += 1
            if k >= L:
                break
            c = <uint32_t>data[k]
            cv = tab[c] if c < 256 else map_wide(c, lowercase, no_punct, asian_support)
            if cv == CP_SPACE:
                break
        if t > 0:
            ids[cnt] = pv_intern(v, tok, t, h ^ <uint32_t>t)
            cnt += 1
    return cnt


cdef inline Py_ssize_t pair_tokens_of(object s, PairVocab* v, Py_ssize_t L, bint lowercase,
                                      bint no_punct, bint asian_support,
                                      int32_t* ids) except -2:
    cdef int kind = PyUnicode_KIND(s)
    cdef const void* data = PyUnicode_DATA(s)
    if kind == 1:
        return pair_tokens(v, <const uint8_t*>data, L, lowercase, no_punct, asian_support, ids)
    if kind == 2:
        return pair_tokens(v, <const uint16_t*>data, L, lowercase, no_punct, asian_support, ids)
    return pair_tokens(v, <const Py_UCS4*>data, L, lowercase, no_punct, asian_support, ids)


def ter_corpus_plain(list hyps, list refs, bint no_punct=False, bint asian_support=False,
                     bint lowercase=True):
    """``(sum of edits, sum of reference lengths)`` of ``hyps[i]`` against ``refs[i]`` (one
    reference per segment, both lists of str of the same length), for ``normalized=False``:
    each pair is split (``rstrip()``, ``lower()`` when ``lowercase``, punctuation removal when
    ``no_punct``) and interned in a small vocabulary of its own, cleared after the pair (ids
    only need to be equal within one pair: ``PairVocab``), then searched (``ter_pair``). No
    per-token id arrays, no numpy: a first call touches few fresh pages. The lengths are
    summed in segment order as float64, like sacrebleu's ``sum_of_lists``. Returns None when
    an element is not a str (the caller then takes the general path, which reports it)."""
    cdef Py_ssize_t N = len(hyps), i, j, L, cnt, nh, cap = 256
    cdef object s
    cdef PairVocab vocab
    cdef Work w
    cdef int32_t* ids = <int32_t*>malloc(cap * sizeof(int32_t))
    cdef void* p
    cdef int64_t e, edits = 0
    cdef double ref_len = 0.0
    cdef bint low
    if len(refs) != N:
        free(ids)
        raise ValueError(f"ter_corpus_plain: {N} hypotheses but {len(refs)} references")
    if ids == NULL:
        raise MemoryError("ter_corpus_plain: out of memory")
    pv_init(&vocab)
    work_init(&w)
    try:
        for i in range(N):
            nh = 0
            for j in range(2):
                s = hyps[i] if j == 0 else refs[i]
                if type(s) is not str:
                    return None
                PyUnicode_READY(s)
                L = PyUnicode_GET_LENGTH(s)
                low = lowercase
                while True:
                    if nh + L // 2 + 2 > cap:   # at most (L + 1) / 2 tokens
                        while nh + L // 2 + 2 > cap:
                            cap *= 2
                        p = realloc(ids, cap * sizeof(int32_t))
                        if p == NULL:
                            raise MemoryError("ter_corpus_plain: out of memory")
                        ids = <int32_t*>p
                    if pv_reserve(&vocab, L) < 0:
                        raise MemoryError("ter_corpus_plain: out of memory")
                    cnt = pair_tokens_of(s, &vocab, L, low, no_punct, asian_support, ids + nh)
                    if cnt >= 0:
                        break
                    # needs Python's own str.lower() (see plain_tokens); the tokens interned
                    # before the stop are tokens of s.lower() too
                    s = s.lower()
                    PyUnicode_READY(s)
                    L = PyUnicode_GET_LENGTH(s)
                    low = False
                if j == 0:
                    nh = cnt
                else:
                    L = cnt   # reference length in tokens
            e = ter_pair(&w, ids, <int>nh, ids + nh, <int>L)
            if e < 0:
                raise MemoryError("ter_corpus_plain: out of memory")
            edits += e
            ref_len += <double>L
            pv_clear(&vocab)
        return edits, ref_len
    finally:
        free(ids)
        pv_free(&vocab)
        work_free(&w)
