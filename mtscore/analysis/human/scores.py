"""DA scores on judgement arrays (Graham et al. 2017, NLE §3.4; WMT practice; Mathur 2021 §2.1.4):
per-worker standardisation, then segment, document and system scores.

Inputs are parallel arrays, one entry per judgement: ``worker`` (N,) ids, ``score`` (N,) float64,
and where needed ``item_type`` (N,) in {SYSTEM, REPEAT, REF, BAD_REF}, ``system`` (N,),
``segment`` (N,), ``hit`` (N,). Everything is numpy; results are dicts of arrays.

This is the one DA pipeline's core: :func:`group_means` (grouping and group means) and
:func:`standardize` (per-worker statistics and z) serve these array functions and the crowd
front end (:mod:`mtscore.analysis.crowd.scores`, raw MTurk batches) alike.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "SCORED_TYPES",
    "Groups",
    "category_codes",
    "document_scores",
    "group_means",
    "r_mean",
    "segment_scores",
    "standardize",
    "system_scores",
]

SCORED_TYPES = ("SYSTEM", "REPEAT")  # WMT: annotations of the MT outputs and the repeats count


def category_codes(x) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique values (k,), code of each entry (N,) int64) of ``x`` (object arrays as str)."""
    x = np.asarray(x)
    if x.dtype == object:
        x = x.astype(str)
    return np.unique(x, return_inverse=True)


