# cython: language_level=3
"""Code-point helpers shared by the text kernels (``_text``: 13a/intl/zh/chrF tokenizers;
``_ter_normalize``: the Tercom normaliser): one copy of each, all ``cdef inline`` and ``nogil``.

* reading a ``str`` straight from CPython's compact storage (PEP 393) into a growable
  code-point buffer (``UBuf``);
* the character classes both tokenizer families test (13a/Tercom punctuation, ASCII digits);
* the token keys and hashes the vocabularies intern with (``_text``: a token of at most 16
  Latin-1 code points packed to bytes and hashed with one multiply, any other eight code points
  per step, ``tok_key`` / ``hash_cps``; ``_ter_normalize``: FNV-1a steps with a cheap fold);
* an in-place literal ``str.replace`` on code points.

A .pxd only: nothing here is a module of its own, the functions are compiled into each kernel
that cimports them (so the hot loops inline them exactly as before).
"""
from libc.stdlib cimport realloc, free
from libc.string cimport memcpy, memcmp
from libc.stdint cimport uint64_t, uint32_t, uint16_t, uint8_t

cdef extern from "Python.h":
    int PyUnicode_READY(object) except -1
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil


# ---- growable code-point buffer ------------------------------------------------------------
cdef struct UBuf:
    Py_UCS4* p          # malloc'd code points (NULL until the first reserve)
    Py_ssize_t n        # length in use (kernels that track the length elsewhere ignore it)
    Py_ssize_t cap      # allocated code points


cdef inline void ubuf_init(UBuf* b) noexcept nogil:
    b.p = NULL
    b.n = 0
    b.cap = 0


cdef inline void ubuf_free(UBuf* b) noexcept nogil:
    free(b.p)
    b.p = NULL
    b.n = 0
    b.cap = 0


cdef inline int ubuf_reserve(UBuf* b, Py_ssize_t n) noexcept nogil:
    """Room for ``n`` code points (contents kept); 0, or -1 when out of memory."""
    cdef Py_UCS4* q
    cdef Py_ssize_t cap
    if n <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap * 2 > n else n + 64
    q = <Py_UCS4*> realloc(b.p, cap * sizeof(Py_UCS4))
    if q == NULL:
        return -1
    b.p = q
    b.cap = cap
    return 0


cdef inline int ubuf_load(UBuf* dst, int kind, const void* data, Py_ssize_t n,
                          Py_ssize_t slack) noexcept nogil:
    """Widen ``n`` code points of PEP 393 storage (``kind`` 1, 2 or 4) into ``dst.p[0:n]``
    (``dst.n = n``), with room for ``slack`` more; 0, or -1 when out of memory."""
    cdef Py_ssize_t k
    cdef const uint8_t* d1
    cdef const uint16_t* d2
    if ubuf_reserve(dst, n + slack) != 0:
        return -1
    if kind == 1:
        d1 = <const uint8_t*> data
        for k in range(n):
            dst.p[k] = d1[k]
    elif kind == 2:
        d2 = <const uint16_t*> data
        for k in range(n):
            dst.p[k] = d2[k]
    else:
        memcpy(dst.p, data, n * sizeof(Py_UCS4))
    dst.n = n
    return 0


# ---- character classes ---------------------------------------------------------------------
cdef inline bint is_digit(Py_UCS4 c) noexcept nogil:
    return 48 <= c <= 57


cdef inline bint is_ascii_punct(Py_UCS4 c) noexcept nogil:
    # string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ (chrF++'s word splitting)
    return (0x21 <= c <= 0x2F) or (0x3A <= c <= 0x40) or (0x5B <= c <= 0x60) or (0x7B <= c <= 0x7E)


cdef inline bint is_space(Py_UCS4 c) noexcept nogil:
    """``str.isspace`` of one code point, i.e. Py_UNICODE_ISSPACE, without its out-of-line call
    for the non-ASCII letters of Latin, Greek, Cyrillic, ... text: below U+1680 the only
    non-ASCII whitespace is U+0085 and U+00A0."""
    if c < 128:
        return (9 <= c <= 13) or (0x1C <= c <= 0x20)
    if c < 0x1680:
        return c == 0x85 or c == 0xA0
    return Py_UNICODE_ISSPACE(c)


cdef inline bint is_13a_punct(Py_UCS4 c) noexcept nogil:
    # re class [\{-\~\[-\` -\&\(-\+\:-\@\/] of 13a, also Tercom's "western" punctuation
    return ((0x20 <= c <= 0x26) or (0x28 <= c <= 0x2B) or c == 0x2F or (0x3A <= c <= 0x40)
            or (0x5B <= c <= 0x60) or (0x7B <= c <= 0x7E))


