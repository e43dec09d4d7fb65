# cython: language_level=3
"""Edit-distance kernels, part 3 of 3: WER / PER statistics straight from the strings.

* :func:`word_stats_texts`: per segment ``[errors, reference length]`` on jiwer's words, in one
  pass per (hypothesis, reference) pair: no token arrays, and the hypothesis' words interned in
  a per-segment table (ids that only agree within a segment: no corpus vocabulary);
* :class:`WordSets` / :func:`word_stats_sets`: WER with the references prepared once (each
  one's words in a hash set with a collision-free slot per word, their positions as bits),
  each hypothesis word looked up with one probe as the hypothesis is scanned.

``multi_ref`` / ``measure`` take the values of ``_edit_distance`` (``MULTI_*``, ``MEASURE_*``),
whose bit-parallel Levenshtein and PER run here on the per-segment ids
(``_edit_distance.pxd``); the strings' storage comes from ``_edit_csr`` (``texts_open``).
Everything after the string pointers are collected runs without the GIL. The plain-Python
twin is ``mtscore/kernels/reference/edit_words.py``.
"""
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset, memcmp
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t, uint16_t, uint8_t

from mtscore.kernels._ucs4 cimport is_space
from mtscore.kernels._edit_buffers cimport (
    Texts, Pattern, Pick, pick_init, pick, picked_length)
from mtscore.kernels._edit_csr cimport texts_open, texts_close
from mtscore.kernels._edit_distance cimport (
    pattern_init, pattern_reserve, pattern_free, pattern_set, pattern_clear, levenshtein_text,
    per_errors)


