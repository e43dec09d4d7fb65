"""BLEU, identical to sacrebleu 2.6.0 (``sacrebleu.metrics.BLEU``) for every option.

Statistics per segment (int64, ``2 + 2 * max_ngram_order`` columns):
``[hyp_len, closest_ref_len, correct_1..correct_N, total_1..total_N]``.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from ...kernels import _lists, _ngram, _pairwise, _sentence, _text
from ..tokenizers import MODE_NONE, TOKENIZER_MAP, TOKENIZERS, Tokenizer
from . import pairwise, resampled
from .base import Metric, Score, Signature
from .lexical import LexicalMetric

log = logging.getLogger("mtscore")

MAX_NGRAM_ORDER = 4
_SMOOTH_CODES = {"none": 0, "floor": 1, "add-k": 2, "exp": 3}


def my_log(num: float) -> float:
    """sacrebleu's log with log(0) = -9999999999."""
    if num == 0.0:
        return -9999999999
    return math.log(num)


class BLEUSignature(Signature):
    def __init__(self, args: dict):
        super().__init__(args)
        self._abbr.update({"case": "c", "eff": "e", "tok": "tok", "smooth": "s"})
        smooth_str = args["smooth_method"]
        smooth_def = BLEU.SMOOTH_DEFAULTS[smooth_str]
        if smooth_def is not None:
            smooth_val = args["smooth_value"]
            if smooth_val is None:
                smooth_val = smooth_def
            smooth_str += f"[{smooth_val:.2f}]"
        self.info.update({
            "case": "lc" if args["lowercase"] else "mixed",
            "eff": "yes" if args["effective_order"] else "no",
            "tok": args["tokenizer_signature"],
            "smooth": smooth_str,
        })


class BLEUScore(Score):
    """BLEU score with ``counts``, ``totals``, ``precisions``, ``bp``, ``sys_len``, ``ref_len``."""

    def __init__(self, score: float, counts: list, totals: list, precisions: list[float],
                 bp: float, sys_len: int, ref_len: int):
        # Score.__init__ inlined, without _verbose: prec_str and _verbose are formatted on first
        # use (__getattr__), as sentence scores (a decoder's thousands per second) seldom print
        self.name = "BLEU"
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self.bp = bp
        self.counts = counts
        self.totals = totals
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.precisions = precisions
        self.ratio = sys_len / ref_len if ref_len else 0

    def __getattr__(self, name: str):
        # only called for attributes not set yet: sacrebleu's eagerly formatted strings
        if name == "prec_str":
            value = "/".join([f"{p:.1f}" for p in self.precisions])
        elif name == "_verbose":
            value = f"{self.prec_str} (BP = {self.bp:.3f} "
            value += f"ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} "
            value += f"ref_len = {self.ref_len:d})"
        else:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.__dict__[name] = value
        return value


