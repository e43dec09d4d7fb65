"""Corpus scores per sentence bucket: segments grouped by reference or source length
(compare-mt's ``LengthSentenceBucketer``: default edges 10, 20, 30, 40, 50, 60 tokens, so the
buckets ``<10``, ``[10,20)``, ..., ``>=60``), each bucket scored by any registered corpus metric
from that metric's per-segment statistics (the statistics are additive: a bucket's score is
``compute_score_from_stats`` of the sum of its rows, exactly the corpus score of its segments).

Error bars: sacrebleu's single-system bootstrap (``corpus_score(..., n_bootstrap=S)``; 95% CI
half-width from the sorted resample scores, :func:`mtscore.engine.metrics.bootstrap.bootstrap_ci`)
run on each bucket's rows with a fresh ``numpy.random.default_rng(seed)``, so each bucket's
interval equals what ``mtscore``/sacrebleu print for that bucket's segments with
``SACREBLEU_SEED=seed``.
"""
from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...engine.metrics.bootstrap import RowScorer, bootstrap_sums, resolve_seed
from ...engine.metrics.registry import make_metric
from ..errors import AnalysisInputError
from .edges import bucket_indices, bucket_labels, check_edges
from .tokens import Tokens

__all__ = ["DEFAULT_LENGTH_EDGES", "BucketScores", "bucket_scores", "estimate_ci_rows",
           "length_bucket_scores", "length_buckets", "metrics_bucket_scores"]

#: compare-mt's default sentence-length bucket edges (tokens)
DEFAULT_LENGTH_EDGES = (10, 20, 30, 40, 50, 60)


@dataclass(frozen=True)
class BucketScores:
    """Scores of S systems in B buckets.

    ``labels`` (B,); ``counts`` int64 (B,) segments per bucket; ``scores`` float64 (S, B) the
    corpus score of each bucket's segments (NaN for an empty bucket); ``mean`` / ``ci`` float64
    (S, B) the bootstrap mean and 95% CI half-width (NaN where there are no resamples:
    ``n_bootstrap`` 0 or an empty bucket); ``n_bootstrap`` and ``seed`` as used."""

    labels: tuple[str, ...]
    counts: np.ndarray
    scores: np.ndarray
    mean: np.ndarray
    ci: np.ndarray
    n_bootstrap: int
    seed: int


def length_buckets(segments: Sequence[Tokens], edges: Sequence[float] = DEFAULT_LENGTH_EDGES
                   ) -> tuple[np.ndarray, tuple[str, ...]]:
    """``(bucket int64 (N,), labels (B,))``: the length bucket (token count) of each segment
    (reference or source token lists) and compare-mt's labels of ``edges``."""
    e = check_edges(edges, "edges")
    return bucket_indices([len(s) for s in segments], e), bucket_labels(e)


def bucket_scores(metric, stats: Sequence[np.ndarray], buckets: np.ndarray,
                  labels: Sequence[str], n_bootstrap: int = 1000, seed: int = 12345) -> BucketScores:
    """Per-bucket scores of S systems from their statistics.

    ``metric``: an mtscore metric object; ``stats``: S arrays (N, k) of its per-segment
    statistics (``metric.systems_stats``); ``buckets``: int (N,), each segment's bucket in
    ``0 .. len(labels) - 1``; ``n_bootstrap``: resamples per bucket (0: no CI, else >= 2).
    Like ``corpus_score(..., n_bootstrap=...)``, the bootstrap sets ``metric.n_bootstrap`` and
    ``metric.seed`` (its signature's ``bs:`` / ``rs:``)."""
    return metrics_bucket_scores([metric], [stats], buckets, labels, n_bootstrap, seed)[0]


