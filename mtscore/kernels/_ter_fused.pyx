# cython: language_level=3
"""TER kernels, part 3 of 3: from strings to TER statistics in one call, the Tercom
normaliser (``_ter_normalize``) and the shift search (``_ter_shift``) fused without numpy
arrays in between: one hypothesis against its references (``ter_sentence``, for
``TER.sentence_score``) and a corpus with one reference per segment, each pair interned on its
own (``ter_corpus_plain``, sacrebleu's default TER). Plain-Python twin:
``mtscore/kernels/reference/ter_fused.py``.
"""
from libc.stdlib cimport malloc, realloc, free
from libc.stdint cimport int32_t, int64_t

from mtscore.kernels._ucs4 cimport (
    PyUnicode_READY, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, Py_UNICODE_ISSPACE,
    UBuf, ubuf_init, ubuf_free, ubuf_load)
from mtscore.kernels._ter_buffers cimport (
    Work, work_init, work_free, PairVocab, pv_init, pv_free, pv_clear)
from mtscore.kernels._ter_normalize cimport (
    TercomVocab, normalize_buf, collapse_spaces, pv_reserve, pair_tokens_of)
from mtscore.kernels._ter_shift cimport ter_pair


# =============================================================================================
# one hypothesis against its references in one call (TER.sentence_score)
# =============================================================================================
cdef enum:
    KEEP_MAX_TOKENS = 1 << 12   # a scratch whose vocabulary grew past this is not kept


cdef class _SentenceState:
    """The scratch of one ter_sentence call: a vocabulary, normaliser buffers, the token ids of
    every text and the search's work buffers; emptied and kept for the next call."""
    cdef TercomVocab vocab
    cdef Work w
    cdef UBuf a, b
    cdef int32_t* ids
    cdef int64_t* off       # per text + 1 (references first, then the hypothesis)
    cdef int* kinds         # per text (hypothesis first): PEP 393 storage
    cdef const void** datas
    cdef Py_ssize_t* lens
    cdef Py_ssize_t cap_ids, cap_texts

    def __cinit__(self):
        self.vocab = TercomVocab()
        work_init(&self.w)
        ubuf_init(&self.a)
        ubuf_init(&self.b)
        self.ids = NULL
        self.off = NULL
        self.kinds = NULL
        self.datas = NULL
        self.lens = NULL
        self.cap_ids = 0
        self.cap_texts = 0

    def __dealloc__(self):
        work_free(&self.w)
        ubuf_free(&self.a)
        ubuf_free(&self.b)
        free(self.ids); free(self.off); free(self.kinds); free(self.datas); free(self.lens)

    cdef int reserve_texts(self, Py_ssize_t n) except -1:
        if n > self.cap_texts:
            n = n if n > 8 else 8
            self.off = <int64_t*> realloc(self.off, (n + 1) * sizeof(int64_t))
            self.kinds = <int*> realloc(self.kinds, n * sizeof(int))
            self.datas = <const void**> realloc(self.datas, n * sizeof(void*))
            self.lens = <Py_ssize_t*> realloc(self.lens, n * sizeof(Py_ssize_t))
            if self.off == NULL or self.kinds == NULL or self.datas == NULL or self.lens == NULL:
                raise MemoryError()
            self.cap_texts = n
        return 0


cdef _SentenceState _spare_state = None


cdef int _sentence_tokens(_SentenceState s, Py_ssize_t j, bint twice, bint normalized,
                          bint no_punct, bint asian_support, Py_ssize_t* pos) noexcept nogil:
    """Normalise text ``j`` (twice for a reference under ``normalized``, as sacrebleu does) and
    append its token ids at ``s.ids[pos]``. 0, or -1 when out of memory."""
    cdef Py_ssize_t k, start, need
    cdef int32_t tid
    cdef void* p
    if ubuf_load(&s.a, s.kinds[j], s.datas[j], s.lens[j], 8) < 0:
        return -1
    if normalize_buf(&s.a, &s.b, normalized, no_punct, asian_support) < 0:
        return -1
    if twice:
        # sacrebleu tokenizes a reference once when caching it and again when extracting its
        # info; only the normalised form changes on the second pass (str.lower of lowercased
        # text is itself, so the lowercasing in between is the identity)
        collapse_spaces(&s.a)
        if normalize_buf(&s.a, &s.b, normalized, no_punct, asian_support) < 0:
            return -1
    need = pos[0] + s.a.n // 2 + 2
    if need > s.cap_ids:
        need = need if need > 2 * s.cap_ids else 2 * s.cap_ids
        p = realloc(s.ids, need * sizeof(int32_t))
        if p == NULL:
            return -1
        s.ids = <int32_t*> p
        s.cap_ids = need
    k = 0
    while k < s.a.n:
        while k < s.a.n and Py_UNICODE_ISSPACE(s.a.p[k]):
            k += 1
        if k >= s.a.n:
            break
        start = k
        while k < s.a.n and not Py_UNICODE_ISSPACE(s.a.p[k]):
            k += 1
        tid = s.vocab.intern(s.a.p + start, k - start)
        if tid < 0:
            return -1
        s.ids[pos[0]] = tid
        pos[0] += 1
    return 0


