# cython: language_level=3
"""One hypothesis against its references, start to finish in one call: sentence BLEU and
sentence chrF/chrF++ for ``sentence_score`` (the decoder's per-call path), where the batch
route (interning, numpy CSR arrays, reference tables kept for reuse, a stats matrix) costs far
more than the work itself.

Each call tokenizes the hypothesis and its references with the ``_text`` tokenizers (the same
code as ``_text.encode``), counts n-grams with the ``_ngram_common`` tables (the same code as
the ``*_prepare_refs`` / ``*_stats`` kernels, see ``_ngram.pyx`` for the exact hierarchical
keys) and scores with the ``_ngram_common`` formulas (sacrebleu's float operation order, the
same ``chrf_f`` / ``bleu_row`` as ``_ngram`` and ``_pairwise``), all without the
GIL and without numpy. The scratch of a call (vocabulary, tables, buffers) is emptied and kept
for the next call, unless the call grew it large; two threads calling at once each get their
own, so calls never share state and ids never leak from one call into the next.

Inputs are ``str`` objects read in place (PEP 393 storage); lowercasing (``str.lower``) and
external tokenizers (MeCab, SentencePiece) are the caller's, before the call.

Plain-Python twin: ``mtscore/kernels/reference/sentence.py``.
"""
from libc.stdlib cimport malloc, realloc, free
from libc.stdint cimport int64_t, int32_t, uint32_t

from mtscore.kernels._ucs4 cimport (
    PyUnicode_READY, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, ubuf_load, is_space,
    is_ascii_punct)
from mtscore.kernels._text_vocab cimport Vocab, IBuf, ibuf_push, vocab_intern, vocab_clear
from mtscore.kernels._text cimport Work, tokenize_one, intl_ready
from mtscore.kernels._ngram_common cimport (
    Table, table_init, table_free, table_reset, table_get, table_get_or_add, bleu_row, chrf_f)
from mtscore.kernels._ngram cimport Scratch, scratch_reserve, npos, word_flag, closer_ref

cdef enum:
    # a call whose scratch grew past these (a very long text) frees it instead of keeping it
    KEEP_MAX_SLOTS = 1 << 14
    KEEP_MAX_ITEMS = 1 << 16
    MODE_INTL = 2


