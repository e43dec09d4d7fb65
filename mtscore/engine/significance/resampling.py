"""Resampling primitives of the significance tests, each reproducing sacrebleu 2.6.0 bit for bit:
the AR mask stream, exact AR sums, the p-value and CI rules, the per-system seeds, and the
single-system bootstrap (whose machinery lives in ``metrics/bootstrap.py``, below the metric base
class that uses it for ``corpus_score(n_bootstrap=)``; its knobs ``FORCE_KERNEL``, ``CHUNK_BYTES``,
... are there).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...kernels._resample import masked_sums
from ..metrics import bootstrap
from ..metrics.base import Metric
from ..metrics.bootstrap import resolve_seed, rows_per_chunk
from ..metrics.resampled import RowScores

__all__ = [
    "DEFAULT_SAMPLES",
    "ar_sums",
    "bootstrap_ci",
    "bootstrap_scores",
    "draw_masks",
    "dyadic_scale",
    "estimate_ci",
    "p_value",
    "resolve_seed",
    "seed_for_signature",
    "system_seed",
]

#: default number of resamples / trials (sacrebleu ``PairedTest._DEFAULT_SAMPLES``)
DEFAULT_SAMPLES = {"ar": 10000, "bs": 1000}


def system_seed(seed_int: int | None) -> int | None:
    """The seed of each system's generator in a paired test (None: unseeded)."""
    # sacrebleu PairedTest.__call__: ``seed = self._seed if self._seed else None``
    return seed_int if seed_int else None


def seed_for_signature(seed_int: int | None) -> str:
    """The ``seed:`` value of a paired test's signature."""
    return str(seed_int).lower()


def estimate_ci(scores: np.ndarray) -> tuple[Any, Any]:
    """Mean and 95% CI half-width of resampled scores, exactly sacrebleu's
    ``significance.estimate_ci`` (numpy sort, indices ``n // 40`` and ``n - n // 40 - 1``,
    numpy mean; results keep the dtype of ``scores``)."""
    scores = np.sort(scores)
    n = len(scores)
    lower_idx = n // 40
    upper_idx = n - lower_idx - 1
    ci = 0.5 * (scores[upper_idx] - scores[lower_idx])
    return scores.mean(), ci


def p_value(stats: np.ndarray, real_difference: float) -> float:
    """multeval/sacrebleu p-value: ``(#(stats > delta) + 1) / (len + 1)``."""
    c = np.sum(stats > real_difference).item()
    return (c + 1) / (len(stats) + 1)


def draw_masks(rng: np.random.Generator, n_trials: int, n: int, itemsize: int = 1):
    """Yield ``(start, mask_chunk)``; the concatenation equals
    ``rng.integers(2, size=(n_trials, n), dtype=bool)`` (chunks hold multiples of 32 elements)."""
    rows = rows_per_chunk(n, itemsize, multiple=32)
    for start in range(0, n_trials, rows):
        c = min(rows, n_trials - start)
        yield start, rng.integers(2, size=(c, n), dtype=bool)


def dyadic_scale(stats: np.ndarray) -> int | None:
    """Smallest power of two 2**s (s <= 16) making every float statistic an integer, so that
    float64 sums are exact in any order; None if there is none. 1 for integer stats."""
    if stats.dtype.kind in "iub":
        return 1
    for s in range(17):
        scaled = stats * float(1 << s)
        if np.all(scaled == np.round(scaled)) and np.all(np.abs(scaled) < 2 ** 50 / max(1, len(stats))):
            return 1 << s
    return None


