"""The architecture of a COMET model (mtscore.engine.comet.spec) from hparams.yaml, config.json and the
checkpoint: for each of the three classes the class, encoder dims, layer mix (softmax / sparsemax /
a single layer), layer norm flag, pooling, feature layout and estimator layers; the encoder tensors
are exactly transformers' XLMRobertaModel(add_pooling_layer=False) parameters and, handed to the
ONNX builder, give transformers' hidden states; missing / unexpected / misshaped / non-float tensors
are one CheckpointError listing the first few; reading a model needs no torch. The head-only spec (a warm
load's, from the cached head) is the same spec without the encoder weights, checked the same way, and
never builds a graph."""
from __future__ import annotations

import dataclasses
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
    tiny_encoder,
    with_key,
    write_encoder_folder,
    write_model_folder,
)

from mtscore.engine.checkpoints import CheckpointError, read_hparams
from mtscore.engine.comet import (
    FEATURES,
    CometSpec,
    build_comet_embedding_graph,
    comet_spec,
    export_comet_embedding,
    load_comet_spec,
    resolve_comet_model,
)
from mtscore.engine.comet.export import cached_comet_embedding
from mtscore.engine.comet.spec import comet_head_spec, head_tensors


def _hp(tmp_path: Path, cid: str, **changes: str | None) -> dict:
    text = HPARAMS[cid]
    for k, v in changes.items():
        text = with_key(text, k, v)
    f = tmp_path / f"hparams-{len(list(tmp_path.glob('hparams-*')))}.yaml"
    f.write_text(text)
    return read_hparams(f)


def _spec(tmp_path, cid, sd=None, config=None, **changes) -> CometSpec:
    sd = as_numpy(state_dict(cid)) if sd is None else sd
    return comet_spec(_hp(tmp_path, cid, **changes), tiny_config() if config is None else config, sd,
                      hparams_path="m/hparams.yaml", config_path="enc/config.json", checkpoint_path="m/model.ckpt")


@pytest.mark.parametrize(("cid", "mix", "layer_norm", "n_features", "pool"), [
    ("regression_metric", "sparsemax", False, 6, "avg"),               # wmt22-comet-da
    ("referenceless_regression_metric", "softmax", True, 4, "avg"),    # wmt20-comet-qe-da
    ("unified_metric", "softmax", False, 1, "cls"),                     # wmt22-cometkiwi-da: sparsemax_patch
])
def test_spec_of_each_class(tmp_path, cid, mix, layer_norm, n_features, pool):
    sd = state_dict(cid)
    spec = _spec(tmp_path, cid, as_numpy(sd))
    assert spec.class_identifier == cid
    assert (spec.dims.hidden, spec.dims.layers, spec.dims.heads, spec.dims.intermediate) == (8, 2, 2, 16)
    assert (spec.dims.vocab, spec.dims.positions, spec.dims.type_vocab, spec.dims.pad_token_id) == (24, 14, 1, 1)
    assert spec.layer is None
    assert spec.mix == mix
    assert spec.layer_norm is layer_norm
    assert spec.pool == pool
    assert spec.features == FEATURES[cid]
    assert len(spec.features) == n_features
    assert spec.feature_dim == n_features * 8
    want_scalars = np.array([sd[f"layerwise_attention.scalar_parameters.{i}"].item() for i in range(3)], np.float32)
    np.testing.assert_array_equal(spec.scalar_parameters, want_scalars)
    assert spec.scalar_parameters.dtype == np.float32
    assert spec.gamma == 1.25
    sizes = [n_features * 8, *HIDDEN_SIZES[cid], 1]
    assert [layer.shape for layer in spec.estimator] == [(sizes[j + 1], sizes[j]) for j in range(3)]
    assert [layer.activation for layer in spec.estimator] == ["Tanh", "Tanh", None]
    for j, layer in enumerate(spec.estimator):
        np.testing.assert_array_equal(layer.weight, sd[f"estimator.ff.{3 * j}.weight"].numpy())
        np.testing.assert_array_equal(layer.bias, sd[f"estimator.ff.{3 * j}.bias"].numpy())
        assert layer.weight.dtype == np.float32
    assert spec.ignored == ()
    assert spec.encoder_config["model_type"] == "xlm-roberta"
    assert spec.encoder_config["hidden_size"] == 8


def test_features_are_unbabel_comets_concatenations():
    assert FEATURES["regression_metric"] == ("mt", "ref", "mt*ref", "|mt-ref|", "mt*src", "|mt-src|")
    assert FEATURES["referenceless_regression_metric"] == ("mt", "src", "mt*src", "|mt-src|")
    assert FEATURES["unified_metric"] == ("joint",)


