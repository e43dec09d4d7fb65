"""chrF / chrF++, identical to sacrebleu 2.6.0 (``sacrebleu.metrics.CHRF``) for every option.

Statistics per segment (int64, ``3 * (char_order + word_order)`` columns): ``[hyp, ref, match]``
per order, character orders first, then word orders; taken from the reference with the best
sentence-level score (strict >, first wins).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...kernels import _ngram, _pairwise, _sentence, _text
from . import pairwise, resampled
from .base import Score, Signature
from .lexical import LexicalMetric


class CHRFSignature(Signature):
    def __init__(self, args: dict):
        super().__init__(args)
        self._abbr.update({"case": "c", "eff": "e", "nc": "nc", "nw": "nw", "space": "s"})
        self.info.update({
            "case": "lc" if args["lowercase"] else "mixed",
            "eff": "yes" if not args["eps_smoothing"] else "no",
            "nc": args["char_order"],
            "nw": args["word_order"],
            "space": "yes" if args["whitespace"] else "no",
        })


class CHRFScore(Score):
    def __init__(self, score: float, char_order: int, word_order: int, beta: int):
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        # Score.__init__ inlined (a sentence score is built per call of sentence_score)
        self.name = f"chrF{beta}" + "+" * word_order
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self._verbose = ""


_EMPTY_I32 = np.zeros(0, dtype=np.int32)
_ONE_I64 = np.zeros(1, dtype=np.int64)


class CHRF(LexicalMetric):
    """chrF (``word_order=0``) and chrF++ (``word_order=2``) with sacrebleu's arguments."""

    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2
    _SIGNATURE_TYPE = CHRFSignature

    def __init__(self, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER,
                 beta: int = BETA, lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False,
                 references: Sequence[Sequence[str]] | None = None, workers: int = 1,
                 missing_refs: str = "error"):
        super().__init__(missing_refs)
        self.workers = workers
        for name, v in (("char_order", char_order), ("word_order", word_order)):
            if not isinstance(v, int) or v < 0:
                raise ValueError(f"CHRF: {name} must be a non-negative int, got {v!r}")
        if char_order + word_order == 0:
            raise ValueError("CHRF: char_order + word_order must be > 0")
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        self.order = self.char_order + self.word_order
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.eps_smoothing = eps_smoothing
        if references is not None:
            self._ref_cache = self.prepare(references)

    def _encode(self, texts: list[str], vocab, lookup: bool = False):
        """Code points and (chrF++) word ids of ``texts``; ``lookup``: words ``vocab`` lacks
        get ``_text.UNSEEN_ID`` and ``vocab`` is not changed."""
        if self.lowercase:
            texts = [t.lower() for t in texts]
        chars = _text.encode(texts, _text.MODE_CHARS_WS if self.whitespace else _text.MODE_CHARS,
                             None, False)
        if self.word_order > 0:
            words = _text.encode(texts, _text.MODE_CHRF_WORDS, vocab, False, lookup)
        else:
            words = (_EMPTY_I32, _ONE_I64)
        return chars, words

    def _prep_config(self) -> tuple:
        return (self.char_order, self.word_order, bool(self.lowercase), bool(self.whitespace))

    def _prepare_chunk(self, streams, present):
        vocab = _text.Vocab()
        encs = [self._encode([s if s is not None else "" for s in st], vocab) for st in streams]
        tables = _ngram.chrf_prepare_refs([e[0] for e in encs],
                                          [e[1] for e in encs] if self.word_order else [],
                                          present, self.char_order, self.word_order)
        return vocab, tables

    def _chunk_stats(self, hyps, state, seg_map=None):
        vocab, (po, keys, counts, cl, wl) = state
        # hypothesis words are looked up, not added (as BLEU's tokens): a word no reference has
        # matches nothing whatever its id, and the prepared vocabulary, cached across calls,
        # keeps the references' size
        (cv, co), (wv, wo) = self._encode(hyps, vocab, lookup=True)
        if self.word_order == 0:
            wo = np.zeros(len(hyps) + 1, dtype=np.int64)
        return _ngram.chrf_stats(cv, co, wv, wo, po, keys, counts, cl, wl, self.char_order,
                                 self.word_order, float(self.beta ** 2), bool(self.eps_smoothing),
                                 seg_map=seg_map)

    def _compute_f_score(self, statistics) -> float:
        """sacrebleu's chrF formula (same operation order; works on lists and numpy rows)."""
        eps = 1e-16
        score = 0.0
        effective_order = 0
        factor = self.beta ** 2
        avg_prec, avg_rec = 0.0, 0.0
        for i in range(self.order):
            n_hyp, n_ref, n_match = statistics[3 * i: 3 * i + 3]
            prec = n_match / n_hyp if n_hyp > 0 else eps
            rec = n_match / n_ref if n_ref > 0 else eps
            denom = factor * prec + rec
            score += ((1 + factor) * prec * rec / denom) if denom > 0 else eps
            if n_hyp > 0 and n_ref > 0:
                avg_prec += prec
                avg_rec += rec
                effective_order += 1
        if self.eps_smoothing:
            return 100 * score / self.order
        if effective_order == 0:
            avg_prec = avg_rec = 0.0
        else:
            avg_prec /= effective_order
            avg_rec /= effective_order
        if avg_prec + avg_rec:
            score = (1 + factor) * avg_prec * avg_rec
            score /= ((factor * avg_prec) + avg_rec)
            return 100 * score
        return 0.0

    def compute_score_from_stats(self, stats) -> CHRFScore:
        return CHRFScore(self._compute_f_score(stats), self.char_order, self.word_order, self.beta)

    def resampled_scores(self, sums: np.ndarray):
        """Vectorised chrF of many summed rows (bootstrap / AR; see ``metrics.resampled``)."""
        if sums.shape[1] != 3 * self.order or not isinstance(self.beta, (int, float)):
            return None
        return resampled.chrf_scores(self, sums)

    integer_stats = True

    def stats_columns(self) -> int:
        return 3 * int(self.order)

    def stats_layout(self) -> str:
        return (f"hyp, ref, match for each of {self.char_order} character and "
                f"{self.word_order} word orders")

    def _scores_of_checked(self, stats: np.ndarray) -> np.ndarray:
        """chrF of every row of an ``(N, 3 * order)`` stats matrix -> float64 (N,), bit-identical
        to ``sentence_score``."""
        return _ngram.chrf_f_scores(np.ascontiguousarray(stats, dtype=np.int64),
                                    float(self.beta ** 2), bool(self.eps_smoothing))

    def pairwise_scores(self, rows: Sequence[str], cols: Sequence[str] | None = None,
                        workers: int | None = None) -> np.ndarray:
        """All-pairs chrF, float64 ``(n, m)`` (``cols`` None: ``(n, n)``, rows against
        themselves); cell ``(i, j)`` is bit-identical to ``sentence_score(rows[i], [cols[j]])``.
        The n-grams of each distinct string are interned once for the whole group
        (``_pairwise.group_ngrams``); a set against itself computes each unordered pair's
        matches once."""
        lay = pairwise.layout(self._coerce_hyps(rows),
                              None if cols is None else self._coerce_hyps(cols))
        ids, counts, offsets, totals, n_ids = self.group_ngram_counts(lay.texts)
        out = np.zeros((len(lay.rows), len(lay.cols)), dtype=np.float64)
        factor, eps = float(self.beta ** 2), bool(self.eps_smoothing)
        pairwise.fill_columns(
            lambda part: _pairwise.chrf_matrix(ids, counts, offsets, totals, n_ids, lay.rows,
                                               lay.cols, lay.symmetric, factor, eps, out, part),
            len(lay.cols), self.workers if workers is None else workers)
        return lay.expand(out)

    def group_ngram_counts(self, texts: list[str]) -> pairwise.GroupNgrams:
        """The character (then, for chrF++, word) n-gram counts of each of S texts, interned
        over the group: ``ids`` / ``counts`` int32 per (text, order) segment of ``offsets``
        (int64 (S * order + 1,), orders 1..char_order then 1..word_order), ``totals`` int64
        (S, order) the n-gram count of each, ``n_ids`` distinct n-grams (ids < n_ids)."""
        (cv, co), (wv, wo) = self._encode(list(texts), _text.Vocab())
        streams, orders = [(cv, co)], [self.char_order]
        if self.word_order:
            streams.append((wv, wo))
            orders.append(self.word_order)
        return pairwise.GroupNgrams(*_pairwise.group_ngrams(streams, orders))

    if TYPE_CHECKING:  # Metric.sentence_score, typed with this metric's Score
        def sentence_score(self, hypothesis: str, references: Sequence[str]) -> CHRFScore: ...

    def _sentence_score_kernel(self, hyp: str, refs) -> CHRFScore | None:
        """One call of the compiled single-pair kernel (characters, words, n-gram counts, the
        best reference's score; no numpy, no prepared-reference cache), or None when a
        reference is not a str."""
        if self.lowercase:
            try:
                hyp = hyp.lower()
                refs = [r.lower() for r in refs]
            except AttributeError:  # a None (or other non-str) reference
                return None
        res = _sentence.chrf_sentence(hyp, refs, self.char_order, self.word_order,
                                      float(self.beta ** 2), bool(self.eps_smoothing),
                                      bool(self.whitespace))
        if res is None:
            return None
        self.num_refs = len(refs)
        return CHRFScore(res[1], self.char_order, self.word_order, self.beta)
