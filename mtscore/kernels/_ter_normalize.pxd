# cython: language_level=3
"""C-level interface of ``_ter_normalize`` for ``_ter_fused``: the ``TercomVocab`` type, the
Tercom steps on a code-point buffer, and the pair-local tokeniser of ``ter_corpus_plain``.
Everything else stays private to ``_ter_normalize.pyx``."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from mtscore.kernels._ucs4 cimport UBuf
from mtscore.kernels._ter_buffers cimport TokMeta, PairVocab


cdef class TercomVocab:
    cdef uint8_t* chars     # byte arena
    cdef int64_t nchars, cap_chars
    cdef TokMeta* meta      # per token, one cache line for a lookup
    cdef int32_t ntok, cap_tok
    cdef int32_t* table
    cdef uint64_t mask

    # ``inline`` here, not only in the .pyx: Cython takes a method's C declaration from the
    # .pxd, and without it ``same`` is compiled out of line and called from ``intern_h`` on
    # every hash hit (+5% on a one-segment corpus_stats after the _ter split)
    cdef inline uint32_t cp(self, int32_t t, Py_ssize_t k) noexcept nogil
    cdef inline bint same(self, int32_t t, const Py_UCS4* s, Py_ssize_t n) noexcept nogil
    cdef int grow_table(self) noexcept nogil
    cdef void clear(self) noexcept nogil
    cdef int32_t intern(self, const Py_UCS4* s, Py_ssize_t n) noexcept nogil
    cdef int32_t intern_h(self, const Py_UCS4* s, Py_ssize_t n, uint64_t h) noexcept nogil


cdef int normalize_buf(UBuf* a, UBuf* b, bint normalized, bint no_punct,
                       bint asian_support) noexcept nogil
cdef void collapse_spaces(UBuf* a) noexcept nogil
cdef int pv_reserve(PairVocab* v, Py_ssize_t L) noexcept nogil
cdef Py_ssize_t pair_tokens_of(object s, PairVocab* v, Py_ssize_t L, bint lowercase,
                               bint no_punct, bint asian_support, int32_t* ids) except -2
