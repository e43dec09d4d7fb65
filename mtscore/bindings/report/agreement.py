"""Metric agreement: the segment-level correlation matrix of the metrics (every system's
sentence scores pooled)."""
from __future__ import annotations

import numpy as np

from ...analysis.correlation import pearson, spearman
from .context import Context
from .page import esc, fmt, section, table, td

__all__ = ["agreement_matrix", "agreement_section"]


def agreement_matrix(ctx: Context, method: str = "pearson") -> np.ndarray:
    """float64 (M, M): correlation of every two metrics' sentence scores over the S x N
    (system, segment) pairs where all metrics have a finite score."""
    X = ctx.sentence.reshape(len(ctx.metrics), -1)
    X = X[:, np.isfinite(X).all(axis=0)]
    fn = pearson if method == "pearson" else spearman
    M = X.shape[0]
    out = np.full((M, M), np.nan)
    if X.shape[1] < 2:
        return out
    for i in range(M):
        out[i] = fn(X[i], X)
    return out


def agreement_section(ctx: Context) -> str:
    """Pearson and Spearman matrices (TER is an error rate: it correlates negatively)."""
    parts = []
    for method in ("pearson", "spearman"):
        R = agreement_matrix(ctx, method)
        rows = [[f'<th scope="row" class="t">{esc(a)}</th>']
                + [td(fmt(R[i, j], 3), R[i, j] if np.isfinite(R[i, j]) else None,
                      style=f"background:hsl({130 if R[i, j] >= 0 else 0},50%,{int(95 - 30 * min(abs(R[i, j]), 1))}%)"
                      if np.isfinite(R[i, j]) else None)
                   for j in range(len(ctx.metrics))]
               for i, a in enumerate(ctx.metrics)]
        parts.append(table(["", *ctx.metrics], rows, cls="agreement", caption=method.capitalize()))
    return section("agreement", "Metric agreement", '<div class="grid">' + "".join(parts) + "</div>",
                   "Segment-level correlations between the metrics' sentence scores, all systems "
                   "pooled. Error rates (TER) correlate negatively with the others.")
