# cython: language_level=3
"""TER kernels, part 2 of 3: sacrebleu 2.6.0's ``translation_edit_rate`` (shift search +
banded edit distance) on int32 token ids, for corpora (``ter_stats_range`` /
``ter_stats_shared``), one pair (``ter_pair_ids``) and all pairs (``ter_matrix``). The ids
come from the Tercom normaliser (``_ter_normalize``); ``ter_pair`` is also called by the
one-call paths of ``_ter_fused`` (``_ter_shift.pxd``).

Layout of the inputs (CSR, as everywhere in mtscore):

* hypotheses: ``hyp_ids`` int32 (all tokens), ``hyp_offsets`` int64 of length N + 1;
* references: ``ref_ids`` int32, ``ref_offsets`` int64 (one entry per reference string + 1) and
  ``seg_refs`` int64 of length N + 1: segment i has the references
  ``seg_refs[i] .. seg_refs[i+1]-1`` (a variable number, ``None`` references are simply absent).

Outputs: per segment ``edits`` and ``ref_len`` (float64), sacrebleu's ``[best_num_edits,
avg_ref_len]``. The per-pair search runs without the GIL; a Python thread pool over disjoint
segment ranges gives multi-core scaling (see ``mtscore.engine.metrics.ter``).

Exactness notes (sacrebleu 2.6.0's ``lib_ter`` behaviour; the plain-Python twin is
``mtscore/kernels/reference/ter_shift.py``):

* the DP band per row is ``[max(0, floor(i*r) - beam), min(m+1, floor(i*r) + beam))`` with
  ``r = m / n`` in double precision, the last row extended to ``m`` (its start is NOT 0);
* ops are chosen diag, then del, then ins, each replacing only when strictly cheaper;
* candidate costs only need the distance, so they are computed cost-only, starting from the
  longest prefix whose DP rows are already known (the current hypothesis or the previous
  candidate): the rows of a prefix do not depend on what follows it, so this is exactly
  sacrebleu's trie cache without the trie;
* a reference shorter than BEAM_WIDTH makes every DP row full (plain Levenshtein): then the
  distances are computed bit-parallel, and a pair whose distance equals the bag-of-words
  bound max(n, m) - |bag(h) & bag(r)| returns it without a shift search (no shift can gain:
  ``shift_free_cost``).
"""
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcmp, memcpy, memset
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.math cimport floor, ceil

from mtscore.kernels._ter_buffers cimport Work, work_init, work_free

cdef enum:
    MAX_SHIFT_SIZE = 10
    MAX_SHIFT_DIST = 50
    BEAM_WIDTH = 25
    MAX_SHIFT_CANDIDATES = 1000
    INF = 1 << 28

cdef enum:
    OP_NOP = 0
    OP_SUB = 1
    OP_INS = 2
    OP_DEL = 3
    OP_UNDEF = 4


# =============================================================================================
# translation edit rate
# =============================================================================================
cdef inline int grow(void** p, int64_t nbytes) noexcept nogil:
    cdef void* q = realloc(p[0], nbytes if nbytes > 0 else 1)
    if q == NULL:
        return -1
    p[0] = q
    return 0


cdef int work_reserve(Work* w, int n, int m) noexcept nogil:
    cdef int nc, mc
    if n > w.ncap:
        nc = n if n > 2 * w.ncap else 2 * w.ncap
        if nc < 64:
            nc = 64
        if (grow(<void**>&w.cur, nc * 4) or grow(<void**>&w.cand, nc * 4)
                or grow(<void**>&w.prevcand, nc * 4) or grow(<void**>&w.best, nc * 4)
                or grow(<void**>&w.lo, (nc + 1) * 4) or grow(<void**>&w.hi, (nc + 1) * 4)
                or grow(<void**>&w.rs, (nc + 1) * 4) or grow(<void**>&w.re, (nc + 1) * 4)
                or grow(<void**>&w.roff, (nc + 1) * 8) or grow(<void**>&w.hcum, (nc + 1) * 4)
                or grow(<void**>&w.boff, (nc + 1) * 8) or grow(<void**>&w.eq, nc * 8)
                or grow(<void**>&w.eqc, nc * 8)):
            return -1
        w.ncap = nc
    if m > w.mcap:
        mc = m if m > 2 * w.mcap else 2 * w.mcap
        if mc < 64:
            mc = 64
        if (grow(<void**>&w.align, mc * 4) or grow(<void**>&w.rcum, (mc + 1) * 4)):
            return -1
        w.mcap = mc
    if n + m + 1 > w.tcap:
        if grow(<void**>&w.trace, 2 * (n + m + 1)):
            return -1
        w.tcap = 2 * (n + m + 1)
    return 0