cdef class _State:
    """The scratch of one call: a vocabulary (+ word cache), tokenizer work buffers, the
    symbols of every text, an n-gram table with its entries and counters, small arrays."""
    cdef Vocab vocab
    cdef Work w
    cdef IBuf syms          # symbols of the references, then of the hypothesis
    cdef IBuf words         # chrF++: word ids, same order
    cdef Table t
    cdef Scratch cnt, mx, prev
    cdef int* kinds         # per text (hypothesis first): PEP 393 storage
    cdef const void** datas
    cdef Py_ssize_t* lens
    cdef int64_t* soff      # per text + 1: offsets into syms (references first)
    cdef int64_t* woff      # and into words
    cdef int64_t* st        # a stats row
    cdef int64_t* best      # chrF: the stats row of the best reference
    cdef int64_t* match     # per order
    cdef double* prec       # BLEU precisions
    cdef double* logs
    cdef Py_ssize_t cap_texts, cap_order

    def __cinit__(self):
        self.vocab = Vocab()
        self.kinds = NULL
        self.datas = NULL
        self.lens = NULL
        self.soff = NULL
        self.woff = NULL
        self.st = NULL
        self.best = NULL
        self.match = NULL
        self.prec = NULL
        self.logs = NULL
        self.cap_texts = 0
        self.cap_order = 0
        self.cnt.a = NULL; self.cnt.cap = 0
        self.mx.a = NULL; self.mx.cap = 0
        self.prev.a = NULL; self.prev.cap = 0
        if table_init(&self.t, 256) != 0:
            table_free(&self.t)
            self.t.keys = NULL; self.t.vals = NULL; self.t.used = NULL
            raise MemoryError()

    def __dealloc__(self):
        free(self.w.a.p); free(self.w.b.p); free(self.w.line.p); free(self.w.key.p)
        free(self.w.bounds.p); free(self.w.out.p)
        free(self.syms.p); free(self.words.p)
        table_free(&self.t)
        free(self.cnt.a); free(self.mx.a)
        free(self.prev.a)
        free(self.kinds); free(self.datas); free(self.lens); free(self.soff); free(self.woff)
        free(self.st); free(self.best); free(self.match); free(self.prec); free(self.logs)

    cdef int reserve(self, Py_ssize_t texts, Py_ssize_t order) except -1:
        """Room for ``texts`` texts and stats rows of ``order`` orders."""
        cdef Py_ssize_t c
        if texts > self.cap_texts:
            c = texts if texts > 8 else 8
            self.kinds = <int*> realloc(self.kinds, c * sizeof(int))
            self.datas = <const void**> realloc(self.datas, c * sizeof(void*))
            self.lens = <Py_ssize_t*> realloc(self.lens, c * sizeof(Py_ssize_t))
            self.soff = <int64_t*> realloc(self.soff, (c + 1) * sizeof(int64_t))
            self.woff = <int64_t*> realloc(self.woff, (c + 1) * sizeof(int64_t))
            if (self.kinds == NULL or self.datas == NULL or self.lens == NULL
                    or self.soff == NULL or self.woff == NULL):
                raise MemoryError()
            self.cap_texts = c
        if order > self.cap_order:
            c = order if order > 8 else 8
            self.st = <int64_t*> realloc(self.st, (3 * c + 2) * sizeof(int64_t))
            self.best = <int64_t*> realloc(self.best, (3 * c + 2) * sizeof(int64_t))
            self.match = <int64_t*> realloc(self.match, c * sizeof(int64_t))
            self.prec = <double*> realloc(self.prec, c * sizeof(double))
            self.logs = <double*> realloc(self.logs, c * sizeof(double))
            if (self.st == NULL or self.best == NULL or self.match == NULL or self.prec == NULL
                    or self.logs == NULL):
                raise MemoryError()
            self.cap_order = c
        return 0

    cdef bint small(self):
        """Whether this scratch is worth keeping for the next call (not grown by a long text)."""
        return (self.vocab.v.nslots <= KEEP_MAX_SLOTS and self.vocab.wc.keys.nslots <= KEEP_MAX_SLOTS
                and self.t.cap <= KEEP_MAX_SLOTS and self.syms.cap <= KEEP_MAX_ITEMS
                and self.cnt.cap <= KEEP_MAX_ITEMS and self.prev.cap <= KEEP_MAX_ITEMS)


cdef _State _spare = None


cdef int _ibuf_reserve(IBuf* b, Py_ssize_t n) noexcept nogil:
    """Room for ``n`` items in ``b`` (contents kept)."""
    cdef int32_t* q
    cdef Py_ssize_t cap = 2 * b.cap if 2 * b.cap > n else n + 256
    q = <int32_t*> realloc(b.p, cap * sizeof(int32_t))
    if q == NULL:
        return -1
    b.p = q
    b.cap = cap
    return 0


cdef _State _take():
    """A scratch for this call: the spare one (taken under the GIL, so no other thread can
    hold it at the same time) or a new one."""
    global _spare
    cdef _State s = _spare
    if s is None:
        return _State()
    _spare = None
    return s


cdef void _give(_State s):
    """Empty ``s`` and keep it as the spare (or drop it if a long text grew it)."""
    global _spare
    vocab_clear(&s.vocab.v, &s.vocab.wc)
    s.syms.n = 0
    s.words.n = 0
    if s.small():
        _spare = s