def ar_sums(blocks: Sequence[np.ndarray], scales: Sequence[int | None], n_trials: int,
             rng: np.random.Generator):
    """Masked sums of several (N, k_b) blocks with one mask stream.

    Blocks with a scale (integers, or floats that are integers times 1/scale) are summed
    exactly in int64 by the kernel: returns ``pos @ (block * scale)`` (T, k_b) int64.
    Blocks without one get sacrebleu's float64 matmuls: returns ``(pos @ block, neg @ block)``.
    """
    n = blocks[0].shape[0]
    int_ids = [(i, s) for i, s in enumerate(scales) if s is not None]
    flt_ids = [i for i, s in enumerate(scales) if s is None]
    xi: np.ndarray | None = None
    pi: np.ndarray | None = None
    if int_ids:
        xi = np.ascontiguousarray(np.concatenate(
            [np.round(blocks[i] * float(s)).astype(np.int64) if blocks[i].dtype.kind == "f"
             else blocks[i].astype(np.int64) for i, s in int_ids], axis=1))
        pi = np.empty((n_trials, xi.shape[1]), dtype=np.int64)
    xf: np.ndarray | None = None
    pf64: np.ndarray | None = None
    cols: np.ndarray | None = None
    if xi is not None and not bootstrap.FORCE_KERNEL:
        xf, cols = _blas_operand(xi)
        if xf is not None:
            pf64 = np.empty((rows_per_chunk(n, 8, multiple=32), xf.shape[1]), dtype=xf.dtype)
    pf = {i: (np.empty((n_trials, blocks[i].shape[1])), np.empty((n_trials, blocks[i].shape[1])))
          for i in flt_ids}
    fl = {i: np.asarray(blocks[i], dtype=np.float64) for i in flt_ids}
    for start, mask in draw_masks(rng, n_trials, n, 8 if (xf is not None or flt_ids) else 1):
        stop = start + len(mask)
        if xi is not None:
            assert pi is not None  # allocated with xi
            if xf is not None:
                assert pf64 is not None  # allocated with xf
                # every partial sum an integer the float type holds: BLAS is exact in any order
                np.matmul(mask.astype(xf.dtype), xf, out=pf64[:stop - start])
                pi[start:stop] = pf64[:stop - start] if cols is None else pf64[:stop - start, cols]
            else:
                masked_sums(xi, mask.view(np.uint8), pi[start:stop])
        if flt_ids:
            neg = ~mask
            for i in flt_ids:
                pf[i][0][start:stop] = mask @ fl[i]
                pf[i][1][start:stop] = neg @ fl[i]
    res: list[np.ndarray | tuple[np.ndarray, np.ndarray]] = []
    c = 0
    for i, b in enumerate(blocks):
        if scales[i] is not None:
            assert pi is not None  # some block has a scale
            w = b.shape[1]
            res.append(pi[:, c:c + w])
            c += w
        else:
            res.append(pf[i])
    return res


def _blas_operand(xi: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The AR statistics ``xi`` (N, k) int64 as a BLAS operand ``(x, cols)`` with ``mask @ x``
    exact: float32 when every column's absolute sum is below 2**24 (integers up to 2**24 are
    float32 values, so every partial sum of 0/1 x integer products is exact in any order; half
    the work of float64), else float64 below 2**53, else ``(None, None)`` (the int64 kernel).
    Identical columns (the reference-side statistics every system shares) are multiplied once:
    ``cols`` maps each column of ``xi`` to its column of ``x`` (None: no duplicates)."""
    bound = int(np.abs(xi).sum(axis=0).max(initial=0))
    if bound >= 2 ** 53:
        return None, None
    dtype = np.float32 if bound < 2 ** 24 else np.float64
    first: dict = {}
    cols = np.array([first.setdefault(c.tobytes(), j) for j, c in enumerate(np.ascontiguousarray(xi.T))],
                    dtype=np.intp)
    if len(first) == xi.shape[1]:
        return xi.astype(dtype), None
    keep = np.array(sorted(first.values()), dtype=np.intp)   # first occurrences, in column order
    where = np.empty(xi.shape[1], dtype=np.intp)
    where[keep] = np.arange(len(keep))
    return np.ascontiguousarray(xi[:, keep], dtype=dtype), where[cols]


def bootstrap_scores(metric, stats: np.ndarray, n_samples: int, rng: np.random.Generator) -> RowScores:
    """Scores of ``n_samples`` bootstrap resamples of one system (sacrebleu's
    ``_bootstrap_resample`` without materialising the resamples). stats: (N, k); metric: an
    mtscore or sacrebleu metric."""
    return bootstrap.bootstrap_scores(metric, stats, n_samples, rng, isinstance(metric, Metric))


def bootstrap_ci(metric, stats: np.ndarray, score, n_bootstrap: int,
                 seed: int | str | None = None):
    """Single-system 95% bootstrap CI, as sacrebleu's ``corpus_score(..., n_bootstrap=S)``.

    metric: an mtscore or sacrebleu metric; stats: (N, k) per-segment statistics (int64, or
    float64 for TER); score: the corpus ``Score``. Sets ``metric.n_bootstrap``, ``metric.seed``
    (the signature's ``bs:``/``seed:``) and ``score._mean`` / ``score._ci``; returns ``score``.
    """
    return bootstrap.bootstrap_ci(metric, stats, score, n_bootstrap, seed, isinstance(metric, Metric))

