"""Shared machinery of the compiled lexical metrics (BLEU, chrF): references prepared once per
reference set, split into segment chunks that worker threads process in parallel (the kernels
release the GIL; each chunk has its own vocabulary, since ids only need to agree within a
segment)."""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from ...kernels import _ngram
from ...kernels._lists import dedupe_index, take
from ..parallel import chunk_bounds, resolve_workers, run_parallel
from .base import Metric, check_sentence_args, count_refs, present_mask


class PreparedRefs:
    """Prepared references: per chunk ``(start, stop, chunk_state)``. The chunk states hold
    vocabularies that scoring extends, so one scoring call at a time uses them (``lock``).
    ``seg_map`` (int64 (n,)): segment i uses prepared row ``seg_map[i]`` when repeated
    reference rows were prepared once (chunks then hold ranges of those rows).
    ``row_missing`` (bool (rows,) or None): prepared rows with no reference at all."""

    __slots__ = ("chunks", "lock", "n", "num_refs", "row_missing", "seg_map")

    def __init__(self, n: int, chunks: list, num_refs: int, seg_map=None, row_missing=None):
        self.n = n
        self.chunks = chunks
        self.num_refs = num_refs
        self.lock = threading.Lock()
        self.seg_map = seg_map
        self.row_missing = row_missing

    def missing(self) -> np.ndarray | None:
        """bool (n,): segments with no reference, or None when every segment has one."""
        if self.row_missing is None:
            return None
        return self.row_missing if self.seg_map is None else self.row_missing[self.seg_map]

    def slice(self, a: int, z: int) -> PreparedRefs:
        """Segments ``a:z`` of these references: the same prepared state (and lock), so that a
        long corpus whose reference rows repeat is prepared once and scored chunk by chunk."""
        seg_map = (self.seg_map[a:z] if self.seg_map is not None
                   else np.arange(a, z, dtype=np.int64))
        part = PreparedRefs(z - a, self.chunks, self.num_refs, seg_map, self.row_missing)
        part.lock = self.lock
        return part


def dedupe_rows(streams, max_distinct: int = -1) -> tuple[np.ndarray, np.ndarray] | None:
    """``(first, seg_map)``: the index of the first occurrence of each distinct reference row
    (the K strings of a segment, None included) and, per segment, its distinct row; None when
    ``max_distinct`` >= 0 and more rows than that are distinct."""
    return dedupe_index(streams[0] if len(streams) == 1 else list(zip(*streams)), max_distinct)


def _rows_ascending(rows: np.ndarray) -> bool:
    return len(rows) < 2 or bool((rows[1:] >= rows[:-1]).all())


#: prepare repeated reference rows once when at most this share of the rows is distinct
DEDUPE_MAX_SHARE = 0.5