cdef int setup_band(Work* w, int n, int m) noexcept nogil:
    """Band per row (sacrebleu BeamEditDistance) and the band-compressed row layout.

    Row i computes columns [lo_i, hi_i); it is stored over [rs_i, re_i) =
    [max(0, lo_i - 1), max(hi_i, hi_{i+1})), i.e. with the INF cells the next row reads."""
    cdef double ratio = <double>m / <double>n
    cdef int beam = BEAM_WIDTH
    cdef int i, pd
    cdef int64_t total = 0
    if n == w.band_n and m == w.band_m:
        return 0    # set up for the previous pair already
    w.band_n = -1
    if m < BEAM_WIDTH:
        # every row is full: floor(i * m / n) <= m < beam, so lo = 0 and hi = m + 1 (and the
        # beam is not widened: that needs m / n > 2 * BEAM_WIDTH); rows stored over [0, m + 1)
        total = (<int64_t>n + 1) * (m + 1)
        if total > w.cellcap:
            if grow(<void**>&w.curmat, total * 4) or grow(<void**>&w.candmat, total * 4):
                return -1
            w.cellcap = total
        if total > w.bcellcap:
            if grow(<void**>&w.bwd, total * 4):
                return -1
            w.bcellcap = total
        for i in range(n + 1):
            w.lo[i] = 0
            w.hi[i] = m + 1
            w.rs[i] = 0
            w.re[i] = m + 1
            w.roff[i] = <int64_t>i * (m + 1)
            w.boff[i] = <int64_t>i * (m + 1)
        w.band_n = n
        w.band_m = m
        return 0
    else:
        if BEAM_WIDTH < ratio / 2.0:
            beam = <int>ceil(ratio / 2.0 + BEAM_WIDTH)
        w.lo[0] = 0
        w.hi[0] = m + 1
        for i in range(1, n + 1):
            pd = <int>floor(<double>i * ratio)
            w.lo[i] = pd - beam if pd - beam > 0 else 0
            w.hi[i] = pd + beam if pd + beam < m + 1 else m + 1
            if i == n:
                w.hi[i] = m + 1
    for i in range(n + 1):
        w.rs[i] = w.lo[i] - 1 if w.lo[i] > 0 else 0
        w.re[i] = w.hi[i]
        if i < n and w.hi[i + 1] > w.re[i]:
            w.re[i] = w.hi[i + 1]
        w.roff[i] = total - w.rs[i]
        total += w.re[i] - w.rs[i]
    if total > w.cellcap:
        if grow(<void**>&w.curmat, total * 4) or grow(<void**>&w.candmat, total * 4):
            return -1
        w.cellcap = total
    total = 0
    for i in range(n + 1):
        w.boff[i] = total - w.lo[i]
        total += w.hi[i] - w.lo[i]
    if total > w.bcellcap:
        if grow(<void**>&w.bwd, total * 4):
            return -1
        w.bcellcap = total
    w.band_n = n
    w.band_m = m
    return 0


cdef void dp_bwd(Work* w, const int32_t* h, const int32_t* r, int n, int m,
                 int i_from) noexcept nogil:
    """Backward banded DP of hypothesis ``h``, rows i_from..0 (row n is the base case):
    B[i][j] = cheapest in-band path from cell (i, j) to (n, m), with the forward moves
    diag (i+1, j+1), del (i+1, j) and ins (i, j+1). Row i depends only on h[i:], so after a
    shift only the rows above the changed region are recomputed."""
    cdef int i, j, lo, hi, lo1, hi1, v, c
    cdef int32_t hv
    cdef int32_t* B0
    cdef int32_t* B1
    for i in range(i_from, -1, -1):
        lo = w.lo[i]
        hi = w.hi[i]
        B0 = w.bwd + w.boff[i]
        if i == n:
            for j in range(hi - 1, lo - 1, -1):
                B0[j] = m - j
            continue
        B1 = w.bwd + w.boff[i + 1]
        lo1 = w.lo[i + 1]
        hi1 = w.hi[i + 1]
        hv = h[i]
        for j in range(hi - 1, lo - 1, -1):
            v = INF
            if lo1 <= j + 1 < hi1:
                v = B1[j + 1] + (hv != r[j])
            if lo1 <= j < hi1:
                c = B1[j] + 1
                if c < v:
                    v = c
            if j + 1 < hi:
                c = B0[j + 1] + 1
                if c < v:
                    v = c
            B0[j] = v


