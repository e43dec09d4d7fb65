# cython: language_level=3
"""Text kernels: sacrebleu-identical tokenizers over Unicode code points.

Input is a Python list of ``str``; the code points are read straight from CPython's compact
string storage (PEP 393), so no UTF-8 encoding or decoding happens. Output is CSR:

* ``values``  : int32 array, token ids (or code points for the chrF character modes)
* ``offsets`` : int64 array of length N + 1; segment i is ``values[offsets[i]:offsets[i+1]]``

Token ids come from a :class:`Vocab` (exact interning: hash + full code-point comparison, no
unchecked hashing; ``_text_vocab``, re-exported here as ``_text.Vocab``), so equal tokens get
equal ids across every call that shares the vocab. All the work after the pointers are
collected runs without the GIL.

Modes (``MODE_*``) reproduce sacrebleu 2.6.0's tokenizers exactly; the plain-Python twin in
``mtscore/kernels/reference/text.py`` spells each rule out as a left-to-right scan.
"""
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset
from libc.math cimport pow
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t, uint16_t, uint8_t

import numpy as np
cimport numpy as cnp
from mtscore.kernels._ucs4 cimport (
    PyUnicode_READY, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, Py_UNICODE_ISSPACE,
    UBuf, ubuf_reserve, ubuf_load, is_digit, is_13a_punct, is_ascii_punct,
    TokKey, PACKED, tok_key, tok_key_pad, tok_key_bytes, key_hash_pad, hash_cps, hash_cps_pad,
    mtscore_init_keep, cps_equal, replace_inplace)
from mtscore.kernels._text_vocab cimport (
    Vocab, Slot, ibuf_push, UNSEEN, vocab_probe, vocab_probe_k, vocab_grow_ids, vocab_grow_slots,
    vocab_intern_h, vocab_reserve)

include "_text_vocab_intern.pxi"

cnp.import_array()

# the vocabulary's Python class under this module's name as well (``_text.Vocab``): a cimport
# gives the C type only
globals()["Vocab"] = Vocab

# ---- public mode numbers (kept in step with mtscore/engine/tokenizers.py) -------------------
MODE_NONE = 0        # rstrip? + whitespace split             (BLEU tokenize='none', external tokenizers)
MODE_13A = 1         # mteval-v13a                              (BLEU '13a')
MODE_INTL = 2        # mteval-v14 international                 (BLEU 'intl')
MODE_ZH = 3          # sacrebleu zh (with its range quirk)      (BLEU 'zh')
MODE_CHAR = 4        # every non-space code point a token       (BLEU 'char')
MODE_CHARS = 5       # chrF characters: code points, whitespace deleted (values are code points)
MODE_CHARS_WS = 6    # chrF characters with whitespace kept      (values are code points)
MODE_CHRF_WORDS = 7  # chrF++ words: whitespace split + one punctuation char split off
UNSEEN_ID = 0x7FFFFFFF  # encode(lookup=True): the id of every token the vocabulary lacks

# ---- growable buffers: IBuf (and ibuf_push) in _text_vocab.pxd, UBuf in _ucs4.pxd -----------

# ---- character classes (is_digit, is_13a_punct, is_ascii_punct: _ucs4.pxd) -------------------
cdef inline bint is_zh_char(Py_UCS4 c) noexcept nogil:
    # Effective ranges of sacrebleu's _UCODE_RANGES (string comparison with two malformed
    # 5-hex-digit escapes); verified against sacrebleu over every code point in the tests.
    if c < 0x2001:
        return False
    return ((c <= 0x2A6D) or (0x2E80 <= c <= 0x2FDF) or (0x2FF0 <= c <= 0x303F)
            or (0x3100 <= c <= 0x312F) or (0x31A0 <= c <= 0x31EF) or (0x3200 <= c <= 0x4DB5)
            or (0x4E00 <= c <= 0x9FBB) or (0xF900 <= c <= 0xFA2D) or (0xFA30 <= c <= 0xFA6A)
            or (0xFA70 <= c <= 0xFAD9) or (0xFE10 <= c <= 0xFE1F) or (0xFE30 <= c <= 0xFE4F)
            or (0xFF00 <= c <= 0xFFEF))

# ASCII table for the fused word scanner: 1 = whitespace, 2 = a 13a pattern reacts to it
# (class A without space, '.', ',', '-'), 4 = line-level 13a replacement may apply ('<', '\\n', '&')
cdef uint8_t ASCII_CLS[128]

cdef void _init_ascii_cls():
    cdef int c
    for c in range(128):
        ASCII_CLS[c] = 0
        if Py_UNICODE_ISSPACE(c):
            ASCII_CLS[c] |= 1
        elif is_13a_punct(c) or c == 46 or c == 44 or c == 45:
            ASCII_CLS[c] |= 2
        if c == 60 or c == 10 or c == 38:
            ASCII_CLS[c] |= 4

_init_ascii_cls()
mtscore_init_keep()

# Latin-1 table of the none / 13a word scan (scan_13a): bit 1 = whitespace (ASCII_CLS's, U+0085,
# U+00A0), bit 2 = a 13a pattern reacts to it (ASCII only)
cdef uint8_t LATIN1_CLS[256]

cdef void _init_latin1_cls():
    cdef int c
    for c in range(256):
        LATIN1_CLS[c] = (ASCII_CLS[c] & 3) if c < 128 else (1 if Py_UNICODE_ISSPACE(c) else 0)

_init_latin1_cls()

