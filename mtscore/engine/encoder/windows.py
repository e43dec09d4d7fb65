"""Sliding-window encoding of segments longer than the model's maximum length (opt-in).

bert_score cuts a segment at ``max_length`` tokens, so the tail never takes part in the score. With
the window, the text between the special tokens (``head`` before, ``tail`` after: ``[CLS]`` and
``[SEP]`` for BERT) is cut into windows of ``width = max_length - head - tail`` tokens that overlap by
``overlap`` tokens, each encoded as ``specials + slice + specials``; the last window ends at the
segment's end. Every token keeps the embedding of the window where it sits farthest from an edge
(the most context on both sides; the earlier window on a tie), the leading specials that of the
first window and the trailing specials that of the last. The stitched sequence has exactly the
segment's untruncated tokens, so the greedy matching and idf treat it like any other segment.
Segments that fit are encoded as they are: with no long segment the result equals the plain encoder.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

import numpy as np

__all__ = ["DEFAULT_OVERLAP", "embed_windowed", "window_owners", "window_starts"]

#: tokens shared by neighbouring windows: each token keeps at least half of it as context on
#: either side (apart from the segment's own ends)
DEFAULT_OVERLAP = 256


def window_starts(n: int, width: int, overlap: int) -> list[int]:
    """Start offsets of windows of ``width`` tokens over ``n`` tokens, ``overlap`` shared between
    neighbours; the last window ends at ``n``. ValueError naming ``window_overlap`` when the
    overlap leaves no room to advance."""
    if width < 1 or not 0 <= overlap < width:
        raise ValueError(f"window_overlap={overlap}: must be at least 0 and below the window width "
                         f"{width} (the model's maximum length minus its special tokens)")
    if n <= width:
        return [0]
    stride = width - overlap
    starts = list(range(0, n - width, stride))
    starts.append(n - width)
    return starts


def window_owners(n: int, width: int, starts: Sequence[int]) -> np.ndarray:
    """int64 ``[n]``: for each content token, the window where it is farthest from an edge."""
    pos = np.arange(n)[None, :]
    s = np.asarray(starts, dtype=np.int64)[:, None]
    margin = np.minimum(pos - s, s + width - 1 - pos)
    margin[(pos < s) | (pos >= s + width)] = -1
    return np.argmax(margin, axis=0)  # first maximum: the earlier window on a tie


def embed_windowed(encoder, ids: Sequence[np.ndarray], head: int, tail: int, max_length: int,
                   overlap: int = DEFAULT_OVERLAP, normalize: bool = True,
                   progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Like ``encoder.embed(ids)`` (float32 ``[total_tokens, hidden]``, int64 offsets ``[n+1]``)
    for untruncated ``ids``: segments over ``max_length`` tokens are encoded in windows and
    stitched (see the module docstring). ``progress``: passed to ``encoder.embed`` (it then counts
    windows, not segments)."""
    width = max_length - head - tail
    pieces: list[np.ndarray] = []
    plan: list[tuple[int, list[int]]] = []  # (first piece, window starts) per segment
    for x in ids:
        if len(x) <= max_length:
            plan.append((len(pieces), []))
            pieces.append(x)
            continue
        n_in = len(x) - head - tail
        starts = window_starts(n_in, width, overlap)
        plan.append((len(pieces), starts))
        pre, body, post = x[:head], x[head:len(x) - tail], x[len(x) - tail:]
        pieces.extend(np.concatenate([pre, body[s:s + width], post]) for s in starts)
    kw = {} if progress is None else {"progress": progress}  # duck-typed encoders need not take it
    emb_p, off_p = encoder.embed(pieces, normalize=False, **kw)
    lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    emb = np.empty((int(offsets[-1]), emb_p.shape[1]), dtype=np.float32)
    for j, (first, starts) in enumerate(plan):
        dst = emb[offsets[j]:offsets[j + 1]]
        if not starts:
            dst[:] = emb_p[off_p[first]:off_p[first + 1]]
            continue
        wins = [emb_p[off_p[first + k]:off_p[first + k + 1]] for k in range(len(starts))]
        n_in = len(dst) - head - tail
        owner = window_owners(n_in, width, starts)
        for k, s in enumerate(starts):
            pos = np.flatnonzero(owner == k)
            dst[head + pos] = wins[k][head + pos - s]
        dst[:head] = wins[0][:head]
        if tail:
            dst[len(dst) - tail:] = wins[-1][len(wins[-1]) - tail:]
    if normalize and len(emb):
        emb /= np.sqrt(np.einsum("ij,ij->i", emb, emb, dtype=np.float32))[:, None]
    return emb, offsets
