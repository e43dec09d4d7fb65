"""Plain-Python twin of ``mtscore.kernels._detok`` (tests only): the same piece-table decoding,
one token at a time on Python bytes."""
from __future__ import annotations

import numpy as np

MODE_HF = 0
MODE_SPM = 1
FLAG_SKIP = 1
FLAG_BYTE = 2
FLAG_LITERAL = 4
FLAG_LEADING_WS = 8

_FFFD = "\ufffd".encode()


def _valid_char_len(b: bytes) -> int:
    """Length of the valid UTF-8 character that b starts with, 0 if none (Python's strict codec)."""
    for m in (1, 2, 3, 4):
        if len(b) >= m:
            try:
                b[:m].decode("utf-8")
                return m
            except UnicodeDecodeError:
                pass
    return 0


def _run_bytes(run: bytes, mode: int) -> bytes:
    if mode == MODE_HF:  # tokenizers' ByteFallback: the whole run, or U+FFFD per byte
        try:
            run.decode("utf-8")
            return run
        except UnicodeDecodeError:
            return _FFFD * len(run)
    out, i = b"", 0  # SentencePiece: one character at a time
    while i < len(run):
        m = _valid_char_len(run[i:])
        out += run[i:i + m] if m else _FFFD
        i += m or 1
    return out


def decode_rows(values, offsets, data, form_offsets, flags, byte_values, mode: int,
                bos_strip: bool = False, bos_once: bool = False,
                strip_char: np.ndarray | None = None, strip_count: int = 0) -> list[str]:
    values, offsets = np.asarray(values), np.asarray(offsets)
    data, form_offsets = bytes(np.asarray(data)), np.asarray(form_offsets)
    flags, byte_values = np.asarray(flags), np.asarray(byte_values)
    n_rows, V, T = len(offsets) - 1, len(flags), len(values)
    sc = b"" if strip_char is None else bytes(np.asarray(strip_char))
    if mode not in (MODE_HF, MODE_SPM):
        raise ValueError(f"mode must be MODE_HF (0) or MODE_SPM (1), got {mode}")
    if n_rows < 0:
        raise ValueError("offsets must hold N + 1 >= 1 entries")
    if len(form_offsets) != 2 * V + 1 or len(byte_values) != V:
        raise ValueError("piece table: form_offsets must hold 2V + 1 and byte_values V entries")
    if form_offsets[0] != 0 or form_offsets[2 * V] > len(data):
        raise ValueError("piece table: form_offsets do not fit data")
    if np.any(np.diff(form_offsets) < 0):
        raise ValueError("piece table: form_offsets must not decrease")
    if offsets[0] != 0 or offsets[n_rows] != T:
        raise ValueError("offsets must start at 0 and end at len(values)")
    for r in range(n_rows):
        if offsets[r + 1] < offsets[r]:
            raise ValueError(f"offsets must not decrease (offsets[{r + 1}] < offsets[{r}])")
    if strip_count < 0 or (strip_count > 0 and not sc):
        raise ValueError("strip_count needs a non-empty strip_char and must be >= 0")
    for j in range(T):
        if not 0 <= values[j] < V:
            r = int(np.searchsorted(offsets, j, side="right")) - 1
            raise ValueError(f"ids[{r}][{j - offsets[r]}] = {values[j]} has no piece (the vocabulary "
                             f"holds {V})")

    def form(v: int, k: int) -> bytes:
        return data[form_offsets[2 * v + k]:form_offsets[2 * v + k + 1]]

    out = []
    for r in range(n_rows):
        text, run, pos, is_bos_ws, seen = b"", b"", 0, True, False
        for j in range(offsets[r], offsets[r + 1]):
            v = int(values[j])
            f = int(flags[v])
            if f & FLAG_SKIP:
                continue
            if f & FLAG_BYTE:
                run += bytes([int(byte_values[v])])
                pos += 1
                continue
            if run:
                text, run = text + _run_bytes(run, mode), b""
            if mode == MODE_HF:
                text += form(v, 0 if pos == 0 else 1)
                pos += 1
            else:
                if seen or text:
                    is_bos_ws = False
                if f & FLAG_LEADING_WS and not f & FLAG_LITERAL and is_bos_ws and bos_strip:
                    text += form(v, 0)
                    seen = bos_once
                else:
                    text += form(v, 1)
                    seen = False
        if run:
            text += _run_bytes(run, mode)
        for _ in range(strip_count):
            if text.startswith(sc):
                text = text[len(sc):]
        out.append(text.decode("utf-8", errors="replace"))
    return out
