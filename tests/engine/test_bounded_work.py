"""Bounded work on hostile input (issue P13 "Trust II", "Bounded work"):

* BLEU reference preparation is linear in the number of references of a segment (the max
  count over references is kept as each reference is walked; no pass over the segment's
  entries after each one): checked for equality with the plain-Python twin on many references,
  not by timing;
* the n-gram tables of a long line grow with the n-grams seen (SPAN_POSITIONS positions at a
  time), not sized for all ``L * order`` positions up front: equality with the twins on lines
  longer than a span, and the peak memory of chrF on a long line whose n-grams repeat, measured
  (ru_maxrss of a fresh process), not timed;
* a line longer than ``Metric.max_line_chars`` is refused before any work with a one-line
  ``ValueError`` naming it and the limit.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mtscore.engine.line_limit import MAX_LINE_CHARS, LineTooLongError, check_line_lengths
from mtscore.engine.metrics.bleu import BLEU
from mtscore.engine.metrics.chrf import CHRF
from mtscore.kernels import _ngram
from mtscore.kernels.reference import ngram as twin


def _csr(rows):
    off = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    vals = (np.concatenate([np.asarray(r, dtype=np.int32) for r in rows]) if rows
            else np.zeros(0, np.int32))
    return vals.astype(np.int32), off


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype
        assert np.array_equal(x, y)


@pytest.mark.parametrize("order", [1, 2, 4])
def test_bleu_prepare_refs_many_references_equals_twin(order):
    rng = np.random.default_rng(order)
    K, N = 300, 3
    # small vocabularies: the references of a segment share most of their n-grams, so max
    # counts are taken over many references per entry
    streams = [_csr([rng.integers(0, 4 + 3 * i, rng.integers(0, 30)) for i in range(N)])
               for _ in range(K)]
    present = (rng.random((K, N)) < 0.9).astype(np.uint8)
    _same(_ngram.bleu_prepare_refs(streams, present, order),
          twin.bleu_prepare_refs(streams, present, order))


def test_bleu_pair_stats_many_references_equals_twin():
    rng = np.random.default_rng(7)
    refs = [rng.integers(0, 6, rng.integers(0, 25)) for _ in range(400)]
    rv, ro = _csr(refs)
    hv, ho = _csr([rng.integers(0, 6, 20) for _ in range(4)])
    groups = np.array([0, 1, 150, 151, 400], dtype=np.int64)   # 1, 149, 1, 249 references
    _same([_ngram.bleu_pair_stats(hv, ho, rv, ro, groups, 4)],
          [twin.bleu_pair_stats(hv, ho, rv, ro, groups, 4)])


@pytest.mark.parametrize("vocab", [50, 100_000])   # repeating n-grams / nearly all distinct
def test_long_lines_equal_twins(vocab):
    """Lines several times SPAN_POSITIONS long (the tables grow span by span)."""
    rng = np.random.default_rng(vocab)
    long_a = rng.integers(0, vocab, 20_000)
    long_b = np.concatenate([long_a[5_000:13_000], rng.integers(0, vocab, 9_000)])
    streams = [_csr([long_a, [1, 2, 3]]), _csr([long_b, []])]
    present = np.ones((2, 2), dtype=np.uint8)
    _same(_ngram.bleu_prepare_refs(streams, present, 4),
          twin.bleu_prepare_refs(streams, present, 4))
    words = [_csr([rng.integers(0, 30, 3_000), [4]]), _csr([rng.integers(0, 30, 9_000), [5]])]
    _same(_ngram.chrf_prepare_refs(streams, words, present, 6, 2),
          twin.chrf_prepare_refs(streams, words, present, 6, 2))


def test_long_line_scores_equal_sacrebleu():
    sacrebleu = pytest.importorskip("sacrebleu")
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(300)]
    hyps = [" ".join(rng.choice(words, 20_000)), "a b"]
    refs = [[" ".join(rng.choice(words, 30_000)), "a b c"], ["w1 w2", "b"]]
    for ours, theirs in ((BLEU(), sacrebleu.BLEU()), (CHRF(), sacrebleu.CHRF()),
                         (CHRF(word_order=2), sacrebleu.CHRF(word_order=2))):
        assert ours.corpus_score(hyps, refs).score == theirs.corpus_score(hyps, refs).score


_PEAK = textwrap.dedent("""
    import resource, sys
    from mtscore.engine.metrics.chrf import CHRF
    line = ("the quick brown fox jumps over the lazy dog near a river bank " * 70_000)
    m = CHRF()
    m.corpus_score(["a fox"], [["x"]])          # imports and first-call set-up
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    m.corpus_score(["the lazy dog"], [[line]])
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)
""")


def test_chrf_long_repetitive_line_memory_bounded():
    """A 4.4 MB reference line of one repeated sentence: chrF's tables now hold its few
    distinct n-grams (~50 MB at the peak, mostly the code points); before, the table was sized
    for all 26 M n-gram positions (~700 MB). Peak RSS growth in a fresh process, not time."""
    out = subprocess.run([sys.executable, "-c", _PEAK], capture_output=True, text=True,
                         check=True, timeout=300)
    grew_mb = int(out.stdout.split()[-1])
    assert grew_mb < 250, f"chrF on a 4.4 MB line grew the peak RSS by {grew_mb} MB"


def test_line_limit_refuses_before_work():
    for m in (BLEU(), CHRF(), CHRF(word_order=2)):
        m.max_line_chars = 100
        with pytest.raises(LineTooLongError, match=r"refs\[1\]: line 2 has 101 characters, "
                                                   r"more than the limit of 100 \(max_line_chars"):
            m.corpus_score(["a", "b"], [["x", "y"], [None, "z" * 101]])
        with pytest.raises(ValueError, match=r"hyps: line 1 has 150 characters"):
            m.corpus_score(["h" * 150, "b"], [["x", "y"]])
        msg = None
        try:
            m.corpus_score(["h" * 150], [["x"]])
        except LineTooLongError as e:
            msg = str(e)
        assert msg is not None
        assert "\n" not in msg
        # at the limit: scored; 0 / None: no limit
        m.corpus_score(["h" * 100], [["x" * 100]])
        for off in (0, None):
            m.max_line_chars = off
            m.corpus_score(["h" * 150], [["x" * 150]])


def test_default_limit_and_checker():
    assert BLEU().max_line_chars == CHRF().max_line_chars == MAX_LINE_CHARS >= 1_000_000
    check_line_lengths(["a" * 10, None, ""], "x", 10)
    check_line_lengths(["a" * 11], "x", 0)
    with pytest.raises(LineTooLongError, match="x: line 3 has 11 characters"):
        check_line_lengths(["a", None, "b" * 11], "x", 10)
