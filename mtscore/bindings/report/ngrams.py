"""n-grams each system over- and under-produces against the reference, and n-grams one system
of a pair over- / under-produces more than the other (compare-mt's salience)."""
from __future__ import annotations

from ...analysis.compare.ngrams import ngram_table
from .context import Context
from .page import esc, fmt, section, table, td

__all__ = ["ngrams_section"]


def _g(ngram) -> str:
    return " ".join(ngram)


def ngrams_section(ctx: Context, top_k: int = 10) -> str:
    """Per system: the ``top_k`` over- and under-produced n-grams (1..4) with counts; per
    compared pair (``ctx.pairs``): the ``top_k`` n-grams each over-produces more."""
    counts = ngram_table(ctx.ref_tokens, ctx.sys_tokens, kinds=("over", "under"))  # ranked as arrays
    parts = []
    for s, name in enumerate(ctx.names):
        over, under = counts.against_reference(s, top_k)
        n = max(len(over), len(under))
        rows = [[td(_g(over[i][0]) if i < len(over) else "", cls="t"),
                 td(str(over[i][1]) if i < len(over) else "", over[i][1] if i < len(over) else None),
                 td(_g(under[i][0]) if i < len(under) else "", cls="t"),
                 td(str(under[i][1]) if i < len(under) else "", under[i][1] if i < len(under) else None)]
                for i in range(n)]
        parts.append(table(["over-produced", "count", "under-produced", "count"], rows, caption=name))
    body = '<h3>Against the reference</h3><div class="grid">' + "".join(parts) + "</div>"
    pair_parts = []
    for a, b in ctx.pairs:
        na, nb = ctx.names[a], ctx.names[b]
        more_a, more_b = counts.compare(a, b, "over", top_k=top_k)
        tabs = []
        for who, rows_ in ((na, more_a), (nb, more_b)):
            rows = [[td(_g(r.ngram), cls="t"), td(fmt(r.score, 3), r.score), td(str(r.count_a), r.count_a),
                     td(str(r.count_b), r.count_b)] for r in rows_]
            tabs.append(table(["n-gram", "salience", f"over in {na}", f"over in {nb}"], rows,
                              caption=f"over-produced more by {who}"))
        pair_parts.append(f'<div class="pair" data-pair="{a}-{b}"><h3>{esc(na)} vs {esc(nb)}</h3>'
                          f'<div class="grid">{"".join(tabs)}</div></div>')
    if pair_parts:
        body += "".join(pair_parts)
    return section("ngrams", "Over- and under-produced n-grams", body,
                   "n-grams of orders 1-4, counted against every reference; salience "
                   "(a + 1) / (a + b + 2) of the two systems' over-production counts (compare-mt).")
