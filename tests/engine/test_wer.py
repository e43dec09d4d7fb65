"""WER, CER and PER against their definitions and jiwer (the jitsi/jiwer project, installed
from PyPI as ``jiwer``; a test extra):

* WER / CER equal ``jiwer.wer`` / ``jiwer.cer`` exactly (float equality of the rate, corpus and
  per sentence) on newstest2021 system outputs and on hypothesis-generated adversarial strings
  (whitespace oddities: tabs, U+3000, U+0085, runs; empty references, where jiwer's rate is the
  number of insertions);
* PER equals the thesis' formula (Tillmann et al.: ``1 - (matches - max(0, |h| - |r|)) / |r|``,
  corpus: summed errors over summed reference lengths) written out here with ``Counter``;
* several references: each ``multi_ref`` rule against a direct computation with rapidfuzz;
* the batch API and the CLI know the names.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wmt21 import load_pair, pairs

from mtscore.engine.metrics.registry import make_metric
from mtscore.engine.metrics.wer import CER, PER, WER

jiwer = pytest.importorskip("jiwer", reason="the WER/CER parity tests need jiwer (test extra)")
rapidfuzz = pytest.importorskip("rapidfuzz")

ROOT = Path(__file__).resolve().parents[2]

_PIECES = ["a", "b", "ab", "Ab", "x.", ",", "!", "¿", "—", "«", "»", "İ", "ẞ", "中", "😀", " ", "  ",
           "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u3000",
           "\u200b", "\ufeff", "\ud800", "\x00"]
SEG = st.one_of(st.lists(st.sampled_from(_PIECES), max_size=20).map("".join), st.text(max_size=20))


def _wmt_or_skip():
    if not pairs():
        pytest.skip("newstest2021 data not found (set MTSCORE_DATA)")


def _wmt_cases():
    """(pair, system) for a few systems of every newstest2021 pair (first reference)."""
    out = []
    for p in pairs():
        if not p.startswith("newstest2021"):
            continue
        _, systems, _ = load_pair(p)
        out += [(p, s) for s in sorted(systems)[:2]]
    return out


# ---- jiwer parity --------------------------------------------------------------------------
def test_wer_and_cer_equal_jiwer_on_newstest2021():
    _wmt_or_skip()
    cases = _wmt_cases()
    assert len(cases) >= 20
    for p, name in cases:
        refs, systems, _ = load_pair(p)
        hyps, ref = systems[name], refs[0]
        for metric, oracle in ((WER(), jiwer.wer), (CER(), jiwer.cer)):
            st_ = metric.corpus_stats(hyps, [ref])
            assert metric.compute_score_from_stats(metric.sum_stats(st_)).rate == oracle(ref, hyps), (p, name)
            sent = metric.scores_from_stats(st_)
            want = np.array([100 * oracle(r, h) for r, h in zip(ref, hyps)])
            assert np.array_equal(sent, want), (p, name, metric)


def test_wer_equals_jiwer_on_a_whole_pair_of_all_systems():
    _wmt_or_skip()
    refs, systems, _ = load_pair("newstest2021.en-de")
    metric = WER()
    metric.prepare_references([refs[0]])
    names = sorted(systems)
    for name, st_ in zip(names, metric.systems_stats([systems[n] for n in names])):  # deduped path
        assert metric.compute_score_from_stats(metric.sum_stats(st_)).rate == jiwer.wer(refs[0], systems[name])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(SEG, SEG), min_size=1, max_size=8))
def test_wer_and_cer_equal_jiwer_on_adversarial_strings(rows):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    for metric, oracle in ((WER(), jiwer.wer), (CER(), jiwer.cer)):
        stats = metric.corpus_stats(hyps, [refs])
        assert metric.compute_score_from_stats(metric.sum_stats(stats)).rate == oracle(refs, hyps)
        for (h, r), s in zip(rows, metric.scores_from_stats(stats)):
            assert s == 100 * oracle(r, h), (h, r)
            assert metric.sentence_score(h, [r]).rate == oracle(r, h)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(SEG, SEG), min_size=1, max_size=6))
def test_lowercase_and_punctuation_options_equal_jiwer_transforms(rows):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    t = jiwer.transforms
    words = t.Compose([t.ToLowerCase(), t.RemovePunctuation(), t.RemoveMultipleSpaces(), t.Strip(),
                       t.ReduceToListOfListOfWords()])
    chars = t.Compose([t.ToLowerCase(), t.RemovePunctuation(), t.Strip(), t.ReduceToListOfListOfChars()])
    kw = dict(lowercase=True, remove_punctuation=True)
    assert WER(**kw).corpus_score(hyps, [refs]).rate == jiwer.wer(refs, hyps, words, words)
    assert CER(**kw).corpus_score(hyps, [refs]).rate == jiwer.cer(refs, hyps, chars, chars)


def test_jiwer_edge_cases():
    # an empty reference: jiwer's rate is the number of insertions (not capped at 1 like TER)
    assert WER().sentence_score("a b c", [""]).rate == jiwer.wer("", "a b c") == 3
    assert WER().sentence_score("", [""]).rate == 0.0
    assert WER().sentence_score("", ["a b"]).rate == 1.0
    # a lone tab inside a word stays (jiwer splits on U+0020 after collapsing runs only)
    assert WER().tokens(" a\tb  c \t d ") == ["a\tb", "c", "d"] == jiwer.transformations.wer_default(
        [" a\tb  c \t d "])[0]
    assert CER().tokens(" a b ") == ["a", " ", "b"]


# ---- the kernels' twin against its specification (here, not in tests/kernels: the sanitizer
# run of the twin tests must not load jiwer's / rapidfuzz's C++) ----------------------------
@settings(max_examples=300, deadline=None)
@given(SEG)
def test_twin_words_equal_jiwer_transforms(s):
    from mtscore.kernels.reference import edit_csr, text

    vocab = text.Vocab()
    ids, _ = edit_csr.jiwer_words([s], vocab)
    assert [vocab.token(int(i)) for i in ids] == jiwer.transformations.wer_default([s])[0]
    assert [w for _, w in edit_csr._jiwer_spans(s)] == jiwer.transformations.wer_default([s])[0]
    assert [chr(c) for c in edit_csr.code_points([s], True)[0]] == jiwer.transformations.cer_default([s])[0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=30), st.lists(st.integers(0, 5), max_size=30))
def test_twin_levenshtein_and_per_equal_their_definitions(h, r):
    from mtscore.kernels.reference import edit_distance

    assert edit_distance.levenshtein(h, r) == rapidfuzz.distance.Levenshtein.distance(h, r)
    out = np.zeros((1, 2))
    edit_distance.edit_stats_range(np.array(h, np.int32), np.array([0, len(h)], np.int64), np.array(r, np.int32),
                                   np.array([0, len(r)], np.int64), np.array([0, 1], np.int64), out, 1)
    assert out[0, 0] == _per_errors(h, r)


# ---- PER -----------------------------------------------------------------------------------
def _per_errors(h, r):
    """Tillmann et al.: |r| * PER = |r| - (matches - max(0, |h| - |r|))."""
    matches = sum((Counter(h) & Counter(r)).values())
    return len(r) - (matches - max(0, len(h) - len(r)))


def _words(s):
    return jiwer.transformations.wer_default([s])[0]


def test_per_equals_the_thesis_formula_on_newstest2021():
    _wmt_or_skip()
    for p in ["newstest2021.en-de", "newstest2021.de-en", "newstest2021.en-ru"]:
        refs, systems, _ = load_pair(p)
        for name in sorted(systems)[:3]:
            hyps = systems[name]
            errs = [_per_errors(_words(h), _words(r)) for h, r in zip(hyps, refs[0])]
            lens = [len(_words(r)) for r in refs[0]]
            got = PER().corpus_score(hyps, [refs[0]])
            assert got.num_errors == sum(errs)
            assert got.rate == sum(errs) / sum(lens)
            want = [100 * (e / n if n else e) for e, n in zip(errs, lens)]
            assert PER().corpus_stats(hyps, [refs[0]]).shape == (len(hyps), 2)
            assert PER().scores_from_stats(PER().corpus_stats(hyps, [refs[0]])).tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(SEG, SEG), min_size=1, max_size=8))
def test_per_equals_the_thesis_formula_on_adversarial_strings(rows):
    errs = [_per_errors(_words(h), _words(r)) for h, r in rows]
    lens = [len(_words(r)) for _, r in rows]
    got = PER().corpus_score([h for h, _ in rows], [[r for _, r in rows]])
    assert got.num_errors == sum(errs)
    assert got.rate == (sum(errs) / sum(lens) if sum(lens) else float(sum(errs)))
    # PER never exceeds WER: a bag-of-words match ignores order
    assert got.num_errors <= WER().corpus_score([h for h, _ in rows], [[r for _, r in rows]]).num_errors


# ---- several references --------------------------------------------------------------------
def _multi(h, refs, rule, measure):
    ws = [_words(r) for r in refs]
    hw = _words(h)
    e = [measure(hw, w) for w in ws]
    n = [len(w) for w in ws]
    if rule == "average":
        return min(e), sum(n) / len(n)
    if rule == "best":
        rates = [x / y if y else float(x) for x, y in zip(e, n)]
        k = rates.index(min(rates))
        return e[k], n[k]
    k = min(range(len(e)), key=lambda j: (e[j], -n[j]))
    return e[k], n[k]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(SEG, st.lists(SEG, min_size=1, max_size=3)), min_size=1, max_size=6),
       st.sampled_from(["closest", "average", "best"]))
def test_multi_reference_rules(rows, rule):
    k = max(len(r) for _, r in rows)
    streams = [[r[j] if j < len(r) else None for _, r in rows] for j in range(k)]
    hyps = [h for h, _ in rows]
    lev = rapidfuzz.distance.Levenshtein.distance
    for cls, measure in ((WER, lev), (PER, _per_errors)):
        stats = cls(multi_ref=rule).corpus_stats(hyps, streams)
        want = [_multi(h, r, rule, measure) for h, r in rows]
        assert stats.tolist() == [[float(e), float(n)] for e, n in want], (cls, rule)


def test_multi_reference_rules_differ_as_documented():
    hyp, refs = "a b c d", ["a b c x", "a b c d e f g h"]  # 1 edit / 4 words; 4 edits / 8 words
    assert WER(multi_ref="closest").sentence_score(hyp, refs).rate == 1 / 4
    assert WER(multi_ref="average").sentence_score(hyp, refs).rate == 1 / 6
    # "closest" takes the fewest edits (3 against "a x", a rate of 1.5), "best" the lowest rate
    refs = ["a x", "a b c d e f g h"]  # 3 edits / 2 words; 4 edits / 8 words
    assert WER(multi_ref="closest").sentence_score(hyp, refs).rate == 1.5
    assert WER(multi_ref="best").sentence_score(hyp, refs).rate == 0.5
    assert WER(multi_ref="average").sentence_score(hyp, refs).rate == 3 / 5
    # ties in edits: "closest" takes the longer reference
    assert WER().sentence_score("a b", ["a", "a b c"]).rate == 1 / 3
    with pytest.raises(ValueError, match="multi_ref"):
        WER(multi_ref="mean")


# ---- signatures, names, workers, the batch API and the CLI ----------------------------------
def test_signatures():
    m = WER()
    m.corpus_score(["a"], [["a"]])
    assert str(m.get_signature()) == "nrefs:1|case:mixed|punct:yes|tok:jiwer|mref:closest|version:mtscore-0.1.0"
    m = CER(lowercase=True, remove_punctuation=True, multi_ref="average")
    m.corpus_score(["a"], [["a"], ["b"]])
    assert m.get_signature().format(short=True) == "#:2|c:lc|pn:no|t:chars|mr:average|v:mtscore-0.1.0"
    # sacrebleu's metrics keep printing the sacrebleu release whose numbers they reproduce
    from mtscore import BLEU
    b = BLEU()
    b.corpus_score(["a"], [["a"]])
    assert str(b.get_signature()).endswith("|version:2.6.0")


def test_registry_names():
    for name, cls in (("wer", WER), ("per", PER), ("cer", CER)):
        assert type(make_metric(name)) is cls


def test_workers_do_not_change_the_statistics():
    hyps = [f"w{i % 7} x{i % 3} y z" * (1 + i % 5) for i in range(3000)]
    refs = [f"x{i % 3} w{i % 7} y" * (1 + i % 4) for i in range(3000)]
    for cls in (WER, PER, CER):
        one = cls().corpus_stats(hyps, [refs])
        assert np.array_equal(cls(workers=3).corpus_stats(hyps, [refs]), one)


def test_batch_api():
    import mtscore

    hyps = ["the cat sat", "a dog", ""]
    refs = [["the cat sat down", "a dog barks", "x"]]
    r = mtscore.score({"A": hyps, "B": hyps[::-1]}, refs, metrics=["wer", "per", "cer"])
    for name, cls in (("wer", WER), ("per", PER), ("cer", CER)):
        assert r.corpus["A"][name].score == cls().corpus_score(hyps, refs).score
        assert r.corpus["B"][name].score == cls().corpus_score(hyps[::-1], refs).score
    assert r.corpus["A"]["wer"].rate == jiwer.wer(refs[0], hyps)


def test_cli_metrics(tmp_path):
    hyp = tmp_path / "hyp.txt"
    ref = tmp_path / "ref.txt"
    hyp.write_text("the cat sat\na dog\n", encoding="utf-8")
    ref.write_text("the cat sat down\na dog barks\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "mtscore", str(ref), "-i", str(hyp), "-m", "wer", "per", "cer"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    got = {d["name"]: d for d in json.loads(out)}
    assert got["WER"]["score"] == round(100 * jiwer.wer(["the cat sat down", "a dog barks"],
                                                        ["the cat sat", "a dog"]), 1)
    assert set(got) == {"WER", "PER", "CER"}
    assert got["WER"]["tok"] == "jiwer"
