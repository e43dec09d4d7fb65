"""METEOR against NLTK 3.10.4's ``meteor_score`` (the test oracle; a test extra), float for
float: on newstest2021 into-English outputs (one or two references) with NLTK's WordNet
replaced by an empty stub, so that only the exact and stem modules act; on adversarial
Unicode; with a fake WordNet for the synonym module; with the default Snowball stemmer given to
NLTK as well. The tokens NLTK sees come from sacrebleu's own tokenizer (13a) or ``str.split``,
not from mtscore, so the tokenisation is checked too."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wmt21 import load_pair, pairs

from mtscore.engine.metrics.meteor import METEOR

nltk_meteor = pytest.importorskip("nltk.translate.meteor_score", reason="METEOR parity needs nltk (test extra)")
pytest.importorskip("Stemmer", reason="METEOR's default stemmer needs PyStemmer (meteor extra)")
from nltk.stem.porter import PorterStemmer  # noqa: E402
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a  # noqa: E402

PORTER = PorterStemmer()
_13A = Tokenizer13a()


class EmptyWordNet:
    """NLTK's WordNet with no synsets: the synonym module matches nothing new."""

    def synsets(self, word):
        return []


class _Lemma:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class _Synset:
    def __init__(self, names):
        self._lemmas = [_Lemma(n) for n in names]

    def lemmas(self):
        return self._lemmas


class FakeWordNet:
    """A WordNet-like object from a dict word -> list of synsets (lists of lemma names)."""

    def __init__(self, table):
        self.table = table

    def synsets(self, word):
        return [_Synset(names) for names in self.table.get(word, [])]


def nltk_scores(hyps, streams, tokens, stemmer=PORTER, wordnet=None, **kw):
    wn = EmptyWordNet() if wordnet is None else wordnet
    out = []
    for i, h in enumerate(hyps):
        refs = [tokens(s[i]) for s in streams if s[i] is not None]
        out.append(nltk_meteor.meteor_score(refs, tokens(h), stemmer=stemmer, wordnet=wn, **kw))
    return np.array(out, dtype=np.float64)


def tok13a(line):
    return _13A(line.rstrip()).split()


def _en_pairs():
    found = [p for p in pairs() if p.endswith("-en")]
    if not found:
        pytest.skip("newstest2021 data not found (set MTSCORE_DATA)")
    return found


def _check_pair(pair, systems_to_check, metric):
    refs, systems, _ = load_pair(pair)
    prepared = metric.prepare(refs)
    for name in systems_to_check(sorted(systems)):
        hyps = systems[name]
        got = metric.stats(hyps, prepared)
        want = nltk_scores(hyps, refs, tok13a)
        assert np.array_equal(got[:, 0], want), (pair, name, np.flatnonzero(got[:, 0] != want)[:5])
        score = metric.compute_score_from_stats(metric.sum_stats(got))
        assert score.meteor == sum(want.tolist()) / len(want)  # NLTK users' mean
        assert score.score == 100 * score.meteor


def test_newstest2021_into_english_equals_nltk():
    """Every into-English pair (7 pairs, 1-2 references), one system each (~10 s of NLTK)."""
    metric = METEOR(stemmer=PORTER.stem)
    for pair in _en_pairs():
        _check_pair(pair, lambda names: names[-1:], metric)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MTSCORE_METEOR_FULL") != "1",
                    reason="all 100 into-English systems take ~2.5 min of NLTK; set MTSCORE_METEOR_FULL=1")
def test_newstest2021_every_into_english_system_equals_nltk():
    metric = METEOR(stemmer=PORTER.stem)
    for pair in _en_pairs():
        _check_pair(pair, lambda names: names, metric)


def test_whitespace_tokens_and_options_equal_nltk():
    pair = _en_pairs()[0]
    refs, systems, _ = load_pair(pair)
    hyps = systems[sorted(systems)[1]][:300]
    refs = [r[:300] for r in refs]
    kw = dict(alpha=0.85, beta=0.2, gamma=0.6)
    m = METEOR(stemmer=PORTER.stem, tokenize="none", **kw)
    assert np.array_equal(m.corpus_stats(hyps, refs)[:, 0], nltk_scores(hyps, refs, str.split, **kw))
    # case kept: NLTK's preprocess=identity
    m = METEOR(stemmer=PORTER.stem, lowercase=False)
    want = nltk_scores(hyps, refs, tok13a, preprocess=lambda w: w)
    assert np.array_equal(m.corpus_stats(hyps, refs)[:, 0], want)


class SnowballForNLTK:
    """PyStemmer's English Snowball stemmer behind NLTK's StemmerI interface (``stem``)."""

    def __init__(self):
        import Stemmer

        self._st = Stemmer.Stemmer("english")

    def stem(self, word):
        try:
            return self._st.stemWord(word)
        except UnicodeEncodeError:
            return word


