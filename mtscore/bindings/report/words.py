"""Word F-measure by reference-frequency bucket (compare-mt's word accuracy analysis), with
bootstrap 95% intervals."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ...analysis.compare.word_accuracy import (
    DEFAULT_FREQ_EDGES,
    accuracy_from_counts,
    fmeasure_ci_from_counts,
    segment_counts,
)
from .context import Context
from .page import fmt, section, table, td
from .svg import errorbar_chart, legend

__all__ = ["words_section"]


def words_section(ctx: Context, frequencies: Mapping[str, int] | None = None,
                  edges: Sequence[float] = DEFAULT_FREQ_EDGES) -> str:
    """F-measure per system and bucket (``data-v`` exact), precision / recall in the tooltip,
    the reference word count per bucket in the header; ``frequencies``: word -> count (a
    training corpus), None: counted in the references."""
    counts = segment_counts(ctx.ref_tokens, ctx.sys_tokens, frequencies, edges)  # once for both
    wa = accuracy_from_counts(*counts)
    low, high = fmeasure_ci_from_counts(*counts[1:], n_bootstrap=ctx.n_bootstrap, seed=ctx.seed)
    labels = [f"{lab} ({c})" for lab, c in zip(wa.labels, wa.ref_counts.tolist())]
    # error bars around the F-measure: the larger side of the (asymmetric) interval
    half = np.maximum(wa.fmeasure - low, high - wa.fmeasure)
    fig = errorbar_chart(labels, ctx.names, wa.fmeasure, half, "word F-measure by frequency bucket")
    rows = []
    for s, name in enumerate(ctx.names):
        row = [td(name, cls="t")]
        for b in range(len(wa.labels)):
            tip = (f"precision {fmt(wa.precision[s, b], 4)}, recall {fmt(wa.recall[s, b], 4)}, "
                   f"95% CI [{fmt(low[s, b], 4)}, {fmt(high[s, b], 4)}]")
            row.append(td(fmt(wa.fmeasure[s, b], 4), wa.fmeasure[s, b], title=tip))
        rows.append(row)
    src = "the given frequency table" if frequencies is not None else "the references"
    body = legend(ctx.names) + fig + table(["System", *labels], rows, caption="Word F-measure", ident="word-fmeasure")
    return section("words", "Word F-measure by frequency", body,
                   f"compare-mt's word accuracy: words bucketed by their frequency in {src} "
                   "(reference words per bucket in brackets); bootstrap 95% intervals.")
