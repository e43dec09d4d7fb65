# cython: language_level=3
"""C-level interface of ``_text`` for other kernels (``_sentence``: one hypothesis and its
references tokenized, counted and scored in one call): the buffer, vocabulary and work structs,
the ``Vocab`` type, and the per-segment tokenizer entry. Everything else stays private to
``_text.pyx``."""
from libc.stdlib cimport realloc
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t, uint8_t
from mtscore.kernels._ucs4 cimport UBuf


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


cdef struct QBuf:
    uint64_t* p
    Py_ssize_t n
    Py_ssize_t cap


cdef struct Work:
    UBuf a
    UBuf b
    UBuf line
    UBuf key
    QBuf bounds             # masks and word records of the line being tokenized (none / 13a)
    IBuf out
    bint lookup             # tokens the vocabulary lacks get UNSEEN, the vocabulary unchanged
    const uint8_t* src1     # the line's own storage when it is a 1-byte (Latin-1) string, else
                            # NULL: the none / 13a scan and the word keys read it unwidened


cdef class Vocab:
    cdef VocabC v
    cdef WordCache wc
    cdef int32_t _intern_or_find(self, str tok, bint insert) except -2


cdef int tokenize_one(int mode, VocabC* v, WordCache* wc, Work* w, int kind, const void* data,
                      Py_ssize_t n, bint rstrip, IBuf* out) noexcept nogil
cdef int32_t vocab_intern(VocabC* v, const Py_UCS4* tok, Py_ssize_t n) noexcept nogil
cdef void vocab_clear(VocabC* v, WordCache* wc) noexcept nogil
cdef bint intl_ready() noexcept nogil
