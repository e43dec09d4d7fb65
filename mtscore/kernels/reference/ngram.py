"""Plain-Python twins of ``mtscore/kernels/_ngram.pyx`` (tests only): the same statistics from
Counters of n-gram tuples, without the kernel's hierarchical interning."""
from __future__ import annotations

from collections import Counter
from typing import List, Optional, Sequence


def ngram_counts(seq: Sequence, order: int) -> List[Counter]:
    return [Counter(tuple(seq[i:i + n]) for i in range(len(seq) - n + 1))
            for n in range(1, order + 1)]


def bleu_segment_stats(hyp: Sequence, refs: Sequence[Optional[Sequence]], order: int) -> List[int]:
    """[hyp_len, closest_ref_len, correct_1..N, total_1..N] for token sequences."""
    refs = [r for r in refs if r is not None]
    merged = [Counter() for _ in range(order)]
    for r in refs:
        for n, c in enumerate(ngram_counts(r, order)):
            for g, k in c.items():
                merged[n][g] = max(merged[n][g], k)
    closest_diff, closest_len = -1, -1
    for r in refs:
        diff = abs(len(hyp) - len(r))
        if closest_diff == -1 or diff < closest_diff:
            closest_diff, closest_len = diff, len(r)
        elif diff == closest_diff and len(r) < closest_len:
            closest_len = len(r)
    correct, total = [], []
    for n, c in enumerate(ngram_counts(hyp, order)):
        total.append(sum(c.values()))
        correct.append(sum(min(k, merged[n][g]) for g, k in c.items()))
    return [len(hyp), closest_len] + correct + total


def chrf_pair_stats(hyp_chars: Sequence, hyp_words: Sequence, ref_chars: Sequence,
                    ref_words: Sequence, char_order: int, word_order: int) -> List[int]:
    out: List[int] = []
    pairs = list(zip(ngram_counts(hyp_chars, char_order), ngram_counts(ref_chars, char_order)))
    if word_order:
        pairs += list(zip(ngram_counts(hyp_words, word_order), ngram_counts(ref_words, word_order)))
    for h, r in pairs:
        match = sum(min(k, r[g]) for g, k in h.items())
        out += [sum(h.values()) if r else 0, sum(r.values()), match]
    return out
