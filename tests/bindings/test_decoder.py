"""``mtscore.decoder`` against sacrebleu 2.6.0: every pairwise cell, batch sentence score and
n-best oracle score equals sacrebleu's ``sentence_score(...).score`` bit for bit, on newstest2021
MBR-like groups (the system outputs of a segment) and on hypothesis-generated adversarial
Unicode, for BLEU (tokenizers, smoothing, effective order), chrF, chrF++ and TER (options). Plus
MBR selection, the Moses n-best reader, and the argument errors."""
from __future__ import annotations

import functools
import json
import logging

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtscore import decoder
from tests.cli_run import run_cli as _cli

sacrebleu = pytest.importorskip("sacrebleu")
logging.getLogger("sacrebleu").setLevel(logging.ERROR)
logging.getLogger("mtscore").setLevel(logging.ERROR)

#: (mtscore metric name, options, sacrebleu constructor)
CONFIGS = [
    ("chrf", {}, lambda: sacrebleu.metrics.CHRF()),
    ("chrf++", {}, lambda: sacrebleu.metrics.CHRF(word_order=2)),
    ("chrf", {"char_order": 4, "word_order": 1, "beta": 1, "lowercase": True, "whitespace": True},
     lambda: sacrebleu.metrics.CHRF(char_order=4, word_order=1, beta=1, lowercase=True, whitespace=True)),
    ("chrf", {"eps_smoothing": True, "beta": 3},
     lambda: sacrebleu.metrics.CHRF(eps_smoothing=True, beta=3)),
    ("chrf", {"char_order": 0, "word_order": 2},
     lambda: sacrebleu.metrics.CHRF(char_order=0, word_order=2)),
    # by name, sentence BLEU uses effective order unless told otherwise (P14)
    ("bleu", {}, lambda: sacrebleu.metrics.BLEU(effective_order=True)),
    ("bleu", {"effective_order": False}, lambda: sacrebleu.metrics.BLEU()),
    ("bleu", {"effective_order": True}, lambda: sacrebleu.metrics.BLEU(effective_order=True)),
    ("bleu", {"smooth_method": "floor", "smooth_value": 0.01, "tokenize": "intl", "effective_order": False},
     lambda: sacrebleu.metrics.BLEU(smooth_method="floor", smooth_value=0.01, tokenize="intl")),
    ("bleu", {"smooth_method": "add-k", "tokenize": "char", "lowercase": True},
     lambda: sacrebleu.metrics.BLEU(smooth_method="add-k", tokenize="char", lowercase=True,
                                    effective_order=True)),
    ("bleu", {"smooth_method": "none", "tokenize": "zh", "max_ngram_order": 2, "effective_order": True},
     lambda: sacrebleu.metrics.BLEU(smooth_method="none", tokenize="zh", max_ngram_order=2,
                                    effective_order=True)),
    ("bleu", {"tokenize": "none"}, lambda: sacrebleu.metrics.BLEU(tokenize="none", effective_order=True)),
    ("ter", {}, lambda: sacrebleu.metrics.TER()),
    ("ter", {"normalized": True, "case_sensitive": True},
     lambda: sacrebleu.metrics.TER(normalized=True, case_sensitive=True)),
    ("ter", {"no_punct": True, "asian_support": True, "normalized": True},
     lambda: sacrebleu.metrics.TER(no_punct=True, asian_support=True, normalized=True)),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in o.items()) or 'default'}" for n, o, _ in CONFIGS]


def sacre_matrix(sb, rows, cols):
    return np.array([[sb.sentence_score(h, [r]).score for r in cols] for h in rows],
                    dtype=np.float64).reshape(len(rows), len(cols))


def assert_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    bad = np.argwhere(a.view(np.int64) != b.view(np.int64))
    assert len(bad) == 0, (len(bad), [(tuple(i), a[tuple(i)], b[tuple(i)]) for i in bad[:3]])


# ---- data ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def wmt_groups(pair="newstest2021.en-de", n_groups=3, size=12):
    """MBR-like groups: per segment, the distinct system outputs (plus the reference)."""
    from wmt21 import load_pair, pairs

    if pair not in pairs():
        return None
    refs, systems, _ = load_pair(pair)
    outs = list(systems.values())
    groups = []
    for i in range(0, len(refs[0]), 97):
        g = list(dict.fromkeys([refs[0][i]] + [s[i] for s in outs]))[:size]
        groups.append(g)
        if len(groups) == n_groups:
            break
    return groups