def _numpy_stats(w: np.ndarray, s: np.ndarray, k: int, ddof: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-group ``s[rows].mean()`` and ``.std(ddof=ddof)`` (numpy's pairwise sums; NaN SD for
    groups of at most ``ddof`` rows) for codes ``w`` (N,) in [0, k), rows in their order."""
    mean = np.full(k, np.nan)
    sd = np.full(k, np.nan)
    order = np.argsort(w, kind="stable")
    bounds = np.searchsorted(w[order], np.arange(k + 1))
    ranked = s[order]
    for j in range(k):
        g = ranked[bounds[j]:bounds[j + 1]]
        if g.size:
            mean[j] = float(g.mean())
            sd[j] = float(g.std(ddof=ddof)) if g.size > ddof else np.nan
    return mean, sd


def _rows_per_group(inv: np.ndarray, k: int) -> list[np.ndarray]:
    """Row indices (ascending) of each group 0..k-1."""
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(k + 1))
    return [order[bounds[j]:bounds[j + 1]] for j in range(k)]


def standardize(worker, score, ddof: int = 1, truncate: bool = False, mask=None, *, sums: str = "bincount",
                round_stats: Callable[[np.ndarray], np.ndarray] | None = None):
    """Per-worker z-scores: (score - mean_w) / sd_w over all of the worker's judgements
    (QC items included, WMT practice; restrict the statistics with ``mask`` (N,) bool, e.g. to
    rows of another table appended to the scored ones).

    ``ddof=1`` is R's ``sd``; ``truncate`` truncates raw scores to integers first (the WMT
    perl script). ``sums`` 'bincount' takes the statistics from sequential sums (the WMT
    ports), 'numpy' from numpy's pairwise ``mean`` / ``std`` of each worker's scores (the
    crowd port). ``round_stats`` maps the (k,) means and SDs before z is computed (the crowd
    scripts' R print / perl read). Returns (z (N,) float64, keep (N,) bool): workers with sd = 0
    or undefined (at most ``ddof`` judgements) are dropped (keep False, z NaN).
    """
    s = np.asarray(score, dtype=np.float64)
    if not np.isfinite(s).all():
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"standardize: score[{bad}] is {s[bad]}; human scores must be finite")
    if sums not in ("bincount", "numpy"):
        raise ValueError(f"standardize: sums must be 'bincount' or 'numpy', not {sums!r}")
    if truncate:
        s = np.trunc(s)
    _, w = category_codes(worker)
    m = np.ones(s.shape[0], bool) if mask is None else np.asarray(mask, bool)
    k = w.max() + 1 if w.size else 0
    cnt = np.bincount(w[m], minlength=k).astype(np.float64)
    if sums == "numpy":
        mean, sd = _numpy_stats(w[m], s[m], k, ddof)
    else:
        mean = np.bincount(w[m], s[m], minlength=k) / np.maximum(cnt, 1)
        ss = np.bincount(w[m], (s[m] - mean[w[m]]) ** 2, minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            sd = np.sqrt(ss / (cnt - ddof))
    if round_stats is not None:
        mean, sd = round_stats(mean), round_stats(sd)
    with np.errstate(invalid="ignore"):
        ok_w = (cnt > ddof) & np.isfinite(sd) & (sd > 0)
    keep = ok_w[w]
    z = np.full(s.shape[0], np.nan)
    z[keep] = (s[keep] - mean[w[keep]]) / sd[w[keep]]
    return z, keep


def r_mean(inv: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """Group means as R's ``mean`` computes them: a long-double sum divided by n, plus the
    long-double mean of the residuals (R's second pass). (k,) float64 for group codes ``inv``
    (N,) int in [0, k). Matches R bit for bit on x86 (the WMT scripts are R), which matters
    because the WMT rank tests treat exactly equal segment means as ties."""
    v = np.asarray(values, dtype=np.longdouble)
    n = np.bincount(inv, minlength=k).astype(np.longdouble)
    s = np.zeros(k, dtype=np.longdouble)
    np.add.at(s, inv, v)
    s /= n
    t = np.zeros(k, dtype=np.longdouble)
    np.add.at(t, inv, v - s[inv])
    return (s + t / n).astype(np.float64)


@dataclass(frozen=True)
class Groups:
    """Rows grouped by a tuple of keys (:func:`group_means`). ``keys``: one (k,) array per key,
    the key values of each group; ``inv`` (N,) int64: the group of each row; ``first`` (k,)
    int64: the first row of each group; ``n`` (k,) int64: rows per group; ``means``: one (k,)
    float64 per value column."""

    keys: tuple[np.ndarray, ...]
    inv: np.ndarray
    first: np.ndarray
    n: np.ndarray
    means: tuple[np.ndarray, ...]


def group_means(keys: Sequence, values: Sequence = (), how: str = "r") -> Groups:
    """Group rows by the tuple of ``keys`` (each (N,); object arrays compared as str) and
    average each of ``values`` ((N,) float64 each) per group. Groups are in key order, the
    first key varying slowest, each key sorted as ``np.unique`` sorts it. ``how`` 'r': R's
    two-pass long-double mean (:func:`r_mean`); 'numpy': numpy's ``mean`` of each group's
    values in row order (pairwise sums)."""
    if how not in ("r", "numpy"):
        raise ValueError(f"group_means: how must be 'r' or 'numpy', not {how!r}")
    uniq, codes = zip(*(category_codes(k) for k in keys))
    flat = np.zeros(codes[0].shape[0], np.int64)
    for u, c in zip(uniq, codes):
        flat = flat * len(u) + c
    g, first, inv = np.unique(flat, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    k = len(g)
    means = []
    for v in values:
        v = np.asarray(v, dtype=np.float64)
        if how == "r":
            means.append(r_mean(inv, v, k))
        else:
            means.append(np.array([v[rows].mean() for rows in _rows_per_group(inv, k)], dtype=np.float64))
    return Groups(keys=tuple(u[c[first]] for u, c in zip(uniq, codes)), inv=inv, first=first,
                  n=np.bincount(inv, minlength=k), means=tuple(means))


def segment_scores(system, segment, score, item_type=None, types: Iterable[str] = SCORED_TYPES,
                   min_n: int = 1):
    """Segment scores: mean of the (z) scores per (system, segment) over judgements whose type
    is in ``types`` (WMT: SYSTEM and REPEAT). ``min_n`` keeps only segments with at least that
    many judgements (the strict seg-level DA uses 15).
    Returns dict system (S,), segment (S,), score (S,), n (S,), sorted by segment then system."""
    s = np.asarray(score, dtype=np.float64)
    m = np.ones(s.shape[0], bool)
    if item_type is not None:
        m = np.isin(np.asarray(item_type).astype(str), list(types))
    g = group_means([np.asarray(segment)[m], np.asarray(system)[m]], [s[m]])
    (sg, sy), (mean,), n = g.keys, g.means, g.n
    keep = n >= min_n
    return {"system": sy[keep], "segment": sg[keep], "score": mean[keep], "n": n[keep]}


def document_scores(system, document, segment_score):
    """Document score = unweighted mean of its segment means (Graham et al. 2017, EACL §3, macro step).
    Inputs are per-segment arrays (e.g. from :func:`segment_scores`); sorted by document then system."""
    g = group_means([np.asarray(document), np.asarray(system)], [np.asarray(segment_score, dtype=np.float64)])
    return {"system": g.keys[1], "document": g.keys[0], "score": g.means[0], "n_segments": g.n}


def system_scores(system, score, how: str = "segments", segment=None):
    """System scores. ``how='segments'``: ``system``/``score`` are per-segment rows and the
    system score is their mean (WMT "micro average over segments"); ``how='judgements'``: they
    are individual judgements and the score is their plain mean (Graham et al. 2017, NLE; Mathur 2021). Returns dict
    system (k,), score (k,), n (k,), sorted by score descending (the ranking)."""
    if how not in ("segments", "judgements"):
        raise ValueError("how must be 'segments' or 'judgements'")
    g = group_means([np.asarray(system)], [np.asarray(score, dtype=np.float64)])
    (sy,), (mean,), n = g.keys, g.means, g.n
    order = np.argsort(-mean, kind="mergesort")
    return {"system": sy[order], "score": mean[order], "n": n[order]}
