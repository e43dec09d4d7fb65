"""API edges (P13 "Trust II", part 6): each misuse raises a clear error naming the argument, or
works correctly; never a silent wrong number."""
from __future__ import annotations

import math

import numpy as np
import pytest

import mtscore
from mtscore import decoder
from mtscore.bindings.decoder.rewards import reward_fn
from mtscore.engine.metrics.registry import make_metric
from mtscore.engine.significance import compare_segment_scores, paired_ttest


# ---- reward_fn: a str reference column --------------------------------------------------------
def test_reward_str_reference_is_rejected_naming_the_column():
    fn = reward_fn("chrf")
    with pytest.raises(TypeError, match=r"reference is a single str.*one item per completion"):
        fn(completions=["x", "y"], reference="xy")
    fn = reward_fn("bleu", reference_column="target")
    with pytest.raises(TypeError, match="target is a single str"):
        fn(completions=["x y"], target="x y")
    with pytest.raises(TypeError, match="target is a dict"):
        fn(completions=["x y"], target={"x y": 1})


def test_reward_str_completions_are_rejected():
    with pytest.raises(TypeError, match="completions is a single str"):
        reward_fn("chrf")(completions="xy", reference=["x", "y"])


def test_reward_broadcast_reference_list_works():
    fn = reward_fn("chrf", scale=1.0)
    comps = ["Hello world", "Hi world"]
    got = fn(completions=comps, reference=["Hello world"] * 2)
    want = [mtscore.CHRF().sentence_score(c, ["Hello world"]).score for c in comps]
    assert got == want
    assert got[1] < 100.0


# ---- scores_from_stats: shape and dtype checked once ---------------------------------------
METRICS = {"bleu": 10, "chrf": 18, "chrf++": 24, "ter": 2, "wer": 2, "per": 2, "cer": 2, "eed": 2}


@pytest.mark.parametrize(("name", "k"), sorted(METRICS.items()))
def test_scores_from_stats_rejects_a_wrong_column_count(name, k):
    m = make_metric(name)
    assert m.stats_columns() == k
    for bad in (k - 1, k + 1, 5 if k != 5 else 4):
        stats = np.ones((3, bad), dtype=np.int64)
        with pytest.raises(ValueError, match=rf"stats has {bad} columns.*has {k} .*\(N, {k}\)"):
            m.scores_from_stats(stats)
        with pytest.raises(ValueError, match="stats has"):
            m.sentence_scores_from_stats(stats)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_scores_from_stats_rejects_a_wrong_shape_or_dtype(name):
    m = make_metric(name)
    k = METRICS[name]
    with pytest.raises(ValueError, match=r"stats must be a 2-D"):
        m.scores_from_stats(np.ones(k, dtype=np.int64))
    with pytest.raises(ValueError, match=r"stats must be a 2-D"):
        m.scores_from_stats(np.ones((2, 3, k), dtype=np.int64))
    with pytest.raises(TypeError, match=r"stats must be .* numbers, got dtype"):
        m.scores_from_stats(np.array([["a"] * k]))
    with pytest.raises(TypeError, match=r"stats must be"):
        m.scores_from_stats(np.ones((1, k), dtype=complex))
    assert m.scores_from_stats(np.zeros((0, k), dtype=np.int64)).shape == (0,)


def test_the_bleu_5_column_report_case():
    with pytest.raises(ValueError, match=r"BLEU\.scores_from_stats: stats has 5 columns.*10"):
        mtscore.BLEU().scores_from_stats(np.ones((4, 5), dtype=np.int64))
    assert mtscore.BLEU(max_ngram_order=2).stats_columns() == 6
    assert mtscore.CHRF(char_order=3, word_order=1).stats_columns() == 12


@pytest.mark.parametrize("name", ["bleu", "chrf"])
def test_count_statistics_must_be_whole_numbers(name):
    m = make_metric(name)
    k = METRICS[name]
    good = np.full((2, k), 3, dtype=np.int64)
    assert m.scores_from_stats(good.astype(np.float64)).tolist() == m.scores_from_stats(good).tolist()
    for v in (1.5, math.nan, math.inf):
        st = good.astype(np.float64)
        st[1, 2] = v
        with pytest.raises(ValueError, match=r"stats\[1, 2\]"):
            m.scores_from_stats(st)


def test_valid_stats_still_score_as_before():
    hyps, refs = ["a b c", "d e"], [["a b c", "d f"]]
    for name in METRICS:
        m = make_metric(name)
        st = m.corpus_stats(hyps, refs)
        want = [m.compute_score_from_stats(list(row)).score for row in st]
        assert m.scores_from_stats(st).tolist() == want
        assert m.scores_from_stats(st.tolist()).tolist() == want  # nested lists are fine
    ter = mtscore.TER()
    st = ter.corpus_stats(hyps, refs).astype(np.float32)  # bootstrap rows: float32 arithmetic
    assert ter.scores_from_stats(st).tolist() == [ter.compute_score_from_stats(r).score for r in st]


