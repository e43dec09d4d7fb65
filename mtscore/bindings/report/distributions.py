"""Sentence-score distributions: per metric, one SVG histogram per system over shared bins."""
from __future__ import annotations

import numpy as np

from .context import Context
from .page import colour, esc, fmt, section
from .svg import histogram

__all__ = ["distributions_section"]

#: bins per histogram
N_BINS = 20


def _bins(values: np.ndarray) -> np.ndarray:
    """``N_BINS + 1`` edges shared by every system of a metric (its finite scores' range)."""
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, N_BINS + 1)


def distributions_section(ctx: Context) -> str:
    """Histograms of the sentence scores (``Context.sentence``), each captioned with the
    system's mean and median sentence score."""
    parts = []
    for m, k in enumerate(ctx.metrics):
        bins = _bins(ctx.sentence[m])
        figs = []
        for s, name in enumerate(ctx.names):
            v = ctx.sentence[m, s]
            v = v[np.isfinite(v)]
            mean = float(v.mean()) if v.size else float("nan")
            med = float(np.median(v)) if v.size else float("nan")
            figs.append(f'<figure class="hist">{histogram(v, bins, name, colour(s))}'
                        f"<figcaption>mean {fmt(mean)}, median {fmt(med)}</figcaption></figure>")
        parts.append(f"<h3>{esc(k)}</h3><div class=\"grid\">" + "".join(figs) + "</div>")
    return section("distributions", "Sentence-score distributions", "".join(parts),
                   f"Sentence-level scores per system, {N_BINS} bins over each metric's range.")
