"""Plain-Python twin of ``mtscore/kernels/_edit_csr.pyx`` (tests only): the same names and
signatures, jiwer's default word transform spelled with the same regex and string methods
jiwer uses, and the code points of each string; ``check_texts`` and ``jiwer_split`` are shared
with the twin of ``_edit_words``.
"""
from __future__ import annotations

import re

import numpy as np

from .text_vocab import Vocab

_MULTIPLE_SPACES = re.compile(r"\s\s+")


def _csr(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(r) for r in rows], dtype=np.int64)
    values = np.array([x for r in rows for x in r], dtype=np.int32)
    return values, offsets


def check_texts(texts) -> None:
    for i, t in enumerate(texts):
        if type(t) is not str:
            raise TypeError(f"segment {i} is {type(t).__name__}, expected str")


def jiwer_split(t: str) -> list[str]:
    """jiwer's wer_default: RemoveMultipleSpaces, Strip, split on " " without empty words."""
    return [w for w in _MULTIPLE_SPACES.sub(" ", t).strip().split(" ") if len(w) >= 1]


def jiwer_words(texts: list, vocab: Vocab):
    check_texts(texts)
    return _csr([[vocab.intern(w) for w in jiwer_split(t)] for t in texts])


def code_points(texts: list, strip: bool = False):
    check_texts(texts)
    return _csr([[ord(c) for c in (t.strip() if strip else t)] for t in texts])


def _jiwer_spans(t: str):
    """``[(start, word)]``: jiwer's words with their positions in ``t`` (a separator is a run
    of two or more whitespace characters or a lone U+0020, after stripping)."""
    out = []
    lo, hi = 0, len(t)
    while lo < hi and t[lo].isspace():
        lo += 1
    while hi > lo and t[hi - 1].isspace():
        hi -= 1
    start = k = lo
    while k < hi:
        if t[k].isspace():
            r = k + 1
            while r < hi and t[r].isspace():
                r += 1
            if r - k >= 2 or t[k] == " ":
                out.append((start, t[start:k]))
                start = r
            k = r
        else:
            k += 1
    if hi > start:
        out.append((start, t[start:hi]))
    return out
