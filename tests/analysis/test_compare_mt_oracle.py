"""mtscore.analysis.compare against compare-mt's own numbers on newstest2021 de-en (ref A,
Facebook-AI vs Online-B), recorded once by tests/oracles/compare_mt_golden.py running compare-mt
0.2.10 in its own virtualenv: word accuracy by frequency bucket and n-gram counts exactly, ratios
within 1e-9, and the salient n-gram lists of compare-mt's n-gram report (ties among equal scores
are unordered in compare-mt, so the lists are compared as scores in order plus n-gram sets above
the last listed score)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import data_dir
from wmt21 import read_segments

from mtscore.analysis.compare.ngrams import KINDS, ngram_counts, salience, salient_ngrams
from mtscore.analysis.compare.tokens import tokenize
from mtscore.analysis.compare.word_accuracy import word_accuracy

GOLDEN = Path(__file__).parent / "golden" / "compare_mt_newstest2021.json"


@pytest.fixture(scope="module")
def case():
    g = json.loads(GOLDEN.read_text(encoding="utf-8"))
    txt = data_dir() / "wmt21-news-systems" / "txt"
    ref_file = txt / "references" / f"{g['pair']}.ref.{g['reference']}.en"
    sys_files = [txt / "system-outputs" / f"{g['pair']}.hyp.{s}.en" for s in g["systems"]]
    missing = [str(p) for p in [ref_file, *sys_files] if not p.is_file()]
    if missing:
        pytest.skip(f"newstest2021 de-en data not found ({missing[0]}; set MTSCORE_DATA)")
    ref = tokenize(read_segments(ref_file), g["tokenizer"])
    outs = [tokenize(read_segments(p), g["tokenizer"]) for p in sys_files]
    counts = [ngram_counts([ref], o, g["min_n"], g["max_n"]) for o in outs]
    return g, ref, outs, counts


def _digest(d):
    items = sorted([list(k), v] for k, v in d.items() if v)
    return {"size": len(items), "sum": sum(v for _, v in items),
            "sha256": hashlib.sha256(json.dumps(items, ensure_ascii=False).encode()).hexdigest()}


def test_word_accuracy_equals_compare_mt(case):
    g, ref, outs, _ = case
    res = word_accuracy([ref], outs)
    want = g["word_accuracy"]
    assert list(res.labels) == want["labels"]
    for s, rows in enumerate(want["systems"]):
        for b, row in enumerate(rows):
            assert int(res.matches[s, b]) == row["matches"]
            assert int(res.ref_counts[b]) == row["ref"]
            assert int(res.out_counts[s, b]) == row["out"]
            assert res.recall[s, b] == pytest.approx(row["recall"], abs=1e-9)
            assert res.precision[s, b] == pytest.approx(row["precision"], abs=1e-9)
            assert res.fmeasure[s, b] == pytest.approx(row["fmeasure"], abs=1e-9)


def test_ngram_counts_equal_compare_mt(case):
    g, _, _, counts = case
    for s, c in enumerate(counts):
        for k in KINDS:
            assert _digest(c.kind(k)) == g["ngrams"]["counts"][s][k], (s, k)


@pytest.mark.parametrize("kind", ["match", "over", "under"])
def test_salient_ngrams_equal_compare_mt(case, kind):
    g, _, _, counts = case
    ca, cb = (c.kind(kind) for c in counts)
    want = g["ngrams"]["salient"][kind]
    scores = salience(ca, cb, g["alpha"])
    assert len(scores) == want["n"]
    high, low = salient_ngrams(ca, cb, g["alpha"], g["top"])
    for got, exp in ((high, want["high"]), (low, want["low"])):
        assert len(got) == len(exp)
        assert [r.score for r in got] == pytest.approx([e[1] for e in exp], abs=1e-9)
        for ngram, score, n_a, n_b in exp:  # every n-gram compare-mt lists, with its numbers
            g_ = tuple(ngram)
            assert scores[g_] == pytest.approx(score, abs=1e-9)
            assert (ca.get(g_, 0), cb.get(g_, 0)) == (n_a, n_b)
        edge = exp[-1][1]  # n-grams strictly beyond the last listed score: the same set
        assert {r.ngram for r in got if r.score != edge} == {tuple(e[0]) for e in exp if e[1] != edge}
