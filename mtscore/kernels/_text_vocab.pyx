# cython: language_level=3
"""Token interning for the text kernels: exact, dense int32 ids 0, 1, 2, ... for code-point
sequences, in first-seen order (hash + full code-point comparison, no unchecked hashing), and
the per-vocabulary word cache of the tokenizers (``_text``).

The table is open addressing with linear probing, its slots 32 bytes (see ``Slot`` in
``_text_vocab.pxd``). The probe is inline in ``_text_vocab.pxd`` and the id of a token (inserting
it on a miss) is ``_text_vocab_intern.pxi``, included here and in ``_text``, so the tokenizers'
per-token path is compiled into them. Here: growing, reserving, clearing, and the Python class
:class:`Vocab`. The plain-Python twin is ``mtscore/kernels/reference/text_vocab.py``.
"""
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memcpy, memset
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t

from mtscore.kernels._ucs4 cimport (
    UBuf, ubuf_init, ubuf_free, ubuf_reserve, hash_cps, TokKey, PACKED, tok_key)

include "_text_vocab_intern.pxi"


cdef inline void slots_put(Slot* slots, Py_ssize_t nslots, uint64_t h,
                           const Slot* src) noexcept nogil:
    cdef Py_ssize_t j = <Py_ssize_t> (h & <uint64_t> (nslots - 1))
    while slots[j].id1 != 0:
        j = (j + 1) & (nslots - 1)
    slots[j] = src[0]

cdef int vocab_grow_slots(VocabC* v) noexcept nogil:
    cdef Py_ssize_t ns = v.nslots * 2, i, j
    cdef Slot* s = <Slot*> calloc(ns, sizeof(Slot))
    cdef Slot* old = v.slots
    if s == NULL:
        return -1
    for j in range(v.nslots):
        if old[j].id1 != 0:
            i = old[j].id1 - 1
            slots_put(s, ns, v.hashes[i], &old[j])
    free(old)
    v.slots = s
    v.nslots = ns
    return 0

cdef int vocab_grow_ids(VocabC* v, Py_ssize_t cap) noexcept nogil:
    """Room for ``cap`` ids in the per-id arrays."""
    cdef uint64_t* hh = <uint64_t*> realloc(v.hashes, cap * sizeof(uint64_t))
    if hh == NULL:
        return -1
    v.hashes = hh
    cdef uint32_t* ss = <uint32_t*> realloc(v.starts, cap * sizeof(uint32_t))
    if ss == NULL:
        return -1
    v.starts = ss
    cdef uint32_t* ll = <uint32_t*> realloc(v.lens, cap * sizeof(uint32_t))
    if ll == NULL:
        return -1
    v.lens = ll
    v.idcap = cap
    return 0


cdef int32_t vocab_intern(VocabC* v, const Py_UCS4* tok, Py_ssize_t n) noexcept nogil:
    """Id of the token ``tok[0:n]``, inserting it if new. Returns -1 on allocation failure."""
    return vocab_intern_h(v, tok, n, hash_cps(tok, n))


cdef int32_t vocab_intern_h(VocabC* v, const Py_UCS4* tok, Py_ssize_t n, uint64_t h) noexcept nogil:
    """vocab_intern with the token's hash_cps already computed."""
    return token_id(v, tok, n, h, False)


cdef int vocab_reserve(VocabC* v, Py_ssize_t ntok) noexcept nogil:
    """Size an EMPTY vocabulary for about ``ntok`` distinct tokens at once (no rehashing while
    it fills); a no-op once it holds tokens."""
    cdef Py_ssize_t ns = v.nslots
    cdef Slot* s
    if v.n != 0:
        return 0
    while ns < 2 * ntok:
        ns *= 2
    if ns > v.nslots:
        s = <Slot*> calloc(ns, sizeof(Slot))
        if s == NULL:
            return -1
        free(v.slots)
        v.slots = s
        v.nslots = ns
    if ntok > v.idcap:
        return vocab_grow_ids(v, ntok)
    return 0


