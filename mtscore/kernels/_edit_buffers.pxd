# cython: language_level=3
"""The buffers the edit-distance kernels share (``_edit_csr``, ``_edit_distance``,
``_edit_words``): the PEP 393 storage of a list of strings (``Texts``), the bit-parallel
Levenshtein pattern (``Pattern``) and the choice among a segment's references (``Pick``, with
its inline fold). The functions that fill them live in the modules (declared in
``_edit_csr.pxd`` and ``_edit_distance.pxd``)."""
from libc.stdint cimport int32_t, uint64_t


cdef struct Texts:
    # the PEP 393 storage of N strings, read without the GIL (the list keeps them alive)
    int* kinds
    void** datas
    Py_ssize_t* lens
    Py_ssize_t total        # code points in all


cdef struct Pattern:
    # match vectors of one pattern (the hypothesis): symbol s has bit k of block w set in
    # peq[(slot[s] - 1) * blocks + w] when pattern[64 * w + k] == s
    int32_t* slot          # (nsym,) 0 = not in the pattern, else row + 1; reset after each use
    Py_ssize_t slot_cap    # entries of slot
    uint64_t* peq          # rows * blocks words
    Py_ssize_t peq_cap     # words allocated
    const int32_t* syms    # the pattern (to reset slot)
    Py_ssize_t m           # pattern length
    Py_ssize_t blocks
    Py_ssize_t rows
    uint64_t* vp           # per-block vertical deltas (blocks words each)
    uint64_t* vn
    Py_ssize_t vcap


# ---- one segment's references -> [errors, length] ------------------------------------------
cdef struct Pick:
    Py_ssize_t e          # errors of the chosen reference (-1: none yet)
    Py_ssize_t l          # its length
    double rate
    Py_ssize_t sum_l      # summed lengths (MULTI_AVERAGE)
    Py_ssize_t k          # references seen


cdef inline void pick_init(Pick* p) noexcept nogil:
    p.e = -1
    p.l = 0
    p.rate = 0.0
    p.sum_l = 0
    p.k = 0


cdef inline void pick(Pick* p, int multi_ref, Py_ssize_t e, Py_ssize_t ln) noexcept nogil:
    """Fold reference (``e`` errors, ``ln`` symbols) into the segment's choice."""
    cdef double rate
    p.sum_l += ln
    p.k += 1
    if multi_ref == 2:  # best: lowest rate (jiwer's: errors themselves for an empty reference)
        rate = (<double> e) / (<double> ln) if ln else <double> e
        if p.e < 0 or rate < p.rate:
            p.e = e
            p.l = ln
            p.rate = rate
    elif p.e < 0 or e < p.e or (e == p.e and ln > p.l):  # fewest errors, then the longest
        p.e = e
        p.l = ln


cdef inline double picked_length(Pick* p, int multi_ref) noexcept nogil:
    if multi_ref == 1:  # average: the mean length of all the segment's references
        return (<double> p.sum_l) / (<double> p.k)
    return <double> p.l