# ---- hashing -------------------------------------------------------------------------------
cdef enum:
    HASH_INIT = 1469598103934665603ULL      # FNV-1a offset basis


cdef inline uint64_t hash_step(uint64_t h, Py_UCS4 c) noexcept nogil:
    return (h ^ <uint64_t> c) * 1099511628211ULL


cdef extern from *:
    """
    #include <string.h>
    #include <stdint.h>
    /* 64 x 64 -> 128-bit product folded to 64 bits (the "mum" mix of wyhash) */
    static inline uint64_t mtscore_mum(uint64_t a, uint64_t b) {
    #if defined(__SIZEOF_INT128__)
        __uint128_t r = (__uint128_t)a * b;
        return (uint64_t)r ^ (uint64_t)(r >> 64);
    #else
        uint64_t lo = a * b, x = (a >> 32) * (b >> 32);
        return lo ^ x ^ (lo >> 29) ^ (x << 7);
    #endif
    }
    static inline uint64_t mtscore_ld2(const uint32_t* s) {   /* two code points, any alignment */
        uint64_t x;
        memcpy(&x, s, 8);
        return x;
    }
    #define MTSCORE_K1 0xa0761d6478bd642fULL
    #define MTSCORE_K2 0xe7037ed1a0b428dbULL
    #define MTSCORE_K3 0x8ebc6af09c88c6e3ULL
    #define MTSCORE_K4 0x589965cc75374cc3ULL
    /* eight code points (as four 64-bit words) into h: two independent 128-bit products */
    static inline uint64_t mtscore_mix8(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                                        uint64_t h) {
        return mtscore_mum(a ^ MTSCORE_K1, b ^ MTSCORE_K2) ^ mtscore_mum(c ^ MTSCORE_K3, d ^ h);
    }
    /* keep the first k code points of an 8-code-point block: mtscore_keep[k][0..3]; of a
       16-code-point block: mtscore_keep16[k][0..15] */
    static uint64_t mtscore_keep[9][4];
    static uint32_t mtscore_keep16[17][16] __attribute__((aligned(16)));
    /* keep the first k bytes of 16: mtscore_keepb[k][0..1] */
    static uint64_t mtscore_keepb[17][2];
    static void mtscore_init_keep(void) {
        uint32_t lanes[8];
        int k, j;
        for (k = 0; k <= 8; k++) {
            for (j = 0; j < 8; j++)
                lanes[j] = j < k ? 0xFFFFFFFFu : 0u;
            memcpy(mtscore_keep[k], lanes, 32);
        }
        for (k = 0; k <= 16; k++) {
            for (j = 0; j < 16; j++)
                mtscore_keep16[k][j] = j < k ? 0xFFFFFFFFu : 0u;
            mtscore_keepb[k][0] = k >= 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * k)) - 1);
            mtscore_keepb[k][1] = k <= 8 ? 0 : k >= 16 ? ~(uint64_t)0
                                                       : (((uint64_t)1 << (8 * (k - 8))) - 1);
        }
    }
    /* The hash of the code points s[0:n], eight per step (a step is two multiplies that do not
       wait on each other; FNV-1a's chain was one multiply per code point): the last block is
       zero-filled past n. Reads nothing outside s[0:n]. */
    static inline uint64_t mtscore_hash_wide(const uint32_t* s, Py_ssize_t n) {
        uint64_t h = (uint64_t)n * MTSCORE_K4;
        uint32_t buf[8];
        Py_ssize_t k = 0;
        for (; n - k > 8; k += 8)
            h = mtscore_mix8(mtscore_ld2(s + k), mtscore_ld2(s + k + 2), mtscore_ld2(s + k + 4),
                             mtscore_ld2(s + k + 6), h);
        memset(buf, 0, sizeof(buf));
        memcpy(buf, s + k, (size_t)(n - k) * 4);
        return mtscore_mix8(mtscore_ld2(buf), mtscore_ld2(buf + 2), mtscore_ld2(buf + 4),
                            mtscore_ld2(buf + 6), h);
    }
    /* mtscore_hash_wide for a token followed by at least 8 readable code points (a line buffer
       with slack): the last block is read whole and masked, no copy and no branch on n <= 8. */
    static inline uint64_t mtscore_hash_wide_pad(const uint32_t* s, Py_ssize_t n) {
        uint64_t h = (uint64_t)n * MTSCORE_K4;
        const uint64_t* m;
        Py_ssize_t k = 0;
        for (; n - k > 8; k += 8)
            h = mtscore_mix8(mtscore_ld2(s + k), mtscore_ld2(s + k + 2), mtscore_ld2(s + k + 4),
                             mtscore_ld2(s + k + 6), h);
        m = mtscore_keep[n - k];
        s += k;
        return mtscore_mix8(mtscore_ld2(s) & m[0], mtscore_ld2(s + 2) & m[1],
                            mtscore_ld2(s + 4) & m[2], mtscore_ld2(s + 6) & m[3], h);
    }
    /* The key of a token s[0:n] in a _text vocabulary slot: lenf = n, | MTSCORE_PACKED when
       the token has at most 16 code points, all below 256; pk0/pk1 then hold those code points
       as bytes, zero-filled (for such tokens an injective encoding: equal keys are equal
       tokens, so a probe compares them without reading the token's code points). */
    #define MTSCORE_PACKED 0x80000000u
    typedef struct { uint64_t pk0, pk1; uint32_t lenf; } mtscore_tokkey;
    static inline void mtscore_tok_key(const uint32_t* s, Py_ssize_t n, mtscore_tokkey* k) {
        unsigned char b[16];
        uint32_t any = 0;
        Py_ssize_t j;
        k->pk0 = k->pk1 = 0;
        k->lenf = (uint32_t)n;
        if (n > 16)
            return;
        memset(b, 0, 16);
        for (j = 0; j < n; j++) {
            any |= s[j];
            b[j] = (unsigned char)s[j];
        }
        if (any < 256) {
            memcpy(&k->pk0, b, 8);
            memcpy(&k->pk1, b + 8, 8);
            k->lenf |= MTSCORE_PACKED;
        }
    }
    #if defined(__SSE2__) && !defined(MTSCORE_NO_SIMD)
    #include <emmintrin.h>
    /* mtscore_tok_key for a token followed by at least 16 readable code points (a line buffer
       with slack): four vector loads masked to the token (mtscore_keep16[n]: lanes 0..n-1 of
       16), packed to bytes, no loop over the code points */
    static inline void mtscore_tok_key_pad(const uint32_t* s, Py_ssize_t n, mtscore_tokkey* k) {
        const __m128i* m;
        __m128i x0, x1, x2, x3, o, p;
        unsigned char b[16];
        if (n > 16) {
            k->pk0 = k->pk1 = 0;
            k->lenf = (uint32_t)n;
            return;
        }
        m = (const __m128i*)mtscore_keep16[n];
        x0 = _mm_and_si128(_mm_loadu_si128((const __m128i*)s), _mm_load_si128(m));
        x1 = _mm_and_si128(_mm_loadu_si128((const __m128i*)(s + 4)), _mm_load_si128(m + 1));
        x2 = _mm_and_si128(_mm_loadu_si128((const __m128i*)(s + 8)), _mm_load_si128(m + 2));
        x3 = _mm_and_si128(_mm_loadu_si128((const __m128i*)(s + 12)), _mm_load_si128(m + 3));
        o = _mm_or_si128(_mm_or_si128(x0, x1), _mm_or_si128(x2, x3));
        o = _mm_cmpeq_epi32(_mm_and_si128(o, _mm_set1_epi32(~0xFF)), _mm_setzero_si128());
        p = _mm_packus_epi16(_mm_packs_epi32(x0, x1), _mm_packs_epi32(x2, x3));
        _mm_storeu_si128((__m128i*)b, p);
        memcpy(&k->pk0, b, 8);
        memcpy(&k->pk1, b + 8, 8);
        k->lenf = (uint32_t)n | (_mm_movemask_epi8(o) == 0xFFFF ? MTSCORE_PACKED : 0u);
    }
    #else
    #define mtscore_tok_key_pad mtscore_tok_key
    #endif
    /* mtscore_tok_key of a token of n <= 16 code points given as its Latin-1 bytes s[0:n] (a
       1-byte string's own storage) of which ``avail`` >= n are readable: the bytes are the
       key (read as two words when 16 are readable, and masked to the token) */
    static inline void mtscore_tok_key_bytes(const uint8_t* s, Py_ssize_t n, Py_ssize_t avail,
                                             mtscore_tokkey* k) {
        unsigned char b[16];
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (avail >= 16) {      /* the masks keep the low bytes: the first ones, little-endian */
            memcpy(&k->pk0, s, 8);
            memcpy(&k->pk1, s + 8, 8);
        } else
    #endif
        {
            memset(b, 0, 16);
            memcpy(b, s, (size_t)n);
            memcpy(&k->pk0, b, 8);
            memcpy(&k->pk1, b + 8, 8);
        }
        k->pk0 &= mtscore_keepb[n][0];
        k->pk1 &= mtscore_keepb[n][1];
        k->lenf = (uint32_t)n | MTSCORE_PACKED;
    }
    /* the hash of a PACKED token: its bytes and length, one 128-bit product */
    static inline uint64_t mtscore_hash_packed(const mtscore_tokkey* k) {
        return mtscore_mum(k->pk0 ^ MTSCORE_K1,
                           k->pk1 ^ MTSCORE_K2 ^ ((uint64_t)k->lenf * MTSCORE_K4));
    }
    """
    ctypedef struct TokKey "mtscore_tokkey":
        uint64_t pk0
        uint64_t pk1
        uint32_t lenf           # length | PACKED
    uint32_t PACKED "MTSCORE_PACKED"
    void mtscore_init_keep() nogil
    void tok_key "mtscore_tok_key"(const Py_UCS4* s, Py_ssize_t n, TokKey* k) nogil
    void tok_key_pad "mtscore_tok_key_pad"(const Py_UCS4* s, Py_ssize_t n, TokKey* k) nogil
    void tok_key_bytes "mtscore_tok_key_bytes"(const uint8_t* s, Py_ssize_t n, Py_ssize_t avail,
                                               TokKey* k) nogil
    uint64_t mtscore_hash_packed(const TokKey* k) nogil
    uint64_t mtscore_hash_wide(const Py_UCS4* s, Py_ssize_t n) nogil
    uint64_t mtscore_hash_wide_pad(const Py_UCS4* s, Py_ssize_t n) nogil