cdef inline int cell_op(const Work* w, const int32_t* h, const int32_t* r, int i,
                        int j) noexcept nogil:
    """The op sacrebleu's BeamEditDistance records at cell (i, j) of the current hypothesis'
    DP (on its edit path: in the band), re-derived from the stored costs with the DP's own
    comparisons: diag, then del, then ins, each replacing only when strictly cheaper. The
    costs are those the DP compared, so this is the op it would have stored."""
    cdef const int32_t* P
    cdef const int32_t* C
    cdef int v = INF, c, op = OP_UNDEF
    if i == 0:
        return OP_INS
    if j == 0:
        return OP_DEL
    P = w.curmat + w.roff[i - 1]
    C = w.curmat + w.roff[i]
    if h[i - 1] == r[j - 1]:
        c = P[j - 1]
        if c < v:
            v = c
            op = OP_NOP
    else:
        c = P[j - 1] + 1
        if c < v:
            v = c
            op = OP_SUB
    c = P[j] + 1
    if c < v:
        v = c
        op = OP_DEL
    c = C[j - 1] + 1
    if c < v:
        op = OP_INS
    return op


cdef void dp_rows_ops(Work* w, const int32_t* h, const int32_t* r, int i0, int i1) noexcept nogil:
    """Rows i0+1..i1 of the current hypothesis into curmat (costs only: the ops of the edit
    path are re-derived from them by ``cell_op``)."""
    cdef int i, j, lo, hi, v, c
    cdef int32_t hv
    cdef const int32_t* P
    cdef int32_t* C
    for i in range(i0 + 1, i1 + 1):
        P = w.curmat + w.roff[i - 1]
        C = w.curmat + w.roff[i]
        lo = w.lo[i]
        hi = w.hi[i]
        for j in range(w.rs[i], lo):
            C[j] = INF
        j = lo
        if lo == 0:
            C[0] = P[0] + 1
            j = 1
        hv = h[i - 1]
        while j < hi:
            v = P[j - 1] + (hv != r[j - 1])
            c = P[j] + 1
            if c < v:
                v = c
            c = C[j - 1] + 1
            if c < v:
                v = c
            C[j] = v
            j += 1
        for j in range(hi, w.re[i]):
            C[j] = INF


cdef inline void dp_rows_cost(Work* w, const int32_t* h, const int32_t* r, int i0, int i1,
                              const int32_t* src) noexcept nogil:
    """Cost-only rows i0+1..i1 of hypothesis ``h`` into candmat; row i0 is read from ``src``
    (a row pointer indexed by column)."""
    cdef int i, j, lo, hi, v, c
    cdef int32_t hv
    cdef const int32_t* P = src
    cdef int32_t* C
    for i in range(i0 + 1, i1 + 1):
        C = w.candmat + w.roff[i]
        lo = w.lo[i]
        hi = w.hi[i]
        for j in range(w.rs[i], lo):
            C[j] = INF
        j = lo
        if lo == 0:
            C[0] = P[0] + 1
            j = 1
        hv = h[i - 1]
        while j < hi:
            v = P[j - 1] + (hv != r[j - 1])
            c = P[j] + 1
            if c < v:
                v = c
            c = C[j - 1] + 1
            if c < v:
                v = c
            C[j] = v
            j += 1
        for j in range(hi, w.re[i]):
            C[j] = INF
        P = C


cdef inline bint better_shift(bint have_best, int gain, int length, int sh, int idx, int best_gain,
                              int best_len, int best_sh, int best_idx) noexcept nogil:
    """sacrebleu's order of shift candidates: the larger gain, then the longer phrase, then the
    earlier start, then the earlier target; any candidate beats none."""
    if not have_best:
        return True
    if gain != best_gain:
        return gain > best_gain
    if length != best_len:
        return length > best_len
    if sh != best_sh:
        return sh < best_sh
    return idx < best_idx


ctypedef fused word_t:     # a hypothesis word: its id, or its mask of equal reference words
    int32_t
    uint64_t


