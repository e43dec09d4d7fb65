"""Plain-Python twin of ``mtscore/kernels/_edit.pyx`` (tests only): the same names and
signatures, written as the textbook definitions (no bit-parallelism):

* words: jiwer's default transform spelled with the same regex and string methods jiwer uses;
* Levenshtein: the (n + 1) x (m + 1) dynamic programme with unit costs;
* PER: ``max(|h|, |r|) - |bag(h) & bag(r)|`` with ``collections.Counter``;
* EED: the CDER grid of Stanchev et al. (2019) as torchmetrics' ``_eed_function`` computes it.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from .text import Vocab

MULTI_CLOSEST = 0
MULTI_AVERAGE = 1
MULTI_BEST = 2

MEASURE_LEVENSHTEIN = 0
MEASURE_PER = 1

_MULTIPLE_SPACES = re.compile(r"\s\s+")


def _csr(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(r) for r in rows], dtype=np.int64)
    values = np.array([x for r in rows for x in r], dtype=np.int32)
    return values, offsets


def _check_texts(texts) -> None:
    for i, t in enumerate(texts):
        if type(t) is not str:
            raise TypeError(f"segment {i} is {type(t).__name__}, expected str")


def _jiwer_split(t: str) -> list[str]:
    """jiwer's wer_default: RemoveMultipleSpaces, Strip, split on " " without empty words."""
    return [w for w in _MULTIPLE_SPACES.sub(" ", t).strip().split(" ") if len(w) >= 1]


def jiwer_words(texts: list, vocab: Vocab):
    _check_texts(texts)
    return _csr([[vocab.intern(w) for w in _jiwer_split(t)] for t in texts])


def code_points(texts: list, strip: bool = False):
    _check_texts(texts)
    return _csr([[ord(c) for c in (t.strip() if strip else t)] for t in texts])


def _check_csr(values, offsets, what: str, name: str) -> None:
    if len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(values):
        raise ValueError(f"{name}: {what} offsets must start at 0 and end at len({what} values)")
    if (np.diff(offsets) < 0).any():
        raise ValueError(f"{name}: {what} offsets must not decrease")


def _check_segments(hyp, hyp_offsets, ref, ref_offsets, seg_refs, name: str) -> None:
    n = len(hyp_offsets) - 1
    _check_csr(hyp, hyp_offsets, "hypothesis", name)
    _check_csr(ref, ref_offsets, "reference", name)
    if len(seg_refs) != n + 1 or seg_refs[0] != 0 or seg_refs[n] > len(ref_offsets) - 1:
        raise ValueError(f"{name}: seg_refs must hold N + 1 offsets into the references")
    if (np.diff(seg_refs) < 0).any():
        raise ValueError(f"{name}: seg_refs must not decrease")


def _check_symbols(a, b, name: str) -> None:
    if (len(a) and int(np.min(a)) < 0) or (len(b) and int(np.min(b)) < 0):
        raise ValueError(f"{name}: symbols must be non-negative")


def _levenshtein(a: Sequence[int], b: Sequence[int]) -> int:
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[-1]


def _per_errors(h: Sequence[int], r: Sequence[int]) -> int:
    matches = sum((Counter(h) & Counter(r)).values())
    return max(len(h), len(r)) - matches


def edit_stats_range(hyp, hyp_offsets, ref, ref_offsets, seg_refs, out, measure=0, multi_ref=0,
                     start=0, stop=-1):
    n = len(hyp_offsets) - 1
    if stop < 0:
        stop = n
    _check_segments(hyp, hyp_offsets, ref, ref_offsets, seg_refs, "edit_stats_range")
    if out.shape != (n, 2):
        raise ValueError("edit_stats_range: out must have shape (N, 2)")
    if measure not in (0, 1) or multi_ref not in (0, 1, 2):
        raise ValueError("edit_stats_range: measure must be 0 or 1 and multi_ref 0, 1 or 2")
    if start < 0 or stop > n or start > stop:
        raise ValueError(f"edit_stats_range: bad range [{start}, {stop}) for {n} segments")
    if stop == start:
        return
    _check_symbols(hyp, ref, "edit_stats_range")
    errors = _levenshtein if measure == 0 else _per_errors
    for i in range(start, stop):
        refs = range(int(seg_refs[i]), int(seg_refs[i + 1]))
        if not refs:
            out[i] = (0.0, 0.0)
            continue
        h = [int(x) for x in hyp[hyp_offsets[i]:hyp_offsets[i + 1]]]
        cand = []
        for a in refs:
            r = [int(x) for x in ref[ref_offsets[a]:ref_offsets[a + 1]]]
            cand.append((errors(h, r), len(r)))
        out[i] = _pick(cand, multi_ref)


def _pick(cand, multi_ref):
    """``(errors, length)`` of a segment from its references' ``[(errors, length), ...]``."""
    if multi_ref == MULTI_BEST:
        rates = [e / ln if ln else float(e) for e, ln in cand]
        e, ln = cand[rates.index(min(rates))]
        return float(e), float(ln)
    if multi_ref == MULTI_AVERAGE:
        return float(min(e for e, _ in cand)), sum(ln for _, ln in cand) / len(cand)
    e, ln = min(cand, key=lambda x: (x[0], -x[1]))  # closest: fewest errors, longest, first
    return float(e), float(ln)


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


