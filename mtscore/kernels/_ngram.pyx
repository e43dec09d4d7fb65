# cython: language_level=3
"""N-gram sufficient statistics for BLEU and chrF/chrF++ on CSR symbol arrays.

Symbols are int32 (token ids from a Vocab, or code points). N-grams are identified exactly by
*segment-local hierarchical interning*: within one segment's references, the n-gram starting at
position p of order n gets an entry whose key is

    order 1:  the symbol itself                    (word ids of chrF++ get bit 62 set)
    order n:  ((entry of the (n-1)-gram + 1) << 32) | symbol

so every key is an exact 64-bit integer (no unchecked hashing) and the table of a segment is a
flat list of (key, count) entries. Reference entries are built once per reference set
(``*_prepare_refs``) and reused for every system; a hypothesis walks its n-grams through a small
open-addressing table rebuilt from the entries (L1-resident), decrementing remaining counts, so
clipped matches ``sum(min(hyp_count, ref_count))`` come out in one pass.

Plain-Python twins: mtscore/kernels/reference/ngram.py.
"""
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memcpy, memset
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t, uint8_t
from libc.math cimport exp, log, fabs

import numpy as np
cimport numpy as cnp

from mtscore.kernels._ngram_common cimport (
    Table, table_init, table_free, table_reset, table_get, table_get_or_add, chrf_f, bleu_row)

cnp.import_array()

cdef int64_t WORD_FLAG = word_flag()

# ---- the n-gram table (Table), py_sum and the score formulas (chrf_f, bleu_row):
# _ngram_common.pxd, one inline copy shared with _sentence and _pairwise

# ---- growable entry list -----------------------------------------------------------------

cdef int entries_reserve(Entries* e, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t cap
    if n <= e.cap:
        return 0
    cap = e.cap * 2 if e.cap * 2 > n else n + 1024
    e.keys = <int64_t*> realloc(e.keys, cap * sizeof(int64_t))
    e.counts = <int32_t*> realloc(e.counts, cap * sizeof(int32_t))
    if e.keys == NULL or e.counts == NULL:
        return -1
    e.cap = cap
    return 0

cdef class _MallocBuffer:
    """Owns a malloc'd block that a numpy array views (its ``base``): freed with the array."""
    cdef void* ptr

    def __dealloc__(self):
        free(self.ptr)


cdef object _adopt(void* ptr, Py_ssize_t n, int typenum):
    """A 1-D numpy array of ``n`` items over malloc'd ``ptr``, which it now owns (no copy: the
    entry lists of a large reference set are hundreds of MB)."""
    cdef cnp.npy_intp dims[1]
    dims[0] = n
    cdef _MallocBuffer owner = _MallocBuffer.__new__(_MallocBuffer)
    owner.ptr = ptr
    cdef cnp.ndarray arr = cnp.PyArray_SimpleNewFromData(1, dims, typenum, ptr)
    cnp.set_array_base(arr, owner)
    return arr


cdef tuple entries_to_numpy(Entries* E):
    """The entry list as (keys int64, counts int32) arrays that take over its buffers (shrunk
    to size); ``E`` is emptied."""
    cdef void* k
    cdef void* c
    if E.n == 0:
        free(E.keys)
        free(E.counts)
        E.keys = NULL
        E.counts = NULL
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int32)
    k = realloc(E.keys, E.n * sizeof(int64_t))
    c = realloc(E.counts, E.n * sizeof(int32_t))
    if k == NULL or c == NULL:  # shrinking failed: keep the larger blocks
        k = E.keys if k == NULL else k
        c = E.counts if c == NULL else c
    E.keys = NULL
    E.counts = NULL
    keys = _adopt(k, E.n, cnp.NPY_INT64)
    counts = _adopt(c, E.n, cnp.NPY_INT32)
    return keys, counts



cdef int table_fit(Table* t, Py_ssize_t n) noexcept nogil:
    """Make room in ``t`` for ``n`` keys at load <= 1/2, keeping what it holds (rehashed into a
    table twice as large or more). A segment's table grows with the distinct n-grams its
    references have, not with their positions: K references of a segment that share most
    n-grams would otherwise get a table for all K * L * order positions, cache misses on every
    probe. 0, or -1 when out of memory (``t`` then keeps its contents)."""
    cdef Py_ssize_t cap = t.cap, k, j
    cdef Table u
    if 2 * n + 16 <= t.cap:
        return 0
    while cap < 2 * n + 16:
        cap *= 2
    if table_init(&u, cap) != 0:
        table_free(&u)
        return -1
    for k in range(t.nused):
        j = t.used[k]
        table_get_or_add(&u, t.keys[j], t.vals[j])
    table_free(t)
    t[0] = u
    return 0


cdef int scratch_reserve(Scratch* s, Py_ssize_t n) noexcept nogil:
    if n <= s.cap:
        return 0
    s.cap = n * 2 + 256
    free(s.a)
    s.a = <int32_t*> calloc(s.cap, sizeof(int32_t))
    return 0 if s.a != NULL else -1


# Walk the n-grams (orders 1..order) of sym[0:L] into table `t`: an n-gram seen the first time
# becomes local entry n0, n0 + 1, ... (its key goes to keys[local] unless keys is NULL; the
# caller makes room for L * order more); cnt[local] counts occurrences. Returns the new count.
cdef inline Py_ssize_t walk_ngrams(Table* t, Py_ssize_t n0, const int32_t* sym, Py_ssize_t L,
                                   int order, int64_t flag, int32_t* cnt,
                                   int64_t* keys) noexcept nogil:
    return walk_span(t, n0, sym, 0, L, L, order, flag, cnt, keys)


