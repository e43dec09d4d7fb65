# cython: language_level=3
"""Token ids -> text from a precomputed piece table: the compiled decoders of SentencePiece
models and of Hugging Face ``tokenizers`` pipelines whose steps act on one token at a time
(Metaspace, WordPiece, Replace, Strip, ByteFallback, Fuse, ByteLevel).

The table (built in ``mtscore.engine.id_text``) gives per id two byte strings, its *forms*:
``data[form_offsets[2 * id]:form_offsets[2 * id + 1]]`` where the id opens the text (the first
form) and ``data[form_offsets[2 * id + 1]:form_offsets[2 * id + 2]]`` elsewhere (the later
form), plus ``flags`` and, for byte pieces, ``byte_values``:

* ``FLAG_SKIP``: dropped before decoding (a special token with skip_special_tokens, an id with
  no token); it neither counts as a position nor ends a run of byte pieces;
* ``FLAG_BYTE``: a byte piece (``<0xNN>``) holding ``byte_values[id]``. A run of consecutive byte
  pieces becomes text together. ``MODE_HF`` (``tokenizers``' ByteFallback): the run's bytes when
  they are valid UTF-8 as a whole, else one U+FFFD per byte. ``MODE_SPM`` (SentencePiece): one
  character at a time, a valid character's bytes or U+FFFD for one invalid byte;
* ``FLAG_LITERAL`` (``MODE_SPM``): a control or unknown piece, its later form as it is, never
  stripped of a leading space (control pieces are empty: they end a run of byte pieces);
* ``FLAG_LEADING_WS`` (``MODE_SPM``): the piece starts with U+2581; its first form lacks it.

``MODE_HF`` picks the first form for the first token that is not skipped, the later form
elsewhere, then strips up to ``strip_count`` leading copies of ``strip_char`` (UTF-8 bytes) off
the row (a ``Strip`` after ``Fuse``). ``MODE_SPM`` follows ``SentencePieceProcessor::Decode``:
while the text is empty and no leading U+2581 was consumed yet (``bos_once``; without it, while
the text is empty), a piece with a leading U+2581 takes its first form (only with ``bos_strip``).

Rows are assembled as UTF-8 bytes with the GIL released, then each row becomes a ``str`` with
CPython's UTF-8 decoder, invalid sequences replaced (``errors="replace"``, one U+FFFD per
maximal invalid subpart, as Rust's ``String::from_utf8_lossy`` does: byte-level BPE forms are
raw bytes that may split a character between pieces).

Plain-Python twin: ``mtscore/kernels/reference/detok.py``.
"""
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memmove

MODE_HF = 0
MODE_SPM = 1
FLAG_SKIP = 1
FLAG_BYTE = 2
FLAG_LITERAL = 4
FLAG_LEADING_WS = 8

cdef enum:
    C_SKIP = 1
    C_BYTE = 2
    C_LITERAL = 4
    C_LEADING_WS = 8