def test_mix_kind_pool_and_activations_follow_hparams(tmp_path):
    cid = "regression_metric"
    assert _spec(tmp_path, cid, layer_transformation="softmax").mix == "softmax"
    assert _spec(tmp_path, cid, layer_transformation="sparsemax_patch").mix == "softmax"
    assert _spec(tmp_path, cid, layer_norm="true").layer_norm is True
    assert _spec(tmp_path, cid, pool="cls").pool == "cls"
    assert _spec(tmp_path, cid, pool="max").pool == "max"
    assert _spec(tmp_path, "referenceless_regression_metric", pool="max").pool == "max"
    # default (the encoder's own sentemb) still has the mix: its tensors are in the checkpoint
    d = _spec(tmp_path, cid, pool="default")
    assert (d.pool, d.layer, d.mix) == ("default", None, "sparsemax")
    assert d.scalar_parameters is not None
    assert d.scalar_parameters.shape == (3,)
    no_mix = {k: v for k, v in as_numpy(state_dict(cid)).items() if not k.startswith("layerwise_attention.")}
    d1 = _spec(tmp_path, cid, no_mix, pool="default", layer="1")
    assert (d1.pool, d1.layer, d1.mix) == ("default", 1, None)
    s = _spec(tmp_path, cid, activations="sigmoid", final_activation="Sigmoid")
    assert [layer.activation for layer in s.estimator] == ["Sigmoid", "Sigmoid", "Sigmoid"]
    # unified_metric takes the first token whatever pool says (kiwi's file says avg)
    assert _spec(tmp_path, "unified_metric", pool="avg").pool == "cls"


@pytest.mark.parametrize("hidden_sizes", [[5], [9, 7, 3]])
def test_estimator_layers_follow_hidden_sizes(tmp_path, hidden_sizes):
    torch = pytest.importorskip("torch")
    cid = "referenceless_regression_metric"
    sd = {k: v for k, v in as_numpy(state_dict(cid)).items() if not k.startswith("estimator.")}
    sizes = [32, *hidden_sizes, 1]
    for j in range(len(sizes) - 1):  # Linear, Tanh, Dropout per hidden size: ff.0, ff.3, ff.6, ff.9
        sd[f"estimator.ff.{3 * j}.weight"] = torch.ones(sizes[j + 1], sizes[j]).numpy() * j
        sd[f"estimator.ff.{3 * j}.bias"] = torch.zeros(sizes[j + 1]).numpy()
    text = "[" + ", ".join(map(str, hidden_sizes)) + "]"
    spec = _spec(tmp_path, cid, sd, hidden_sizes=text)
    assert [layer.shape for layer in spec.estimator] == [(sizes[j + 1], sizes[j]) for j in range(len(sizes) - 1)]
    assert [float(layer.weight.flat[0]) for layer in spec.estimator] == list(range(len(sizes) - 1))
    assert [layer.activation for layer in spec.estimator] == ["Tanh"] * len(hidden_sizes) + [None]


def test_single_layer_instead_of_the_mix(tmp_path):
    cid = "regression_metric"
    no_mix = as_numpy(state_dict(cid, mix=False))
    spec = _spec(tmp_path, cid, no_mix, layer="2", layer_norm=None, layer_transformation=None)
    assert spec.layer == 2
    assert spec.mix is None
    assert spec.scalar_parameters is None
    assert spec.gamma is None
    assert spec.layer_norm is False
    with pytest.raises(CheckpointError, match=r"unexpected: layerwise_attention\.scalar_parameters\.0, "
                                              r"layerwise_attention\.scalar_parameters\.1, "):
        _spec(tmp_path, cid, as_numpy(state_dict(cid)), layer="1")
    with pytest.raises(CheckpointError, match=r"^m/hparams\.yaml: layer: 3 is beyond the encoder's 2 layers "
                                              r"\(enc/config\.json\)$"):
        _spec(tmp_path, cid, no_mix, layer="3")


def test_missing_unexpected_and_misshaped_tensors_in_one_line(tmp_path):
    cid = "regression_metric"
    sd = as_numpy(state_dict(cid))
    del sd["layerwise_attention.gamma"]
    del sd["estimator.ff.6.bias"]
    sd["estimator.ff.9.weight"] = np.zeros((1, 4), np.float32)
    sd["encoder.model.embeddings.word_embeddings.weight"] = np.zeros((25, 8), np.float32)
    with pytest.raises(CheckpointError) as e:
        _spec(tmp_path, cid, sd)
    assert str(e.value) == (
        "m/model.ckpt: the tensors do not match the architecture of m/hparams.yaml and enc/config.json: "
        "missing: layerwise_attention.gamma, estimator.ff.6.bias; unexpected: estimator.ff.9.weight; "
        "wrong shape: encoder.model.embeddings.word_embeddings.weight [25, 8] (expected [24, 8])")


