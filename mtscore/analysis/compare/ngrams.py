"""Salient n-grams: what a system over- or under-produces against the reference, and which
n-grams distinguish two systems (compare-mt's ``ngram_utils.compare_ngrams`` and
``stat_utils.extract_salient_features``, Neubig et al. 2019).

Counts (per segment, n = ``min_n`` .. ``max_n``, default 1..4): every output n-gram is counted in
``total``; in output order it is a ``match`` while the reference still has an unmatched copy of
it, else ``over``-produced; the reference n-grams left unmatched are ``under``-produced. With K
references the counts of the K pairings (outputs against each reference stream) are summed;
with K = 1 they are compare-mt's.

Salience of n-gram g between counts a and b (one of total / match / over / under of two
systems): ``(a[g] + alpha) / (a[g] + b[g] + 2 * alpha)`` (alpha = 1: Laplace smoothing; compare-mt's
float operations), over the n-grams present in either. compare-mt lists the highest and lowest
scores in an order among ties that depends on Python's string hashing; here ties are broken by
the n-gram (tuple order), so the lists are deterministic.
"""
from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import AnalysisInputError
from .tokens import Tokens, check_corpus

__all__ = ["KINDS", "Ngram", "NgramCounts", "SalientNgram", "against_reference", "compare_systems",
           "ngram_counts", "salience", "salient_ngrams", "systems_ngram_counts"]

Ngram = tuple[str, ...]
#: the four counts of :class:`NgramCounts`
KINDS = ("total", "match", "over", "under")


@dataclass(frozen=True)
class NgramCounts:
    """n-gram counts of one system against the reference(s): ``total`` (output n-grams),
    ``match``, ``over`` (output n-grams with no reference copy left), ``under`` (reference
    n-grams the output lacks); each n-gram tuple -> count >= 1 (absent: 0)."""

    total: dict[Ngram, int]
    match: dict[Ngram, int]
    over: dict[Ngram, int]
    under: dict[Ngram, int]

    def kind(self, name: str) -> dict[Ngram, int]:
        """The count dict named ``name`` (one of :data:`KINDS`)."""
        if name not in KINDS:
            raise AnalysisInputError(f"kind must be one of {', '.join(KINDS)}, got {name!r}")
        out: dict[Ngram, int] = getattr(self, name)
        return out


@dataclass(frozen=True)
class SalientNgram:
    """One row of a salient n-gram list: the n-gram, its salience score (float) and its counts
    in the two compared count dicts."""

    ngram: Ngram
    score: float
    count_a: int
    count_b: int


def _sent_ngrams(words: Tokens, min_n: int, max_n: int) -> list[Ngram]:
    # compare-mt's iterate_sent_ngrams order: by length, then by position
    return [tuple(words[i:i + n]) for n in range(min_n, max_n + 1) for i in range(len(words) - n + 1)]


def _check_orders(min_n: int, max_n: int) -> None:
    if not (isinstance(min_n, int) and isinstance(max_n, int) and 1 <= min_n <= max_n):
        raise AnalysisInputError(f"n-gram orders must satisfy 1 <= min_n <= max_n, got min_n={min_n!r}, "
                                 f"max_n={max_n!r}")


def ngram_counts(refs: Sequence[Sequence[Tokens]], system: Sequence[Tokens], min_n: int = 1,
                 max_n: int = 4) -> NgramCounts:
    """:class:`NgramCounts` of ``system`` (N token lists) against K reference streams ``refs``."""
    return systems_ngram_counts(refs, [system], min_n, max_n)[0]


