# cython: language_level=3
"""Edit-distance kernels, part 1 of 3: text -> CSR (``values`` int32, ``offsets`` int64 of
length N + 1, as in ``_text``):

* :func:`jiwer_words`: jiwer's default word transform (``RemoveMultipleSpaces`` -> ``Strip`` ->
  ``split(" ")`` dropping empty strings), tokens interned in a ``_text.Vocab``;
* :func:`code_points`: the code points of each string, optionally ``str.strip()``-ed first
  (jiwer's CER transform; EED's already preprocessed strings).

Also the PEP 393 storage of a list of strings read without the GIL (``texts_open``, for
``_edit_words``; ``Texts``: ``_edit_buffers.pxd``). The distances on the CSR symbols are
``_edit_distance``. The plain-Python twin is ``mtscore/kernels/reference/edit_csr.py``.
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libc.stdint cimport int64_t, int32_t, uint8_t

import numpy as np
cimport numpy as cnp
from mtscore.kernels._ucs4 cimport (
    PyUnicode_READY, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, UBuf, ubuf_load,
    is_space)
from mtscore.kernels._text_vocab cimport Vocab, VocabC, IBuf, ibuf_push, vocab_intern
from mtscore.kernels._edit_buffers cimport Texts

cnp.import_array()


# ---- text -> CSR ---------------------------------------------------------------------------
cdef int _collect(list texts, int* kinds, void** datas, Py_ssize_t* lens,
                  Py_ssize_t first=0) except -1:
    """The PEP 393 storage of each string (``first``: the index of ``texts[0]`` in messages)."""
    cdef Py_ssize_t i
    cdef object t
    for i in range(len(texts)):
        t = texts[i]
        if type(t) is not str:
            raise TypeError(f"segment {i + first} is {type(t).__name__}, expected str")
        PyUnicode_READY(t)
        kinds[i] = PyUnicode_KIND(t)
        datas[i] = PyUnicode_DATA(t)
        lens[i] = PyUnicode_GET_LENGTH(t)
    return 0


cdef int texts_open(Texts* t, list texts, Py_ssize_t first=0) except -1:
    """Fill ``t`` from ``texts`` (TypeError naming the first non-str segment, counted from
    ``first``); free with :func:`texts_close` (on error it is freed already)."""
    cdef Py_ssize_t N = len(texts), i
    t.kinds = <int*> malloc((N + 1) * sizeof(int))
    t.datas = <void**> malloc((N + 1) * sizeof(void*))
    t.lens = <Py_ssize_t*> malloc((N + 1) * sizeof(Py_ssize_t))
    t.total = 0
    if t.kinds == NULL or t.datas == NULL or t.lens == NULL:
        texts_close(t)
        raise MemoryError()
    try:
        _collect(texts, t.kinds, t.datas, t.lens, first)
    except BaseException:
        texts_close(t)
        raise
    for i in range(N):
        t.total += t.lens[i]
    return 0


cdef void texts_close(Texts* t) noexcept:
    free(t.kinds); free(t.datas); free(t.lens)
    t.kinds = NULL; t.datas = NULL; t.lens = NULL


# ASCII whitespace (str.isspace) as a table: the word scanner tests every code point
cdef uint8_t ASCII_SPACE[128]

cdef void _init_ascii_space():
    cdef int c
    for c in range(128):
        ASCII_SPACE[c] = 1 if is_space(c) else 0

_init_ascii_space()


cdef inline bint _space(Py_UCS4 c) noexcept nogil:
    if c < 128:
        return ASCII_SPACE[c]
    return is_space(c)


cdef int _jiwer_spans(const Py_UCS4* p, Py_ssize_t n, IBuf* spans) noexcept nogil:
    """Words of ``p[0:n]`` as jiwer's wer_default makes them (``re.sub(r"\\s\\s+", " ")``,
    ``strip()``, ``split(" ")`` without empty strings), appended to ``spans`` as (start, length)
    pairs. A separator is a run of two or more whitespace characters, or a lone U+0020; a lone
    other whitespace character (a tab between two letters) stays inside its word. 0, or -1
    when out of memory or the string is longer than 2**31 - 1 code points."""
    cdef Py_ssize_t lo = 0, hi = n, k, r, start
    if n > 0x7FFFFFFF:
        return -1
    while lo < hi and _space(p[lo]):
        lo += 1
    while hi > lo and _space(p[hi - 1]):
        hi -= 1
    start = lo
    k = lo
    while True:
        while k < hi and not _space(p[k]):
            k += 1
        if k >= hi:
            break
        # p[k] starts a whitespace run; it ends before hi (p[hi - 1] is not whitespace)
        r = k + 1
        while _space(p[r]):
            r += 1
        if r - k >= 2 or p[k] == 32:
            if ibuf_push(spans, <int32_t> start) != 0 or ibuf_push(spans, <int32_t> (k - start)) != 0:
                return -1
            start = r
        k = r
    if hi > start:
        if ibuf_push(spans, <int32_t> start) != 0 or ibuf_push(spans, <int32_t> (hi - start)) != 0:
            return -1
    return 0


cdef int _jiwer_split(const Py_UCS4* p, Py_ssize_t n, VocabC* v, IBuf* spans, IBuf* out) noexcept nogil:
    """The words of ``p[0:n]`` (:func:`_jiwer_spans`) interned in ``v``, ids appended to ``out``."""
    cdef Py_ssize_t k
    cdef int32_t tid
    spans.n = 0
    if _jiwer_spans(p, n, spans) != 0:
        return -1
    for k in range(0, spans.n, 2):
        tid = vocab_intern(v, p + spans.p[k], spans.p[k + 1])
        if tid < 0 or ibuf_push(out, tid) != 0:
            return -1
    return 0


def jiwer_words(list texts, Vocab vocab):
    """Split each of N strings into words exactly as jiwer's default WER transform does
    (``RemoveMultipleSpaces``, ``Strip``, ``ReduceToListOfListOfWords``) and intern them in
    ``vocab``: returns ``(ids int32, offsets int64 (N + 1,))``."""
    cdef Py_ssize_t N = len(texts), i
    cdef Texts T
    texts_open(&T, texts)
    cdef int* kinds = T.kinds
    cdef void** datas = T.datas
    cdef Py_ssize_t* lens = T.lens
    offsets = np.empty(N + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    cdef UBuf buf
    cdef IBuf out, spans
    buf.p = NULL; buf.n = 0; buf.cap = 0
    out.p = NULL; out.n = 0; out.cap = 0
    spans.p = NULL; spans.n = 0; spans.cap = 0
    cdef VocabC* vc = &vocab.v
    cdef int err = 0
    with nogil:
        off[0] = 0
        for i in range(N):
            if ubuf_load(&buf, kinds[i], datas[i], lens[i], 1) != 0 or \
                    _jiwer_split(buf.p, lens[i], vc, &spans, &out) != 0:
                err = 1
                break
            off[i + 1] = out.n
    texts_close(&T); free(buf.p); free(spans.p)
    if err:
        free(out.p)
        raise MemoryError("jiwer_words: out of memory")
    values = np.empty(out.n, dtype=np.int32)
    cdef int32_t[::1] vals = values
    if out.n:
        memcpy(&vals[0], out.p, out.n * sizeof(int32_t))
    free(out.p)
    return values, offsets


def code_points(list texts, bint strip=False):
    """The code points of each of N strings (``str.strip()``-ed first when ``strip``: jiwer's
    CER transform): ``(values int32, offsets int64 (N + 1,))``."""
    cdef Py_ssize_t N = len(texts), i, total = 0
    cdef Texts T
    texts_open(&T, texts)
    cdef int* kinds = T.kinds
    cdef void** datas = T.datas
    cdef Py_ssize_t* lens = T.lens
    total = T.total
    values = np.empty(total, dtype=np.int32)
    offsets = np.empty(N + 1, dtype=np.int64)
    cdef int32_t[::1] vals = values
    cdef int64_t[::1] off = offsets
    cdef UBuf buf
    buf.p = NULL; buf.n = 0; buf.cap = 0
    cdef Py_ssize_t lo, hi, k, j = 0
    cdef int err = 0
    with nogil:
        off[0] = 0
        for i in range(N):
            if ubuf_load(&buf, kinds[i], datas[i], lens[i], 1) != 0:
                err = 1
                break
            lo = 0
            hi = lens[i]
            if strip:
                while lo < hi and is_space(buf.p[lo]):
                    lo += 1
                while hi > lo and is_space(buf.p[hi - 1]):
                    hi -= 1
            for k in range(lo, hi):
                vals[j] = <int32_t> buf.p[k]
                j += 1
            off[i + 1] = j
    texts_close(&T); free(buf.p)
    if err:
        raise MemoryError("code_points: out of memory")
    return values[:j].copy() if j < total else values, offsets