# walk_ngrams for the n-grams that start at positions p0..p1-1 of sym[0:L] (room for
# (p1 - p0) * order more entries)
cdef inline Py_ssize_t walk_span(Table* t, Py_ssize_t n0, const int32_t* sym, Py_ssize_t p0,
                                 Py_ssize_t p1, Py_ssize_t L, int order, int64_t flag,
                                 int32_t* cnt, int64_t* keys) noexcept nogil:
    cdef Py_ssize_t p, q, ne = n0
    cdef int n
    cdef int64_t key
    cdef int32_t e, prev
    for p in range(p0, p1):
        prev = -1
        for n in range(1, order + 1):
            q = p + n - 1
            if q >= L:
                break
            if n == 1:
                key = (<int64_t> sym[q]) | flag
            else:
                key = ((<int64_t> prev + 1) << 32) | (<int64_t> <uint32_t> sym[q])
            e = table_get_or_add(t, key, <int32_t> ne)
            if e == ne:
                if keys != NULL:
                    keys[ne] = key
                ne += 1
            cnt[e] += 1
            prev = e
    return ne


# Positions walked between the checks that the table, entry list and counts have room for
# them: room is made for the n-grams seen, not for all L * order a line could have (a line
# of millions of characters whose n-grams repeat asked for a table of gigabytes up front).
cdef enum:
    SPAN_POSITIONS = 8192


cdef int scratch_grow(Scratch* s, Py_ssize_t n) noexcept nogil:
    """Room for ``n`` items in ``s``, keeping its contents (new items zero). 0, or -1."""
    cdef Py_ssize_t cap
    cdef int32_t* a
    if n <= s.cap:
        return 0
    cap = (2 * s.cap if 2 * s.cap > n else n) + 256
    a = <int32_t*> realloc(s.a, cap * sizeof(int32_t))
    if a == NULL:
        return -1
    memset(a + s.cap, 0, (cap - s.cap) * sizeof(int32_t))
    s.a = a
    s.cap = cap
    return 0


# Add the n-grams of sym[0:L] to the segment table `t` whose entries start at global index `base`
# in `E` (entry index local = global - base); counts go to cnt.a[local]. The table, `E` and
# `cnt` grow as new n-grams come (SPAN_POSITIONS positions at a time).
cdef int add_ngrams(Table* t, Entries* E, Py_ssize_t base, const int32_t* sym, Py_ssize_t L,
                    int order, int64_t flag, Scratch* cnt) noexcept nogil:
    cdef Py_ssize_t n0, j, p0 = 0, p1
    while p0 < L:
        p1 = p0 + SPAN_POSITIONS if L - p0 > SPAN_POSITIONS else L
        n0 = E.n
        if table_fit(t, n0 - base + (p1 - p0) * order) != 0 \
                or entries_reserve(E, n0 + (p1 - p0) * order) != 0 \
                or scratch_grow(cnt, n0 - base + (p1 - p0) * order) != 0:
            return -1
        E.n = base + walk_span(t, n0 - base, sym, p0, p1, L, order, flag, cnt.a, E.keys + base)
        for j in range(n0, E.n):
            E.counts[j] = 0
        p0 = p1
    return 0

# The n-grams of one reference sym[0:L] that start at positions p0..p1-1 into the segment
# table `t` (as walk_span; new entries
# get keys[local] and mx[local] = 0), keeping in mx[e] the largest count of entry e in any one
# reference so far: cnt[e] counts e's occurrences in the reference whose stamp[e] == ref (an
# entry met first in this reference restarts from 0), so no pass over the segment's entries
# follows each reference (that pass made K references of one segment cost O(K * entries)).
# The caller makes room for (p1 - p0) * order more entries in t, keys, mx, cnt and stamp.
# Returns the new entry count.
cdef inline Py_ssize_t walk_ngrams_max(Table* t, Py_ssize_t n0, const int32_t* sym,
                                       Py_ssize_t p0, Py_ssize_t p1, Py_ssize_t L, int order,
                                       int32_t ref, int32_t* cnt, int32_t* stamp, int32_t* mx,
                                       int64_t* keys) noexcept nogil:
    cdef Py_ssize_t p, q, ne = n0
    cdef int n
    cdef int64_t key
    cdef int32_t e, prev, c
    for p in range(p0, p1):
        prev = -1
        for n in range(1, order + 1):
            q = p + n - 1
            if q >= L:
                break
            if n == 1:
                key = <int64_t> sym[q]
            else:
                key = ((<int64_t> prev + 1) << 32) | (<int64_t> <uint32_t> sym[q])
            e = table_get_or_add(t, key, <int32_t> ne)
            if e == ne:
                if keys != NULL:
                    keys[ne] = key
                mx[ne] = 0
                stamp[ne] = -1
                ne += 1
            if stamp[e] != ref:
                stamp[e] = ref
                cnt[e] = 0
            c = cnt[e] + 1
            cnt[e] = c
            if c > mx[e]:
                mx[e] = c
            prev = e
    return ne


# Walk the hypothesis n-grams through table `t` (keys -> local entry), consuming `remaining`;
# matches per order are added to match[n-1].
cdef void match_ngrams(Table* t, const int32_t* sym, Py_ssize_t L, int order, int64_t flag,
                       int32_t* remaining, int64_t* match) noexcept nogil:
    cdef Py_ssize_t p, q
    cdef int n
    cdef int64_t key
    cdef int32_t e, prev
    for p in range(L):
        prev = -1
        for n in range(1, order + 1):
            q = p + n - 1
            if q >= L:
                break
            if n == 1:
                key = (<int64_t> sym[q]) | flag
            else:
                key = ((<int64_t> prev + 1) << 32) | (<int64_t> <uint32_t> sym[q])
            e = table_get(t, key)
            if e < 0:
                break   # no longer n-gram from here can be in the reference either
            if remaining[e] > 0:
                remaining[e] -= 1
                match[n - 1] += 1
            prev = e

