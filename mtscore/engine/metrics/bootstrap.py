"""Bootstrap resampling of one statistics matrix, identical to sacrebleu 2.6.0: the resample
sums (sacrebleu's sequential float32 accumulation, or exact shortcuts that give the same bits),
the scores of the resamples through the metric's hooks, and the single-system 95% CI that
``Metric.corpus_score(..., n_bootstrap=S)`` reports.

It imports nothing else from ``metrics`` but ``resampled`` (the metric base class imports it);
the paired tests in the ``engine/significance`` package build on it. How the draws reproduce sacrebleu's
stream is described there.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...kernels._resample import draw_counts, pcg64_draw_counts, resample_sums
from .resampled import RowScores, Unsupported

__all__ = [
    "CHUNK_BYTES",
    "COUNT_MIN_CELLS",
    "FORCE_KERNEL",
    "RowScorer",
    "bootstrap_ci",
    "bootstrap_scores",
    "bootstrap_sums",
    "draw_indices",
    "resolve_seed",
    "rows_per_chunk",
    "score_fn",
]

# AR sums: exact float64 BLAS matmul when every sum is an integer < 2**53 (any summation order
# is then exact), the int64 kernel otherwise. Bootstrap sums: the exact counting kernels where
# their result is sacrebleu's, the sequential float32 kernel otherwise. Setting this forces the
# int64 / sequential kernels (tests).
FORCE_KERNEL = False

#: statistics matrices with at least this many cells use the counting bootstrap kernels
#: (draw counts x statistics as a BLAS product: faster than gathering rows from 50 x 10 up)
COUNT_MIN_CELLS = 0

#: largest float32 sum that is certainly exact (every integer <= 2**24 is a float32)
_F32_EXACT = 2 ** 24

# Memory budget for one chunk of drawn indices (int64), masks or draw counts (float64);
# independent of S * N.
CHUNK_BYTES = 16 << 20

#: at most this many resamples' draw counts per BLAS product
_COUNT_ROWS_MAX = 256


def resolve_seed(seed: int | str | None = None) -> tuple[int | None, str]:
    """``(seed for default_rng or None, seed string for the signature)``.

    ``seed=None`` reads ``SACREBLEU_SEED`` (default ``"12345"``); ``"none"`` (any case) means
    unseeded. The signature string is ``str(seed).lower()`` as in sacrebleu's single-system CI.
    """
    raw = os.environ.get("SACREBLEU_SEED", "12345") if seed is None else seed
    text = str(raw)
    if text.lower() == "none":
        return None, "none"
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"significance: seed {text!r} is not an integer or 'none' "
                         "(check the seed argument / SACREBLEU_SEED)") from None
    return value, text.lower()


def rows_per_chunk(n_cols: int, itemsize: int, multiple: int = 1) -> int:
    rows = max(1, CHUNK_BYTES // max(1, n_cols * itemsize))
    if multiple > 1:
        rows = max(multiple, rows - rows % multiple)
    return rows


def draw_indices(rng: np.random.Generator, n_samples: int, n: int):
    """Yield ``(start, idx_chunk)``; the concatenation equals
    ``rng.choice(n, size=(n_samples, n), replace=True)``."""
    rows = rows_per_chunk(n, 8)
    for start in range(0, n_samples, rows):
        c = min(rows, n_samples - start)
        yield start, rng.integers(0, n, size=(c, n), dtype=np.int64)


def score_fn(metric, native: bool = True):
    """The score of one summed row (sacrebleu's metric objects spell it with an underscore).
    native: ``metric`` is an mtscore metric."""
    if native:
        return metric.compute_score_from_stats
    return metric._compute_score_from_stats


class RowScorer:
    """Scores of summed statistics rows for one metric, bit-identical to calling
    ``metric.compute_score_from_stats(row).score`` on every row. native: ``metric`` is an
    mtscore :class:`~mtscore.engine.metrics.base.Metric` (else a sacrebleu metric object)."""

    def __init__(self, metric, k: int, native: bool = True):
        self.metric = metric
        self.fn = score_fn(metric, native)
        self.k = k
        # the metric's vectorised formula (its resampled_scores hook); sacrebleu's metric
        # objects, and MTSCORE_SIGNIFICANCE_SCALAR=1, score row by row
        self.vectorised = native and os.environ.get("MTSCORE_SIGNIFICANCE_SCALAR") != "1"

    # -- public ---------------------------------------------------------------------------
    def __call__(self, sums: np.ndarray) -> RowScores:
        """sums: (S, k) float32 (bootstrap) or int64/float64 (AR) rows."""
        if self.vectorised and len(sums):
            try:
                res = self.metric.resampled_scores(sums)
            except Unsupported:
                res = None
            if res is not None and self._agrees(sums, res):
                return res
            if res is not None:
                warnings.warn(f"mtscore.significance: vectorised scores differ from "
                              f"{type(self.metric).__name__}.compute_score_from_stats; using the per-row path",
                              stacklevel=2)
                self.vectorised = False
        return self._per_row(sums)

    # -- generic path ---------------------------------------------------------------------
    def _per_row(self, sums: np.ndarray) -> RowScores:
        fn = self.fn
        # copies: sacrebleu's BLEU add-k smoothing mutates the row it is given
        scalars = [fn(row.copy()).score for row in sums]
        return RowScores(None, None, scalars)

    def _agrees(self, sums: np.ndarray, res: RowScores) -> bool:
        n = len(sums)
        probe = sorted({0, n - 1, n // 2})
        got = res.scalars()
        for i in probe:
            want = self.fn(sums[i].copy()).score
            g = got[i]
            if type(g) is not type(want) and not (isinstance(g, float) and isinstance(want, float)
                                                   and type(want) in (float, np.float64)):
                return False
            if not (g == want or (g != g and want != want)):
                return False
        return True


def bootstrap_sums(blocks: Sequence[np.ndarray], n_samples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Bootstrap sums of several (N, k_b) float32 blocks with one index stream.

    Returns one (n_samples, k_b) float32 array per block, each row bit-identical to sacrebleu's
    ``block[idxs[s]].sum(0)``. Memory: the blocks, one chunk of indices and the sums.
    """
    n = blocks[0].shape[0]
    widths = [b.shape[1] for b in blocks]
    x = np.ascontiguousarray(np.concatenate(blocks, axis=1), dtype=np.float32) if len(blocks) > 1 \
        else np.ascontiguousarray(blocks[0], dtype=np.float32)
    out = np.empty((n_samples, x.shape[1]), dtype=np.float32)
    if not _counting_is_exact(x):
        _sequential_sums(x, rng, out)
    elif type(rng.bit_generator) is np.random.PCG64 and n <= 0x7FFFFFFF:
        _pcg64_counted_sums(x, rng, out)
    else:
        _counted_sums(x, rng, out)
    return _split_columns(out, widths)


def _counting_is_exact(x: np.ndarray) -> bool:
    """Whether the counting kernels may be used on the (N, k) float32 statistics ``x``.

    Exact shortcut: with non-negative integer statistics, every partial sum of sacrebleu's
    sequential float32 accumulation is at most the final sum, so while a resample's sums stay
    <= 2**24 the float32 result is the exact integer sum. That sum is computed as
    ``counts @ stats`` (float32 BLAS) from how often each row is drawn, instead of gathering
    rows. Any order of float32 multiply/adds of non-negative integers is exact while every
    intermediate is below 2**24, and once one reaches 2**24 every later one, and the result,
    stays >= 2**24 (rounding is monotone, 2**24 is a float32): so a result below 2**24 is
    exact, and resamples with a result >= 2**24 are recomputed by the sequential float32
    kernel. A corpus whose column totals are near 2**24 would mostly fall back, so counting
    is not attempted there.
    """
    return bool(not FORCE_KERNEL and x.size >= COUNT_MIN_CELLS and np.all(x >= 0)
                and np.all(x == np.floor(x))
                and float(x.sum(axis=0, dtype=np.float64).max()) < 0.9 * _F32_EXACT)


def _sequential_sums(x: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
    """sacrebleu's sequential float32 sums of drawn rows (the kernel), chunk by chunk."""
    for start, idx in draw_indices(rng, len(out), x.shape[0]):
        resample_sums(x, idx, out[start:start + len(idx)])


def _pcg64_counted_sums(x: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
    """Counting sums with numpy's own PCG64 stream drawn inside the kernel (no index arrays); a
    chunk with a sum of 2**24 or more is drawn again from its starting state and summed by the
    sequential kernel."""
    n_samples, n = len(out), x.shape[0]
    bg = rng.bit_generator
    rows = max(1, min(n_samples, _COUNT_ROWS_MAX, CHUNK_BYTES // (4 * n)))
    counts = np.empty((rows, n), dtype=np.float32)
    for start in range(0, n_samples, rows):
        dst = out[start:start + rows]
        c = counts[:len(dst)]
        state: Any = bg.state  # numpy's PCG64 state dict (a TypedDict there)
        after: Any = pcg64_draw_counts(state, c)
        sums = c @ x
        if (sums >= _F32_EXACT).any():
            bg.state = state
            _sequential_sums(x, rng, dst)
        else:
            bg.state = after
            dst[:] = sums


def _counted_sums(x: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
    """Counting sums from drawn index chunks (any bit generator); the resamples with a sum of
    2**24 or more are recomputed by the sequential kernel."""
    counts: np.ndarray | None = None
    for start, idx in draw_indices(rng, len(out), x.shape[0]):
        dst = out[start:start + len(idx)]
        if counts is None or counts.shape[0] < len(idx):
            counts = np.empty((len(idx), x.shape[0]), dtype=np.float32)
        c = counts[:len(idx)]
        draw_counts(idx, c)
        sums = c @ x
        over = np.flatnonzero((sums >= _F32_EXACT).any(axis=1))
        dst[:] = sums
        if len(over):
            fix = np.empty((len(over), x.shape[1]), dtype=np.float32)
            resample_sums(x, np.ascontiguousarray(idx[over]), fix)
            dst[over] = fix


def _split_columns(out: np.ndarray, widths: Sequence[int]) -> list[np.ndarray]:
    res, c = [], 0
    for w in widths:
        res.append(out[:, c:c + w])
        c += w
    return res


def bootstrap_scores(metric, stats: np.ndarray, n_samples: int, rng: np.random.Generator,
                     native: bool = True) -> RowScores:
    """Scores of ``n_samples`` bootstrap resamples of one system (sacrebleu's
    ``_bootstrap_resample`` without materialising the resamples). stats: (N, k); native: see
    :class:`RowScorer`."""
    stats = np.asarray(stats)
    (sums,) = bootstrap_sums([stats.astype(np.float32)], n_samples, rng)
    return RowScorer(metric, stats.shape[1], native)(sums)


class _CIScore:
    __slots__ = ("score",)

    def __init__(self, score):
        self.score = score


def bootstrap_ci(metric, stats: np.ndarray, score, n_bootstrap: int,
                 seed: int | str | None = None, native: bool = True):
    """Single-system 95% bootstrap CI, as sacrebleu's ``corpus_score(..., n_bootstrap=S)``.

    metric: an mtscore metric (or, with ``native=False``, a sacrebleu one); stats: (N, k)
    per-segment statistics (int64, or float64 for TER); score: the corpus ``Score``. Sets ``metric.n_bootstrap``, ``metric.seed``
    (the signature's ``bs:``/``seed:``) and ``score._mean`` / ``score._ci``; returns ``score``.
    """
    if n_bootstrap < 2:
        raise ValueError(f"bootstrap_ci: n_bootstrap must be > 1, got {n_bootstrap}")
    seed_int, seed_str = resolve_seed(seed)
    metric.n_bootstrap = n_bootstrap
    rng = np.random.default_rng(seed_int)
    res = bootstrap_scores(metric, stats, n_bootstrap, rng, native)
    metric.seed = seed_str
    score.estimate_ci([_CIScore(v) for v in res.scalars()])
    return score