def test_only_the_first_few_are_listed(tmp_path):
    cid = "unified_metric"
    sd = {k: v for k, v in as_numpy(state_dict(cid)).items() if ".layer.1." not in k}  # one block gone
    with pytest.raises(CheckpointError, match=r"missing: encoder\.model\.encoder\.layer\.1\.attention\.self\.query"
                                              r"\.weight(, \S+){4} \(\+11 more\)$"):
        _spec(tmp_path, cid, sd)


def test_encoder_dims_are_checked_against_the_tensors(tmp_path):
    """A config.json that does not describe the checkpoint's encoder (another size, more layers)."""
    cid = "referenceless_regression_metric"
    cfg = dict(tiny_config(), intermediate_size=32)
    with pytest.raises(CheckpointError, match=r"wrong shape: encoder\.model\.encoder\.layer\.0\.intermediate\.dense"
                                              r"\.weight \[16, 8\] \(expected \[32, 8\]\)"):
        _spec(tmp_path, cid, config=cfg)
    cfg = dict(tiny_config(), num_hidden_layers=3)
    # 16 tensors of block 2 and the 4th mix scalar: 5 listed, 12 counted
    with pytest.raises(CheckpointError, match=r"missing: encoder\.model\.encoder\.layer\.2\.attention\.self\.query"
                                              r"\.weight(, \S+){4} \(\+12 more\)$"):
        _spec(tmp_path, cid, config=cfg)
    with pytest.raises(CheckpointError, match=r"^enc/config\.json: hidden_size 8 is not a multiple of "
                                              r"num_attention_heads 3$"):
        _spec(tmp_path, cid, config=dict(tiny_config(), num_attention_heads=3))
    with pytest.raises(CheckpointError, match=r"^enc/config\.json: hidden_act 'relu' is not supported"):
        _spec(tmp_path, cid, config=dict(tiny_config(), hidden_act="relu"))
    with pytest.raises(CheckpointError, match=r"^enc/config\.json: hidden_size: None: expected a non-negative"):
        _spec(tmp_path, cid, config={k: v for k, v in tiny_config().items() if k != "hidden_size"})


def test_known_unused_tensors_are_accepted_and_named(tmp_path):
    cid = "regression_metric"
    sd = as_numpy(state_dict(cid))
    sd["encoder.model.embeddings.position_ids"] = np.arange(14, dtype=np.int64)[None]
    sd["encoder.model.pooler.dense.weight"] = np.zeros((8, 8), np.float32)
    sd["encoder.model.pooler.dense.bias"] = np.zeros(8, np.float32)
    sd["layerwise_attention.dropout_mask"] = np.zeros(3, np.float32)
    sd["layerwise_attention.dropout_fill"] = np.full(3, -1e20, np.float32)
    spec = _spec(tmp_path, cid, sd)
    assert spec.ignored == ("encoder.model.embeddings.position_ids", "encoder.model.pooler.dense.weight",
                            "encoder.model.pooler.dense.bias", "layerwise_attention.dropout_mask",
                            "layerwise_attention.dropout_fill")
    assert "pooler.dense.weight" not in spec.encoder_weights
    assert "embeddings.position_ids" not in spec.encoder_weights
    sd["layerwise_attention.dropout_mask"] = np.zeros(25, np.float32)
    with pytest.raises(CheckpointError, match=r"wrong shape: layerwise_attention\.dropout_mask \[25\] "
                                              r"\(expected \[3\]\)"):
        _spec(tmp_path, cid, sd)


def test_integer_weights_are_refused(tmp_path):
    cid = "regression_metric"
    sd = as_numpy(state_dict(cid))
    sd["estimator.ff.0.bias"] = sd["estimator.ff.0.bias"].astype(np.int64)
    with pytest.raises(CheckpointError, match=r"not floating point: estimator\.ff\.0\.bias int64$"):
        _spec(tmp_path, cid, sd)


def test_fp16_checkpoint_is_widened(tmp_path):
    cid = "unified_metric"
    sd = {k: v.astype(np.float16) for k, v in as_numpy(state_dict(cid)).items()}
    spec = _spec(tmp_path, cid, sd)
    assert spec.estimator[0].weight.dtype == np.float32
    np.testing.assert_array_equal(spec.estimator[0].weight, sd["estimator.ff.0.weight"].astype(np.float32))
    assert spec.encoder_weights["embeddings.word_embeddings.weight"].dtype == np.float16  # as stored


