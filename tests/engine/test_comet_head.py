"""COMET's estimator head (mtscore.engine.comet.head): the feature layouts of the three classes checked
element by element on tiny vectors; the numpy float32 head against torch modules built the way
unbabel-comet 2.2.7's FeedForward builds them (same weights, 1e-6); the ONNX head (onnxruntime CPU)
against the numpy head; the pairwise (MBR) utilities against the explicit triples; error messages."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from comet_fixtures import (
    HIDDEN_SIZES,
    HPARAMS,
    TINY,
    as_numpy,
    state_dict,
    tiny_config,
    write_encoder_folder,
    write_model_folder,
)

from mtscore.engine.checkpoints import read_hparams
from mtscore.engine.comet import (
    FEATURES,
    CometSpec,
    EncoderDims,
    EstimatorLayer,
    comet_spec,
    load_comet_spec,
    resolve_comet_model,
)
from mtscore.engine.comet.head import (
    build_head_graph,
    comet_features,
    head_inputs,
    head_scores,
    head_scores_pairs,
)

CLASSES = list(FEATURES)


def _dims(hidden: int) -> EncoderDims:
    return EncoderDims(hidden=hidden, layers=2, heads=1, intermediate=4, vocab=10, positions=10, type_vocab=1,
                       pad_token_id=1)


def _spec(cid: str, hidden: int = 8, hidden_sizes=(6, 4), act: str = "Tanh", final: str | None = None,
          seed: int = 0, scale: float = 0.5) -> CometSpec:
    """A spec-shaped head with random float32 weights (the encoder parts are not used by the head)."""
    rng = np.random.default_rng(seed)
    sizes = [len(FEATURES[cid]) * hidden, *hidden_sizes, 1]
    layers = tuple(EstimatorLayer((rng.standard_normal((sizes[j + 1], sizes[j])) * scale).astype(np.float32),
                                  rng.standard_normal(sizes[j + 1]).astype(np.float32),
                                  act if j < len(sizes) - 2 else final) for j in range(len(sizes) - 1))
    return CometSpec(class_identifier=cid, dims=_dims(hidden), layer=None, mix="softmax", layer_norm=False,
                     scalar_parameters=np.zeros(3, np.float32), gamma=1.0, pool="avg", features=FEATURES[cid],
                     estimator=layers, encoder_config={}, encoder_weights={}, head_only=True)


def _embeddings(cid: str, batch: int, hidden: int, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal((batch, hidden)).astype(np.float32) for n in head_inputs(FEATURES[cid])}


def _feats(cid: str, spec_or_features, e: dict[str, np.ndarray]) -> np.ndarray:
    if cid == "unified_metric":
        return comet_features(spec_or_features, e["joint"])
    return comet_features(spec_or_features, e["mt"], e["src"], e.get("ref"))


# --- torch references: unbabel-comet 2.2.7's code, restated --------------------------------------------

def _torch_features(torch, cid: str, e: dict[str, np.ndarray]):
    t = {k: torch.from_numpy(v) for k, v in e.items()}
    if cid == "regression_metric":  # RegressionMetric.estimate
        mt, src, ref = t["mt"], t["src"], t["ref"]
        return torch.cat((mt, ref, mt * ref, torch.abs(mt - ref), mt * src, torch.abs(mt - src)), dim=1)
    if cid == "referenceless_regression_metric":  # ReferencelessRegression.forward
        mt, src = t["mt"], t["src"]
        return torch.cat((mt, src, mt * src, torch.abs(mt - src)), dim=1)
    return t["joint"]  # UnifiedMetric.forward: sentemb = embeddings[:, 0, :]


def _torch_feedforward(torch, spec: CometSpec):
    """comet.modules.feedforward.FeedForward's nn.Sequential (activations by getattr(nn, name.title()))
    holding the spec's weights, in eval mode."""
    nn = torch.nn
    modules = []
    for layer in spec.estimator:
        out, inp = layer.shape
        lin = nn.Linear(inp, out)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(layer.weight))
            lin.bias.copy_(torch.from_numpy(layer.bias))
        modules.append(lin)
        if layer.activation is not None:
            modules.append(getattr(nn, layer.activation.title())())
        if layer is not spec.estimator[-1]:
            modules.append(nn.Dropout(0.1))
    return nn.Sequential(*modules).eval()


