# cython: language_level=3
"""C-level interface of ``_text`` for ``_sentence``: the tokenizers' work struct and the
per-segment tokenizer entry. The id buffer, the vocabulary types and ``Vocab`` are in
``_text_vocab.pxd``. Everything else stays private to ``_text.pyx``."""
from libc.stdint cimport uint64_t, uint8_t
from mtscore.kernels._ucs4 cimport UBuf
from mtscore.kernels._text_vocab cimport IBuf, VocabC, WordCache


cdef struct QBuf:
    uint64_t* p
    Py_ssize_t n
    Py_ssize_t cap


cdef struct Work:
    UBuf a
    UBuf b
    UBuf line
    UBuf key
    QBuf bounds             # masks and word records of the line being tokenized (none / 13a)
    IBuf out
    bint lookup             # tokens the vocabulary lacks get UNSEEN, the vocabulary unchanged
    const uint8_t* src1     # the line's own storage when it is a 1-byte (Latin-1) string, else
                            # NULL: the none / 13a scan and the word keys read it unwidened


cdef int tokenize_one(int mode, VocabC* v, WordCache* wc, Work* w, int kind, const void* data,
                      Py_ssize_t n, bint rstrip, IBuf* out) noexcept nogil
cdef bint intl_ready() noexcept nogil