# ---- compare_segment_scores: NaN never flows into a p-value --------------------------------
@pytest.mark.parametrize("test", ["ttest", "bs"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_compare_segment_scores_names_the_nan_segment(test, bad):
    scores = {"A": [0.5, 0.6, 0.7, 0.4], "B": [0.4, 0.5, bad, 0.3]}
    with pytest.raises(ValueError, match=r"system 'B' segment 2 .*not|system 'B' segment 2"):
        compare_segment_scores(scores, test=test, n=50, seed=1)
    ok = compare_segment_scores({"A": [0.5, 0.6, 0.7, 0.4], "B": [0.4, 0.5, 0.6, 0.3]}, test=test,
                                n=50, seed=1)
    assert np.isfinite(ok.results["score"][1].p_value)


def test_compare_segment_scores_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"scores\['A'\] must be 1-d"):
        compare_segment_scores({"A": [[0.1, 0.2]], "B": [[0.1, 0.3]]})
    with pytest.raises(ValueError, match="no segments"):
        compare_segment_scores({"A": [], "B": []}, test="bs", n=10)
    with pytest.raises(TypeError, match=r"scores\['A'\]"):
        compare_segment_scores({"A": ["x", "y"], "B": [0.1, 0.2]})


def test_paired_ttest_rejects_nan():
    with pytest.raises(ValueError, match=r"b\[1\] is nan"):
        paired_ttest(np.array([1.0, 2.0, 3.0]), np.array([1.0, math.nan, 2.0]))


# ---- mbr: tensors and weights --------------------------------------------------------------
SAMPLES = ["the cat sat", "a cat sat", "the cat sits", "dogs run"]


def _uniform_ref():
    return decoder.mbr(SAMPLES, weights=[1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize(("w", "match"), [
    (np.ones((1, 4)), r"weights must be 1-D, one value per sample \(4\), got shape \(1, 4\)"),
    (np.ones((2, 2)), r"weights must be 1-D.*\(2, 2\)"),
    (3.0, r"weights must be 1-D.*shape \(\)"),
    ([1.0, 2.0], "weights has 2 values for 4 samples"),
    ([1.0, math.inf, 1.0, 1.0], r"weights\[1\] is inf"),
    ([1.0, -1.0, 1.0, 1.0], r"weights\[1\] = -1.0 is negative"),
    ([0.0, 0.0, 0.0, 0.0], "weights sum to 0"),
])
def test_mbr_weights_are_validated(w, match):
    with pytest.raises(ValueError, match=match):
        decoder.mbr(SAMPLES, weights=w)


def test_mbr_weights_of_1e308_are_normalised_safely():
    res = decoder.mbr(SAMPLES, weights=[1e308, 1e308, 1e308, 1e308])
    assert np.all(np.isfinite(res.probabilities))
    assert res.probabilities.tolist() == [0.25] * 4
    plain = decoder.mbr(SAMPLES)
    assert res.index == plain.index
    np.testing.assert_allclose(res.expected_utility, plain.expected_utility, rtol=1e-15)
    res = decoder.mbr(SAMPLES, weights=[1.7e308, 1.7e308, 0.0, 1.7e308])
    assert res.probabilities.tolist() == [1 / 3, 1 / 3, 0.0, 1 / 3]
    assert math.isclose(math.fsum(res.probabilities.tolist()), 1.0)


def test_mbr_unscaled_weights_are_bit_identical_to_before():
    w = np.array([1.0, 2.0, 3.0, 4.0])
    assert _uniform_ref().probabilities.tolist() == (w / math.fsum(w.tolist())).tolist()


def test_mbr_accepts_torch_tensors_of_any_dtype_and_grad_state():
    torch = pytest.importorskip("torch")
    w = [1.0, 2.0, 3.0, 4.0]
    want = _uniform_ref()
    for t in (torch.tensor(w, dtype=torch.bfloat16), torch.tensor(w, dtype=torch.float16),
              torch.tensor(w, requires_grad=True), torch.tensor(w, dtype=torch.float64),
              torch.tensor([1, 2, 3, 4]),
              torch.tensor(w, dtype=torch.bfloat16, requires_grad=True)):
        res = decoder.mbr(SAMPLES, weights=t)
        assert res.probabilities.dtype == np.float64
        assert res.probabilities.tolist() == want.probabilities.tolist(), t.dtype
        assert res.index == want.index
    lp = torch.log(torch.tensor(w, requires_grad=True))
    res = decoder.mbr(SAMPLES, log_probs=lp.to(torch.bfloat16))
    assert res.index == want.index
    assert np.isfinite(res.probabilities).all()
    with pytest.raises(ValueError, match="weights must be 1-D"):
        decoder.mbr(SAMPLES, weights=torch.ones(2, 2, dtype=torch.bfloat16))


def test_aggregate_utilities_take_tensors_and_name_weights():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.bfloat16, requires_grad=True)
    a = decoder.aggregate_chrf(SAMPLES, weights=t)
    b = decoder.aggregate_chrf(SAMPLES, weights=[1.0, 2.0, 3.0, 4.0])
    assert a.tolist() == b.tolist()
    with pytest.raises(ValueError, match=r"aggregate_chrf: weights must be 1-D"):
        decoder.aggregate_chrf(SAMPLES, weights=np.ones((4, 1)))
