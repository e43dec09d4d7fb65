"""The HTML report of a system comparison (issue P19): :func:`report` returns one
self-contained HTML page (inline CSS, inline SVG, a small inline script, no network request).

One module per section: :mod:`.scores` (score table with CIs and best clusters; pairwise
significance matrix), :mod:`.distributions`, :mod:`.lengths`, :mod:`.words`, :mod:`.ngrams`,
:mod:`.examples`, :mod:`.agreement`; :mod:`.context` computes the shared numbers once,
:mod:`.page` and :mod:`.svg` write the markup, :mod:`.builder` puts the page together.
"""
from __future__ import annotations

from .builder import SECTIONS, report

__all__ = ["SECTIONS", "report"]