class BLEU(LexicalMetric):
    """Corpus/sentence BLEU with sacrebleu's constructor arguments and identical results.

    >>> BLEU().corpus_score(["the cat sat on mat"], [["the cat sat on the mat"]]).score
    """

    SMOOTH_DEFAULTS: ClassVar[dict[str, float | None]] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
    TOKENIZER_DEFAULT = "13a"
    TOKENIZERS = TOKENIZERS
    _TOKENIZER_MAP = TOKENIZER_MAP
    _SIGNATURE_TYPE = BLEUSignature
    _REF_ROW_BYTES = 2048

    def __init__(self, lowercase: bool = False, force: bool = False,
                 tokenize: str | None = None, smooth_method: str = "exp",
                 smooth_value: float | None = None, max_ngram_order: int = MAX_NGRAM_ORDER,
                 effective_order: bool = False, trg_lang: str = "",
                 references: Sequence[Sequence[str]] | None = None, workers: int = 1,
                 missing_refs: str = "error"):
        super().__init__(missing_refs)
        self.workers = workers
        self._force = force
        self.trg_lang = trg_lang
        self.lowercase = lowercase
        self.smooth_value = smooth_value
        self.smooth_method = smooth_method
        self.max_ngram_order = max_ngram_order
        self.effective_order = effective_order
        if smooth_method not in self.SMOOTH_DEFAULTS:
            raise ValueError(f"BLEU: unknown smooth_method {smooth_method!r}; choose one of "
                             f"{', '.join(self.SMOOTH_DEFAULTS)}")
        if not isinstance(max_ngram_order, int) or max_ngram_order < 1:
            raise ValueError(f"BLEU: max_ngram_order must be a positive int, got {max_ngram_order!r}")
        if tokenize is None:
            best = TOKENIZER_MAP.get(trg_lang, self.TOKENIZER_DEFAULT)
        else:
            best = tokenize
            advice = {"zh": ("zh", "Consider using the 'zh' or 'spm' tokenizer for Chinese."),
                      "ja": ("ja-mecab", "Consider using the 'ja-mecab' or 'spm' tokenizer for Japanese."),
                      "ko": ("ko-mecab", "Consider using the 'ko-mecab' or 'spm' tokenizer for Korean.")}
            if trg_lang in advice and best != advice[trg_lang][0]:
                log.warning(advice[trg_lang][1])
        self.tokenizer = Tokenizer(best)
        self.tokenizer_signature = self.tokenizer.signature()
        if references is not None:
            self._ref_cache = self.prepare(references)

    # ---- preprocessing ---------------------------------------------------------------
    def _lower(self, texts: list[str]) -> list[str]:
        return [t.lower() for t in texts] if self.lowercase else texts

    def _encode(self, texts: list[str], vocab, lookup: bool = False):
        return self.tokenizer.encode(self._lower(texts), vocab, lookup)

    def _prep_config(self) -> tuple:
        return (self.tokenizer.name, bool(self.lowercase), self.max_ngram_order)

    def _prepare_chunk(self, streams, present):
        vocab = _text.Vocab()
        encs = [self._encode([s if s is not None else "" for s in st], vocab) for st in streams]
        return vocab, _ngram.bleu_prepare_refs(encs, present, self.max_ngram_order)

    def _check_hyps(self, hyps) -> None:
        if not self._force:
            tok_count = _lists.count_ending_with_space_period(hyps)
            if tok_count >= 100:
                log.warning("That's 100 lines that end in a tokenized period ('.')")
                log.warning("It looks like you forgot to detokenize your test data, which may hurt your score.")
                log.warning("If you insist your data is detokenized, or don't care, you can suppress this message with the `force` parameter.")

    def _chunk_stats(self, hyps, state, seg_map=None):
        vocab, (seg_off, keys, counts, ref_lens) = state
        # hypothesis tokens are looked up, not added: a token no reference has matches nothing
        # whatever its id (all get UNSEEN_ID), and the prepared vocabulary (cached across
        # calls) keeps the references' size
        vals, offs = self._encode(hyps, vocab, lookup=True)
        return _ngram.bleu_stats(vals, offs, seg_off, keys, counts, ref_lens,
                                 self.max_ngram_order, seg_map=seg_map), None

    # ---- scoring ---------------------------------------------------------------------
    @staticmethod
    def compute_bleu(correct: list, total: list, sys_len: int, ref_len: int,
                     smooth_method: str = "none", smooth_value=None,
                     effective_order: bool = False,
                     max_ngram_order: int = MAX_NGRAM_ORDER) -> BLEUScore:
        """BLEU from summed statistics; sacrebleu's exact operation order (bit-identical)."""
        if smooth_method not in BLEU.SMOOTH_DEFAULTS:
            raise ValueError(f"Unknown smooth_method {smooth_method!r}")
        if smooth_value is None:
            smooth_value = BLEU.SMOOTH_DEFAULTS[smooth_method]
        bp = 1.0
        if sys_len < ref_len:
            bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
        precisions = [0.0] * max_ngram_order
        if not any(correct):
            return BLEUScore(0.0, correct, total, precisions, bp, sys_len, ref_len)
        smooth_mteval = 1.
        eff_order = max_ngram_order
        for n in range(1, len(precisions) + 1):
            if smooth_method == "add-k" and n > 1:
                correct[n - 1] += smooth_value
                total[n - 1] += smooth_value
            if total[n - 1] == 0:
                break
            if effective_order:
                eff_order = n
            if correct[n - 1] == 0:
                if smooth_method == "exp":
                    smooth_mteval *= 2
                    precisions[n - 1] = 100. / (smooth_mteval * total[n - 1])
                elif smooth_method == "floor":
                    precisions[n - 1] = 100. * smooth_value / total[n - 1]
            else:
                precisions[n - 1] = 100. * correct[n - 1] / total[n - 1]
        score = bp * math.exp(sum([my_log(p) for p in precisions[:eff_order]]) / eff_order)
        return BLEUScore(score, correct, total, precisions, bp, sys_len, ref_len)

    def compute_score_from_stats(self, stats) -> BLEUScore:
        n = self.max_ngram_order
        return self.compute_bleu(
            correct=stats[2: 2 + n], total=stats[2 + n:],
            sys_len=int(stats[0]), ref_len=int(stats[1]),
            smooth_method=self.smooth_method, smooth_value=self.smooth_value,
            effective_order=self.effective_order, max_ngram_order=n)

    def resampled_scores(self, sums: np.ndarray):
        """Vectorised BLEU of many summed rows (bootstrap / AR; see ``metrics.resampled``)."""
        if (sums.shape[1] != 2 + 2 * int(self.max_ngram_order)
                or self.smooth_method not in self.SMOOTH_DEFAULTS):
            return None
        return resampled.bleu_scores(self, sums)

    integer_stats = True

    def stats_columns(self) -> int:
        return 2 + 2 * int(self.max_ngram_order)

    def stats_layout(self) -> str:
        n = int(self.max_ngram_order)
        return f"hyp_len, ref_len, correct_1..{n}, total_1..{n}"

    def _scores_of_checked(self, stats: np.ndarray) -> np.ndarray:
        """Sentence BLEU of every row of an ``(N, 2 + 2 * order)`` int64 stats matrix -> float64 (N,).

        Bit-identical to ``sentence_score`` with this object's options, computed in one kernel call."""
        sv = self.smooth_value if self.smooth_value is not None else self.SMOOTH_DEFAULTS[self.smooth_method]
        return _ngram.bleu_sentence_scores(
            np.ascontiguousarray(stats, dtype=np.int64), self.max_ngram_order,
            _SMOOTH_CODES[self.smooth_method], float(sv or 0.0), bool(self.effective_order),
            resampled.NEUMAIER_SUM)  # the sentence kernel sums like the running CPython

    def pairwise_scores(self, rows: Sequence[str], cols: Sequence[str] | None = None,
                        workers: int | None = None) -> np.ndarray:
        """All-pairs sentence BLEU, float64 ``(n, m)`` (``cols`` None: ``(n, n)``, rows against
        themselves); cell ``(i, j)`` is bit-identical to ``sentence_score(rows[i], [cols[j]])``
        with this object's options (tokenizer, smoothing, effective order), without its
        per-call warning. Each distinct string is tokenised and its n-grams interned once."""
        lay = pairwise.layout(self._coerce_hyps(rows),
                              None if cols is None else self._coerce_hyps(cols))
        ids, counts, offsets, totals, n_ids = self.group_ngram_counts(lay.texts)
        out = np.zeros((len(lay.rows), len(lay.cols)), dtype=np.float64)
        sv = self.smooth_value if self.smooth_value is not None else self.SMOOTH_DEFAULTS[self.smooth_method]
        args = (_SMOOTH_CODES[self.smooth_method], float(sv or 0.0), bool(self.effective_order),
                resampled.NEUMAIER_SUM)
        pairwise.fill_columns(
            lambda part: _pairwise.bleu_matrix(ids, counts, offsets, totals, n_ids, lay.rows,
                                               lay.cols, lay.symmetric, *args, out, part),
            len(lay.cols), self.workers if workers is None else workers)
        return lay.expand(out)

    def group_ngram_counts(self, texts: list[str]) -> pairwise.GroupNgrams:
        """The token n-gram counts (orders 1..max_ngram_order, this metric's tokenizer and
        lowercasing) of each of S texts, interned over the group: ``ids`` / ``counts`` int32 per
        (text, order) segment of ``offsets`` (int64 (S * max_ngram_order + 1,)), ``totals`` int64
        (S, max_ngram_order), ``n_ids`` distinct n-grams. ``totals[:, 0]`` is each text's length."""
        vals, offs = self._encode(list(texts), _text.Vocab())
        return pairwise.GroupNgrams(*_pairwise.group_ngrams([(vals, offs)], [self.max_ngram_order]))

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> BLEUScore:
        """BLEU of one hypothesis against one or more reference strings."""
        if not self.effective_order:
            log.warning("It is recommended to enable `effective_order` for sentence-level BLEU.")
        # the base method called directly, not through super() and cast (a decoder hot path)
        return Metric.sentence_score(self, hypothesis, references)

    def _sentence_score_kernel(self, hyp: str, refs) -> BLEUScore | None:
        """One call of the compiled single-pair kernel (tokenize, count, score; no numpy, no
        prepared-reference cache), or None when a reference is not a str."""
        tok = self.tokenizer
        try:
            if self.lowercase:
                hyp = hyp.lower()
                refs = [r.lower() for r in refs]
            ext = tok.external
            if ext is not None:  # MeCab / SentencePiece in Python, then whitespace-split
                hyp = ext(hyp.rstrip())
                refs = [ext(r.rstrip()) for r in refs]
        except AttributeError:  # a None (or other non-str) reference
            return None
        method = self.smooth_method
        code = _SMOOTH_CODES.get(method)
        if code is None:  # changed after construction: compute_bleu's error
            return None
        smooth_value = self.smooth_value
        if smooth_value is None:
            smooth_value = self.SMOOTH_DEFAULTS[method]
        order = self.max_ngram_order
        mode = tok.mode if ext is None and tok.mode is not None else MODE_NONE
        res = _sentence.bleu_sentence(hyp, refs, mode, ext is None, order, code,
                                      float(smooth_value or 0.0), bool(self.effective_order),
                                      resampled.NEUMAIER_SUM)
        if res is None:
            return None
        self.num_refs = len(refs)
        sys_len, ref_len, counts, totals, precisions, bp, score = res
        if method == "add-k":  # sacrebleu adds k to the counts it returns: its own formula
            return self.compute_bleu(counts, totals, sys_len, ref_len, method, self.smooth_value,
                                     self.effective_order, order)
        return BLEUScore(score, counts, totals, precisions, bp, sys_len, ref_len)
