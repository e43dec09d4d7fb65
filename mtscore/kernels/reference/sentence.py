"""Plain-Python twins of ``mtscore/kernels/_sentence.pyx`` (tests only): one hypothesis against
its references, tokenized with the ``text`` twins and counted with Counters of n-gram tuples
(``sum(min(hyp_count, ref_count))``), scored with sacrebleu's formulas written out."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from . import ngram, text


def _check(hyp: object, refs: Sequence[object]) -> bool:
    """The kernels' argument checks: TypeError for a non-str hypothesis, ValueError for no
    references; False when a text is not exactly a str (the kernel returns None)."""
    if not isinstance(hyp, str):
        raise TypeError(f"hyp is {type(hyp).__name__}, expected str")
    if len(refs) == 0:
        raise ValueError("no references")
    return type(hyp) is str and all(type(r) is str for r in refs)


def _clipped(hyp: Sequence, ref_counts: list[Counter], order: int) -> list[int]:
    return [sum(min(c, ref_counts[n][g]) for g, c in cn.items())
            for n, cn in enumerate(ngram.ngram_counts(hyp, order))]


def bleu_sentence(hyp: str, refs: Sequence[str], mode: int, rstrip: bool = True,
                  max_order: int = 4, smooth: int = 3, smooth_value: float = 0.0,
                  effective_order: bool = False, neumaier: bool = False):
    """``(sys_len, ref_len, counts, totals, precisions, bp, score)`` or None."""
    if max_order < 1:
        raise ValueError("max_order must be >= 1")
    if mode < 0 or mode > 4:
        raise ValueError(f"bleu_sentence: mode {mode} is not a BLEU tokenizer mode")
    if mode == text.MODE_INTL and not text.has_intl_table():
        raise RuntimeError("intl class table not installed")
    if not _check(hyp, refs):
        return None
    toks = [text._tokens(t.rstrip() if rstrip else t, mode) for t in [hyp, *refs]]
    h, rs = toks[0], toks[1:]
    ref_max: list[Counter] = [Counter() for _ in range(max_order)]
    for r in rs:
        for n, cn in enumerate(ngram.ngram_counts(r, max_order)):
            for g, c in cn.items():
                ref_max[n][g] = max(ref_max[n][g], c)
    # closest reference length, ties -> shorter
    ref_len = min((abs(len(h) - len(r)), len(r)) for r in rs)[1]
    counts = _clipped(h, ref_max, max_order)
    totals = [ngram._npos(len(h), n) for n in range(1, max_order + 1)]
    score, bp, prec = ngram.bleu_row(counts, totals, len(h), ref_len, max_order, smooth, smooth_value,
                                effective_order, neumaier)
    return len(h), ref_len, counts, totals, prec, bp, score


def chrf_sentence(hyp: str, refs: Sequence[str], char_order: int = 6, word_order: int = 0,
                  factor: float = 4.0, eps_smoothing: bool = False, whitespace: bool = False):
    """``(stats, score)`` of the best reference (strict >, first wins), or None."""
    order = char_order + word_order
    if char_order < 0 or word_order < 0 or order == 0:
        raise ValueError("char_order and word_order must be >= 0, and not both 0")
    if not _check(hyp, refs):
        return None

    def seqs(t: str):
        return list(text.chrf_chars(t, whitespace)), text.chrf_words(t)

    hc, hw = seqs(hyp)
    best_f, best = -1.0, None
    for r in refs:
        rc, rw = seqs(r)
        st: list[int] = []
        for h_seq, r_seq, o in ((hc, rc, char_order), (hw, rw, word_order)):
            if o == 0:
                continue
            matches = _clipped(h_seq, ngram.ngram_counts(r_seq, o), o)
            for n in range(1, o + 1):
                n_ref = ngram._npos(len(r_seq), n)
                # sacrebleu: no hypothesis n-grams of an order the reference has none of
                st += [ngram._npos(len(h_seq), n) if n_ref > 0 else 0, n_ref, matches[n - 1]]
        f = ngram.chrf_f(st, factor, eps_smoothing)
        if f > best_f:
            best_f, best = f, st
    return best, best_f