cdef inline void perform_shift(const word_t* src, word_t* dst, int n, int start, int length,
                               int target) noexcept nogil:
    cdef int o = 0, k, e
    if target < start:
        for k in range(target):
            dst[o] = src[k]; o += 1
        for k in range(start, start + length):
            dst[o] = src[k]; o += 1
        for k in range(target, start):
            dst[o] = src[k]; o += 1
        for k in range(start + length, n):
            dst[o] = src[k]; o += 1
    elif target > start + length:
        for k in range(start):
            dst[o] = src[k]; o += 1
        for k in range(start + length, target):
            dst[o] = src[k]; o += 1
        for k in range(start, start + length):
            dst[o] = src[k]; o += 1
        for k in range(target, n):
            dst[o] = src[k]; o += 1
    else:
        e = length + target
        if e > n:
            e = n
        for k in range(start):
            dst[o] = src[k]; o += 1
        for k in range(start + length, e):
            dst[o] = src[k]; o += 1
        for k in range(start, start + length):
            dst[o] = src[k]; o += 1
        for k in range(e, n):
            dst[o] = src[k]; o += 1


cdef inline int lcp(const int32_t* a, const int32_t* b, int n) noexcept nogil:
    cdef int k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


cdef extern from *:
    """
    static inline int mts_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int ctz64 "mts_ctz64"(unsigned long long x) nogil


cdef inline int myers_dist(const uint64_t* eq, int n, int m) noexcept nogil:
    """Levenshtein distance of a hypothesis of n words to a reference of 1 <= m <= 64 words,
    given per hypothesis word the bit mask of the equal reference words (bit j: word j).
    Myers' bit-parallel algorithm (1999) in Hyyro's global form (the row boundary, one more
    deletion per row, shifted in as +1); the bits above m carry garbage that never reaches
    bit m - 1 (carries and shifts only move upwards)."""
    cdef uint64_t vp = (((<uint64_t>1) << (m - 1)) << 1) - 1, vn = 0, eqm, xv, xh, hp, hn
    cdef uint64_t top = (<uint64_t>1) << (m - 1)
    cdef int i, dist = m
    for i in range(n):
        eqm = eq[i]
        xv = eqm | vn
        xh = (((eqm & vp) + vp) ^ vp) | eqm
        hp = vn | ~(xh | vp)
        hn = vp & xh
        if hp & top:
            dist += 1
        elif hn & top:
            dist -= 1
        hp = (hp << 1) | 1
        hn = hn << 1
        vp = hn | ~(xv | hp)
        vn = hp & xv
    return dist


cdef inline void eq_masks(uint64_t* eq, const int32_t* h, int n, const int32_t* r,
                          int m) noexcept nogil:
    """``eq[i]``: bit j set where ``r[j] == h[i]`` (m <= 64)."""
    cdef int i, j
    cdef int32_t hv
    cdef uint64_t eqm
    for i in range(n):
        hv = h[i]
        eqm = 0
        for j in range(m):
            eqm |= (<uint64_t>(r[j] == hv)) << j
        eq[i] = eqm


cdef int shift_free_cost(Work* w, const int32_t* h, int n, const int32_t* r, int m,
                         int* bound) noexcept nogil:
    """sacrebleu's result for a pair whose reference is shorter than BEAM_WIDTH (every DP row
    full: the banded distance is the plain Levenshtein distance) when no shift can lower its
    cost, else -1; ``bound`` gets the bound below. ``w.eq`` needs room for n masks (filled).

    Exact: a shift permutes the hypothesis, so every candidate keeps its bag of words, and any
    alignment of it with M matches costs at least max(n, m) - M >= max(n, m) - C, C the size of
    the bags' intersection. When the hypothesis' own distance already equals that bound, no
    candidate has a positive gain; sacrebleu then takes no shift (a shift needs a gain > 0, and
    a round cut by MAX_SHIFT_CANDIDATES is discarded) and returns the distance. The distance
    is computed bit-parallel (Myers 1999, in Hyyro's global form: the row boundary shifted in
    as +1), the reference positions as bits; C by greedy matching on the same masks (equal
    words have equal masks, so each hypothesis word takes a free position of its own word)."""
    cdef int i, common = 0, dist, big = n if n > m else m
    cdef uint64_t eqm, used = 0
    eq_masks(w.eq, h, n, r, m)
    for i in range(n):
        eqm = w.eq[i] & ~used
        if eqm:
            used |= eqm & (~eqm + 1)   # lowest free position of this word
            common += 1
    bound[0] = big
    if common == 0:
        return big      # no shared word: no shift candidate at all, and distance max(n, m)
    dist = myers_dist(w.eq, n, m)
    bound[0] = big - common
    if dist == big - common:
        return dist
    return -1


cdef int64_t ter_pair(Work* w, const int32_t* h, int n, const int32_t* r, int m) noexcept nogil:
    """sacrebleu ``translation_edit_rate(h, r)[0]``; -1 when out of memory."""
    cdef int checked = 0, shifts = 0, pre, i, j, k, pos_h, pos_r, nt
    cdef int sh, sr, length, rlo, rhi, a, offset, idx, prev_idx, cost, gain
    cdef int best_gain, best_len, best_sh, best_idx, p_cur, p_prev, base
    cdef bint have_best, cand_valid, stop, better, short = m < BEAM_WIDTH
    cdef int bound = -1
    cdef uint64_t bits = 0
    cdef int q, start, valid_to = 0, c2, lcs, fwd_extra
    cdef int32_t hv0
    cdef int bwd_from = n   # backward rows 0..bwd_from are stale (-1: all current)
    cdef const int32_t* src
    cdef const int32_t* F
    cdef const int32_t* Bq
    cdef uint8_t op
    cdef int32_t* tmp
    cdef int32_t* cur
    if m == 0:
        return n
    if n == 0:
        return m
    if n == m and memcmp(h, r, n * sizeof(int32_t)) == 0:
        return 0    # no edits, hence no shift candidate
    if work_reserve(w, n, m) < 0:
        return -1
    if m < BEAM_WIDTH:
        pre = shift_free_cost(w, h, n, r, m, &bound)
        if pre >= 0:
            return pre
    if setup_band(w, n, m) < 0:
        return -1
    cur = w.cur
    memcpy(cur, h, n * sizeof(int32_t))
    for j in range(m + 1):
        w.curmat[w.roff[0] + j] = j
    dp_rows_ops(w, cur, r, 0, n)
    # the backward rows are computed when a candidate first needs them (short segments often
    # have no candidate at all)
    while True:
        pre = w.curmat[w.roff[n] + m]
        if short and pre == bound:
            break   # after a shift: the bound is met, so no candidate of a further round gains
        # ---- trace (backwards), flipped, to alignment + error prefix sums --------------
        i = n
        j = m
        nt = 0
        while i > 0 or j > 0:
            op = <uint8_t>cell_op(w, cur, r, i, j)
            w.trace[nt] = op
            nt += 1
            if op == OP_NOP or op == OP_SUB:
                i -= 1
                j -= 1
            elif op == OP_INS:
                j -= 1
            else:
                i -= 1
        pos_h = -1
        pos_r = -1
        w.hcum[0] = 0
        w.rcum[0] = 0
        for k in range(nt - 1, -1, -1):
            op = w.trace[k]
            if op == OP_NOP or op == OP_SUB:
                pos_h += 1
                pos_r += 1
                w.align[pos_r] = pos_h
                w.hcum[pos_h + 1] = w.hcum[pos_h] + (op == OP_SUB)
                w.rcum[pos_r + 1] = w.rcum[pos_r] + (op == OP_SUB)
            elif op == OP_DEL:      # flipped to an insertion: a hypothesis word
                pos_h += 1
                w.hcum[pos_h + 1] = w.hcum[pos_h] + 1
            else:                   # OP_INS flipped to a deletion: a reference word
                pos_r += 1
                w.align[pos_r] = pos_h
                w.rcum[pos_r + 1] = w.rcum[pos_r] + 1
        # ---- candidates ------------------------------------------------------------------
        fwd_extra = 0
        have_best = False
        best_gain = 0
        best_len = 0
        best_sh = 0
        best_idx = 0
        cand_valid = False
        base = 0
        stop = False
        for sh in range(n):
            rlo = sh - MAX_SHIFT_DIST if sh > MAX_SHIFT_DIST else 0
            rhi = sh + MAX_SHIFT_DIST + 1 if sh + MAX_SHIFT_DIST + 1 < m else m
            hv0 = cur[sh]
            sr = rlo - 1
            if short:   # the positions of the reference words equal to cur[sh], in order
                bits = w.eq[sh] if rhi == m else 0   # (m < BEAM_WIDTH: rhi is m)
                if rlo > 0:
                    bits = (bits >> rlo) << rlo if rlo < 64 else 0
            while True:
                if short:
                    if bits == 0:
                        break
                    sr = <int>ctz64(bits)
                    bits &= bits - 1
                else:
                    sr += 1
                    if sr >= rhi:
                        break
                    if r[sr] != hv0:
                        continue    # no shared word at (sh, sr): nothing is yielded there
                length = 0
                while length < MAX_SHIFT_SIZE and cur[sh + length] == r[sr + length]:
                    length += 1
                    # (sh, sr, length) is yielded here
                    if (w.hcum[sh + length] - w.hcum[sh] != 0
                            and w.rcum[sr + length] - w.rcum[sr] != 0):
                        a = w.align[sr]
                        if not (sh <= a < sh + length):
                            prev_idx = -1
                            for offset in range(-1, length):
                                if sr + offset == -1:
                                    idx = 0
                                else:
                                    idx = w.align[sr + offset] + 1
                                if idx == prev_idx:
                                    continue
                                prev_idx = idx
                                if short:
                                    # every row full: the candidate's plain distance,
                                    # bit-parallel on its permuted masks
                                    perform_shift(<const uint64_t*>w.eq, w.eqc, n, sh, length, idx)
                                    cost = myers_dist(w.eqc, n, m)
                                    gain = pre - cost
                                    checked += 1
                                    better = better_shift(have_best, gain, length, sh, idx, best_gain, best_len, best_sh,
                                                          best_idx)
                                    if better:
                                        have_best = True
                                        best_gain = gain
                                        best_len = length
                                        best_sh = sh
                                        best_idx = idx
                                    continue
                                perform_shift(<const int32_t*>cur, w.cand, n, sh, length, idx)
                                # cost of the candidate: forward rows only over the changed
                                # region [p, q) (from the longest known prefix), then joined
                                # with the backward rows of the unchanged suffix at row q
                                p_cur = lcp(w.cand, cur, n)
                                if p_cur == n:
                                    cost = pre
                                    base = n
                                    valid_to = n
                                else:
                                    if idx < sh:
                                        q = sh + length
                                    elif idx > sh + length:
                                        q = idx
                                    else:
                                        q = length + idx if length + idx < n else n
                                    p_prev = -1
                                    if cand_valid:
                                        p_prev = lcp(w.cand, w.prevcand,
                                                     valid_to if valid_to < n else n)
                                    if p_prev > p_cur:
                                        start = p_prev
                                        src = w.candmat + w.roff[p_prev]
                                    else:
                                        start = p_cur
                                        src = w.curmat + w.roff[p_cur]
                                        base = p_cur
                                    if q < n and bwd_from >= 0 and fwd_extra + n - q <= bwd_from + 1:
                                        # the backward rows are stale: while running the forward
                                        # rows to the end costs less in all than recomputing them,
                                        # do that (ski rental: at most twice the cheaper way; one
                                        # candidate per round is common on short segments)
                                        fwd_extra += n - q
                                        q = n
                                    if start < q:
                                        dp_rows_cost(w, w.cand, r, start, q, src)
                                        valid_to = q
                                    else:
                                        valid_to = start
                                    if q <= base:
                                        F = w.curmat + w.roff[q]
                                    else:
                                        F = w.candmat + w.roff[q]
                                    if q == n:
                                        cost = F[m]
                                    else:
                                        if bwd_from >= 0:
                                            dp_bwd(w, cur, r, n, m, bwd_from)
                                            bwd_from = -1
                                        Bq = w.bwd + w.boff[q]
                                        cost = INF
                                        for j in range(w.lo[q], w.hi[q]):
                                            c2 = F[j] + Bq[j]
                                            if c2 < cost:
                                                cost = c2
                                tmp = w.prevcand
                                w.prevcand = w.cand
                                w.cand = tmp
                                cand_valid = True
                                gain = pre - cost
                                checked += 1
                                better = better_shift(have_best, gain, length, sh, idx, best_gain, best_len, best_sh,
                                                      best_idx)
                                if better:
                                    have_best = True
                                    best_gain = gain
                                    best_len = length
                                    best_sh = sh
                                    best_idx = idx
                            if checked >= MAX_SHIFT_CANDIDATES:
                                stop = True
                                break
                    if sh + length == n or sr + length == m:
                        break
                if stop:
                    break
            if stop:
                break
        # ---- outer loop of translation_edit_rate ------------------------------------------
        if checked >= MAX_SHIFT_CANDIDATES:
            break   # the shift found in this round is discarded (sacrebleu)
        if not have_best or best_gain <= 0:
            break
        shifts += 1
        perform_shift(<const int32_t*>cur, w.best, n, best_sh, best_len, best_idx)
        if short:
            perform_shift(<const uint64_t*>w.eq, w.eqc, n, best_sh, best_len, best_idx)
            w.eq, w.eqc = w.eqc, w.eq
        p_cur = lcp(w.best, cur, n)
        lcs = 0
        while lcs < n - p_cur and w.best[n - 1 - lcs] == cur[n - 1 - lcs]:
            lcs += 1
        tmp = w.cur
        w.cur = w.best
        w.best = tmp
        cur = w.cur
        if p_cur < n:
            dp_rows_ops(w, cur, r, p_cur, n)
            # backward rows i < n - lcs depend on the changed words: stale from now on
            if n - lcs - 1 > bwd_from:
                bwd_from = n - lcs - 1
    return shifts + w.curmat[w.roff[n] + m]


cdef extern from *:
    """
    static inline long long mts_fetch_add(long long* p, long long v) {
        return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    }
    """
    long long mts_fetch_add(long long* p, long long v) nogil


cdef int ter_segments(const int32_t* hyp_ids, const int64_t* hyp_off, const int32_t* ref_ids,
                      const int64_t* ref_off, const int64_t* seg_refs, const int64_t* order,
                      int64_t n_order, int64_t first, long long* counter, int64_t grain,
                      double* out) noexcept nogil:
    """Score the segments ``order[first:n_order]`` (``order`` NULL: segments first..n_order-1)
    into their rows of ``out`` ((N, 2) row-major). With ``counter`` set, the positions are
    claimed ``grain`` at a time from that shared counter (``first`` unused), so any number of
    threads running this function on the same arguments share the work dynamically; without
    it, all are done."""
    cdef Work w
    cdef int64_t i, j, j0, j1, k, best, e, total, nrefs
    cdef int rc = 0
    work_init(&w)
    j0 = first
    while rc == 0:
        if counter != NULL:
            j0 = mts_fetch_add(counter, grain)
            j1 = j0 + grain
        else:
            j1 = n_order
        if j0 >= n_order:
            break
        if j1 > n_order:
            j1 = n_order
        for j in range(j0, j1):
            i = order[j] if order != NULL else j
            best = 10000000000000000
            total = 0
            nrefs = seg_refs[i + 1] - seg_refs[i]
            for k in range(seg_refs[i], seg_refs[i + 1]):
                e = ter_pair(&w, hyp_ids + hyp_off[i], <int>(hyp_off[i + 1] - hyp_off[i]),
                             ref_ids + ref_off[k], <int>(ref_off[k + 1] - ref_off[k]))
                if e < 0:
                    rc = -1
                    break
                total += ref_off[k + 1] - ref_off[k]
                if e < best:
                    best = e
            if rc < 0:
                break
            out[2 * i] = <double>best
            out[2 * i + 1] = <double>total / <double>nrefs
        if counter == NULL:
            break
    work_free(&w)
    return rc


cdef int _check_ter_args(const int64_t[::1] hyp_offsets, const int64_t[::1] seg_refs,
                         double[:, ::1] out, str name) except -1:
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1
    cdef Py_ssize_t i
    if seg_refs.shape[0] != N + 1 or out.shape[0] != N or out.shape[1] != 2:
        raise ValueError(f"{name}: inconsistent shapes of hyp_offsets, seg_refs and out")
    for i in range(N):
        if seg_refs[i + 1] <= seg_refs[i]:
            raise ValueError(f"TER: segment {i} has no reference (all references are None)")
    return 0


def ter_stats_range(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_offsets,
                    const int32_t[::1] ref_ids, const int64_t[::1] ref_offsets,
                    const int64_t[::1] seg_refs, double[:, ::1] out,
                    Py_ssize_t start, Py_ssize_t stop):
    """Fill ``out[start:stop]`` (float64, shape (N, 2)) with ``[edits, avg_ref_len]``.

    Runs without the GIL, so several threads may fill disjoint ranges of the same ``out``.
    Every segment must have at least one reference.
    """
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1
    cdef int rc
    _check_ter_args(hyp_offsets, seg_refs, out, "ter_stats_range")
    if start < 0 or stop > N or start > stop:
        raise ValueError(f"ter_stats_range: bad range [{start}, {stop}) for {N} segments")
    if stop == start:
        return
    with nogil:
        rc = ter_segments(&hyp_ids[0] if hyp_ids.shape[0] else NULL, &hyp_offsets[0],
                          &ref_ids[0] if ref_ids.shape[0] else NULL, &ref_offsets[0],
                          &seg_refs[0], NULL, stop, start, NULL, 0, &out[0, 0])
    if rc < 0:
        raise MemoryError("TER kernel: out of memory")


def ter_stats_shared(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_offsets,
                     const int32_t[::1] ref_ids, const int64_t[::1] ref_offsets,
                     const int64_t[::1] seg_refs, double[:, ::1] out,
                     const int64_t[::1] order, long long[::1] counter, Py_ssize_t grain=4,
                     bint check=True):
    """Work-sharing form of :func:`ter_stats_range`: every thread that calls this with the
    same arguments claims ``grain`` positions of ``order`` (segment indices, int64) at a time
    from ``counter`` (int64 array of length 1, 0 at the start; updated atomically) and fills
    those rows of ``out`` (GIL released), until ``order`` is used up. Costliest segments
    first in ``order`` keeps the threads finishing together. ``check=False`` skips the
    argument checks (the caller ran them once for all threads)."""
    cdef Py_ssize_t N = hyp_offsets.shape[0] - 1
    cdef Py_ssize_t n_order = order.shape[0]
    cdef Py_ssize_t j
    cdef int rc
    if counter.shape[0] < 1 or grain < 1:
        raise ValueError("ter_stats_shared: counter must hold one int64 and grain be >= 1")
    if check:
        _check_ter_args(hyp_offsets, seg_refs, out, "ter_stats_shared")
        for j in range(n_order):
            if order[j] < 0 or order[j] >= N:
                raise ValueError(f"ter_stats_shared: order[{j}] = {order[j]} is not a segment")
    if n_order == 0 or N == 0:
        return
    with nogil:
        rc = ter_segments(&hyp_ids[0] if hyp_ids.shape[0] else NULL, &hyp_offsets[0],
                          &ref_ids[0] if ref_ids.shape[0] else NULL, &ref_offsets[0],
                          &seg_refs[0], &order[0], n_order, 0, &counter[0], grain, &out[0, 0])
    if rc < 0:
        raise MemoryError("TER kernel: out of memory")


def ter_pair_ids(const int32_t[::1] hyp, const int32_t[::1] ref):
    """``(edits, len(ref))`` of one token-id pair (sacrebleu ``translation_edit_rate``)."""
    cdef Work w
    cdef int64_t e
    cdef int n = hyp.shape[0], m = ref.shape[0]
    work_init(&w)
    with nogil:
        e = ter_pair(&w, &hyp[0] if n else NULL, n, &ref[0] if m else NULL, m)
        work_free(&w)
    if e < 0:
        raise MemoryError("TER kernel: out of memory")
    return int(e), m


def ter_matrix(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_offsets,
               const int32_t[::1] ref_ids, const int64_t[::1] ref_offsets,
               int64_t[:, ::1] edits, const int64_t[::1] part):
    """All-pairs TER edits: ``edits[a, b]`` (int64 (n, m)) = the edits of hypothesis a against
    reference b alone (sacrebleu ``translation_edit_rate``), for the columns b in ``part``
    (int64). CSR inputs: n hypotheses, m references (token ids of one vocabulary). GIL
    released, so threads may fill disjoint column sets of one matrix."""
    cdef Py_ssize_t n = hyp_offsets.shape[0] - 1, m = ref_offsets.shape[0] - 1, q, a, b
    cdef Py_ssize_t i
    if n < 0 or m < 0 or edits.shape[0] != n or edits.shape[1] != m:
        raise ValueError("ter_matrix: edits must be (number of hypotheses, number of references)")
    for i in range(n):
        if hyp_offsets[i + 1] < hyp_offsets[i]:
            raise ValueError(f"ter_matrix: hyp_offsets decrease at {i}")
    for i in range(m):
        if ref_offsets[i + 1] < ref_offsets[i]:
            raise ValueError(f"ter_matrix: ref_offsets decrease at {i}")
    if (n and (hyp_offsets[0] < 0 or hyp_offsets[n] > hyp_ids.shape[0])) or \
            (m and (ref_offsets[0] < 0 or ref_offsets[m] > ref_ids.shape[0])):
        raise ValueError("ter_matrix: offsets outside the id arrays")
    for i in range(part.shape[0]):
        if part[i] < 0 or part[i] >= m:
            raise ValueError(f"ter_matrix: part[{i}] = {part[i]} is not a reference")
    cdef Work w
    cdef int64_t e = 0
    cdef const int32_t* h = &hyp_ids[0] if hyp_ids.shape[0] else NULL
    cdef const int32_t* r = &ref_ids[0] if ref_ids.shape[0] else NULL
    work_init(&w)
    with nogil:
        for q in range(part.shape[0]):
            b = part[q]
            for a in range(n):
                e = ter_pair(&w, h + hyp_offsets[a] if h != NULL else NULL,
                             <int>(hyp_offsets[a + 1] - hyp_offsets[a]),
                             r + ref_offsets[b] if r != NULL else NULL,
                             <int>(ref_offsets[b + 1] - ref_offsets[b]))
                if e < 0:
                    break
                edits[a, b] = e
            if e < 0:
                break
        work_free(&w)
    if e < 0:
        raise MemoryError("TER kernel: out of memory")