cdef Py_ssize_t _gather(_State s, str hyp, object refs, Py_ssize_t order) except -2:
    """Note the storage of ``hyp`` (text 0) and every reference (texts 1..K); the number of
    references K, or -1 when one of them is not a ``str`` (the caller's general path decides)."""
    cdef Py_ssize_t K = len(refs), k
    cdef object r
    if K == 0:
        raise ValueError("no references")
    s.reserve(K + 1, order)
    for k in range(K + 1):
        r = hyp if k == 0 else refs[k - 1]
        if type(r) is not str:
            return -1
        PyUnicode_READY(r)
        s.kinds[k] = PyUnicode_KIND(r)
        s.datas[k] = PyUnicode_DATA(r)
        s.lens[k] = PyUnicode_GET_LENGTH(r)
    return K


cdef int _tokenize_all(_State s, Py_ssize_t K, int mode, bint rstrip, IBuf* out,
                       int64_t* off) noexcept nogil:
    """Texts 1..K (references) then 0 (hypothesis) into ``out``; ``off[k]`` .. ``off[k+1]`` is
    reference k, ``off[K]`` .. ``off[K+1]`` the hypothesis."""
    cdef Py_ssize_t k, j
    off[0] = 0
    for k in range(K + 1):
        j = k + 1 if k < K else 0
        if tokenize_one(mode, &s.vocab.v, &s.vocab.wc, &s.w, s.kinds[j], s.datas[j], s.lens[j],
                        rstrip, out) != 0:
            return -1
        off[k + 1] = out.n
    return 0


# ---- n-gram counting, order by order --------------------------------------------------
# The keys are _ngram's (order 1: the symbol | flag; order n: ((entry of the (n-1)-gram + 1)
# << 32) | symbol), but walked order by order instead of position by position: the lookups of
# one order are independent of each other, so the CPU overlaps them (the position-major walk of
# add_ngrams / match_ngrams chains each n-gram's lookup on its prefix's), about a third faster
# on sentence pairs. ``prev`` holds, per position, the entry of the n-gram starting there.

cdef int count_ngrams(Table* t, Py_ssize_t* n_entries, const int32_t* sym, Py_ssize_t L,
                      int order, int64_t flag, int32_t* cnt, int32_t* prev) noexcept nogil:
    """Add the n-grams (orders 1..order) of sym[0:L] to table ``t`` (new entries numbered from
    n_entries[0], which the caller sized ``cnt`` for); their counts go to ``cnt``."""
    cdef Py_ssize_t p
    cdef int n
    cdef int64_t key
    cdef int32_t e, ne = <int32_t> n_entries[0]
    for n in range(1, order + 1):
        for p in range(L - n + 1):
            if n == 1:
                key = (<int64_t> sym[p]) | flag
            else:
                key = ((<int64_t> prev[p] + 1) << 32) | (<int64_t> <uint32_t> sym[p + n - 1])
            e = table_get_or_add(t, key, ne)
            if e == ne:
                cnt[ne] = 0
                ne += 1
            cnt[e] += 1
            prev[p] = e
    n_entries[0] = ne
    return 0


cdef void match_counts(Table* t, const int32_t* sym, Py_ssize_t L, int order, int64_t flag,
                       int32_t* remaining, int64_t* match, int32_t* prev) noexcept nogil:
    """Clipped matches per order of the n-grams of sym[0:L] against the counts ``remaining``
    (consumed); an n-gram whose prefix is not in the table is not either."""
    cdef Py_ssize_t p, live = L
    cdef int n
    cdef int64_t key
    cdef int32_t e
    for n in range(1, order + 1):
        if live == 0:
            break
        live = 0
        for p in range(L - n + 1):
            if n == 1:
                key = (<int64_t> sym[p]) | flag
            else:
                if prev[p] < 0:
                    continue
                key = ((<int64_t> prev[p] + 1) << 32) | (<int64_t> <uint32_t> sym[p + n - 1])
            e = table_get(t, key)
            prev[p] = e
            if e >= 0:
                live += 1
                if remaining[e] > 0:
                    remaining[e] -= 1
                    match[n - 1] += 1