cdef int _ter_sentence(_SentenceState s, Py_ssize_t K, bint normalized, bint no_punct,
                       bint asian_support, int64_t* edits, double* ref_len) noexcept nogil:
    """Tokens of the references (texts 1..K) and the hypothesis (text 0), then the fewest
    edits over the references and their mean length (ter_segments for one segment)."""
    cdef Py_ssize_t k, pos = 0
    cdef int64_t e, best = 10000000000000000, total = 0
    s.off[0] = 0
    for k in range(K + 1):
        if _sentence_tokens(s, k + 1 if k < K else 0, k < K and normalized, normalized,
                            no_punct, asian_support, &pos) != 0:
            return -1
        s.off[k + 1] = pos
    for k in range(K):
        e = ter_pair(&s.w, s.ids + s.off[K], <int> (s.off[K + 1] - s.off[K]), s.ids + s.off[k],
                     <int> (s.off[k + 1] - s.off[k]))
        if e < 0:
            return -1
        total += s.off[k + 1] - s.off[k]
        if e < best:
            best = e
    edits[0] = best
    ref_len[0] = <double> total / <double> K
    return 0


def ter_sentence(str hyp not None, object refs, bint normalized=False, bint no_punct=False,
                 bint asian_support=False):
    """TER statistics of one hypothesis against its reference strings ``refs`` (a list or
    tuple, at least one), all already ``rstrip()``-ed and (unless case-sensitive) ``lower()``-ed
    in Python: ``(edits, avg_ref_len)``, sacrebleu's ``[best_num_edits, avg_ref_len]`` of the
    segment (references Tercom-normalised twice under ``normalized``, as sacrebleu does). None
    when a reference is not a ``str``."""
    global _spare_state
    cdef Py_ssize_t K = len(refs), k
    cdef object r
    cdef int rc
    cdef int64_t edits = 0
    cdef double ref_len = 0.0
    if K == 0:
        raise ValueError("ter_sentence: no references")
    cdef _SentenceState s = _spare_state
    if s is None:
        s = _SentenceState()
    else:
        _spare_state = None   # taken under the GIL: no other thread holds it now
    try:
        s.reserve_texts(K + 1)
        for k in range(K + 1):
            r = hyp if k == 0 else refs[k - 1]
            if type(r) is not str:
                return None
            PyUnicode_READY(r)
            s.kinds[k] = PyUnicode_KIND(r)
            s.datas[k] = PyUnicode_DATA(r)
            s.lens[k] = PyUnicode_GET_LENGTH(r)
        with nogil:
            rc = _ter_sentence(s, K, normalized, no_punct, asian_support, &edits, &ref_len)
        if rc != 0:
            raise MemoryError("ter_sentence: out of memory")
        return int(edits), ref_len
    finally:
        s.vocab.clear()
        if s.vocab.mask < 2 * KEEP_MAX_TOKENS and s.cap_ids <= 16 * KEEP_MAX_TOKENS \
                and s.a.cap <= 64 * KEEP_MAX_TOKENS:
            _spare_state = s


# =============================================================================================
# one call from strings to corpus sums (sacrebleu's default TER, references not reused)
# =============================================================================================
def ter_corpus_plain(list hyps, list refs, bint no_punct=False, bint asian_support=False,
                     bint lowercase=True):
    """``(sum of edits, sum of reference lengths)`` of ``hyps[i]`` against ``refs[i]`` (one
    reference per segment, both lists of str of the same length), for ``normalized=False``:
    each pair is split (``rstrip()``, ``lower()`` when ``lowercase``, punctuation removal when
    ``no_punct``) and interned in a small vocabulary of its own, cleared after the pair (ids
    only need to be equal within one pair: ``PairVocab``), then searched (``ter_pair``). No
    per-token id arrays, no numpy: a first call touches few fresh pages. The lengths are
    summed in segment order as float64, like sacrebleu's ``sum_of_lists``. Returns None when
    an element is not a str (the caller then takes the general path, which reports it)."""
    cdef Py_ssize_t N = len(hyps), i, j, L, cnt, nh, cap = 256
    cdef object s
    cdef PairVocab vocab
    cdef Work w
    cdef int32_t* ids = <int32_t*>malloc(cap * sizeof(int32_t))
    cdef void* p
    cdef int64_t e, edits = 0
    cdef double ref_len = 0.0
    cdef bint low
    if len(refs) != N:
        free(ids)
        raise ValueError(f"ter_corpus_plain: {N} hypotheses but {len(refs)} references")
    if ids == NULL:
        raise MemoryError("ter_corpus_plain: out of memory")
    pv_init(&vocab)
    work_init(&w)
    try:
        for i in range(N):
            nh = 0
            for j in range(2):
                s = hyps[i] if j == 0 else refs[i]
                if type(s) is not str:
                    return None
                PyUnicode_READY(s)
                L = PyUnicode_GET_LENGTH(s)
                low = lowercase
                while True:
                    if nh + L // 2 + 2 > cap:   # at most (L + 1) / 2 tokens
                        while nh + L // 2 + 2 > cap:
                            cap *= 2
                        p = realloc(ids, cap * sizeof(int32_t))
                        if p == NULL:
                            raise MemoryError("ter_corpus_plain: out of memory")
                        ids = <int32_t*>p
                    if pv_reserve(&vocab, L) < 0:
                        raise MemoryError("ter_corpus_plain: out of memory")
                    cnt = pair_tokens_of(s, &vocab, L, low, no_punct, asian_support, ids + nh)
                    if cnt >= 0:
                        break
                    # needs Python's own str.lower() (see plain_tokens); the tokens interned
                    # before the stop are tokens of s.lower() too
                    s = s.lower()
                    PyUnicode_READY(s)
                    L = PyUnicode_GET_LENGTH(s)
                    low = False
                if j == 0:
                    nh = cnt
                else:
                    L = cnt   # reference length in tokens
            e = ter_pair(&w, ids, <int>nh, ids + nh, <int>L)
            if e < 0:
                raise MemoryError("ter_corpus_plain: out of memory")
            edits += e
            ref_len += <double>L
            pv_clear(&vocab)
        return edits, ref_len
    finally:
        free(ids)
        pv_free(&vocab)
        work_free(&w)
