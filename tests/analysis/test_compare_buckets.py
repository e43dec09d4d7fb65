"""Scores by length bucket (mtscore.analysis.compare.buckets): each bucket's score and bootstrap CI
equal the metric's corpus score of that bucket's segments (sacrebleu's single-system bootstrap)."""
from __future__ import annotations

import numpy as np
import pytest

from mtscore.analysis.compare.buckets import (
    DEFAULT_LENGTH_EDGES,
    bucket_scores,
    length_bucket_scores,
    length_buckets,
)
from mtscore.analysis.compare.tokens import tokenize
from mtscore.analysis.errors import AnalysisInputError
from mtscore.engine.metrics.registry import make_metric

REF = ["the cat sat on the mat .", "a dog barks", "one two three four five six seven eight nine ten eleven",
       "x", "the quick brown fox jumps over the lazy dog again and again"]
SYS_A = ["the cat sat on a mat .", "a dog barked", "one two three four five six seven eight nine ten",
         "y", "the quick brown fox jumped over the lazy dog again"]
SYS_B = ["a cat sat on the mat", "the dog barks", "one two three four five six seven eight nine ten eleven",
         "x", "quick brown foxes jump over lazy dogs"]


def test_length_buckets_default_edges():
    b, labels = length_buckets([["w"] * n for n in (0, 9, 10, 19, 20, 59, 60, 200)])
    assert labels == ("<10", "[10,20)", "[20,30)", "[30,40)", "[40,50)", "[50,60)", ">=60")
    assert b.tolist() == [0, 0, 1, 1, 2, 5, 6, 6]
    assert b.dtype == np.int64
    assert len(DEFAULT_LENGTH_EDGES) == 6


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_bucket_equals_corpus_score_of_its_segments(name, monkeypatch):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    lengths = tokenize(REF)
    edges = (5, 11)  # lengths 7, 3, 11, 1, 12 -> buckets 1, 0, 2, 0, 2
    res = length_bucket_scores(name, [REF], [SYS_A, SYS_B], lengths, edges=edges, n_bootstrap=50)
    assert res.labels == ("<5", "[5,11)", ">=11")
    assert res.counts.tolist() == [2, 1, 2]
    members = [[1, 3], [0], [2, 4]]
    for s, hyps in enumerate([SYS_A, SYS_B]):
        for j, rows in enumerate(members):
            m = make_metric(name)
            score = m.corpus_score([hyps[i] for i in rows], [[REF[i] for i in rows]], n_bootstrap=50)
            assert res.scores[s, j] == score.score
            assert res.mean[s, j] == score._mean
            assert res.ci[s, j] == score._ci
    assert (res.n_bootstrap, res.seed) == (50, 12345)


def test_empty_bucket_is_nan_and_no_bootstrap():
    res = length_bucket_scores("bleu", [REF], [SYS_A], tokenize(REF), n_bootstrap=0)
    assert res.counts.tolist() == [3, 2, 0, 0, 0, 0, 0]  # lengths 7, 3, 11, 1, 12
    assert np.isnan(res.scores[0, 2:]).all()
    assert not np.isnan(res.scores[0, :2]).any()
    assert np.isnan(res.ci).all()
    assert np.isnan(res.mean).all()


def test_bucket_scores_from_stats_by_hand():
    m = make_metric("bleu")
    stats = m.systems_stats([SYS_A], [REF])
    buckets = np.array([0, 0, 1, 1, 1])
    res = bucket_scores(m, stats, buckets, ("first", "rest"), n_bootstrap=0, seed=7)
    want0 = m.compute_score_from_stats(m.sum_stats(stats[0][:2])).score
    want1 = m.compute_score_from_stats(m.sum_stats(stats[0][2:])).score
    assert res.scores.tolist() == [[want0, want1]]
    assert res.labels == ("first", "rest")
    assert res.counts.tolist() == [2, 3]


def test_seed_changes_the_interval_only():
    a = length_bucket_scores("chrf", [REF], [SYS_A], tokenize(REF), edges=(5,), n_bootstrap=20, seed=1)
    b = length_bucket_scores("chrf", [REF], [SYS_A], tokenize(REF), edges=(5,), n_bootstrap=20, seed=2)
    assert (a.scores == b.scores).all()
    assert a.seed == 1
    assert b.seed == 2


def test_bad_input():
    lengths = tokenize(REF)
    with pytest.raises(AnalysisInputError, match=r"systems\[1\] has 4 segments but lengths_of has 5"):
        length_bucket_scores("bleu", [REF], [SYS_A, SYS_B[:4]], lengths)
    with pytest.raises(AnalysisInputError, match=r"systems\[0\] has 0 segments.*empty system"):
        length_bucket_scores("bleu", [REF], [[]], lengths)
    with pytest.raises(AnalysisInputError, match="at least one system"):
        length_bucket_scores("bleu", [REF], [], lengths)
    with pytest.raises(AnalysisInputError, match=r"refs\[0\] has 4"):
        length_bucket_scores("bleu", [REF[:4]], [SYS_A], lengths)
    with pytest.raises(AnalysisInputError, match="n_bootstrap"):
        length_bucket_scores("bleu", [REF], [SYS_A], lengths, n_bootstrap=1)
    with pytest.raises(ValueError, match="unknown metric"):
        length_bucket_scores("nope", [REF], [SYS_A], lengths)
    m = make_metric("bleu")
    st = m.systems_stats([SYS_A], [REF])
    with pytest.raises(AnalysisInputError, match=r"buckets must be in 0\.\.1"):
        bucket_scores(m, st, np.array([0, 1, 2, 0, 0]), ("a", "b"))
    with pytest.raises(AnalysisInputError, match=r"stats\[0\] has shape"):
        bucket_scores(m, st, np.array([0, 1, 0]), ("a", "b"))


def test_several_references(monkeypatch):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    ref2 = [r.upper() if i % 2 else r for i, r in enumerate(SYS_B)]
    res = length_bucket_scores("bleu", [REF, ref2], [SYS_A], tokenize(REF), edges=(5,), n_bootstrap=10)
    for j, rows in enumerate([[1, 3], [0, 2, 4]]):
        score = make_metric("bleu").corpus_score([SYS_A[i] for i in rows],
                                                 [[REF[i] for i in rows], [ref2[i] for i in rows]],
                                                 n_bootstrap=10)
        assert res.scores[0, j] == score.score
        assert res.ci[0, j] == score._ci
