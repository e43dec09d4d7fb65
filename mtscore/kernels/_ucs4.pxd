# cython: language_level=3
"""Code-point string helpers shared by the text kernels (_text: 13a/intl; _ter: Tercom)."""


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