cdef extern from *:
    """
    #if defined(__SSE2__) && !defined(MTSCORE_NO_SIMD)
    #include <emmintrin.h>
    /* bytes of x in [lo, lo + span] (unsigned, wrapping subtraction) */
    static inline __m128i mtscore_in_range(__m128i x, char lo, char span) {
        __m128i d = _mm_sub_epi8(x, _mm_set1_epi8(lo));
        return _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(span)), d);
    }
    #endif
    /* Bit masks of the line s[0:n] in 64-code-point blocks b = 0 .. n / 64: ws[b] bit j set when
       s[64b + j] is whitespace (str.isspace; positions >= n count as whitespace), sp[b] bit j
       when it is a character a 13a pattern reacts to (ASCII class A without the space, '.',
       ',', '-'; sp is not written when sp is NULL). cls: the Latin-1 table (bit 1 whitespace,
       bit 2 13a pattern). With SSE2, 16 code points per step, classified as bytes by byte
       compares (mtscore_cls16). Returns whether the line has a character of 13a's line-level
       replacements ('<', '\\n', '&'). Two front ends: mtscore_scan_13a reads code points (they
       are packed to bytes, code points >= 256 saturating to 0xFF, which is neither class; the
       whitespace above U+167F, U+1680, U+2000-U+200A, ..., is checked one by one),
       mtscore_scan_13a_bytes a 1-byte (Latin-1) string's own storage. */
    static inline void mtscore_scan_clear(Py_ssize_t n, uint64_t* ws, uint64_t* sp) {
        Py_ssize_t nb = n / 64 + 1, b;
        for (b = 0; b < nb; b++) {
            ws[b] = 0;
            if (sp) sp[b] = 0;
        }
    }
    static inline int mtscore_scan_tail(uint32_t c, Py_ssize_t i, uint64_t* ws, uint64_t* sp,
                                        const uint8_t* cls) {
        uint32_t t = c < 256 ? cls[c] : (Py_UNICODE_ISSPACE(c) ? 1u : 0u);
        ws[i >> 6] |= (uint64_t)(t & 1u) << (i & 63);
        if (sp) sp[i >> 6] |= (uint64_t)((t >> 1) & 1u) << (i & 63);
        return c == '<' || c == '\\n' || c == '&';
    }
    #if defined(__SSE2__) && !defined(MTSCORE_NO_SIMD)
    /* the 16 bytes x (code points s[i:i+16]): whitespace bits returned, 13a pattern bits into
       sp, the line-level replacement characters or-ed into rv */
    static inline uint32_t mtscore_cls16(__m128i x, Py_ssize_t i, uint64_t* sp, __m128i* rv) {
        __m128i w = _mm_or_si128(
            _mm_or_si128(mtscore_in_range(x, 9, 4), mtscore_in_range(x, 28, 4)),
            _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8((char)0x85)),
                         _mm_cmpeq_epi8(x, _mm_set1_epi8((char)0xA0))));
        *rv = _mm_or_si128(*rv, _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('<')),
                         _mm_cmpeq_epi8(x, _mm_set1_epi8('\\n'))),
            _mm_cmpeq_epi8(x, _mm_set1_epi8('&'))));
        if (sp) {
            __m128i p = _mm_or_si128(
                _mm_or_si128(mtscore_in_range(x, 0x21, 5), mtscore_in_range(x, 0x28, 7)),
                _mm_or_si128(_mm_or_si128(mtscore_in_range(x, 0x3A, 6),
                                          mtscore_in_range(x, 0x5B, 5)),
                             mtscore_in_range(x, 0x7B, 3)));
            sp[i >> 6] |= (uint64_t)(uint32_t)_mm_movemask_epi8(p) << (i & 63);
        }
        return (uint32_t)_mm_movemask_epi8(w);
    }
    #endif
    static int mtscore_scan_13a(const uint32_t* s, Py_ssize_t n, uint64_t* ws, uint64_t* sp,
                                const uint8_t* cls) {
        Py_ssize_t i = 0;
        int rare = 0;
        mtscore_scan_clear(n, ws, sp);
    #if defined(__SSE2__) && !defined(MTSCORE_NO_SIMD)
        const __m128i top = _mm_set1_epi32(0x167F);
        __m128i rv = _mm_setzero_si128();
        for (; i + 16 <= n; i += 16) {
            __m128i x0 = _mm_loadu_si128((const __m128i*)(s + i));
            __m128i x1 = _mm_loadu_si128((const __m128i*)(s + i + 4));
            __m128i x2 = _mm_loadu_si128((const __m128i*)(s + i + 8));
            __m128i x3 = _mm_loadu_si128((const __m128i*)(s + i + 12));
            __m128i x = _mm_packus_epi16(_mm_packs_epi32(x0, x1), _mm_packs_epi32(x2, x3));
            uint32_t wm = mtscore_cls16(x, i, sp, &rv);
            uint32_t hi = (uint32_t)(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(x0, top)))
                | (_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(x1, top))) << 4)
                | (_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(x2, top))) << 8)
                | (_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(x3, top))) << 12));
            while (hi) {
                int j = __builtin_ctz(hi);
                if (Py_UNICODE_ISSPACE(s[i + j]))
                    wm |= 1u << j;
                hi &= hi - 1;
            }
            ws[i >> 6] |= (uint64_t)wm << (i & 63);
        }
        rare = _mm_movemask_epi8(rv) != 0;
    #endif
        for (; i < n; i++)
            rare |= mtscore_scan_tail(s[i], i, ws, sp, cls);
        ws[n >> 6] |= ~(uint64_t)0 << (n & 63);
        return rare;
    }
    static int mtscore_scan_13a_bytes(const uint8_t* s, Py_ssize_t n, uint64_t* ws,
                                      uint64_t* sp, const uint8_t* cls) {
        Py_ssize_t i = 0;
        int rare = 0;
        mtscore_scan_clear(n, ws, sp);
    #if defined(__SSE2__) && !defined(MTSCORE_NO_SIMD)
        __m128i rv = _mm_setzero_si128();
        for (; i + 16 <= n; i += 16) {
            uint32_t wm = mtscore_cls16(_mm_loadu_si128((const __m128i*)(s + i)), i, sp, &rv);
            ws[i >> 6] |= (uint64_t)wm << (i & 63);
        }
        rare = _mm_movemask_epi8(rv) != 0;
    #endif
        for (; i < n; i++)
            rare |= mtscore_scan_tail(s[i], i, ws, sp, cls);
        ws[n >> 6] |= ~(uint64_t)0 << (n & 63);
        return rare;
    }
    static inline int mtscore_ctz64(uint64_t x) { return __builtin_ctzll(x); }
    """
    bint mtscore_scan_13a(const Py_UCS4* s, Py_ssize_t n, uint64_t* ws, uint64_t* sp,
                          const uint8_t* cls) nogil
    bint mtscore_scan_13a_bytes(const uint8_t* s, Py_ssize_t n, uint64_t* ws, uint64_t* sp,
                                const uint8_t* cls) nogil
    int mtscore_ctz64(uint64_t x) nogil

# intl classes: bit 1 = \p{P}, bit 2 = \p{S}, bit 4 = \p{N}; one byte per code point, built from
# the installed `regex` module by mtscore.engine.tokenizers (so the Unicode version matches sacrebleu).
cdef uint8_t* INTL_TABLE = NULL
cdef object _intl_table_ref = None

def set_intl_table(const uint8_t[::1] table):
    """Install the 0x110000-entry class table for MODE_INTL (bit 1 P, 2 S, 4 N)."""
    global INTL_TABLE, _intl_table_ref
    if table.shape[0] != 0x110000:
        raise ValueError("intl table must have 0x110000 entries")
    _intl_table_ref = table
    INTL_TABLE = <uint8_t*> &table[0]

