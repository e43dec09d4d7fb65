"""COMET as a registry metric (mtscore.engine.comet.metric.COMET) on the golden models of
tests/golden/comet: the metric's segment and corpus scores equal unbabel-comet 2.2.7's golden
scores; several references by mean / max, computed by hand from single-reference scores; the
sources' checks; ``mtscore.score(..., metrics=["comet"])`` and chunking; the segment-score
significance path."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

import mtscore
from mtscore.engine.comet.metric import COMET
from mtscore.engine.comet.scorer import CometInputError, CometReferencesIgnoredWarning, load_comet
from mtscore.engine.metrics.registry import make_metric, metric_name
from tests.comet_golden import ENCODER, GOLDEN, golden, golden_inputs

N = 40  # segments used (the golden file has 313)


@pytest.fixture(scope="module")
def scorers(tmp_path_factory) -> dict:
    golden()
    cache = tmp_path_factory.mktemp("comet-cache")
    return {m: load_comet(GOLDEN / "models" / m, encoder=ENCODER, cache_dir=cache)
            for m in ("regression-sparsemax", "referenceless-cls")}


def test_metric_reproduces_the_golden_scores(scorers):
    g = golden()["models"]["regression-sparsemax"]["scores"][:N]
    d = golden_inputs(N)
    m = COMET(scorer=scorers["regression-sparsemax"], sources=d["src"])
    stats = m.corpus_stats(d["mt"], [d["ref"]])
    assert stats.shape == (N, 2)
    assert stats.dtype == np.float64
    np.testing.assert_allclose(m.scores_from_stats(stats), g, atol=1e-5, rtol=0)
    sc = m.corpus_score(d["mt"], [d["ref"]])
    assert sc.name == "COMET"
    assert sc.count == N
    assert sc.score == pytest.approx(float(np.mean(g)), abs=1e-6)
    assert metric_name(m) == "comet"
    sig = m.get_signature().format()
    sha = scorers["regression-sparsemax"].checkpoint_sha256[:12]
    enc = scorers["regression-sparsemax"].files.encoder_sha256()[:12]  # encoder= given: its files' hash
    assert sig == (f"nrefs:1|model:regression-sparsemax|hash:{sha}|enc:{enc}|prec:fp32|multi:mean|"
                   f"version:mtscore-{mtscore.__version__}")


def test_several_references_mean_and_max_by_hand(scorers):
    d = golden_inputs(N)
    s = scorers["regression-sparsemax"]
    other = d["ref"][1:] + d["ref"][:1]  # a second, wrong reference per segment
    other[3] = None  # segment 3 has one reference only
    one = s.score(d["mt"], sources=d["src"], references=d["ref"])
    have = [i for i in range(N) if other[i] is not None]
    two = np.full(N, np.nan)
    two[have] = s.score([d["mt"][i] for i in have], sources=[d["src"][i] for i in have],
                        references=[other[i] for i in have])
    for how, want in (("mean", np.where(np.isnan(two), one, (one + two) / 2)),
                      ("max", np.where(np.isnan(two), one, np.maximum(one, two)))):
        m = COMET(scorer=s, sources=d["src"], multi_ref=how)
        got = m.scores_from_stats(m.corpus_stats(d["mt"], [d["ref"], other]))
        np.testing.assert_allclose(got, want, atol=1e-12, rtol=0)
        assert "nrefs:2|" in m.get_signature().format()
        assert f"multi:{how}" in m.get_signature().format()
    assert not np.allclose(one, two[~np.isnan(two)].mean())  # the second reference changes scores


def test_referenceless_ignores_references_with_a_warning(scorers):
    g = golden()["models"]["referenceless-cls"]["scores"][:N]
    d = golden_inputs(N)
    m = COMET(scorer=scorers["referenceless-cls"], sources=d["src"])
    with pytest.warns(CometReferencesIgnoredWarning, match="references: ignored"):
        got = m.scores_from_stats(m.corpus_stats(d["mt"], [d["ref"]]))
    np.testing.assert_allclose(got, g, atol=1e-5, rtol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(m.scores_from_stats(m.corpus_stats(d["mt"])), g, atol=1e-5, rtol=0)


def test_input_errors_name_the_option(scorers):
    d = golden_inputs(N)
    s = scorers["regression-sparsemax"]
    with pytest.raises(CometInputError, match="--comet-model"):
        COMET()
    with pytest.raises(CometInputError, match="--comet-multi-ref"):
        COMET(scorer=s, sources=d["src"], multi_ref="min")
    with pytest.raises(CometInputError, match=r"sources: missing.*--source"):
        COMET(scorer=s).corpus_stats(d["mt"], [d["ref"]])
    with pytest.raises(CometInputError, match="sources"):
        COMET(scorer=s, sources="one string")
    m = COMET(scorer=s, sources=d["src"])
    prepared = m.prepare([d["ref"]])
    with pytest.raises(CometInputError, match="5 hypotheses but 40 source"):
        m.stats(d["mt"][:5], prepared)
    with pytest.raises(CometInputError, match="references: missing"):
        COMET(scorer=s, sources=d["src"]).corpus_stats(d["mt"])


def test_sources_and_references_must_have_the_same_length(scorers):
    """A source list longer than the references (an extra header line, another test set) is an
    error, not a silent shift; scoring a subset twice on one metric object gives the same scores
    (no position kept between calls)."""
    d = golden_inputs(N)
    s = scorers["regression-sparsemax"]
    m = COMET(scorer=s, sources=d["src"])
    with pytest.raises(CometInputError, match="2 reference segments but 40 source segments"):
        m.corpus_stats(d["mt"][:2], [d["ref"][:2]])
    with pytest.raises(CometInputError, match="2 reference segments but 40 source segments"):
        m.corpus_stats(d["mt"][:2], [d["ref"][:2]])   # the same error again: nothing was consumed
    two = COMET(scorer=s, sources=d["src"][:2])
    first = two.corpus_score(d["mt"][:2], [d["ref"][:2]]).score
    assert two.corpus_score(d["mt"][:2], [d["ref"][:2]]).score == first
    want = s.score(d["mt"][:2], sources=d["src"][:2], references=d["ref"][:2]).mean()
    assert first == pytest.approx(want, abs=1e-12)
    # the batch API: chunks take their own sources by offset; a longer source list is refused
    with pytest.raises(ValueError, match="comet: 41 source segments but the corpus has 40 segments"):
        mtscore.score(d["mt"], [d["ref"]], metrics=[COMET(scorer=s, sources=d["src"] + ["extra"])], chunk_size=7)
    with pytest.raises(CometInputError, match=r"references of segments 35\.\.41 but only 40 sources"):
        COMET(scorer=s, sources=d["src"]).prepare([d["ref"][:7]], offset=35)


def test_score_api_with_chunks_equals_one_call(scorers):
    """mtscore.score(metrics=["comet"]) with the registry's options; a chunk_size that cuts the
    corpus gives the same segment scores (the sources follow the chunks: a source shifted by one
    segment would change the scores by far more than 1e-6)."""
    g = golden()["models"]["regression-sparsemax"]["scores"][:N]
    d = golden_inputs(N)
    opts = {"comet": {"model": str(GOLDEN / "models" / "regression-sparsemax"), "encoder": str(ENCODER),
                      "sources": d["src"]}}
    whole = mtscore.score({"a": d["mt"], "b": d["ref"]}, [d["ref"]], metrics=["comet"], metric_kwargs=opts)
    np.testing.assert_allclose(whole.segments.column("comet").to_numpy()[:N], g, atol=1e-5, rtol=0)
    assert whole.corpus["a"]["comet"].score == pytest.approx(float(np.mean(g)), abs=1e-6)
    chunked = mtscore.score({"a": d["mt"], "b": d["ref"]}, [d["ref"]], metrics=["comet"], metric_kwargs=opts,
                            chunk_size=7)
    # equal up to float noise: other chunks pad other batches (scorer.py: batching-independent)
    np.testing.assert_allclose(chunked.segments.column("comet").to_numpy(),
                               whole.segments.column("comet").to_numpy(), atol=1e-6, rtol=0)
    assert isinstance(make_metric("comet", scorer=scorers["regression-sparsemax"], sources=d["src"]), COMET)


def test_paired_bootstrap_on_segment_scores(scorers):
    """Two systems' COMET segment scores through the significance adapter (mean aggregate)."""
    d = golden_inputs(N)
    s = scorers["regression-sparsemax"]
    m = COMET(scorer=s, sources=d["src"])
    a = m.scores_from_stats(m.corpus_stats(d["mt"], [d["ref"]]))
    b = m.scores_from_stats(m.corpus_stats(d["src"], [d["ref"]]))  # the source as a poor "translation"
    res = mtscore.compare_segment_scores({"mt": a, "src": b}, test="bs", n=200, seed=1, name="comet")
    r = res.results["comet"]
    assert r[0].score == pytest.approx(float(a.mean()), abs=1e-12)
    assert r[1].score == pytest.approx(float(b.mean()), abs=1e-12)
    assert r[1].p_value is not None
    assert 0 < r[1].p_value <= 1
    assert r[0].ci > 0


