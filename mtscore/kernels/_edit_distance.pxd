# cython: language_level=3
"""C-level interface of ``_edit_distance`` for ``_edit_words``: the bit-parallel Levenshtein
pattern (``Pattern``, ``_edit_buffers.pxd``) and the position-independent errors of PER.
Everything else stays private to ``_edit_distance.pyx``."""
from libc.stdint cimport int32_t

from mtscore.kernels._edit_buffers cimport Pattern


cdef int pattern_init(Pattern* P, Py_ssize_t nsym) noexcept nogil
cdef int pattern_reserve(Pattern* P, Py_ssize_t nsym) noexcept nogil
cdef void pattern_free(Pattern* P) noexcept nogil
cdef int pattern_set(Pattern* P, const int32_t* p, Py_ssize_t m) noexcept nogil
cdef void pattern_clear(Pattern* P) noexcept nogil
cdef Py_ssize_t levenshtein_text(Pattern* P, const int32_t* t, Py_ssize_t n) noexcept nogil
cdef Py_ssize_t per_errors(int32_t* count, int32_t* used, const int32_t* h, Py_ssize_t nh,
                           const int32_t* r, Py_ssize_t nr) noexcept nogil