cdef void load_table(Table* t, const int64_t* keys, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(lo, hi):
        table_get_or_add(t, keys[k], <int32_t> (k - lo))

cdef int use_entries(Table* t, Scratch* rem, const int64_t* keys, const int32_t* counts,
                     Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t* loaded) noexcept nogil:
    """Point ``t`` at reference entries ``lo:hi`` and reset their remaining counts in ``rem``.
    ``loaded`` holds the (lo, hi) now in ``t``: consecutive hypotheses of one reference (several
    systems' outputs for a segment, in segment order) reuse the table instead of rebuilding it."""
    cdef Py_ssize_t k
    if lo != loaded[0] or hi != loaded[1]:
        if table_reset(t, hi - lo) != 0 or scratch_reserve(rem, hi - lo) != 0:
            return -1
        load_table(t, keys, lo, hi)
        loaded[0] = lo
        loaded[1] = hi
    for k in range(hi - lo):
        rem.a[k] = counts[lo + k]
    return 0


# ---- BLEU against prepared references: order by order, unigrams through a dense array --------
cdef struct Dense:
    # unigram entry of each symbol 0..n-1 in the loaded reference row (-1: not in it; e[n] is
    # -1 too); symbols outside 0..n-1 go through the table, unless ``every`` says that no
    # reference unigram is outside (then they are simply not in the row)
    int32_t* e
    Py_ssize_t n
    bint every

cdef void dense_load(Dense* d, const int64_t* keys, Py_ssize_t lo, Py_ssize_t hi,
                     bint clear) noexcept nogil:
    """Set (``clear`` False: entry k - lo) or reset (True: -1) the dense slots of the order-1
    keys of entries lo:hi (order-1 keys are the symbols; longer n-grams have keys >= 2**32)."""
    cdef Py_ssize_t k
    cdef int64_t key
    for k in range(lo, hi):
        key = keys[k]
        if 0 <= key < d.n:
            d.e[key] = -1 if clear else <int32_t> (k - lo)


cdef inline int32_t table_find(const Table* t, int64_t key) noexcept nogil:
    """table_get with the hit/miss decided by a conditional move: in a table at load <= 1/4 the
    probe loop nearly always stops at the first slot, so only the (unpredictable) outcome
    varies, and it no longer branches."""
    cdef Py_ssize_t j = <Py_ssize_t> ((<uint64_t> key * 0x9E3779B97F4A7C15ULL) >> t.shift)
    cdef int64_t k = t.keys[j]
    while k != key and k != -1:
        j = (j + 1) & (t.cap - 1)
        k = t.keys[j]
    return t.vals[j] if k == key else -1


cdef struct Cont:
    # the one continuation of a reference entry: the entry of its n-gram extended by ``sym``
    # (``ent`` -1: none; CONT_MULTI: several, look them up in the table)
    int32_t sym
    int32_t ent

cdef enum:
    CONT_MULTI = -2


cdef int cont_load(Cont** cont, Py_ssize_t* cap, const int64_t* keys, Py_ssize_t lo,
                   Py_ssize_t hi) noexcept nogil:
    """The continuations of reference entries lo:hi (entry k at cont[k - lo]): an entry of
    order n + 1 has key ((parent + 1) << 32) | sym, so it is its parent's continuation by sym.
    0, or -1 when out of memory."""
    cdef Py_ssize_t k, par
    cdef int64_t key
    cdef Cont* c
    if hi - lo > cap[0]:
        c = <Cont*> realloc(cont[0], (2 * (hi - lo) + 64) * sizeof(Cont))
        if c == NULL:
            return -1
        cont[0] = c
        cap[0] = 2 * (hi - lo) + 64
    c = cont[0]
    for k in range(hi - lo):
        c[k].sym = -1
        c[k].ent = -1
    for k in range(lo, hi):
        key = keys[k]
        if key >= (<int64_t> 1 << 32):
            par = <Py_ssize_t> ((key >> 32) - 1)
            if c[par].ent == -1:
                c[par].sym = <int32_t> <uint32_t> key   # the low 32 bits
                c[par].ent = <int32_t> (k - lo)
            else:
                c[par].ent = CONT_MULTI
    return 0


cdef inline int32_t consume(int32_t* rem, const int32_t* E, const int32_t* P,
                            Py_ssize_t k) noexcept nogil:
    """Matches among the n-grams found at positions P[0:k] (entries E[P[j]] >= 0), consuming
    their remaining counts ``rem[e]``."""
    cdef Py_ssize_t j
    cdef int32_t r, pos, e, cnt = 0
    for j in range(k):
        e = E[P[j]]
        r = rem[e]
        pos = r > 0
        rem[e] = r - pos
        cnt += pos
    return cnt


cdef void match_bleu(const Table* t, const Dense* d, const Cont* cont, const int32_t* sym,
                     Py_ssize_t L, int order, int32_t* rem, int64_t* match,
                     int32_t* E) noexcept nogil:
    """Clipped n-gram matches of sym[0:L] against the loaded reference row, order by order:
    E[p] is the entry of the n-gram at p, P = E[L:2L] the positions whose n-gram is in the
    reference (entry >= 0), the only ones an order longer can match at. The unigrams come from
    the dense array, each longer n-gram from its prefix's continuation (one load and a
    compare; the table only where a prefix has several), and the matches consume the
    remaining counts ``rem``. The loops do not branch on the data (a walk position by position,
    through n-grams of growing order, mispredicted at the end of each chain of matches)."""
    cdef Py_ssize_t p, j, k, k2
    cdef int n
    cdef int32_t e
    cdef uint32_t s, top = <uint32_t> d.n
    cdef Cont c
    cdef int32_t* P = E + L
    k = 0
    for p in range(L):
        s = <uint32_t> sym[p]
        if d.every:
            e = d.e[s if s < top else top]
        else:
            e = d.e[s] if s < top else table_find(t, <int64_t> sym[p])
        E[p] = e
        P[k] = <int32_t> p
        k += e >= 0
    match[0] += consume(rem, E, P, k)
    for n in range(2, order + 1):
        while k > 0 and P[k - 1] > L - n:   # the n-gram at p would run past the end
            k -= 1
        k2 = 0
        for j in range(k):
            p = P[j]
            c = cont[E[p]]
            if c.ent == CONT_MULTI:
                e = table_find(t, ((<int64_t> E[p] + 1) << 32)
                               | (<int64_t> <uint32_t> sym[p + n - 1]))
            else:
                # c.ent where the symbol continues the prefix, else -1 (all bits set): no branch
                e = c.ent | -(<int32_t> (c.sym != sym[p + n - 1]))
            E[p] = e
            P[k2] = <int32_t> p
            k2 += e >= 0
        k = k2
        if k == 0:
            break
        match[n - 1] += consume(rem, E, P, k)

# =====================================================================================
# BLEU
# =====================================================================================
def bleu_prepare_refs(list streams, const uint8_t[:, ::1] present, int max_order):
    """Reference n-gram tables for BLEU (max count over references per n-gram).

    streams : K pairs ``(values int32, offsets int64[N+1])`` of token ids (shared vocab)
    present : (K, N) uint8, 0 where a reference is None for that segment
    Returns ``(seg_offsets int64[N+1], keys int64[E], maxcounts int32[E], ref_lens int32[N, K])``
    with ref_lens -1 for absent references.
    """
    cdef Py_ssize_t K = len(streams), N = present.shape[1], i, k, lo, L, need, p0, p1
    if present.shape[0] != K:
        raise ValueError("present must be (K, N)")
    cdef list vals_l = [np.ascontiguousarray(s[0], dtype=np.int32) for s in streams]
    cdef list offs_l = [np.ascontiguousarray(s[1], dtype=np.int64) for s in streams]
    cdef const int32_t** vals = <const int32_t**> malloc((K + 1) * sizeof(void*))
    cdef const int64_t** offs = <const int64_t**> malloc((K + 1) * sizeof(void*))
    cdef const int32_t[::1] vv
    cdef const int64_t[::1] oo
    for k in range(K):
        vv = vals_l[k]
        oo = offs_l[k]
        if oo.shape[0] != N + 1:
            free(vals); free(offs)
            raise ValueError(f"reference stream {k} has {oo.shape[0] - 1} segments, expected {N}")
        vals[k] = &vv[0] if vv.shape[0] else NULL
        offs[k] = &oo[0]
    seg_offsets = np.empty(N + 1, dtype=np.int64)
    ref_lens = np.full((N, K), -1, dtype=np.int32)
    cdef int64_t[::1] so = seg_offsets
    cdef int32_t[:, ::1] rl = ref_lens
    cdef Entries E
    E.keys = NULL; E.counts = NULL; E.n = 0; E.cap = 0
    cdef Table t
    cdef Scratch cnt, stamp
    cnt.a = NULL; cnt.cap = 0; stamp.a = NULL; stamp.cap = 0
    cdef int err = 0
    cdef Py_ssize_t total = 0
    if table_init(&t, 1024) != 0:
        raise MemoryError()
    with nogil:
        # the entry lists sized once for every n-gram position (distinct n-grams are fewer;
        # the lists are shrunk to size at the end): growing them by doubling copied each
        # entry about twice, into fresh pages each time
        for i in range(N):
            for k in range(K):
                if present[k, i]:
                    total += (offs[k][i + 1] - offs[k][i]) * max_order
        if entries_reserve(&E, total) != 0:
            err = 1
        so[0] = 0
        for i in range(N if err == 0 else 0):
            need = 0
            for k in range(K):
                if present[k, i]:
                    need += (offs[k][i + 1] - offs[k][i]) * max_order
            if table_reset(&t, 0) != 0 or entries_reserve(&E, E.n + need) != 0 \
                    or scratch_reserve(&cnt, need) != 0 or scratch_reserve(&stamp, need) != 0:
                err = 1
                break
            lo = E.n
            for k in range(K):
                if not present[k, i]:
                    continue
                L = offs[k][i + 1] - offs[k][i]
                rl[i, k] = <int32_t> L
                # max counts straight into the entry list (room for `need` made above); the
                # table grows with the n-grams seen (SPAN_POSITIONS positions at a time)
                p0 = 0
                while p0 < L:
                    p1 = p0 + SPAN_POSITIONS if L - p0 > SPAN_POSITIONS else L
                    if table_fit(&t, E.n - lo + (p1 - p0) * max_order) != 0:
                        err = 1
                        break
                    E.n = lo + walk_ngrams_max(&t, E.n - lo, vals[k] + offs[k][i], p0, p1, L,
                                               max_order, <int32_t> k, cnt.a, stamp.a,
                                               E.counts + lo, E.keys + lo)
                    p0 = p1
                if err:
                    break
            if err:
                break
            so[i + 1] = E.n
    free(vals); free(offs); table_free(&t); free(cnt.a); free(stamp.a)
    if err:
        free(E.keys); free(E.counts)
        raise MemoryError("BLEU reference preparation ran out of memory")
    keys, counts = entries_to_numpy(&E)
    return seg_offsets, keys, counts, ref_lens


cdef struct RowMatch:
    # the reference row loaded for matching hypotheses against it (bleu_stats, bleu_text_stats):
    # its entries lo:hi in the table, the dense unigram array and the continuations; the
    # remaining counts and the positions of one hypothesis
    Table t
    Dense d
    Cont* cont
    Py_ssize_t ccap
    Scratch rem
    Scratch pos
    Py_ssize_t lo
    Py_ssize_t hi


cdef int rowmatch_init(RowMatch* m, const int64_t* kp, Py_ssize_t nkeys, Py_ssize_t klo,
                       Py_ssize_t khi) noexcept nogil:
    """Set up ``m`` for the rows whose entries are kp[klo:khi] (of ``nkeys`` in all): dense
    unigram slots for the symbols up to the largest of their unigrams below a cap proportional
    to the entries (vocabulary ids are dense; a sparse id space, say ids near 2**31, would
    otherwise ask for gigabytes; larger symbols take the table like n-grams). 0, or -1 when out
    of memory (``m`` is then freed)."""
    cdef int64_t cap = max(<int64_t> 65536, 8 * <int64_t> nkeys)
    cdef Py_ssize_t k
    memset(m, 0, sizeof(RowMatch))
    m.lo = m.hi = -1
    m.d.every = True
    for k in range(klo, khi):
        if 0 <= kp[k] < cap:
            if kp[k] >= m.d.n:
                m.d.n = kp[k] + 1
        elif kp[k] < (<int64_t> 1 << 32):
            m.d.every = False     # a unigram outside the dense array
    m.d.e = <int32_t*> malloc((m.d.n + 1) * sizeof(int32_t))
    if m.d.e == NULL or table_init(&m.t, 1024) != 0:
        rowmatch_free(m)
        return -1
    memset(m.d.e, 0xff, (m.d.n + 1) * sizeof(int32_t))
    return 0


cdef void rowmatch_free(RowMatch* m) noexcept nogil:
    table_free(&m.t)
    free(m.rem.a); free(m.pos.a); free(m.d.e); free(m.cont)


cdef int rowmatch_stats(RowMatch* m, const int64_t* kp, const int32_t* mc, Py_ssize_t lo,
                        Py_ssize_t hi, const int32_t* ref_lens, Py_ssize_t K, const int32_t* sym,
                        Py_ssize_t L, int max_order, int64_t* row) noexcept nogil:
    """The BLEU statistics row of the hypothesis sym[0:L] against the reference row whose
    entries are lo:hi (max counts ``mc``) and lengths ref_lens[0:K] (-1: absent): ``row`` =
    [hyp_len, closest_ref_len, correct_1..N, total_1..N]. The row's tables are built when it
    differs from the last one (consecutive hypotheses of one row share them). 0, or -1 when
    out of memory."""
    cdef Py_ssize_t k
    cdef int o
    cdef Py_ssize_t closest_len = -1, closest_diff = -1
    if lo != m.lo or hi != m.hi:
        if m.lo >= 0:
            dense_load(&m.d, kp, m.lo, m.hi, True)
        dense_load(&m.d, kp, lo, hi, False)
        # load <= 1/4: table_find's probe loop then nearly always stops at the first slot
        if table_reset(&m.t, 2 * (hi - lo)) != 0 or scratch_reserve(&m.rem, hi - lo) != 0 \
                or cont_load(&m.cont, &m.ccap, kp, lo, hi) != 0:
            return -1
        load_table(&m.t, kp, lo, hi)
        m.lo = lo
        m.hi = hi
    row[0] = L
    for k in range(K):
        if ref_lens[k] >= 0:
            closer_ref(L, ref_lens[k], &closest_diff, &closest_len)
    row[1] = closest_len
    for o in range(max_order):
        row[2 + o] = 0
        row[2 + max_order + o] = npos(L, o + 1)
    if hi > lo and L > 0:
        if scratch_reserve(&m.pos, 2 * L) != 0:   # match_bleu: E and P
            return -1
        memcpy(m.rem.a, mc + lo, (hi - lo) * sizeof(int32_t))
        match_bleu(&m.t, &m.d, m.cont, sym, L, max_order, m.rem.a, row + 2, m.pos.a)
    return 0


cdef Py_ssize_t rows_used(const int64_t[::1] seg_offsets, Py_ssize_t start, Py_ssize_t stop,
                          const int64_t[::1] seg_map, Py_ssize_t* r0, Py_ssize_t* r1) except -1:
    """The hypotheses' count and the prepared rows they use, r0 <= row < r1 (``seg_map``:
    hypothesis i uses row seg_map[i], else start + i for i < stop - start)."""
    if seg_map is not None:
        r0[0] = r1[0] = 0
        if seg_map.shape[0]:
            r0[0] = np.min(seg_map)
            r1[0] = np.max(seg_map) + 1
            if r0[0] < 0 or r1[0] > seg_offsets.shape[0] - 1:
                raise ValueError("seg_map refers to a reference row that was not prepared")
        return seg_map.shape[0]
    if stop < 0:
        stop = seg_offsets.shape[0] - 1
    r0[0] = start
    r1[0] = stop if stop > start else start
    return stop - start


def bleu_stats(const int32_t[::1] hyp_values, const int64_t[::1] hyp_offsets,
               const int64_t[::1] seg_offsets, const int64_t[::1] keys,
               const int32_t[::1] maxcounts, const int32_t[:, ::1] ref_lens, int max_order,
               Py_ssize_t start=0, Py_ssize_t stop=-1, const int64_t[::1] seg_map=None):
    """Per-segment BLEU statistics for segments ``start:stop`` of the prepared references.

    ``hyp_offsets`` has ``stop - start + 1`` entries. Returns int64 ``(n, 2 + 2 * max_order)``:
    ``[hyp_len, closest_ref_len, correct_1..correct_N, total_1..total_N]`` (sacrebleu's layout;
    closest_ref_len is -1 when a segment has no reference). With ``seg_map`` (int64, one entry
    per hypothesis) hypothesis i uses prepared reference row ``seg_map[i]`` instead (references
    prepared once per distinct row; start/stop are then ignored).
    """
    cdef Py_ssize_t r0, r1, i, s
    cdef Py_ssize_t n = rows_used(seg_offsets, start, stop, seg_map, &r0, &r1)
    if hyp_offsets.shape[0] != n + 1:
        raise ValueError(f"{hyp_offsets.shape[0] - 1} hypotheses for {n} reference segments")
    cdef int ncol = 2 + 2 * max_order
    out = np.empty((n, ncol), dtype=np.int64)   # every cell is written below
    if n == 0:
        return out
    cdef int64_t[:, ::1] st = out
    cdef const int64_t* smap = &seg_map[0] if seg_map is not None else NULL
    cdef const int32_t* hv = &hyp_values[0] if hyp_values.shape[0] else NULL
    cdef const int64_t* kp = &keys[0] if keys.shape[0] else NULL
    cdef const int32_t* mc = &maxcounts[0] if maxcounts.shape[0] else NULL
    cdef Py_ssize_t K = ref_lens.shape[1]
    cdef int err = 0
    cdef RowMatch m
    if rowmatch_init(&m, kp, keys.shape[0], seg_offsets[r0], seg_offsets[r1]) != 0:
        raise MemoryError()
    with nogil:
        for i in range(n):
            s = smap[i] if smap != NULL else start + i
            if rowmatch_stats(&m, kp, mc, seg_offsets[s], seg_offsets[s + 1], &ref_lens[s, 0],
                              K, hv + hyp_offsets[i], hyp_offsets[i + 1] - hyp_offsets[i],
                              max_order, &st[i, 0]) != 0:
                err = 1
                break
    rowmatch_free(&m)
    if err:
        raise MemoryError()
    return out


cdef int _check_csr(const int64_t[::1] offsets, Py_ssize_t n_values, str what) except -1:
    cdef Py_ssize_t i
    if offsets.shape[0] < 1:
        raise ValueError(f"{what}: offsets must hold N + 1 >= 1 entries")
    if offsets[0] < 0 or offsets[offsets.shape[0] - 1] > n_values:
        raise ValueError(f"{what}: offsets outside [0, {n_values}]")
    for i in range(offsets.shape[0] - 1):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"{what}: offsets decrease at {i}")
    return 0


