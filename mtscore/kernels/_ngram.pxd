# cython: language_level=3
"""C-level interface of ``_ngram`` for other kernels (``_sentence``: one hypothesis and its
references tokenized, counted and scored in one call): the entry lists and the n-gram walkers
that ``_ngram.pyx`` exports. The n-gram table (``Table``), ``py_sum`` and the score formulas
(``chrf_f``, ``bleu_row``) are the inline ones of ``_ngram_common.pxd`` (also used by
``_pairwise``). Plain-Python twins: mtscore/kernels/reference/ngram.py."""
from libc.stdint cimport int64_t, int32_t

from mtscore.kernels._ngram_common cimport Table


cdef inline int64_t word_flag() noexcept nogil:
    # chrF++ word ids carry this bit in their order-1 keys, so they never equal a code point
    return (<int64_t> 1) << 62


cdef struct Entries:
    int64_t* keys
    int32_t* counts
    Py_ssize_t n
    Py_ssize_t cap


cdef struct Scratch:
    int32_t* a
    Py_ssize_t cap


cdef inline Py_ssize_t npos(Py_ssize_t length, int n) noexcept nogil:
    return length - n + 1 if length >= n else 0


cdef inline void closer_ref(Py_ssize_t L, Py_ssize_t rlen, Py_ssize_t* best_diff,
                            Py_ssize_t* best_len) noexcept nogil:
    """sacrebleu's _get_closest_ref_len, one reference (length ``rlen``) at a time for a
    hypothesis of length ``L``: the closest length so far, ties -> the shorter (start with
    best_diff = best_len = -1)."""
    cdef Py_ssize_t diff = L - rlen if L >= rlen else rlen - L
    if best_diff[0] == -1 or diff < best_diff[0]:
        best_diff[0] = diff
        best_len[0] = rlen
    elif diff == best_diff[0] and rlen < best_len[0]:
        best_len[0] = rlen


cdef int entries_reserve(Entries* e, Py_ssize_t n) noexcept nogil
cdef int scratch_reserve(Scratch* s, Py_ssize_t n) noexcept nogil
cdef int scratch_grow(Scratch* s, Py_ssize_t n) noexcept nogil
cdef int table_fit(Table* t, Py_ssize_t n) noexcept nogil
cdef int add_ngrams(Table* t, Entries* E, Py_ssize_t base, const int32_t* sym, Py_ssize_t L,
                    int order, int64_t flag, Scratch* cnt) noexcept nogil
cdef void match_ngrams(Table* t, const int32_t* sym, Py_ssize_t L, int order, int64_t flag,
                       int32_t* remaining, int64_t* match) noexcept nogil