def need_wmt():
    g = wmt_groups()
    if g is None:
        from conftest import data_dir

        pytest.skip(f"newstest2021 en-de not found under {data_dir()} (set MTSCORE_DATA)")
    return g


_CHARS = list("abcAB 09.,-&;<>'\"()$€«»…—’“”?:!/") + list("中文日本語한국어りのをテスト") + [
    "😀", "𝔘", "\u0301", "\x00", "Σ", "İ", "ẞ", "&quot;", "&amp;", "'s ", " .", "1,000", "\t", "\u3000"]
UNICODE = st.one_of(st.lists(st.sampled_from(_CHARS), max_size=25).map("".join),
                    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20))


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


# ---- CLI -------------------------------------------------------------------------------------
def test_cli_mbr_jsonl_and_text_groups(tmp_path, capsys):
    g = ["the cat sat on the mat", "a cat sat on a mat", "the dog sat", "the cat sat"]
    (tmp_path / "s.jsonl").write_text(json.dumps(g) + "\n" + json.dumps(
        {"samples": g[:2], "log_probs": [-3.0, -0.1]}) + "\n", encoding="utf-8")
    rc, out, _ = _cli(["mbr", str(tmp_path / "s.jsonl"), "-m", "chrf"], capsys)
    assert rc == 0
    assert out.splitlines() == [decoder.mbr(g).sample, decoder.mbr(g[:2], log_probs=[-3.0, -0.1]).sample]
    (tmp_path / "s.txt").write_text("\n".join(g[:2]) + "\n\n" + "\n".join(g[2:]) + "\n",
                                    encoding="utf-8")
    rc, out, _ = _cli(["mbr", str(tmp_path / "s.txt"), "-m", "bleu", "-O", "effective_order=true",
                       "-f", "jsonl", "-o", str(tmp_path / "o.jsonl")], capsys)
    rows = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()]
    want = decoder.mbr(g[2:], metric="bleu", effective_order=True)
    assert rc == 0
    assert rows[1]["index"] == want.index
    assert rows[1]["expected_utility"] == want.expected_utility.tolist()


def test_cli_nbest_oracle_and_rerank(tmp_path, capsys):
    (tmp_path / "nb").write_text("0 ||| the cat ||| F= 1 ||| -1\n0 ||| the cat sat ||| F= 2 ||| -2\n"
                                 "1 ||| x y ||| F= 0 ||| 0.5\n", encoding="utf-8")
    (tmp_path / "ref").write_text("the cat sat\nx y z\n", encoding="utf-8")
    rc, out, _ = _cli(["nbest", str(tmp_path / "nb"), "-r", str(tmp_path / "ref"), "-O",
                       "effective_order=true"], capsys)
    assert rc == 0
    assert out.splitlines() == ["the cat sat", "x y"]
    rc, out, _ = _cli(["nbest", str(tmp_path / "nb"), "-r", str(tmp_path / "ref"), "--mode", "rerank",
                       "-m", "chrf"], capsys)
    first = out.splitlines()[0].split(" ||| ")
    assert rc == 0
    assert first[1] == "the cat sat"
    assert first[2].startswith("F= 2 CHRF= ")
    assert float(first[2].split()[-1]) == sacrebleu.metrics.CHRF().sentence_score(
        "the cat sat", ["the cat sat"]).score