cdef inline uint64_t key_hash(const Py_UCS4* s, const TokKey* key) noexcept nogil:
    """The hash _text's vocabularies intern the token s (key ``key``, :func:`tok_key`) with: a
    function of its code points only (any buffer, any alignment); low bits (the slot) and high
    bits (the check) both mixed. A PACKED token is hashed from its bytes (one multiply), any
    other eight code points per step."""
    if key.lenf & PACKED:
        return mtscore_hash_packed(key)
    return mtscore_hash_wide(s, key.lenf)


cdef inline uint64_t key_hash_pad(const Py_UCS4* s, const TokKey* key) noexcept nogil:
    """:func:`key_hash` where at least 16 code points after the token's end are readable."""
    if key.lenf & PACKED:
        return mtscore_hash_packed(key)
    return mtscore_hash_wide_pad(s, key.lenf)


cdef inline uint64_t hash_cps(const Py_UCS4* s, Py_ssize_t n) noexcept nogil:
    """:func:`key_hash` of the token s[0:n] (any buffer)."""
    cdef TokKey key
    tok_key(s, n, &key)
    return key_hash(s, &key)


cdef inline uint64_t hash_cps_pad(const Py_UCS4* s, Py_ssize_t n) noexcept nogil:
    """:func:`hash_cps` of s[0:n] where at least 16 code points after s[n - 1] are readable
    (their values do not matter; a line buffer with slack): the key is built from four vector
    loads (:func:`tok_key_pad`). Needs ``mtscore_init_keep()`` once (the _text module)."""
    cdef TokKey key
    tok_key_pad(s, n, &key)
    return key_hash_pad(s, &key)


