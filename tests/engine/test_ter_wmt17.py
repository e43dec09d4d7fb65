"""TER on the 16 WMT17 en-de systems against sacrebleu 2.6.0's recorded values
(``wmt17-en-de-systems/expected/wmt17_en_de_expected_2.6.0.json``)."""
import json

import pytest
from conftest import require

from mtscore.engine.metrics.ter import TER

VARIANTS = {"ter_norm": {"normalized": True}, "ter_nopunct": {"no_punct": True},
            "ter_cs": {"case_sensitive": True}}


def _lines(path):
    lines = path.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


@pytest.fixture(scope="module")
def wmt17(shared_data):
    d = shared_data / "wmt17-en-de-systems"
    expected = json.loads(require(d / "expected" / "wmt17_en_de_expected_2.6.0.json").read_text())
    ref = _lines(require(d / "reference.txt"))
    systems = {name: _lines(require(d / f"{name}.txt")) for name in expected["expected"]}
    return expected["expected"], ref, systems


def test_wmt17_expected_ter(wmt17):
    expected, ref, systems = wmt17
    metric = TER(references=[ref])  # references prepared once for all 16 systems
    n_variants = 0
    for name, hyp in systems.items():
        e = expected[name]
        score = metric.corpus_score(hyp)
        assert score.score == e["ter"], name
        assert score.num_edits == e["ter_num_edits"], name
        assert score.ref_length == e["ter_ref_length"], name
        sent = [TER().sentence_score(h, [r]).score for h, r in zip(hyp[:50], ref[:50])]
        assert sent == e["sent_ter_first50"], name
        for key, opts in VARIANTS.items():
            if key in e:
                n_variants += 1
                assert TER(**opts).corpus_score(hyp, [ref]).score == e[key], (name, key)
    assert len(systems) == 16
    assert n_variants >= 6
    assert str(metric.get_signature()) == (
        "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0")