# ---- WER / PER straight from the strings ---------------------------------------------------
# Levenshtein and PER only ever compare a hypothesis word with a reference word of the same
# segment, so words need ids that agree within one segment only: the hypothesis' words are
# interned in a small per-segment table (it stays in L1) and a reference word that is not in it
# gets one shared "absent" id that matches nothing. No corpus vocabulary, no token arrays: each
# string is copied once into a zero-padded buffer in the segment's widest PEP 393 width (so the
# same word has the same bytes in every string of the segment), its whitespace is classified
# into bit sets (one bit a code point) from which jiwer's word characters follow by shifts, and
# each word is keyed by its bytes read 8 at a time (a multiplicative hash, equality by whole
# 8-byte loads): no per-character branch or hash chain.
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    static inline uint64_t mts_load8(const uint8_t* p) {
        uint64_t x; memcpy(&x, p, 8); return x;
    }
    /* the first n (1..8) bytes at p, the other bytes zero; reads 8 bytes */
    static inline uint64_t mts_head8(const uint8_t* p, Py_ssize_t n) {
        uint64_t x; memcpy(&x, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        return x & (~(uint64_t)0 << (64 - 8 * n));
    #else
        return x & (~(uint64_t)0 >> (64 - 8 * n));
    #endif
    }
    static inline int mts_ctz64(uint64_t x) { return __builtin_ctzll(x); }
    static inline int mts_clz64(uint64_t x) { return __builtin_clzll(x); }
    static inline int mts_popcount64(uint64_t x) {
    #if defined(__POPCNT__)
        return __builtin_popcountll(x);
    #else   /* without -mpopcnt the builtin is a libgcc call */
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int)((x * 0x0101010101010101ULL) >> 56);
    #endif
    }
    /* str.isspace of a code point; t8: the answers for 0..255 (above: U+1680 and later) */
    static inline int mts_space_cp(uint32_t c, const uint8_t* t8) {
        return c < 256 ? t8[c] : (c >= 0x1680 && Py_UNICODE_ISSPACE(c));
    }
    #if defined(__SSE2__)
    #include <emmintrin.h>
    /* whitespace / U+0020 bits of the 16 one-byte code points at p */
    static inline void mts_class_u8(const uint8_t* p, uint32_t* ws, uint32_t* sp) {
        __m128i x = _mm_loadu_si128((const __m128i*)p);
        __m128i s = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x20));
        __m128i t = _mm_sub_epi8(x, _mm_set1_epi8(9));      /* 9..13 -> 0..4 */
        __m128i u = _mm_sub_epi8(x, _mm_set1_epi8(0x1C));   /* 0x1C..0x1F -> 0..3 */
        __m128i w = _mm_or_si128(s, _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(4)), t));
        w = _mm_or_si128(w, _mm_cmpeq_epi8(_mm_min_epu8(u, _mm_set1_epi8(3)), u));
        w = _mm_or_si128(w, _mm_cmpeq_epi8(x, _mm_set1_epi8((char)0x85)));
        w = _mm_or_si128(w, _mm_cmpeq_epi8(x, _mm_set1_epi8((char)0xA0)));
        *ws = (uint32_t)_mm_movemask_epi8(w);
        *sp = (uint32_t)_mm_movemask_epi8(s);
    }
    /* the same for 8 two-byte code points, the whitespace above U+00FF being U+1680,
       U+2000..U+200A, U+2028, U+2029, U+202F, U+205F and U+3000 (mts_high_space_ok checks this
       Python's str.isspace agrees); returns nonzero when one is >= U+1680 */
    static inline int mts_class_u16(const uint8_t* p, uint32_t* ws, uint32_t* sp) {
        const __m128i bias = _mm_set1_epi16((short)0x8000);
        __m128i x = _mm_loadu_si128((const __m128i*)p);
        __m128i xb = _mm_xor_si128(x, bias);
        __m128i s = _mm_cmpeq_epi16(x, _mm_set1_epi16(0x20));
        __m128i t = _mm_xor_si128(_mm_sub_epi16(x, _mm_set1_epi16(9)), bias);
        __m128i u = _mm_xor_si128(_mm_sub_epi16(x, _mm_set1_epi16(0x1C)), bias);
        __m128i w = _mm_or_si128(s, _mm_cmplt_epi16(t, _mm_set1_epi16((short)0x8005)));
        w = _mm_or_si128(w, _mm_cmplt_epi16(u, _mm_set1_epi16((short)0x8004)));
        w = _mm_or_si128(w, _mm_cmpeq_epi16(x, _mm_set1_epi16(0x85)));
        w = _mm_or_si128(w, _mm_cmpeq_epi16(x, _mm_set1_epi16(0xA0)));
        __m128i hi = _mm_cmpgt_epi16(xb, _mm_set1_epi16((short)(0x167F ^ 0x8000)));
        __m128i v = _mm_xor_si128(_mm_sub_epi16(x, _mm_set1_epi16(0x2000)), bias);
        __m128i y = _mm_xor_si128(_mm_sub_epi16(x, _mm_set1_epi16(0x2028)), bias);
        w = _mm_or_si128(w, _mm_cmplt_epi16(v, _mm_set1_epi16((short)0x800B)));
        w = _mm_or_si128(w, _mm_cmplt_epi16(y, _mm_set1_epi16((short)0x8002)));
        w = _mm_or_si128(w, _mm_cmpeq_epi16(x, _mm_set1_epi16(0x1680)));
        w = _mm_or_si128(w, _mm_cmpeq_epi16(x, _mm_set1_epi16(0x202F)));
        w = _mm_or_si128(w, _mm_cmpeq_epi16(x, _mm_set1_epi16(0x205F)));
        w = _mm_or_si128(w, _mm_cmpeq_epi16(x, _mm_set1_epi16(0x3000)));
        *ws = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(w, _mm_setzero_si128())) & 0xFFu;
        *sp = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(s, _mm_setzero_si128())) & 0xFFu;
        return _mm_movemask_epi8(hi);
    }
    #endif
    /* 1 when str.isspace above U+00FF in the BMP is exactly the set mts_class_u16 tests */
    static int mts_high_space_ok(void) {
        uint32_t c;
        for (c = 0x100; c < 0x10000; c++) {
            int mine = c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
                       c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
            if (mine != (Py_UNICODE_ISSPACE(c) ? 1 : 0))
                return 0;
        }
        return 1;
    }
    /* S (whitespace) and X (U+0020) bits of the n code points of width K at b (16 zero bytes
       after them), one 64-bit word per 64 code points; high_ok: mts_high_space_ok() */
    static void mts_classify(const uint8_t* b, Py_ssize_t n, int K, const uint8_t* t8,
                             int high_ok, uint64_t* S, uint64_t* X) {
        Py_ssize_t nw = (n + 63) >> 6, w, j, lim;
        uint32_t c, ws, sp;
        for (w = 0; w < nw; w++) {
            uint64_t s = 0, x = 0;
            Py_ssize_t base = w << 6;
            lim = n - base < 64 ? n - base : 64;
            if (K == 1) {
    #if defined(__SSE2__)
                for (j = 0; j < lim; j += 16) {
                    mts_class_u8(b + base + j, &ws, &sp);
                    s |= (uint64_t)ws << j;
                    x |= (uint64_t)sp << j;
                }
    #else
                for (j = 0; j < lim; j++) {
                    c = b[base + j];
                    s |= (uint64_t)t8[c] << j;
                    x |= (uint64_t)(c == 32) << j;
                }
    #endif
            } else if (K == 2) {
                const uint16_t* q = (const uint16_t*)b + base;
    #if defined(__SSE2__)
                for (j = 0; j < lim; j += 8) {
                    if (mts_class_u16((const uint8_t*)(q + j), &ws, &sp) && !high_ok) {
                        Py_ssize_t k;
                        ws = 0;
                        for (k = 0; k < 8; k++)
                            ws |= (uint32_t)mts_space_cp(q[j + k], t8) << k;
                    }
                    s |= (uint64_t)ws << j;
                    x |= (uint64_t)sp << j;
                }
    #else
                for (j = 0; j < lim; j++) {
                    c = q[j];
                    s |= (uint64_t)mts_space_cp(c, t8) << j;
                    x |= (uint64_t)(c == 32) << j;
                }
    #endif
            } else {
                const uint32_t* q = (const uint32_t*)b + base;
                for (j = 0; j < lim; j++) {
                    c = q[j];
                    s |= (uint64_t)mts_space_cp(c, t8) << j;
                    x |= (uint64_t)(c == 32) << j;
                }
            }
            S[w] = s;
            X[w] = x;
        }
    }
    """
    void mts_classify(const uint8_t* b, Py_ssize_t n, int K, const uint8_t* t8, int high_ok,
                      uint64_t* S, uint64_t* X) nogil
    int mts_high_space_ok()
    uint64_t mts_load8(const uint8_t* p) nogil
    uint64_t mts_head8(const uint8_t* p, Py_ssize_t n) nogil
    int mts_ctz64(uint64_t x) nogil
    int mts_clz64(uint64_t x) nogil
    int mts_popcount64(uint64_t x) nogil


# str.isspace of code points 0..255 (the only whitespace above: U+1680 and later)
cdef uint8_t SPACE8[256]

# whether mts_class_u16's whitespace above U+00FF is this Python's (else code points one by one)
cdef int HIGH_SPACE_OK = 0

cdef void _init_space8():
    global HIGH_SPACE_OK
    cdef int c
    for c in range(256):
        SPACE8[c] = 1 if is_space(c) else 0
    HIGH_SPACE_OK = mts_high_space_ok()

_init_space8()

cdef extern from *:
    """
    /* MTS_KMASK[n][i]: the bytes of 8-byte word i (of 4) that lie in the first n bytes */
    static uint64_t MTS_KMASK[33][4];
    static void mts_kmask_init(void) {
        int n, i, j;
        uint8_t by[8];
        for (n = 0; n <= 32; n++)
            for (i = 0; i < 4; i++) {
                for (j = 0; j < 8; j++)
                    by[j] = (8 * i + j < n) ? 0xFF : 0;
                memcpy(&MTS_KMASK[n][i], by, 8);
            }
    }
    /* a word of a segment's strings: its first 32 bytes (zero beyond the word), its byte count
       and its byte offset in the hypothesis' buffer (words over 32 bytes compare the rest).
       mts_key(k, p, L): the key of the L (>= 1) bytes at p (32 readable bytes after p + L),
       returning its hash (the slot takes the high bits): masks from a table instead of a
       branch on the length, so words of up to 32 bytes (all but a few) take one path;
       mts_key_eq(q, k): 1 when the first 32 bytes and the byte counts agree (the sentinel's -1
       matches none) */
    typedef struct { uint64_t a, b, c, d; int64_t L; int64_t start; } mts_wkey;
    static inline uint64_t mts_key(mts_wkey* k, const uint8_t* p, Py_ssize_t L) {
        const uint64_t* m = MTS_KMASK[L < 32 ? L : 32];
        uint64_t h;
        k->a = mts_load8(p) & m[0];
        k->b = mts_load8(p + 8) & m[1];
        k->c = mts_load8(p + 16) & m[2];
        k->d = mts_load8(p + 24) & m[3];
        k->L = L;
        h = (k->a ^ ((uint64_t)L << 56)) * 0xBF58476D1CE4E5B9ULL + k->b * 0x94D049BB133111EBULL
            + (k->c ^ k->d) * 0x9E3779B97F4A7C15ULL;
        if (L > 32) {
            const uint8_t* q = p + 32;
            Py_ssize_t r = L - 32;
            while (r > 8) {
                h = (h ^ (h >> 32) ^ mts_load8(q)) * 0xBF58476D1CE4E5B9ULL;
                q += 8;
                r -= 8;
            }
            h = (h ^ (h >> 32) ^ mts_head8(q, r)) * 0x94D049BB133111EBULL;
        }
        return h;
    }
    static inline int mts_key_eq(const mts_wkey* q, const mts_wkey* k) {
        return ((q->a ^ k->a) | (q->b ^ k->b) | (q->c ^ k->c) | (q->d ^ k->d)
                | (uint64_t)(q->L ^ k->L)) == 0;
    }
    /* the runs of set bits of W[0:nw] (W[nw] == 0): starts in st, ends (exclusive) in en;
       returns how many */
    static Py_ssize_t mts_spans(const uint64_t* W, Py_ssize_t nw, Py_ssize_t* st, Py_ssize_t* en) {
        Py_ssize_t w, ns = 0, ne = 0;
        uint64_t prev = 0, x, s, e;
        for (w = 0; w < nw; w++) {
            x = W[w];
            s = x & ~((x << 1) | prev);
            e = x & ~((x >> 1) | (W[w + 1] << 63));
            prev = x >> 63;
            while (s) {
                st[ns++] = (w << 6) + mts_ctz64(s);
                s &= s - 1;
            }
            while (e) {
                en[ne++] = (w << 6) + mts_ctz64(e) + 1;
                e &= e - 1;
            }
        }
        return ns;
    }
    #if defined(__GNUC__)
    #define MTS_NOINLINE __attribute__((noinline))
    #else
    #define MTS_NOINLINE
    #endif
    /* a segment's word set (see WordSet) as the C loops read it */
    typedef struct {
        int32_t* slots; Py_ssize_t mask; int shift; mts_wkey* keys; Py_ssize_t* spos;
        uint64_t* peq;
    } mts_set;
    static inline int mts_tail_equal(const uint8_t* a, const uint8_t* b, Py_ssize_t L) {
        while (L > 8) {
            if (mts_load8(a) != mts_load8(b))
                return 0;
            a += 8; b += 8; L -= 8;
        }
        return mts_head8(a, L) == mts_head8(b, L);
    }
    /* 1-based id of the word at p (key k, hash h) in the set, or 0 when absent. Found and
       absent both end the probe, so the common outcome needs no data-dependent branch; words
       over 32 bytes (the length is known before the probe: a predictable branch) compare their
       tails in a loop of their own */
    static MTS_NOINLINE int32_t mts_lookup_long(const mts_set* H, const uint8_t* hb,
                                                const uint8_t* p, const mts_wkey* k,
                                                uint64_t h) {
        Py_ssize_t j = (Py_ssize_t)(h >> H->shift);
        for (;;) {
            int32_t e = H->slots[j];
            const mts_wkey* q = &H->keys[e];
            if (e == 0)
                return 0;
            if (mts_key_eq(q, k) && mts_tail_equal(hb + q->start + 32, p + 32, k->L - 32))
                return e;
            j = (j + 1) & H->mask;
        }
    }
    static inline int32_t mts_lookup(const mts_set* H, const uint8_t* hb, const uint8_t* p,
                                     const mts_wkey* k, uint64_t h) {
        Py_ssize_t j = (Py_ssize_t)(h >> H->shift);
        if (k->L > 32)
            return mts_lookup_long(H, hb, p, k, h);
        for (;;) {
            int32_t e = H->slots[j];
            const mts_wkey* q = &H->keys[e];   /* the sentinel when the slot is empty */
            int eq = mts_key_eq(q, k);
            if (eq | (e == 0))
                return e & -(int32_t)eq;
            j = (j + 1) & H->mask;
        }
    }
    /* insert the hypothesis' nh words (spans st, en of the buffer hb, width K): ids are the
       positions of first occurrences (written to ids when not NULL); with peq (nh <= 64) each
       id's positions as bits. The entry is written whether or not the word is new and the slot
       set to the winner, so neither outcome costs a mispredicted branch */
    static MTS_NOINLINE void mts_insert_all(mts_set* H, const uint8_t* hb, const Py_ssize_t* st,
                               const Py_ssize_t* en, Py_ssize_t nh, int K, int32_t* ids,
                               int fused) {
        Py_ssize_t i;
        mts_wkey k;
        for (i = 0; i < nh; i++) {
            const uint8_t* p = hb + st[i] * K;
            uint64_t h = mts_key(&k, p, (en[i] - st[i]) * K);
            Py_ssize_t j = (Py_ssize_t)(h >> H->shift);
            int32_t e, nw = (int32_t)i + 1;
            int eq;
            if (k.L > 32) {
                e = mts_lookup_long(H, hb, p, &k, h);
                eq = e != 0;
                if (!eq) {   /* its empty slot */
                    while (H->slots[j] != 0)
                        j = (j + 1) & H->mask;
                } else {
                    j = H->spos[e];
                }
            } else {
                for (;;) {
                    const mts_wkey* q;
                    e = H->slots[j];
                    q = &H->keys[e];
                    eq = mts_key_eq(q, &k);
                    if (eq | (e == 0))
                        break;
                    j = (j + 1) & H->mask;
                }
            }
            k.start = p - hb;
            H->keys[nw] = k;
            H->spos[nw] = j;
            H->peq[nw] = 0;
            e = eq ? e : nw;
            H->slots[j] = e;
            if (fused)
                H->peq[e] |= (uint64_t)1 << i;
            else
                ids[i] = e - 1;
        }
    }
    /* 1-based ids of the nr words of a reference (spans of rb) in the set, 0 = absent */
    static MTS_NOINLINE void mts_lookup_all(const mts_set* H, const uint8_t* hb, const uint8_t* rb,
                               const Py_ssize_t* st, const Py_ssize_t* en, Py_ssize_t nr, int K,
                               int32_t* ids) {
        Py_ssize_t i;
        mts_wkey k;
        for (i = 0; i < nr; i++) {
            const uint8_t* p = rb + st[i] * K;
            uint64_t h = mts_key(&k, p, (en[i] - st[i]) * K);
            ids[i] = mts_lookup(H, hb, p, &k, h);
        }
    }
    /* Levenshtein distance between a hypothesis of m (1..64) words, whose positions are in
       H->peq, and the nr words of a reference (spans of rb), each word looked up and fed to
       the one-block bit-parallel step at once */
    static MTS_NOINLINE Py_ssize_t mts_ref_distance64(const mts_set* H, const uint8_t* hb, const uint8_t* rb,
                                         const Py_ssize_t* st, const Py_ssize_t* en,
                                         Py_ssize_t nr, int K, Py_ssize_t m) {
        Py_ssize_t i, score = m;
        uint64_t VP = ~(uint64_t)0, VN = 0, last = (uint64_t)1 << (m - 1);
        const uint64_t* peq = H->peq;
        mts_wkey k;
        for (i = 0; i < nr; i++) {
            const uint8_t* p = rb + st[i] * K;
            uint64_t h = mts_key(&k, p, (en[i] - st[i]) * K);
            uint64_t X = peq[mts_lookup(H, hb, p, &k, h)] | VN;
            uint64_t D0 = (((X & VP) + VP) ^ VP) | X;
            uint64_t HP = VN | ~(D0 | VP);
            uint64_t HN = VP & D0;
            score += (Py_ssize_t)((HP & last) != 0) - (Py_ssize_t)((HN & last) != 0);
            X = (HP << 1) | 1;
            VP = (HN << 1) | ~(D0 | X);
            VN = X & D0;
        }
        return score;
    }
    /* A reference of <= 64 words prepared once (WordSets): a record of 64-bit words,
       MTS_RS_HEAD header words [kind, words, mask, shift, mult], then peq (words + 1), keys
       (words + 1, entry 0 the sentinel; a key's start: its byte offset in the reference's own
       storage), then the slots (mask + 1 bytes: id + 1, 0 = empty; ids < 64 fit a byte).
       mult != 0: the slot of a word with hash h is (h * mult) >> shift and no two of the
       reference's words share one (a multiplier tried until none do), so a lookup is one
       probe without a branch; mult == 0: linear probing from h >> shift */
    #define MTS_RS_HEAD 5
    #define MTS_RS_KEYW ((Py_ssize_t)(sizeof(mts_wkey) / 8))
    #define MTS_RS_TRIES 32
    /* ask for the n bytes at p to be brought to the cache (the next segment's records and
       strings, touched once per call: their misses would otherwise stall the lookups) */
    static inline void mts_prefetch(const void* p, Py_ssize_t n) {
    #if defined(__GNUC__)
        const char* c = (const char*)p;
        Py_ssize_t k;
        for (k = 0; k < n; k += 64)
            __builtin_prefetch(c + k);
    #else
        (void)p; (void)n;
    #endif
    }
    static Py_ssize_t mts_rs_size(Py_ssize_t n, Py_ssize_t cap) {
        return MTS_RS_HEAD + (n + 1) + (n + 1) * MTS_RS_KEYW + (cap + 7) / 8;
    }
    /* fill the record at rec for the n (<= 64) words (spans st, en) of the buffer b (width K) */
    static void mts_rs_build(uint64_t* rec, const uint8_t* b, const Py_ssize_t* st,
                             const Py_ssize_t* en, Py_ssize_t n, int K, Py_ssize_t cap,
                             int shift) {
        uint64_t* peq = rec + MTS_RS_HEAD;
        mts_wkey* keys = (mts_wkey*)(peq + n + 1);
        uint8_t* slots = (uint8_t*)(peq + (n + 1) + (n + 1) * MTS_RS_KEYW);
        uint64_t hs[64], mult = 0x9E3779B97F4A7C15ULL;
        uint8_t ids[64];
        Py_ssize_t i, nd = 0, t;
        rec[0] = (uint64_t)K;
        rec[1] = (uint64_t)n;
        rec[2] = (uint64_t)(cap - 1);
        rec[3] = (uint64_t)shift;
        rec[4] = 0;
        memset(slots, 0, cap);
        memset(&keys[0], 0, sizeof(mts_wkey));
        keys[0].L = -1;
        peq[0] = 0;
        for (i = 0; i < n; i++) {
            const uint8_t* p = b + st[i] * K;
            mts_wkey k;
            uint64_t h = mts_key(&k, p, (en[i] - st[i]) * K);
            Py_ssize_t j = (Py_ssize_t)(h >> shift);
            for (;;) {
                int e = slots[j];
                if (e == 0) {
                    k.start = p - b;
                    keys[i + 1] = k;
                    peq[i + 1] = (uint64_t)1 << i;
                    slots[j] = (uint8_t)(i + 1);
                    hs[nd] = h;
                    ids[nd++] = (uint8_t)(i + 1);
                    break;
                }
                if (mts_key_eq(&keys[e], &k) && (k.L <= 32 ||
                        memcmp(b + keys[e].start + 32, p + 32, k.L - 32) == 0)) {
                    peq[e] |= (uint64_t)1 << i;
                    break;
                }
                j = (j + 1) & (cap - 1);
            }
        }
        /* a multiplier under which the distinct words have distinct slots (else the
           linear-probing table built above stays) */
        for (t = 0; t < MTS_RS_TRIES; t++, mult += 0x9E3779B97F4A7C16ULL) {
            uint8_t trial[1024];
            memset(trial, 0, cap);
            for (i = 0; i < nd; i++) {
                Py_ssize_t j = (Py_ssize_t)((hs[i] * mult) >> shift);
                if (trial[j])
                    break;
                trial[j] = ids[i];
            }
            if (i == nd) {
                memcpy(slots, trial, cap);
                rec[4] = mult;
                return;
            }
        }
    }
    /* Levenshtein distance between the prepared reference rec (m >= 1 words, its storage rd)
       and the n words (spans st, en) of the buffer hb in the reference's width K: each word
       looked up in the reference's set and fed to the one-block bit-parallel step at once */
    static MTS_NOINLINE Py_ssize_t mts_rs_distance(const uint64_t* rec, const uint8_t* rd,
                                                   const uint8_t* hb, const Py_ssize_t* st,
                                                   const Py_ssize_t* en, Py_ssize_t n) {
        Py_ssize_t m = (Py_ssize_t)rec[1], mask = (Py_ssize_t)rec[2], i, score = m;
        int shift = (int)rec[3], K = (int)rec[0];
        uint64_t mult = rec[4];
        const uint64_t* peq = rec + MTS_RS_HEAD;
        const mts_wkey* keys = (const mts_wkey*)(peq + m + 1);
        const uint8_t* slots = (const uint8_t*)(peq + (m + 1) + (m + 1) * MTS_RS_KEYW);
        uint64_t VP = ~(uint64_t)0, VN = 0, last = (uint64_t)1 << (m - 1);
        mts_wkey k;
        for (i = 0; i < n; i++) {
            const uint8_t* p = hb + st[i] * K;
            uint64_t h = mts_key(&k, p, (en[i] - st[i]) * K), PM, X, D0, HP, HN;
            Py_ssize_t j;
            int e, eq;
            if (k.L > 32) {
                j = (Py_ssize_t)(mult ? (h * mult) >> shift : h >> shift);
                for (;;) {
                    e = slots[j];
                    eq = e != 0 && mts_key_eq(&keys[e], &k) &&
                         memcmp(rd + keys[e].start + 32, p + 32, k.L - 32) == 0;
                    if (eq | (e == 0) | (mult != 0))
                        break;
                    j = (j + 1) & mask;
                }
            } else if (mult) {   /* one probe: the word's only possible slot */
                e = slots[(h * mult) >> shift];
                eq = mts_key_eq(&keys[e], &k);
            } else {
                j = (Py_ssize_t)(h >> shift);
                for (;;) {   /* found and absent both end the probe: no data-dependent branch */
                    e = slots[j];
                    eq = mts_key_eq(&keys[e], &k);
                    if (eq | (e == 0))
                        break;
                    j = (j + 1) & mask;
                }
            }
            PM = peq[e] & -(uint64_t)eq;
            X = PM | VN;
            D0 = (((X & VP) + VP) ^ VP) | X;
            HP = VN | ~(D0 | VP);
            HN = VP & D0;
            score += (Py_ssize_t)((HP & last) != 0) - (Py_ssize_t)((HN & last) != 0);
            X = (HP << 1) | 1;
            VP = (HN << 1) | ~(D0 | X);
            VN = X & D0;
        }
        return score;
    }
    """
    ctypedef struct mts_wkey:
        int64_t L
        int64_t start
    void mts_kmask_init()
    uint64_t mts_key(mts_wkey* k, const uint8_t* p, Py_ssize_t L) nogil
    int mts_key_eq(const mts_wkey* q, const mts_wkey* k) nogil
    Py_ssize_t mts_spans(const uint64_t* W, Py_ssize_t nw, Py_ssize_t* st, Py_ssize_t* en) nogil
    ctypedef struct mts_set:
        int32_t* slots
        Py_ssize_t mask
        int shift
        mts_wkey* keys
        Py_ssize_t* spos
        uint64_t* peq
    void mts_insert_all(mts_set* H, const uint8_t* hb, const Py_ssize_t* st, const Py_ssize_t* en,
                        Py_ssize_t nh, int K, int32_t* ids, int fused) nogil
    void mts_lookup_all(const mts_set* H, const uint8_t* hb, const uint8_t* rb,
                        const Py_ssize_t* st, const Py_ssize_t* en, Py_ssize_t nr, int K,
                        int32_t* ids) nogil
    Py_ssize_t mts_rs_size(Py_ssize_t n, Py_ssize_t cap) nogil
    void mts_prefetch(const void* p, Py_ssize_t n) nogil
    void mts_rs_build(uint64_t* rec, const uint8_t* b, const Py_ssize_t* st, const Py_ssize_t* en,
                      Py_ssize_t n, int K, Py_ssize_t cap, int shift) nogil
    Py_ssize_t mts_rs_distance(const uint64_t* rec, const uint8_t* rd, const uint8_t* hb,
                               const Py_ssize_t* st, const Py_ssize_t* en, Py_ssize_t n) nogil
    Py_ssize_t mts_ref_distance64(const mts_set* H, const uint8_t* hb, const uint8_t* rb,
                                  const Py_ssize_t* st, const Py_ssize_t* en, Py_ssize_t nr, int K,
                                  Py_ssize_t m) nogil

mts_kmask_init()

#: zero bytes after a string's code points in its buffer (a word's key reads 32 bytes)
cdef enum:
    PAD = 32

cdef struct TextBits:
    # one string of a segment: its code points in the segment's width ``K`` bytes each
    # (``b``, PAD zero bytes after them), its jiwer word characters as bits (``W``) and its
    # words as spans (``st``, ``en``: start and end code point offsets)
    uint8_t* b
    Py_ssize_t bcap       # bytes allocated
    uint64_t* S           # whitespace bits (nw + 1 words, the last zero)
    uint64_t* W           # first the U+0020 bits, then the word-character bits (nw + 1 words)
    Py_ssize_t mcap       # words allocated in S and W
    Py_ssize_t nw         # words in use: ceil(n / 64)
    Py_ssize_t* st        # word starts
    Py_ssize_t* en        # word ends (exclusive)
    Py_ssize_t scap       # entries allocated in st and en


cdef void textbits_free(TextBits* t) noexcept nogil:
    free(t.b); free(t.S); free(t.W); free(t.st); free(t.en)


cdef int textbits_load(TextBits* t, int kind, const void* data, Py_ssize_t n, int K) noexcept nogil:
    """Copy ``n`` code points of PEP 393 storage (``kind`` <= ``K``) into ``t.b`` widened to
    ``K`` bytes each, set ``t.W`` to jiwer's word characters (after ``strip()``, every
    character but a U+0020 and the characters of a whitespace run of two or more; so a lone tab
    inside a word is a word character) and ``t.st`` / ``t.en`` to the words' spans. Returns the
    number of words, or -1 when out of memory."""
    cdef Py_ssize_t nw = (n + 63) >> 6, k, w, lo, hi
    cdef uint64_t s, prev, nxt, sep, m, z
    cdef uint8_t* q
    if n * K + PAD > t.bcap:
        free(t.b)
        t.bcap = 2 * n * K + PAD
        t.b = <uint8_t*> malloc(t.bcap)
        if t.b == NULL:
            t.bcap = 0
            return -1
    if nw + 1 > t.mcap:
        free(t.S); free(t.W)
        t.mcap = 2 * (nw + 1)
        t.S = <uint64_t*> malloc(t.mcap * sizeof(uint64_t))
        t.W = <uint64_t*> malloc(t.mcap * sizeof(uint64_t))
        if t.S == NULL or t.W == NULL:
            free(t.S); free(t.W)
            t.S = NULL; t.W = NULL; t.mcap = 0
            return -1
    if n // 2 + 1 > t.scap:   # words are at most every other code point
        free(t.st); free(t.en)
        t.scap = n + 2
        t.st = <Py_ssize_t*> malloc(t.scap * sizeof(Py_ssize_t))
        t.en = <Py_ssize_t*> malloc(t.scap * sizeof(Py_ssize_t))
        if t.st == NULL or t.en == NULL:
            free(t.st); free(t.en)
            t.st = NULL; t.en = NULL; t.scap = 0
            return -1
    t.nw = nw
    q = t.b
    if kind == K:
        memcpy(q, data, n * K)
    elif K == 2:
        for k in range(n):
            (<uint16_t*> q)[k] = (<const uint8_t*> data)[k]
    elif kind == 1:
        for k in range(n):
            (<uint32_t*> q)[k] = (<const uint8_t*> data)[k]
    else:
        for k in range(n):
            (<uint32_t*> q)[k] = (<const uint16_t*> data)[k]
    memset(q + n * K, 0, PAD)
    mts_classify(q, n, K, SPACE8, HIGH_SPACE_OK, t.S, t.W)
    t.S[nw] = 0
    t.W[nw] = 0
    # strip(): lo = the first non-whitespace character, hi = one past the last
    lo = n
    for w in range(nw):
        z = ~t.S[w]
        if z:
            lo = (w << 6) + mts_ctz64(z)
            break
    if lo >= n:
        for w in range(nw + 1):
            t.W[w] = 0
        return 0
    hi = lo + 1
    w = nw - 1
    while w >= 0:
        z = ~t.S[w]
        if w == nw - 1 and (n & 63):
            z &= ((<uint64_t> 1) << (n & 63)) - 1
        if z:
            hi = (w << 6) + 64 - mts_clz64(z)
            break
        w -= 1
    prev = 0
    for w in range(nw):
        s = t.S[w]
        nxt = (s >> 1) | (t.S[w + 1] << 63)
        sep = t.W[w] | (s & ((s << 1) | prev | nxt))
        prev = s >> 63
        m = ~sep
        if (w << 6) < lo:
            m &= (~(<uint64_t> 0)) << (lo - (w << 6)) if lo - (w << 6) < 64 else 0
        if (w << 6) + 64 > hi:
            m &= ((<uint64_t> 1) << (hi - (w << 6))) - 1 if hi > (w << 6) else 0
        t.W[w] = m
    return mts_spans(t.W, nw, t.st, t.en)


cdef struct WordSet:
    # the hypothesis' distinct words (``s``: open addressing on the hash's high bits; per-id
    # arrays 1-based, entry 0 a sentinel whose byte count (-1) matches no word; ids are the
    # positions of the words' first occurrences, entries of repeated words unused)
    mts_set s             # slots (alloc entries, the first mask + 1 in use: id + 1, 0 = empty),
                          # keys, spos (each entry's slot, to empty the table after the segment)
                          # and peq (a word's positions in a hypothesis of <= 64 words)
    Py_ssize_t alloc
    Py_ssize_t n          # entries written (the hypothesis' words)
    Py_ssize_t idcap


cdef void wordset_free(WordSet* H) noexcept nogil:
    free(H.s.slots); free(H.s.keys); free(H.s.spos); free(H.s.peq)


cdef int wordset_prepare(WordSet* H, Py_ssize_t nwords) noexcept nogil:
    """An empty set with room for ``nwords`` words at load <= 1/8 (a probe that meets another
    word is a mispredicted branch; the table still fits in L1 for sentences)."""
    cdef Py_ssize_t cap = 64, k
    cdef int shift = 58
    for k in range(1, H.n + 1):
        H.s.slots[H.s.spos[k]] = 0
    H.n = 0
    while cap < 8 * nwords:
        cap *= 2
        shift -= 1
    if cap > H.alloc:
        free(H.s.slots)
        H.s.slots = <int32_t*> calloc(cap, sizeof(int32_t))
        if H.s.slots == NULL:
            H.alloc = 0
            return -1
        H.alloc = cap
    H.s.mask = cap - 1   # slots beyond it stay zero
    H.s.shift = shift
    if nwords + 1 > H.idcap:
        free(H.s.keys); free(H.s.spos); free(H.s.peq)
        H.idcap = 2 * (nwords + 1)
        H.s.peq = <uint64_t*> malloc(H.idcap * sizeof(uint64_t))
        H.s.keys = <mts_wkey*> malloc(H.idcap * sizeof(mts_wkey))
        H.s.spos = <Py_ssize_t*> malloc(H.idcap * sizeof(Py_ssize_t))
        if H.s.keys == NULL or H.s.spos == NULL or H.s.peq == NULL:
            H.idcap = 0
            return -1
        H.s.peq[0] = 0
        memset(&H.s.keys[0], 0, sizeof(mts_wkey))
        H.s.keys[0].L = -1
    return 0


cdef struct PairWork:
    TextBits th           # the hypothesis
    TextBits tr           # the reference being compared
    WordSet H
    int32_t* hsym         # the hypothesis' word ids
    int32_t* rsym         # the reference's
    Py_ssize_t hcap       # entries allocated in hsym
    Py_ssize_t rcap
    Pattern P
    int32_t* count        # PER: hypothesis word counts, by id
    int32_t* used
    Py_ssize_t count_cap


cdef void pairwork_free(PairWork* w) noexcept nogil:
    textbits_free(&w.th); textbits_free(&w.tr); wordset_free(&w.H)
    free(w.hsym); free(w.rsym); pattern_free(&w.P); free(w.count); free(w.used)


cdef int ids_reserve(int32_t** p, Py_ssize_t* cap, Py_ssize_t n) noexcept nogil:
    if n <= cap[0]:
        return 0
    free(p[0])
    cap[0] = 2 * n
    p[0] = <int32_t*> malloc(cap[0] * sizeof(int32_t))
    if p[0] == NULL:
        cap[0] = 0
        return -1
    return 0


cdef int text_segment(PairWork* w, int measure, int multi_ref, const Texts* hy, Py_ssize_t i,
                      const Texts* rf, Py_ssize_t r0, Py_ssize_t r1, double* out) noexcept nogil:
    """``out[0:2]`` = ``[errors, length]`` of hypothesis ``i`` of ``hy`` against references
    ``r0:r1`` of ``rf``. 0, or -1 when out of memory."""
    cdef Py_ssize_t k, a, nh, nr, u, e
    cdef int32_t id_
    cdef bint fused
    cdef int K = hy.kinds[i]
    cdef Pick sel
    for a in range(r0, r1):
        if rf.kinds[a] > K:
            K = rf.kinds[a]
    nh = textbits_load(&w.th, hy.kinds[i], hy.datas[i], hy.lens[i], K)
    if nh < 0 or wordset_prepare(&w.H, nh) != 0 or ids_reserve(&w.hsym, &w.hcap, nh + 1) != 0:
        return -1
    # Levenshtein against a hypothesis of one machine word: its words' positions kept in the
    # set, each reference word looked up and fed to the distance at once
    fused = measure == 0 and 0 < nh <= 64
    mts_insert_all(&w.H.s, w.th.b, w.th.st, w.th.en, nh, K, w.hsym, fused)
    w.H.n = nh
    u = nh  # ids are below nh; nh itself: a reference word absent from the hypothesis
    if fused:
        pass
    elif measure == 0:
        # ids are numbered in first-occurrence order, so the pattern's rows are the ids
        if pattern_reserve(&w.P, u) != 0 or pattern_set(&w.P, w.hsym, nh) != 0:
            return -1
    else:
        if u + 1 > w.count_cap:
            free(w.count); free(w.used)
            w.count_cap = 2 * (u + 1)
            w.count = <int32_t*> calloc(w.count_cap, sizeof(int32_t))
            w.used = <int32_t*> calloc(w.count_cap, sizeof(int32_t))
            if w.count == NULL or w.used == NULL:
                w.count_cap = 0
                return -1
        for k in range(nh):
            w.count[w.hsym[k]] += 1
    pick_init(&sel)
    for a in range(r0, r1):
        if rf.kinds[a] == hy.kinds[i] and rf.lens[a] == hy.lens[i] and \
                memcmp(rf.datas[a], hy.datas[i], hy.lens[i] * hy.kinds[i]) == 0:
            pick(&sel, multi_ref, 0, nh)  # the hypothesis itself: no errors
            continue
        nr = textbits_load(&w.tr, rf.kinds[a], rf.datas[a], rf.lens[a], K)
        if nr < 0:
            return -1
        if fused:
            e = mts_ref_distance64(&w.H.s, w.th.b, w.tr.b, w.tr.st, w.tr.en, nr, K, nh)
            pick(&sel, multi_ref, e, nr)
            continue
        if ids_reserve(&w.rsym, &w.rcap, nr + 1) != 0:
            return -1
        mts_lookup_all(&w.H.s, w.th.b, w.tr.b, w.tr.st, w.tr.en, nr, K, w.rsym)
        for k in range(nr):
            id_ = w.rsym[k]
            w.rsym[k] = id_ - 1 if id_ else <int32_t> u  # u: absent
        if measure == 0:
            e = levenshtein_text(&w.P, w.rsym, nr)
        else:
            e = per_errors(w.count, w.used, w.hsym, nh, w.rsym, nr)
        pick(&sel, multi_ref, e, nr)
    if fused:
        pass
    elif measure == 0:
        pattern_clear(&w.P)
    else:
        for k in range(nh):
            w.count[w.hsym[k]] = 0
    out[0] = <double> sel.e
    out[1] = picked_length(&sel, multi_ref)
    return 0


cdef tuple checked_ranges(str name, Py_ssize_t N, Py_ssize_t R, const int64_t[::1] ref_lo,
                          const int64_t[::1] ref_hi, double[:, ::1] out, Py_ssize_t start,
                          Py_ssize_t stop):
    """The argument checks of the word-statistics kernels: ``(stop, rmin, rmax)`` with ``stop``
    resolved (-1: N) and ``refs[rmin:rmax]`` the references segments ``[start, stop)`` use
    (``0, 0`` when none); ValueError naming ``name`` for shapes or ranges out of bounds."""
    cdef Py_ssize_t i, rmin = R, rmax = 0
    if stop < 0:
        stop = N
    if ref_lo.shape[0] != N or ref_hi.shape[0] != N or out.shape[0] != N or out.shape[1] != 2:
        raise ValueError(f"{name}: ref_lo, ref_hi and out must have N rows (out: (N, 2))")
    if start < 0 or stop > N or start > stop:
        raise ValueError(f"{name}: bad range [{start}, {stop}) for {N} segments")
    for i in range(start, stop):
        if ref_lo[i] < 0 or ref_hi[i] > R or ref_lo[i] > ref_hi[i]:
            raise ValueError(f"{name}: reference range of segment {i} out of bounds")
        if ref_hi[i] > ref_lo[i]:
            if ref_lo[i] < rmin:
                rmin = ref_lo[i]
            if ref_hi[i] > rmax:
                rmax = ref_hi[i]
    if rmax < rmin:
        rmin = rmax = 0
    return stop, rmin, rmax


def word_stats_texts(list hyps, list refs, const int64_t[::1] ref_lo, const int64_t[::1] ref_hi,
                     double[:, ::1] out, int measure=0, int multi_ref=0, Py_ssize_t start=0,
                     Py_ssize_t stop=-1):
    """Fill ``out[start:stop]`` (float64 (N, 2)) with ``[errors, reference length]`` of
    hypothesis i (``hyps``: N str) against references ``refs[ref_lo[i]:ref_hi[i]]`` (``refs``:
    R str), both split into jiwer's default words. The same numbers as :func:`edit_stats_range`
    on :func:`jiwer_words` ids, without a corpus vocabulary (words get ids that agree within the
    segment only). ``measure`` and ``multi_ref`` as there; a hypothesis without references gets
    ``[0, 0]``; a reference equal to its hypothesis is not split again. Runs without the GIL
    after reading the strings' storage: threads may fill disjoint ranges of one ``out``."""
    cdef Py_ssize_t N = len(hyps), R = len(refs), i, rmin, rmax
    if measure not in (0, 1) or multi_ref not in (0, 1, 2):
        raise ValueError("word_stats_texts: measure must be 0 or 1 and multi_ref 0, 1 or 2")
    stop, rmin, rmax = checked_ranges("word_stats_texts", N, R, ref_lo, ref_hi, out, start, stop)
    if stop == start:
        return
    cdef Texts hy, rf
    texts_open(&hy, hyps[start:stop], start)
    try:
        texts_open(&rf, refs[rmin:rmax])
    except BaseException:
        texts_close(&hy)
        raise
    for i in range(stop - start):
        if hy.lens[i] > 0x7FFFFFFF:
            texts_close(&hy); texts_close(&rf)
            raise ValueError(f"word_stats_texts: segment {i + start} is over 2**31 - 1 code points")
    cdef PairWork w
    memset(&w, 0, sizeof(PairWork))
    cdef int err = pattern_init(&w.P, 64)
    with nogil:
        i = start
        while i < stop and err == 0:
            if ref_hi[i] == ref_lo[i]:
                out[i, 0] = 0.0
                out[i, 1] = 0.0
            else:
                err = text_segment(&w, measure, multi_ref, &hy, i - start, &rf, ref_lo[i] - rmin,
                                   ref_hi[i] - rmin, &out[i, 0])
            i += 1
        pairwork_free(&w)
    texts_close(&hy); texts_close(&rf)
    if err:
        raise MemoryError("word_stats_texts: out of memory")