def metrics_bucket_scores(metrics: Sequence, stats: Sequence[Sequence[np.ndarray]], buckets: np.ndarray,
                          labels: Sequence[str], n_bootstrap: int = 1000,
                          seed: int = 12345) -> list[BucketScores]:
    """:func:`bucket_scores` of M metrics over the same buckets (``stats[m]``: S arrays (N, k_m)
    of metric ``m``), the same numbers with the resampled rows drawn once per bucket for all
    metrics: each metric's bucket_scores draws the same indices (``default_rng(seed)`` per
    bucket)."""
    b = np.asarray(buckets)
    n_b = len(labels)
    if b.ndim != 1 or b.dtype.kind not in "iu":
        raise AnalysisInputError(f"buckets must be a 1-D integer array, got shape {b.shape}, dtype {b.dtype}")
    if len(b) and (b.min() < 0 or b.max() >= n_b):
        raise AnalysisInputError(f"buckets must be in 0..{n_b - 1} (one per label), got {int(b.min())}.."
                                 f"{int(b.max())}")
    if len(metrics) != len(stats):
        raise AnalysisInputError(f"{len(metrics)} metrics but statistics of {len(stats)}")
    if not (n_bootstrap == 0 or (isinstance(n_bootstrap, int) and n_bootstrap >= 2)):
        raise AnalysisInputError(f"n_bootstrap must be 0 (no CI) or >= 2, got {n_bootstrap!r}")
    mats: list[list[np.ndarray]] = []
    for st_m in stats:
        if len(st_m) == 0:
            raise AnalysisInputError("stats must hold at least one system's statistics")
        mats.append([])
        for s, st in enumerate(st_m):
            m = np.asarray(st)
            if m.ndim != 2 or m.shape[0] != len(b):
                raise AnalysisInputError(f"stats[{s}] has shape {m.shape}; expected ({len(b)}, k): one row "
                                         "per segment of buckets")
            mats[-1].append(m)
    counts = np.bincount(b, minlength=n_b).astype(np.int64)
    out = []
    seed_int, seed_str = resolve_seed(seed)
    # per bucket: the bootstrap sums of every metric's and system's block from one index stream
    # (bootstrap_sums), as each system's own bootstrap_ci(seed) would draw it
    drawn: list[list[np.ndarray]] = [[] for _ in metrics]
    drawn_buckets = []
    for j in range(n_b):
        rows = np.flatnonzero(b == j)
        if len(rows) == 0 or not n_bootstrap:
            continue
        blocks = [m[rows].astype(np.float32) for ms in mats for m in ms]
        sums = bootstrap_sums(blocks, n_bootstrap, np.random.default_rng(seed_int))
        i = 0
        for d, ms in zip(drawn, mats):
            d.append(np.concatenate(sums[i:i + len(ms)]))
            i += len(ms)
        drawn_buckets.append(j)
    for metric, ms, d in zip(metrics, mats, drawn):
        shape = (len(ms), n_b)
        scores, mean, ci = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
        for j in range(n_b):
            rows = np.flatnonzero(b == j)
            if len(rows):
                for s, m in enumerate(ms):
                    scores[s, j] = metric.compute_score_from_stats(metric.sum_stats(m[rows])).score
        if d:
            # every resample of every system and bucket scored in one call (row by row the same
            # scores), then Score.estimate_ci's mean and half-width of each (system, bucket)
            res = RowScorer(metric, d[0].shape[1])(np.concatenate(d))
            if res.values is not None and (res.is32 is None or not res.is32.any()):
                values = np.asarray(res.values, dtype=np.float64)  # what scalars() lists
            else:
                values = np.asarray(res.scalars(), dtype=np.float64)
            values = values.reshape(len(d) * len(ms), n_bootstrap)
            m_, c_ = estimate_ci_rows(values)
            mean[:, drawn_buckets] = m_.reshape(len(d), len(ms)).T
            ci[:, drawn_buckets] = c_.reshape(len(d), len(ms)).T
        if n_bootstrap:  # the signature's bs: / rs:, as corpus_score(..., n_bootstrap) sets them
            metric.n_bootstrap, metric.seed = n_bootstrap, seed_str
        out.append(BucketScores(tuple(labels), counts, scores, mean, ci, n_bootstrap, seed))
    return out