def has_intl_table():
    return INTL_TABLE != NULL

cdef inline uint8_t intl_cls(Py_UCS4 c) noexcept nogil:
    return INTL_TABLE[c] if c < 0x110000 else 0

# ---- prefetch (the tokenizers' vocabulary slots, the next string) --------------------------
cdef extern from *:
    void __builtin_prefetch(const void* addr) nogil


# Word cache: (mode, first/last flags, word) -> the token ids it tokenizes to. Tokenization of
# 13a/intl/zh is word-local (patterns never reach across whitespace except through the neutral
# whitespace characters themselves, see _word_context), so each distinct word is tokenized once.

cdef enum:
    WORD_CACHE_MAX = 1 << 21


# ---- per-segment tokenizers -------------------------------------------------------------

cdef Py_UCS4 P_SKIPPED[9]
cdef Py_UCS4 P_DASHNL[2]
cdef Py_UCS4 P_NL[1]
cdef Py_UCS4 P_QUOT[6]
cdef Py_UCS4 P_AMP[5]
cdef Py_UCS4 P_LT[4]
cdef Py_UCS4 P_GT[4]
cdef Py_UCS4 R_SPACE[1]
cdef Py_UCS4 R_QUOT[1]
cdef Py_UCS4 R_AMP[1]
cdef Py_UCS4 R_LT[1]
cdef Py_UCS4 R_GT[1]

cdef void _init_patterns():
    cdef Py_ssize_t k
    for k, ch in enumerate("<skipped>"):
        P_SKIPPED[k] = ord(ch)
    P_DASHNL[0] = 45; P_DASHNL[1] = 10
    P_NL[0] = 10
    for k, ch in enumerate("&quot;"):
        P_QUOT[k] = ord(ch)
    for k, ch in enumerate("&amp;"):
        P_AMP[k] = ord(ch)
    for k, ch in enumerate("&lt;"):
        P_LT[k] = ord(ch)
    for k, ch in enumerate("&gt;"):
        P_GT[k] = ord(ch)
    R_SPACE[0] = 32; R_QUOT[0] = 34; R_AMP[0] = 38; R_LT[0] = 60; R_GT[0] = 62

_init_patterns()

cdef Py_ssize_t regexp_passes(Work* w, Py_ssize_t n, bint pad, bint* in_a) noexcept nogil:
    """sacrebleu's TokenizerRegexp on w.a.p[0:n] (optionally padded with a space on both sides).

    Result ends in w.a (in_a True) or w.b. Returns its length, or -1 on allocation failure.
    """
    cdef Py_ssize_t i, j, m
    cdef Py_UCS4 c, d
    cdef bint has_dotcomma = False, has_dash = False
    cdef Py_UCS4* s
    cdef Py_UCS4* o
    # pass a: ASCII punctuation class -> ' c '   (into b)
    if ubuf_reserve(&w.b, 3 * n + 8) != 0:
        return -1
    s = w.a.p
    o = w.b.p
    j = 0
    if pad:
        o[0] = 32; o[1] = 32; o[2] = 32
        j = 3
    for i in range(n):
        c = s[i]
        if is_13a_punct(c):
            o[j] = 32; o[j + 1] = c; o[j + 2] = 32
            j += 3
        else:
            if c == 46 or c == 44:
                has_dotcomma = True
            elif c == 45:
                has_dash = True
            o[j] = c
            j += 1
    if pad:
        o[j] = 32; o[j + 1] = 32; o[j + 2] = 32
        j += 3
    m = j
    in_a[0] = False
    if has_dotcomma:
        # pass b: ([^0-9])([\.,]) -> '\1 \2 '   (b -> a)
        if ubuf_reserve(&w.a, 2 * m + 8) != 0:
            return -1
        s = w.b.p
        o = w.a.p
        i = 0
        j = 0
        while i < m:
            c = s[i]
            if i + 1 < m and not is_digit(c) and (s[i + 1] == 46 or s[i + 1] == 44):
                o[j] = c; o[j + 1] = 32; o[j + 2] = s[i + 1]; o[j + 3] = 32
                j += 4
                i += 2
            else:
                o[j] = c
                j += 1
                i += 1
        m = j
        # pass c: ([\.,])([^0-9]) -> ' \1 \2'   (a -> b)
        if ubuf_reserve(&w.b, 2 * m + 8) != 0:
            return -1
        s = w.a.p
        o = w.b.p
        i = 0
        j = 0
        while i < m:
            c = s[i]
            if i + 1 < m and (c == 46 or c == 44) and not is_digit(s[i + 1]):
                o[j] = 32; o[j + 1] = c; o[j + 2] = 32; o[j + 3] = s[i + 1]
                j += 4
                i += 2
            else:
                o[j] = c
                j += 1
                i += 1
        m = j
    if has_dash:
        # pass d: ([0-9])(-) -> '\1 \2 '   (b -> a)
        if ubuf_reserve(&w.a, 2 * m + 8) != 0:
            return -1
        s = w.b.p
        o = w.a.p
        i = 0
        j = 0
        while i < m:
            c = s[i]
            if i + 1 < m and is_digit(c) and s[i + 1] == 45:
                o[j] = c; o[j + 1] = 32; o[j + 2] = 45; o[j + 3] = 32
                j += 4
                i += 2
            else:
                o[j] = c
                j += 1
                i += 1
        m = j
        in_a[0] = True
    return m

cdef Py_ssize_t prep_13a_line(Py_UCS4* s, Py_ssize_t n) noexcept nogil:
    """The line-level part of 13a: <skipped>, -\\n, \\n and the four HTML entities."""
    cdef Py_ssize_t i
    cdef bint has_lt = False, has_nl = False, has_amp = False
    for i in range(n):
        if s[i] == 60:
            has_lt = True
        elif s[i] == 10:
            has_nl = True
        elif s[i] == 38:
            has_amp = True
    if has_lt:
        n = replace_inplace(s, n, P_SKIPPED, 9, NULL, 0)
    if has_nl:
        n = replace_inplace(s, n, P_DASHNL, 2, NULL, 0)
        n = replace_inplace(s, n, P_NL, 1, R_SPACE, 1)
    if has_amp:
        n = replace_inplace(s, n, P_QUOT, 6, R_QUOT, 1)
        n = replace_inplace(s, n, P_AMP, 5, R_AMP, 1)
        n = replace_inplace(s, n, P_LT, 4, R_LT, 1)
        n = replace_inplace(s, n, P_GT, 4, R_GT, 1)
    return n

