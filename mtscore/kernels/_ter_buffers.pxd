# cython: language_level=3
"""The buffers the TER kernels share (``_ter_normalize``, ``_ter_shift``, ``_ter_fused``): the
Tercom vocabulary's token records, the shift search's work buffers and the pair-local
vocabulary of ``ter_corpus_plain``, with their inline set-up / clear / free helpers. The
functions that fill them live in the modules (declared in ``_ter_normalize.pxd`` and
``_ter_shift.pxd``)."""
from libc.stdlib cimport free
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t


ctypedef struct TokMeta:    # 16 bytes: a first call's vocabulary touches few fresh pages
    uint32_t hash       # low half of hash_cps_fold of the code points (slots use low bits)
    uint32_t start      # byte offset in the arena (arena < 4 GiB)
    int32_t len         # code points
    int32_t width       # bytes per code point: 1, 2 or 4


ctypedef struct Work:
    int ncap, mcap, tcap
    int band_n, band_m  # the (n, m) the band arrays below were set up for (-1: none)
    int64_t cellcap
    int32_t* cur        # current hypothesis (n)
    int32_t* cand       # candidate (n)
    int32_t* prevcand   # previous candidate (n)
    int32_t* best       # best candidate of the round (n)
    int32_t* lo         # band start per row (n+1)
    int32_t* hi         # band end (exclusive) per row
    int32_t* rs         # first stored column per row
    int32_t* re         # end of stored columns per row
    int64_t* roff       # offset of the row in the band-compressed matrices, minus rs
    int32_t* curmat     # DP costs of the current hypothesis (band-compressed)
    int32_t* candmat    # DP costs of candidates
    int32_t* bwd        # backward DP of the current hypothesis (row i stores [lo_i, hi_i))
    int64_t* boff       # offset of row i in bwd, minus lo_i
    int64_t bcellcap
    uint8_t* trace      # n + m
    int32_t* align      # m
    int32_t* hcum       # n + 1, prefix sums of hypothesis errors
    int32_t* rcum       # m + 1, prefix sums of reference errors
    uint64_t* eq        # n: per word of the current hypothesis, the mask of equal reference words
    uint64_t* eqc       # n: the same for a candidate


ctypedef struct PairTok:
    uint32_t key        # hash of the code points
    int32_t start       # offset in the arena
    int32_t len         # code points
    int32_t slot        # its slot in the table (to clear it)


# The tokens of one (hypothesis, reference) pair: ids only need to be equal within it. The
# tokeniser writes each token's code points straight into the arena; a token seen before is
# looked up and its copy dropped, a new one stays where it was written.
ctypedef struct PairVocab:
    Py_UCS4* cps        # arena
    int64_t cap_cps, ncps
    PairTok* toks
    int32_t cap_tok, ntok
    int32_t* table      # mask + 1 slots, -1: free; at most half full
    uint32_t mask


cdef inline void work_free(Work* w) noexcept nogil:
    free(w.cur); free(w.cand); free(w.prevcand); free(w.best)
    free(w.lo); free(w.hi); free(w.rs); free(w.re); free(w.roff)
    free(w.curmat); free(w.candmat); free(w.bwd); free(w.boff)
    free(w.trace); free(w.align); free(w.hcum); free(w.rcum); free(w.eq); free(w.eqc)


cdef inline void work_init(Work* w) noexcept nogil:
    w.ncap = -1
    w.mcap = -1
    w.tcap = -1
    w.band_n = -1
    w.band_m = -1
    w.cellcap = -1
    w.cur = NULL; w.cand = NULL; w.prevcand = NULL; w.best = NULL
    w.lo = NULL; w.hi = NULL; w.rs = NULL; w.re = NULL; w.roff = NULL
    w.curmat = NULL; w.candmat = NULL; w.bwd = NULL; w.boff = NULL
    w.bcellcap = -1
    w.trace = NULL; w.align = NULL; w.hcum = NULL; w.rcum = NULL
    w.eq = NULL; w.eqc = NULL


cdef inline void pv_init(PairVocab* v) noexcept nogil:
    v.cps = NULL
    v.toks = NULL
    v.table = NULL
    v.cap_cps = 0
    v.ncps = 0
    v.cap_tok = 0
    v.ntok = 0
    v.mask = 0


cdef inline void pv_free(PairVocab* v) noexcept nogil:
    free(v.cps)
    free(v.toks)
    free(v.table)
    pv_init(v)


cdef inline uint32_t pv_slot(uint32_t key, uint32_t mask) noexcept nogil:
    return ((key * 0x9E3779B1u) >> 16) & mask


cdef inline void pv_clear(PairVocab* v) noexcept nogil:
    cdef int32_t t
    for t in range(v.ntok):
        v.table[v.toks[t].slot] = -1
    v.ntok = 0
    v.ncps = 0
