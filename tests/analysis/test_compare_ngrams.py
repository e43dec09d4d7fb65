"""Salient n-gram analysis (mtscore.analysis.compare.ngrams) against direct computations."""
from __future__ import annotations

import pytest

from mtscore.analysis.compare.ngrams import (
    KINDS,
    against_reference,
    compare_systems,
    ngram_counts,
    salience,
    salient_ngrams,
    systems_ngram_counts,
)
from mtscore.analysis.errors import AnalysisInputError


def test_counts_by_hand():
    ref = [["a", "b", "a"]]
    out = [["a", "a", "a", "c"]]
    c = ngram_counts([ref], out, 1, 2)
    assert c.total == {("a",): 3, ("c",): 1, ("a", "a"): 2, ("a", "c"): 1}
    # ref unigrams a x2, b; bigrams (a, b), (b, a)
    assert c.match == {("a",): 2}
    assert c.over == {("a",): 1, ("c",): 1, ("a", "a"): 2, ("a", "c"): 1}
    assert c.under == {("b",): 1, ("a", "b"): 1, ("b", "a"): 1}
    for k in KINDS:
        assert c.kind(k) is getattr(c, k)
    with pytest.raises(AnalysisInputError, match="kind must be"):
        c.kind("both")


def test_counts_identity_total_is_match_plus_over():
    ref = [["x", "y", "z", "x"], [], ["p"]]
    out = [["x", "x", "y", "z"], ["q"], []]
    c = ngram_counts([ref], out)
    for g, t in c.total.items():
        assert t == c.match.get(g, 0) + c.over.get(g, 0)
    # every reference n-gram is matched or under-produced
    ref_total = ngram_counts([out], ref).total
    for g, t in ref_total.items():
        assert t == c.match.get(g, 0) + c.under.get(g, 0)
    assert max(len(g) for g in c.total) == 4


def test_several_references_sum():
    r1, r2 = [["a", "b"]], [["b", "b"]]
    out = [["b", "a"]]
    both = ngram_counts([r1, r2], out, 1, 1)
    assert both.total == {("a",): 2, ("b",): 2}
    assert both.match == {("a",): 1, ("b",): 2}
    assert both.over == {("a",): 1}
    assert both.under == {("b",): 1}


def test_salience_formula_and_order():
    a = {("x",): 3, ("y",): 1, ("w",): 1}
    b = {("y",): 1, ("z",): 2, ("w",): 1}
    sc = salience(a, b, alpha=1.0)
    assert sc == {("x",): 4 / 5, ("y",): 2 / 4, ("w",): 2 / 4, ("z",): 1 / 4}
    assert salience(a, b, alpha=0.5)[("x",)] == (3 + 0.5) / (3 + 0 + 2 * 0.5)
    high, low = salient_ngrams(a, b, top_k=3)
    assert [(r.ngram, r.score, r.count_a, r.count_b) for r in high] == [
        (("x",), 0.8, 3, 0), (("w",), 0.5, 1, 1), (("y",), 0.5, 1, 1)]  # tie: n-gram order
    assert [r.ngram for r in low] == [("z",), ("w",), ("y",)]
    high1, _ = salient_ngrams(a, b, top_k=1)
    assert len(high1) == 1


def test_compare_systems_and_reference():
    ref = [["a", "b", "c"]]
    s1 = [["a", "b", "d"]]
    s2 = [["a", "c", "c"]]
    c1, c2 = ngram_counts([ref], s1, 1, 1), ngram_counts([ref], s2, 1, 1)
    high, low = compare_systems(c1, c2, "match", top_k=10)
    assert high[0].ngram == ("b",)
    assert high[0].score == 2 / 3
    assert low[0].ngram == ("c",)
    assert low[0].score == 1 / 3
    over, under = against_reference(c2, top_k=5)
    assert over == [(("c",), 1)]
    assert under == [(("b",), 1)]
    over1, under1 = against_reference(c1)
    assert over1 == [(("d",), 1)]
    assert under1 == [(("c",), 1)]


def test_one_system_and_empty_segments():
    c = ngram_counts([[[], ["a"]]], [[], []])
    assert c.total == {}
    assert c.match == {}
    assert c.under == {("a",): 1}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"min_n": 0}, "min_n"), ({"min_n": 3, "max_n": 2}, "min_n"),
])
def test_bad_orders(kwargs, match):
    with pytest.raises(AnalysisInputError, match=match):
        ngram_counts([[["a"]]], [["a"]], **kwargs)


def test_bad_input():
    with pytest.raises(AnalysisInputError, match=r"systems\[0\] has 1 segments but the references have 2"):
        ngram_counts([[["a"], ["b"]]], [["a"]])
    with pytest.raises(AnalysisInputError, match=r"systems\[0\] is empty"):
        ngram_counts([[["a"]]], [])
    with pytest.raises(AnalysisInputError, match="alpha"):
        salience({}, {}, alpha=0)
    with pytest.raises(AnalysisInputError, match="top_k"):
        salient_ngrams({}, {}, top_k=0)
    with pytest.raises(AnalysisInputError, match="top_k"):
        against_reference(ngram_counts([[["a"]]], [["a"]]), top_k=0)


def _sequential(ref, out, n_max):
    """compare-mt's loop written out: output n-grams in order take reference copies."""
    def grams(w):
        return [tuple(w[i:i + n]) for n in range(1, n_max + 1) for i in range(len(w) - n + 1)]

    total, match, over, under = {}, {}, {}, {}
    for r, o in zip(ref, out):
        left = {}
        for g in grams(r):
            left[g] = left.get(g, 0) + 1
        for g in grams(o):
            total[g] = total.get(g, 0) + 1
            if left.get(g, 0) > 0:
                match[g] = match.get(g, 0) + 1
                left[g] -= 1
            else:
                over[g] = over.get(g, 0) + 1
        for g, c in left.items():
            if c:
                under[g] = under.get(g, 0) + c
    return total, match, over, under


def test_many_systems_equal_the_sequential_definition():
    import random

    rng = random.Random(7)
    words = ["a", "b", "c", "d"]
    ref = [[rng.choice(words) for _ in range(rng.randrange(0, 9))] for _ in range(40)]
    systems = [[[rng.choice(words) for _ in range(rng.randrange(0, 9))] for _ in range(40)] for _ in range(3)]
    many = systems_ngram_counts([ref], systems, 1, 3)
    for s, out in enumerate(systems):
        assert (many[s].total, many[s].match, many[s].over, many[s].under) == _sequential(ref, out, 3)
        assert ngram_counts([ref], out, 1, 3) == many[s]
