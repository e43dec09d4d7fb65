"""TER (translation edit rate), identical to sacrebleu 2.6.0's ``sacrebleu.metrics.TER``.

Per-segment statistics are ``[edits, avg_ref_len]`` (an ``(N, 2)`` float64 matrix): the fewest
edits (shifts + banded Levenshtein) over the segment's references, and the MEAN length of all
its references (Tercom semantics). The corpus score is ``100 * sum(edits) / sum(avg_ref_len)``.

Work split:

* references are normalised + interned ONCE per metric (``prepare``) into int32 token ids
  and reused for every system scored against them (with sacrebleu's quirk: references are
  Tercom-normalised twice, which changes tokens under ``normalized=True``);
* the Tercom normaliser and the shift search run compiled (``mtscore.kernels._ter_normalize``
  and ``_ter_shift``; ``_ter_fused`` fuses both for the one-call paths), the search without
  the GIL; with ``workers=k`` the calling thread and k - 1 pool threads claim
  segments (costliest first) from a shared counter, and tokenisation of the next chunk of
  hypotheses overlaps the search of the previous ones.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, cast

import numpy as np

from ...kernels import _ter_fused, _ter_normalize, _ter_shift
from ...kernels._lists import first_non_str, take
from ..parallel import get_pool  # one process-wide pool per size, shared with BLEU/chrF (leaf tasks only)
from . import pairwise, resampled
from .base import Metric, Score, Signature

__all__ = ["TER", "TERScore", "TERSignature", "ter_stats"]


class TERSignature(Signature):
    """Signature of a TER run, e.g.
    ``nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0``."""

    def __init__(self, args: dict):
        super().__init__(args)
        self._abbr.update({"case": "c", "tok": "t", "norm": "nr", "punct": "pn", "asian": "as"})
        self.info.update({
            "case": "mixed" if args["case_sensitive"] else "lc",
            "tok": args["tokenizer_signature"],
            "norm": args["normalized"],
            "punct": not args["no_punct"],
            "asian": args["asian_support"],
        })


class TERScore(Score):
    """TER score: ``score`` (0-100+), ``num_edits`` (int), ``ref_length`` (float, the summed
    mean reference lengths)."""

    def __init__(self, score: float, num_edits: float, ref_length: float):
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


class _PreparedRefs:
    """References normalised and interned once: CSR token ids plus the per-segment ranges.

    ``ref_ids`` int32, ``ref_offsets`` int64 (one per non-None reference string, + 1),
    ``seg_refs`` int64 of length ``n + 1`` (segment i uses references
    ``seg_refs[i]:seg_refs[i+1]``, in stream order)."""

    __slots__ = ("n", "num_refs", "ref_ids", "ref_offsets", "seg_refs")

    def __init__(self, n, ref_ids, ref_offsets, seg_refs, num_refs):
        self.n = n
        self.ref_ids = ref_ids
        self.ref_offsets = ref_offsets
        self.seg_refs = seg_refs
        self.num_refs = num_refs

    def slice(self, a: int, z: int) -> _PreparedRefs:
        """Segments ``a:z``: the same reference arrays, a range of ``seg_refs`` (it indexes
        ``ref_offsets`` absolutely, so it needs no rebasing)."""
        return _PreparedRefs(z - a, self.ref_ids, self.ref_offsets,
                             np.ascontiguousarray(self.seg_refs[a:z + 1]), self.num_refs)

    def missing(self) -> np.ndarray | None:
        """bool (n,): segments with no reference, or None when every segment has one."""
        missing = np.diff(self.seg_refs) == 0
        return missing if missing.any() else None


def _cost_order(hyp_offsets: np.ndarray, ref_offsets: np.ndarray, seg_refs: np.ndarray) -> np.ndarray:
    """Segment indices, most expensive first by estimated cost (hyp length x summed reference
    length, the size of the edit-distance tables): threads that claim work in this order
    finish together, no long segment is left for one thread at the end."""
    # the references of a segment are contiguous: their tokens span ref_offsets[a]..[b]
    per_seg_ref = ref_offsets[seg_refs[1:]] - ref_offsets[seg_refs[:-1]]
    cost = (np.diff(hyp_offsets) + 1) * (per_seg_ref + 1)
    return np.ascontiguousarray(np.argsort(-cost, kind="stable"), dtype=np.int64)


#: segments a thread claims at a time (a segment takes ~15 us on news data)
_GRAIN = 4

#: hypotheses tokenised per step while other threads search (workers > 1)
_PIPE_CHUNK = 256
#: guards the first creation of a metric's vocabulary (ids from two vocabularies must not mix)
_VOCAB_LOCK = threading.Lock()


def ter_stats(hyp_ids: np.ndarray, hyp_offsets: np.ndarray, ref_ids: np.ndarray,
              ref_offsets: np.ndarray, seg_refs: np.ndarray, workers: int = 1) -> np.ndarray:
    """TER statistics of token-id sequences (no text involved).

    Inputs are CSR arrays: ``hyp_ids`` int32 + ``hyp_offsets`` int64 (N + 1); ``ref_ids`` int32
    + ``ref_offsets`` int64 (R + 1); ``seg_refs`` int64 (N + 1), the reference range of each
    segment (at least one reference each). Returns an ``(N, 2)`` float64 array
    ``[edits, avg_ref_len]``. With ``workers`` = k > 1, the calling thread and k - 1 pool
    threads claim segments, costliest first, a few at a time from a shared counter (GIL
    released), so the threads stay busy until the end whatever the segments cost.
    """
    hyp_ids = np.ascontiguousarray(hyp_ids, dtype=np.int32)
    hyp_offsets = np.ascontiguousarray(hyp_offsets, dtype=np.int64)
    ref_ids = np.ascontiguousarray(ref_ids, dtype=np.int32)
    ref_offsets = np.ascontiguousarray(ref_offsets, dtype=np.int64)
    seg_refs = np.ascontiguousarray(seg_refs, dtype=np.int64)
    n = len(hyp_offsets) - 1
    out = np.zeros((n, 2), dtype=np.float64)
    args = (hyp_ids, hyp_offsets, ref_ids, ref_offsets, seg_refs, out)
    workers = max(1, int(workers))
    if workers == 1 or n < 2 * workers * _GRAIN:
        _ter_shift.ter_stats_range(*args, 0, n)
        return out
    if len(seg_refs) != n + 1:
        raise ValueError("ter_stats: seg_refs must hold N + 1 offsets")
    empty = np.flatnonzero(np.diff(seg_refs) <= 0)
    if len(empty):
        raise ValueError(f"TER: segment {int(empty[0])} has no reference (all references are None)")
    order = _cost_order(hyp_offsets, ref_offsets, seg_refs)
    counter = np.zeros(1, dtype=np.int64)
    ex = get_pool(workers - 1)
    shared = (*args, order, counter, _GRAIN, False)
    futs = [ex.submit(_ter_shift.ter_stats_shared, *shared) for _ in range(workers - 1)]
    try:
        _ter_shift.ter_stats_shared(*shared)
    finally:
        for f in futs:
            f.result()
    return out


class TER(Metric):
    """Translation edit rate, bit-identical to sacrebleu 2.6.0 ``TER``.

    :param normalized: Tercom normalisation (punctuation tokenisation, XML entities, ...).
    :param no_punct: remove punctuation.
    :param asian_support: CJK handling for ``normalized`` / ``no_punct``.
    :param case_sensitive: do not lowercase.
    :param references: K reference streams of N segments, prepared once and cached.
    :param workers: threads used for the shift search (mtscore only; results do not depend on it).
    """

    _SIGNATURE_TYPE = TERSignature
    #: the name sentence_score's argument errors start with
    _NAME = "TER"
    cheap_references = True  # token ids only
    dedupes_outputs = True
    lower_is_better = True

    def __init__(self, normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False, case_sensitive: bool = False,
                 references: Sequence[Sequence[str]] | None = None, workers: int = 1,
                 missing_refs: str = "error"):
        super().__init__(missing_refs)
        self.no_punct = no_punct
        self.normalized = normalized
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        self.tokenizer_signature = "tercom"
        self.workers = workers
        self._vocab: _ter_normalize.TercomVocab | None = None  # made when first needed (_shared_vocab)
        if references is not None:
            self._ref_cache = self.prepare(references)

    def corpus_score(self, hyps, refs=None, n_bootstrap: int = 1) -> Score:
        """Corpus TER (see :meth:`Metric.corpus_score`). With references given in the call
        (one stream, no None), ``normalized=False``, one worker and no bootstrap, the whole
        call is one kernel (``_ter_fused.ter_corpus_plain``: strings to summed statistics, each pair
        interned on its own, no per-segment matrix); otherwise the general path."""
        if (refs is not None and n_bootstrap <= 1 and not self.normalized
                and (int(self.workers) <= 1 or len(hyps) < 2 * _PIPE_CHUNK)):
            if not (type(hyps) is list and type(refs) in (list, tuple) and len(refs) == 1
                    and type(refs[0]) is list and len(refs[0]) == len(hyps)):
                # lists of one stream already are not copied (fresh pages on a first call):
                # the kernel checks that every element is a str
                hyps = self._coerce_hyps(hyps)
                refs = self._coerce_refs(refs, len(hyps))
            if len(refs) == 1 and hyps:
                sums = _ter_fused.ter_corpus_plain(hyps, refs[0], bool(self.no_punct),
                                             bool(self.asian_support), not self.case_sensitive)
                if sums is not None:  # (not all str, e.g. a None reference: the general path)
                    self.num_refs = 1
                    return self.compute_score_from_stats(list(sums))
        return super().corpus_score(hyps, refs, n_bootstrap)

    # ---- text -> token ids ----------------------------------------------------------------
    def tokenize(self, texts: list[str], vocab: _ter_normalize.TercomVocab | None = None):
        """Tercom-normalise ``texts`` into ``(ids int32, offsets int64 (N + 1))`` with this
        metric's vocabulary, or ``vocab`` (sacrebleu: ``TercomTokenizer(s.rstrip()).split()``)."""
        return _ter_normalize.tercom_tokenize(texts, self._shared_vocab() if vocab is None else vocab,
                                    self.normalized, self.no_punct, self.asian_support, True,
                                    not self.case_sensitive)

    def tokenize_refs(self, texts: list[str], vocab: _ter_normalize.TercomVocab | None = None):
        """Like :meth:`tokenize`, but with sacrebleu's treatment of references: its
        ``_cache_references`` preprocesses each reference and ``_extract_reference_info``
        preprocesses the result AGAIN. Only ``normalized=True`` is not idempotent (e.g.
        ``"nima's,"`` -> ``"nima's ,"`` -> ``"nima 's ,"``), so only then is the second pass run."""
        if not self.normalized:
            return self.tokenize(texts, vocab)
        lower = not self.case_sensitive
        once = _ter_normalize.tercom_normalize_texts(texts, self.normalized, self.no_punct,
                                           self.asian_support, True, lower)
        return _ter_normalize.tercom_tokenize(once, self._shared_vocab() if vocab is None else vocab,
                                    self.normalized, self.no_punct, self.asian_support, False,
                                    lower)

    def tokens(self, text: str) -> list[str]:
        """The Tercom tokens of one string (for inspection and tests)."""
        ids, _ = self.tokenize([text])
        return [self._shared_vocab().token(int(i)) for i in ids]

    def _shared_vocab(self) -> _ter_normalize.TercomVocab:
        """The vocabulary that this metric's token ids refer to, made on first use: the
        one-kernel corpus path interns per pair and never needs it."""
        v = self._vocab
        if v is None:
            with _VOCAB_LOCK:
                if self._vocab is None:
                    self._vocab = _ter_normalize.TercomVocab()
                v = self._vocab
        return v

    # ---- Metric hooks -------------------------------------------------------------------
    def prepare(self, refs, rows=None) -> _PreparedRefs:
        streams = self._coerce_refs(refs)
        n = len(streams[0])
        flat: list[str] = []
        seg_refs = np.zeros(n + 1, dtype=np.int64)
        counts = set()
        # the streams hold str or None: first_non_str(..., False) < 0 means no None (one C loop)
        if len(streams) == 1 and first_non_str(streams[0], False) < 0:
            flat = cast(list[str], streams[0])  # no None in it
            seg_refs = np.arange(n + 1, dtype=np.int64)
            if n:
                counts.add(1)
        else:
            for i, seg in enumerate(zip(*streams)):
                lines = [x for x in seg if x is not None]
                counts.add(len(lines))
                flat.extend(lines)
                seg_refs[i + 1] = seg_refs[i] + len(lines)
        if len(counts) > 1:
            counts.discard(0)  # segments without references (scored only when skipped)
        num_refs = next(iter(counts)) if len(counts) == 1 else -1
        self.num_refs = num_refs
        ids, offsets = self.tokenize_refs(flat)
        return _PreparedRefs(n, ids, offsets, seg_refs, num_refs)

    def stats(self, hyps, prepared: _PreparedRefs, warn: bool = True) -> np.ndarray:
        hyps = self._coerce_hyps(hyps)
        if len(hyps) != prepared.n:
            raise ValueError(
                f"TER: {len(hyps)} hypotheses but {prepared.n} reference segments; "
                "the hypothesis and reference files must have the same number of lines.")
        skip = self._skipped(prepared, warn)
        if skip is not None:  # score the referenced segments; skipped rows stay zero
            keep = np.flatnonzero(~skip)
            out = np.zeros((len(hyps), 2), dtype=np.float64)
            if len(keep):
                out[keep] = self.rows_stats_and_scores(take(hyps, keep), keep, prepared)[0]
            return out
        workers = max(1, int(self.workers))
        if workers > 1 and len(hyps) >= 2 * _PIPE_CHUNK:
            return self._pipelined_stats(hyps, prepared, workers)
        hyp_ids, hyp_offsets = self.tokenize(hyps)
        return ter_stats(hyp_ids, hyp_offsets, prepared.ref_ids, prepared.ref_offsets,
                         prepared.seg_refs, workers=workers)

    def rows_stats_and_scores(self, hyps: list[str], rows: np.ndarray, prepared: _PreparedRefs,
                               sentence_level: bool = True):
        """Statistics of ``hyps[j]`` against the references of prepared segment ``rows[j]``
        (for :meth:`Metric.systems_stats_and_scores`): the references of those segments are
        gathered into a CSR set of their own, one entry per hypothesis, and scored as usual.

        Returns ``(stats, None)``: float64 ``(len(hyps), 2)`` statistics and no sentence scores,
        whatever ``sentence_level`` says (TER computes none here; the caller derives them from
        the statistics with :meth:`scores_from_stats` when it needs them)."""
        rows = np.asarray(rows, dtype=np.int64)
        first, nrefs = prepared.seg_refs[rows], np.diff(prepared.seg_refs)[rows]
        seg_refs = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(nrefs, out=seg_refs[1:])
        # reference k of entry j is prepared reference first[j] + k
        ref_idx = np.repeat(first - seg_refs[:-1], nrefs) + np.arange(seg_refs[-1], dtype=np.int64)
        starts = prepared.ref_offsets[ref_idx]
        lens = prepared.ref_offsets[ref_idx + 1] - starts
        ref_offsets = np.zeros(len(ref_idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=ref_offsets[1:])
        tokens = np.repeat(starts - ref_offsets[:-1], lens) + np.arange(ref_offsets[-1], dtype=np.int64)
        gathered = _PreparedRefs(len(rows), np.ascontiguousarray(prepared.ref_ids[tokens]),
                                 ref_offsets, seg_refs, prepared.num_refs)
        return self.stats(hyps, gathered, warn=False), None

    def _pipelined_stats(self, hyps: list[str], prepared: _PreparedRefs, workers: int) -> np.ndarray:
        """Several threads: the calling thread tokenises chunks of ``_PIPE_CHUNK`` hypotheses
        (the tokeniser holds the GIL) while ``workers - 1`` pool threads already search the
        chunks tokenised so far; then it joins them, taking chunks from the end. Within a
        chunk, segments are claimed costliest first from the chunk's shared counter, so
        every segment is scored exactly once whoever gets there first."""
        n = len(hyps)
        out = np.zeros((n, 2), dtype=np.float64)
        ex = get_pool(workers - 1)
        futs: list[Future] = []
        chunks = []
        try:
            for a in range(0, n, _PIPE_CHUNK):
                b = min(n, a + _PIPE_CHUNK)
                ids, offs = self.tokenize(hyps[a:b])
                seg_refs = np.ascontiguousarray(prepared.seg_refs[a:b + 1])
                args = (ids, offs, prepared.ref_ids, prepared.ref_offsets, seg_refs, out[a:b],
                        _cost_order(offs, prepared.ref_offsets, seg_refs),
                        np.zeros(1, dtype=np.int64), _GRAIN, False)
                chunks.append(args)
                futs.extend(ex.submit(_ter_shift.ter_stats_shared, *args) for _ in range(workers - 1))
            for args in reversed(chunks):
                _ter_shift.ter_stats_shared(*args)
        finally:
            for f in futs:
                f.result()
        return out

    def sum_stats(self, stats) -> list:
        """``[total edits (int), sum of avg_ref_len (float)]``; the lengths are added one by one
        in segment order, exactly like sacrebleu's ``sum_of_lists`` (not pairwise)."""
        stats = np.asarray(stats, dtype=np.float64)
        if len(stats) == 0:
            return [0, 0.0]
        edits = int(stats[:, 0].astype(np.int64).sum())
        # add.accumulate is a strictly sequential left-to-right sum
        ref_len = float(np.add.accumulate(stats[:, 1])[-1])
        return [edits, ref_len]

    def resampled_scores(self, sums: np.ndarray):
        """Vectorised TER of many summed rows (bootstrap / AR; see ``metrics.resampled``)."""
        return resampled.ter_scores(sums) if sums.shape[1] == 2 else None

    def stats_columns(self) -> int:
        return 2

    def stats_layout(self) -> str:
        return "edits, mean reference length"

    def _scores_of_checked(self, stats: np.ndarray) -> np.ndarray:
        """The sentence TER of every row of an ``(N, 2)`` stats matrix -> float64 (N,), each
        equal to ``compute_score_from_stats(row).score`` (same operations, elementwise: the
        int edit count is exact in float64, so ``edits / ref_len`` and ``100 * q`` round the
        same way as sacrebleu's Python floats)."""
        st = stats
        if st.dtype.kind == "f" and st.dtype != np.float64:  # float32 rows: float32 arithmetic
            return super()._scores_of_checked(stats)
        st = st.astype(np.float64, copy=False)
        edits, ref_len = st[:, 0], st[:, 1]
        has_ref = ref_len > 0
        q = np.divide(edits, ref_len, out=np.zeros_like(edits), where=has_ref)
        return 100 * np.where(has_ref, q, np.where(edits > 0, 1.0, 0.0))

    def compute_score_from_stats(self, stats) -> TERScore:
        """sacrebleu ``TER._compute_score_from_stats`` with the same operations, so it is also
        exact for numpy float32 rows (bootstrap)."""
        total_edits, sum_ref_lengths = stats[0], stats[1]
        if sum_ref_lengths > 0:
            score = total_edits / sum_ref_lengths
        elif total_edits > 0:
            score = 1.0  # empty reference(s) and non-empty hypothesis
        else:
            score = 0.0  # both reference(s) and hypothesis are empty
        return TERScore(100 * score, total_edits, sum_ref_lengths)

    def pairwise_scores(self, rows: Sequence[str], cols: Sequence[str] | None = None,
                        workers: int | None = None) -> np.ndarray:
        """All-pairs TER, float64 ``(n, m)`` (``cols`` None: ``(n, n)``, rows against
        themselves); cell ``(i, j)`` is bit-identical to ``sentence_score(rows[i], [cols[j]])``.
        Each distinct string is normalised and interned once as a hypothesis and once as a
        reference (the two differ under ``normalized=True``, see :meth:`tokenize_refs`); the
        shift search runs per pair (``_ter_shift.ter_matrix``, GIL released)."""
        lay = pairwise.layout(self._coerce_hyps(rows),
                              None if cols is None else self._coerce_hyps(cols))
        vocab = _ter_normalize.TercomVocab()  # a fresh one: threads may score several groups at once
        hyp_ids, hyp_off = self.tokenize(take(lay.texts, lay.rows), vocab)
        ref_ids, ref_off = self.tokenize_refs(take(lay.texts, lay.cols), vocab)
        edits = np.zeros((len(lay.rows), len(lay.cols)), dtype=np.int64)
        pairwise.fill_columns(
            lambda part: _ter_shift.ter_matrix(hyp_ids, hyp_off, ref_ids, ref_off, edits, part),
            len(lay.cols), self.workers if workers is None else workers)
        # sacrebleu: 100 * (edits / ref_len); an empty reference scores 1 (edits) or 0
        ref_len = np.diff(ref_off).astype(np.float64)
        e = edits.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(ref_len > 0, e / ref_len, np.where(e > 0, 1.0, 0.0))
        return lay.expand(100 * score)

    if TYPE_CHECKING:  # Metric.sentence_score, typed with this metric's Score
        def sentence_score(self, hypothesis: str, references: Sequence[str | None]) -> TERScore: ...

    def _sentence_score_kernel(self, hyp: str, refs) -> TERScore | None:
        """One call of the compiled single-pair kernel (normalise, intern, shift search; no
        numpy, no prepared references), or None when a reference is not a str."""
        try:
            if self.case_sensitive:
                hyp = hyp.rstrip()
                refs = [r.rstrip() for r in refs]
            else:
                hyp = hyp.rstrip().lower()
                refs = [r.rstrip().lower() for r in refs]
        except AttributeError:  # a None (or other non-str) reference
            return None
        res = _ter_fused.ter_sentence(hyp, refs, bool(self.normalized), bool(self.no_punct),
                                bool(self.asian_support))
        if res is None:
            return None
        self.num_refs = len(refs)
        return self.compute_score_from_stats(res)