cdef int vocab_init(VocabC* v) noexcept nogil:
    v.nslots = 1024
    v.slots = <Slot*> calloc(v.nslots, sizeof(Slot))
    v.idcap = 512
    v.hashes = <uint64_t*> malloc(v.idcap * sizeof(uint64_t))
    v.starts = <uint32_t*> malloc(v.idcap * sizeof(uint32_t))
    v.lens = <uint32_t*> malloc(v.idcap * sizeof(uint32_t))
    v.arena_cap = 4096
    v.arena = <Py_UCS4*> malloc(v.arena_cap * sizeof(Py_UCS4))
    v.n = 0
    v.arena_n = 0
    if v.slots == NULL or v.hashes == NULL or v.starts == NULL or v.lens == NULL \
            or v.arena == NULL:
        return -1
    return 0

cdef void vocab_free(VocabC* v) noexcept nogil:
    free(v.slots)
    free(v.hashes)
    free(v.starts)
    free(v.lens)
    free(v.arena)

cdef int32_t vocab_find(VocabC* v, const Py_UCS4* tok, Py_ssize_t n) noexcept nogil:
    """Id of ``tok[0:n]`` or -1 (no insertion)."""
    cdef int32_t s
    vocab_probe(v, tok, n, hash_cps(tok, n), &s)
    return s


cdef int wcache_init(WordCache* c) noexcept nogil:
    if vocab_init(&c.keys) != 0:
        return -1
    c.cap = 512
    c.start = <int64_t*> malloc(c.cap * sizeof(int64_t))
    c.count = <int32_t*> malloc(c.cap * sizeof(int32_t))
    c.ids.p = NULL
    c.ids.n = 0
    c.ids.cap = 0
    return 0 if (c.start != NULL and c.count != NULL) else -1

cdef void wcache_free(WordCache* c) noexcept nogil:
    vocab_free(&c.keys)
    free(c.start)
    free(c.count)
    free(c.ids.p)


cdef class Vocab:
    """Exact interning of tokens (code-point sequences) to dense int32 ids 0, 1, 2, ...

    Not thread-safe: use one Vocab per thread (ids only need to agree within a segment's
    hypothesis and references, so per-chunk vocabularies are fine).
    """
    def __cinit__(self):
        if vocab_init(&self.v) != 0 or wcache_init(&self.wc) != 0:
            raise MemoryError()

    def __dealloc__(self):
        vocab_free(&self.v)
        wcache_free(&self.wc)

    def __len__(self):
        return self.v.n

    def token(self, Py_ssize_t i):
        """The token string of id ``i``."""
        if i < 0 or i >= self.v.n:
            raise IndexError(i)
        cdef Py_ssize_t k, st = self.v.starts[i]
        return "".join([chr(self.v.arena[st + k]) for k in range(self.v.lens[i])])

    cdef int32_t _intern_or_find(self, str tok, bint insert) except -2:
        cdef Py_ssize_t n = len(tok), k
        cdef UBuf b
        ubuf_init(&b)
        if ubuf_reserve(&b, n + 1) != 0:
            raise MemoryError()
        for k in range(n):
            b.p[k] = ord(tok[k])
        cdef int32_t r = vocab_intern(&self.v, b.p, n) if insert else vocab_find(&self.v, b.p, n)
        ubuf_free(&b)
        if r < 0 and insert:
            raise MemoryError()
        return r

    def intern(self, str tok):
        """Id of one token string (inserting it if new)."""
        return self._intern_or_find(tok, True)

    def lookup(self, str tok):
        """Id of ``tok`` or -1 when it was never interned (no insertion)."""
        return self._intern_or_find(tok, False)


cdef void _clear_slots(VocabC* v) noexcept nogil:
    """Empty ``v`` in O(ids): each id's slot is found by its hash, then all are freed."""
    cdef Py_ssize_t i, j, mask = v.nslots - 1
    if v.n * 8 >= v.nslots:
        memset(v.slots, 0, v.nslots * sizeof(Slot))
    else:
        for i in range(v.n):
            j = <Py_ssize_t> (v.hashes[i] & <uint64_t> mask)
            while v.slots[j].id1 != i + 1:
                j = (j + 1) & mask
            v.hashes[i] = <uint64_t> j   # no longer needed as a hash: keep the slot index
        for i in range(v.n):
            v.slots[<Py_ssize_t> v.hashes[i]].id1 = 0
    v.n = 0
    v.arena_n = 0


cdef void vocab_clear(VocabC* v, WordCache* wc) noexcept nogil:
    """Empty a vocabulary and its word cache for reuse (ids restart at 0), in time linear in
    what they hold (a caller that saw them grow large frees them instead: see _sentence)."""
    _clear_slots(v)
    _clear_slots(&wc.keys)
    wc.ids.n = 0
