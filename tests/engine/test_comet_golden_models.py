"""The golden COMET models of tests/golden/comet (built, saved and scored by unbabel-comet 2.2.7 through
tests/oracles/comet_oracle.py: real ``pytorch_lightning.Trainer.save_checkpoint`` files, Lightning
2.6's pickle layout) read by mtscore's restricted reader and architecture spec, without torch: the
class, layer mix, layer norm, pooling, estimator shapes and encoder dims each model was built with;
the committed files are the ones the golden scores were computed with (sha256 in golden.json)."""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from mtscore.engine.checkpoints import read_checkpoint, read_checkpoint_object, read_hparams
from mtscore.engine.comet import FEATURES, load_comet_spec, resolve_comet_model

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "comet"
ENCODER = GOLDEN / "encoder"
# what comet_oracle.py builds: class, layer_transformation -> mix, layer_norm, pool, mix scalars, gamma
# (mix, scalars and gamma None for a model with a layer number: LAYER)
EXPECTED = {
    "regression-sparsemax": ("regression_metric", "sparsemax", False, "avg",
                             [-0.2, 0.1, -0.4, 0.6, 0.35], 1.7),
    "regression-softmax-norm": ("regression_metric", "softmax", True, "avg",
                                [0.3, -0.8, 0.5, 1.2, -0.1], 0.6),
    "referenceless-cls": ("referenceless_regression_metric", "softmax", False, "cls",
                          [1.0, 0.2, -0.5, 0.4, 0.9], 2.3),
    # wmt22-cometkiwi-da's layer_transformation: sparsemax_patch, which 2.2.7 computes as softmax
    "unified-kiwi": ("unified_metric", "softmax", False, "cls", [-0.3, 0.7, 0.2, -1.1, 0.9], 1.4),
    "regression-max-norm": ("regression_metric", "softmax", True, "max", [0.8, -0.6, 0.1, 0.9, -0.3], 1.3),
    # pool default: the last hidden state's first token, whatever layer says (so no mix either)
    "referenceless-default-layer2": ("referenceless_regression_metric", None, False, "default", None, None),
}
#: models built with a layer number instead of the mix (unbabel-comet then builds no LayerwiseAttention)
LAYER = {"referenceless-default-layer2": 2}
HIDDEN, LAYERS, VOCAB = 32, 4, 4002


def _folder(name: str) -> Path:
    folder = GOLDEN / "models" / name
    if not (folder / "checkpoints" / "model.ckpt").is_file() or not (ENCODER / "config.json").is_file():
        pytest.skip(f"{folder}: golden COMET model absent (tests/oracles/comet_oracle.py writes it, "
                    "in the unbabel-comet venv)")
    return folder


def _golden() -> dict:
    f = GOLDEN / "golden.json"
    if not f.is_file():
        pytest.skip(f"{f}: absent (tests/oracles/comet_oracle.py writes it)")
    return json.loads(f.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_spec_of_golden_model(name: str) -> None:
    folder = _folder(name)
    cid, mix, layer_norm, pool, scalars, gamma = EXPECTED[name]
    files = resolve_comet_model(folder, encoder=ENCODER)
    assert files.hparams["pretrained_model"] == "encoder"
    assert files.tokenizer_file == ENCODER / "tokenizer.json"
    spec = load_comet_spec(files)
    assert spec.class_identifier == cid
    assert (spec.layer, spec.mix, spec.layer_norm, spec.pool) == (LAYER.get(name), mix, layer_norm, pool)
    assert spec.features == FEATURES[cid]
    d = spec.dims
    assert (d.hidden, d.layers, d.heads, d.intermediate, d.vocab, d.positions, d.type_vocab, d.pad_token_id) == \
        (HIDDEN, LAYERS, 4, 128, VOCAB, 514, 1, 1)
    if name in LAYER:
        assert (spec.scalar_parameters, spec.gamma) == (None, None)
    else:  # the oracle set the mix away from its uniform init; stored as float32
        np.testing.assert_array_equal(spec.scalar_parameters, np.array(scalars, dtype=np.float32))
        assert spec.gamma == float(np.float32(gamma))
    n_in = len(FEATURES[cid]) * HIDDEN
    assert [layer.shape for layer in spec.estimator] == [(96, n_in), (32, 96), (1, 32)]
    assert [layer.activation for layer in spec.estimator] == ["Tanh", "Tanh", None]
    assert all(layer.weight.dtype == np.float32 and layer.bias.dtype == np.float32 for layer in spec.estimator)
    # unbabel-comet's LayerwiseAttention(dropout=0.1) registers its dropout buffers: in the state dict, unused
    buffers = ("layerwise_attention.dropout_mask", "layerwise_attention.dropout_fill")
    assert spec.ignored == (() if name in LAYER else buffers)
    # 5 embedding tensors + 16 per layer; transformers 4.57 no longer saves embeddings.position_ids
    assert len(spec.encoder_weights) == 5 + 16 * LAYERS
    assert spec.encoder_weights["embeddings.word_embeddings.weight"].shape == (VOCAB, HIDDEN)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_lightning_checkpoint_layout(name: str) -> None:
    """``Trainer.save_checkpoint`` of Lightning 2.6: the hyper-parameters are a plain dict equal to
    hparams.yaml (what unbabel-comet loads them from), the state dict holds only float32 tensors."""
    folder = _folder(name)
    ckpt = folder / "checkpoints" / "model.ckpt"
    obj = read_checkpoint_object(ckpt)
    assert obj["pytorch-lightning_version"] == _golden()["versions"]["pytorch-lightning"]
    assert obj["hparams_name"] == "kwargs"
    assert obj["optimizer_states"] == []
    assert obj["lr_schedulers"] == []
    assert type(obj["hyper_parameters"]) is dict
    assert obj["hyper_parameters"] == read_hparams(folder)
    state = read_checkpoint(ckpt)
    assert set(state) == set(obj["state_dict"])
    assert {a.dtype for a in state.values()} == {np.dtype(np.float32)}
    if name in LAYER:
        assert not [k for k in state if k.startswith("layerwise_attention.")]
    else:
        np.testing.assert_array_equal(state["layerwise_attention.dropout_fill"],
                                      np.full(LAYERS + 1, -1e20, np.float32))


def test_golden_files_are_the_scored_ones() -> None:
    golden = _golden()
    assert golden["format"] == 1
    for rel, digest in golden["files"].items():
        assert hashlib.sha256((GOLDEN / rel).read_bytes()).hexdigest() == digest, rel
    inputs = GOLDEN / golden["inputs"]["file"]
    assert hashlib.sha256(inputs.read_bytes()).hexdigest() == golden["inputs"]["sha256"]
    n = len(inputs.read_text(encoding="utf-8").splitlines())
    assert n == golden["inputs"]["n"] == 313
    assert sorted(golden["models"]) == sorted(EXPECTED)
    for name, model in golden["models"].items():
        assert model["class_identifier"] == EXPECTED[name][0]
        scores = model["scores"]
        assert len(scores) == n
        assert all(isinstance(s, float) and math.isfinite(s) for s in scores)
        assert len(set(scores)) > n // 2  # the models separate the segments
        # predict() sums in its length-sorted order: equal to the mean up to the summation order
        assert model["system_score"] == pytest.approx(sum(scores) / n, rel=0, abs=1e-15)
