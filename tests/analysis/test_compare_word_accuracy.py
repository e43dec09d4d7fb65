"""Word F-measure by frequency bucket (mtscore.analysis.compare.word_accuracy) against direct
computations on hand-made inputs."""
from __future__ import annotations

import numpy as np
import pytest

from mtscore.analysis.compare.edges import bucket_index, bucket_indices, bucket_labels, check_edges
from mtscore.analysis.compare.tokens import tokenize
from mtscore.analysis.compare.word_accuracy import (
    DEFAULT_FREQ_EDGES,
    fmeasure_ci,
    prf,
    segment_counts,
    word_accuracy,
    word_frequencies,
)
from mtscore.analysis.errors import AnalysisInputError


def test_default_labels_are_compare_mts():
    assert bucket_labels(DEFAULT_FREQ_EDGES) == (
        "<1", "1", "2", "3", "4", "[5,10)", "[10,100)", "[100,1000)", ">=1000")
    assert bucket_labels((10, 20, 30, 40, 50, 60)) == (
        "<10", "[10,20)", "[20,30)", "[30,40)", "[40,50)", "[50,60)", ">=60")
    assert bucket_labels((0.5, 1.5), integer=False) == ("<0.5", "[0.5,1.5)", ">=1.5")


def test_bucket_index_is_first_edge_above():
    e = DEFAULT_FREQ_EDGES
    for v, want in [(0, 0), (1, 1), (4, 4), (5, 5), (9, 5), (10, 6), (999, 7), (1000, 8), (10**6, 8)]:
        assert bucket_index(v, e) == want
    assert bucket_indices([0, 1, 9, 1000], e).tolist() == [0, 1, 5, 8]


@pytest.mark.parametrize("edges", [(), (2, 1), (1, 1), ("a",), (float("nan"),)])
def test_bad_edges(edges):
    with pytest.raises(AnalysisInputError, match="edges"):
        check_edges(edges)


def test_hand_made_counts():
    # reference frequencies: the 3, a 1, cat 1, sat 2, mat 1, on 1, dog 1 (over both segments)
    ref = [["the", "cat", "sat", "on", "the", "mat"], ["a", "dog", "sat", "the"]]
    out = [["the", "the", "the", "cat", "on", "a", "mat"], ["a", "dog", "sits"]]
    freq = word_frequencies(ref)
    assert freq == {"the": 3, "cat": 1, "sat": 2, "on": 1, "mat": 1, "a": 1, "dog": 1}
    res = word_accuracy([ref], [out], edges=(1, 2, 3))  # buckets <1, 1, 2, >=3
    assert res.labels == ("<1", "1", "2", ">=3")
    # reference words by bucket: freq1 = cat on mat a dog (5), freq2 = sat sat (2), freq3 = the x3
    assert res.ref_counts.tolist() == [0, 5, 2, 3]
    # output words: seg1 the x3 (bucket 3) cat on a mat (bucket 1); seg2 a dog (1), sits (0)
    assert res.out_counts.tolist() == [[1, 6, 0, 3]]
    # matches: seg1 the min(3,2)=2, cat, on, mat (a is not in seg1's reference); seg2 a, dog
    assert res.matches.tolist() == [[0, 5, 0, 2]]
    p, r, f = 5 / 6, 5 / 5, 2 * (5 / 6) * 1.0 / (5 / 6 + 1.0)
    assert res.precision[0].tolist() == [0.0, p, 0.0, 2 / 3]
    assert res.recall[0].tolist() == [0.0, r, 0.0, 2 / 3]
    assert res.fmeasure[0, 1] == f
    assert res.fmeasure[0, 3] == 2 * (2 / 3) * (2 / 3) / (2 / 3 + 2 / 3)


def test_prf_zero_matches_and_formula():
    assert prf(0, 5, 7) == (0.0, 0.0, 0.0)
    assert prf(0, 0, 0) == (0.0, 0.0, 0.0)
    p, r, f = prf(3, 4, 6)
    assert (p, r) == (0.5, 0.75)
    assert f == 2 * 0.5 * 0.75 / (0.5 + 0.75)


def test_absent_word_and_training_frequencies():
    ref = [["x", "y"]]
    out = [["x", "z"]]
    # z is in neither table: frequency 0 -> bucket "<1"; x is frequent in the training corpus
    res = word_accuracy([ref], [out], frequencies={"x": 1500, "y": 7}, edges=DEFAULT_FREQ_EDGES)
    assert res.ref_counts.tolist() == [0, 0, 0, 0, 0, 1, 0, 0, 1]
    assert res.out_counts.tolist() == [[1, 0, 0, 0, 0, 0, 0, 0, 1]]
    assert res.matches.tolist() == [[0, 0, 0, 0, 0, 0, 0, 0, 1]]
    assert res.fmeasure[0, -1] == 1.0
    assert res.fmeasure[0, 0] == 0.0


def test_empty_segments_and_several_systems():
    ref = [[], ["a", "b"]]
    s1 = [["a"], []]
    s2 = [[], ["b", "a", "a"]]
    res = word_accuracy([ref], [s1, s2], edges=(1, 2))
    # frequencies a 1, b 1 -> bucket 1; s1's "a" in segment 0 has no reference: unmatched
    assert res.ref_counts.tolist() == [0, 2, 0]
    assert res.out_counts.tolist() == [[0, 1, 0], [0, 3, 0]]
    assert res.matches.tolist() == [[0, 0, 0], [0, 2, 0]]
    assert res.precision[1, 1] == 2 / 3
    assert res.recall[1, 1] == 1.0