def test_encoder_tensors_are_transformers_own_and_build_its_graph(tmp_path):
    """The encoder part: exactly XLMRobertaModel(add_pooling_layer=False)'s state dict, prefix stripped;
    handed to onnx_builder it computes transformers' hidden states."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    torch = pytest.importorskip("torch")
    from mtscore.engine.encoder.onnx_builder import build_encoder_graph

    cid = "regression_metric"
    spec = _spec(tmp_path, cid)
    enc = tiny_encoder(0)
    assert sorted(spec.encoder_weights) == sorted(enc.state_dict())
    for k, v in enc.state_dict().items():
        np.testing.assert_array_equal(spec.encoder_weights[k], v.numpy())
    ids = np.array([[0, 5, 9, 17, 2], [0, 23, 2, 1, 1]], dtype=np.int64)
    mask = (ids != 1).astype(np.int64)
    with torch.no_grad():
        want = enc(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                   output_hidden_states=True).hidden_states
    for layer in (0, 2):
        model = build_encoder_graph(spec.encoder_config, spec.encoder_weights, layer)
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        np.testing.assert_allclose(got[mask == 1], want[layer].numpy()[mask == 1], rtol=0, atol=2e-5)


def test_load_comet_spec_from_a_folder_and_without_torch(tmp_path):
    folder = write_model_folder(tmp_path / "kiwi", "unified_metric")
    enc = write_encoder_folder(tmp_path / "enc")
    spec = load_comet_spec(resolve_comet_model(folder, encoder=enc))
    assert spec.class_identifier == "unified_metric"
    assert spec.dims.layers == TINY["num_hidden_layers"]
    bad = write_model_folder(tmp_path / "bad", "unified_metric", sd=state_dict("regression_metric"))
    with pytest.raises(CheckpointError, match=r"bad/checkpoints/model\.ckpt: the tensors do not match the "
                                              r"architecture of .*bad/hparams\.yaml and .*enc/config\.json: "
                                              r"wrong shape: estimator\.ff\.0\.weight \[6, 48\] \(expected \[7, 8\]\)"):
        load_comet_spec(resolve_comet_model(bad, encoder=enc))
    # the same in a process where importing torch fails: the reading path does not need it
    code = ("import sys; sys.modules['torch'] = None; sys.modules['transformers'] = None\n"
            "from mtscore.engine.comet import resolve_comet_model, load_comet_spec\n"
            f"s = load_comet_spec(resolve_comet_model({str(folder)!r}, encoder={str(enc)!r}))\n"
            "print(s.class_identifier, s.mix, s.pool, s.feature_dim, len(s.encoder_weights))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["unified_metric", "softmax", "cls", "8", str(len(spec.encoder_weights))]


def test_relative_position_embeddings_are_refused(tmp_path):
    with pytest.raises(CheckpointError, match=r"^enc/config\.json: position_embedding_type 'relative_key' is not "
                                              r"supported \(XLM-R uses absolute\)$"):
        _spec(tmp_path, "regression_metric", config=dict(tiny_config(), position_embedding_type="relative_key"))


def _same_head(got: CometSpec, full: CometSpec) -> None:
    """``got`` is ``full`` without its encoder weights, every other field and array bit-identical."""
    assert got.head_only
    assert not full.head_only
    assert got.encoder_weights == {}
    for f in ("class_identifier", "dims", "layer", "mix", "layer_norm", "gamma", "pool", "features", "ignored",
              "encoder_config"):
        assert getattr(got, f) == getattr(full, f), f
    if full.scalar_parameters is None:
        assert got.scalar_parameters is None
    else:
        assert got.scalar_parameters is not None
        assert got.scalar_parameters.dtype == np.float32
        np.testing.assert_array_equal(got.scalar_parameters, full.scalar_parameters)
    assert len(got.estimator) == len(full.estimator)
    for a, b in zip(got.estimator, full.estimator):
        assert a.activation == b.activation
        assert a.weight.dtype == a.bias.dtype == np.float32
        np.testing.assert_array_equal(a.weight, b.weight)
        np.testing.assert_array_equal(a.bias, b.bias)


@pytest.mark.parametrize("cid", list(FEATURES))
def test_head_spec_rebuilds_the_spec_without_the_encoder(tmp_path, cid):
    """comet_head_spec(head_tensors(spec)): the same spec, bit for bit, without encoder weights; the
    head tensors are the checkpoint's own (names and values), and nothing of the encoder."""
    sd = as_numpy(state_dict(cid))
    hp = _hp(tmp_path, cid)
    full = comet_spec(hp, tiny_config(), sd)
    head = head_tensors(full)
    assert not any(k.startswith("encoder.") for k in head)
    assert sorted(head) == sorted(k for k in sd if not k.startswith("encoder."))
    for k, v in head.items():
        np.testing.assert_array_equal(v, sd[k].astype(np.float32))
    _same_head(comet_head_spec(hp, tiny_config(), head, full.ignored), full)