def test_default_snowball_stemmer_equals_nltk_given_the_same_stemmer():
    pair = _en_pairs()[-1]
    refs, systems, _ = load_pair(pair)
    hyps = systems[sorted(systems)[0]][:400]
    refs = [r[:400] for r in refs]
    got = METEOR().corpus_stats(hyps, refs)[:, 0]
    assert np.array_equal(got, nltk_scores(hyps, refs, tok13a, stemmer=SnowballForNLTK()))
    # and Porter differs from Snowball somewhere, so the stemmer really is in play
    assert not np.array_equal(got, nltk_scores(hyps, refs, tok13a))


# ---- adversarial Unicode ----------------------------------------------------------------------
_WORDS = ["cat", "Cats", "CAT", "running", "runs", "ran", "the", "The", "THE", "a", "generously",
          "generous", "ΣΑΣ", "σας", "ς", "İstanbul", "istanbul", "i̇", "ß", "SS", "ﬁsh", "fish",
          "ǅ", "ǆ", "Ω", "ω", "K", "k", "é", "é", "中文", "😀", "\ud800", "x\udfffy", "ab\udc80cing",
          "don't", "U.S.", "-", ".", "", "ing", "sses"]
_SEPS = [" ", "  ", "\t", "\n", "\xa0", "\u3000", "\u2028", "\x1c", "\x85", "\u200b"]
TEXT = st.one_of(
    st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_SEPS)), max_size=14)
    .map(lambda xs: "".join(w + s for w, s in xs)),
    st.text(max_size=20),
    st.text(alphabet=st.sampled_from("aAbB ΣσςİiıI\u0307ßs. "), max_size=24))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, st.one_of(st.none(), TEXT)), min_size=1, max_size=6))
def test_adversarial_unicode_equals_nltk(rows):
    hyps = [h for h, _, _ in rows]
    refs = [[r for _, r, _ in rows], [r2 for _, _, r2 in rows]]
    for tokenize, tokens in (("none", str.split), ("13a", tok13a)):
        m = METEOR(stemmer=PORTER.stem, tokenize=tokenize)
        got = m.corpus_stats(hyps, refs)[:, 0]
        assert np.array_equal(got, nltk_scores(hyps, refs, tokens)), tokenize
    got = METEOR(tokenize="none").corpus_stats(hyps, refs)[:, 0]
    assert np.array_equal(got, nltk_scores(hyps, refs, str.split, stemmer=SnowballForNLTK()))


# ---- the synonym module ------------------------------------------------------------------------
_VOCAB = ["car", "auto", "automobile", "machine", "run", "running", "operate", "go", "went",
          "big", "large", "great", "Big", "house", "home", "dog", "dogs", "hound", "new_york"]
SENT = st.lists(st.sampled_from(_VOCAB), max_size=12).map(" ".join)
WORDNET = st.dictionaries(st.sampled_from([*_VOCAB, "hous", "oper", "larg"]),
                          st.lists(st.lists(st.sampled_from(_VOCAB), max_size=4), max_size=3))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(SENT, SENT, SENT), min_size=1, max_size=5), WORDNET)
def test_synonym_module_with_a_wordnet_equals_nltk(rows, table):
    wn = FakeWordNet(table)
    hyps = [h for h, _, _ in rows]
    refs = [[r for _, r, _ in rows], [r2 for _, _, r2 in rows]]
    m = METEOR(stemmer=PORTER.stem, wordnet=wn, tokenize="none")
    assert np.array_equal(m.corpus_stats(hyps, refs)[:, 0], nltk_scores(hyps, refs, str.split, wordnet=wn))
    # synonyms of the words themselves (original METEOR): NLTK with an identity stemmer is that
    # pipeline (its stem stage then finds nothing the exact stage left)
    m = METEOR(modules=("exact", "synonym"), wordnet=wn, synonym_source="word", tokenize="none")

    class Identity:
        def stem(self, w):
            return w

    want = nltk_scores(hyps, refs, str.split, stemmer=Identity(), wordnet=wn)
    assert np.array_equal(m.corpus_stats(hyps, refs)[:, 0], want)


def test_synonym_module_adds_matches():
    wn = FakeWordNet({"car": [["auto", "automobile"]]})
    hyp, ref = "the car is big", "the auto is big"
    without = METEOR(stemmer=PORTER.stem).sentence_score(hyp, [ref]).meteor
    got = METEOR(stemmer=PORTER.stem, wordnet=wn).sentence_score(hyp, [ref]).meteor
    assert without == nltk_scores([hyp], [[ref]], str.split)[0] < got
    assert got == nltk_scores([hyp], [[ref]], str.split, wordnet=wn)[0] == (1 - 0.5 * (1 / 4) ** 3) * 1.0
    # NLTK compares the synonyms of stems with the reference's stems: Porter's "automobil" is
    # not a lemma name, so "automobile" is not found; the original METEOR's way finds it
    ref = "the automobile is big"
    assert METEOR(stemmer=PORTER.stem, wordnet=wn).sentence_score(hyp, [ref]).meteor == without
    word = METEOR(stemmer=PORTER.stem, wordnet=wn, synonym_source="word").sentence_score(hyp, [ref])
    assert word.meteor == got
