"""EED against torchmetrics (``torchmetrics.functional.text.eed``, the maintained
implementation; a test extra): its float64 sentence scores bit for bit (``_eed_function`` after
its preprocessing, the lowest over references), its float32 public outputs after the same
rounding, on newstest2021 outputs (into English, two references; into Japanese with ``ja``
preprocessing) and on adversarial strings."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wmt21 import load_pair, pairs

from mtscore.engine.metrics.eed import EED, preprocess_en, preprocess_ja
from mtscore.engine.metrics.registry import make_metric

tm = pytest.importorskip("torchmetrics.functional.text.eed",
                         reason="the EED parity tests need torchmetrics (test extra)")

_PIECES = ["a", "b", "ab", " ", "  ", ".", ",", "!", "?", "1", "0.5", "3 , 4", "Mr ", "Mrs S", "Dr.",
           "e.g.", "i . e .", "U.S.", "\t", "\n", "\u3000", "ｱ", "①", "中", "😀", "\xa0"]
SEG = st.one_of(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join), st.text(max_size=16))


def _want(hyps, streams, language="en", **kw):
    """torchmetrics' float64 sentence scores (its _eed_function on its preprocessing)."""
    pre = tm._preprocess_en if language == "en" else tm._preprocess_ja
    out = []
    for i, h in enumerate(hyps):
        refs = [s[i] for s in streams if s[i] is not None]
        out.append(min(tm._eed_function(pre(h), pre(r), **kw) for r in refs))
    return np.array(out, dtype=np.float64)


def _wmt(pair, n):
    if pair not in pairs():
        pytest.skip("newstest2021 data not found (set MTSCORE_DATA)")
    refs, systems, _ = load_pair(pair)
    name = sorted(systems)[0]
    return systems[name][:n], [r[:n] for r in refs]


def test_sentence_scores_equal_torchmetrics_on_newstest2021_into_english():
    hyps, refs = _wmt("newstest2021.de-en", 150)
    assert len(refs) == 2
    m = EED()
    st_ = m.corpus_stats(hyps, refs)
    assert np.array_equal(st_[:, 0], _want(hyps, refs))  # bit for bit, best of two references
    assert np.array_equal(st_[:, 1], np.ones(len(hyps)))
    # the public function: float32 sentence scores, a float32 running sum for the corpus
    corpus, sent = tm.extended_edit_distance(hyps, [list(x) for x in zip(*refs)],
                                             return_sentence_level_score=True)
    assert np.array_equal(sent.numpy(), st_[:, 0].astype(np.float32))
    acc = np.float32(0)
    for x in st_[:, 0].astype(np.float32):
        acc = np.float32(acc + x)
    assert corpus.item() == np.float32(acc / np.float32(len(hyps)))
    score = m.corpus_score(hyps, refs)
    assert score.eed == float(np.add.accumulate(st_[:, 0])[-1]) / len(hyps)
    assert abs(score.eed - corpus.item()) < 1e-6


def test_sentence_scores_equal_torchmetrics_into_japanese():
    hyps, refs = _wmt("newstest2021.en-ja", 60)
    m = EED(language="ja")
    assert np.array_equal(m.corpus_stats(hyps, refs)[:, 0], _want(hyps, refs, "ja"))


def test_parameters_are_passed_through():
    hyps, refs = _wmt("newstest2021.cs-en", 40)
    kw = dict(alpha=1.0, rho=0.5, deletion=0.4, insertion=0.7)
    assert np.array_equal(EED(**kw).corpus_stats(hyps, refs)[:, 0], _want(hyps, refs, **kw))
    with pytest.raises(ValueError, match="rho"):
        EED(rho=-1.0)
    with pytest.raises(ValueError, match="language"):
        EED(language="de")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(SEG, SEG, st.one_of(st.none(), SEG)), min_size=1, max_size=5),
       st.sampled_from(["en", "ja"]))
def test_equal_torchmetrics_on_adversarial_strings(rows, language):
    hyps = [h for h, _, _ in rows]
    streams = [[r for _, r, _ in rows], [r for _, _, r in rows]]
    for s in hyps + streams[0]:
        assert (preprocess_en(s), preprocess_ja(s)) == (tm._preprocess_en(s), tm._preprocess_ja(s))
    got = EED(language=language).corpus_stats(hyps, streams)[:, 0]
    assert np.array_equal(got, _want(hyps, streams, language))


@settings(max_examples=60, deadline=None)
@given(SEG, SEG)
def test_twin_eed_equals_torchmetrics(h, r):
    # the kernel's twin against the specification (kept out of tests/kernels: the sanitizer run
    # of the twin tests must not load torch)
    from mtscore.kernels.reference import edit_csr, edit_distance

    ph, pr = preprocess_en(h), preprocess_en(r)
    hv, ho = edit_csr.code_points([ph])
    rv, ro = edit_csr.code_points([pr])
    assert edit_distance.eed_scores(hv, ho, rv, ro, np.array([0, 1], np.int64))[0] == tm._eed_function(ph, pr)


def test_sentence_score_names_and_batch_api():
    import mtscore

    assert type(make_metric("eed")) is EED
    s = EED().sentence_score("this is the prediction", ["this is the reference"])
    assert s.eed == tm._eed_function(tm._preprocess_en("this is the prediction"),
                                     tm._preprocess_en("this is the reference"))
    assert s.score == 100 * s.eed
    hyps = ["this is the prediction", "here is an other sample"]
    refs = [["this is the reference", "here is another one"]]
    r = mtscore.score(hyps, refs, metrics=["eed"])
    assert r.corpus["eed"].eed == EED().corpus_score(hyps, refs).eed
    assert abs(r.corpus["eed"].eed - 0.3078) < 1e-4  # torchmetrics' docstring example
    assert np.array_equal(EED(workers=3).corpus_stats(hyps * 200, [refs[0] * 200]),
                          EED().corpus_stats(hyps * 200, [refs[0] * 200]))