# --- features -----------------------------------------------------------------------------------------

def test_regression_features_element_by_element():
    mt = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    src = np.array([[4.0, 1.0], [-1.0, 2.0]], np.float32)
    ref = np.array([[2.0, -5.0], [0.25, 3.0]], np.float32)
    f = comet_features(FEATURES["regression_metric"], mt, src, ref)
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f, np.array([
        # mt        ref          mt*ref       |mt-ref|    mt*src       |mt-src|
        [1.0, -2.0, 2.0, -5.0, 2.0, 10.0, 1.0, 3.0, 4.0, -2.0, 3.0, 3.0],
        [0.5, 3.0, 0.25, 3.0, 0.125, 9.0, 0.25, 0.0, -0.5, 6.0, 1.5, 1.0],
    ], np.float32))


def test_referenceless_features_element_by_element():
    mt = np.array([[1.0, -2.0, 0.0]], np.float32)
    src = np.array([[3.0, 2.0, -1.5]], np.float32)
    f = comet_features(FEATURES["referenceless_regression_metric"], mt, src)
    #                      mt               src               mt*src            |mt-src|
    np.testing.assert_array_equal(f, [[1.0, -2.0, 0.0, 3.0, 2.0, -1.5, 3.0, -4.0, -0.0, 2.0, 4.0, 1.5]])


def test_unified_features_are_the_joint_embedding():
    joint = np.array([[1.5, -2.0], [0.0, 7.0]], np.float64)
    f = comet_features(FEATURES["unified_metric"], joint)
    assert f.dtype == np.float32
    assert f.shape == (2, 2)
    np.testing.assert_array_equal(f, joint.astype(np.float32))


@pytest.mark.parametrize("cid", CLASSES)
def test_features_equal_comets_torch_cat(cid):
    torch = pytest.importorskip("torch")
    e = _embeddings(cid, 5, 8)
    np.testing.assert_array_equal(_feats(cid, _spec(cid), e), _torch_features(torch, cid, e).numpy())


def test_head_inputs_per_class():
    assert head_inputs(FEATURES["regression_metric"]) == ("mt", "src", "ref")
    assert head_inputs(FEATURES["referenceless_regression_metric"]) == ("mt", "src")
    assert head_inputs(_spec("unified_metric")) == ("joint",)


# --- the feed-forward -----------------------------------------------------------------------------------

@pytest.mark.parametrize("cid", CLASSES)
@pytest.mark.parametrize(("act", "final", "hidden_sizes"), [
    ("Tanh", None, (6, 4)),          # every released model
    ("Tanh", "Sigmoid", (5,)),       # a final activation (e.g. a [0, 1] model)
    ("Sigmoid", "Sigmoid", (7, 3, 2)),
])
def test_numpy_head_equals_torch_feedforward(cid, act, final, hidden_sizes):
    torch = pytest.importorskip("torch")
    spec = _spec(cid, act=act, final=final, hidden_sizes=hidden_sizes, seed=len(hidden_sizes))
    e = _embeddings(cid, 33, 8, seed=7)
    got = head_scores(spec, _feats(cid, spec, e))
    with torch.no_grad():
        want = _torch_feedforward(torch, spec)(_torch_features(torch, cid, e)).view(-1).numpy()
    assert got.dtype == np.float32
    assert got.shape == (33,)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert np.ptp(got) > 1e-3  # the scores differ between rows (1000x the tolerance: not a comparison of constants)
    if final == "Sigmoid":
        assert ((got > 0) & (got < 1)).all()


