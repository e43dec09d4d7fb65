"""Plain-Python twin of ``mtscore/kernels/_meteor.pyx`` (tests only): the same name and
signature, written the way NLTK's ``meteor_score`` module is (a dict from key to its free
reference positions, popped from the end; hypothesis tokens from right to left; leftover lists
rebuilt after each stage; chunks counted over the matches sorted by hypothesis position).
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np


def _stage(hyp: list[tuple[int, object]], ref: list[tuple[int, int]], is_set: bool):
    """One matching stage over leftover ``(position, key)`` lists (a set stage: the hypothesis
    side holds tuples of keys): ``(matches [(hyp position, ref position)], hyp left, ref left)``."""
    positions: dict[int, list[int]] = defaultdict(list)
    for j, (_, key) in enumerate(ref):
        positions[key].append(j)
    matched_h, matched_r, pairs = set(), set(), []
    for i in range(len(hyp))[::-1]:
        candidates = hyp[i][1] if is_set else (hyp[i][1],)
        best_j, best_key = -1, None
        for key in candidates:  # type: ignore[union-attr]
            p = positions.get(key)
            if p and p[-1] > best_j:
                best_j, best_key = p[-1], key
        if best_key is not None:
            positions[best_key].pop()
            matched_h.add(i)
            matched_r.add(best_j)
            pairs.append((hyp[i][0], ref[best_j][0]))
    return (pairs, [x for i, x in enumerate(hyp) if i not in matched_h],
            [x for j, x in enumerate(ref) if j not in matched_r])


def _count_chunks(matches: list[tuple[int, int]]) -> int:
    chunks = 1
    for a, b in zip(matches, matches[1:]):
        if not (b[0] == a[0] + 1 and b[1] == a[1] + 1):
            chunks += 1
    return chunks


def _pair(hyp_rows, ref_rows, weights, syn, syn_stage, alpha, beta, gamma):
    """``(score, matches, chunks)`` of one hypothesis against one reference."""
    weight_of: dict[int, float] = {}
    matches: list[tuple[int, int]] = []
    n_stages = len(weights)
    hyp_left: list = list(range(len(hyp_rows)))
    ref_left: list = list(range(len(ref_rows)))
    for s in range(n_stages):
        is_set = s == syn_stage
        h = [(i, syn[hyp_rows[i][s]] if is_set else hyp_rows[i][s]) for i in hyp_left]
        r = [(j, ref_rows[j][s]) for j in ref_left]
        pairs, h, r = _stage(h, r, is_set)
        for i, _ in pairs:
            weight_of[i] = float(weights[s])
        matches += pairs
        hyp_left, ref_left = [i for i, _ in h], [j for j, _ in r]
    matches.sort()
    m = len(matches)
    chunks = _count_chunks(matches) if m else 0
    wsum = 0.0
    for i, _ in matches:
        wsum += weight_of[i]
    try:
        precision = wsum / len(hyp_rows)
        recall = wsum / len(ref_rows)
        fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
        frag = float(chunks) / m
    except ZeroDivisionError:
        return 0.0, m, chunks
    return (1 - gamma * frag ** beta) * fmean, m, chunks


def meteor_scores(hyp_keys, hyp_offsets, ref_keys, ref_offsets, ref_lo, ref_hi, weights,
                  syn_values, syn_offsets, syn_stage, n_keys, alpha, beta, gamma, out,
                  start=0, stop=-1):
    n = len(hyp_offsets) - 1
    if stop < 0:
        stop = n
    if not (0 <= start <= stop <= n):
        raise ValueError(f"meteor_scores: range {start}:{stop} outside 0:{n}")
    hk, rk = np.asarray(hyp_keys).tolist(), np.asarray(ref_keys).tolist()
    n_stages = len(weights)
    if np.asarray(hyp_keys).shape[1:] != (n_stages,) or np.asarray(ref_keys).shape[1:] != (n_stages,):
        raise ValueError("meteor_scores: hyp_keys, ref_keys and weights must have the same number of stages")
    for keys, what in ((rk, "reference"), (hk, "hypothesis")):
        for row in keys:
            for s, k in enumerate(row):
                limit = len(syn_offsets) - 1 if (s == syn_stage and what == "hypothesis") else n_keys
                if not 0 <= k < limit:
                    raise ValueError(f"meteor_scores: {what} key {k} outside [0, {limit})")
    syn = [tuple(int(x) for x in syn_values[syn_offsets[r]:syn_offsets[r + 1]])
           for r in range(len(syn_offsets) - 1)]
    for i in range(start, stop):
        hyp_rows = hk[hyp_offsets[i]:hyp_offsets[i + 1]]
        best = (math.nan, 0, 0)
        for r in range(int(ref_lo[i]), int(ref_hi[i])):
            cand = _pair(hyp_rows, rk[ref_offsets[r]:ref_offsets[r + 1]], weights, syn, syn_stage,
                         alpha, beta, gamma)
            if r == ref_lo[i] or cand[0] > best[0]:
                best = cand
        out[i, 0], out[i, 1], out[i, 2] = best[0], float(best[1]), float(best[2])