# =====================================================================================
# BLEU
# =====================================================================================
cdef Py_ssize_t _longest(const int64_t* off, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k, m = 0
    for k in range(n):
        if off[k + 1] - off[k] > m:
            m = off[k + 1] - off[k]
    return m


cdef int _bleu(_State s, Py_ssize_t K, int mode, bint rstrip, int max_order, int smooth,
               double smooth_value, bint effective_order, bint neumaier,
               double* score, double* bp) noexcept nogil:
    """Tokenize, count (max reference counts, clipped matches, closest reference length) and
    score; the stats row goes to s.st. 0, or -1 when out of memory."""
    cdef Py_ssize_t k, j, L, need, Lr, ne = 0, ne0
    cdef int o
    cdef Py_ssize_t closest_diff = -1, closest_len = -1
    cdef const int32_t* sym
    if _tokenize_all(s, K, mode, rstrip, &s.syms, s.soff) != 0:
        return -1
    sym = s.syms.p
    need = s.soff[K] * max_order
    if (table_reset(&s.t, need) != 0 or scratch_reserve(&s.cnt, need + 1) != 0
            or scratch_reserve(&s.mx, need + 1) != 0
            or scratch_reserve(&s.prev, _longest(s.soff, K + 1) + 1) != 0):
        return -1
    # reference n-grams: the max count over references (bleu_prepare_refs for one segment)
    for k in range(K):
        ne0 = ne
        count_ngrams(&s.t, &ne, sym + s.soff[k], s.soff[k + 1] - s.soff[k], max_order, 0,
                     s.cnt.a, s.prev.a)
        for j in range(ne0, ne):
            s.mx.a[j] = 0
        for j in range(ne):
            if s.cnt.a[j] > s.mx.a[j]:
                s.mx.a[j] = s.cnt.a[j]
            s.cnt.a[j] = 0
    # the hypothesis (bleu_stats for one segment)
    L = s.soff[K + 1] - s.soff[K]
    s.st[0] = L
    for k in range(K):
        closer_ref(L, s.soff[k + 1] - s.soff[k], &closest_diff, &closest_len)
    s.st[1] = closest_len
    for o in range(2 * max_order):
        s.st[2 + o] = 0
    if ne > 0 and L > 0:
        match_counts(&s.t, sym + s.soff[K], L, max_order, 0, s.mx.a, s.st + 2, s.prev.a)
    for o in range(1, max_order + 1):
        s.st[1 + max_order + o] = npos(L, o)
    score[0] = bleu_row(s.st, max_order, smooth, smooth_value, effective_order, neumaier,
                        s.prec, s.logs, bp)
    return 0


def bleu_sentence(str hyp not None, object refs, int mode, bint rstrip=True, int max_order=4,
                  int smooth=3, double smooth_value=0.0, bint effective_order=False,
                  bint neumaier=False):
    """Sentence BLEU of ``hyp`` against the reference strings ``refs`` (a list or tuple, at
    least one), tokenized with ``mode`` (``_text.MODE_NONE`` .. ``MODE_CHAR``; ``rstrip``:
    strip trailing whitespace first, as BLEU does before its tokenizers).

    smooth: 0 none, 1 floor, 2 add-k, 3 exp (with ``smooth_value``); ``neumaier``: sum the
    log precisions like CPython >= 3.12's ``sum`` (see ``_ngram.bleu_sentence_scores``).
    Returns ``(sys_len, ref_len, counts, totals, precisions, bp, score)`` (counts and totals:
    lists of max_order ints, precisions: list of floats; add-k's precisions are those of the
    smoothed counts, which are not applied to ``counts``/``totals``), each value identical to
    sacrebleu's ``BLEU.sentence_score``; None when a reference is not a ``str``.
    """
    cdef _State s
    cdef Py_ssize_t K
    cdef int rc, o
    cdef double score = 0.0, bp = 1.0
    if max_order < 1:
        raise ValueError("max_order must be >= 1")
    if mode < 0 or mode > 4:
        raise ValueError(f"bleu_sentence: mode {mode} is not a BLEU tokenizer mode")
    if mode == MODE_INTL and not intl_ready():
        raise RuntimeError("intl class table not installed (call mtscore.engine.tokenizers.intl_table())")
    s = _take()
    try:
        K = _gather(s, hyp, refs, max_order)
        if K < 0:
            return None
        with nogil:
            rc = _bleu(s, K, mode, rstrip, max_order, smooth, smooth_value, effective_order,
                       neumaier, &score, &bp)
        if rc != 0:
            raise MemoryError("bleu_sentence: out of memory")
        return (s.st[0], s.st[1], [s.st[2 + o] for o in range(max_order)],
                [s.st[2 + max_order + o] for o in range(max_order)],
                [s.prec[o] for o in range(max_order)], bp, score)
    finally:
        _give(s)


# =====================================================================================
# chrF / chrF++
# =====================================================================================
cdef inline int _push_word(_State s, const Py_UCS4* tok, Py_ssize_t n) noexcept nogil:
    cdef int32_t wid = vocab_intern(&s.vocab.v, tok, n)
    if wid < 0:
        return -1
    return ibuf_push(&s.words, wid)


cdef int _chrf_tokenize(_State s, Py_ssize_t K, bint whitespace, bint words) noexcept nogil:
    """Characters (whitespace deleted unless ``whitespace``: _text's MODE_CHARS / MODE_CHARS_WS)
    and, for chrF++, word ids (MODE_CHRF_WORDS: sacrebleu's ``_remove_punctuation``, one ASCII
    punctuation mark split off the end, else the start, of a word of two or more characters)
    of texts 1..K (references) then 0 (hypothesis), in one scan of each text; offsets in
    s.soff / s.woff as in _tokenize_all."""
    cdef Py_ssize_t k, j, i, n, st, L
    cdef const Py_UCS4* p
    cdef int32_t* out
    cdef Py_ssize_t o
    cdef Py_UCS4 c
    s.soff[0] = 0
    s.woff[0] = 0
    for k in range(K + 1):
        j = k + 1 if k < K else 0
        if ubuf_load(&s.w.a, s.kinds[j], s.datas[j], s.lens[j], 8) != 0:
            return -1
        n = s.w.a.n
        p = s.w.a.p
        if s.syms.n + n > s.syms.cap:
            if _ibuf_reserve(&s.syms, s.syms.n + n) != 0:
                return -1
        out = s.syms.p
        o = s.syms.n
        i = 0
        while i < n:
            c = p[i]
            if is_space(c):
                if whitespace:
                    out[o] = <int32_t> c
                    o += 1
                i += 1
                continue
            st = i
            while i < n and not is_space(p[i]):
                out[o] = <int32_t> p[i]
                o += 1
                i += 1
            if words:
                L = i - st
                if L > 1 and is_ascii_punct(p[i - 1]):
                    if _push_word(s, p + st, L - 1) != 0 or _push_word(s, p + i - 1, 1) != 0:
                        return -1
                elif L > 1 and is_ascii_punct(p[st]):
                    if _push_word(s, p + st, 1) != 0 or _push_word(s, p + st + 1, L - 1) != 0:
                        return -1
                elif _push_word(s, p + st, L) != 0:
                    return -1
        s.syms.n = o
        s.soff[k + 1] = o
        s.woff[k + 1] = s.words.n
    return 0


cdef int _chrf(_State s, Py_ssize_t K, int char_order, int word_order, bint whitespace,
               double factor, bint eps_smoothing, double* score) noexcept nogil:
    """Characters (and words) of every text, then per reference the n-gram table, the clipped
    matches and the sentence score; the best reference's stats row (strict >, first wins) goes
    to s.best. 0, or -1 when out of memory."""
    cdef Py_ssize_t k, Lc, Lw, Rc, Rw, need, ne, longest
    cdef int order = char_order + word_order, o
    cdef int64_t rc
    cdef int64_t flag = word_flag()
    cdef double f, best_f = -1.0
    cdef bint words = word_order > 0
    if _chrf_tokenize(s, K, whitespace, words) != 0:
        return -1
    longest = _longest(s.soff, K + 1)
    if words and _longest(s.woff, K + 1) > longest:
        longest = _longest(s.woff, K + 1)
    if scratch_reserve(&s.prev, longest + 1) != 0:
        return -1
    Lc = s.soff[K + 1] - s.soff[K]
    Lw = s.woff[K + 1] - s.woff[K] if words else 0
    for k in range(K):
        Rc = s.soff[k + 1] - s.soff[k]
        Rw = s.woff[k + 1] - s.woff[k] if words else 0
        need = Rc * char_order + Rw * word_order
        if table_reset(&s.t, need) != 0 or scratch_reserve(&s.cnt, need + 1) != 0:
            return -1
        ne = 0
        count_ngrams(&s.t, &ne, s.syms.p + s.soff[k], Rc, char_order, 0, s.cnt.a, s.prev.a)
        if words:
            count_ngrams(&s.t, &ne, s.words.p + s.woff[k], Rw, word_order, flag, s.cnt.a,
                         s.prev.a)
        for o in range(order):
            s.match[o] = 0
        if ne > 0:
            # the reference counts are consumed in place (chrf_stats copies them first)
            match_counts(&s.t, s.syms.p + s.soff[K], Lc, char_order, 0, s.cnt.a, s.match,
                         s.prev.a)
            if words:
                match_counts(&s.t, s.words.p + s.woff[K], Lw, word_order, flag, s.cnt.a,
                             s.match + char_order, s.prev.a)
        for o in range(order):
            if o < char_order:
                rc = npos(Rc, o + 1)
                s.st[3 * o] = npos(Lc, o + 1) if rc > 0 else 0
            else:
                rc = npos(Rw, o - char_order + 1)
                s.st[3 * o] = npos(Lw, o - char_order + 1) if rc > 0 else 0
            s.st[3 * o + 1] = rc
            s.st[3 * o + 2] = s.match[o]
        f = chrf_f(s.st, order, factor, eps_smoothing)
        if f > best_f:
            best_f = f
            for o in range(3 * order):
                s.best[o] = s.st[o]
    score[0] = best_f
    return 0


def chrf_sentence(str hyp not None, object refs, int char_order=6, int word_order=0, double factor=4.0,
                  bint eps_smoothing=False, bint whitespace=False):
    """Sentence chrF (``word_order`` 0) / chrF++ of ``hyp`` against the reference strings
    ``refs`` (a list or tuple, at least one): sacrebleu's character n-grams (whitespace deleted
    unless ``whitespace``) and words (punctuation split off), the reference with the best
    score (strict >, first wins). ``factor`` is beta ** 2.

    Returns ``(stats, score)``: the chosen reference's statistics (a list of ``3 * (char_order
    + word_order)`` ints, ``[hyp, ref, match]`` per order) and its score, identical to
    sacrebleu's ``CHRF.sentence_score``; None when a reference is not a ``str``.
    """
    cdef _State s
    cdef Py_ssize_t K
    cdef int rc, o, order = char_order + word_order
    cdef double score = 0.0
    if char_order < 0 or word_order < 0 or order == 0:
        raise ValueError("char_order and word_order must be >= 0, and not both 0")
    s = _take()
    try:
        K = _gather(s, hyp, refs, order)
        if K < 0:
            return None
        with nogil:
            rc = _chrf(s, K, char_order, word_order, whitespace, factor, eps_smoothing, &score)
        if rc != 0:
            raise MemoryError("chrf_sentence: out of memory")
        return [s.best[o] for o in range(3 * order)], score
    finally:
        _give(s)
