# cython: language_level=3
"""C-level interface of ``_ngram`` for other kernels (``_sentence``: one hypothesis and its
references tokenized, counted and scored in one call): the n-gram table and entry lists, the
n-gram walkers and the score formulas. Plain-Python twins: mtscore/kernels/reference/ngram.py."""
from libc.stdint cimport uint64_t, int64_t, int32_t


cdef inline int64_t word_flag() noexcept nogil:
    # chrF++ word ids carry this bit in their order-1 keys, so they never equal a code point
    return (<int64_t> 1) << 62


cdef struct Table:
    int64_t* keys
    int32_t* vals
    int32_t* used    # slot indices in use (for O(used) reset)
    Py_ssize_t nused
    Py_ssize_t cap   # power of two
    int shift        # 64 - log2(cap): Fibonacci hashing takes the top bits
    Py_ssize_t ucap


cdef inline Py_ssize_t slot_of(Table* t, int64_t key) noexcept nogil:
    # Fibonacci hashing: the top bits of key * 2^64/phi depend on every bit of the key (the
    # low bits of a plain product would depend only on the last symbol of an n-gram key)
    return <Py_ssize_t> ((<uint64_t> key * 0x9E3779B97F4A7C15ULL) >> t.shift)


cdef inline int32_t table_get(Table* t, int64_t key) noexcept nogil:
    cdef Py_ssize_t j = slot_of(t, key)
    while True:
        if t.keys[j] == key:
            return t.vals[j]
        if t.keys[j] == -1:
            return -1
        j = (j + 1) & (t.cap - 1)


cdef inline int32_t table_get_or_add(Table* t, int64_t key, int32_t newval) noexcept nogil:
    """Existing value, or inserts ``newval`` and returns -1 - newval... simplified: returns the
    value stored for key after the call; caller compares with newval to see an insertion."""
    cdef Py_ssize_t j = slot_of(t, key)
    while True:
        if t.keys[j] == key:
            return t.vals[j]
        if t.keys[j] == -1:
            t.keys[j] = key
            t.vals[j] = newval
            t.used[t.nused] = <int32_t> j
            t.nused += 1
            return newval
        j = (j + 1) & (t.cap - 1)


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


cdef int table_init(Table* t, Py_ssize_t cap) noexcept nogil
cdef void table_free(Table* t) noexcept nogil
cdef int table_reset(Table* t, Py_ssize_t need) noexcept nogil
cdef int entries_reserve(Entries* e, Py_ssize_t n) noexcept nogil
cdef int scratch_reserve(Scratch* s, Py_ssize_t n) noexcept nogil
cdef int add_ngrams(Table* t, Entries* E, Py_ssize_t base, const int32_t* sym, Py_ssize_t L,
                    int order, int64_t flag, int32_t* cnt) noexcept nogil
cdef void match_ngrams(Table* t, const int32_t* sym, Py_ssize_t L, int order, int64_t flag,
                       int32_t* remaining, int64_t* match) noexcept nogil
cdef double bleu_score_row(const int64_t* st, int max_order, int smooth, double smooth_value,
                           bint effective_order, bint neumaier, double* prec, double* logs,
                           double* bp_out) noexcept nogil
cdef double chrf_f(const int64_t* st, int order, double factor, bint eps_smoothing) noexcept nogil