def estimate_ci_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Score.estimate_ci`` of each row of ``values`` (R, n) float64 resample scores:
    ``(mean, half-width)`` float64 (R,) each, numerically identical to it (sorted values at
    ``n // 40`` and ``n - n // 40 - 1``; the exact mean of :func:`statistics.mean`, correctly
    rounded, from the values' integer mantissas)."""
    v = np.sort(np.asarray(values, dtype=np.float64), axis=1)
    n = v.shape[1]
    lo = n // 40
    ci = 0.5 * (v[:, n - lo - 1] - v[:, lo])
    return _exact_means(v), ci


def _exact_means(v: np.ndarray) -> np.ndarray:
    """:func:`_exact_mean` of each row of ``v`` (R, n), the integer sums made with NumPy where
    they fit in int64 (exponents of a row within 2**20 of each other, n < 2**15)."""
    out = np.empty(len(v))
    finite = np.isfinite(v)
    frac, exp = np.frexp(np.where(finite, v, 0.0))      # rows with inf / NaN: _exact_mean
    mant = np.ldexp(frac, 53).astype(np.int64)          # v = mant * 2**(exp - 53), |mant| < 2**53
    e = np.where(mant != 0, exp.astype(np.int64), np.iinfo(np.int64).max)
    base = e.min(axis=1, keepdims=True)
    shift = np.where(mant != 0, e - base, 0)
    fast = (finite.all(axis=1) & (shift.max(axis=1, initial=0) <= 20)
            & (mant != 0).any(axis=1) & (v.shape[1] < 2 ** 15))
    # hi * 2**26 + lo == mant; each part shifted by <= 20 bits and summed over < 2**15 values
    hi = ((mant >> 26) << shift).sum(axis=1)
    lo = ((mant & ((1 << 26) - 1)) << shift).sum(axis=1)
    n = v.shape[1]
    for r in range(len(v)):
        if not fast[r]:
            out[r] = _exact_mean(v[r])
            continue
        total = (int(hi[r]) << 26) + int(lo[r])
        b = int(base[r, 0]) - 53
        out[r] = (total << b) / n if b >= 0 else total / (n << -b)
    return out


def _exact_mean(x: np.ndarray) -> float:
    """``statistics.mean(x.tolist())`` for float64 ``x`` (n >= 1): the exact sum as an integer
    times a power of two, divided by n with one rounding (int true division)."""
    if not np.all(np.isfinite(x)):
        return float(statistics.mean(x.tolist()))
    frac, exp = np.frexp(x)
    mant = np.ldexp(frac, 53).astype(np.int64)          # x = mant * 2**(exp - 53), |mant| < 2**53
    e = exp.astype(np.int64) - 53
    nz = mant != 0
    if not nz.any():
        return 0.0
    mant, e = mant[nz], e[nz]
    base = int(e.min())
    total = 0
    for d in np.unique(e).tolist():                   # few distinct exponents
        grp = mant[e == d]
        # hi * 2**26 + lo == mant, each part summed in int64 without overflow (n < 2**36)
        hi, lo = int((grp >> 26).sum()), int((grp & ((1 << 26) - 1)).sum())
        total += ((hi << 26) + lo) << (d - base)
    n = len(x)
    return (total << base) / n if base >= 0 else total / (n << -base)


def length_bucket_scores(metric_name: str, refs: Sequence[Sequence[str]],
                         systems: Sequence[Sequence[str]], lengths_of: Sequence[Tokens],
                         edges: Sequence[float] = DEFAULT_LENGTH_EDGES, n_bootstrap: int = 1000,
                         seed: int = 12345, **metric_options) -> BucketScores:
    """Scores of registered metric ``metric_name`` (with ``metric_options``) by length bucket.

    ``refs``: K reference streams and ``systems``: S output streams of N lines (raw text, as the
    metric scores it); ``lengths_of``: N token lists whose lengths define the buckets (the first
    reference's or the source's, tokenised with :func:`.tokens.tokenize`)."""
    if len(systems) == 0:
        raise AnalysisInputError("systems must hold at least one system's outputs")
    n = len(lengths_of)
    if n == 0:
        raise AnalysisInputError("lengths_of is empty (no segments)")
    for s, h in enumerate(systems):
        if len(h) != n:
            raise AnalysisInputError(f"systems[{s}] has {len(h)} segments but lengths_of has {n}"
                                     + (" (an empty system)" if len(h) == 0 else ""))
    for k, r in enumerate(refs):
        if len(r) != n:
            raise AnalysisInputError(f"refs[{k}] has {len(r)} segments but lengths_of has {n}")
    metric = make_metric(metric_name, **metric_options)
    stats = metric.systems_stats([list(h) for h in systems], [list(r) for r in refs])
    buckets, labels = length_buckets(lengths_of, edges)
    return bucket_scores(metric, stats, buckets, labels, n_bootstrap, seed)