cdef inline uint64_t hash_cps_fold(const Py_UCS4* s, Py_ssize_t n) noexcept nogil:
    """FNV-1a with only a shift-xor fold for the low bits (FNV's low bits mix poorly; open
    addressing takes them for the slot), for tables that keep and compare the full 64-bit hash
    of every entry (TercomVocab: measured 5 % faster tokenization than with a full 64-bit
    finaliser)."""
    cdef uint64_t h = HASH_INIT
    cdef Py_ssize_t k
    for k in range(n):
        h = hash_step(h, s[k])
    return h ^ (h >> 29)


cdef inline bint cps_equal(const Py_UCS4* a, const Py_UCS4* b, Py_ssize_t n) noexcept nogil:
    # tokens are short: an inline loop beats a libc call
    cdef Py_ssize_t k
    if n > 16:
        return memcmp(a, b, n * sizeof(Py_UCS4)) == 0
    for k in range(n):
        if a[k] != b[k]:
            return False
    return True


# ---- literal replacement -------------------------------------------------------------------
cdef inline Py_ssize_t replace_inplace(Py_UCS4* s, Py_ssize_t n, const Py_UCS4* pat, Py_ssize_t m,
                                       const Py_UCS4* rep, Py_ssize_t r) noexcept nogil:
    """str.replace(pat, rep) in place for r <= m (left-to-right, non-overlapping)."""
    cdef Py_ssize_t i = 0, w = 0, k
    cdef bint hit
    while i < n:
        hit = False
        if s[i] == pat[0] and i + m <= n:
            hit = True
            for k in range(1, m):
                if s[i + k] != pat[k]:
                    hit = False
                    break
        if hit:
            for k in range(r):
                s[w + k] = rep[k]
            w += r
            i += m
        else:
            s[w] = s[i]
            w += 1
            i += 1
    return w