def bleu_pair_stats(const int32_t[::1] hyp_values, const int64_t[::1] hyp_offsets,
                    const int32_t[::1] ref_values, const int64_t[::1] ref_offsets,
                    const int64_t[::1] ref_groups, int max_order):
    """BLEU statistics of hypothesis i against references ``ref_groups[i]:ref_groups[i+1]`` of a
    CSR reference batch, in one pass: each segment's reference n-grams go into a table that its
    hypothesis then walks (no entry list kept; the decoder case, where each reference set is
    scored once). Equal to ``bleu_stats`` after ``bleu_prepare_refs`` on the same segments.

    hyp_values int32 + hyp_offsets int64 (N+1,); ref_values int32 + ref_offsets int64 (R+1,);
    ref_groups int64 (N+1,), non-decreasing within [0, R]. Ids must be >= 0.
    Returns int64 ``(N, 2 + 2 * max_order)``, closest_ref_len -1 for a segment with no reference.
    """
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1, R = ref_offsets.shape[0] - 1
    cdef Py_ssize_t i, r, L, Lr, need, ne, j
    _check_csr(hyp_offsets, hyp_values.shape[0], "hyp")
    _check_csr(ref_offsets, ref_values.shape[0], "ref")
    if ref_groups.shape[0] != N + 1:
        raise ValueError(f"ref_groups has {ref_groups.shape[0]} entries, expected N + 1 = {N + 1}")
    _check_csr(ref_groups, R, "ref_groups")
    if max_order < 1:
        raise ValueError("max_order must be >= 1")
    cdef int ncol = 2 + 2 * max_order, o
    out = np.zeros((N, ncol), dtype=np.int64)
    if N == 0:
        return out
    cdef int64_t[:, ::1] st = out
    cdef const int32_t* hv = &hyp_values[0] if hyp_values.shape[0] else NULL
    cdef const int32_t* rv = &ref_values[0] if ref_values.shape[0] else NULL
    cdef Table t
    cdef Scratch cnt, mx, stamp
    cnt.a = NULL; cnt.cap = 0; mx.a = NULL; mx.cap = 0; stamp.a = NULL; stamp.cap = 0
    cdef int32_t* remaining
    cdef bint multi
    cdef Py_ssize_t closest_len, closest_diff
    cdef int err = 0
    if table_init(&t, 1024) != 0:
        raise MemoryError()
    with nogil:
        for i in range(N):
            L = hyp_offsets[i + 1] - hyp_offsets[i]
            need = 0
            for r in range(ref_groups[i], ref_groups[i + 1]):
                need += (ref_offsets[r + 1] - ref_offsets[r]) * max_order
            multi = ref_groups[i + 1] - ref_groups[i] > 1
            if table_reset(&t, need) != 0 or scratch_reserve(&cnt, need) != 0 \
                    or (multi and (scratch_reserve(&mx, need) != 0
                                   or scratch_reserve(&stamp, need) != 0)):
                err = 1
                break
            ne = 0
            closest_diff = -1
            closest_len = -1
            for r in range(ref_groups[i], ref_groups[i + 1]):
                Lr = ref_offsets[r + 1] - ref_offsets[r]
                if multi:  # max count over references, kept as they are walked
                    ne = walk_ngrams_max(&t, ne, rv + ref_offsets[r], 0, Lr, Lr, max_order,
                                         <int32_t> (r - ref_groups[i]), cnt.a, stamp.a, mx.a,
                                         NULL)
                else:
                    ne = walk_ngrams(&t, ne, rv + ref_offsets[r], Lr, max_order, 0, cnt.a, NULL)
                closer_ref(L, Lr, &closest_diff, &closest_len)
            remaining = mx.a if multi else cnt.a
            st[i, 0] = L
            st[i, 1] = closest_len
            if ne > 0 and L > 0:
                match_ngrams(&t, hv + hyp_offsets[i], L, max_order, 0, remaining, &st[i, 2])
            for j in range(ne):   # walk_ngrams adds to cnt: leave it zeroed
                cnt.a[j] = 0
            for o in range(1, max_order + 1):
                st[i, 1 + max_order + o] = npos(L, o)
    table_free(&t); free(cnt.a); free(mx.a); free(stamp.a)
    if err:
        raise MemoryError("BLEU kernel: out of memory")
    return out


