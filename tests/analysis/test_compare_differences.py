"""Segments where two systems differ most (mtscore.analysis.compare.differences)."""
from __future__ import annotations

import difflib

import numpy as np
import pytest

from mtscore.analysis.compare.differences import (
    largest_differences,
    segment_differences,
    sentence_scores,
    token_diff,
)
from mtscore.analysis.errors import AnalysisInputError
from mtscore.engine.metrics.registry import make_sentence_metric

REF = ["the cat sat on the mat", "a b c d", "hello world", "good morning to you"]
SYS_A = ["the cat sat on a mat", "a b c d", "hello world", "good evening"]
SYS_B = ["the dog sat on the mat", "a c", "hello world", "good morning to you"]


@pytest.mark.parametrize("name", ["bleu", "chrf"])
def test_sentence_scores_equal_sentence_score(name):
    got = sentence_scores(name, [REF], SYS_A)
    m = make_sentence_metric(name)
    assert got.dtype == np.float64
    assert got.tolist() == [m.sentence_score(h, [r]).score for h, r in zip(SYS_A, REF)]


def test_largest_differences_order_and_ties():
    a = np.array([5.0, 1.0, 3.0, 3.0, 2.0, 2.0])
    b = np.array([1.0, 1.0, 1.0, 1.0, 4.0, 9.0])
    a_better, b_better = largest_differences(a, b, top_k=10)
    assert a_better.tolist() == [0, 2, 3]  # differences 4, 2, 2 (tie: index order)
    assert b_better.tolist() == [5, 4]
    assert largest_differences(a, b, top_k=1)[0].tolist() == [0]
    assert a_better.dtype == np.int64
    nan = largest_differences(np.array([np.nan, 1.0]), np.array([0.0, 0.0]))
    assert nan[0].tolist() == [1]


def test_segment_differences():
    a_better, b_better = segment_differences("chrf", [REF], SYS_A, SYS_B, top_k=5)
    sa = sentence_scores("chrf", [REF], SYS_A)
    sb = sentence_scores("chrf", [REF], SYS_B)
    want_a = [i for i in sorted(range(4), key=lambda i: (-(sa[i] - sb[i]), i)) if sa[i] > sb[i]]
    want_b = [i for i in sorted(range(4), key=lambda i: (-(sb[i] - sa[i]), i)) if sb[i] > sa[i]]
    assert [d.index for d in a_better] == want_a
    assert [d.index for d in b_better] == want_b
    assert 2 not in want_a + want_b  # identical outputs differ nowhere
    d = next(x for x in a_better + b_better if x.index == 1)
    assert d.tokens_a == ("a", "b", "c", "d")
    assert d.tokens_b == ("a", "c")
    assert d.delta == d.score_b - d.score_a
    assert d.opcodes == (("equal", 0, 1, 0, 1), ("delete", 1, 2, 1, 1), ("equal", 2, 3, 1, 2),
                         ("delete", 3, 4, 2, 2))


def test_error_rates_rank_lower_as_better():
    a_better, b_better = segment_differences("ter", [REF], SYS_A, SYS_B, top_k=5)
    sa = sentence_scores("ter", [REF], SYS_A)
    sb = sentence_scores("ter", [REF], SYS_B)
    assert [d.index for d in a_better] == [i for i in sorted(range(4), key=lambda i: (sa[i] - sb[i], i))
                                           if sa[i] < sb[i]]
    assert [d.index for d in b_better] == [i for i in sorted(range(4), key=lambda i: (sb[i] - sa[i], i))
                                           if sb[i] < sa[i]]
    assert all(d.score_a < d.score_b for d in a_better)
    assert a_better
    assert b_better


def test_token_diff_is_difflibs():
    a, b = ["x", "y", "z", "y", "x"], ["y", "z", "x", "x"]
    want = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    assert list(token_diff(a, b)) == [tuple(o) for o in want]
    assert token_diff([], []) == ()


def test_bad_input():
    with pytest.raises(AnalysisInputError, match="sys_a has 4 segments but sys_b has 3"):
        segment_differences("bleu", [REF], SYS_A, SYS_B[:3])
    with pytest.raises(AnalysisInputError, match="sys_b is empty"):
        segment_differences("bleu", [REF], SYS_A, [])
    with pytest.raises(AnalysisInputError, match=r"refs\[0\] has 3 segments but hyps has 4"):
        sentence_scores("bleu", [REF[:3]], SYS_A)
    with pytest.raises(AnalysisInputError, match="hyps is empty"):
        sentence_scores("bleu", [REF], [])
    with pytest.raises(AnalysisInputError, match="shapes"):
        largest_differences(np.zeros(2), np.zeros(3))
    with pytest.raises(AnalysisInputError, match="top_k"):
        largest_differences(np.zeros(2), np.zeros(2), top_k=0)
