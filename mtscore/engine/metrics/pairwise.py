"""All-pairs score matrices (MBR, n-best, consensus) for metrics with a pairwise kernel.

``Metric.pairwise_scores(rows, cols)`` gives an ``(n, m)`` float64 matrix whose cell ``(i, j)``
equals ``metric.sentence_score(rows[i], [cols[j]]).score``. The pieces shared by the metrics'
implementations live here:

* :func:`layout`: each distinct string is scored once (sampled MBR candidates repeat often);
  a set scored against itself is marked symmetric so that kernels whose matches are symmetric
  (chrF, BLEU) compute each unordered pair once;
* :func:`fill_columns`: the kernel fills the matrix a set of columns per thread (the kernels
  release the GIL), columns dealt out round-robin so that the triangular work of a symmetric
  matrix is shared evenly.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Callable, NamedTuple

import numpy as np

from ..parallel import resolve_workers, run_parallel


class GroupNgrams(NamedTuple):
    """N-gram counts of S texts interned over their group (``_pairwise.group_ngrams``): entries
    ``ids`` / ``counts`` int32 (E,), the entries of text s, order o (0-based, over all of the
    metric's n-gram kinds) at ``offsets[s * O + o]:offsets[s * O + o + 1]``, ``totals`` int64
    (S, O) the number of n-grams of each, ``n_ids`` the number of distinct n-grams."""

    ids: np.ndarray
    counts: np.ndarray
    offsets: np.ndarray
    totals: np.ndarray
    n_ids: int


class Layout:
    """Distinct strings of a pairwise call and where the cells come from.

    ``texts``: the distinct strings (the kernel's samples); ``rows`` / ``cols`` (int64): the
    samples of the kernel's matrix rows and columns; ``symmetric``: rows are cols (a set
    against itself); ``row_of`` / ``col_of`` (int64 (n,), (m,)): the kernel row / column of
    each requested row / column."""

    __slots__ = ("col_of", "cols", "row_of", "rows", "symmetric", "texts")

    def __init__(self, texts, rows, cols, symmetric, row_of, col_of):
        self.texts = texts
        self.rows = rows
        self.cols = cols
        self.symmetric = symmetric
        self.row_of = row_of
        self.col_of = col_of

    def expand(self, kernel_out: np.ndarray) -> np.ndarray:
        """The requested (n, m) matrix from the kernel's matrix over distinct strings."""
        if (len(self.row_of) == kernel_out.shape[0] and len(self.col_of) == kernel_out.shape[1]
                and _is_identity(self.row_of) and _is_identity(self.col_of)):
            return kernel_out
        return np.ascontiguousarray(kernel_out[self.row_of][:, self.col_of])


def _is_identity(ix: np.ndarray) -> bool:
    return bool((ix == np.arange(len(ix))).all())


def _distinct(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    first: dict = {}
    inv = np.fromiter((first.setdefault(t, len(first)) for t in texts), dtype=np.int64,
                      count=len(texts))
    return list(first), inv


def layout(rows: list[str], cols: list[str] | None) -> Layout:
    """The kernel layout of ``rows`` against ``cols`` (None: ``rows`` against themselves)."""
    if cols is None:
        texts, inv = _distinct(rows)
        ar = np.arange(len(texts), dtype=np.int64)
        return Layout(texts, ar, ar, True, inv, inv)
    texts, inv = _distinct(rows + cols)
    ir, ic = inv[:len(rows)], inv[len(rows):]
    ur, uc = np.unique(ir), np.unique(ic)
    return Layout(texts, ur, uc, False, np.searchsorted(ur, ir), np.searchsorted(uc, ic))


def fill_columns(fill: Callable[[np.ndarray], None], n_cols: int, workers) -> None:
    """``fill(part)`` for column sets ``part`` (int64) that cover ``range(n_cols)``: one call,
    or one per thread with the columns dealt round-robin (workers > 1)."""
    w = max(1, min(resolve_workers(workers), n_cols))
    if w == 1:
        fill(np.arange(n_cols, dtype=np.int64))
        return
    parts = [np.arange(t, n_cols, w, dtype=np.int64) for t in range(w)]
    run_parallel(fill, parts, w)


def sentence_pairs_matrix(metric, rows: list[str], cols: list[str] | None) -> np.ndarray:
    """The generic pairwise matrix of any metric, through its batch path: every (row, column)
    pair is one segment (hypothesis ``rows[i]``, single reference ``cols[j]``) of a corpus
    scored with ``stats`` + ``scores_from_stats``; each cell equals the sentence score."""
    lay = layout(rows, cols)
    hyp_idx = np.repeat(lay.rows, len(lay.cols))
    ref_idx = np.tile(lay.cols, len(lay.rows))
    hyps = [lay.texts[i] for i in hyp_idx.tolist()]
    refs = [[lay.texts[j] for j in ref_idx.tolist()]]
    if not hyps:
        return np.zeros((len(rows), len(rows) if cols is None else len(cols)), dtype=np.float64)
    stats = metric.stats(hyps, metric.prepare(refs))
    scores = np.asarray(metric.scores_from_stats(stats), dtype=np.float64)
    return lay.expand(scores.reshape(len(lay.rows), len(lay.cols)))