def _sample_repeats(streams, size: int = 1024) -> bool:
    """Whether ~``size`` evenly spaced reference rows already contain a repeat: a cheap test
    before :func:`dedupe_rows` (rows where a fifth or more repeat show repeats in such a
    sample all but surely; missing one only costs the optimisation)."""
    n = len(streams[0])
    step = max(1, n // size)
    rows = streams[0][::step] if len(streams) == 1 else list(zip(*(st[::step] for st in streams)))
    return len(dict.fromkeys(rows)) < len(rows)


def repeated_rows(streams, max_distinct: int | None = None):
    """:func:`dedupe_rows` of the reference streams when preparing each distinct row once pays
    (at most ``DEDUPE_MAX_SHARE`` of the rows distinct and, if given, at most ``max_distinct``
    of them), else None."""
    n = len(streams[0])
    if n < 2 or not _sample_repeats(streams):
        return None
    limit = int(DEDUPE_MAX_SHARE * n)
    if max_distinct is not None:
        limit = min(limit, max_distinct)
    return dedupe_rows(streams, limit)


#: characters of an average reference row the memory bound of ``chunk_size`` rows was set for
#: (WMT21 news text averages ~140): a corpus of more rows but at most ``chunk_size *
#: CHUNK_ROW_CHARS`` reference characters (short, UI-message-like segments) is one chunk
CHUNK_ROW_CHARS = 128


def _total_chars(streams, limit: int) -> bool:
    """Whether the reference streams hold at most ``limit`` characters in all (None counts 0)."""
    total = 0
    for st in streams:
        try:
            total += sum(map(len, st))
        except TypeError:  # None among the rows
            total += sum(len(x) for x in st if x is not None)
        if total > limit:
            return False
    return True


# Recently prepared reference sets, so that scoring system after system against the same
# references (each call passing them again, the usual sacrebleu loop) prepares them once.
# Keyed by the options that shape preparation; a hit needs equal reference streams.
_PREPARED: OrderedDict[tuple, tuple] = OrderedDict()
_PREPARED_LOCK = threading.Lock()
_PREPARED_SLOTS = 2
_PREPARED_MAX_SEGMENTS = 200_000


class LexicalMetric(Metric):
    """Subclasses implement ``_prepare_chunk(streams, present) -> state`` and
    ``_chunk_stats(hyps, state, seg_map=None) -> (stats, sentence_scores or None)``."""

    #: threads used to prepare references and score hypotheses (0 = all cores)
    workers: int = 1
    dedupes_outputs = True

    def _check_sentence_args(self, hypothesis, references) -> None:
        """sacrebleu's argument checks of ``sentence_score`` (its TypeErrors and messages)."""
        check_sentence_args(self, hypothesis, references)

    def _prepare_chunk(self, streams, present):  # pragma: no cover - abstract
        raise NotImplementedError

    def _chunk_stats(self, hyps, state, seg_map=None):  # pragma: no cover - abstract
        raise NotImplementedError

    def _prep_config(self) -> tuple:
        """Options that change reference preparation (part of the reuse key)."""
        raise NotImplementedError

    def prepare(self, refs, rows=None) -> PreparedRefs:
        streams = self._coerce_refs(refs)
        if rows is not None:  # distinct rows known (a long table): prepare each once, uncached
            return self._prepare_streams(streams, rows)
        key = (type(self).__name__, self._prep_config(), resolve_workers(self.workers))
        with _PREPARED_LOCK:
            hit = _PREPARED.get(key)
        if hit is not None and hit[0] == streams:
            with _PREPARED_LOCK:
                if key in _PREPARED:
                    _PREPARED.move_to_end(key)
            self.num_refs = hit[1].num_refs
            return hit[1]
        prepared = self._prepare_streams(streams)
        if prepared.n <= _PREPARED_MAX_SEGMENTS:
            with _PREPARED_LOCK:
                _PREPARED[key] = (streams, prepared)
                _PREPARED.move_to_end(key)
                while len(_PREPARED) > _PREPARED_SLOTS:
                    _PREPARED.popitem(last=False)
        return prepared

    def _prepare_streams(self, streams, rows="auto") -> PreparedRefs:
        """``rows``: :func:`repeated_rows` of ``streams`` when already known (None = prepare
        every row), "auto" = find out."""
        present = present_mask(streams)
        self.num_refs = count_refs(present)
        n = len(streams[0])
        w = resolve_workers(self.workers)
        seg_map = None
        if isinstance(rows, str):
            rows = repeated_rows(streams)
        if rows is not None:
            # a long multi-system table repeats its references: prepare each distinct row once;
            # chunks then hold ranges of distinct rows (segment i uses row seg_map[i])
            first, seg_map = rows
            if w > 1 and len(first) > w:
                # rows first seen early are used by more segments: deal the distinct rows out
                # round-robin so that every chunk gets a like share of rows and of segments
                perm = np.concatenate([np.arange(p, len(first), w) for p in range(w)])
                rank = np.empty_like(perm)
                rank[perm] = np.arange(len(perm))
                first, seg_map = first[perm], rank[seg_map]
            idx = first.tolist()
            streams = [[st[i] for i in idx] for st in streams]
            present = np.ascontiguousarray(present[:, first])
        bounds = chunk_bounds(len(streams[0]), w)

        def prep(b):
            a, z = b
            return (a, z, self._prepare_chunk([s[a:z] for s in streams],
                                              np.ascontiguousarray(present[:, a:z])))

        row_missing = ~present.any(axis=0)
        return PreparedRefs(n, run_parallel(prep, bounds, w), self.num_refs, seg_map,
                            row_missing if row_missing.any() else None)

    def stats_and_scores(self, hyps, prepared: PreparedRefs, sentence_level: bool = True,
                         check: bool = True):
        """``(stats, sentence scores or None)``; the chrF kernel gives the scores in the same
        pass, BLEU's come from :meth:`scores_from_stats` when ``sentence_level``."""
        hyps = self._coerce_hyps(hyps)
        if len(hyps) != prepared.n:
            raise ValueError(
                f"{type(self).__name__}: {len(hyps)} hypotheses but {prepared.n} reference "
                "segments (sacrebleu would silently truncate; mtscore refuses).")
        if check:
            self._check_hyps(hyps)
        skip = self._skipped(prepared, warn=check)
        self.num_refs = prepared.num_refs
        w = resolve_workers(self.workers)
        with prepared.lock:
            if prepared.seg_map is None:
                parts = run_parallel(lambda c: self._chunk_stats(hyps[c[0]:c[1]], c[2]),
                                     prepared.chunks, w)
                stats = parts[0][0] if len(parts) == 1 else np.concatenate([p[0] for p in parts])
                scores = (None if parts[0][1] is None else
                          parts[0][1] if len(parts) == 1 else np.concatenate([p[1] for p in parts]))
            else:
                stats, scores = self._stats_by_row_chunk(hyps, prepared, w)
        if skip is not None:
            stats[skip] = 0
        if scores is None and (sentence_level or skip is not None):
            scores = self.scores_from_stats(stats)
        if skip is not None:
            assert scores is not None  # computed above whenever segments are skipped
            scores[skip] = np.nan
        return stats, scores

    def rows_stats_and_scores(self, hyps: list[str], rows, prepared: PreparedRefs,
                               sentence_level: bool = True):
        """Statistics of ``hyps[j]`` against prepared segment ``rows[j]`` (int64, ascending:
        consecutive hypotheses of one segment then share the kernel's reference table), for
        :meth:`Metric.systems_stats_and_scores`."""
        if prepared.seg_map is not None:
            rows = prepared.seg_map[rows]
        view = PreparedRefs(len(hyps), prepared.chunks, prepared.num_refs, rows,
                            prepared.row_missing)
        view.lock = prepared.lock
        return self.stats_and_scores(hyps, view, sentence_level, check=False)

    def _stats_by_row_chunk(self, hyps, prepared: PreparedRefs, w: int):
        """Deduplicated references: each chunk scores the segments whose reference row it
        holds (its own vocabulary), in order of their row so that the kernel builds a row's
        lookup table once for all the segments that use it, and the results are scattered
        back into segment order."""
        seg_map = prepared.seg_map
        if _rows_ascending(seg_map) and len(prepared.chunks) == 1:
            return self._chunk_stats(hyps, prepared.chunks[0][2], seg_map)
        # chunks hold contiguous ranges of rows: positions sorted by row fall into one
        # contiguous group per chunk
        order = _ngram.order_by_row(seg_map, prepared.chunks[-1][1])
        starts = np.array([c[0] for c in prepared.chunks] + [prepared.chunks[-1][1]], dtype=np.int64)
        cuts = np.searchsorted(seg_map[order], starts).tolist()
        groups = [order[cuts[c]:cuts[c + 1]] for c in range(len(prepared.chunks))]

        def run(c):
            a, _, state = prepared.chunks[c]
            idx = groups[c]
            return self._chunk_stats(take(hyps, idx), state, np.ascontiguousarray(seg_map[idx] - a))

        parts = run_parallel(run, list(range(len(prepared.chunks))), w)
        stats = np.empty((len(hyps), parts[0][0].shape[1]), dtype=parts[0][0].dtype)
        scores = None if parts[0][1] is None else np.empty(len(hyps), dtype=np.float64)
        for idx, (st, sc) in zip(groups, parts):
            stats[idx] = st
            if scores is not None:
                scores[idx] = sc
        return stats, scores

    #: corpus_stats(hyps, refs) on more segments than this works chunk by chunk (bounded memory)
    #: unless the references are short (see :data:`CHUNK_ROW_CHARS`)
    chunk_size: int = 16384
    #: rough bytes of prepared state per reference row (WMT21 text, 32768 rows: chrF ~7.5 KB
    #: held and ~13 KB at the peak of preparation, BLEU ~1.6 KB); see :meth:`max_shared_rows`
    _REF_ROW_BYTES: int = 8192

    def max_shared_rows(self, chunk_size: int) -> int:
        """Distinct reference rows prepared at once for a chunked corpus whose rows repeat:
        ``2 * chunk_size`` for chrF (~420 MB at the peak for the default 16384), ``8 *
        chunk_size`` for BLEU (~210 MB held). More distinct rows than that: chunk by chunk."""
        return chunk_size * 16384 // self._REF_ROW_BYTES

    def prepares_rows_once(self, n_rows: int, chunk_size: int) -> bool:
        return n_rows <= self.max_shared_rows(chunk_size)

    def corpus_stats(self, hyps, refs=None):
        """Per-segment sufficient statistics, an ``(N, k)`` numpy array. With ``refs`` given and
        N larger than ``chunk_size``, references are prepared and dropped chunk by chunk."""
        if refs is None:
            return super().corpus_stats(hyps, refs)
        hyps = self._coerce_hyps(hyps)
        streams = self._coerce_refs(refs, len(hyps))
        n = len(hyps)
        if n <= self.chunk_size or _total_chars(streams, self.chunk_size * CHUNK_ROW_CHARS):
            return self.stats(hyps, self.prepare(streams))
        rows = repeated_rows(streams, max_distinct=self.max_shared_rows(self.chunk_size))
        if rows is not None:
            # few distinct reference rows (a multi-system table): prepare them once (bounded
            # like one chunk) and score the hypotheses chunk by chunk against them
            prepared = self._prepare_streams(streams, rows)
            return np.concatenate([
                self.stats(hyps[a:a + self.chunk_size],
                                          prepared.slice(a, min(n, a + self.chunk_size)))
                for a in range(0, n, self.chunk_size)])
        num_refs = count_refs(present_mask(streams))
        parts = []
        for a in range(0, n, self.chunk_size):
            z = min(n, a + self.chunk_size)
            prepared = self._prepare_streams([st[a:z] for st in streams])
            parts.append(self.stats(hyps[a:z], prepared))
        self.num_refs = num_refs
        return np.concatenate(parts)

    def stats(self, hyps, prepared: PreparedRefs) -> np.ndarray:
        return self.stats_and_scores(hyps, prepared, False)[0]

    def segment_scores(self, hyps, refs=None):
        """``(stats (N, k), sentence scores float64 (N,))`` in one pass; each sentence score equals
        ``sentence_score(hyps[i], [r[i] for r in refs])``."""
        stats, scores = self.stats_and_scores(hyps, self._get_prepared(refs))
        if scores is None:
            scores = self.scores_from_stats(stats)
        return stats, scores
