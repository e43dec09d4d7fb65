"""Sentence scores for a decoder (:func:`sentence_scores`): one score per (hypothesis, its
references) pair, float64 (n,), on the metric's batch path (``prepare`` +
``stats_and_scores``); :func:`ref_streams` reads the references' layouts (per hypothesis,
ragged, or sacrebleu-style streams)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...engine.metrics.base import Metric
from .arguments import check_workers, is_seq, resolve_metric, texts

__all__ = ["ref_streams", "sentence_scores"]


def ref_streams(refs, n: int, layout: str) -> list[list[str | None]]:
    """K reference streams of n segments (None where a hypothesis has fewer references)."""
    if isinstance(refs, str):
        raise TypeError("refs must be a sequence (per hypothesis, or K streams), not a string")
    refs = list(refs)
    if layout not in ("auto", "per_hyp", "streams"):
        raise ValueError(f"layout must be 'auto', 'per_hyp' or 'streams', got {layout!r}")
    seqs = [is_seq(r) for r in refs]
    per_hyp_ok = len(refs) == n and all(isinstance(r, str) or s for r, s in zip(refs, seqs))
    streams_ok = bool(refs) and all(seqs) and all(len(r) == n for r in refs)
    if layout == "auto":
        if per_hyp_ok and streams_ok and n > 1:  # n lists of n strings: either reading fits
            raise ValueError(
                f"refs is ambiguous: {n} lists of {n} strings could be per-hypothesis "
                "references or reference streams; pass layout='per_hyp' or layout='streams'")
        layout = "per_hyp" if per_hyp_ok else "streams"
    if layout == "streams":
        if not refs:
            raise ValueError("refs: no reference streams")
        for k, r in enumerate(refs):
            if not is_seq(r):
                raise ValueError(f"refs[{k}]: a reference stream must be a list of strings")
            if len(r) != n:
                raise ValueError(f"refs[{k}] has {len(r)} references for {n} hypotheses")
        streams = [list(r) for r in refs]
        for i in range(n):
            if all(st[i] is None for st in streams):
                raise ValueError(f"refs: hypothesis {i} has no reference (None in every stream)")
        return streams
    if len(refs) != n:
        raise ValueError(f"refs has {len(refs)} entries for {n} hypotheses (one list of references "
                         "per hypothesis)")
    per = [[r] if isinstance(r, str) else list(r) for r in refs]
    for i, rs in enumerate(per):
        if not rs:
            raise ValueError(f"refs[{i}] is empty: hypothesis {i} needs at least one reference")
        for j, x in enumerate(rs):
            if not isinstance(x, str):
                raise TypeError(f"refs[{i}][{j}] must be a str, got {type(x).__name__}")
    k = max((len(rs) for rs in per), default=1)
    return [[rs[j] if j < len(rs) else None for rs in per] for j in range(k)]


def sentence_scores(hyps: Sequence[str], refs, metric: str | Metric = "chrf",
                    workers: int = 1, layout: str = "auto", **options) -> np.ndarray:
    """Sentence scores of n hypotheses, float64 (n,): ``out[i] ==
    metric.sentence_score(hyps[i], refs_i).score`` bit for bit.

    ``refs``: per hypothesis a string or a list of strings (ragged: K may differ per
    hypothesis), or sacrebleu-style K streams of n strings (``None`` = no such reference for
    that hypothesis). ``layout``: "per_hyp", "streams" or "auto" (decided from the shapes; K
    streams of n when ``K == n`` is ambiguous and raises). Computed on the batch path: the
    references are prepared once (repeated reference rows, as in n-best lists, once per distinct
    row), then statistics and scores for all hypotheses in compiled kernels (GIL released,
    ``workers`` threads).
    """
    check_workers(workers)
    hyps = texts(hyps, "hyps")
    m = resolve_metric(metric, options, workers)
    if not hyps:
        return np.zeros(0, dtype=np.float64)
    streams = ref_streams(refs, len(hyps), layout)
    _, scores = m.stats_and_scores(hyps, m.prepare(streams), sentence_level=True)
    return np.asarray(scores, dtype=np.float64)