cdef inline Py_ssize_t utf8_char_len(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Length of the valid UTF-8 character at p (n bytes available), 0 if none starts there
    (strict: no overlong forms, surrogates or code points above U+10FFFF)."""
    cdef uint8_t c = p[0], c1
    if c < 0x80:
        return 1
    if c < 0xC2 or c > 0xF4:
        return 0
    if n < 2:
        return 0
    c1 = p[1]
    if c < 0xE0:
        return 2 if 0x80 <= c1 <= 0xBF else 0
    if c == 0xE0:
        if not (0xA0 <= c1 <= 0xBF):
            return 0
    elif c == 0xED:
        if not (0x80 <= c1 <= 0x9F):
            return 0
    elif c < 0xF0:
        if not (0x80 <= c1 <= 0xBF):
            return 0
    elif c == 0xF0:
        if not (0x90 <= c1 <= 0xBF):
            return 0
    elif c == 0xF4:
        if not (0x80 <= c1 <= 0x8F):
            return 0
    elif not (0x80 <= c1 <= 0xBF):
        return 0
    if n < 3 or not (0x80 <= p[2] <= 0xBF):
        return 0
    if c < 0xF0:
        return 3
    if n < 4 or not (0x80 <= p[3] <= 0xBF):
        return 0
    return 4


cdef inline Py_ssize_t put_replacement(uint8_t* out, Py_ssize_t k) noexcept nogil:
    out[k] = 0xEF
    out[k + 1] = 0xBF
    out[k + 2] = 0xBD
    return k + 3


cdef Py_ssize_t flush_bytes(const uint8_t* run, Py_ssize_t n, uint8_t* out, Py_ssize_t k,
                            int mode) noexcept nogil:
    """Append a run of n byte-piece bytes at out[k:]; returns the new end."""
    cdef Py_ssize_t i = 0, m
    if mode == 0:  # MODE_HF: all or nothing
        while i < n:
            m = utf8_char_len(run + i, n - i)
            if m == 0:
                break
            i += m
        if i == n:
            memcpy(out + k, run, n)
            return k + n
        for i in range(n):
            k = put_replacement(out, k)
        return k
    while i < n:  # MODE_SPM: character by character
        m = utf8_char_len(run + i, n - i)
        if m == 0:
            k = put_replacement(out, k)
            i += 1
        else:
            memcpy(out + k, run + i, m)
            k += m
            i += m
    return k


def decode_rows(const int32_t[::1] values, const int64_t[::1] offsets, const uint8_t[::1] data,
                const int64_t[::1] form_offsets, const uint8_t[::1] flags,
                const uint8_t[::1] byte_values, int mode, bint bos_strip=False,
                bint bos_once=False, const uint8_t[::1] strip_char=None,
                Py_ssize_t strip_count=0):
    """CSR ids (values int32 (T,), offsets int64 (N + 1,)) -> list of N str with the piece table
    (data uint8, form_offsets int64 (2V + 1,), flags uint8 (V,), byte_values uint8 (V,)); see
    the module docstring. ValueError for an id outside [0, V) or malformed offsets / table."""
    cdef Py_ssize_t n_rows = offsets.shape[0] - 1, V = flags.shape[0], T = values.shape[0]
    cdef Py_ssize_t i, j, r, k, bound, lo, hi, n_run, pos, row_start, cut, m
    cdef Py_ssize_t sc_len = 0 if strip_char is None else strip_char.shape[0]
    cdef int32_t v
    cdef uint8_t f
    cdef bint is_bos_ws, seen
    if mode != 0 and mode != 1:
        raise ValueError(f"mode must be MODE_HF (0) or MODE_SPM (1), got {mode}")
    if n_rows < 0:
        raise ValueError("offsets must hold N + 1 >= 1 entries")
    if form_offsets.shape[0] != 2 * V + 1 or byte_values.shape[0] != V:
        raise ValueError("piece table: form_offsets must hold 2V + 1 and byte_values V entries")
    if form_offsets[0] != 0 or form_offsets[2 * V] > data.shape[0]:
        raise ValueError("piece table: form_offsets do not fit data")
    for i in range(2 * V):
        if form_offsets[i + 1] < form_offsets[i]:
            raise ValueError("piece table: form_offsets must not decrease")
    if offsets[0] != 0 or offsets[n_rows] != T:
        raise ValueError("offsets must start at 0 and end at len(values)")
    for r in range(n_rows):
        if offsets[r + 1] < offsets[r]:
            raise ValueError(f"offsets must not decrease (offsets[{r + 1}] < offsets[{r}])")
    if strip_count < 0 or (strip_count > 0 and sc_len == 0):
        raise ValueError("strip_count needs a non-empty strip_char and must be >= 0")
    # upper bound of the output: a byte piece may become U+FFFD (3 bytes)
    cdef Py_ssize_t bad = -1
    bound = 0
    with nogil:
        for j in range(T):
            v = values[j]
            if v < 0 or v >= V:
                bad = j
                break
            if flags[v] & C_BYTE:
                bound += 3
            else:
                lo = form_offsets[2 * v + 1] - form_offsets[2 * v]
                hi = form_offsets[2 * v + 2] - form_offsets[2 * v + 1]
                bound += lo if lo > hi else hi
    if bad >= 0:
        j = bad
        r = 0
        while offsets[r + 1] <= j:
            r += 1
        raise ValueError(f"ids[{r}][{j - offsets[r]}] = {values[j]} has no piece (the vocabulary "
                         f"holds {V})")
    cdef uint8_t* out = <uint8_t*>malloc(bound + 1)
    cdef uint8_t* run = <uint8_t*>malloc(T + 1)
    cdef int64_t* ends = <int64_t*>malloc((n_rows + 1) * sizeof(int64_t))
    if out == NULL or run == NULL or ends == NULL:
        free(out)
        free(run)
        free(ends)
        raise MemoryError()
    cdef list result
    try:
        with nogil:
            k = 0
            ends[0] = 0
            for r in range(n_rows):
                row_start = k
                n_run = 0
                pos = 0
                is_bos_ws = True
                seen = False
                for j in range(offsets[r], offsets[r + 1]):
                    v = values[j]
                    f = flags[v]
                    if f & C_SKIP:
                        continue
                    if f & C_BYTE:
                        run[n_run] = byte_values[v]
                        n_run += 1
                        pos += 1
                        continue
                    if n_run:
                        k = flush_bytes(run, n_run, out, k, mode)
                        n_run = 0
                    if mode == 0:
                        lo = form_offsets[2 * v + (1 if pos else 0)]
                        hi = form_offsets[2 * v + (2 if pos else 1)]
                        pos += 1
                    else:
                        if seen or k > row_start:
                            is_bos_ws = False
                        if (f & C_LEADING_WS) and not (f & C_LITERAL) and is_bos_ws and bos_strip:
                            lo = form_offsets[2 * v]
                            hi = form_offsets[2 * v + 1]
                            seen = bos_once
                        else:
                            lo = form_offsets[2 * v + 1]
                            hi = form_offsets[2 * v + 2]
                            seen = False
                    if hi > lo:
                        memcpy(out + k, &data[lo], hi - lo)
                        k += hi - lo
                if n_run:
                    k = flush_bytes(run, n_run, out, k, mode)
                if strip_count > 0:
                    cut = row_start
                    m = 0
                    while (m < strip_count and k - cut >= sc_len
                           and memcmp(out + cut, &strip_char[0], sc_len) == 0):
                        cut += sc_len
                        m += 1
                    if cut > row_start:
                        memmove(out + row_start, out + cut, k - cut)
                        k -= cut - row_start
                ends[r + 1] = k
        result = [None] * n_rows
        for r in range(n_rows):
            result[r] = PyUnicode_DecodeUTF8(<char*>out + ends[r], ends[r + 1] - ends[r], "replace")
    finally:
        free(out)
        free(run)
        free(ends)
    return result
