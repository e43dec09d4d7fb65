"""Plain-Python twin of ``mtscore/kernels/_edit_distance.pyx`` (tests only): the same names and
signatures, written as the textbook definitions (no bit-parallelism):

* Levenshtein: the (n + 1) x (m + 1) dynamic programme with unit costs;
* PER: ``max(|h|, |r|) - |bag(h) & bag(r)|`` with ``collections.Counter``;
* EED: the CDER grid of Stanchev et al. (2019) as torchmetrics' ``_eed_function`` computes it.

``levenshtein_seq``, ``per_errors`` and ``pick`` are shared with the twin of ``_edit_words``.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

MULTI_CLOSEST = 0
MULTI_AVERAGE = 1
MULTI_BEST = 2

MEASURE_LEVENSHTEIN = 0
MEASURE_PER = 1


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


def levenshtein_seq(a: Sequence[int], b: Sequence[int]) -> int:
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[-1]


def per_errors(h: Sequence[int], r: Sequence[int]) -> int:
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
    errors = levenshtein_seq if measure == 0 else per_errors
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
        out[i] = pick(cand, multi_ref)


def pick(cand, multi_ref):
    """``(errors, length)`` of a segment from its references' ``[(errors, length), ...]``."""
    if multi_ref == MULTI_BEST:
        rates = [e / ln if ln else float(e) for e, ln in cand]
        e, ln = cand[rates.index(min(rates))]
        return float(e), float(ln)
    if multi_ref == MULTI_AVERAGE:
        return float(min(e for e, _ in cand)), sum(ln for _, ln in cand) / len(cand)
    e, ln = min(cand, key=lambda x: (x[0], -x[1]))  # closest: fewest errors, longest, first
    return float(e), float(ln)


def levenshtein(a, b):
    _check_symbols(a, b, "levenshtein")
    return levenshtein_seq([int(x) for x in a], [int(x) for x in b])


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