@pytest.mark.parametrize("cid", CLASSES)
def test_head_from_a_checkpoints_spec_equals_torch(tmp_path, cid):
    """Through comet_spec: the estimator.ff.{0,3,6} tensors loaded by name into COMET's Sequential."""
    torch = pytest.importorskip("torch")
    f = tmp_path / "hparams.yaml"
    f.write_text(HPARAMS[cid])
    sd = state_dict(cid)
    spec = comet_spec(read_hparams(f), tiny_config(), as_numpy(sd))
    ff = _torch_feedforward(torch, spec)
    ff.load_state_dict({k[len("estimator.ff."):]: v for k, v in sd.items() if k.startswith("estimator.ff.")})
    e = _embeddings(cid, 6, TINY["hidden_size"], seed=3)
    with torch.no_grad():
        want = ff(_torch_features(torch, cid, e)).view(-1).numpy()
    np.testing.assert_allclose(head_scores(spec, _feats(cid, spec, e)), want, rtol=1e-6, atol=1e-6)
    assert len(spec.estimator) == len(HIDDEN_SIZES[cid]) + 1


def test_head_is_float32_and_per_row():
    spec = _spec("regression_metric")
    e = _embeddings("regression_metric", 9, 8)
    f = _feats("regression_metric", spec, e)
    whole = head_scores(spec, f)
    assert whole.dtype == np.float32
    rows = np.concatenate([head_scores(spec, f[i:i + 1]) for i in range(9)])
    np.testing.assert_allclose(whole, rows, rtol=1e-6, atol=1e-6)
    # float64 features are computed in float32 (no promotion)
    assert head_scores(spec, f.astype(np.float64)).dtype == np.float32


def test_sigmoid_does_not_overflow():
    spec = _spec("unified_metric", hidden_sizes=(1,), final="Sigmoid")
    big = np.float32(1e4)
    layers = (EstimatorLayer(np.full((1, 8), 1.0, np.float32), np.zeros(1, np.float32), None),
              EstimatorLayer(np.array([[1.0]], np.float32), np.zeros(1, np.float32), "Sigmoid"))
    spec = CometSpec(**{**spec.__dict__, "estimator": layers})
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        got = head_scores(spec, np.array([[big] * 8, [-big] * 8, [0.0] * 8], np.float32))
    np.testing.assert_array_equal(got, np.array([1.0, 0.0, 0.5], np.float32))


# --- the ONNX head --------------------------------------------------------------------------------------

@pytest.mark.parametrize("cid", CLASSES)
@pytest.mark.parametrize("final", [None, "Sigmoid"])
def test_onnx_head_equals_numpy_head(cid, final):
    ort = pytest.importorskip("onnxruntime")
    spec = _spec(cid, final=final, seed=5)
    model = build_head_graph(spec)
    assert [i.name for i in model.graph.input] == list(head_inputs(spec))
    assert [o.name for o in model.graph.output] == ["score"]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 17):
        e = _embeddings(cid, batch, 8, seed=batch)
        (got,) = sess.run(["score"], e)
        assert got.dtype == np.float32
        assert got.shape == (batch,)
        np.testing.assert_allclose(got, head_scores(spec, _feats(cid, spec, e)), rtol=1e-6, atol=1e-6)


# --- pairwise (MBR) utilities ------------------------------------------------------------------------------