def test_several_references_sum_the_pairings():
    r1 = [["a", "b"]]
    r2 = [["a", "a"]]
    out = [["a", "a", "b"]]
    both = word_accuracy([r1, r2], [out], edges=(1, 2, 3))
    one = word_accuracy([r1], [out], frequencies={"a": 3, "b": 1}, edges=(1, 2, 3))
    two = word_accuracy([r2], [out], frequencies={"a": 3, "b": 1}, edges=(1, 2, 3))
    assert (both.ref_counts == one.ref_counts + two.ref_counts).all()
    assert (both.matches == one.matches + two.matches).all()
    assert (both.out_counts == one.out_counts + two.out_counts).all()


def test_tokenize_uses_13a():
    assert tokenize(["Hello, world!", ""]) == [["Hello", ",", "world", "!"], []]
    assert tokenize(["a  b"], "none") == [["a", "b"]]
    with pytest.raises(AnalysisInputError, match="not one string"):
        tokenize("abc")


@pytest.mark.parametrize(("refs", "systems", "match"), [
    ([[["a"], ["b"]]], [[["a"]]], r"systems\[0\] has 1 segments but the references have 2"),
    ([[["a"]]], [[]], r"systems\[0\] is empty"),
    ([[["a"]]], [], "at least 1 system"),
    ([], [[["a"]]], "refs must be"),
    ([[]], [[["a"]]], r"refs\[0\] is empty"),
    ([[["a"]], [["a"], ["b"]]], [[["a"]]], r"refs\[1\] has 2 segments"),
    ([[["a"]]], [["a b"]], r"systems\[0\]\[0\] must be a list of tokens"),
])
def test_bad_input(refs, systems, match):
    with pytest.raises(AnalysisInputError, match=match):
        word_accuracy(refs, systems)
    assert issubclass(AnalysisInputError, ValueError)


def test_frequencies_must_be_a_mapping():
    with pytest.raises(AnalysisInputError, match="frequencies"):
        word_accuracy([[["a"]]], [[["a"]]], frequencies=[("a", 1)])  # type: ignore[arg-type]


def test_dtypes_and_shapes():
    res = word_accuracy([[["a"]]], [[["a"]], [["b"]]])
    assert res.ref_counts.dtype == np.int64
    assert res.ref_counts.shape == (9,)
    assert res.matches.shape == (2, 9)
    assert res.fmeasure.dtype == np.float64


REF = [["the", "cat", "sat"], ["a", "dog"], ["the", "the", "end"], [], ["cat", "and", "dog"]]
OUTS = [[["the", "cat"], ["a", "cat"], ["the", "end"], ["x"], ["cat", "dog"]],
        [["a", "cat", "sat"], ["dog"], ["the", "the", "the"], [], ["and"]]]


def test_segment_counts_sum_to_the_totals():
    labels, r, o, m = segment_counts([REF], OUTS, edges=(1, 2, 3))
    res = word_accuracy([REF], OUTS, edges=(1, 2, 3))
    assert labels == res.labels
    assert r.shape == (5, 4)
    assert o.shape == (2, 5, 4)
    assert (r.sum(0) == res.ref_counts).all()
    assert (o.sum(1) == res.out_counts).all()
    assert (m.sum(1) == res.matches).all()


@pytest.mark.parametrize("ratio", [1.0, 0.5])
def test_fmeasure_ci_equals_a_direct_bootstrap(ratio):
    low, high = fmeasure_ci([REF], OUTS, edges=(1, 2, 3), n_bootstrap=40, seed=3, sample_ratio=ratio)
    _, r, o, m = segment_counts([REF], OUTS, edges=(1, 2, 3))
    rng = np.random.default_rng(3)
    n = len(REF)
    size = int(np.ceil(n * ratio))
    fs = [[[] for _ in range(4)] for _ in range(2)]
    for _ in range(40):
        idx = rng.integers(0, n, size)
        for s in range(2):
            for b in range(4):
                mc = int(sum(m[s, i, b] for i in idx))
                rc = int(sum(r[i, b] for i in idx))
                oc = int(sum(o[s, i, b] for i in idx))
                fs[s][b].append(prf(mc, rc, oc)[2])
    for s in range(2):
        for b in range(4):
            x = sorted(fs[s][b])
            assert low[s, b] == x[int(40 * 0.025)]
            assert high[s, b] == x[int(40 * 0.975)]
    assert (low <= high).all()


def test_fmeasure_ci_bad_input():
    with pytest.raises(AnalysisInputError, match="n_bootstrap"):
        fmeasure_ci([REF], OUTS, n_bootstrap=1)
    with pytest.raises(AnalysisInputError, match="sample_ratio"):
        fmeasure_ci([REF], OUTS, sample_ratio=0)
    with pytest.raises(AnalysisInputError, match=r"systems\[1\] has 4 segments"):
        fmeasure_ci([REF], [OUTS[0], OUTS[1][:4]])
