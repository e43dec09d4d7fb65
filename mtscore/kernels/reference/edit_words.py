"""Plain-Python twin of ``mtscore/kernels/_edit_words.pyx`` (tests only): the same names and
signatures; jiwer's words of the ``edit_csr`` twin, interned per segment, scored with the
textbook distances of the ``edit_distance`` twin.
"""
from __future__ import annotations

from .edit_csr import check_texts, jiwer_split
from .edit_distance import MEASURE_LEVENSHTEIN, levenshtein_seq, per_errors, pick


def word_stats_texts(hyps, refs, ref_lo, ref_hi, out, measure=0, multi_ref=0, start=0, stop=-1):
    n, n_refs = len(hyps), len(refs)
    if stop < 0:
        stop = n
    if len(ref_lo) != n or len(ref_hi) != n or out.shape != (n, 2):
        raise ValueError("word_stats_texts: ref_lo, ref_hi and out must have N rows (out: (N, 2))")
    if measure not in (0, 1) or multi_ref not in (0, 1, 2):
        raise ValueError("word_stats_texts: measure must be 0 or 1 and multi_ref 0, 1 or 2")
    if start < 0 or stop > n or start > stop:
        raise ValueError(f"word_stats_texts: bad range [{start}, {stop}) for {n} segments")
    for i in range(start, stop):
        if ref_lo[i] < 0 or ref_hi[i] > n_refs or ref_lo[i] > ref_hi[i]:
            raise ValueError(f"word_stats_texts: reference range of segment {i} out of bounds")
    if stop == start:
        return
    check_texts(hyps[start:stop])
    used = [a for i in range(start, stop) for a in range(int(ref_lo[i]), int(ref_hi[i]))]
    if used:
        check_texts(refs[min(used):max(used) + 1])
    errors = levenshtein_seq if measure == 0 else per_errors
    for i in range(start, stop):
        if ref_hi[i] == ref_lo[i]:
            out[i] = (0.0, 0.0)
            continue
        h = jiwer_split(hyps[i])
        ids = {w: k for k, w in enumerate(dict.fromkeys(h))}
        hid = [ids[w] for w in h]
        cand = []
        for a in range(int(ref_lo[i]), int(ref_hi[i])):
            r = [ids.get(w, -1) for w in jiwer_split(refs[a])]  # -1: absent, matches nothing
            cand.append((errors(hid, r), len(r)))
        out[i] = pick(cand, multi_ref)


class WordSets:
    """The reference strings prepared once: each one's jiwer words (the kernel keeps a hash set
    of those of strings of <= 64 words; the numbers do not depend on it)."""

    def __init__(self, refs: list):
        check_texts(refs)
        self._refs = list(refs)

    def __len__(self) -> int:
        return len(self._refs)


def word_stats_sets(hyps, sets, ref_lo, ref_hi, out, multi_ref=0, start=0, stop=-1):
    if not isinstance(sets, WordSets):
        raise TypeError("word_stats_sets: sets must be a WordSets")
    word_stats_texts(hyps, sets._refs, ref_lo, ref_hi, out, MEASURE_LEVENSHTEIN, multi_ref, start, stop)
