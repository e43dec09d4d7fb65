"""``mtscore.decoder`` against sacrebleu 2.6.0: every pairwise cell, batch sentence score and
n-best oracle score equals sacrebleu's ``sentence_score(...).score`` bit for bit, on newstest2021
MBR-like groups (the system outputs of a segment) and on hypothesis-generated adversarial
Unicode, for BLEU (tokenizers, smoothing, effective order), chrF, chrF++ and TER (options). Plus
MBR selection, the Moses n-best reader, and the argument errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtscore import decoder

sacrebleu = pytest.importorskip("sacrebleu")

from tests.bindings.decoder_cases import (  # noqa: E402
    CONFIGS,
    IDS,
    UNICODE,
    assert_bits,
    need_wmt,
    sacre_matrix,
)


# ---- pairwise --------------------------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_pairwise_equals_sacrebleu_on_wmt21_groups(config):
    name, opts, make = config
    groups = need_wmt()
    sb = make()
    stacked = decoder.pairwise(None, metric=name, groups=[g for g in groups], **opts)
    for g, mat in zip(groups, stacked):
        ref = sacre_matrix(sb, g, g)
        assert_bits(decoder.pairwise(g, metric=name, **opts), ref)
        assert_bits(mat, ref)
        assert_bits(decoder.pairwise(g, metric=name, workers=2, **opts), ref)
    # rows against other columns (candidates vs references), and duplicates
    rows, cols = groups[0][:5] + groups[0][:2], groups[1][:4] + groups[0][:1]
    assert_bits(decoder.pairwise(rows, cols, metric=name, **opts), sacre_matrix(sb, rows, cols))


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_pairwise_equals_sacrebleu_on_adversarial_unicode(config):
    name, opts, make = config
    sb = make()

    @settings(max_examples=25 if name != "ter" else 12, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(rows=st.lists(UNICODE, min_size=1, max_size=6), cols=st.lists(UNICODE, max_size=4))
    def run(rows, cols):
        assert_bits(decoder.pairwise(rows, metric=name, **opts), sacre_matrix(sb, rows, rows))
        assert_bits(decoder.pairwise(rows, cols, metric=name, **opts), sacre_matrix(sb, rows, cols))

    run()


def test_pairwise_groups_of_different_sizes_give_a_list():
    out = decoder.pairwise(None, groups=[["a b", "a c"], ["x"], (["p q"], ["p", "q", "r"])])
    assert isinstance(out, list)
    assert [m.shape for m in out] == [(2, 2), (1, 1), (1, 3)]
    same = decoder.pairwise(None, groups=[["a b", "a c"], ["x", "y"]], workers=2)
    assert isinstance(same, np.ndarray)
    assert same.shape == (2, 2, 2)
    assert same.dtype == np.float64


def test_pairwise_metric_object_and_generic_fallback():
    from mtscore.engine.metrics.base import Metric
    from mtscore.engine.metrics.chrf import CHRF

    m = CHRF(word_order=2)
    g = ["the cat sat", "a cat sat down", "the cat", ""]
    fast = decoder.pairwise(g, metric=m)
    generic = Metric.pairwise_scores(m, g)  # the contract's default: the batch path
    assert_bits(fast, generic)
    assert_bits(Metric.pairwise_scores(m, g, g[:2]), decoder.pairwise(g, g[:2], metric=m))
    with pytest.raises(ValueError, match="options"):
        decoder.pairwise(g, metric=m, beta=3)


def test_pairwise_empty_and_errors():
    assert decoder.pairwise([], metric="bleu").shape == (0, 0)
    assert decoder.pairwise(["a"], [], metric="ter").shape == (1, 0)
    with pytest.raises(ValueError, match="groups"):
        decoder.pairwise(["a"], groups=[["a"]])
    with pytest.raises(TypeError, match=r"groups\[1\]\[2\]"):
        decoder.pairwise(None, groups=[["a"], ["b", "c", None]])
    with pytest.raises(TypeError, match=r"candidates\[0\]"):
        decoder.pairwise([3])
    with pytest.raises(ValueError, match="unknown metric"):
        decoder.pairwise(["a"], metric="no-such-metric")
    with pytest.raises(ValueError, match="workers"):
        decoder.pairwise(["a"], workers=-1)


# ---- sentence scores -------------------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_sentence_scores_equal_sacrebleu_ragged_refs(config):
    name, opts, make = config
    groups = need_wmt()
    sb = make()
    hyps = [h for g in groups for h in g[1:]]
    # K = 1..3 references per hypothesis (ragged): the group's reference plus other outputs
    refs = [[g[0], *g[1:1 + j % 3]] for g in groups for j, _ in enumerate(g[1:])]
    got = decoder.sentence_scores(hyps, refs, metric=name, **opts)
    want = np.array([sb.sentence_score(h, r).score for h, r in zip(hyps, refs)])
    assert_bits(got, want)
    assert_bits(decoder.sentence_scores(hyps, refs, metric=name, workers=2, **opts), want)
    # sacrebleu-style streams (None: no such reference)
    k = max(len(r) for r in refs)
    streams = [[r[j] if j < len(r) else None for r in refs] for j in range(k)]
    assert_bits(decoder.sentence_scores(hyps, streams, metric=name, layout="streams", **opts), want)


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(UNICODE, st.lists(UNICODE, min_size=1, max_size=3)), min_size=1,
                     max_size=5), which=st.sampled_from([0, 1, 5, 11]))
def test_sentence_scores_equal_sacrebleu_on_adversarial_unicode(rows, which):
    name, opts, make = CONFIGS[which]
    sb = make()
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    assert_bits(decoder.sentence_scores(hyps, refs, metric=name, layout="per_hyp", **opts),
                [sb.sentence_score(h, r).score for h, r in rows])


def test_sentence_scores_errors():
    with pytest.raises(ValueError, match=r"refs\[1\] is empty"):
        decoder.sentence_scores(["a", "b"], [["a"], []])
    with pytest.raises(ValueError, match="ambiguous"):
        decoder.sentence_scores(["a", "b"], [["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match=r"refs\[1\] has 1 references for 2"):
        decoder.sentence_scores(["a", "b"], [["a", "b"], ["c"]], layout="streams")
    with pytest.raises(ValueError, match="hypothesis 1 has no reference"):
        decoder.sentence_scores(["a", "b"], [["a", None]], layout="streams")
    with pytest.raises(ValueError, match="3 entries for 2"):
        decoder.sentence_scores(["a", "b"], ["a", "b", "c"], layout="per_hyp")
    with pytest.raises(TypeError, match=r"refs\[0\]\[1\]"):
        decoder.sentence_scores(["a"], [["a", 5]])
    assert decoder.sentence_scores([], []).shape == (0,)
    # one string per hypothesis is one reference each
    assert_bits(decoder.sentence_scores(["a b", "c"], ["a b", "d"], metric="chrf"),
                [sacrebleu.metrics.CHRF().sentence_score("a b", ["a b"]).score,
                 sacrebleu.metrics.CHRF().sentence_score("c", ["d"]).score])


# ---- MBR -------------------------------------------------------------------------------------
def test_mbr_uniform_and_weighted():
    g = need_wmt()[0]
    sb = sacrebleu.metrics.CHRF()
    mat = sacre_matrix(sb, g, g)
    res = decoder.mbr(g)
    assert_bits(res.matrix, mat)
    p = np.full(len(g), 1.0 / len(g))
    assert_bits(res.expected_utility, mat @ p)
    assert res.index == int(np.argmax(mat @ p))
    assert res.sample == g[res.index]
    w = np.arange(1, len(g) + 1, dtype=np.float64)
    res_w = decoder.mbr(g, weights=w)
    assert_bits(res_w.expected_utility, mat @ (w / w.sum()))
    lp = np.log(w)
    res_l = decoder.mbr(g, log_probs=lp)
    assert np.allclose(res_l.probabilities, w / w.sum())
    assert res_l.index == res_w.index
    ter = decoder.mbr(g, metric="ter")  # an error rate: the lowest expected TER wins
    assert ter.index == int(np.argmin(ter.expected_utility))


@pytest.mark.parametrize(("kw", "msg"), [
    ({"weights": [1.0, -1.0, 1.0]}, r"weights\[1\] = -1.0 is negative"),
    ({"weights": [1.0, float("nan"), 1.0]}, r"weights\[1\] is nan"),
    ({"weights": [1.0, 2.0]}, "weights has 2 values for 3 samples"),
    ({"weights": [0.0, 0.0, 0.0]}, "sum to 0"),
    ({"log_probs": [0.0, float("inf"), 1.0]}, r"log_probs\[1\] is inf"),
    ({"log_probs": [float("-inf")] * 3}, "-inf"),
    ({"weights": [1, 1, 1], "log_probs": [0, 0, 0]}, "not both"),
])
def test_mbr_rejects_bad_weights(kw, msg):
    with pytest.raises(ValueError, match=msg):
        decoder.mbr(["a", "b", "c"], **kw)


def test_mbr_rejects_empty():
    with pytest.raises(ValueError, match="samples is empty"):
        decoder.mbr([])


# ---- n-best ----------------------------------------------------------------------------------
def test_nbest_oracle_equals_sacrebleu():
    groups = need_wmt()
    nbest = [g[1:] for g in groups]
    refs = [g[0] for g in groups]
    sb = sacrebleu.metrics.BLEU(effective_order=True)
    res = decoder.nbest_oracle(nbest, refs, metric="bleu", effective_order=True)
    for s, cands in enumerate(nbest):
        want = np.array([sb.sentence_score(h, [refs[s]]).score for h in cands])
        assert_bits(res.scores[s], want)
        assert res.index[s] == int(np.argmax(want))
        assert res.score[s] == want.max()
        assert list(res.ranking[s]) == list(np.argsort(-want, kind="stable"))
    ter = decoder.nbest_oracle(nbest, [[r] for r in refs], metric="ter")
    assert all(ter.score[s] == ter.scores[s].min() for s in range(len(nbest)))


@pytest.mark.parametrize("metric", ["bleu", "ter"])
def test_nbest_oracle_equal_lengths_rank_like_ragged_lists(metric):
    # lists of one length are ranked in one 2-D argsort: same rankings (ties in list order),
    # oracles and scores as the per-list path that ragged lists take
    rng = np.random.default_rng(4)
    words = ["a", "b", "c", "d", "e."]
    lists = [[" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(7)] for _ in range(30)]
    lists[3] = ["a b", "a b", "c", "a b", "c", "a b", "d"]   # ties
    refs = [" ".join(rng.choice(words, size=4)) for _ in range(30)]
    same = decoder.nbest_oracle(lists, refs, metric=metric)
    ragged = decoder.nbest_oracle([*lists, ["a"]], [*refs, "a"], metric=metric)
    for s in range(30):
        assert_bits(same.scores[s], ragged.scores[s])
        assert same.ranking[s].dtype == np.int64
        assert list(same.ranking[s]) == list(ragged.ranking[s])
    assert same.index.dtype == np.int64
    assert list(same.index) == list(ragged.index[:30])
    assert same.score.dtype == np.float64
    assert list(same.score) == list(ragged.score[:30])


def test_nbest_oracle_errors():
    with pytest.raises(ValueError, match=r"nbest\[1\] is empty"):
        decoder.nbest_oracle([["a"], []], ["a", "b"])
    with pytest.raises(ValueError, match="1 entries for 2"):
        decoder.nbest_oracle([["a"], ["b"]], ["a"])


def test_read_moses_nbest(tmp_path):
    p = tmp_path / "nbest.txt"
    p.write_text("0 ||| the cat ||| F0= 1 2 ||| -1.5\n0 ||| a cat ||| F0= 1 3 ||| -2\n"
                 "2 ||| x ||| F= 0 ||| 0.25\n", encoding="utf-8")
    lists = decoder.read_moses_nbest(p)
    assert [[e.hypothesis for e in x] for x in lists] == [["the cat", "a cat"], [], ["x"]]
    assert lists[0][1].score == -2.0
    assert lists[0][0].features == "F0= 1 2"
    assert lists[2][0].line == 3


@pytest.mark.parametrize(("text", "msg"), [
    ("0 ||| a ||| F= 1\n", r"nbest.txt:1: expected 'id \|\|\| hypothesis"),
    ("0 ||| a ||| F= 1 ||| 1\nx ||| a ||| F= 1 ||| 1\n", r"nbest.txt:2: sentence id 'x'"),
    ("0 ||| a ||| F= 1 ||| one\n", r"nbest.txt:1: total score 'one'"),
    ("1 ||| a ||| F= 1 ||| 1\n0 ||| a ||| F= 1 ||| 1\n", r"nbest.txt:2: sentence id 0 after id 1"),
])
def test_read_moses_nbest_errors_name_file_and_line(tmp_path, text, msg):
    p = tmp_path / "nbest.txt"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=msg):
        decoder.read_moses_nbest(p)


def test_read_moses_nbest_invalid_utf8(tmp_path):
    p = tmp_path / "nbest.txt"
    p.write_bytes(b"0 ||| a ||| F= 1 ||| 1\n0 ||| \xff ||| F= 1 ||| 1\n")
    with pytest.raises(ValueError, match=r"nbest.txt:2: invalid utf-8"):
        decoder.read_moses_nbest(p)