cdef Py_ssize_t tok_13a(Work* w, Py_ssize_t n, bint* in_a) noexcept nogil:
    n = prep_13a_line(w.a.p, n)
    return regexp_passes(w, n, True, in_a)

cdef Py_ssize_t tok_intl(Work* w, Py_ssize_t n) noexcept nogil:
    """mteval-v14 international tokenization; result in w.a."""
    cdef Py_ssize_t i, j, m
    cdef Py_UCS4 c
    cdef Py_UCS4* s
    cdef Py_UCS4* o
    # 1. (\P{N})(\p{P}) -> '\1 \2 '   (a -> b)
    if ubuf_reserve(&w.b, 2 * n + 8) != 0:
        return -1
    s = w.a.p
    o = w.b.p
    i = 0
    j = 0
    while i < n:
        c = s[i]
        if i + 1 < n and not (intl_cls(c) & 4) and (intl_cls(s[i + 1]) & 1):
            o[j] = c; o[j + 1] = 32; o[j + 2] = s[i + 1]; o[j + 3] = 32
            j += 4
            i += 2
        else:
            o[j] = c
            j += 1
            i += 1
    m = j
    # 2. (\p{P})(\P{N}) -> ' \1 \2'   (b -> a)
    if ubuf_reserve(&w.a, 2 * m + 8) != 0:
        return -1
    s = w.b.p
    o = w.a.p
    i = 0
    j = 0
    while i < m:
        c = s[i]
        if i + 1 < m and (intl_cls(c) & 1) and not (intl_cls(s[i + 1]) & 4):
            o[j] = 32; o[j + 1] = c; o[j + 2] = 32; o[j + 3] = s[i + 1]
            j += 4
            i += 2
        else:
            o[j] = c
            j += 1
            i += 1
    m = j
    # 3. (\p{S}) -> ' \1 '   (a -> b), then copy back to a
    if ubuf_reserve(&w.b, 3 * m + 8) != 0:
        return -1
    s = w.a.p
    o = w.b.p
    j = 0
    for i in range(m):
        c = s[i]
        if intl_cls(c) & 2:
            o[j] = 32; o[j + 1] = c; o[j + 2] = 32
            j += 3
        else:
            o[j] = c
            j += 1
    return j  # result in b

cdef Py_ssize_t tok_zh(Work* w, Py_ssize_t n, bint* in_a) noexcept nogil:
    """sacrebleu zh on one word in context (w.a.p[0:n]): space out the (quirky) Chinese ranges,
    then the regexp passes without padding. sacrebleu's line.strip() is implied by the word split;
    the spaces around the word here are context and must NOT be stripped."""
    cdef Py_ssize_t i, j, lo = 0
    cdef Py_UCS4 c
    cdef Py_UCS4* s = w.a.p
    cdef Py_UCS4* o
    if ubuf_reserve(&w.b, 3 * (n - lo) + 8) != 0:
        return -1
    o = w.b.p
    j = 0
    for i in range(lo, n):
        c = s[i]
        if is_zh_char(c):
            o[j] = 32; o[j + 1] = c; o[j + 2] = 32
            j += 3
        else:
            o[j] = c
            j += 1
    if ubuf_reserve(&w.a, j + 8) != 0:
        return -1
    memcpy(w.a.p, w.b.p, j * sizeof(Py_UCS4))
    return regexp_passes(w, j, False, in_a)

cdef int split_intern(VocabC* v, const Py_UCS4* s, Py_ssize_t n, IBuf* out,
                      bint lookup) noexcept nogil:
    """Whitespace-split s[0:n] (str.split() semantics) and append the token ids (see
    :func:`token_id` for ``lookup``)."""
    cdef Py_ssize_t i = 0, st
    cdef int32_t t
    while i < n:
        while i < n and Py_UNICODE_ISSPACE(s[i]):
            i += 1
        if i >= n:
            break
        st = i
        while i < n and not Py_UNICODE_ISSPACE(s[i]):
            i += 1
        t = token_id(v, s + st, i - st, hash_cps(s + st, i - st), lookup)
        if t < 0 or ibuf_push(out, t) != 0:
            return -1
    return 0

cdef int word_tokens(int mode, VocabC* v, Work* w, const Py_UCS4* word, Py_ssize_t L,
                     int flags, IBuf* out) noexcept nogil:
    """Tokenize one whitespace-free word in its neutral context and append the token ids.

    13a pads every line with spaces, so a word always sits between whitespace. intl and zh do
    not pad: flags bit 1 = nothing before the word, bit 2 = nothing after it (intl: the word
    starts / ends the line, whose whitespace is not stripped; zh: first / last word of the
    stripped line); otherwise one space stands for the whitespace around it. Whitespace is never a
    digit, P, S or N character and never the first element of a pattern, so any whitespace
    character behaves like a space here."""
    cdef Py_ssize_t m, j = 0
    cdef bint in_a = True
    cdef bint pre = mode != 1 and not (flags & 1)
    cdef bint post = mode != 1 and not (flags & 2)
    if ubuf_reserve(&w.a, L + 8) != 0:
        return -1
    if pre:
        w.a.p[0] = 32
        j = 1
    memcpy(w.a.p + j, word, L * sizeof(Py_UCS4))
    j += L
    if post:
        w.a.p[j] = 32
        j += 1
    if mode == 1:
        m = regexp_passes(w, j, True, &in_a)
    elif mode == 2:
        m = tok_intl(w, j)
        in_a = False
    else:
        m = tok_zh(w, j, &in_a)
    if m < 0:
        return -1
    return split_intern(v, w.a.p if in_a else w.b.p, m, out, w.lookup)


cdef enum:
    PEND = 8    # (a power of two) words waiting to be interned / looked up (their slots prefetched meanwhile)

cdef struct Pending:
    Py_ssize_t st[PEND]
    Py_ssize_t len[PEND]
    uint64_t h[PEND]        # token hash (plain word) or word-cache key hash
    int kind[PEND]          # -1 = plain word; else the first/last flags of a cached word
    int head
    int n
    bint lookup             # plain tokens a vocabulary lacks get UNSEEN (token_id)


