"""The score table (corpus scores with 95% bootstrap CIs, the cluster of systems
indistinguishable from the best per metric) and the pairwise significance matrix."""
from __future__ import annotations

import numpy as np

from .context import Context
from .page import esc, fmt, section, table, td

__all__ = ["score_table_section", "significance_section"]


def score_table_section(ctx: Context) -> str:
    """One row per system: each metric's score (``data-v``: the exact corpus score),
    ``\u00b1`` CI half-width, a mark where the system is in the metric's best cluster."""
    head = ["System"]
    for k in ctx.metrics:
        head += [k, f"{k} 95% CI", f"{k} cluster"]
    rows = []
    for s, name in enumerate(ctx.names):
        row = [td(name, cls="t")]
        for m in range(len(ctx.metrics)):
            in_c = bool(ctx.cluster[m, s])
            row.append(td(fmt(ctx.scores[m, s]), ctx.scores[m, s], cls="cluster score" if in_c else "score"))
            row.append(td("\u00b1 " + fmt(ctx.ci[m, s]), None if np.isnan(ctx.ci[m, s]) else ctx.ci[m, s]))
            row.append(td("\u2605 best" if s == ctx.best[m] else ("\u2248" if in_c else ""),
                          1 if in_c else 0, title="in the cluster of the best" if in_c else None))
        rows.append(row)
    sigs = "".join(f"<li><code>{esc(k)}: {esc(sig)}</code></li>" for k, sig in zip(ctx.metrics, ctx.signatures))
    clusters = "".join(
        f"<li>{esc(k)}: " + ", ".join(esc(ctx.names[s]) for s in np.flatnonzero(ctx.cluster[m])) + "</li>"
        for m, k in enumerate(ctx.metrics))
    note = (f"95% confidence intervals from {ctx.n_bootstrap} bootstrap resamples (seed {ctx.seed}). "
            f"Highlighted: the best system and those not significantly different from it "
            f"(paired bootstrap, p > {ctx.alpha}).")
    means = [k for k, b in zip(ctx.metrics, ctx.by_mean) if b]
    if means:
        note += (f" {', '.join(means)}: corpus score = mean of the sentence scores; CI and p-values "
                 "from the (paired) bootstrap of that mean.")
    body = (table(head, rows, ident="score-table")
            + f"<h3>Indistinguishable from the best</h3><ul>{clusters}</ul>"
            + f"<h3>Signatures</h3><ul>{sigs}</ul>")
    return section("scores", "Scores", body, note)


def _cell_style(p: float, diff: float, alpha: float) -> str:
    """Green where the row system is significantly better, red where worse, grey otherwise;
    stronger for smaller p."""
    if not np.isfinite(p) or p > alpha:
        return "background:#f2f2f2"
    strength = 1.0 - p / alpha  # 0 .. 1
    light = int(92 - 30 * strength)
    hue = 130 if diff > 0 else 0
    return f"background:hsl({hue},60%,{light}%)"


def significance_section(ctx: Context) -> str:
    """Per metric an S x S table: cell (row a, column b) holds the paired-bootstrap p-value of
    a vs b (``data-v``), coloured by significance and by which system is better."""
    parts = []
    S = len(ctx.names)
    for m, k in enumerate(ctx.metrics):
        sign = -1.0 if ctx.lower_better[m] else 1.0
        rows = []
        for a in range(S):
            row = [f'<th scope="row" class="t">{esc(ctx.names[a])}</th>']
            for b in range(S):
                if a == b:
                    row.append(td("", cls="pcell diag"))
                    continue
                p = float(ctx.p[m, a, b])
                diff = sign * (ctx.scores[m, a] - ctx.scores[m, b])
                rel = "better" if diff > 0 else "worse" if diff < 0 else "equal"
                tip = f"{ctx.names[a]} vs {ctx.names[b]}: {rel}, p = {fmt(p, 4)}"
                row.append(td(fmt(p, 3), p if np.isfinite(p) else None, cls="pcell",
                              style=_cell_style(p, diff, ctx.alpha), title=tip))
            rows.append(row)
        parts.append(f'<div class="matrix" data-metric="{esc(k)}">'
                     + table(["", *ctx.names], rows, cls="sigmatrix", caption=k) + "</div>")
    note = (f"Paired bootstrap p-values (row vs column, {ctx.n_bootstrap} resamples). Green: the row "
            f"system is significantly better (p \u2264 {ctx.alpha}), red: significantly worse, grey: "
            "no significant difference.")
    if S < 2:
        note += " One system: there is nothing to test."
    return section("significance", "Pairwise significance", '<div class="grid">' + "".join(parts) + "</div>",
                   note)
