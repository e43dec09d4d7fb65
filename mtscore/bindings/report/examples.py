"""The segments where two systems differ most by a sentence metric, with source, reference and
both outputs, word differences marked with ``<del>`` (first system) and ``<ins>`` (second)."""
from __future__ import annotations

import numpy as np

from ...analysis.compare.differences import largest_differences, sentence_scores, token_diff
from .context import Context
from .page import esc, fmt, section

__all__ = ["diff_html", "examples_section"]


def diff_html(a: list[str], b: list[str]) -> tuple[str, str]:
    """``(a_html, b_html)``: both token lists escaped, words only in ``a`` in ``<del>``, words
    only in ``b`` in ``<ins>``."""
    ha, hb = [], []
    for tag, i1, i2, j1, j2 in token_diff(a, b):
        wa, wb = esc(" ".join(a[i1:i2])), esc(" ".join(b[j1:j2]))
        if tag == "equal":
            ha.append(wa)
            hb.append(wb)
            continue
        if i2 > i1:
            ha.append(f"<del>{wa}</del>")
        if j2 > j1:
            hb.append(f"<ins>{wb}</ins>")
    return " ".join(ha), " ".join(hb)


def _segment(ctx: Context, i: int, a: int, b: int, sa: float, sb: float) -> str:
    ta, tb = ctx.systems[a][i].split(), ctx.systems[b][i].split()
    ha, hb = diff_html(ta, tb)
    rows = []
    if ctx.src is not None:
        rows.append(f"<dt>source</dt><dd>{esc(ctx.src[i])}</dd>")
    for k, r in enumerate(ctx.refs):
        rows.append(f"<dt>reference{'' if len(ctx.refs) == 1 else ' ' + str(k + 1)}</dt><dd>{esc(r[i])}</dd>")
    rows.append(f"<dt>{esc(ctx.names[a])} ({fmt(sa)})</dt><dd>{ha}</dd>")
    rows.append(f"<dt>{esc(ctx.names[b])} ({fmt(sb)})</dt><dd>{hb}</dd>")
    n_ref = len(ctx.ref_tokens[0][i])
    return (f'<dl class="seg" data-seg="{i}" data-len="{n_ref}"><dt>segment</dt><dd>{i + 1}'
            f' ({n_ref} reference tokens)</dd>{"".join(rows)}</dl>')


def examples_section(ctx: Context, metric: str, top_k: int = 10) -> str:
    """For each pair of ``ctx.pairs`` (a picker selects one when scripts run): the ``top_k``
    segments where each system's sentence score by ``metric`` is most better than the other's."""
    if not ctx.pairs:
        return section("examples", "Most differing segments", "<p>Needs at least two systems.</p>")
    cache: dict[int, np.ndarray] = {}

    def scores(s: int) -> np.ndarray:
        if s not in cache:
            cache[s] = sentence_scores(metric, ctx.refs, ctx.systems[s])
        return cache[s]

    lower = bool(ctx.lower_better[ctx.metrics.index(metric)]) if metric in ctx.metrics else False
    options, blocks = [], []
    for a, b in ctx.pairs:
        na, nb = ctx.names[a], ctx.names[b]
        sa, sb = scores(a), scores(b)
        a_better, b_better = largest_differences(sa, sb, top_k)
        if lower:
            a_better, b_better = b_better, a_better
        options.append(f'<option value="{a}-{b}">{esc(na)} vs {esc(nb)}</option>')
        html = [f'<div class="pair" data-pair="{a}-{b}"><h3>{esc(na)} vs {esc(nb)}</h3>']
        for who, ix in ((na, a_better), (nb, b_better)):
            html.append(f"<h4>{esc(who)} better</h4>")
            html.extend(_segment(ctx, i, a, b, float(sa[i]), float(sb[i])) for i in ix.tolist())
            if len(ix) == 0:
                html.append("<p>None.</p>")
        html.append("</div>")
        blocks.append("".join(html))
    picker = ('<p id="pair-picker" hidden><label>Compare <select id="pair-select">'
              + "".join(options) + "</select></label> (also selects the pair in the n-gram section)</p>")
    return section("examples", "Most differing segments", picker + _FILTER + "".join(blocks),
                   f"Sentence {metric} of each output in brackets; words only in the first system's "
                   "output are struck through in red, words only in the second's are marked green.")


# the filter of the listed segments (needs the script, so hidden until it runs): reference
# length in tokens, and a text that the source, a reference or an output must contain
_FILTER = ('<p id="example-filter" hidden>Show segments whose reference has '
           '<label>from <input type="number" id="filter-min" min="0" size="4"></label> '
           '<label>to <input type="number" id="filter-max" min="0" size="4"> tokens</label>, '
           '<label>containing <input type="search" id="filter-text" size="20"></label> '
           '<output id="filter-count"></output></p>')
