# cython: language_level=3
"""C-level interface of ``_ter_shift`` for ``_ter_fused``: the TER of one token-id pair with
the caller's work buffers (``Work``, ``_ter_buffers.pxd``). Everything else stays private to
``_ter_shift.pyx``."""
from libc.stdint cimport int32_t, int64_t

from mtscore.kernels._ter_buffers cimport Work


cdef int64_t ter_pair(Work* w, const int32_t* h, int n, const int32_t* r, int m) noexcept nogil