def systems_ngram_counts(refs: Sequence[Sequence[Tokens]], systems: Sequence[Sequence[Tokens]],
                         min_n: int = 1, max_n: int = 4) -> list[NgramCounts]:
    """:func:`ngram_counts` of each of S systems (the reference n-grams are counted once).

    Matching in output order clips: an n-gram with c copies in the output and r in the
    reference segment is matched min(c, r) times, over-produced c - min(c, r) times and
    under-produced r - min(c, r) times, which is what is summed here."""
    check_corpus(refs, systems)
    _check_orders(min_n, max_n)
    acc: list[tuple[dict[Ngram, int], ...]] = [({}, {}, {}, {}) for _ in systems]
    for ref in refs:
        for i, r in enumerate(ref):
            rc = Counter(_sent_ngrams(r, min_n, max_n))
            for (total, match, over, under), sys_ in zip(acc, systems):
                oc = Counter(_sent_ngrams(sys_[i], min_n, max_n))
                for g, c in oc.items():
                    total[g] = total.get(g, 0) + c
                    m = min(c, rc.get(g, 0))
                    if m:
                        match[g] = match.get(g, 0) + m
                    if c > m:
                        over[g] = over.get(g, 0) + c - m
                for g, c in rc.items():
                    u = c - oc.get(g, 0)
                    if u > 0:
                        under[g] = under.get(g, 0) + u
    return [NgramCounts(*a) for a in acc]


def salience(a: Mapping[Ngram, int], b: Mapping[Ngram, int], alpha: float = 1.0) -> dict[Ngram, float]:
    """Score of every n-gram in ``a`` or ``b``: ``(a + alpha) / (a + b + 2 * alpha)``
    (compare-mt's ``extract_salient_features``); 0.5 means no difference."""
    if not alpha > 0:
        raise AnalysisInputError(f"alpha must be > 0, got {alpha!r}")
    out = {}
    for g in set(a) | set(b):
        x, y = a.get(g, 0), b.get(g, 0)
        out[g] = (x + alpha) / (x + y + 2 * alpha)
    return out


def salient_ngrams(a: Mapping[Ngram, int], b: Mapping[Ngram, int], alpha: float = 1.0,
                   top_k: int = 50) -> tuple[list[SalientNgram], list[SalientNgram]]:
    """``(more_in_a, more_in_b)``: the ``top_k`` n-grams with the highest salience score (most
    characteristic of ``a``) and with the lowest (of ``b``), each ordered from the most salient;
    ties by n-gram. compare-mt's two tables of its n-gram report."""
    if not (isinstance(top_k, int) and top_k >= 1):
        raise AnalysisInputError(f"top_k must be an integer >= 1, got {top_k!r}")
    sc = salience(a, b, alpha)
    # heapq.nsmallest equals sorted(...)[:top_k] (the keys are distinct), in O(n log top_k)
    high = heapq.nsmallest(top_k, sc.items(), key=lambda kv: (-kv[1], kv[0]))
    low = heapq.nsmallest(top_k, sc.items(), key=lambda kv: (kv[1], kv[0]))
    def rows(items):
        return [SalientNgram(g, s, a.get(g, 0), b.get(g, 0)) for g, s in items]
    return rows(high), rows(low)


def compare_systems(counts_a: NgramCounts, counts_b: NgramCounts, kind: str = "match",
                    alpha: float = 1.0, top_k: int = 50) -> tuple[list[SalientNgram], list[SalientNgram]]:
    """:func:`salient_ngrams` of one kind of count (``match``, compare-mt's default: n-grams one
    system gets right more often; ``over`` / ``under``: n-grams it over- / under-produces more)
    of system A against system B."""
    return salient_ngrams(counts_a.kind(kind), counts_b.kind(kind), alpha, top_k)


def against_reference(counts: NgramCounts, top_k: int = 50
                      ) -> tuple[list[tuple[Ngram, int]], list[tuple[Ngram, int]]]:
    """``(over, under)``: the ``top_k`` n-grams one system over-produces (output copies beyond
    the reference's) and under-produces (reference copies it lacks) most, as (n-gram, count),
    by count descending, ties by n-gram."""
    if not (isinstance(top_k, int) and top_k >= 1):
        raise AnalysisInputError(f"top_k must be an integer >= 1, got {top_k!r}")
    def top(d: Mapping[Ngram, int]) -> list[tuple[Ngram, int]]:
        return heapq.nsmallest(top_k, d.items(), key=lambda kv: (-kv[1], kv[0]))
    return top(counts.over), top(counts.under)
