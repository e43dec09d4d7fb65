# cython: language_level=3
"""C-level interface of ``_edit_csr`` for ``_edit_words``: the PEP 393 storage of a list of
strings (``Texts``, ``_edit_buffers.pxd``). Everything else stays private to
``_edit_csr.pyx``."""
from mtscore.kernels._edit_buffers cimport Texts


cdef int texts_open(Texts* t, list texts, Py_ssize_t first=*) except -1
cdef void texts_close(Texts* t) noexcept
