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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError
from .tokens import Tokens, check_corpus, token_ids

__all__ = ["KINDS", "Ngram", "NgramCounts", "NgramTable", "SalientNgram", "against_reference",
           "compare_systems", "ngram_counts", "ngram_table", "salience", "salient_ngrams",
           "systems_ngram_counts"]

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


def _check_top_k(top_k: int) -> None:
    if not (isinstance(top_k, int) and top_k >= 1):
        raise AnalysisInputError(f"top_k must be an integer >= 1, got {top_k!r}")


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
    under-produced r - min(c, r) times, which is what is summed here (counted as arrays by
    :func:`ngram_table`)."""
    table = ngram_table(refs, systems, min_n, max_n)
    cache: dict[int, Ngram] = {}

    def as_dict(ids: np.ndarray, counts: np.ndarray) -> dict[Ngram, int]:
        out = {}
        for i, c in zip(ids.tolist(), counts.tolist()):
            g = cache.get(i)
            if g is None:
                g = cache[i] = table.ngram(i)
            out[g] = c
        return out

    return [NgramCounts(*(as_dict(*table.counts[s][k]) for k in KINDS)) for s in range(len(systems))]


@dataclass(frozen=True)
class NgramTable:
    """The counts of :func:`systems_ngram_counts` as arrays, for ranking without dicts.

    Every distinct n-gram of the corpus has an id ``0 .. G-1``; :meth:`ngram` gives its tuple.
    ``counts[s][kind]`` (kind in :data:`KINDS`) is ``(ids int64 (G_sk,) ascending, counts
    int64 (G_sk,) >= 1)``: system ``s``'s nonzero counts of that kind."""

    words: list[str]
    starts: np.ndarray
    orders: np.ndarray
    counts: list[dict[str, tuple[np.ndarray, np.ndarray]]]

    def ngram(self, i: int) -> Ngram:
        """The n-gram tuple of id ``i``."""
        p = int(self.starts[i])
        return tuple(self.words[p:p + int(self.orders[i])])

    def _kind(self, s: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
        if kind not in KINDS:
            raise AnalysisInputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if kind not in self.counts[s]:
            raise AnalysisInputError(f"the {kind!r} counts were not kept (ngram_table(..., kinds=...))")
        return self.counts[s][kind]

    def _top(self, ids: np.ndarray, values: np.ndarray, top_k: int, highest: bool) -> list[int]:
        """Indices into ``ids`` of the ``top_k`` highest (lowest) ``values``, ties by n-gram:
        ``heapq.nsmallest`` with key ``(-value, ngram)`` (``(value, ngram)``), with only the
        values at or beyond the k-th turned into tuples."""
        n = len(values)
        if n > top_k:
            if highest:
                kth = np.partition(values, n - top_k)[n - top_k]
                cand = np.flatnonzero(values >= kth)
            else:
                kth = np.partition(values, top_k - 1)[top_k - 1]
                cand = np.flatnonzero(values <= kth)
        else:
            cand = np.arange(n)
        sign = -1 if highest else 1
        keyed = [(sign * v, self.ngram(g), j) for v, g, j in
                 zip(values[cand].tolist(), ids[cand].tolist(), cand.tolist())]
        return [j for _, _, j in heapq.nsmallest(top_k, keyed)]

    def against_reference(self, s: int, top_k: int = 50
                          ) -> tuple[list[tuple[Ngram, int]], list[tuple[Ngram, int]]]:
        """:func:`against_reference` of system ``s`` (the same lists)."""
        _check_top_k(top_k)
        out = []
        for kind in ("over", "under"):
            ids, counts = self._kind(s, kind)
            out.append([(self.ngram(int(ids[j])), int(counts[j]))
                        for j in self._top(ids, counts, top_k, True)])
        return out[0], out[1]

    def compare(self, a: int, b: int, kind: str = "match", alpha: float = 1.0, top_k: int = 50
                ) -> tuple[list[SalientNgram], list[SalientNgram]]:
        """:func:`compare_systems` of systems ``a`` and ``b`` (the same lists and scores: the
        salience is computed with the same float64 operations, over the n-grams of either)."""
        if not alpha > 0:
            raise AnalysisInputError(f"alpha must be > 0, got {alpha!r}")
        _check_top_k(top_k)
        (ia, ca), (ib, cb) = self._kind(a, kind), self._kind(b, kind)
        x = np.zeros(len(self.starts), dtype=np.int64)  # dense over every n-gram id
        y = np.zeros(len(self.starts), dtype=np.int64)
        x[ia] = ca
        y[ib] = cb
        ids = np.flatnonzero(x + y)                      # the n-grams of either
        x, y = x[ids], y[ids]
        score = (x + alpha) / (x + y + 2 * alpha)

        def rows(idx: list[int]) -> list[SalientNgram]:
            return [SalientNgram(self.ngram(int(ids[j])), float(score[j]), int(x[j]), int(y[j])) for j in idx]
        return rows(self._top(ids, score, top_k, True)), rows(self._top(ids, score, top_k, False))


def _sum_by(ids: np.ndarray, vals: np.ndarray, n_ids: int) -> tuple[np.ndarray, np.ndarray]:
    """(ascending ids in ``0 .. n_ids - 1`` with a nonzero sum, int64 sums >= 1) of ``vals``
    >= 0 per id (float64 bincount: exact for integer sums below 2**53)."""
    sums = np.bincount(ids, weights=vals, minlength=n_ids)
    nz = np.flatnonzero(sums)
    return nz.astype(np.int64), sums[nz].astype(np.int64)


def ngram_table(refs: Sequence[Sequence[Tokens]], systems: Sequence[Sequence[Tokens]],
                min_n: int = 1, max_n: int = 4, kinds: Sequence[str] = KINDS) -> NgramTable:
    """:class:`NgramTable` of S systems against K reference streams (the counts of
    :func:`systems_ngram_counts`): tokens mapped to integer ids once, each n-gram of order n
    given a dense id from the (n-1)-gram's id and its last token, and the per-segment counts
    matched with sorted (segment, n-gram) keys. ``kinds``: the counts to keep (of
    :data:`KINDS`; ``counts[s]`` has only those)."""
    n_seg = check_corpus(refs, systems)
    _check_orders(min_n, max_n)
    bad = [k for k in kinds if k not in KINDS]
    if bad or isinstance(kinds, str):
        raise AnalysisInputError(f"kinds must be a list of {', '.join(KINDS)}, got {kinds!r}")
    streams = [*refs, *systems]
    tid = token_ids(streams)
    words, vocab, ids = tid.words, tid.vocab, tid.ids
    seg_len = tid.lens                                           # (T * N,) stream-major
    seg_start = np.concatenate([[0], np.cumsum(seg_len)[:-1]]).astype(np.int64)
    seg_of = np.repeat(np.arange(len(seg_len), dtype=np.int64), seg_len)
    left = seg_len[seg_of] - (np.arange(len(ids), dtype=np.int64) - seg_start[seg_of])  # tokens from here on
    v = max(len(vocab), 1)
    by_order, starts, orders = [], [], []  # by_order: (segment, n-gram id) of each position
    offset = 0
    prev = ids
    for n in range(1, max_n + 1):
        pos = np.flatnonzero(left >= n)
        key = ids[pos] if n == 1 else prev[pos] * v + ids[pos + n - 1]
        uniq, inv = np.unique(key, return_inverse=True)
        inv = inv.reshape(-1).astype(np.int64)
        prev = np.full(len(ids), -1, dtype=np.int64)
        prev[pos] = inv
        if n >= min_n:
            by_order.append((seg_of[pos], inv + offset))
            at = np.empty(len(uniq), dtype=np.int64)
            at[inv] = pos  # one occurrence of each n-gram (any: they spell the same tuple)
            starts.append(at)
            orders.append(np.full(len(uniq), n, dtype=np.int64))
            offset += len(uniq)
    g_total = max(offset, 1)
    # per stream: sorted (segment, n-gram) keys and their counts
    cuts = np.arange(len(streams) + 1, dtype=np.int64) * n_seg
    bounds = [np.searchsorted(seg, cuts) for seg, _ in by_order]
    keyed = []
    for t in range(len(streams)):
        key = np.concatenate([(seg[b[t]:b[t + 1]] - t * n_seg) * g_total + gid[b[t]:b[t + 1]]
                              for (seg, gid), b in zip(by_order, bounds)])
        keyed.append(np.unique(key, return_counts=True))
    n_ref = len(refs)
    ref_ids = [keyed[k][0] % g_total for k in range(n_ref)]
    out = []
    for s in range(len(systems)):
        ko, co = keyed[n_ref + s]
        total, match, under = co * n_ref, np.zeros_like(co), np.zeros(g_total, dtype=np.int64)
        for k in range(n_ref):
            kr, cr = keyed[k]
            match += np.minimum(co, _lookup(kr, cr, ko))
            u = _sum_by(ref_ids[k], np.maximum(cr - _lookup(ko, co, kr), 0), g_total)
            under[u[0]] += u[1]
        go = ko % g_total
        nz = np.flatnonzero(under)
        kept: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for kind, vals in (("total", total), ("match", match), ("over", total - match)):
            if kind in kinds:
                kept[kind] = _sum_by(go, vals, g_total)
        if "under" in kinds:
            kept["under"] = (nz.astype(np.int64), under[nz])
        out.append(kept)
    return NgramTable(words, np.concatenate(starts), np.concatenate(orders), out)


def _lookup(keys: np.ndarray, counts: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The count of each of ``want`` in sorted ``keys`` (0 where absent)."""
    if len(keys) == 0:
        return np.zeros(len(want), dtype=counts.dtype)
    i = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    return np.where(keys[i] == want, counts[i], 0)


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
