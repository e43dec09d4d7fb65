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


def _sink_writes(monkeypatch) -> list[int]:
    """Record the offset of every tensor the export streams to its data file while building."""
    real = enc_cache.ExternalData.write
    offsets: list[int] = []

    def spy(self, data):
        out = real(self, data)
        offsets.append(out[1])
        return out

    monkeypatch.setattr(enc_cache.ExternalData, "write", spy)
    return offsets


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("where", ["inline", "all external", "external from mid-build"])
def test_streamed_export_is_byte_identical(spec, tmp_path, monkeypatch, dtype, where):
    """The export writes its large initializers to model.onnx.data while the graph is built; its
    files are byte for byte those of the graph built in memory and saved afterwards (the reference
    writer), whether the threshold is never reached, reached at once, or crossed half-way (the
    initializers made before are then written first, in order)."""
    from external_data_reference import folder_files, reference_files, total_initializer_bytes

    np_dtype = np.float16 if dtype == "float16" else np.float32
    ref_model = build_comet_embedding_graph(spec, dtype=np_dtype)
    total = total_initializer_bytes(ref_model)
    threshold = {"inline": enc_cache.EXTERNAL_DATA_BYTES, "all external": 0, "external from mid-build": total // 2}[where]
    # the tiny encoder has no 1 kB tensor: 64 bytes and up go to the data file here (8 x 8 floats)
    want = reference_files(ref_model, threshold, min_bytes=64)
    monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", threshold)
    monkeypatch.setattr(enc_cache, "_EXTERNAL_MIN_TENSOR", 64)
    streamed = _sink_writes(monkeypatch)
    path = export_comet_embedding(spec, SHA, dtype, cache_dir=str(tmp_path / "cache"))
    got = folder_files(path.parent)
    assert sorted(got) == sorted(want)
    assert got == want
    man = json.loads((path.parent / "manifest.json").read_text())
    if where == "inline":
        assert streamed == []
        assert "external_data" not in man
    else:
        assert len(streamed) >= 3  # the weights went out during the build, not after it
        assert streamed == sorted(streamed)
        assert all(o % 4096 == 0 for o in streamed)
        assert man["external_data_bytes"] == len(want["model.onnx.data"])
    assert _leftovers(path.parent) == []


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp") or p.name.startswith("."))


def test_export_consumes_the_weights_while_building(spec, tmp_path, monkeypatch):
    """consume_weights: each encoder weight leaves the spec's dict as the graph takes it (by the
    time the graph is finished the dict is empty), the export is the one a non-consuming export
    makes, and the spec then refuses to build a graph instead of building one from nothing."""
    from external_data_reference import folder_files

    from mtscore.engine.comet import graph as comet_graph

    own = dataclasses.replace(spec, encoder_weights=dict(spec.encoder_weights))
    n = len(own.encoder_weights)
    assert n > 10
    left_at_finish = []
    real = comet_graph.finish_model

    def spy(g, *a, **k):
        left_at_finish.append(len(own.encoder_weights))
        return real(g, *a, **k)

    monkeypatch.setattr(comet_graph, "finish_model", spy)
    monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", 0)
    monkeypatch.setattr(enc_cache, "_EXTERNAL_MIN_TENSOR", 64)
    left_at_write: list[int] = []
    real_write = enc_cache.ExternalData.write

    def write_spy(self, data):
        left_at_write.append(len(own.encoder_weights))
        return real_write(self, data)

    monkeypatch.setattr(enc_cache.ExternalData, "write", write_spy)
    path = export_comet_embedding(own, SHA, cache_dir=str(tmp_path / "a"), consume_weights=True)
    assert left_at_finish == [0]
    # gradual: each weight left the dict before (or as) its bytes went out, not all at the end
    assert left_at_write[0] < n
    assert left_at_write == sorted(left_at_write, reverse=True)
    assert len(set(left_at_write)) > 5
    assert own.encoder_weights == {}
    assert len(spec.encoder_weights) == n  # the default leaves the caller's dict alone
    kept = export_comet_embedding(spec, SHA, cache_dir=str(tmp_path / "b"))
    assert len(spec.encoder_weights) == n
    assert folder_files(path.parent) == folder_files(kept.parent)
    with pytest.raises(ValueError, match="encoder weights were consumed by an earlier export"):
        build_comet_embedding_graph(own)
    # a cached export is found without building: nothing to consume, no error
    assert export_comet_embedding(own, SHA, cache_dir=str(tmp_path / "a"), consume_weights=True) == path


def test_failed_streamed_export_leaves_no_file(spec, tmp_path, monkeypatch):
    """A build that fails after some weights went to the data file removes the temporary file:
    no data file, no graph, no manifest."""
    from mtscore.engine.comet import export as comet_export

    monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", 0)
    monkeypatch.setattr(enc_cache, "_EXTERNAL_MIN_TENSOR", 64)
    streamed = _sink_writes(monkeypatch)
    real = comet_export.build_comet_embedding_graph

    def fails_late(*a, **k):
        real(*a, **k)
        assert streamed  # the data file exists (under its temporary name) by now
        raise RuntimeError("out of memory")

    monkeypatch.setattr(comet_export, "build_comet_embedding_graph", fails_late)
    with pytest.raises(RuntimeError, match="out of memory"):
        export_comet_embedding(spec, SHA, cache_dir=str(tmp_path))
    folder = next((tmp_path / "encoders").iterdir())
    assert sorted(p.name for p in folder.iterdir()) == []


def test_failed_consuming_build_leaves_the_spec_consumed(spec, tmp_path, monkeypatch):
    """An export with consume_weights that fails half-way (the data file's disk full) empties the
    spec all the same: building from it again says the weights were consumed, instead of blaming
    the architecture for the first weight that is gone."""
    from mtscore.engine.atomic import OutputError

    own = dataclasses.replace(spec, encoder_weights=dict(spec.encoder_weights))
    monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", 0)
    monkeypatch.setattr(enc_cache, "_EXTERNAL_MIN_TENSOR", 64)
    real_write = enc_cache.ExternalData.write
    calls = []

    def full_disk(self, data):
        calls.append(1)
        if len(calls) == 3:
            raise self._error(OSError(28, "No space left on device"))
        return real_write(self, data)

    monkeypatch.setattr(enc_cache.ExternalData, "write", full_disk)
    with pytest.raises(OutputError, match=r"model\.onnx\.data"):
        export_comet_embedding(own, SHA, cache_dir=str(tmp_path), consume_weights=True)
    assert own.encoder_weights == {}
    with pytest.raises(ValueError, match="encoder weights were consumed by an earlier export"):
        build_comet_embedding_graph(own)


def test_inline_export_without_onnx_1_20_helpers(spec, tmp_path, monkeypatch):
    """onnx < 1.20 (the newest for Python 3.9) has no ``numpy_helper.tobytes_little_endian`` and a
    ``from_array`` that stores ``array.tobytes()``: an export below the external-data threshold (held
    arrays turned into raw_data at the end) works there and writes the same bytes."""
    import onnx
    from external_data_reference import folder_files, reference_files

    want = reference_files(build_comet_embedding_graph(spec, dtype=np.float16), enc_cache.EXTERNAL_DATA_BYTES)
    nh = onnx.numpy_helper

    def old_from_array(arr, name=None):  # onnx 1.19's path for numeric arrays
        t = onnx.TensorProto()
        t.dims.extend(arr.shape)
        if name:
            t.name = name
        t.data_type = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)
        t.raw_data = arr.tobytes()
        return t

    monkeypatch.delattr(nh, "tobytes_little_endian", raising=False)
    monkeypatch.setattr(nh, "from_array", old_from_array)
    monkeypatch.setattr(enc_cache, "_EXTERNAL_MIN_TENSOR", 64)  # the tiny model's weights are held, not inline
    path = export_comet_embedding(spec, SHA, "float16", cache_dir=str(tmp_path))
    assert folder_files(path.parent) == want
