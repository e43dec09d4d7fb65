"""Figures for the raw-batch DA pipeline (matplotlib via :func:`.plots.require_matplotlib`, the
``plot`` extra). Each function returns PNG bytes and optionally writes ``path``.

* :func:`downsampling_plot` - run A vs run B document correlation against judgements per
  document (Graham et al. 2017, EACL §3.1 reaches r = 0.901 at about 107 per document).
* :func:`worker_means_plot` - each worker's mean raw score of degraded items against that of
  the MT outputs, coloured by the QC decision (Mathur 2021 §3.3.1; Graham et al. 2017, NLE §4.1: a careful rater sits well below
  the diagonal).
"""
from __future__ import annotations

import io

import numpy as np

from .crowd_qc import WorkerQC, WorkerStats
from .plots import require_matplotlib

__all__ = ["downsampling_plot", "worker_means_plot"]


def _png(fig, path: str | None) -> bytes:
    plt = require_matplotlib()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = buf.getvalue()
    if path:
        from .report import write_atomic

        write_atomic(path, data)
    return data


def downsampling_plot(curve: dict[str, np.ndarray], title: str = "", path: str | None = None) -> bytes:
    """r (y) against mean judgements per document (x) from :func:`.crowd_scores.downsampling_curve`,
    the fewest judgements of a document on a second axis."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(curve["mean_n"], curve["r"], marker="o", ms=3, lw=1, label="r (document z)")
    ax.set_xlabel("judgements per document (mean)")
    ax.set_ylabel("Pearson r with the other run")
    ax.set_ylim(min(0.0, float(np.nanmin(curve["r"])) - 0.05) if len(curve["r"]) else 0.0, 1.0)
    ax.grid(alpha=0.3)
    ax2 = ax.twinx()
    ax2.step(curve["mean_n"], curve["min_n"], where="post", color="gray", lw=1, label="fewest per document")
    ax2.set_ylabel("fewest judgements of a document", color="gray")
    ax.set_title(title or "run-A vs run-B reliability as judgements are added")
    return _png(fig, path)


def worker_means_plot(workers: WorkerStats, qc: WorkerQC, title: str = "", path: str | None = None) -> bytes:
    """Mean raw score of BAD_REF items (y) against SYSTEM items (x) per worker, by QC status."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    status = dict(zip(qc.worker.tolist(), qc.status.tolist()))
    colours = {"good": "tab:green", "bad": "tab:red", "rejected": "tab:gray", "untestable": "tab:orange",
               "repeats": "tab:purple"}
    st = np.array([status.get(w, "untestable") for w in workers.worker.tolist()])
    for s, c in colours.items():
        m = st == s
        if m.any():
            ax.scatter(workers.mean_system[m], workers.mean_bad_ref[m], s=18, color=c, label=f"{s} ({int(m.sum())})")
    ax.plot([0, 100], [0, 100], color="black", lw=0.6)
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_xlabel("mean raw score, MT outputs")
    ax.set_ylabel("mean raw score, degraded items")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(title or "workers: degraded vs MT output means")
    return _png(fig, path)
