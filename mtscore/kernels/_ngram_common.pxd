# cython: language_level=3
"""Pieces shared by the n-gram kernels (``_ngram``: statistics against prepared references;
``_sentence``: one hypothesis and its references in one call; ``_pairwise``: all-pairs matrices
of a group of samples): one copy of each, all ``cdef inline`` and ``nogil``, compiled into each
kernel that cimports them. (``_ngram.pxd`` declares what ``_ngram.pyx`` itself exports: the
entry lists and the n-gram walkers.)

* ``Table``: a small open-addressing table int64 key -> int32 value (Fibonacci hashing, reset
  in O(used));
* ``py_sum``: CPython's ``sum()`` of floats (plain or Neumaier, as the running CPython does);
* ``chrf_f`` and ``bleu_row``: sacrebleu's chrF and sentence-BLEU formulas on one statistics
  row, in sacrebleu's float operation order (bit-identical results); ``bleu_row`` also hands
  back the precisions and the brevity penalty (``BLEUScore`` of ``sentence_score``).
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.math cimport exp, log, fabs

# ---- small open-addressing table: int64 key -> int32 entry index ------------------------
cdef struct Table:
    int64_t* keys
    int32_t* vals
    int32_t* used    # slot indices in use (for O(used) reset)
    Py_ssize_t nused
    Py_ssize_t cap   # power of two
    int shift        # 64 - log2(cap): Fibonacci hashing takes the top bits
    Py_ssize_t ucap

cdef inline int table_init(Table* t, Py_ssize_t cap) noexcept nogil:
    cdef Py_ssize_t c = 1
    t.cap = cap
    t.shift = 64
    while c < cap:
        c *= 2
        t.shift -= 1
    t.keys = <int64_t*> malloc(cap * sizeof(int64_t))
    t.vals = <int32_t*> malloc(cap * sizeof(int32_t))
    t.ucap = cap
    t.used = <int32_t*> malloc(cap * sizeof(int32_t))
    t.nused = 0
    if t.keys == NULL or t.vals == NULL or t.used == NULL:
        return -1
    memset(t.keys, 0xff, cap * sizeof(int64_t))   # -1 = empty
    return 0

cdef inline void table_free(Table* t) noexcept nogil:
    free(t.keys)
    free(t.vals)
    free(t.used)

cdef inline int table_reset(Table* t, Py_ssize_t need) noexcept nogil:
    """Empty the table and make sure it can hold ``need`` keys at load <= 1/2."""
    cdef Py_ssize_t k, cap
    if 2 * need + 16 > t.cap:
        cap = t.cap
        while cap < 2 * need + 16:
            cap *= 2
        table_free(t)
        return table_init(t, cap)
    if t.nused * 8 < t.cap:
        for k in range(t.nused):
            t.keys[t.used[k]] = -1
    else:
        memset(t.keys, 0xff, t.cap * sizeof(int64_t))
    t.nused = 0
    return 0

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

cdef inline double py_sum(const double* x, int n, bint neumaier) noexcept nogil:
    """CPython's sum() of a list of floats: plain left-to-right (<= 3.11) or Neumaier-compensated
    (>= 3.12)."""
    cdef double f = 0.0, c = 0.0, t
    cdef int k
    if not neumaier:
        for k in range(n):
            f += x[k]
        return f
    for k in range(n):
        t = f + x[k]
        if fabs(f) >= fabs(x[k]):
            c += (f - t) + x[k]
        else:
            c += (x[k] - t) + f
        f = t
    if c != 0.0 and c - c == 0.0:
        f += c
    return f


cdef inline double chrf_f(const int64_t* st, int order, double factor, bint eps_smoothing) noexcept nogil:
    """sacrebleu CHRF._compute_f_score, same operation order."""
    cdef double eps = 1e-16, score = 0.0, avg_prec = 0.0, avg_rec = 0.0, prec, rec, denom
    cdef int effective_order = 0, i
    cdef int64_t n_hyp, n_ref, n_match
    for i in range(order):
        n_hyp = st[3 * i]
        n_ref = st[3 * i + 1]
        n_match = st[3 * i + 2]
        prec = (<double> n_match) / (<double> n_hyp) if n_hyp > 0 else eps
        rec = (<double> n_match) / (<double> n_ref) if n_ref > 0 else eps
        denom = factor * prec + rec
        score += ((1.0 + factor) * prec * rec / denom) if denom > 0 else eps
        if n_hyp > 0 and n_ref > 0:
            avg_prec += prec
            avg_rec += rec
            effective_order += 1
    if eps_smoothing:
        return 100.0 * score / order
    if effective_order == 0:
        avg_prec = 0.0
        avg_rec = 0.0
    else:
        avg_prec /= effective_order
        avg_rec /= effective_order
    if avg_prec + avg_rec:
        score = (1.0 + factor) * avg_prec * avg_rec
        score /= ((factor * avg_prec) + avg_rec)
        return 100.0 * score
    return 0.0


cdef inline double bleu_row(const int64_t* st, int max_order, int smooth, double smooth_value,
                            bint effective_order, bint neumaier, double* prec, double* logs,
                            double* bp_out) noexcept nogil:
    """sacrebleu's BLEU.compute_bleu of one statistics row ``[sys_len, ref_len, correct_1..N,
    total_1..N]`` (N = max_order), same float operation order: the score; the precisions go to
    ``prec`` and the brevity penalty to ``bp_out`` (unless NULL); ``logs`` is scratch. ``prec``
    and ``logs`` hold at least max_order doubles. smooth: 0 none, 1 floor, 2 add-k, 3 exp
    (add-k's precisions are those of the smoothed counts, as in sacrebleu)."""
    cdef double bp, smooth_mteval, corr, tot, s
    cdef int n, eff
    cdef bint anyc = False
    cdef int64_t sys_len = st[0], ref_len = st[1]
    bp = 1.0
    if sys_len < ref_len:
        bp = exp(1.0 - (<double> ref_len) / (<double> sys_len)) if sys_len > 0 else 0.0
    if bp_out != NULL:
        bp_out[0] = bp
    for n in range(max_order):
        prec[n] = 0.0
        if st[2 + n] != 0:
            anyc = True
    if not anyc:
        return 0.0
    smooth_mteval = 1.0
    eff = max_order
    for n in range(1, max_order + 1):
        corr = <double> st[1 + n]
        tot = <double> st[1 + max_order + n]
        if smooth == 2 and n > 1:
            corr = corr + smooth_value
            tot = tot + smooth_value
        if tot == 0:
            break
        if effective_order:
            eff = n
        if corr == 0:
            if smooth == 3:
                smooth_mteval *= 2
                prec[n - 1] = 100.0 / (smooth_mteval * tot)
            elif smooth == 1:
                prec[n - 1] = 100.0 * smooth_value / tot
        else:
            prec[n - 1] = 100.0 * corr / tot
    # my_log(0) = -9999999999 makes the score exp(-huge) = 0.0 whatever the sum order
    for n in range(eff):
        if prec[n] == 0.0:
            return 0.0
        logs[n] = log(prec[n])
    s = py_sum(logs, eff, neumaier)
    return bp * exp(s / eff)
