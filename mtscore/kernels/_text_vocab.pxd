# cython: language_level=3
"""C-level interface of ``_text_vocab`` (exact token interning) for the kernels that tokenize or
intern tokens (``_text``, ``_sentence``, ``_edit_csr``): the int32 id buffer, the vocabulary's
open-addressing table and word cache, the ``Vocab`` type, and the probe as an inline function,
compiled into each caller rather than called across modules. The id of a token (insert on a miss)
is ``_text_vocab_intern.pxi``, included by ``_text`` and ``_text_vocab``. The rest (growing,
reserving, clearing; ``Vocab``'s methods) stays in ``_text_vocab.pyx``."""
from libc.stdlib cimport realloc
from libc.string cimport memcmp
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t
from mtscore.kernels._ucs4 cimport TokKey, PACKED, tok_key


cdef struct IBuf:
    int32_t* p
    Py_ssize_t n
    Py_ssize_t cap


cdef inline int ibuf_push(IBuf* b, int32_t v) noexcept nogil:
    cdef int32_t* q
    cdef Py_ssize_t cap
    if b.n == b.cap:
        cap = b.cap * 2 if b.cap else 1024
        q = <int32_t*> realloc(b.p, cap * sizeof(int32_t))
        if q == NULL:
            return -1
        b.p = q
        b.cap = cap
    b.p[b.n] = v
    b.n += 1
    return 0


cdef struct Slot:
    # one open-addressing slot, 32 bytes (two to a cache line): a token of at most 16 Latin-1
    # code points (most words) is compared with its bytes kept in the slot (its key, see
    # _ucs4.tok_key: no second memory access, no memcmp); a probe for any other token checks the
    # hash check and length in the slot, then compares code points in the arena
    uint32_t hcheck         # upper 32 bits of the token's hash
    int32_t id1             # id + 1, 0 = empty
    uint32_t len            # the key's lenf: length | PACKED
    uint32_t start          # offset into arena
    uint64_t pk0            # a PACKED token's code points as bytes 0-7, 8-15 (zero-filled)
    uint64_t pk1


cdef struct VocabC:
    Slot* slots
    Py_ssize_t nslots       # power of two
    uint64_t* hashes        # per id (rehashing)
    uint32_t* starts        # per id: arena offset (Vocab.token; not read while interning)
    uint32_t* lens          # per id: length
    Py_ssize_t n            # number of ids
    Py_ssize_t idcap
    Py_UCS4* arena          # token code points, at most 2**32 - 1 in all
    Py_ssize_t arena_n
    Py_ssize_t arena_cap


cdef struct WordCache:
    VocabC keys
    int64_t* start
    int32_t* count
    Py_ssize_t cap
    IBuf ids


cdef enum:
    UNSEEN = 0x7FFFFFFF     # encode(lookup=True): the id of every token the vocabulary lacks


cdef class Vocab:
    cdef VocabC v
    cdef WordCache wc
    cdef int32_t _intern_or_find(self, str tok, bint insert) except -2


cdef int vocab_grow_slots(VocabC* v) noexcept nogil
cdef int vocab_grow_ids(VocabC* v, Py_ssize_t cap) noexcept nogil
cdef int32_t vocab_intern(VocabC* v, const Py_UCS4* tok, Py_ssize_t n) noexcept nogil
cdef int32_t vocab_intern_h(VocabC* v, const Py_UCS4* tok, Py_ssize_t n, uint64_t h) noexcept nogil
cdef int vocab_reserve(VocabC* v, Py_ssize_t ntok) noexcept nogil
cdef void vocab_clear(VocabC* v, WordCache* wc) noexcept nogil


# ---- the probe, inline in every caller (the per-token path: _text_vocab_intern.pxi) --------
cdef inline Py_ssize_t vocab_probe_k(const VocabC* v, const Py_UCS4* tok, const TokKey* key,
                                     uint64_t h, int32_t* found) noexcept nogil:
    """Slot index holding ``tok`` (key ``key``, hash ``h``; found[0] = its id) or the empty slot
    where it would go (found[0] = -1). A packed token is compared with the bytes in the slot; any
    other with the arena's code points (memcmp, not a loop over code points: the loop's exit, at
    the token's length, mispredicts about once per word)."""
    cdef Py_ssize_t mask = v.nslots - 1
    cdef Py_ssize_t j = <Py_ssize_t> (h & <uint64_t> mask)
    cdef uint32_t hc = <uint32_t> (h >> 32)
    cdef uint32_t n = key.lenf & ~PACKED
    cdef const Slot* sl
    while True:
        sl = &v.slots[j]
        if sl.id1 == 0:
            found[0] = -1
            return j
        if sl.len == key.lenf:
            if key.lenf & PACKED:
                if sl.pk0 == key.pk0 and sl.pk1 == key.pk1:
                    found[0] = sl.id1 - 1
                    return j
            elif sl.hcheck == hc and memcmp(v.arena + sl.start, tok, n * sizeof(Py_UCS4)) == 0:
                found[0] = sl.id1 - 1
                return j
        j = (j + 1) & mask


cdef inline Py_ssize_t vocab_probe(const VocabC* v, const Py_UCS4* tok, Py_ssize_t n,
                                   uint64_t h, int32_t* found) noexcept nogil:
    """vocab_probe_k of tok[0:n] (any buffer)."""
    cdef TokKey key
    tok_key(tok, n, &key)
    return vocab_probe_k(v, tok, &key, h, found)