cdef class WordSets:
    """R reference strings prepared once for :func:`word_stats_sets`: each one's jiwer words
    (as :func:`word_stats_texts` splits them) in a small hash set keyed by their bytes in the
    string's own PEP 393 width, with each word's positions as bits; a string of over 64 words
    is not prepared (its segments are scored the general way). Holds the strings."""
    cdef list _refs
    cdef uint64_t* _blob       # the records, one after another
    cdef int64_t* _off         # (R + 1,): string r's record is _blob[_off[r]:_off[r + 1]]
    cdef Py_ssize_t _n

    def __init__(self, list refs):
        cdef Py_ssize_t R = len(refs), r, n, cap, size, used = 0, bufcap = 0
        cdef int shift, err = 0
        cdef Texts T
        cdef TextBits tb
        cdef uint64_t* q
        texts_open(&T, refs)
        free(self._blob)   # (a second __init__ call)
        free(self._off)
        self._blob = NULL
        self._refs = list(refs)
        self._n = R
        self._off = <int64_t*> malloc((R + 1) * sizeof(int64_t))
        if self._off == NULL:
            texts_close(&T)
            raise MemoryError("WordSets: out of memory")
        memset(&tb, 0, sizeof(TextBits))
        with nogil:
            self._off[0] = 0
            for r in range(R):
                n = textbits_load(&tb, T.kinds[r], T.datas[r], T.lens[r], T.kinds[r])
                if n < 0:
                    err = 1
                    break
                if n > 64:
                    self._off[r + 1] = used
                    continue
                cap = 16
                shift = 60
                while cap < 8 * n:   # load <= 1/8 (<= 512 slots)
                    cap *= 2
                    shift -= 1
                size = mts_rs_size(n, cap)
                if used + size > bufcap:
                    bufcap = 2 * (used + size)
                    q = <uint64_t*> realloc(self._blob, bufcap * sizeof(uint64_t))
                    if q == NULL:
                        err = 1
                        break
                    self._blob = q
                mts_rs_build(self._blob + used, tb.b, tb.st, tb.en, n, T.kinds[r], cap, shift)
                used += size
                self._off[r + 1] = used
            textbits_free(&tb)
        texts_close(&T)
        if err:
            raise MemoryError("WordSets: out of memory")

    def __dealloc__(self):
        free(self._blob)
        free(self._off)

    def __len__(self):
        return self._n