def test_head_spec_of_a_single_layer_model_and_with_ignored_tensors(tmp_path):
    cid = "regression_metric"
    hp = _hp(tmp_path, cid, layer="2", layer_norm=None, layer_transformation=None)
    full = comet_spec(hp, tiny_config(), as_numpy(state_dict(cid, mix=False)))
    assert not any(k.startswith("layerwise_attention") for k in head_tensors(full))
    _same_head(comet_head_spec(hp, tiny_config(), head_tensors(full), ()), full)
    sd = as_numpy(state_dict(cid))
    sd["encoder.model.pooler.dense.bias"] = np.zeros(8, np.float32)
    hp = _hp(tmp_path, cid)
    full = comet_spec(hp, tiny_config(), sd)
    assert full.ignored == ("encoder.model.pooler.dense.bias",)
    _same_head(comet_head_spec(hp, tiny_config(), head_tensors(full), full.ignored), full)
    with pytest.raises(CheckpointError, match=r"^c/head\.npz: ignored tensors not known to be unused: "
                                              r"estimator\.ff\.0\.weight$"):
        comet_head_spec(hp, tiny_config(), head_tensors(full), ["estimator.ff.0.weight"], head_path="c/head.npz")


def test_head_spec_checks_its_tensors_as_a_full_read_does(tmp_path):
    cid = "referenceless_regression_metric"
    hp = _hp(tmp_path, cid)
    head = head_tensors(comet_spec(hp, tiny_config(), as_numpy(state_dict(cid))))
    bad = dict(head)
    del bad["estimator.ff.3.bias"]
    bad["estimator.ff.0.weight"] = bad["estimator.ff.0.weight"][:, :-1]
    bad["encoder.model.embeddings.word_embeddings.weight"] = np.zeros((24, 8), np.float32)
    with pytest.raises(CheckpointError, match=r"^c/head\.npz: the tensors do not match the architecture of "
                                              r"hparams\.yaml and config\.json: missing: estimator\.ff\.3\.bias; "
                                              r"unexpected: encoder\.model\.embeddings\.word_embeddings\.weight; "
                                              r"wrong shape: estimator\.ff\.0\.weight \[5, 31\] \(expected \[5, 32\]\)$"):
        comet_head_spec(hp, tiny_config(), bad, (), head_path="c/head.npz")
    # the hyper-parameters decide the shapes: other hidden sizes do not fit these tensors
    with pytest.raises(CheckpointError, match=r"wrong shape: estimator\.ff\.0\.weight \[5, 32\] \(expected \[9, 32\]\)"):
        comet_head_spec(_hp(tmp_path, cid, hidden_sizes="\n- 9\n- 3"), tiny_config(), head, ())


def test_only_a_head_only_spec_lacks_encoder_weights_and_it_builds_no_graph(tmp_path):
    cid = "regression_metric"
    hp = _hp(tmp_path, cid)
    full = comet_spec(hp, tiny_config(), as_numpy(state_dict(cid)))
    head = comet_head_spec(hp, tiny_config(), head_tensors(full), ())
    with pytest.raises(ValueError, match=r"^regression_metric: no encoder weights; only a head_only spec"):
        dataclasses.replace(full, encoder_weights={})
    with pytest.raises(ValueError, match=r"^regression_metric: a head_only spec holds no encoder weights, got \d+$"):
        dataclasses.replace(head, encoder_weights=full.encoder_weights)
    with pytest.raises(ValueError, match=r"^regression_metric: cannot build the embedding graph of a head_only "
                                         r"spec"):
        build_comet_embedding_graph(head)
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match=r"^regression_metric: the ONNX export of the COMET model abababababab is "
                                         r"not cached and a head_only spec"):
        export_comet_embedding(head, "ab" * 32, cache_dir=str(cache))
    assert not cache.exists()  # refused before any folder was made
    assert cached_comet_embedding(head, "ab" * 32, cache_dir=str(cache)) is None
    # once the full spec has exported it, the head_only spec finds the same file (the same key)
    path = export_comet_embedding(full, "ab" * 32, cache_dir=str(cache))
    assert cached_comet_embedding(head, "ab" * 32, cache_dir=str(cache)) == path
    assert export_comet_embedding(head, "ab" * 32, cache_dir=str(cache)) == path
