"""Inline SVG figures of a report, written as text (no plotting library): a histogram and a
chart of points with error bars by category. Coordinates are rounded to 0.1 px, so the output
is deterministic and small.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .page import colour, esc, fmt

__all__ = ["errorbar_chart", "histogram", "legend"]


def _r(x: float) -> str:
    return f"{x:.1f}"


def _ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / n
    step = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * step:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def histogram(values: np.ndarray, bins: np.ndarray, label: str, col: str, width: int = 220,
              height: int = 100) -> str:
    """An SVG histogram of ``values`` (finite floats) over the bin edges ``bins`` (B + 1,),
    bars in colour ``col``, titled ``label``; each bar's ``<title>`` gives its range and count."""
    counts, _ = np.histogram(values, bins=bins)
    top = max(int(counts.max()) if len(counts) else 0, 1)
    pad_l, pad_b, pad_t = 4, 16, 14
    w = (width - 2 * pad_l) / len(counts)
    h = height - pad_b - pad_t
    out = [f'<svg width="{width}" height="{height}" role="img" '
           f'aria-label="{esc(label)}"><text x="{pad_l}" y="11">{esc(label)}</text>']
    for i, c in enumerate(counts.tolist()):
        bh = h * c / top
        out.append(f'<rect x="{_r(pad_l + i * w)}" y="{_r(pad_t + h - bh)}" width="{_r(max(w - 1, 0.5))}" '
                   f'height="{_r(bh)}" fill="{col}"><title>[{fmt(bins[i])}, {fmt(bins[i + 1])}): {c}'
                   "</title></rect>")
    y = height - 3
    out.append(f'<text x="{pad_l}" y="{y}">{fmt(bins[0], 1)}</text>'
               f'<text x="{width - pad_l}" y="{y}" text-anchor="end">{fmt(bins[-1], 1)}</text></svg>')
    return "".join(out)


def errorbar_chart(categories: Sequence[str], names: Sequence[str], values: np.ndarray,
                   half_widths: np.ndarray, label: str, width: int = 640, height: int = 240) -> str:
    """Points with error bars: ``values`` / ``half_widths`` float64 (S, C), one series per
    name (``names`` (S,)) over ``categories`` (C,), series side by side within a category.
    NaN points are left out; a NaN half-width draws the point only."""
    v = np.asarray(values, dtype=np.float64)
    e = np.nan_to_num(np.asarray(half_widths, dtype=np.float64), nan=0.0)
    ok = np.isfinite(v)
    pad_l, pad_r, pad_t, pad_b = 44, 8, 18, 34
    if ok.any():
        lo, hi = float((v - e)[ok].min()), float((v + e)[ok].max())
    else:
        lo, hi = 0.0, 1.0
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    span = hi - lo
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    pw, ph = width - pad_l - pad_r, height - pad_t - pad_b

    def y(x: float) -> float:
        return pad_t + ph * (hi - x) / (hi - lo)

    out = [f'<svg width="{width}" height="{height}" role="img" '
           f'aria-label="{esc(label)}"><text x="{pad_l}" y="12">{esc(label)}</text>']
    for t in _ticks(lo, hi):
        out.append(f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{_r(y(t))}" y2="{_r(y(t))}" stroke="#eee"/>'
                   f'<text x="{pad_l - 4}" y="{_r(y(t) + 4)}" text-anchor="end">{t:g}</text>')
    n_c, n_s = len(categories), len(names)
    cw = pw / max(n_c, 1)
    for c, cat in enumerate(categories):
        out.append(f'<text x="{_r(pad_l + (c + 0.5) * cw)}" y="{height - pad_b + 14}" '
                   f'text-anchor="middle">{esc(cat)}</text>')
        for s in range(n_s):
            if not ok[s, c]:
                continue
            x = pad_l + c * cw + cw * (s + 1) / (n_s + 1)
            col = colour(s)
            tip = f"{names[s]}, {cat}: {fmt(v[s, c])} \u00b1 {fmt(e[s, c])}"
            out.append(f'<g><title>{esc(tip)}</title>'
                       f'<line x1="{_r(x)}" x2="{_r(x)}" y1="{_r(y(v[s, c] - e[s, c]))}" '
                       f'y2="{_r(y(v[s, c] + e[s, c]))}" stroke="{col}" stroke-width="1.5"/>'
                       f'<circle cx="{_r(x)}" cy="{_r(y(v[s, c]))}" r="3" fill="{col}"/></g>')
    out.append(f'<line x1="{pad_l}" x2="{pad_l}" y1="{pad_t}" y2="{pad_t + ph}" stroke="#888"/></svg>')
    return "".join(out)


def legend(names: Sequence[str]) -> str:
    """A colour key of the systems (HTML)."""
    return '<p class="key">' + "".join(f'<span style="background:{colour(i)}"></span>{esc(n)}'
                                       for i, n in enumerate(names)) + "</p>"
