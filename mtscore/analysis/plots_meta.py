"""Meta-evaluation figures drawn from released data (matplotlib, Agg backend, imported lazily; the
``plot`` extra): metric-vs-human scatter panels with MAD outliers marked (Mathur et al. 2020,
"Tangled up in BLEU", Sec. 4.2; Mathur 2021, thesis Sec. 6.2) and the agreement matrix between
metrics (Tangled Fig. 5; thesis Fig. 6.12).

Every function returns PNG bytes and optionally writes ``path`` (as :mod:`.plots`).
"""
from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np

from .correlation import pearson
from .plots import require_matplotlib

__all__ = ["agreement_plot", "outlier_scatter_panels"]


def _png(fig, path: str | None) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    data = buf.getvalue()
    if path:
        from ..engine.atomic import atomic_write

        atomic_write(path, lambda fh: fh.write(data))
    return data


def outlier_scatter_panels(human, metrics: dict[str, np.ndarray], outliers, labels: Sequence[str] | None = None,
                           title: str = "", xlabel: str = "human (DA z)", path: str | None = None) -> bytes:
    """One panel per metric: metric score (y) against ``human`` (x, (n,) float64) per system; MAD
    ``outliers`` ((n,) bool) drawn as red crosses and labelled with their name from ``labels``
    ((n,) str); least-squares lines over all systems (grey, dashed) and without the outliers
    (blue), each drawn over the full x range; both Pearson r in the legend; panels 2 per row. ``metrics``: label -> (n,) float64 scores."""
    plt = require_matplotlib()
    h = np.asarray(human, dtype=np.float64)
    out = np.asarray(outliers, dtype=bool)
    ncols = 2 if len(metrics) > 2 else len(metrics)
    nrows = -(-len(metrics) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.0 * nrows), squeeze=False)
    for ax in axes.flat[len(metrics):]:
        ax.set_visible(False)
    for ax, (name, scores) in zip(axes.flat, metrics.items()):
        m = np.asarray(scores, dtype=np.float64)
        ax.scatter(h[~out], m[~out], s=22, color="tab:blue", zorder=3, label="systems")
        if out.any():
            ax.scatter(h[out], m[out], s=60, color="tab:red", marker="x", zorder=4, label="MAD outliers")
            if labels is not None:
                for x, y, lab in zip(h[out], m[out], np.asarray(labels, dtype=object)[out]):
                    ax.annotate(str(lab), (x, y), fontsize=6, color="tab:red", xytext=(3, 3),
                                textcoords="offset points")
        for mask, colour, style, what in ((np.ones_like(out), "tab:gray", "--", "all"),
                                          (~out, "tab:blue", "-", "w/o outliers")):
            if mask.sum() < 3 or (what != "all" and not out.any()):
                continue
            slope, icpt = np.polyfit(h[mask], m[mask], 1)
            xs = np.linspace(h.min(), h.max(), 20)  # both lines over every system's x
            ax.plot(xs, slope * xs + icpt, color=colour, ls=style, lw=1.3, zorder=2,
                    label=f"r {what} = {pearson(h[mask], m[mask]):.3f} (n={int(mask.sum())})")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(name, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6, loc="best")
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return _png(fig, path)


def agreement_plot(matrix, metrics: Sequence[str], title: str = "", path: str | None = None) -> bytes:
    """The agreement matrix between metrics as an annotated heat map: ``matrix`` (m, m) int, row A
    and column B = system pairs where metric A errs and B is right, diagonal = A's errors (its cells
    outlined); every count printed in a colour that contrasts with its cell."""
    plt = require_matplotlib()
    M = np.asarray(matrix, dtype=np.float64)
    k = len(metrics)
    fig, ax = plt.subplots(figsize=(1.3 * k + 2.6, 1.1 * k + 1.6))
    im = ax.imshow(M, cmap="Blues", vmin=0, vmax=max(float(M.max()), 1.0))
    for i in range(k):
        for j in range(k):
            dark = M[i, j] > 0.6 * M.max()
            ax.text(j, i, f"{int(M[i, j])}", ha="center", va="center", fontsize=10,
                    color="white" if dark else "black", fontweight="bold" if i == j else "normal")
        ax.add_patch(plt.Rectangle((i - 0.5, i - 0.5), 1, 1, fill=False, ec="k", lw=1.2))
    ax.set_xticks(range(k), list(metrics))
    ax.set_yticks(range(k), list(metrics))
    ax.set_xlabel("metric B (right)")
    ax.set_ylabel("metric A (errs)")
    fig.colorbar(im, ax=ax, fraction=0.046, label="system pairs")
    ax.set_title(title, fontsize=9)
    return _png(fig, path)