def bleu_sentence_scores(const int64_t[:, ::1] stats, int max_order, int smooth, double smooth_value,
                         bint effective_order, bint neumaier):
    """sacrebleu's BLEU.compute_bleu for every row of ``stats`` (N, 2 + 2 * max_order).

    smooth: 0 none, 1 floor, 2 add-k, 3 exp. Returns float64 (N,). Same float operation order as
    sacrebleu, so each value is bit-identical to ``BLEU.sentence_score``.
    """
    cdef Py_ssize_t N = stats.shape[0], i
    out = np.empty(N, dtype=np.float64)
    cdef double[::1] res = out
    cdef double* prec = <double*> malloc((max_order + 1) * sizeof(double))
    cdef double* logs = <double*> malloc((max_order + 1) * sizeof(double))
    if prec == NULL or logs == NULL:
        free(prec); free(logs)
        raise MemoryError()
    with nogil:
        for i in range(N):
            res[i] = bleu_row(&stats[i, 0], max_order, smooth, smooth_value, effective_order,
                              neumaier, prec, logs, NULL)
    free(prec); free(logs)
    return out

# =====================================================================================
# chrF / chrF++
# =====================================================================================
def chrf_prepare_refs(list char_streams, list word_streams, const uint8_t[:, ::1] present,
                      int char_order, int word_order):
    """Per (segment, reference) n-gram entries for chrF (no merging: chrF picks one reference).

    char_streams : K pairs (code points int32, offsets int64[N+1])
    word_streams : K pairs (word ids int32, offsets) or empty when word_order == 0
    Returns ``(pair_offsets int64[N*K+1], keys int64[E], counts int32[E], char_lens int32[N,K],
    word_lens int32[N,K])``; pair (i, k) is index ``i * K + k``.
    """
    cdef Py_ssize_t K = len(char_streams), N = present.shape[1], i, k, j, lo, Lc, Lw
    cdef bint words = word_order > 0
    if words and len(word_streams) != K:
        raise ValueError("word_streams must match char_streams")
    cdef list cv_l = [np.ascontiguousarray(s[0], dtype=np.int32) for s in char_streams]
    cdef list co_l = [np.ascontiguousarray(s[1], dtype=np.int64) for s in char_streams]
    cdef list wv_l = [np.ascontiguousarray(s[0], dtype=np.int32) for s in word_streams] if words else []
    cdef list wo_l = [np.ascontiguousarray(s[1], dtype=np.int64) for s in word_streams] if words else []
    cdef const int32_t** cv = <const int32_t**> calloc(K + 1, sizeof(void*))
    cdef const int64_t** co = <const int64_t**> calloc(K + 1, sizeof(void*))
    cdef const int32_t** wv = <const int32_t**> calloc(K + 1, sizeof(void*))
    cdef const int64_t** wo = <const int64_t**> calloc(K + 1, sizeof(void*))
    cdef const int32_t[::1] vv
    cdef const int64_t[::1] oo
    for k in range(K):
        vv = cv_l[k]; oo = co_l[k]
        cv[k] = &vv[0] if vv.shape[0] else NULL
        co[k] = &oo[0]
        if oo.shape[0] != N + 1:
            raise ValueError(f"reference stream {k} has {oo.shape[0] - 1} segments, expected {N}")
        if words:
            vv = wv_l[k]; oo = wo_l[k]
            wv[k] = &vv[0] if vv.shape[0] else NULL
            wo[k] = &oo[0]
    pair_offsets = np.empty(N * K + 1, dtype=np.int64)
    char_lens = np.full((N, K), -1, dtype=np.int32)
    word_lens = np.full((N, K), -1, dtype=np.int32)
    cdef int64_t[::1] po = pair_offsets
    cdef int32_t[:, ::1] cl = char_lens
    cdef int32_t[:, ::1] wl = word_lens
    cdef Entries E
    E.keys = NULL; E.counts = NULL; E.n = 0; E.cap = 0
    cdef Table t
    cdef Scratch cnt
    cnt.a = NULL; cnt.cap = 0
    cdef int err = 0
    if table_init(&t, 1024) != 0:
        raise MemoryError()
    with nogil:
        po[0] = 0
        for i in range(N):
            for k in range(K):
                lo = E.n
                if present[k, i]:
                    Lc = co[k][i + 1] - co[k][i]
                    Lw = (wo[k][i + 1] - wo[k][i]) if words else 0
                    cl[i, k] = <int32_t> Lc
                    wl[i, k] = <int32_t> Lw
                    # the table, entries and counts grow with the n-grams seen (add_ngrams)
                    if table_reset(&t, 0) != 0:
                        err = 1
                        break
                    if add_ngrams(&t, &E, lo, cv[k] + co[k][i], Lc, char_order, 0, &cnt) != 0:
                        err = 1
                        break
                    if words and add_ngrams(&t, &E, lo, wv[k] + wo[k][i], Lw, word_order,
                                            WORD_FLAG, &cnt) != 0:
                        err = 1
                        break
                    for j in range(E.n - lo):
                        E.counts[lo + j] = cnt.a[j]
                        cnt.a[j] = 0
                po[i * K + k + 1] = E.n
            if err:
                break
    free(cv); free(co); free(wv); free(wo); table_free(&t); free(cnt.a)
    if err:
        free(E.keys); free(E.counts)
        raise MemoryError("chrF reference preparation ran out of memory")
    keys, counts = entries_to_numpy(&E)
    return pair_offsets, keys, counts, char_lens, word_lens


