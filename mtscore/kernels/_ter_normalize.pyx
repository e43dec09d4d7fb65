# cython: language_level=3
"""TER kernels, part 1 of 3: the Tercom normaliser and its vocabularies (code points ->
interned token ids). sacrebleu 2.6.0's ``TercomTokenizer`` (normalised / western / Asian
steps, punctuation removal), ``TercomVocab`` (exact interning of tokens across texts), the
fast split of un-normalised text (``plain_tokens``) and its pair-local form for
``_ter_fused.ter_corpus_plain`` (``pair_tokens_of`` into a ``PairVocab``).

The shift search on the ids is ``_ter_shift``; the one-call paths from strings to statistics
are ``_ter_fused``; the buffers they share are ``_ter_buffers.pxd``. Plain-Python twin:
``mtscore/kernels/reference/ter_normalize.py``.
"""
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcmp, memcpy, memset
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

import numpy as np
cimport numpy as cnp
from mtscore.kernels._ucs4 cimport (
    PyUnicode_READY, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, Py_UNICODE_ISSPACE,
    UBuf, ubuf_init, ubuf_free, ubuf_reserve, ubuf_load, is_digit, is_13a_punct, is_space,
    HASH_INIT, hash_step, hash_cps_fold, cps_equal, replace_inplace)
from mtscore.kernels._ter_buffers cimport TokMeta, PairTok, PairVocab, pv_slot

cnp.import_array()


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


cdef class TercomVocab:
    """Exact interning of token strings (code-point sequences) to dense int32 ids.

    Ids are assigned in first-seen order; equal strings get equal ids in every call that shares
    the vocab (hash + full comparison of the code points). Not thread-safe: intern under the GIL.
    Each token's code points are kept 1, 2 or 4 bytes wide, the narrowest that holds them (as
    PEP 393 does): a quarter of the memory, hence of the fresh pages a first call touches, for
    Latin-script text.
    """
    # the attributes (byte arena, per-token TokMeta, open-addressing table): _ter_normalize.pxd

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
# the tokens of one (hypothesis, reference) pair in a vocabulary of their own (PairVocab,
# _ter_buffers.pxd): the tokeniser of ter_corpus_plain (_ter_fused)
# =============================================================================================
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