def test_public_names():
    """mtscore.COMET (the registry's export) and the mtscore.comet module name the engine's objects."""
    import mtscore.comet as mc

    assert mtscore.COMET is COMET
    assert mc.COMET is COMET
    assert mc.load_comet is load_comet
    assert sorted(mc.__all__) == sorted(n for n in mc.__all__ if hasattr(mc, n))
    assert mc.MULTI_REF == ("mean", "max")


def test_embedding_cache_reaches_the_loaded_scorer(tmp_path, monkeypatch):
    """``COMET(model=..., embedding_cache=N)`` loads its scorer with that memo size: 0 keeps nothing
    between two systems, the default keeps every text of the first; a bad size is refused by name."""
    golden()
    monkeypatch.setenv("MTSCORE_CACHE", str(tmp_path))  # the export goes to a fresh cache
    d = golden_inputs(8)
    kw = {"encoder": ENCODER, "sources": d["src"]}
    off = COMET(GOLDEN / "models" / "regression-sparsemax", embedding_cache=0, **kw)
    on = COMET(GOLDEN / "models" / "regression-sparsemax", **kw)
    assert (off.scorer.embedding_cache, on.scorer.embedding_cache) == (0, 65536)
    for m in (off, on):
        m.corpus_stats(d["mt"], [d["ref"]])
    assert off.scorer.cached_embeddings == 0
    assert on.scorer.cached_embeddings == len(set(d["mt"]) | set(d["src"]) | set(d["ref"]))
    with pytest.raises(CometInputError, match="embedding_cache"):
        COMET(GOLDEN / "models" / "regression-sparsemax", embedding_cache=-1, **kw)
