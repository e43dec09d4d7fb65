"""Golden values: sacrebleu 2.6.0's scores for the 16 WMT17 en-de systems (shared data
wmt17-en-de-systems/expected), reproduced by mtscore without running sacrebleu."""
import json

import pytest
from conftest import require
from wmt21 import read_segments

import mtscore


@pytest.fixture(scope="module")
def wmt17(shared_data):
    d = shared_data / "wmt17-en-de-systems"
    exp = json.loads(require(d / "expected" / "wmt17_en_de_expected_2.6.0.json").read_text())
    refs = [read_segments(d / "reference.txt")]
    systems = {name: read_segments(d / f"{name}.txt") for name in exp["expected"]}
    return refs, systems, exp["expected"]


BLEU_KEYS = {
    "bleu_13a": {}, "bleu_none": dict(tokenize="none"), "bleu_intl": dict(tokenize="intl"),
    "bleu_char": dict(tokenize="char"), "bleu_13a_lc": dict(lowercase=True),
    "bleu_13a_floor": dict(smooth_method="floor"), "bleu_13a_addk": dict(smooth_method="add-k"),
    "bleu_13a_none": dict(smooth_method="none"), "bleu_13a_eff": dict(effective_order=True),
}
CHRF_KEYS = {
    "chrf": {}, "chrf_eps": dict(eps_smoothing=True), "chrfpp": dict(word_order=2),
    "chrf_ws": dict(whitespace=True), "chrf_lc": dict(lowercase=True),
}


def test_bleu_expected(wmt17):
    refs, systems, expected = wmt17
    metrics = {k: mtscore.BLEU(**kw, references=refs) for k, kw in BLEU_KEYS.items()}
    for name, hyps in systems.items():
        exp = expected[name]
        for key, m in metrics.items():
            s = m.corpus_score(hyps)
            assert s.score == exp[key], (name, key)
            if key == "bleu_13a":
                assert s.counts == exp["bleu_13a_counts"]
                assert s.totals == exp["bleu_13a_totals"]
                assert s.sys_len == exp["bleu_13a_sys_len"]
                assert s.ref_len == exp["bleu_13a_ref_len"]


def test_chrf_expected(wmt17):
    refs, systems, expected = wmt17
    metrics = {k: mtscore.CHRF(**kw, references=refs) for k, kw in CHRF_KEYS.items()}
    for name, hyps in systems.items():
        for key, m in metrics.items():
            assert m.corpus_score(hyps).score == expected[name][key], (name, key)


def test_sentence_expected(wmt17):
    refs, systems, expected = wmt17
    bleu = mtscore.BLEU(effective_order=True)
    chrf = mtscore.CHRF()
    for name, hyps in systems.items():
        exp_b = expected[name]["sent_bleu_first50"]
        exp_c = expected[name]["sent_chrf_first50"]
        for i in range(50):
            assert bleu.sentence_score(hyps[i], [refs[0][i]]).score == exp_b[i], (name, i)
            assert chrf.sentence_score(hyps[i], [refs[0][i]]).score == exp_c[i], (name, i)
        # the batch path gives the same numbers
        r = mtscore.score(hyps[:50], [refs[0][:50]], metrics=["bleu", "chrf"], sentence_level=True,
                          bleu_kwargs=dict(effective_order=True))
        assert list(r.segments.column("bleu").to_pylist()) == exp_b
        assert list(r.segments.column("chrf").to_pylist()) == exp_c
