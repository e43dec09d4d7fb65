"""Plain-Python twin of ``mtscore.kernels._ter_shift`` (used by tests only): the kernel's
functions with the same names and signatures (``ter_stats_range``, ``ter_stats_shared``,
``ter_pair_ids``, ``ter_matrix``) at the end, built on sacrebleu 2.6.0's ``metrics/lib_ter.py``
followed step by step, written as explicit scans so that each step maps onto one loop of the
compiled kernel:

* :func:`translation_edit_rate` - shift search + banded edit distance on token sequences
  (any hashable tokens: str or int ids), without the row cache (results are identical: the
  cache only skips recomputing rows whose hypothesis prefix is unchanged);
* :func:`segment_stats` - ``[min edits over refs, mean ref length]`` for one segment.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
INF = 1 << 28

OP_NOP, OP_SUB, OP_INS, OP_DEL, OP_UNDEF = " ", "s", "i", "d", "x"


# ---------------------------------------------------------------------------------------------
# edit distance and shift search
# ---------------------------------------------------------------------------------------------
def band(n_h: int, n_r: int) -> list[tuple[int, int]]:
    """``[(lo, hi)]`` for rows 1..n_h (index 0 is row 0, the full row): the cells computed."""
    ratio = n_r / n_h if n_h else 1
    beam = math.ceil(ratio / 2 + BEAM_WIDTH) if ratio / 2 > BEAM_WIDTH else BEAM_WIDTH
    out = [(0, n_r + 1)]
    for i in range(1, n_h + 1):
        pd = math.floor(i * ratio)
        lo, hi = max(0, pd - beam), min(n_r + 1, pd + beam)
        if i == n_h:
            hi = n_r + 1
        out.append((lo, hi))
    return out


def edit_distance(h: Sequence, r: Sequence) -> tuple[int, str]:
    """Banded Levenshtein distance and its trace (ops from the hypothesis' point of view)."""
    n, m = len(h), len(r)
    cost = [[INF] * (m + 1) for _ in range(n + 1)]
    ops = [[OP_UNDEF] * (m + 1) for _ in range(n + 1)]
    for j in range(m + 1):
        cost[0][j], ops[0][j] = j, OP_INS
    bands = band(n, m)
    for i in range(1, n + 1):
        lo, hi = bands[i]
        prev, cur, op = cost[i - 1], cost[i], ops[i]
        for j in range(lo, hi):
            if j == 0:
                cur[0], op[0] = prev[0] + 1, OP_DEL
                continue
            eq = h[i - 1] == r[j - 1]
            c = prev[j - 1] + (0 if eq else 1)
            if c < cur[j]:
                cur[j], op[j] = c, (OP_NOP if eq else OP_SUB)
            c = prev[j] + 1
            if c < cur[j]:
                cur[j], op[j] = c, OP_DEL
            c = cur[j - 1] + 1
            if c < cur[j]:
                cur[j], op[j] = c, OP_INS
    trace = []
    i, j = n, m
    while i > 0 or j > 0:
        o = ops[i][j]
        trace.append(o)
        if o in (OP_NOP, OP_SUB):
            i -= 1
            j -= 1
        elif o == OP_INS:
            j -= 1
        elif o == OP_DEL:
            i -= 1
        else:  # pragma: no cover - unreachable cell on the path
            raise RuntimeError("undefined cell on the edit path")
    return cost[n][m], "".join(reversed(trace))


def alignment(trace: str):
    """Flip the trace (rewrite ref -> hyp) and return ``align, ref_err, hyp_err``."""
    pos_h = pos_r = -1
    align, ref_err, hyp_err = {}, [], []
    for o in trace:
        if o in (OP_NOP, OP_SUB):
            pos_h += 1
            pos_r += 1
            align[pos_r] = pos_h
            e = 1 if o == OP_SUB else 0
            hyp_err.append(e)
            ref_err.append(e)
        elif o == OP_DEL:  # flipped: an insertion in ref -> hyp, consumes a hypothesis word
            pos_h += 1
            hyp_err.append(1)
        else:  # OP_INS flipped: a deletion, consumes a reference word
            pos_r += 1
            align[pos_r] = pos_h
            ref_err.append(1)
    return align, ref_err, hyp_err


def perform_shift(w: list, start: int, length: int, target: int) -> list:
    if target < start:
        return w[:target] + w[start:start + length] + w[target:start] + w[start + length:]
    if target > start + length:
        return w[:start] + w[start + length:target] + w[start:start + length] + w[target:]
    return w[:start] + w[start + length:length + target] + w[start:start + length] + w[length + target:]


def shifted_pairs(h: Sequence, r: Sequence):
    n, m = len(h), len(r)
    for sh in range(n):
        for sr in range(m):
            if abs(sr - sh) > MAX_SHIFT_DIST:
                continue
            length = 0
            while h[sh + length] == r[sr + length] and length < MAX_SHIFT_SIZE:
                length += 1
                yield sh, sr, length
                if n == sh + length or m == sr + length:
                    break


def best_shift(h: list, r: Sequence, checked: int):
    """One round of the shift search: ``(gain, shifted hyp, checked)``."""
    pre, trace = edit_distance(h, r)
    align, ref_err, hyp_err = alignment(trace)
    best = None
    for sh, sr, length in shifted_pairs(h, r):
        if sum(hyp_err[sh:sh + length]) == 0:
            continue
        if sum(ref_err[sr:sr + length]) == 0:
            continue
        if sh <= align[sr] < sh + length:
            continue
        prev_idx = -1
        for offset in range(-1, length):
            if sr + offset == -1:
                idx = 0
            elif sr + offset in align:
                idx = align[sr + offset] + 1
            else:
                break
            if idx == prev_idx:
                continue
            prev_idx = idx
            shifted = perform_shift(h, sh, length, idx)
            key = (pre - edit_distance(shifted, r)[0], length, -sh, -idx)
            checked += 1
            if best is None or key > best[0]:  # ties: the first one found wins
                best = (key, shifted)
        if checked >= MAX_SHIFT_CANDIDATES:
            break
    if best is None:
        return 0, h, checked
    return best[0][0], best[1], checked


def translation_edit_rate(hyp: Sequence, ref: Sequence) -> tuple[int, int]:
    """``(edits, len(ref))`` for one hypothesis/reference token sequence pair."""
    if len(ref) == 0:
        return len(hyp), 0
    cur, shifts, checked = list(hyp), 0, 0
    while True:
        gain, new, checked = best_shift(cur, ref, checked)
        if checked >= MAX_SHIFT_CANDIDATES:  # the round that reached the cap is discarded
            break
        if gain <= 0:
            break
        shifts += 1
        cur = new
    return shifts + edit_distance(cur, ref)[0], len(ref)


def segment_stats(hyp: Sequence, refs: Sequence[Sequence]) -> list[float]:
    """``[best edits (min over refs, first wins), mean reference length over all refs]``."""
    best, total = int(1e16), 0
    for ref in refs:
        e, n = translation_edit_rate(hyp, ref)
        total += n
        if e < best:
            best = e
    return [best, total / len(refs)]



# ---------------------------------------------------------------------------------------------
# the kernel's interface
# ---------------------------------------------------------------------------------------------
def _check_ter_args(hyp_offsets, seg_refs, out, name: str) -> None:
    n = len(hyp_offsets) - 1
    if len(seg_refs) != n + 1 or out.shape[0] != n or out.shape[1] != 2:
        raise ValueError(f"{name}: inconsistent shapes of hyp_offsets, seg_refs and out")
    for i in range(n):
        if seg_refs[i + 1] <= seg_refs[i]:
            raise ValueError(f"TER: segment {i} has no reference (all references are None)")


def _fill_row(i: int, hyp_ids, hyp_offsets, ref_ids, ref_offsets, seg_refs, out) -> None:
    hyp = [int(x) for x in hyp_ids[hyp_offsets[i]:hyp_offsets[i + 1]]]
    refs = [[int(x) for x in ref_ids[ref_offsets[k]:ref_offsets[k + 1]]]
            for k in range(seg_refs[i], seg_refs[i + 1])]
    out[i] = segment_stats(hyp, refs)


def ter_stats_range(hyp_ids: npt.NDArray[np.int32], hyp_offsets: npt.NDArray[np.int64],
                    ref_ids: npt.NDArray[np.int32], ref_offsets: npt.NDArray[np.int64],
                    seg_refs: npt.NDArray[np.int64], out: npt.NDArray[np.float64],
                    start: int, stop: int) -> None:
    """Fill ``out[start:stop]`` (float64 (N, 2)) with ``[edits, avg_ref_len]``."""
    n = len(hyp_offsets) - 1
    _check_ter_args(hyp_offsets, seg_refs, out, "ter_stats_range")
    if start < 0 or stop > n or start > stop:
        raise ValueError(f"ter_stats_range: bad range [{start}, {stop}) for {n} segments")
    for i in range(start, stop):
        _fill_row(i, hyp_ids, hyp_offsets, ref_ids, ref_offsets, seg_refs, out)


def ter_stats_shared(hyp_ids: npt.NDArray[np.int32], hyp_offsets: npt.NDArray[np.int64],
                     ref_ids: npt.NDArray[np.int32], ref_offsets: npt.NDArray[np.int64],
                     seg_refs: npt.NDArray[np.int64], out: npt.NDArray[np.float64],
                     order: npt.NDArray[np.int64], counter: npt.NDArray[np.int64],
                     grain: int = 4, check: bool = True) -> None:
    """Claim ``grain`` positions of ``order`` at a time from ``counter[0]`` and fill those rows."""
    n = len(hyp_offsets) - 1
    if len(counter) < 1 or grain < 1:
        raise ValueError("ter_stats_shared: counter must hold one int64 and grain be >= 1")
    if check:
        _check_ter_args(hyp_offsets, seg_refs, out, "ter_stats_shared")
        for j, i in enumerate(order):
            if i < 0 or i >= n:
                raise ValueError(f"ter_stats_shared: order[{j}] = {i} is not a segment")
    if len(order) == 0 or n == 0:
        return
    while True:
        j0 = int(counter[0])
        counter[0] += grain
        if j0 >= len(order):
            return
        for j in range(j0, min(j0 + grain, len(order))):
            _fill_row(int(order[j]), hyp_ids, hyp_offsets, ref_ids, ref_offsets, seg_refs, out)


def ter_pair_ids(hyp: npt.NDArray[np.int32], ref: npt.NDArray[np.int32]) -> tuple[int, int]:
    """``(edits, len(ref))`` of one token-id pair."""
    return translation_edit_rate([int(x) for x in hyp], [int(x) for x in ref])


def ter_matrix(hyp_ids: npt.NDArray[np.int32], hyp_offsets: npt.NDArray[np.int64],
               ref_ids: npt.NDArray[np.int32], ref_offsets: npt.NDArray[np.int64],
               edits: npt.NDArray[np.int64], part: npt.NDArray[np.int64]) -> None:
    """Twin of ``_ter_shift.ter_matrix``: ``edits[a, b]`` for the columns b in ``part``."""
    n, m = len(hyp_offsets) - 1, len(ref_offsets) - 1
    if n < 0 or m < 0 or edits.shape != (n, m):
        raise ValueError("ter_matrix: edits must be (number of hypotheses, number of references)")
    for i in range(n):
        if hyp_offsets[i + 1] < hyp_offsets[i]:
            raise ValueError(f"ter_matrix: hyp_offsets decrease at {i}")
    for i in range(m):
        if ref_offsets[i + 1] < ref_offsets[i]:
            raise ValueError(f"ter_matrix: ref_offsets decrease at {i}")
    if (n and (hyp_offsets[0] < 0 or hyp_offsets[n] > len(hyp_ids))) or \
            (m and (ref_offsets[0] < 0 or ref_offsets[m] > len(ref_ids))):
        raise ValueError("ter_matrix: offsets outside the id arrays")
    for i, b in enumerate(part):
        if b < 0 or b >= m:
            raise ValueError(f"ter_matrix: part[{i}] = {b} is not a reference")
    hyps = [[int(x) for x in hyp_ids[hyp_offsets[a]:hyp_offsets[a + 1]]] for a in range(n)]
    for b in np.asarray(part).tolist():
        ref = [int(x) for x in ref_ids[ref_offsets[b]:ref_offsets[b + 1]]]
        for a in range(n):
            edits[a, b] = translation_edit_rate(hyps[a], ref)[0]
