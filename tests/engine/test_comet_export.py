"""The cached export of COMET's sentence-embedding graph (mtscore.engine.comet.export): built once,
found again without a rebuild, keyed by the checkpoint hash, the dtype and what hparams.yaml decides
(gamma, mix, pooling), stored with external data when large (forced here), and the cached file gives
the same numbers as the graph built in memory."""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from comet_fixtures import HPARAMS, as_numpy, state_dict, tiny_config

from mtscore.engine.checkpoints import read_hparams
from mtscore.engine.comet import build_comet_embedding_graph, comet_spec, export_comet_embedding
from mtscore.engine.encoder import cache as enc_cache

ort = pytest.importorskip("onnxruntime")
SHA = "ab" * 32


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    f = tmp_path_factory.mktemp("hp") / "hparams.yaml"
    f.write_text(HPARAMS["referenceless_regression_metric"])  # softmax mix with layer norm, avg
    return comet_spec(read_hparams(f), tiny_config(), as_numpy(state_dict("referenceless_regression_metric")))


def _run(model_or_path, ids, mask):
    src = str(model_or_path) if isinstance(model_or_path, Path) else model_or_path.SerializeToString()
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    return sess.run(["sentemb"], {"input_ids": ids, "attention_mask": mask})[0]


IDS = np.array([[0, 5, 9, 13, 2], [0, 7, 2, 1, 1]], np.int64)
MASK = (IDS != 1).astype(np.int64)


def test_export_is_cached_and_equals_the_graph(spec, tmp_path):
    path = export_comet_embedding(spec, SHA, cache_dir=str(tmp_path))
    assert path.name == "model.onnx"
    assert path.parent.parent == tmp_path / "encoders"
    assert path.parent.name.startswith("comet-referenceless_regression_metric-float32-")
    man = json.loads((path.parent / "manifest.json").read_text())
    assert man["checkpoint_sha256"] == SHA
    assert man["output"] == "sentemb"
    assert man["dtype"] == "float32"
    assert man["graph"]["mix"] == "softmax"
    assert man["graph"]["layer_norm"] is True
    np.testing.assert_array_equal(_run(path, IDS, MASK), _run(build_comet_embedding_graph(spec), IDS, MASK))
    mtime = path.stat().st_mtime_ns
    assert export_comet_embedding(spec, SHA, cache_dir=str(tmp_path)) == path
    assert path.stat().st_mtime_ns == mtime  # found, not rebuilt
    assert export_comet_embedding(spec, SHA, cache_dir=str(tmp_path), force=True) == path


def test_key_follows_checkpoint_dtype_and_hparams(spec, tmp_path):
    base = export_comet_embedding(spec, SHA, cache_dir=str(tmp_path)).parent
    others = [export_comet_embedding(spec, "cd" * 32, cache_dir=str(tmp_path)).parent,
              export_comet_embedding(spec, SHA, "float16", cache_dir=str(tmp_path)).parent,
              export_comet_embedding(dataclasses.replace(spec, gamma=2.0), SHA, cache_dir=str(tmp_path)).parent,
              export_comet_embedding(dataclasses.replace(spec, pool="cls"), SHA, cache_dir=str(tmp_path)).parent,
              export_comet_embedding(dataclasses.replace(spec, layer_norm=False), SHA, cache_dir=str(tmp_path)).parent]
    assert len({base, *others}) == 6
    assert others[1].name.startswith("comet-referenceless_regression_metric-float16-")


def test_large_export_uses_external_data(spec, tmp_path, monkeypatch):
    monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", 0)
    path = export_comet_embedding(spec, SHA, cache_dir=str(tmp_path))
    data = path.with_name("model.onnx.data")
    assert json.loads((path.parent / "manifest.json").read_text())["external_data_bytes"] == data.stat().st_size
    np.testing.assert_array_equal(_run(path, IDS, MASK), _run(build_comet_embedding_graph(spec), IDS, MASK))


def test_bad_arguments(spec, tmp_path):
    with pytest.raises(ValueError, match="checkpoint_sha256 'abc': expected 64 lowercase hex digits"):
        export_comet_embedding(spec, "abc", cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match="dtype 'fp16': expected one of float32, float16"):
        export_comet_embedding(spec, SHA, "fp16", cache_dir=str(tmp_path))


def test_importing_comet_loads_no_onnx():
    import subprocess

    code = "import sys, mtscore.engine.comet; print('onnx' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_finish_model_moves_the_initializers(spec, monkeypatch):
    """finish_model moves each initializer from the builder into the model (the builder's list is
    emptied, so at most one copy of a weight is alive besides the source arrays), in the order
    the builder made them, with the same bytes."""
    from mtscore.engine.comet import graph as comet_graph
    from mtscore.engine.encoder import onnx_builder

    seen = {}
    real = onnx_builder.finish_model

    def spy(g, *a, **k):
        seen["made"] = [(t.name, t.raw_data) for t in g.inits]
        model = real(g, *a, **k)
        seen["left"] = len(g.inits)
        return model

    monkeypatch.setattr(comet_graph, "finish_model", spy)
    model = build_comet_embedding_graph(spec)
    assert seen["left"] == 0
    assert [(t.name, t.raw_data) for t in model.graph.initializer] == seen["made"]
    assert len(seen["made"]) > 10