cdef int cached_word(int mode, VocabC* v, WordCache* wc, Work* w, const Py_UCS4* word,
                     Py_ssize_t L, int flags, uint64_t hk, IBuf* out) noexcept nogil:
    """Append the tokens of a word with pattern characters: from the word cache (key = the
    mode/flags marker + the word, hash ``hk``), else tokenized and cached."""
    cdef int32_t wid
    cdef Py_ssize_t k, o0, cnt
    cdef int64_t* ns
    cdef int32_t* nc
    if ubuf_reserve(&w.key, L + 1) != 0:
        return -1
    w.key.p[0] = <Py_UCS4> (0x110000 + mode * 4 + flags)
    memcpy(w.key.p + 1, word, L * sizeof(Py_UCS4))
    vocab_probe(&wc.keys, w.key.p, L + 1, hk, &wid)
    if wid >= 0:
        cnt = wc.count[wid]
        for k in range(cnt):
            if ibuf_push(out, wc.ids.p[wc.start[wid] + k]) != 0:
                return -1
        return 0
    o0 = out.n
    if word_tokens(mode, v, w, word, L, flags, out) != 0:
        return -1
    if wc.keys.n >= WORD_CACHE_MAX:
        return 0
    if w.lookup:
        # UNSEEN is no id: a token added to the vocabulary later would get a real one
        for k in range(o0, out.n):
            if out.p[k] == UNSEEN:
                return 0
    wid = vocab_intern_h(&wc.keys, w.key.p, L + 1, hk)
    if wid < 0:
        return -1
    if wid >= wc.cap:
        ns = <int64_t*> realloc(wc.start, 2 * wc.cap * sizeof(int64_t))
        if ns == NULL:
            return -1
        wc.start = ns
        nc = <int32_t*> realloc(wc.count, 2 * wc.cap * sizeof(int32_t))
        if nc == NULL:
            return -1
        wc.count = nc
        wc.cap *= 2
    cnt = out.n - o0
    wc.start[wid] = wc.ids.n
    wc.count[wid] = <int32_t> cnt
    for k in range(cnt):
        if ibuf_push(&wc.ids, out.p[o0 + k]) != 0:
            return -1
    return 0


cdef inline int pending_pop(Pending* q, int mode, VocabC* v, WordCache* wc, Work* w,
                            const Py_UCS4* s, IBuf* out) noexcept nogil:
    cdef int k = q.head
    cdef int32_t wid
    cdef TokKey key
    q.head = (k + 1) & (PEND - 1)
    q.n -= 1
    if q.kind[k] >= 0:
        return cached_word(mode, v, wc, w, s + q.st[k], q.len[k], q.kind[k], q.h[k], out)
    tok_key_pad(s + q.st[k], q.len[k], &key)     # s is a line buffer with slack
    wid = token_id_k(v, s + q.st[k], &key, q.h[k], q.lookup)
    if wid < 0 or ibuf_push(out, wid) != 0:
        return -1
    return 0


cdef inline uint64_t word_key_hash(uint64_t h, int mode, int flags) noexcept nogil:
    """Word-cache key hash of a word whose :func:`hash_cps` is ``h``: a function of (mode/flags
    marker, word) only."""
    return h ^ (<uint64_t> (0x110000 + mode * 4 + flags) * 0x9E3779B97F4A7C15ULL)


cdef inline bint any_bits(const uint64_t* m, Py_ssize_t a, Py_ssize_t z) noexcept nogil:
    """Whether the bit array ``m`` has a set bit at positions a .. z - 1 (a < z)."""
    cdef Py_ssize_t ba = a >> 6, bz = (z - 1) >> 6, b
    cdef uint64_t lo = ~(<uint64_t> 0) << (a & 63)
    cdef uint64_t hi = ~(<uint64_t> 0) >> (63 - ((z - 1) & 63))
    if ba == bz:
        return (m[ba] & lo & hi) != 0
    if (m[ba] & lo) | (m[bz] & hi):
        return True
    for b in range(ba + 1, bz):
        if m[b]:
            return True
    return False


cdef inline bint plain_body(const Py_UCS4* s, const uint64_t* sp, Py_ssize_t a,
                            Py_ssize_t z) noexcept nogil:
    """13a leaves s[a:z] (a word, or a word without the marks the fast path splits off) whole:
    its only pattern characters (bits of ``sp``) are '-' after a non-digit. Position a follows
    whitespace or a split-off mark, never a digit."""
    cdef Py_ssize_t b, pos
    cdef uint64_t m
    for b in range(a >> 6, ((z - 1) >> 6) + 1):
        m = sp[b]
        if b == a >> 6:
            m &= ~(<uint64_t> 0) << (a & 63)
        if b == (z - 1) >> 6:
            m &= ~(<uint64_t> 0) >> (63 - ((z - 1) & 63))
        while m:
            pos = b * 64 + mtscore_ctz64(m)
            if s[pos] != 45 or (pos > a and is_digit(s[pos - 1])):
                return False
            m &= m - 1
    return True


cdef inline int intern_push_k(VocabC* v, const Py_UCS4* tok, const TokKey* key, uint64_t h,
                              IBuf* out, bint lookup) noexcept nogil:
    """Append the id of the token tok (key ``key``, hash ``h``; :func:`token_id_k`) to ``out``,
    which has room."""
    cdef int32_t wid = token_id_k(v, tok, key, h, lookup)
    if wid < 0:
        return -1
    out.p[out.n] = wid
    out.n += 1
    return 0


cdef inline int intern_push(VocabC* v, const Py_UCS4* tok, Py_ssize_t L, IBuf* out,
                            bint lookup) noexcept nogil:
    """intern_push_k of tok[0:L] in a line buffer (16 code points readable from tok)."""
    cdef TokKey key
    tok_key_pad(tok, L, &key)
    return intern_push_k(v, tok, &key, key_hash_pad(tok, &key), out, lookup)