@pytest.mark.parametrize(("files", "argv", "msg"), [
    ({"nb": "0 ||| a ||| b\n"}, ["nbest", "{nb}", "-r", "{ref}"], "nb:1: expected 'id"),
    ({"nb": "0 ||| a ||| F ||| 1\n2 ||| b ||| F ||| 1\n"}, ["nbest", "{nb}", "-r", "{ref}"],
     "sentence id 1 has no hypotheses"),
    ({"nb": "0 ||| a ||| F ||| 1\n1 ||| a ||| F ||| 1\n2 ||| b ||| F ||| 1\n"},
     ["nbest", "{nb}", "-r", "{ref}"], "ref: 2 lines"),
    ({"s.jsonl": "[\"a\"]\n[]\n"}, ["mbr", "{s.jsonl}"], "s.jsonl:2: empty group"),
    ({"s.jsonl": "[\"a\"]\n{oops\n"}, ["mbr", "{s.jsonl}"], "s.jsonl:2: invalid JSON"),
    ({"s.jsonl": "{\"samples\": [\"a\", \"b\"], \"log_probs\": [1]}\n"}, ["mbr", "{s.jsonl}"],
     "s.jsonl:1: log_probs must be 2 numbers"),
    ({"s.txt": "a\t0\nb\tx\n"}, ["mbr", "{s.txt}", "--log-probs"], "s.txt:2: --log-probs"),
    ({"s.txt": "a\nb\n"}, ["mbr", "{s.txt}", "-O", "nosuch=1"],
     "-O: chrf: unknown option(s) nosuch; its options: char_order, word_order, beta"),
    ({"nb": "0 ||| a ||| F ||| 1\n"}, ["nbest", "{nb}", "-r", "{nb}.missing"],
     ".missing: file not found"),
    ({}, ["mbr", "{ref}.missing"], "ref.missing: file not found"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, files, argv, msg):
    (tmp_path / "ref").write_text("r0\nr1\n", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    names = {"ref": tmp_path / "ref", **{n: tmp_path / n for n in files}}
    argv = [str(names[a[1:a.index("}")]]) + a[a.index("}") + 1:] if a.startswith("{") else a
            for a in argv]
    rc, out, err = _cli(argv, capsys)
    assert rc == 1, err
    assert out == "", err
    assert len(err.strip().splitlines()) == 1, err
    assert msg in err, err


def test_cli_workers_checked_by_the_parser(tmp_path, capsys):
    (tmp_path / "s.jsonl").write_text("[\"a\"]\n", encoding="utf-8")
    with pytest.raises(SystemExit) as e:
        _cli(["mbr", str(tmp_path / "s.jsonl"), "--workers", "-1"], capsys)
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "argument --workers: must be 0 or more, got -1" in err


# ---- reference aggregation ---------------------------------------------------------------------
def _aggregate_chrf_twin(hyps, refs, p, char_order=6, word_order=0, beta=2.0):
    """Plain-Python reference aggregation (Vamvas & Sennrich 2024) with sacrebleu's own n-gram
    extraction and chrF formula: expected reference counts, clipped matches per order."""
    from collections import Counter

    sb = sacrebleu.metrics.CHRF(char_order=char_order, word_order=word_order, beta=beta)

    def counts(text):  # sacrebleu's own n-gram extraction of a reference
        return sb._extract_reference_info([text])["ref_ngrams"][0]

    ref_counts = [counts(r) for r in refs]
    n_orders = char_order + word_order
    expected = [Counter() for _ in range(n_orders)]
    exp_tot = [0.0] * n_orders
    for w, rc in zip(p, ref_counts):
        for o in range(n_orders):
            for g, c in rc[o].items():
                expected[o][g] += w * c
            exp_tot[o] += w * sum(rc[o].values())
    out = []
    for h in hyps:
        hc = counts(h)
        stats = []
        for o in range(n_orders):
            match = sum(min(c, expected[o][g]) for g, c in hc[o].items())
            stats += [sum(hc[o].values()), exp_tot[o], match]
        out.append(sb._compute_f_score(stats))
    return np.array(out)


@pytest.mark.parametrize("options", [{}, {"word_order": 2}, {"beta": 1, "char_order": 4}])
def test_aggregate_chrf_equals_twin_fastchrf_and_single_reference(options):
    groups = need_wmt()
    for g in groups:
        got = decoder.aggregate_chrf(g, metric="chrf", **options)
        want = _aggregate_chrf_twin(g, g, np.full(len(g), 1 / len(g)), **options)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        # one pseudo-reference: the sentence score, bit for bit
        sb = sacrebleu.metrics.CHRF(**options)
        assert_bits(decoder.aggregate_chrf(g, g[:1], **options),
                    [sb.sentence_score(h, [g[0]]).score for h in g])
        w = np.arange(1, len(g) + 1, dtype=np.float64)
        np.testing.assert_allclose(decoder.aggregate_chrf(g, weights=w, **options),
                                   _aggregate_chrf_twin(g, g, w / w.sum(), **options),
                                   rtol=1e-12, atol=1e-12)
        try:
            import fastchrf
        except ImportError:
            continue
        if not options:  # the same utility; sums of fractional counts in another order (ulps)
            np.testing.assert_allclose(got, fastchrf.aggregate_chrf([g], [g])[0], rtol=1e-13)


def test_expected_bleu_single_reference_is_sentence_bleu_and_mbr_aggregate():
    groups = need_wmt()
    sb = sacrebleu.metrics.BLEU(effective_order=True)
    for g in groups:
        assert_bits(decoder.expected_bleu(g, g[:1]), [sb.sentence_score(h, [g[0]]).score for h in g])
        # identical pseudo-references: the same as one of them
        assert_bits(decoder.expected_bleu(g, [g[1]] * 3), [sb.sentence_score(h, [g[1]]).score for h in g])
        eb = decoder.expected_bleu(g)
        res = decoder.mbr(g, metric="bleu", utility="aggregate", effective_order=True)
        assert res.matrix is None
        assert res.index == int(np.argmax(eb))
        assert_bits(res.expected_utility, eb)
        res = decoder.mbr(g, metric="chrf", utility="aggregate")
        assert_bits(res.expected_utility, decoder.aggregate_chrf(g))


def test_pairwise_empty_group_is_an_error():
    with pytest.raises(ValueError, match=r"groups\[1\] is empty"):
        decoder.pairwise(groups=[["a"], []])
    with pytest.raises(ValueError, match=r"groups\[0\] is empty"):
        decoder.pairwise(groups=[(["a"], [])])


def test_aggregate_errors():
    with pytest.raises(ValueError, match="utility must be"):
        decoder.mbr(["a", "b"], utility="mean")
    with pytest.raises(ValueError, match="needs chrF/chrF\\+\\+ or BLEU"):
        decoder.mbr(["a", "b"], metric="ter", utility="aggregate")
    with pytest.raises(ValueError, match="hyps is empty"):
        decoder.aggregate_chrf([])
    with pytest.raises(ValueError, match="metric must be chrF"):
        decoder.aggregate_chrf(["a"], metric="bleu")
    with pytest.raises(ValueError, match="weights\\[1\\]"):
        decoder.expected_bleu(["a b", "c"], weights=[1, -1])


def test_error_rates_are_lower_is_better_everywhere():
    """Every error-rate metric declares it (not only TER): MBR and n-best oracles pick its
    lowest value and rewards negate it."""
    import mtscore

    for m in (mtscore.TER(), mtscore.decoder.resolve_metric("wer", {}),
              mtscore.decoder.resolve_metric("eed", {})):
        assert decoder.lower_is_better(m)
    assert not decoder.lower_is_better(mtscore.CHRF())
    samples = ["a b c d", "a b c e", "x y z w"]
    res = decoder.mbr(samples, metric="wer")
    assert res.index == int(np.argmin(res.expected_utility))
    oracle = decoder.nbest_oracle([samples], ["a b c d"], metric="wer")
    assert oracle.index[0] == 0
    assert oracle.score[0] == 0.0
    reward = decoder.reward_fn("wer", scale=1.0)
    assert reward(completions=["a b c d", "x y"], reference=["a b c d"] * 2)[0] == -0.0


def test_sentence_bleu_defaults_to_effective_order_in_every_decoder_face(tmp_path):
    """P14: `mtscore nbest -m bleu` scored an exact match of two words 0.0 (sentence BLEU without
    effective order); by name, BLEU now uses it in the decoder functions, n-best, MBR and
    rewards, as sacrebleu's sentence mode; `effective_order=False` still gives the old numbers,
    with one warning per process."""
    import subprocess
    import sys

    want = sacrebleu.metrics.BLEU(effective_order=True).sentence_score("hello world", ["hello world"]).score
    assert decoder.sentence_scores(["hello world"], ["hello world"], metric="bleu").tolist() == [want]
    assert decoder.pairwise(["hello world", "hello world"], metric="bleu")[0, 1] == want
    assert decoder.nbest_oracle([["hello world", "hi"]], ["hello world"], metric="bleu").score[0] == want
    assert decoder.reward_fn("bleu", scale=1.0)(completions=["hello world"], reference=["hello world"]) == [want]
    nb = tmp_path / "nb.txt"
    nb.write_text("0 ||| hello world ||| a=1 ||| 0.5\n0 ||| hi world ||| a=1 ||| 0.4\n")
    ref = tmp_path / "ref"
    ref.write_text("hello world\n")
    r = subprocess.run([sys.executable, "-m", "mtscore", "nbest", str(nb), "-r", str(ref), "-m", "bleu",
                        "-f", "jsonl"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert json.loads(r.stdout)["score"] == want
    assert r.stderr == ""
    groups = tmp_path / "g.txt"
    groups.write_text("hello world\nhello world\nhi there\n\nhello world\nhello world\n")
    r = subprocess.run([sys.executable, "-m", "mtscore", "mbr", str(groups), "-m", "bleu", "-O",
                        "effective_order=false"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert r.stderr.count("warning: sentence-level BLEU without effective_order") == 1