def word_stats_texts(hyps, refs, ref_lo, ref_hi, out, measure=0, multi_ref=0, start=0, stop=-1):
    n, n_refs = len(hyps), len(refs)
    if stop < 0:
        stop = n
    if len(ref_lo) != n or len(ref_hi) != n or out.shape != (n, 2):
        raise ValueError("word_stats_texts: ref_lo, ref_hi and out must have N rows (out: (N, 2))")
    if measure not in (0, 1) or multi_ref not in (0, 1, 2):
        raise ValueError("word_stats_texts: measure must be 0 or 1 and multi_ref 0, 1 or 2")
    if start < 0 or stop > n or start > stop:
        raise ValueError(f"word_stats_texts: bad range [{start}, {stop}) for {n} segments")
    for i in range(start, stop):
        if ref_lo[i] < 0 or ref_hi[i] > n_refs or ref_lo[i] > ref_hi[i]:
            raise ValueError(f"word_stats_texts: reference range of segment {i} out of bounds")
    if stop == start:
        return
    _check_texts(hyps[start:stop])
    used = [a for i in range(start, stop) for a in range(int(ref_lo[i]), int(ref_hi[i]))]
    if used:
        _check_texts(refs[min(used):max(used) + 1])
    errors = _levenshtein if measure == 0 else _per_errors
    for i in range(start, stop):
        if ref_hi[i] == ref_lo[i]:
            out[i] = (0.0, 0.0)
            continue
        h = _jiwer_split(hyps[i])
        ids = {w: k for k, w in enumerate(dict.fromkeys(h))}
        hid = [ids[w] for w in h]
        cand = []
        for a in range(int(ref_lo[i]), int(ref_hi[i])):
            r = [ids.get(w, -1) for w in _jiwer_split(refs[a])]  # -1: absent, matches nothing
            cand.append((errors(hid, r), len(r)))
        out[i] = _pick(cand, multi_ref)


class WordSets:
    """The reference strings prepared once: each one's jiwer words (the kernel keeps a hash set
    of those of strings of <= 64 words; the numbers do not depend on it)."""

    def __init__(self, refs: list):
        _check_texts(refs)
        self._refs = list(refs)

    def __len__(self) -> int:
        return len(self._refs)


def word_stats_sets(hyps, sets, ref_lo, ref_hi, out, multi_ref=0, start=0, stop=-1):
    if not isinstance(sets, WordSets):
        raise TypeError("word_stats_sets: sets must be a WordSets")
    word_stats_texts(hyps, sets._refs, ref_lo, ref_hi, out, MEASURE_LEVENSHTEIN, multi_ref, start, stop)


def levenshtein(a, b):
    _check_symbols(a, b, "levenshtein")
    return _levenshtein([int(x) for x in a], [int(x) for x in b])


def _eed(hyp: Sequence[int], ref: Sequence[int], alpha: float, rho: float, deletion: float,
         insertion: float) -> float:
    """torchmetrics' ``_eed_function`` on code-point sequences."""
    visits = [-1] * (len(hyp) + 1)
    row = [1.0] * (len(hyp) + 1)
    row[0] = 0.0
    for w in range(1, len(ref) + 1):
        nxt = [0.0] * (len(hyp) + 1)
        for i in range(len(hyp) + 1):
            if i > 0:
                nxt[i] = min(nxt[i - 1] + deletion, row[i - 1] + (hyp[i - 1] != ref[w - 1]),
                             row[i] + insertion)
            else:
                nxt[i] = row[i] + 1.0
        mi = nxt.index(min(nxt))
        visits[mi] += 1
        if ref[w - 1] == 32:  # a long jump after each blank of the reference
            jump = alpha + nxt[mi]
            nxt = [min(x, jump) for x in nxt]
        row = nxt
    coverage = rho * sum(x if x >= 0 else 1 for x in visits)
    return float(min(1, (row[-1] + coverage) / (float(len(ref)) + coverage)))


def eed_scores(hyp, hyp_offsets, ref, ref_offsets, seg_refs, alpha=2.0, rho=0.3, deletion=0.2,
               insertion=1.0):
    _check_segments(hyp, hyp_offsets, ref, ref_offsets, seg_refs, "eed_scores")
    if not (alpha >= 0 and rho >= 0 and deletion >= 0 and insertion >= 0):
        raise ValueError("eed_scores: alpha, rho, deletion and insertion must be non-negative")
    if rho == 0 and (np.diff(ref_offsets) == 0).any():
        raise ValueError("eed_scores: an empty reference with rho = 0 divides by zero")
    n = len(hyp_offsets) - 1
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        h = [int(x) for x in hyp[hyp_offsets[i]:hyp_offsets[i + 1]]]
        best = float("nan")
        for k, a in enumerate(range(int(seg_refs[i]), int(seg_refs[i + 1]))):
            r = [int(x) for x in ref[ref_offsets[a]:ref_offsets[a + 1]]]
            s = _eed(h, r, alpha, rho, deletion, insertion)
            if k == 0 or s < best:
                best = s
        out[i] = best
    return out