cdef int tokenize_13a_words(int mode, VocabC* v, WordCache* wc, Work* w, Py_ssize_t n,
                            IBuf* out) noexcept nogil:
    """none (mode 0) / 13a (mode 1) on the line in w.line.p[0:n] (16 code points of slack;
    a 1-byte string's own storage in w.src1, scanned and keyed without the widened copy).

    The words come from whitespace bit masks (:c:func:`mtscore_scan_13a`, 16 code points per
    step, no branch per word), with a mask of the characters a 13a pattern reacts to; each
    plain word's key and hash are taken and its vocabulary slot prefetched for the whole line
    first, then the words are interned in order (the prefetches of a line overlap: in a large
    vocabulary each probe is a cache miss). A plain word is one token; a 13a word with one
    punctuation mark in front and/or at the end of a plain body is split by the fast path;
    other words are tokenized once per distinct word through the word cache."""
    cdef Py_UCS4* s = w.line.p
    cdef Py_ssize_t nb, cap, nw = 0, ne = 0, k, st, en, L, spc, b
    cdef uint64_t x, carry = 1, starts, ends, h
    cdef uint64_t* ws
    cdef uint64_t* sp
    cdef uint64_t* S
    cdef uint64_t* E
    cdef uint64_t* H
    cdef uint64_t* q
    cdef TokKey* K
    cdef int32_t* o
    cdef bint lookup = w.lookup
    cdef int lead, trail
    cdef bint rare
    cdef Py_UCS4 c
    nb = n // 64 + 1
    cap = 2 * nb + 6 * (n // 2 + 2)
    if w.bounds.cap < cap:
        q = <uint64_t*> realloc(w.bounds.p, cap * sizeof(uint64_t))
        if q == NULL:
            return -1
        w.bounds.p = q
        w.bounds.cap = cap
    ws = w.bounds.p
    sp = ws + nb
    S = sp + nb
    E = S + (n // 2 + 2)
    H = E + (n // 2 + 2)
    K = <TokKey*> (H + (n // 2 + 2))
    cdef const uint8_t* b1 = w.src1     # a 1-byte string's own storage, or NULL
    if b1 != NULL:
        rare = mtscore_scan_13a_bytes(b1, n, ws, sp if mode == 1 else NULL, LATIN1_CLS)
    else:
        rare = mtscore_scan_13a(s, n, ws, sp if mode == 1 else NULL, LATIN1_CLS)
    if rare and mode == 1:
        # 13a's line-level replacements (rare: the scan tells) shorten the line: rescan it
        n = prep_13a_line(s, n)
        nb = n // 64 + 1
        mtscore_scan_13a(s, n, ws, sp, LATIN1_CLS)
        b1 = NULL
    # word starts: not whitespace after whitespace; ends: whitespace after not whitespace
    for b in range(nb):
        x = ws[b]
        starts = ~x & ((x << 1) | carry)
        ends = x & ~((x << 1) | carry)
        carry = x >> 63
        while starts:
            S[nw] = <uint64_t> (b * 64 + mtscore_ctz64(starts))
            nw += 1
            starts &= starts - 1
        while ends:
            E[ne] = <uint64_t> (b * 64 + mtscore_ctz64(ends))
            ne += 1
            ends &= ends - 1
    # pass 1: the hash of each plain word (its slot prefetched); a word with pattern characters
    # is marked by S's top bit
    for k in range(nw):
        st = <Py_ssize_t> S[k]
        en = <Py_ssize_t> E[k]
        if mode == 0 or not any_bits(sp, st, en):
            if b1 != NULL and en - st <= 16:
                tok_key_bytes(b1 + st, en - st, n - st, &K[k])
            else:
                tok_key_pad(s + st, en - st, &K[k])
            h = key_hash_pad(s + st, &K[k])
            __builtin_prefetch(&v.slots[<Py_ssize_t> (h & <uint64_t> (v.nslots - 1))])
            H[k] = h
        else:
            S[k] |= <uint64_t> 1 << 63
    # pass 2, in order (room for a token per code point of the line)
    if out.cap < out.n + n + 8:
        cap = out.n + n + 8
        if cap < 2 * out.cap:
            cap = 2 * out.cap
        o = <int32_t*> realloc(out.p, cap * sizeof(int32_t))
        if o == NULL:
            return -1
        out.p = o
        out.cap = cap
    for k in range(nw):
        if not (S[k] >> 63):
            st = <Py_ssize_t> S[k]
            if intern_push_k(v, s + st, &K[k], H[k], out, lookup) != 0:
                return -1
            continue
        st = <Py_ssize_t> (S[k] & ~(<uint64_t> 1 << 63))
        en = <Py_ssize_t> E[k]
        L = en - st
        # 13a fast path for the commonest special words: one class-A punctuation mark in front
        # and/or one at the end (or a final '.'/',' after a non-digit) around a body whose only
        # pattern characters are hyphens after non-digits (which no 13a rule splits): the marks
        # are split off, the body is one token (the word cache would give the same tokens,
        # after a lookup or a regex pass)
        lead = trail = 0
        if L >= 2:
            c = s[st]
            lead = 1 if c < 128 and is_13a_punct(c) else 0
            c = s[en - 1]
            trail = 1 if c < 128 and (is_13a_punct(c) or (
                (c == 46 or c == 44) and not is_digit(s[en - 2]))) else 0
        if L - lead - trail >= 1 and plain_body(s, sp, st + lead, en - trail):
            if lead and intern_push(v, s + st, 1, out, lookup) != 0:
                return -1
            if intern_push(v, s + st + lead, L - lead - trail, out, lookup) != 0:
                return -1
            if trail and intern_push(v, s + en - 1, 1, out, lookup) != 0:
                return -1
            continue
        if cached_word(mode, v, wc, w, s + st, L, 0,
                       word_key_hash(hash_cps_pad(s + st, L), mode, 0), out) != 0:
            return -1
    return 0


cdef int tokenize_by_words(int mode, VocabC* v, WordCache* wc, Work* w, Py_ssize_t n,
                           IBuf* out) noexcept nogil:
    """intl / zh on the line in w.line.p[0:n] (none / 13a: :func:`tokenize_13a_words`).

    One fused scan finds the words and notes whether any pattern of ``mode`` can react to one
    of their characters. A plain word is one token; other words are tokenized once per distinct
    (word, first/last) through the word cache. Words wait in a short FIFO before that happens,
    their hash-table slots prefetched: in a large vocabulary each probe is a cache miss, which
    then overlaps with scanning the next words.
    """
    cdef Py_UCS4* s = w.line.p
    cdef Py_ssize_t i = 0, st, L, k
    cdef Py_UCS4 c
    cdef int flags, special
    cdef uint8_t t
    cdef uint64_t h
    cdef bint first = True, more
    cdef Pending pend
    pend.head = 0
    pend.n = 0
    pend.lookup = w.lookup
    while True:
        # skip whitespace
        while i < n:
            c = s[i]
            if c < 128:
                if not (ASCII_CLS[c] & 1):
                    break
            elif not Py_UNICODE_ISSPACE(c):
                break
            i += 1
        if i >= n:
            break
        st = i
        special = 0
        while i < n:
            c = s[i]
            if c < 128:
                t = ASCII_CLS[c]
                if t & 1:
                    break
                if mode == 2:
                    special |= INTL_TABLE[c] & 3
                else:
                    special += t & 2    # 2 x the number of 13a pattern characters
            else:
                if Py_UNICODE_ISSPACE(c):
                    break
                if mode == 2:
                    special |= intl_cls(c) & 3
                elif is_zh_char(c):
                    special = 2
            i += 1
        L = i - st
        h = hash_cps_pad(s + st, L)
        if not special:
            flags = -1
            __builtin_prefetch(&v.slots[<Py_ssize_t> (h & <uint64_t> (v.nslots - 1))])
        else:
            if mode == 2:
                # intl does not strip the line: whatever whitespace surrounds a word counts
                flags = (1 if st == 0 else 0) | (2 if i == n else 0)
            else:
                # zh strips the line first: is there another word after this one?
                more = False
                k = i
                while k < n:
                    c = s[k]
                    if not Py_UNICODE_ISSPACE(c):
                        more = True
                        break
                    k += 1
                flags = (1 if first else 0) | (0 if more else 2)
            h = word_key_hash(h, mode, flags)
            __builtin_prefetch(&wc.keys.slots[<Py_ssize_t> (h & <uint64_t> (wc.keys.nslots - 1))])
        first = False
        if pend.n == PEND:
            if pending_pop(&pend, mode, v, wc, w, s, out) != 0:
                return -1
        k = (pend.head + pend.n) & (PEND - 1)
        pend.st[k] = st
        pend.len[k] = L
        pend.h[k] = h
        pend.kind[k] = flags
        pend.n += 1
    while pend.n > 0:
        if pending_pop(&pend, mode, v, wc, w, s, out) != 0:
            return -1
    return 0


cdef inline int pending_push_plain(Pending* q, VocabC* v, const Py_UCS4* s, Py_ssize_t st,
                                   Py_ssize_t L, IBuf* out) noexcept nogil:
    """Queue the token s[st:st+L] (of a line buffer with slack) for interning (its slot
    prefetched); interns the oldest queued token first when the queue is full."""
    cdef uint64_t h = hash_cps_pad(s + st, L)
    cdef int k
    __builtin_prefetch(&v.slots[<Py_ssize_t> (h & <uint64_t> (v.nslots - 1))])
    if q.n == PEND:
        if pending_pop(q, 0, v, NULL, NULL, s, out) != 0:
            return -1
    k = (q.head + q.n) & (PEND - 1)
    q.st[k] = st
    q.len[k] = L
    q.h[k] = h
    q.kind[k] = -1
    q.n += 1
    return 0


cdef int chrf_words(VocabC* v, const Py_UCS4* s, Py_ssize_t n, IBuf* out,
                    bint lookup) noexcept nogil:
    """sacrebleu CHRF._remove_punctuation: split, then split ONE ASCII punctuation char off the
    end (priority) or the start of each word longer than one character. Tokens are interned
    through the prefetching FIFO of tokenize_by_words."""
    cdef Py_ssize_t i = 0, st, L
    cdef int rc = 0
    cdef Pending pend
    pend.head = 0
    pend.n = 0
    pend.lookup = lookup
    while i < n and rc == 0:
        while i < n and Py_UNICODE_ISSPACE(s[i]):
            i += 1
        if i >= n:
            break
        st = i
        while i < n and not Py_UNICODE_ISSPACE(s[i]):
            i += 1
        L = i - st
        if L > 1 and is_ascii_punct(s[i - 1]):
            rc = pending_push_plain(&pend, v, s, st, L - 1, out)
            if rc == 0:
                rc = pending_push_plain(&pend, v, s, i - 1, 1, out)
        elif L > 1 and is_ascii_punct(s[st]):
            rc = pending_push_plain(&pend, v, s, st, 1, out)
            if rc == 0:
                rc = pending_push_plain(&pend, v, s, st + 1, L - 1, out)
        else:
            rc = pending_push_plain(&pend, v, s, st, L, out)
    while pend.n > 0 and rc == 0:
        rc = pending_pop(&pend, 0, v, NULL, NULL, s, out)
    return rc

cdef inline Py_ssize_t load_segment(int kind, const void* data, Py_ssize_t n, UBuf* dst,
                                    bint rstrip) noexcept nogil:
    # ubuf_load's widening, through a local pointer: a store through dst.p could otherwise
    # alias dst itself (-fno-strict-aliasing), which keeps gcc from vectorising the loop
    # where dst is a caller's pointer (tokenize_one)
    cdef Py_ssize_t k
    cdef Py_UCS4* p
    cdef const uint8_t* d1
    cdef const uint16_t* d2
    if ubuf_reserve(dst, n + 16) != 0:   # slack: tok_key_pad reads 16 from a token's start
        return -1
    p = dst.p
    if kind == 1:
        d1 = <const uint8_t*> data
        for k in range(n):
            p[k] = d1[k]
    elif kind == 2:
        d2 = <const uint16_t*> data
        for k in range(n):
            p[k] = d2[k]
    else:
        memcpy(p, data, n * sizeof(Py_UCS4))
    dst.n = n
    if rstrip:
        while n > 0 and Py_UNICODE_ISSPACE(dst.p[n - 1]):
            n -= 1
    return n


cdef int process_segment(int mode, VocabC* v, WordCache* wc, Work* w, Py_ssize_t n,
                         IBuf* out) noexcept nogil:
    """Tokenize w.a.p[0:n] according to ``mode`` and append ids/code points to ``out``."""
    cdef Py_ssize_t m, k
    cdef Py_UCS4 c
    cdef UBuf tmp
    if mode == 0 or mode == 1 or mode == 2 or mode == 3:
        tmp = w.line
        w.line = w.a
        w.a = tmp
        if mode <= 1:
            return tokenize_13a_words(mode, v, wc, w, n, out)
        return tokenize_by_words(mode, v, wc, w, n, out)
    elif mode == 4:
        for k in range(n):
            c = w.a.p[k]
            if not Py_UNICODE_ISSPACE(c):
                if ibuf_push(out, token_id(v, w.a.p + k, 1, hash_cps(w.a.p + k, 1),
                                           w.lookup)) != 0:
                    return -1
        return 0
    elif mode == 5:
        for k in range(n):
            c = w.a.p[k]
            if not Py_UNICODE_ISSPACE(c):
                if ibuf_push(out, <int32_t> c) != 0:
                    return -1
        return 0
    elif mode == 6:
        for k in range(n):
            if ibuf_push(out, <int32_t> w.a.p[k]) != 0:
                return -1
        return 0
    elif mode == 7:
        return chrf_words(v, w.a.p, n, out, w.lookup)
    return -1


# ---- one text at a time (the _sentence kernels, through _text.pxd) --------------------------
cdef int tokenize_one(int mode, VocabC* v, WordCache* wc, Work* w, int kind, const void* data,
                      Py_ssize_t n, bint rstrip, IBuf* out) noexcept nogil:
    """Tokenize one string's PEP 393 storage (``kind``, ``data``, ``n`` code points) with
    ``mode`` and append its ids (code points for MODE_CHARS / MODE_CHARS_WS) to ``out``, as
    :func:`encode` does for each of its strings. 0, or -1 when out of memory."""
    n = load_segment(kind, data, n, &w.a, rstrip)
    if n < 0:
        return -1
    w.src1 = <const uint8_t*> data if kind == 1 else NULL
    return process_segment(mode, v, wc, w, n, out)


cdef bint intl_ready() noexcept nogil:
    return INTL_TABLE != NULL


def encode(list texts, int mode, Vocab vocab=None, bint rstrip=False, bint lookup=False):
    """Tokenize ``texts`` (list of str, N items) with ``mode`` into CSR arrays.

    Returns ``(values, offsets)``: int32 array of token ids (code points for MODE_CHARS /
    MODE_CHARS_WS) and int64 offsets of length N + 1. ``rstrip`` removes trailing whitespace
    first (BLEU does, chrF does not). ``vocab`` is required for the id-producing modes.
    ``lookup``: a token ``vocab`` lacks gets id 2**31 - 1 (``UNSEEN``) instead of a new id, and
    ``vocab`` is not changed (BLEU hypotheses against prepared references: a token no
    reference has matches nothing, whatever its id).
    """
    cdef Py_ssize_t N = len(texts), i, n, k, nb, total = 0
    cdef object t
    if mode == 2 and INTL_TABLE == NULL:
        raise RuntimeError("intl class table not installed (call mtscore.engine.tokenizers.intl_table())")
    if vocab is None and mode not in (5, 6):
        raise ValueError("this mode needs a Vocab")
    cdef int* kinds = <int*> malloc((N + 1) * sizeof(int))
    cdef void** datas = <void**> malloc((N + 1) * sizeof(void*))
    cdef Py_ssize_t* lens = <Py_ssize_t*> malloc((N + 1) * sizeof(Py_ssize_t))
    if kinds == NULL or datas == NULL or lens == NULL:
        free(kinds); free(datas); free(lens)
        raise MemoryError()
    for i in range(N):
        t = texts[i]
        if type(t) is not str:
            free(kinds); free(datas); free(lens)
            raise TypeError(f"segment {i} is {type(t).__name__}, expected str")
        PyUnicode_READY(t)
        kinds[i] = PyUnicode_KIND(t)
        datas[i] = PyUnicode_DATA(t)
        lens[i] = PyUnicode_GET_LENGTH(t)
        total += lens[i]
    if vocab is not None and mode not in (5, 6) and vocab.v.n == 0:
        # a fresh vocabulary: size it for the expected number of distinct tokens (Heaps' law,
        # tokens ~ chars / 6: 20 * tokens**0.6 is 0.98-4.7x (mostly ~1.6x) the distinct 13a
        # tokens of the 16 newstest2021 references, and the table rounds up to a power of two
        # with load <= 1/2), sparing the rehashes without faulting in pages it never uses
        if vocab_reserve(&vocab.v, <Py_ssize_t> (20.0 * pow(total / 6.0 + 1.0, 0.6))) != 0:
            free(kinds); free(datas); free(lens)
            raise MemoryError()
    offsets = np.empty(N + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    cdef Work w
    memset(&w, 0, sizeof(Work))
    w.lookup = lookup
    # the id buffer sized once for the expected output (a token per ~4 code points of text, a
    # value per code point in the character modes): growing it by doubling copied each id ~2
    # times; what is left over is given back when numpy takes the buffer (_adopt_ids)
    w.out.cap = (total if mode in (4, 5, 6) else total // 4 + N) + 64
    w.out.p = <int32_t*> malloc(w.out.cap * sizeof(int32_t))
    if w.out.p == NULL:
        free(kinds); free(datas); free(lens)
        raise MemoryError()
    cdef VocabC* vc = &vocab.v if vocab is not None else NULL
    cdef WordCache* wc = &vocab.wc if vocab is not None else NULL
    cdef int err = 0
    with nogil:
        off[0] = 0
        for i in range(N):
            if i + 1 < N:
                # the next string's storage is cold (one string after another, each somewhere
                # else in the heap): fetch it while this one is tokenized
                nb = lens[i + 1] * kinds[i + 1]
                for k in range(0, nb, 64):
                    __builtin_prefetch(<const char*> datas[i + 1] + k)
            n = load_segment(kinds[i], datas[i], lens[i], &w.a, rstrip)
            w.src1 = <const uint8_t*> datas[i] if kinds[i] == 1 else NULL
            if n < 0 or process_segment(mode, vc, wc, &w, n, &w.out) != 0:
                err = 1
                break
            off[i + 1] = w.out.n
    free(kinds); free(datas); free(lens)
    free(w.a.p); free(w.b.p); free(w.line.p); free(w.key.p); free(w.bounds.p)
    if err:
        free(w.out.p)
        raise MemoryError("tokenization ran out of memory")
    return _adopt_ids(&w.out), offsets


cdef class _MallocBuffer:
    """Owns a malloc'd block that a numpy array views (its ``base``): freed with the array."""
    cdef void* ptr

    def __dealloc__(self):
        free(self.ptr)


cdef object _adopt_ids(IBuf* b):
    """The ids in ``b`` as an int32 array that takes over its buffer (shrunk to size): no copy
    of what can be tens of MB of ids, and no second buffer to fault in."""
    cdef cnp.npy_intp dims[1]
    cdef void* p
    if b.n == 0:
        free(b.p)
        return np.empty(0, dtype=np.int32)
    p = realloc(b.p, b.n * sizeof(int32_t))
    if p == NULL:   # shrinking failed: keep the larger block
        p = b.p
    dims[0] = b.n
    cdef _MallocBuffer owner = _MallocBuffer.__new__(_MallocBuffer)
    owner.ptr = p
    cdef cnp.ndarray arr = cnp.PyArray_SimpleNewFromData(1, dims, cnp.NPY_INT32, p)
    cnp.set_array_base(arr, owner)
    return arr


def tokenize_strings(list texts, int mode, bint rstrip=False):
    """Debug/test helper: the tokenized strings (tokens joined by one space), as sacrebleu returns."""
    v = Vocab()
    values, offsets = encode(texts, mode, v, rstrip)
    out = []
    for i in range(len(texts)):
        if mode in (5, 6):
            out.append("".join(chr(x) for x in values[offsets[i]:offsets[i + 1]]))
        else:
            out.append(" ".join(v.token(x) for x in values[offsets[i]:offsets[i + 1]]))
    return out
