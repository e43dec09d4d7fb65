"""DA scores on judgement arrays (Graham et al. 2017, NLE §3.4; WMT practice; Mathur 2021 §2.1.4):
per-worker standardisation, then segment, document and system scores.

Inputs are parallel arrays, one entry per judgement: ``worker`` (N,) ids, ``score`` (N,) float64,
and where needed ``item_type`` (N,) in {SYSTEM, REPEAT, REF, BAD_REF}, ``system`` (N,),
``segment`` (N,), ``hit`` (N,). Everything is numpy; results are dicts of arrays.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "SCORED_TYPES",
    "category_codes",
    "document_scores",
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


def standardize(worker, score, ddof: int = 1, truncate: bool = False, mask=None):
    """Per-worker z-scores: (score - mean_w) / sd_w over all of the worker's judgements
    (QC items included, WMT practice; restrict the statistics with ``mask``).

    ``ddof=1`` is R's ``sd``; ``truncate`` truncates raw scores to integers first (the WMT
    perl script). Returns (z (N,) float64, keep (N,) bool): workers with sd = 0 (or a single
    judgement) are dropped (keep False, z NaN).
    """
    s = np.asarray(score, dtype=np.float64)
    if not np.isfinite(s).all():
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"standardize: score[{bad}] is {s[bad]}; human scores must be finite")
    if truncate:
        s = np.trunc(s)
    _, w = category_codes(worker)
    m = np.ones(s.shape[0], bool) if mask is None else np.asarray(mask, bool)
    k = w.max() + 1 if w.size else 0
    cnt = np.bincount(w[m], minlength=k).astype(np.float64)
    mean = np.bincount(w[m], s[m], minlength=k) / np.maximum(cnt, 1)
    ss = np.bincount(w[m], (s[m] - mean[w[m]]) ** 2, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(ss / (cnt - ddof))
    ok_w = (cnt > ddof) & (sd > 0)
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


def _group_mean(keys: Sequence[np.ndarray], values: np.ndarray):
    """Mean and count of ``values`` per unique tuple of keys; returns (key arrays..., mean, n)."""
    codes = []
    uniq = []
    for k in keys:
        u, c = category_codes(k)
        uniq.append(u)
        codes.append(c)
    mult = np.cumprod([1] + [len(u) for u in uniq[:-1]])
    flat = sum(c.astype(np.int64) * m for c, m in zip(codes, mult))
    g, inv = np.unique(flat, return_inverse=True)
    n = np.bincount(inv)
    mean = r_mean(inv, values, len(g))
    out = []
    for u, m in zip(uniq, mult):
        out.append(u[(g // m) % len(u)])
    return out, mean, n


def segment_scores(system, segment, score, item_type=None, types: Iterable[str] = SCORED_TYPES,
                   min_n: int = 1):
    """Segment scores: mean of the (z) scores per (system, segment) over judgements whose type
    is in ``types`` (WMT: SYSTEM and REPEAT). ``min_n`` keeps only segments with at least that
    many judgements (the strict seg-level DA uses 15).
    Returns dict system (S,), segment (S,), score (S,), n (S,), sorted by system then segment."""
    s = np.asarray(score, dtype=np.float64)
    m = np.ones(s.shape[0], bool)
    if item_type is not None:
        m = np.isin(np.asarray(item_type).astype(str), list(types))
    (sy, sg), mean, n = _group_mean([np.asarray(system)[m], np.asarray(segment)[m]], s[m])
    keep = n >= min_n
    return {"system": sy[keep], "segment": sg[keep], "score": mean[keep], "n": n[keep]}


def document_scores(system, document, segment_score):
    """Document score = unweighted mean of its segment means (Graham et al. 2017, EACL §3, macro step).
    Inputs are per-segment arrays (e.g. from :func:`segment_scores`)."""
    (sy, dc), mean, n = _group_mean([np.asarray(system), np.asarray(document)],
                                    np.asarray(segment_score, dtype=np.float64))
    return {"system": sy, "document": dc, "score": mean, "n_segments": n}


def system_scores(system, score, how: str = "segments", segment=None):
    """System scores. ``how='segments'``: ``system``/``score`` are per-segment rows and the
    system score is their mean (WMT "micro average over segments"); ``how='judgements'``: they
    are individual judgements and the score is their plain mean (Graham et al. 2017, NLE; Mathur 2021). Returns dict
    system (k,), score (k,), n (k,), sorted by score descending (the ranking)."""
    if how not in ("segments", "judgements"):
        raise ValueError("how must be 'segments' or 'judgements'")
    (sy,), mean, n = _group_mean([np.asarray(system)], np.asarray(score, dtype=np.float64))
    order = np.argsort(-mean, kind="mergesort")
    return {"system": sy[order], "score": mean[order], "n": n[order]}
