"""Scores by reference-length and source-length bucket, with bootstrap error bars
(:func:`mtscore.analysis.compare.buckets.bucket_scores` on the statistics already computed)."""
from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from ...analysis.compare.buckets import BucketScores, length_buckets, metrics_bucket_scores
from ...engine.significance import compare_segment_scores
from .context import Context
from .page import esc, fmt, section, table, td
from .svg import errorbar_chart, legend

__all__ = ["all_length_scores", "length_buckets_section", "length_scores", "mean_bucket_scores"]


def length_scores(ctx: Context, m: int, tokens: Sequence[Sequence[str]],
                  edges: Sequence[float]) -> BucketScores:
    """Bucket scores of metric ``m`` of every system, buckets by the lengths of ``tokens``."""
    return all_length_scores(ctx, tokens, edges, [m])[0]


def all_length_scores(ctx: Context, tokens: Sequence[Sequence[str]], edges: Sequence[float],
                      metrics: Sequence[int] | None = None) -> list[BucketScores]:
    """:func:`length_scores` of each metric index in ``metrics`` (default: all), the metrics
    with resampled statistics bootstrapped together (one draw per bucket for all of them)."""
    ms = list(range(len(ctx.metrics))) if metrics is None else list(metrics)
    buckets, labels = length_buckets(tokens, edges)
    out: dict[int, BucketScores] = {}
    for m in ms:
        if ctx.by_mean and ctx.by_mean[m]:
            out[m] = mean_bucket_scores(ctx.sentence[m], buckets, labels, ctx.n_bootstrap, ctx.seed)
    rs = [m for m in ms if m not in out]
    if rs:
        metric_objs = [copy.copy(ctx.metric_objects[m]) for m in rs]  # bootstrap sets n_bootstrap / seed
        res = metrics_bucket_scores(metric_objs, [[st[m] for st in ctx.stats] for m in rs], buckets,
                                    labels, ctx.n_bootstrap, ctx.seed)
        out.update(zip(rs, res))
    return [out[m] for m in ms]


def mean_bucket_scores(sentence: np.ndarray, buckets: np.ndarray, labels: Sequence[str],
                       n_bootstrap: int, seed: int) -> BucketScores:
    """Bucket scores of a metric whose corpus score is the mean of its sentence scores
    (``sentence`` float64 (S, N)): each bucket's score is the mean of its segments' scores, its
    mean / CI the bootstrap of that mean (:func:`mtscore.compare_segment_scores`, ``bs``)."""
    S, B = sentence.shape[0], len(labels)
    counts = np.bincount(buckets, minlength=B).astype(np.int64)
    scores, mean, ci = (np.full((S, B), np.nan) for _ in range(3))
    for j in range(B):
        rows = np.flatnonzero(buckets == j)
        if len(rows) == 0:
            continue
        res = compare_segment_scores({str(s): sentence[s, rows] for s in range(S)}, test="bs",
                                     n=n_bootstrap, seed=seed)
        for s, r in enumerate(res.results["score"]):
            scores[s, j], mean[s, j], ci[s, j] = float(r.score), float(r.mean), float(r.ci)
    return BucketScores(tuple(labels), counts, scores, mean, ci, n_bootstrap, seed)


def _block(ctx: Context, what: str, tokens, edges) -> str:
    out = [f"<h3>By {esc(what)} length</h3>"]
    for k, b in zip(ctx.metrics, all_length_scores(ctx, tokens, edges)):
        labels = [f"{lab} ({c})" for lab, c in zip(b.labels, b.counts.tolist())]
        out.append(errorbar_chart(labels, ctx.names, b.scores, b.ci, f"{k} by {what} length (segments)"))
        head = ["System"] + [f"{lab}" for lab in labels]
        rows = [[td(name, cls="t")] + [td(f"{fmt(b.scores[s, j])} \u00b1 {fmt(b.ci[s, j])}",
                                          b.scores[s, j]) for j in range(len(b.labels))]
                for s, name in enumerate(ctx.names)]
        out.append(table(head, rows, caption=f"{k} by {what}-length bucket (tokens)"))
    return "".join(out)


def length_buckets_section(ctx: Context, edges: Sequence[float],
                           kinds: Sequence[str] = ("ref", "src")) -> str:
    """Reference-length buckets (first reference) where ``kinds`` has ``ref``, source-length
    buckets where it has ``src`` and a source is given."""
    body = legend(ctx.names)
    if "ref" in kinds:
        body += _block(ctx, "reference", ctx.ref_tokens[0], edges)
    if ctx.src_tokens is not None and "src" in kinds:
        body += _block(ctx, "source", ctx.src_tokens, edges)
    elif ctx.src_tokens is None:
        body += '<p class="note">No source given: no source-length buckets.</p>'
    note = (f"Corpus score of each bucket's segments; error bars: 95% bootstrap CI "
            f"({ctx.n_bootstrap} resamples, seed {ctx.seed}). Buckets by token count.")
    means = [k for k, b in zip(ctx.metrics, ctx.by_mean) if b]
    if means:
        note += (f" {', '.join(means)}: the mean of the bucket's sentence scores, CI the bootstrap "
                 "of that mean.")
    return section("lengths", "Scores by length", body, note)