@pytest.mark.parametrize("factored", [True, False])
@pytest.mark.parametrize("block_rows", [1, 7, 4096])
@pytest.mark.parametrize("final", [None, "Sigmoid"])
def test_pairs_equal_the_explicit_triples(block_rows, factored, final):
    spec = _spec("regression_metric", seed=2, final=final)
    rng = np.random.default_rng(4)
    hyp = rng.standard_normal((5, 8)).astype(np.float32)
    refs = rng.standard_normal((3, 8)).astype(np.float32)
    src = rng.standard_normal(8).astype(np.float32)
    got = head_scores_pairs(spec, hyp, refs, src, block_rows=block_rows, factored=factored)
    assert got.shape == (5, 3)
    assert got.dtype == np.float32
    for i in range(5):
        for j in range(3):
            one = head_scores(spec, comet_features(spec, hyp[i:i + 1], src[None], refs[j:j + 1]))
            np.testing.assert_allclose(got[i, j], one[0], rtol=1e-6, atol=1e-6)
    assert len(np.unique(got)) == 15
    # the diagonal of hyp against itself is a real score, not a special case
    square = head_scores_pairs(spec, hyp, hyp, src[None], factored=factored)
    np.testing.assert_allclose(np.diag(square), head_scores(spec, comet_features(spec, hyp, np.tile(src, (5, 1)), hyp)),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("final", [None, "Sigmoid"])
def test_onnx_pairs_graph_equals_numpy_pairs(final):
    ort = pytest.importorskip("onnxruntime")
    spec = _spec("regression_metric", final=final, seed=6)
    model = build_head_graph(spec, pairs=True)
    assert [i.name for i in model.graph.input] == ["mt", "src", "ref"]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(8)
    for n, m in ((4, 3), (1, 1), (6, 6)):
        hyp = rng.standard_normal((n, 8)).astype(np.float32)
        refs = rng.standard_normal((m, 8)).astype(np.float32)
        src = rng.standard_normal((1, 8)).astype(np.float32)
        (got,) = sess.run(["score"], {"mt": hyp, "ref": refs, "src": src})
        assert got.shape == (n, m)
        np.testing.assert_allclose(got, head_scores_pairs(spec, hyp, refs, src, factored=False), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match=r"^unified_metric: pairwise \(MBR\) utilities need a model with references"):
        build_head_graph(_spec("unified_metric"), pairs=True)


def test_pairs_refused_for_models_without_references():
    for cid in ("referenceless_regression_metric", "unified_metric"):
        with pytest.raises(ValueError, match=rf"^{cid}: pairwise \(MBR\) utilities need a model with references"):
            head_scores_pairs(_spec(cid), np.zeros((2, 8)), np.zeros((2, 8)), np.zeros(8))
    with pytest.raises(ValueError, match=r"^regression_metric: the sources' embeddings \(s\): \[2, 8\]: expected the "
                                         r"one source, \[H\] or \[1, H\]$"):
        head_scores_pairs(_spec("regression_metric"), np.zeros((2, 8)), np.zeros((2, 8)), np.zeros((2, 8)))
    with pytest.raises(ValueError, match=r"^block_rows: 0: expected a positive number of rows$"):
        head_scores_pairs(_spec("regression_metric"), np.zeros((2, 8)), np.zeros((2, 8)), np.zeros(8), block_rows=0)


# --- errors -------------------------------------------------------------------------------------------------

def test_missing_and_unused_inputs_are_named():
    spec = _spec("regression_metric")
    h = np.zeros((2, 8), np.float32)
    with pytest.raises(ValueError, match=r"^regression_metric: the references' embeddings \(r\) are missing: the "
                                         r"regression_metric head needs the translations' embeddings \(h\), the "
                                         r"sources' embeddings \(s\), the references' embeddings \(r\)$"):
        comet_features(spec, h, h)
    with pytest.raises(ValueError, match=r"^regression_metric: the sources' embeddings \(s\) are missing"):
        comet_features(spec, h, None, h)
    with pytest.raises(ValueError, match=r"^referenceless_regression_metric: the references' embeddings \(r\) were "
                                         r"given, but the referenceless_regression_metric head does not use them"):
        comet_features(_spec("referenceless_regression_metric"), h, h, h)
    with pytest.raises(ValueError, match=r"^unified_metric: the sources' embeddings \(s\) were given"):
        comet_features(_spec("unified_metric"), h, h)


def test_shape_mismatches_are_named():
    spec = _spec("referenceless_regression_metric")
    h = np.zeros((2, 8), np.float32)
    with pytest.raises(ValueError, match=r"^referenceless_regression_metric: the sources' embeddings \(s\): 3 rows, "
                                         r"but the translations' embeddings \(h\) have 2$"):
        comet_features(spec, h, np.zeros((3, 8), np.float32))
    with pytest.raises(ValueError, match=r"the sources' embeddings \(s\): width 7, expected the encoder's hidden "
                                         r"size 8$"):
        comet_features(spec, h, np.zeros((2, 7), np.float32))
    with pytest.raises(ValueError, match=r"the translations' embeddings \(h\): width 6, expected the encoder's "
                                         r"hidden size 8$"):
        comet_features(spec, np.zeros((2, 6)), np.zeros((2, 6)))
    with pytest.raises(ValueError, match=r"the translations' embeddings \(h\): expected a float \[batch, hidden\] "
                                         r"array, got float32 \[8\]$"):
        comet_features(spec, np.zeros(8, np.float32), h)
    with pytest.raises(ValueError, match=r"^features \('mt', 'src'\): not a COMET feature layout"):
        comet_features(("mt", "src"), h, h)
    with pytest.raises(ValueError, match=r"^referenceless_regression_metric: features \[2, 24\]: expected "
                                         r"\[batch, 32\] \(4 x hidden 8\)$"):
        head_scores(spec, np.zeros((2, 24), np.float32))


def test_inconsistent_estimators_are_refused():
    spec = _spec("unified_metric")
    bad = (spec.estimator[0], EstimatorLayer(np.zeros((1, 5), np.float32), np.zeros(1, np.float32), None))
    with pytest.raises(ValueError, match=r"^unified_metric: estimator layer 1: weight \[1, 5\] bias \[1\] do not "
                                         r"take 6 inputs$"):
        head_scores(CometSpec(**{**spec.__dict__, "estimator": bad}), np.zeros((1, 8), np.float32))
    two = (EstimatorLayer(np.zeros((2, 8), np.float32), np.zeros(2, np.float32), None),)
    with pytest.raises(ValueError, match=r"^unified_metric: the estimator's last layer has 2 outputs, expected 1$"):
        build_head_graph(CometSpec(**{**spec.__dict__, "estimator": two}))
    relu = (EstimatorLayer(np.zeros((1, 8), np.float32), np.zeros(1, np.float32), "Relu"),)
    with pytest.raises(ValueError, match=r"^estimator layer 0: activation 'Relu' is not supported"):
        head_scores(CometSpec(**{**spec.__dict__, "estimator": relu}), np.zeros((1, 8), np.float32))


def test_scoring_path_needs_no_torch(tmp_path):
    """A model folder scored (numpy head and ONNX head) in a process where importing torch fails."""
    pytest.importorskip("onnxruntime")
    folder = write_model_folder(tmp_path / "da", "regression_metric")
    enc = write_encoder_folder(tmp_path / "enc")
    spec = load_comet_spec(resolve_comet_model(folder, encoder=enc))
    e = _embeddings("regression_metric", 4, TINY["hidden_size"], seed=9)
    np.savez(tmp_path / "e.npz", **e)
    want = head_scores(spec, comet_features(spec, e["mt"], e["src"], e["ref"]))
    code = ("import sys; sys.modules['torch'] = None; sys.modules['transformers'] = None\n"
            "import numpy as np, onnxruntime as ort\n"
            "from mtscore.engine.comet import resolve_comet_model, load_comet_spec\n"
            "from mtscore.engine.comet.head import comet_features, head_scores, build_head_graph\n"
            f"s = load_comet_spec(resolve_comet_model({str(folder)!r}, encoder={str(enc)!r}))\n"
            f"e = dict(np.load({str(tmp_path / 'e.npz')!r}))\n"
            "a = head_scores(s, comet_features(s, e['mt'], e['src'], e['ref']))\n"
            "g = ort.InferenceSession(build_head_graph(s).SerializeToString(), providers=['CPUExecutionProvider'])\n"
            "b = g.run(['score'], e)[0]\n"
            "print(' '.join(map(repr, a.tolist() + b.tolist())))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    got = np.array([float(v) for v in out.stdout.split()], np.float32)
    np.testing.assert_array_equal(got[:4], want)
    np.testing.assert_allclose(got[4:], want, rtol=1e-6, atol=1e-6)