def chrf_f_scores(const int64_t[:, ::1] stats, double factor, bint eps_smoothing):
    """sacrebleu's chrF score of every stats row (N, 3 * order) -> float64 (N,)."""
    cdef Py_ssize_t N = stats.shape[0], i
    cdef int order = stats.shape[1] // 3
    out = np.empty(N, dtype=np.float64)
    cdef double[::1] res = out
    with nogil:
        for i in range(N):
            res[i] = chrf_f(&stats[i, 0], order, factor, eps_smoothing)
    return out


def chrf_stats(const int32_t[::1] hyp_chars, const int64_t[::1] hyp_char_offsets,
               const int32_t[::1] hyp_words, const int64_t[::1] hyp_word_offsets,
               const int64_t[::1] pair_offsets, const int64_t[::1] keys, const int32_t[::1] counts,
               const int32_t[:, ::1] char_lens, const int32_t[:, ::1] word_lens,
               int char_order, int word_order, double factor, bint eps_smoothing,
               Py_ssize_t start=0, Py_ssize_t stop=-1, const int64_t[::1] seg_map=None):
    """Per-segment chrF statistics for segments ``start:stop``, choosing per segment the reference
    with the best sentence-level score (strict >, first wins) like sacrebleu.

    With ``seg_map`` (int64, one entry per hypothesis) hypothesis i uses prepared reference row
    ``seg_map[i]`` (start/stop are then ignored).
    Returns ``(stats int64 (n, 3 * (char_order + word_order)), sentence_scores float64 (n,))``;
    each stats row is ``[hyp, ref, match]`` per order (chars first, then words). A segment with no
    reference gets zero statistics and score 0.0 (sacrebleu would fail).
    """
    cdef Py_ssize_t K = char_lens.shape[1]
    cdef const int64_t* smap = NULL
    if seg_map is not None:
        start, stop = 0, seg_map.shape[0]
        if stop:
            smap = &seg_map[0]
        if stop and (np.min(seg_map) < 0 or np.max(seg_map) >= char_lens.shape[0]):
            raise ValueError("seg_map refers to a reference row that was not prepared")
    if stop < 0:
        stop = char_lens.shape[0]
    cdef Py_ssize_t n = stop - start, i, s, k, lo, hi, j, Lc, Lw
    if hyp_char_offsets.shape[0] != n + 1:
        raise ValueError(f"{hyp_char_offsets.shape[0] - 1} hypotheses for {n} reference segments")
    cdef bint words = word_order > 0
    if words and hyp_word_offsets.shape[0] != n + 1:
        raise ValueError("hyp word offsets do not match")
    cdef int order = char_order + word_order, o
    stats = np.zeros((n, 3 * order), dtype=np.int64)
    scores = np.zeros(n, dtype=np.float64)
    cdef int64_t[:, ::1] st = stats
    cdef double[::1] sc = scores
    cdef int64_t* cur = <int64_t*> malloc(3 * order * sizeof(int64_t))
    cdef int64_t* match = <int64_t*> malloc(order * sizeof(int64_t))
    cdef Table t
    cdef Scratch rem
    rem.a = NULL; rem.cap = 0
    cdef double f, best_f
    cdef int64_t rc, rw
    cdef int err = 0
    cdef const int32_t* hc = &hyp_chars[0] if hyp_chars.shape[0] else NULL
    cdef const int32_t* hw = (&hyp_words[0] if hyp_words.shape[0] else NULL) if words else NULL
    cdef Py_ssize_t loaded[2]
    loaded[0] = -1
    loaded[1] = -1
    if table_init(&t, 1024) != 0:
        raise MemoryError()
    with nogil:
        for i in range(n):
            s = smap[i] if smap != NULL else start + i
            Lc = hyp_char_offsets[i + 1] - hyp_char_offsets[i]
            Lw = (hyp_word_offsets[i + 1] - hyp_word_offsets[i]) if words else 0
            best_f = -1.0
            for k in range(K):
                if char_lens[s, k] < 0:
                    continue
                lo = pair_offsets[s * K + k]
                hi = pair_offsets[s * K + k + 1]
                if use_entries(&t, &rem, &keys[0] if keys.shape[0] else NULL,
                               &counts[0] if counts.shape[0] else NULL, lo, hi, loaded) != 0:
                    err = 1
                    break
                for o in range(order):
                    match[o] = 0
                if hi > lo:
                    match_ngrams(&t, hc + hyp_char_offsets[i], Lc, char_order, 0, rem.a, match)
                    if words:
                        match_ngrams(&t, hw + hyp_word_offsets[i], Lw, word_order, WORD_FLAG,
                                     rem.a, match + char_order)
                for o in range(order):
                    if o < char_order:
                        rc = npos(char_lens[s, k], o + 1)
                        cur[3 * o] = npos(Lc, o + 1) if rc > 0 else 0
                    else:
                        rc = npos(word_lens[s, k], o - char_order + 1)
                        cur[3 * o] = npos(Lw, o - char_order + 1) if rc > 0 else 0
                    cur[3 * o + 1] = rc
                    cur[3 * o + 2] = match[o]
                f = chrf_f(cur, order, factor, eps_smoothing)
                if f > best_f:
                    best_f = f
                    for o in range(3 * order):
                        st[i, o] = cur[o]
            if err:
                break
            sc[i] = best_f if best_f >= 0 else 0.0
    free(cur); free(match); table_free(&t); free(rem.a)
    if err:
        raise MemoryError()
    return stats, scores


def order_by_row(const int64_t[::1] rows, Py_ssize_t n_rows):
    """Positions ``0..n-1`` ordered by ``rows[i]`` (values in ``[0, n_rows)``), ties in position
    order: ``np.argsort(rows, kind="stable")`` as an O(n + n_rows) counting sort. Hypotheses
    scored in this order meet each reference row's table once (and chunks that hold contiguous
    row ranges get contiguous groups)."""
    cdef Py_ssize_t n = rows.shape[0], i
    cdef int64_t r
    for i in range(n):
        if rows[i] < 0 or rows[i] >= n_rows:
            raise ValueError(f"order_by_row: row {rows[i]} at position {i} is outside [0, {n_rows})")
    order = np.empty(n, dtype=np.int64)
    start = np.zeros(n_rows + 1, dtype=np.int64)
    cdef int64_t[::1] o = order
    cdef int64_t[::1] st = start
    with nogil:
        for i in range(n):
            st[rows[i] + 1] += 1
        for i in range(n_rows):
            st[i + 1] += st[i]
        for i in range(n):
            r = rows[i]
            o[st[r]] = i
            st[r] += 1
    return order
