"""Error rates from edit distances: WER, CER (Levenshtein) and PER (position-independent).

Definitions (evaluation-methods D1, D2; jiwer for the conventions the thesis leaves open):

* **WER** = (S + D + I) / reference words: the word-level Levenshtein distance over the
  reference length. The corpus score is ``total edits / total reference words``, as jiwer
  computes its corpus WER (``(S + D + I) / (H + S + D)`` summed over all pairs); a sentence score
  is the same ratio for one segment.
* **CER**: the same on characters (Unicode code points), equal to ``jiwer.cer``.
* **PER** (Tillmann et al. 1997, the thesis' position-independent error rate):
  ``1 - (matches - max(0, |hyp| - |ref|)) / |ref|`` with ``matches`` the bag-of-words overlap
  (multiset intersection). Its error count ``|ref| - matches + max(0, |hyp| - |ref|)`` equals
  ``max(|hyp|, |ref|) - matches``; the corpus score sums errors and reference lengths.

Tokenisation follows jiwer's defaults so that numbers are comparable with it: words come from
``wer_default`` (collapse every run of two or more whitespace characters into one space,
``strip()``, split on U+0020; so a lone tab between two letters stays inside a word, as in
jiwer), characters from ``cer_default`` (``strip()``, then every code point, spaces included).
Options applied before it, both off by default: ``lowercase`` (``str.lower``, jiwer's
``ToLowerCase``) and ``remove_punctuation`` (delete every character of Unicode category P*,
jiwer's ``RemovePunctuation``).

An empty reference follows jiwer too: the rate is then the number of edits (every hypothesis
word an insertion), not TER's capped 1.0.

Several references (jiwer has none; the thesis takes the minimum over references, after
Alshawi et al.), chosen per segment by ``multi_ref``:

* ``"closest"`` (default): the fewest edits; the length of that reference (ties: the longer
  reference, i.e. the lower rate, then the first);
* ``"average"``: the fewest edits over the MEAN length of all the segment's references (Tercom's
  and TER's convention, also the usual mWER);
* ``"best"``: the reference with the lowest sentence rate ``edits / length`` (ties: the first).

With one reference the three agree. Per-segment statistics are ``[errors, ref_length]``, an
``(N, 2)`` float64 matrix (float because ``"average"`` lengths are means); the edit distances
come from the bit-parallel kernels: ``mtscore.kernels._edit_distance`` on code points for CER,
``_edit_words`` for WER / PER straight from the strings (words keyed within each segment, no
corpus vocabulary).
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Callable

import numpy as np

from ...kernels import _edit_csr, _edit_distance, _edit_words
from ...kernels._text import Vocab
from ..parallel import chunk_bounds, get_pool
from .base import Metric, OwnSignature, Score
from .symbols import PreparedSymbols, PreparedWords, flatten_refs

__all__ = ["CER", "MULTI_REF", "PER", "WER", "EditRateScore", "EditRateSignature"]

#: ``multi_ref`` names -> the kernel's codes
MULTI_REF: dict[str, int] = {"closest": _edit_distance.MULTI_CLOSEST, "average": _edit_distance.MULTI_AVERAGE,
                             "best": _edit_distance.MULTI_BEST}

_PUNCT_TABLE: dict[int, None] | None = None
_PUNCT_LOCK = threading.Lock()


def punctuation_table() -> dict[int, None]:
    """``str.translate`` table deleting every code point of Unicode category P* (jiwer's
    ``RemovePunctuation``; this Python's ``unicodedata``), built on first use (~0.3 s)."""
    global _PUNCT_TABLE
    with _PUNCT_LOCK:
        if _PUNCT_TABLE is None:
            import sys
            import unicodedata

            _PUNCT_TABLE = {i: None for i in range(sys.maxunicode + 1)
                            if unicodedata.category(chr(i)).startswith("P")}
        return _PUNCT_TABLE


class EditRateSignature(OwnSignature):
    """Signature of an error-rate run, e.g.
    ``nrefs:1|case:mixed|punct:yes|tok:jiwer|mref:closest|version:mtscore-0.1.0``."""

    def __init__(self, args: dict):
        super().__init__(args)
        self._abbr.update({"case": "c", "punct": "pn", "tok": "t", "mref": "mr"})
        self.info.update({
            "case": "lc" if args["lowercase"] else "mixed",
            "punct": not args["remove_punctuation"],
            "tok": args["tokenizer_signature"],
            "mref": args["multi_ref"],
        })


class EditRateScore(Score):
    """An error rate: ``score`` = 100 x ``rate``; ``rate`` (errors / reference length, jiwer's
    number), ``num_errors`` (int) and ``ref_length`` (float: summed, possibly mean, lengths)."""

    def __init__(self, name: str, rate: float, num_errors: float, ref_length: float):
        super().__init__(name, 100 * rate)
        self.rate = rate
        self.num_errors = int(num_errors)
        self.ref_length = ref_length


#: segments per thread task when ``workers`` > 1
_MIN_PER_THREAD = 512


def _in_threads(kernel: Callable[..., None], args: tuple, n: int, workers: int) -> None:
    """``kernel(*args, start, stop)`` over ``range(n)``, split over up to ``workers`` threads
    (the kernels release the GIL and fill disjoint rows of one output)."""
    parts = min(max(1, int(workers)), n // _MIN_PER_THREAD)
    if parts <= 1:
        kernel(*args, 0, n)
        return
    bounds = chunk_bounds(n, parts)
    futs = [get_pool(parts - 1).submit(kernel, *args, a, z) for a, z in bounds[1:]]
    try:
        kernel(*args, *bounds[0])
    finally:
        for f in futs:
            f.result()


class _EditRate(Metric):
    """Shared machinery of WER, PER and CER: subclasses set ``_NAME``, ``_MEASURE`` and
    implement ``_prepare_flat`` (normalised references -> prepared) and ``_hyp_stats``
    (normalised hypotheses -> statistics)."""

    _SIGNATURE_TYPE = EditRateSignature
    _NAME = ""
    _MEASURE = _edit_distance.MEASURE_LEVENSHTEIN
    # the reference strings, or their code points; WER adds each reference's word set
    # (_edit_words.WordSets: ~1.5 KB for a reference of 20 words)
    cheap_references = True
    dedupes_outputs = True
    lower_is_better = True
    _TOKENIZER = "jiwer"

    def __init__(self, lowercase: bool = False, remove_punctuation: bool = False,
                 multi_ref: str = "closest", references: Sequence[Sequence[str]] | None = None,
                 workers: int = 1, missing_refs: str = "error"):
        super().__init__(missing_refs)
        if multi_ref not in MULTI_REF:
            raise ValueError(f"{type(self).__name__}: multi_ref must be one of {', '.join(MULTI_REF)}, "
                             f"got {multi_ref!r}")
        self.lowercase = bool(lowercase)
        self.remove_punctuation = bool(remove_punctuation)
        self.multi_ref = multi_ref
        self.tokenizer_signature = self._TOKENIZER
        self.workers = workers
        if references is not None:
            self._ref_cache = self.prepare(references)

    def _normalise(self, texts: list[str]) -> list[str]:
        """The options applied before tokenisation (jiwer's ToLowerCase, RemovePunctuation)."""
        if self.lowercase:
            texts = [t.lower() for t in texts]
        if self.remove_punctuation:
            table = punctuation_table()
            texts = [t.translate(table) for t in texts]
        return texts

    def tokens(self, text: str) -> list[str]:  # pragma: no cover - abstract
        """The words (characters for CER) of one string, for inspection and tests."""
        raise NotImplementedError

    def _prepare_flat(self, n: int, flat: list[str], seg_refs: np.ndarray, num_refs: int):  # pragma: no cover
        raise NotImplementedError

    def _hyp_stats(self, hyps: list[str], prepared, rows: np.ndarray | None) -> np.ndarray:  # pragma: no cover
        """``(len(hyps), 2)`` statistics of normalised ``hyps`` against prepared segments
        ``rows`` (None: segment i for hypothesis i); ``[0, 0]`` where a segment has none."""
        raise NotImplementedError

    # ---- Metric hooks ------------------------------------------------------------------------
    def prepare(self, refs, rows=None):
        streams = self._coerce_refs(refs)
        flat, seg_refs, num_refs = flatten_refs(streams)
        self.num_refs = num_refs
        return self._prepare_flat(len(streams[0]), self._normalise(flat), seg_refs, num_refs)

    def stats(self, hyps, prepared) -> np.ndarray:
        """``(N, 2)`` float64 ``[errors, ref_length]``; zero rows for segments without a
        reference (``missing_refs="skip"``)."""
        hyps = self._coerce_hyps(hyps)
        if len(hyps) != prepared.n:
            raise ValueError(
                f"{self._NAME}: {len(hyps)} hypotheses but {prepared.n} reference segments; "
                "the hypothesis and reference files must have the same number of lines.")
        self._skipped(prepared)  # the policy; _hyp_stats gives those segments zero rows
        return self._hyp_stats(self._normalise(hyps), prepared, None)

    def rows_stats_and_scores(self, hyps: list[str], rows: np.ndarray, prepared,
                              sentence_level: bool = True):
        """Statistics of ``hyps[j]`` against the references of prepared segment ``rows[j]``
        (segments without references, left to the caller's policy, get zero rows)."""
        st = self._hyp_stats(self._normalise(self._coerce_hyps(hyps)), prepared,
                             np.asarray(rows, dtype=np.int64))
        return st, (self.scores_from_stats(st) if sentence_level else None)

    def sum_stats(self, stats) -> list:
        """``[total errors (int), summed reference length (float)]``; lengths added one by one
        in segment order (exact for integer lengths; a fixed order for ``"average"`` means)."""
        stats = np.asarray(stats, dtype=np.float64)
        if len(stats) == 0:
            return [0, 0.0]
        return [int(stats[:, 0].astype(np.int64).sum()), float(np.add.accumulate(stats[:, 1])[-1])]

    def compute_score_from_stats(self, stats) -> EditRateScore:
        """``errors / ref_length`` (jiwer: ``float(S + D + I) / float(H + S + D)``); an empty
        reference side gives ``errors`` itself, as jiwer's ``wer = num_insertions``."""
        errors, ref_length = stats[0], stats[1]
        rate = float(errors) / float(ref_length) if ref_length > 0 else float(errors)
        return EditRateScore(self._NAME, rate, errors, ref_length)

    def stats_columns(self) -> int:
        return 2

    def stats_layout(self) -> str:
        return "errors, reference length"

    def _scores_of_checked(self, stats: np.ndarray) -> np.ndarray:
        """Every row's ``100 * rate`` at once (the same IEEE operations as the scalar path)."""
        stats = stats.astype(np.float64, copy=False)
        e, ln = stats[:, 0], stats[:, 1]
        rate = np.divide(e, ln, out=e.copy(), where=ln > 0)
        return 100 * rate

    if TYPE_CHECKING:  # Metric.sentence_score, typed with this metric's Score
        def sentence_score(self, hypothesis: str, references: Sequence[str | None]) -> EditRateScore: ...


class WER(_EditRate):
    """Word error rate on jiwer's default words (see the module docstring), several
    references per ``multi_ref``; ``workers`` threads (results do not depend on them).

    The prepared references are the normalised strings and, for the Levenshtein distance, each
    reference's words in a small hash set with their positions as bits
    (``_edit_words.WordSets``): ``_edit_words.word_stats_sets`` then splits each hypothesis into words and
    looks each one up as it scans, the distance advancing word by word (PER, and segments whose
    references are over 64 words or narrower than the hypothesis' PEP 393 width, split both
    sides per pair: ``_edit_words.word_stats_texts``). Word ids agree within a segment only (no
    corpus vocabulary, no token arrays)."""

    _NAME = "WER"

    def tokens(self, text: str) -> list[str]:
        vocab = Vocab()
        ids, _ = _edit_csr.jiwer_words(self._normalise([text]), vocab)
        return [vocab.token(int(i)) for i in ids]

    def _prepare_flat(self, n: int, flat: list[str], seg_refs: np.ndarray, num_refs: int) -> PreparedWords:
        sets = _edit_words.WordSets(flat) if self._MEASURE == _edit_distance.MEASURE_LEVENSHTEIN else None
        return PreparedWords(n, flat, seg_refs, num_refs, sets)

    def _hyp_stats(self, hyps: list[str], prepared: PreparedWords, rows: np.ndarray | None) -> np.ndarray:
        seg = prepared.seg_refs
        lo, hi = (seg[:-1], seg[1:]) if rows is None else (seg[rows], seg[rows + 1])
        lo, hi = np.ascontiguousarray(lo), np.ascontiguousarray(hi)
        out = np.zeros((len(hyps), 2), dtype=np.float64)
        if prepared.sets is not None and self._MEASURE == _edit_distance.MEASURE_LEVENSHTEIN:
            _in_threads(_edit_words.word_stats_sets, (hyps, prepared.sets, lo, hi, out,
                                                MULTI_REF[self.multi_ref]), len(hyps), self.workers)
        else:
            _in_threads(_edit_words.word_stats_texts, (hyps, prepared.refs, lo, hi, out, self._MEASURE,
                                                 MULTI_REF[self.multi_ref]), len(hyps), self.workers)
        return out


class PER(WER):
    """Position-independent error rate: ``max(|hyp|, |ref|) - bag-of-words matches`` errors
    over the reference length (Tillmann et al.), on WER's words."""

    _NAME = "PER"
    _MEASURE = _edit_distance.MEASURE_PER


class CER(_EditRate):
    """Character error rate on code points of ``str.strip()``-ed text (``jiwer.cer``); the
    prepared references are their code points (CSR)."""

    _NAME = "CER"
    _TOKENIZER = "chars"

    def tokens(self, text: str) -> list[str]:
        return [chr(int(c)) for c in _edit_csr.code_points(self._normalise([text]), True)[0]]

    def _prepare_flat(self, n: int, flat: list[str], seg_refs: np.ndarray, num_refs: int) -> PreparedSymbols:
        ids, offsets = _edit_csr.code_points(flat, True)
        return PreparedSymbols(n, ids, offsets, seg_refs, num_refs)

    def _hyp_stats(self, hyps: list[str], prepared: PreparedSymbols, rows: np.ndarray | None) -> np.ndarray:
        if rows is not None:
            prepared = prepared.gather(rows)
        ids, offsets = _edit_csr.code_points(hyps, True)
        out = np.zeros((len(hyps), 2), dtype=np.float64)
        args = (ids, offsets, prepared.ref_ids, prepared.ref_offsets, prepared.seg_refs, out,
                self._MEASURE, MULTI_REF[self.multi_ref])
        _in_threads(_edit_distance.edit_stats_range, args, len(hyps), self.workers)
        return out
