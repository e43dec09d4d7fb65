"""BERTScore's chunk bookkeeping: unique sentences, candidate-reference pairs, the best reference.

A chunk of ``n`` segments with ``K`` reference streams becomes one list of unique (stripped)
sentences to encode and up to ``n * K`` pairs of sentence indices; after matching, each
segment keeps, per measure, the maximum over its references (bert_score's multi-reference rule).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class ChunkPlan:
    """``texts``: unique stripped sentences; ``hyp_idx`` int64 ``[n]``: each candidate's text;
    ``ph``/``pr``/``seg``: int64 ``[pairs]`` candidate text, reference text and segment of
    each pair; ``n``: segments; ``k``: reference streams; ``ids``/``cut``: the texts' token ids
    and truncation flags once tokenised (:meth:`tokenised`)."""

    texts: list[str]
    hyp_idx: np.ndarray
    ph: np.ndarray
    pr: np.ndarray
    seg: np.ndarray
    n: int
    k: int
    ids: list[np.ndarray] | None = None
    cut: np.ndarray | None = None

    def truncated(self) -> tuple[int, int]:
        """(candidates cut, reference entries cut) of this chunk (after tokenising)."""
        assert self.cut is not None
        return int(self.cut[self.hyp_idx].sum()), int(self.cut[self.pr].sum())


def plan_chunk(cands: Sequence[str], streams: Sequence[Sequence[str | None]]) -> ChunkPlan:
    """The chunk's unique sentences and pairs (a ``None`` reference makes no pair)."""
    n = len(cands)
    index: dict[str, int] = {}
    texts: list[str] = []

    def idx(s: str) -> int:
        key = s.strip()
        j = index.get(key)
        if j is None:
            j = index[key] = len(texts)
            texts.append(key)
        return j

    hyp_idx = np.fromiter((idx(c) for c in cands), dtype=np.int64, count=n)
    pair_h: list[int] = []
    pair_r: list[int] = []
    pair_seg: list[int] = []
    for s in streams:
        for i, r in enumerate(s):
            if r is not None:
                pair_h.append(int(hyp_idx[i]))
                pair_r.append(idx(r))
                pair_seg.append(i)
    return ChunkPlan(texts, hyp_idx, np.asarray(pair_h, dtype=np.int64), np.asarray(pair_r, dtype=np.int64),
                     np.asarray(pair_seg, dtype=np.int64), n, len(streams))


def best_over_refs(prf: np.ndarray, plan: ChunkPlan) -> np.ndarray:
    """float64 ``[n, 3]``: per segment, the maximum of P, R and F over its pairs (each measure
    on its own, NaN-propagating like torch.max); ValueError for a segment without any pair."""
    n, seg = plan.n, plan.seg
    if plan.k == 1 and len(seg) == n:
        return prf
    counts = np.bincount(seg, minlength=n)
    if (counts == 0).any():
        i = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(f"BERTScore: segment {i} has no reference (all streams are None there)")
    out = np.full((n, 3), -np.inf)
    for m in range(3):
        np.maximum.at(out[:, m], seg, prf[:, m])
    return out


def quirk_flags(lengths: np.ndarray, plan: ChunkPlan, batch: int | None) -> tuple[np.ndarray, np.ndarray]:
    """uint8 ``[pairs]`` clamp flags of bert_score's zero-padding quirk for its ``batch`` size
    (single reference only; all zero when ``batch`` is None/0): a candidate's precision maxima
    range over a padded (zero) reference position when a longer reference shares its batch, and
    the other way round for recall."""
    n = len(plan.ph)
    cp = np.zeros(n, dtype=np.uint8)
    cr = np.zeros(n, dtype=np.uint8)
    if batch and plan.k == 1:
        lh = lengths[plan.ph]
        lr = lengths[plan.pr]
        for s in range(0, n, batch):
            cp[s:s + batch] = lr[s:s + batch] < lr[s:s + batch].max()
            cr[s:s + batch] = lh[s:s + batch] < lh[s:s + batch].max()
    return cp, cr
