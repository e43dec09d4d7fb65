"""METEOR: the compiled alignment kernel against its plain-Python twin (hypothesis-drawn keys,
stages, synonym tables, weights), hand-computed values, the metric's API (registry, batch API,
CLI, workers, systems sharing references, signature), its errors and the missing-extra message.
Parity with NLTK is in ``test_meteor_nltk.py``."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mtscore
from mtscore.engine.metrics import meteor_lexicon
from mtscore.engine.metrics.meteor import METEOR
from mtscore.engine.metrics.registry import make_metric
from mtscore.engine.missing_extra import MissingExtraError, install_hint
from mtscore.kernels import _meteor
from mtscore.kernels.reference import meteor as twin

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("Stemmer", reason="METEOR's default stemmer needs PyStemmer (meteor extra)")


def _csr(rows, width):
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(r) // width for r in rows])
    keys = np.array([k for r in rows for k in r], dtype=np.int32).reshape(-1, width)
    return np.ascontiguousarray(keys), offsets


@st.composite
def kernel_inputs(draw):
    n_keys = draw(st.integers(1, 6))
    n_stages = draw(st.integers(1, 3))
    syn_stage = draw(st.sampled_from([-1, n_stages - 1]))
    n_rows = draw(st.integers(1, 5))
    syn = draw(st.lists(st.lists(st.integers(0, n_keys - 1), max_size=4), min_size=n_rows, max_size=n_rows))
    key = st.integers(0, n_keys - 1)

    def token(is_hyp):
        return st.tuples(*[st.integers(0, n_rows - 1) if (is_hyp and s == syn_stage) else key
                           for s in range(n_stages)])

    n = draw(st.integers(0, 5))
    hyps = [draw(st.lists(token(True), max_size=12)) for _ in range(n)]
    nrefs = [draw(st.integers(0, 3)) for _ in range(n)]
    refs = [draw(st.lists(token(False), max_size=12)) for _ in range(sum(nrefs))]
    weights = draw(st.lists(st.sampled_from([1.0, 0.0, 0.6, 0.8, 0.25]), min_size=n_stages, max_size=n_stages))
    alpha = draw(st.sampled_from([0.9, 0.0, 1.0, 0.5, 0.85]))
    beta = draw(st.sampled_from([3.0, 0.0, 0.2, 1.0, 7.5]))
    gamma = draw(st.sampled_from([0.5, 0.0, 1.0, 0.6]))
    seg = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nrefs, out=seg[1:])
    hk, ho = _csr([[k for t in h for k in t] for h in hyps], n_stages)
    rk, ro = _csr([[k for t in r for k in t] for r in refs], n_stages)
    sv = np.array([k for r in syn for k in r], dtype=np.int32)
    so = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum([len(r) for r in syn], out=so[1:])
    return (hk, ho, rk, ro, np.ascontiguousarray(seg[:-1]), np.ascontiguousarray(seg[1:]),
            np.array(weights), sv, so, syn_stage, n_keys, alpha, beta, gamma)


def _run(fn, args, start=0, stop=-1):
    out = np.full((len(args[1]) - 1, 3), -7.0)
    fn(*args, out, start, stop)
    return out


@settings(max_examples=400, deadline=None)
@given(kernel_inputs())
def test_kernel_equals_twin(args):
    got = _run(_meteor.meteor_scores, args)
    want = _run(twin.meteor_scores, args)
    np.testing.assert_array_equal(got, want)  # NaN where a segment has no reference
    n = len(args[1]) - 1
    if n >= 2:  # a range fills its rows only
        part = _run(_meteor.meteor_scores, args, 1, n)
        assert (part[0] == -7.0).all()
        np.testing.assert_array_equal(part[1:], got[1:])


def test_kernel_rejects_bad_input():
    hk = np.zeros((2, 1), np.int32)
    off = np.array([0, 2], np.int64)
    lo, hi = np.array([0], np.int64), np.array([1], np.int64)
    w, sv, so = np.ones(1), np.zeros(0, np.int32), np.zeros(1, np.int64)
    out = np.zeros((1, 3))
    _meteor.meteor_scores(hk, off, hk, off, lo, hi, w, sv, so, -1, 1, 0.9, 3.0, 0.5, out)
    assert out[0, 0] == (1 - 0.5 * 0.5 ** 3)
    assert out[0, 1] == 2
    assert out[0, 2] == 1
    for fn in (_meteor.meteor_scores, twin.meteor_scores):
        with pytest.raises(ValueError, match="outside"):  # key 0 with n_keys 0
            fn(hk, off, hk, off, lo, hi, w, sv, so, -1, 0, 0.9, 3.0, 0.5, out)
        with pytest.raises(ValueError, match="range"):
            fn(hk, off, hk, off, lo, hi, w, sv, so, -1, 1, 0.9, 3.0, 0.5, out, 0, 2)
        with pytest.raises(ValueError, match="stages"):
            fn(hk, off, hk, off, lo, hi, np.ones(2), sv, so, -1, 1, 0.9, 3.0, 0.5, out)
    with pytest.raises(ValueError, match="references"):
        _meteor.meteor_scores(hk, off, hk, off, lo, hi + 1, w, sv, so, -1, 1, 0.9, 3.0, 0.5, out)


def test_hand_computed_alignment():
    # hyp "a b c d", ref "c d a b": exact matches a,b,c,d in 2 chunks
    m = METEOR(tokenize="none")
    s = m.sentence_score("a b c d", ["c d a b"]).meteor
    assert s == (1 - 0.5 * (2 / 4) ** 3) * 1.0
    # stem match weighted 0.5: "cats sat" vs "cat sat": P = R = (1 + 0.5) / 2
    m = METEOR(tokenize="none", weights=(1.0, 0.5, 1.0))
    p = 1.5 / 2
    assert m.sentence_score("cats sat", ["cat sat"]).meteor == (1 - 0.5 * (1 / 2) ** 3) * (p * p) / (0.9 * p + (1 - 0.9) * p)
    # greedy right to left: the last "the" takes the last reference "the"
    m = METEOR(tokenize="none")
    got = m.alignment_stats(["the the"], m.prepare([["the x the"]]))
    assert got[0, 1:].tolist() == [2, 2]
    # no match, empty sides: 0; identical: not 1 (NLTK keeps the penalty)
    assert METEOR().sentence_score("", [""]).score == 0.0
    assert METEOR().sentence_score("x", ["y"]).score == 0.0
    assert METEOR().sentence_score("a b", ["a b"]).meteor == 1 - 0.5 * 0.5 ** 3
    # modules=("exact",): no stem matches
    assert METEOR(modules=("exact",), tokenize="none").sentence_score("cats", ["cat"]).score == 0.0
    assert METEOR(tokenize="none").sentence_score("cats", ["cat"]).meteor == 1 - 0.5


def test_best_reference_and_corpus_mean():
    hyps = ["the cat sat on the mat", "a dog barks", "nothing here"]
    refs = [["the cat sat on a mat", "a dog barked", "nothing here"],
            ["the cat is on the mat", "the dog barks", "something"]]
    m = METEOR()
    st_ = m.corpus_stats(hyps, refs)
    for i, h in enumerate(hyps):
        single = [m.sentence_score(h, [r[i]]).meteor for r in refs]
        assert st_[i, 0] == max(single) == m.sentence_score(h, [r[i] for r in refs]).meteor
    assert m.corpus_score(hyps, refs).meteor == sum(st_[:, 0].tolist()) / 3
    assert m.scores_from_stats(st_).tolist() == [100 * x for x in st_[:, 0]]


def test_registry_batch_api_and_workers():
    hyps = [f"the cat number {i} sat on the mat" for i in range(700)]
    other = [f"a cat {i} sat on a mats" if i % 3 else h for i, h in enumerate(hyps)]
    refs = [[f"the cat {i} sat on the mats" for i in range(700)]]
    one = METEOR().corpus_stats(hyps, refs)
    np.testing.assert_array_equal(METEOR(workers=3).corpus_stats(hyps, refs), one)
    assert isinstance(make_metric("meteor"), METEOR)
    assert mtscore.METEOR is METEOR
    r = mtscore.score({"A": hyps, "B": other}, refs, metrics=["meteor"], workers=2)
    assert r.corpus["A"]["meteor"].score == METEOR().corpus_score(hyps, refs).score
    assert r.corpus["B"]["meteor"].score == METEOR().corpus_score(other, refs).score
    a, b = METEOR().systems_stats([hyps, other], refs)
    np.testing.assert_array_equal(a, one)
    np.testing.assert_array_equal(b, METEOR().corpus_stats(other, refs))


class NoSynonyms:
    def synsets(self, word):
        return []


def test_signature():
    m = METEOR()
    m.corpus_score(["a"], [["a"], ["b"]])
    sig = str(m.get_signature())
    assert sig.startswith("nrefs:2|tok:13a|case:lc|mod:exact+stem|stem:snowball-english-")
    assert sig.endswith("|alpha:0.9|beta:3.0|gamma:0.5|w:1.0+1.0|version:mtscore-0.1.0")
    m = METEOR(stemmer=str.upper, lowercase=False, tokenize="none", wordnet=NoSynonyms(), weights=(1, 0.6, 0.8))
    m.corpus_score(["a"], [["a"]])
    assert "|tok:none|case:mixed|mod:exact+stem+synonym|stem:user|" in str(m.get_signature())
    assert "|w:1.0+0.6+0.8|" in str(m.get_signature())


def test_cli(tmp_path):
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("The cats sat on a mat .\nthe dog barks\n", encoding="utf-8")
    ref.write_text("The cat sat on the mat.\nA dogs barked\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "mtscore", str(ref), "-i", str(hyp), "-m", "meteor", "wer"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    got = {d["name"]: d for d in json.loads(out)}
    want = METEOR().corpus_score(["The cats sat on a mat .", "the dog barks"],
                                 [["The cat sat on the mat.", "A dogs barked"]])
    assert got["METEOR"]["score"] == round(want.score, 1)
    assert got["METEOR"]["mod"] == "exact+stem"


def test_cli_stems_in_the_target_language(tmp_path):
    """-l en-de stems German with the German stemmer; a target Snowball lacks gets exact only."""
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("Die Katzen saßen auf Matten\n", encoding="utf-8")
    ref.write_text("Die Katze saß auf der Matte\n", encoding="utf-8")

    def run(langpair):
        out = subprocess.run([sys.executable, "-m", "mtscore", str(ref), "-i", str(hyp), "-m", "meteor",
                              "-l", langpair], capture_output=True, text=True, cwd=ROOT, check=True)
        return json.loads(out.stdout)  # one metric: one JSON object

    de = run("en-de")
    want = METEOR(language="de").corpus_score(["Die Katzen saßen auf Matten"],
                                              [["Die Katze saß auf der Matte"]])
    assert want.score != METEOR().corpus_score(["Die Katzen saßen auf Matten"],
                                               [["Die Katze saß auf der Matte"]]).score
    assert de["score"] == round(want.score, 1)
    assert "german" in de["stem"]
    zh = run("en-zh")
    assert zh["mod"] == "exact"


def test_errors():
    for kw, what in ((dict(alpha=1.5), "alpha"), (dict(beta=-1), "beta"), (dict(gamma="x"), "gamma"),
                     (dict(weights=(1, 1)), "weights"), (dict(weights=(1, 2, 1)), "weights"),
                     (dict(modules=("stem",)), "modules"), (dict(modules="exact"), "modules"),
                     (dict(modules=("exact", "paraphrase")), "modules"), (dict(modules=None), "modules"),
                     (dict(weights=1.0), "weights"),
                     (dict(synonym_source="lemma"), "synonym_source"),
                     (dict(modules=("exact", "synonym"), wordnet=NoSynonyms()), "synonym_source='stem'"),
                     (dict(language="klingon"), "no Snowball stemmer"), (dict(tokenize="nope"), "tokenizer")):
        with pytest.raises(ValueError, match=what):
            METEOR(**kw)
    with pytest.raises(TypeError, match="returned int"):
        METEOR(stemmer=len).corpus_score(["a"], [["a"]])
    with pytest.raises(TypeError, match="callable"):
        METEOR(stemmer="porter")
    with pytest.raises(ValueError, match="line-count mismatch"):
        METEOR().corpus_score(["a", "b"], [["a"]])
    m = METEOR()
    with pytest.raises(ValueError, match="same number of lines"):
        m.stats(["a", "b"], m.prepare([["a"]]))
    with pytest.raises(TypeError, match="synsets"):
        METEOR(wordnet=object())


def test_missing_stemmer_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "Stemmer", None)  # import Stemmer -> ImportError
    with pytest.raises(MissingExtraError, match=re.escape(install_hint("meteor"))):
        METEOR()
    assert METEOR(stemmer=str.lower).sentence_score("a", ["a"]).score > 0  # no PyStemmer needed
    assert METEOR(modules=("exact",)).sentence_score("a", ["a"]).score > 0
    (tmp_path / "t.txt").write_text("a b\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", "import sys; sys.modules['Stemmer'] = None; "
                          "from mtscore.bindings.cli.main import main; sys.exit(main())", str(tmp_path / "t.txt"),
                          "-i", str(tmp_path / "t.txt"), "-m", "meteor"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1
    assert install_hint("meteor") in out.stderr
    assert "Traceback" not in out.stderr


def test_lone_surrogates_are_kept_unstemmed():
    stem_many, _ = meteor_lexicon.snowball_stemmer("en")
    assert stem_many(["running", "ab\udc80cing"]) == ["run", "ab\udc80cing"]


def test_pickled_metric_scores_the_same():
    import pickle

    PorterStemmer = pytest.importorskip("nltk.stem.porter", reason="needs nltk (test extra)").PorterStemmer

    hyps, refs = ["the cats sat", "dogs \udc80 ran"], [["a cat sat", "the dog runs"]]
    for m in (METEOR(), METEOR(stemmer=PorterStemmer().stem, tokenize="none")):
        m.prepare_references(refs)
        want = m.corpus_stats(hyps)
        back = pickle.loads(pickle.dumps(m))
        np.testing.assert_array_equal(back.corpus_stats(hyps), want)  # the cached references too
        np.testing.assert_array_equal(back.corpus_stats(hyps, refs), want)
