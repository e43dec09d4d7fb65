"""Segments with no reference at all (every reference stream None / null / NaN there).

sacrebleu 2.6.0 cannot score them (BLEU counts a reference length of -1 per such segment or
fails, chrF and TER fail), so mtscore raises a clear error by default and, with
``missing_refs="skip"``, leaves them out of every metric the same way: the corpus score, the
bootstrap CI and paired tests equal those of the corpus without these segments (checked
against sacrebleu on that corpus), sentence scores are NaN and one warning gives the count.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import sacrebleu

import mtscore
from mtscore.engine.metrics.base import MissingReferenceError, MissingReferenceWarning

METRICS = {
    "bleu": (mtscore.BLEU, sacrebleu.BLEU),
    "chrf": (mtscore.CHRF, sacrebleu.CHRF),
    "ter": (mtscore.TER, sacrebleu.TER),
}

HYPS = ["a b c d e", "", "the cat sat on the mat", "x y z", "it is", "a dog barked"]
REFS = [["a b c d e f g h i j", None, "the cat is on the mat", None, "it is here", "a dog barks"],
        ["a b c", None, None, None, "it was", "the dog barked"]]
KEEP = [0, 2, 4, 5]  # segments with at least one reference


def _kept_refs():
    # sacrebleu wants strings: drop the segments without references, '' can't stand in for None
    # in the multi-reference layout, so compare on the first stream plus ragged second stream
    return [[REFS[0][i] for i in KEEP], [REFS[1][i] for i in KEEP]]


def test_issue_example_bleu_is_an_error_not_a_wrong_number():
    # P6 finding 1: printed BLEU = 100.00 with ref_len = -2 before the fix
    hyps = ["a b c d e"] + [""] * 12
    refs = [["a b c d e f g h i j"] + [None] * 12]
    with pytest.raises(MissingReferenceError, match=r"segment 1 .*no reference.*12 segment"):
        mtscore.BLEU().corpus_score(hyps, refs)
    with pytest.raises(MissingReferenceError, match="segment 0"):
        mtscore.BLEU().sentence_score("a b", [None])


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_raises_by_default(name):
    ours, _ = METRICS[name]
    with pytest.raises(MissingReferenceError, match="missing_refs='skip'"):
        ours().corpus_score(HYPS, REFS)
    with pytest.raises(ValueError, match="no reference"):  # MissingReferenceError is a ValueError
        ours().corpus_stats(HYPS, REFS)
    with pytest.raises(ValueError, match="no reference"):
        mtscore.score(HYPS, REFS, metrics=[name])


@pytest.mark.parametrize("nulls", ["none", "nan", "pd.NA", "arrow"])
def test_table_nulls_are_missing_references(nulls):
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    missing = {"none": None, "nan": float("nan"), "pd.NA": pd.NA, "arrow": None}[nulls]
    ref = ["the cat", missing, "a dog"]
    hyp = ["the cat", "x", "a dog"]
    table = (pa.table({"hyp": hyp, "ref_0": pa.array([r if isinstance(r, str) else None for r in ref])})
             if nulls == "arrow" else pd.DataFrame({"hyp": hyp, "ref_0": pd.Series(ref, dtype=object)}))
    with pytest.raises(ValueError, match=r"segment 1 .*no reference"):
        mtscore.score_table(table, metrics=["bleu"])
    with pytest.warns(MissingReferenceWarning, match="1 of 3"):
        r = mtscore.score_table(table, metrics=["bleu", "chrf", "ter"], missing_refs="skip")
    for m, (_, theirs) in METRICS.items():
        expected = theirs().corpus_score(["the cat", "a dog"], [["the cat", "a dog"]])
        assert r.corpus[m].score == expected.score


@pytest.mark.parametrize("name", sorted(METRICS))
def test_skip_equals_sacrebleu_on_the_corpus_without_them(name):
    ours, theirs = METRICS[name]
    kept_hyps = [HYPS[i] for i in KEEP]
    # the second stream is ragged: sacrebleu takes None for a missing reference in a segment
    # that has another one (its TER/chrF skip None references of such segments)
    expected = theirs().corpus_score(kept_hyps, [[REFS[0][i] for i in KEEP],
                                                 [REFS[1][i] for i in KEEP]])
    with pytest.warns(MissingReferenceWarning, match=r"2 of 6 segment\(s\)"):
        got = ours(missing_refs="skip").corpus_score(HYPS, REFS)
    assert got.score == expected.score
    with pytest.warns(MissingReferenceWarning):
        stats = ours(missing_refs="skip").corpus_stats(HYPS, REFS)
    assert not stats[[1, 3]].any()
    kept = ours(missing_refs="skip").corpus_stats(kept_hyps, _kept_refs())
    np.testing.assert_array_equal(stats[KEEP], kept)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_skip_in_the_batch_api_nan_sentence_scores_one_warning(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = mtscore.score({"A": HYPS, "B": HYPS[::-1]}, REFS, metrics=[name], missing_refs="skip")
    assert sum(issubclass(w.category, MissingReferenceWarning) for w in caught) == 1
    seg = r.segments.to_pandas()
    for system in ("A", "B"):
        scores = seg[seg.system == system][name].to_numpy()
        assert np.isnan(scores[[1, 3]]).all()
        assert not np.isnan(scores[KEEP]).any()
    kept = mtscore.score([HYPS[i] for i in KEEP], _kept_refs(), metrics=[name])
    assert r.corpus["A"][name].score == kept.corpus[name].score
    np.testing.assert_array_equal(seg[seg.system == "A"][name].to_numpy()[KEEP],
                                  kept.segments.column(name).to_numpy())
    assert r.signatures[name] == kept.signatures[name]  # nrefs counts referenced segments only


@pytest.mark.parametrize("name", sorted(METRICS))
def test_skip_resampling_draws_only_scored_segments(name):
    ours, _ = METRICS[name]
    kept_hyps = [HYPS[i] for i in KEEP]
    with pytest.warns(MissingReferenceWarning):
        ci = ours(missing_refs="skip").corpus_score(HYPS, REFS, n_bootstrap=200)
    ci_kept = ours().corpus_score(kept_hyps, _kept_refs(), n_bootstrap=200)
    assert (ci.score, ci._mean, ci._ci) == (ci_kept.score, ci_kept._mean, ci_kept._ci)
    other = HYPS[::-1]
    with pytest.warns(MissingReferenceWarning):
        res = mtscore.compare({"A": HYPS, "B": other}, REFS, metrics=[ours(missing_refs="skip")], n=200)
    res_kept = mtscore.compare({"A": kept_hyps, "B": [other[i] for i in KEEP]}, _kept_refs(),
                               metrics=[ours()], n=200)
    (m,) = res.metrics
    assert [(t.score, t.p_value, t.mean, t.ci) for t in res.results[m]] == \
        [(t.score, t.p_value, t.mean, t.ci) for t in res_kept.results[m]]


def test_unknown_policy_names_the_argument():
    with pytest.raises(ValueError, match="missing_refs must be one of error, skip"):
        mtscore.CHRF(missing_refs="drop")
    with pytest.raises(ValueError, match="missing_refs"):
        mtscore.score(["a"], [["a"]], metrics=["bleu"], missing_refs="ignore")