def word_stats_sets(list hyps, WordSets sets, const int64_t[::1] ref_lo,
                    const int64_t[::1] ref_hi, double[:, ::1] out, int multi_ref=0,
                    Py_ssize_t start=0, Py_ssize_t stop=-1):
    """:func:`word_stats_texts` for Levenshtein (WER) against the strings of ``sets`` (R
    references prepared once, :class:`WordSets`): each hypothesis is split into words in the
    width of its segment's references and each word looked up in their sets, the distance
    advancing as it goes. A segment whose references are not all prepared (over 64 words),
    differ in width or are narrower than the hypothesis goes the way of
    :func:`word_stats_texts`. The same numbers; threads may fill disjoint ranges of ``out``."""
    if sets is None:
        raise TypeError("word_stats_sets: sets must be a WordSets, not None")
    cdef list refs = sets._refs
    cdef Py_ssize_t N = len(hyps), R = len(refs), i, a, rmin, rmax, nh, m, e
    if multi_ref not in (0, 1, 2):
        raise ValueError("word_stats_sets: multi_ref must be 0, 1 or 2")
    stop, rmin, rmax = checked_ranges("word_stats_sets", N, R, ref_lo, ref_hi, out, start, stop)
    if stop == start:
        return
    cdef Texts hy, rf
    texts_open(&hy, hyps[start:stop], start)
    try:
        texts_open(&rf, refs[rmin:rmax])
    except BaseException:
        texts_close(&hy)
        raise
    cdef PairWork w
    memset(&w, 0, sizeof(PairWork))
    cdef int err = pattern_init(&w.P, 64)
    cdef int Kr
    cdef bint ok
    cdef Pick sel
    cdef const uint64_t* bp = sets._blob
    cdef const int64_t* offsets = sets._off
    cdef const uint64_t* rec
    with nogil:
        i = start
        while i < stop and err == 0:
            if ref_hi[i] == ref_lo[i]:
                out[i, 0] = 0.0
                out[i, 1] = 0.0
                i += 1
                continue
            if i + 1 < stop:
                for a in range(ref_lo[i + 1], ref_hi[i + 1]):
                    mts_prefetch(bp + offsets[a], (offsets[a + 1] - offsets[a]) * 8)
                    mts_prefetch(rf.datas[a - rmin], 64)
                mts_prefetch(hy.datas[i + 1 - start], hy.lens[i + 1 - start] * hy.kinds[i + 1 - start])
            Kr = 0
            ok = True
            for a in range(ref_lo[i], ref_hi[i]):
                if offsets[a + 1] == offsets[a] or (Kr and <int> bp[offsets[a]] != Kr):
                    ok = False
                    break
                Kr = <int> bp[offsets[a]]
            if not ok or hy.kinds[i - start] > Kr:
                err = text_segment(&w, 0, multi_ref, &hy, i - start, &rf, ref_lo[i] - rmin,
                                   ref_hi[i] - rmin, &out[i, 0])
                i += 1
                continue
            nh = textbits_load(&w.th, hy.kinds[i - start], hy.datas[i - start],
                               hy.lens[i - start], Kr)
            if nh < 0:
                err = -1
                break
            pick_init(&sel)
            for a in range(ref_lo[i], ref_hi[i]):
                rec = bp + offsets[a]
                m = <Py_ssize_t> rec[1]
                if rf.kinds[a - rmin] == hy.kinds[i - start] and \
                        rf.lens[a - rmin] == hy.lens[i - start] and \
                        memcmp(rf.datas[a - rmin], hy.datas[i - start],
                               hy.lens[i - start] * hy.kinds[i - start]) == 0:
                    pick(&sel, multi_ref, 0, nh)  # the hypothesis itself: no errors
                elif m == 0 or nh == 0:
                    pick(&sel, multi_ref, nh + m, m)
                else:
                    e = mts_rs_distance(rec, <const uint8_t*> rf.datas[a - rmin], w.th.b,
                                        w.th.st, w.th.en, nh)
                    pick(&sel, multi_ref, e, m)
            out[i, 0] = <double> sel.e
            out[i, 1] = picked_length(&sel, multi_ref)
            i += 1
        pairwork_free(&w)
    texts_close(&hy); texts_close(&rf)
    if err:
        raise MemoryError("word_stats_sets: out of memory")
