"""``mtscore.report(...)``: one self-contained HTML page comparing systems (issue P19)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from ..._version import __version__
from ...analysis.compare.buckets import DEFAULT_LENGTH_EDGES
from ...analysis.compare.word_accuracy import DEFAULT_FREQ_EDGES
from .agreement import agreement_section
from .context import Context, build_context, check_input
from .distributions import distributions_section
from .examples import examples_section
from .lengths import length_buckets_section
from .ngrams import ngrams_section
from .page import esc, page
from .scores import score_table_section, significance_section
from .words import words_section

__all__ = ["BUCKETS", "SECTIONS", "report"]

#: the ids of the report's sections, in page order
SECTIONS = ("scores", "significance", "distributions", "lengths", "words", "ngrams", "examples",
            "agreement")

#: the length buckets :func:`report` can show: by reference length, by source length
BUCKETS = ("ref", "src")

#: with more systems than this, the default pairs are the best system (first metric) vs each other
MAX_ALL_PAIRS = 5


def _pairs(ctx: Context, pairs) -> list[tuple[int, int]]:
    names = ctx.names
    if pairs is None:
        if len(names) <= MAX_ALL_PAIRS:
            return list(combinations(range(len(names)), 2))
        best = int(ctx.best[0])
        return [(best, s) for s in range(len(names)) if s != best]
    out = []
    for i, pr in enumerate(pairs):
        if isinstance(pr, str) or len(pr) != 2:
            raise ValueError(f"report: pairs[{i}] must be two system names, got {pr!r}")
        for x in pr:
            if x not in names:
                raise ValueError(f"report: pairs[{i}] names {x!r}, which is not one of the systems {names}")
        if pr[0] == pr[1]:
            raise ValueError(f"report: pairs[{i}] compares {pr[0]!r} with itself")
        out.append((names.index(pr[0]), names.index(pr[1])))
    return out


def _bucket_kinds(buckets: Sequence[str] | None, has_src: bool) -> tuple[str, ...]:
    """The checked ``buckets`` of :func:`report` (``ref`` / ``src``, in that order)."""
    if buckets is None:
        return ("ref", "src") if has_src else ("ref",)
    if isinstance(buckets, str):
        buckets = [buckets]
    bad = [b for b in buckets if b not in BUCKETS]
    if bad or not buckets:
        raise ValueError(f"report: buckets must name one or more of {', '.join(BUCKETS)}, got "
                         f"{list(buckets)!r}")
    if "src" in buckets and not has_src:
        raise ValueError("report: source-length buckets need the source (src= / --src)")
    return tuple(b for b in BUCKETS if b in buckets)


def report(refs: Sequence[str] | Sequence[Sequence[str]], systems: Mapping[str, Sequence[str]], *,
           src: Sequence[str] | None = None, metrics: Sequence[str] = ("bleu", "chrf", "ter"),
           n_bootstrap: int = 1000, seed: int = 12345, alpha: float = 0.05,
           pairs: Sequence[tuple[str, str]] | None = None, diff_metric: str | None = None,
           top_k: int = 10, tokenizer: str = "13a", frequencies: Mapping[str, int] | None = None,
           length_edges: Sequence[float] = DEFAULT_LENGTH_EDGES,
           freq_edges: Sequence[float] = DEFAULT_FREQ_EDGES,
           metric_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
           buckets: Sequence[str] | None = None, title: str = "mtscore report") -> str:
    """A self-contained HTML report (a ``str``) comparing ``systems`` against ``refs``.

    refs        : one reference stream (N strings) or K streams
    systems     : ``{name: N outputs}``, one or more systems, in display order
    src         : N source segments (optional: source-length buckets and the source in examples)
    metrics     : registered metric names (bleu, chrf, chrf++, ter, ..., bertscore); those without
                  resampled statistics whose corpus score is the mean of sentence scores
                  (bertscore) get the bootstrap of that mean as CI and the paired bootstrap of
                  the mean as p-values (:func:`mtscore.compare_segment_scores`)
    n_bootstrap, seed : resamples and seed of every CI and paired test (deterministic output)
    alpha       : significance level of the clusters and the matrix colours
    pairs       : the (A, B) system pairs whose differing segments and n-grams are shown (a
                  picker selects one when scripts run); default every pair up to
                  ``MAX_ALL_PAIRS`` systems, else the best system (first metric) vs each other
    diff_metric : sentence metric ranking the differing segments (default: the first metric)
    top_k       : rows of the n-gram lists and segments per side of a pair
    tokenizer   : BLEU tokenizer of the word / n-gram / length analyses (default ``13a``)
    frequencies : word -> count for the frequency buckets (default: counted in the references)
    buckets     : the length buckets shown: ``"ref"`` (first reference's length) and / or ``"src"``
                  (source length); default: ``ref``, plus ``src`` when ``src`` is given

    Sections (``<section id=...>``): :data:`SECTIONS`. Bad input (streams of different lengths,
    an empty system, an unknown pair) raises ValueError naming it. Nothing is fetched: the
    page has inline CSS, inline SVG figures and a small inline script (table sorting, pair
    picking); with scripts off every table and every pair is shown.
    """
    ref_streams, sys_lines, src_lines = check_input(refs, systems, src, metrics)
    kinds = _bucket_kinds(buckets, src_lines is not None)
    if not (isinstance(n_bootstrap, int) and n_bootstrap >= 2):
        raise ValueError(f"report: n_bootstrap must be an integer >= 2, got {n_bootstrap!r}")
    if not (isinstance(top_k, int) and top_k >= 1):
        raise ValueError(f"report: top_k must be an integer >= 1, got {top_k!r}")
    ctx = build_context(ref_streams, sys_lines, src_lines, [m.lower() for m in metrics], n_bootstrap,
                        seed, alpha, tokenizer, metric_kwargs)
    ctx.pairs = _pairs(ctx, pairs)
    dm = (diff_metric or ctx.metrics[0]).lower()
    sections = [
        score_table_section(ctx),
        significance_section(ctx),
        distributions_section(ctx),
        length_buckets_section(ctx, length_edges, kinds),
        words_section(ctx, frequencies, freq_edges),
        ngrams_section(ctx, top_k),
        examples_section(ctx, dm, top_k),
        agreement_section(ctx),
    ]
    n = len(ref_streams[0])
    intro = (f'<p class="note">{len(ctx.names)} system(s), {n} segments, {len(ref_streams)} '
             f"reference(s); metrics: {esc(', '.join(ctx.metrics))}. Made by mtscore "
             f"{esc(__version__)}.</p>")
    return page(title, intro, sections)
