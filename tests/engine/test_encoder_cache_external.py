"""The encoder cache's external-data path (mtscore.engine.encoder.cache): a graph whose weights
exceed EXTERNAL_DATA_BYTES (forced to 0 here, so a tiny XLM-R takes the path a 2.24 GB COMET model
takes) is stored as model.onnx + model.onnx.data, opened by path through mtscore's session, gives
the same numbers as the one-file export, works when the cache folder moves, and a half-written
pair (data without graph, graph without data, a truncated data file, a failed write) is never
used and leaves no temporary file."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from mtscore.engine.encoder import cache as enc_cache  # noqa: E402
from mtscore.engine.encoder.session import open_session  # noqa: E402

SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
             max_position_embeddings=40, vocab_size=120, pad_token_id=1)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    d = tmp_path_factory.mktemp("xlmr-small")
    transformers.XLMRobertaModel(transformers.XLMRobertaConfig(**SMALL), add_pooling_layer=False).save_pretrained(
        str(d), safe_serialization=True)
    return d


def _batch():
    ids = np.array([[0, 5, 17, 9, 44, 2], [0, 33, 2, 1, 1, 1]], np.int64)
    return ids, (ids != 1).astype(np.int64)


def _run(onnx_path) -> np.ndarray:
    ids, mask = _batch()
    sess = open_session(Path(onnx_path), device="cpu", threads=1).session  # by path, as BERTScore opens it
    return sess.run(["hidden_states"], {"input_ids": ids, "attention_mask": mask})[0]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".probe"))


def test_small_graphs_stay_one_file(model_dir, tmp_path):
    man = enc_cache.export_encoder(model_dir, 2, cache_dir=str(tmp_path))
    folder = Path(man["onnx"]).parent
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "model.onnx"]
    assert "external_data" not in man


def test_external_data_pair_equals_the_one_file_export(model_dir, tmp_path, monkeypatch):
    inline = enc_cache.export_encoder(model_dir, 2, cache_dir=str(tmp_path / "a"))
    monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", 0)
    man = enc_cache.export_encoder(model_dir, 2, cache_dir=str(tmp_path / "b"))
    folder = Path(man["onnx"]).parent
    data = folder / "model.onnx.data"
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "model.onnx", "model.onnx.data"]
    assert man["external_data"] == "model.onnx.data"
    assert man["external_data_bytes"] == data.stat().st_size
    assert json.loads((folder / "manifest.json").read_text())["external_data_bytes"] == data.stat().st_size
    # the weights are in the data file, named relative to the graph, page-aligned
    graph = onnx.load(str(folder / "model.onnx"), load_external_data=False)
    ext = [t for t in graph.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert len(ext) >= 4 * SMALL["num_hidden_layers"]
    for t in ext:
        info = {e.key: e.value for e in t.external_data}
        assert info["location"] == "model.onnx.data"
        assert int(info["offset"]) % 4096 == 0
    assert (folder / "model.onnx").stat().st_size < Path(inline["onnx"]).stat().st_size / 4
    np.testing.assert_array_equal(_run(man["onnx"]), _run(inline["onnx"]))
    # found again (no rebuild), and still usable after the cache folder moves
    mtime = data.stat().st_mtime_ns
    assert enc_cache.export_encoder(model_dir, 2, cache_dir=str(tmp_path / "b")) == man
    assert data.stat().st_mtime_ns == mtime
    shutil.move(str(tmp_path / "b"), str(tmp_path / "moved"))
    moved = enc_cache.export_encoder(model_dir, 2, cache_dir=str(tmp_path / "moved"))
    assert Path(moved["onnx"]).is_relative_to(tmp_path / "moved")
    np.testing.assert_array_equal(_run(moved["onnx"]), _run(inline["onnx"]))


def _only_data_then_fail(monkeypatch):
    """Let the data file be written and renamed, then fail writing the graph (a crash in between)."""
    real = enc_cache._atomic_write_bytes

    def fail_graph(path: Path, data: bytes) -> None:
        if path.name == "model.onnx":
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(enc_cache, "_atomic_write_bytes", fail_graph)


def _die_midway(f):
    """A file object whose fourth write fails."""
    class Dying:
        n = 0

        def write(self, b):
            Dying.n += 1
            if Dying.n > 3:
                raise OSError(5, "Input/output error")
            return f.write(b)

        def close(self):
            f.close()
    return Dying()


def _data_file_dies_midway(monkeypatch) -> None:
    """Every ExternalData file (the data file of an export) fails on its fourth write."""
    real_open = enc_cache.ExternalData._open

    def dying_open(self):
        real_open(self)
        self._file = _die_midway(self._file)

    monkeypatch.setattr(enc_cache.ExternalData, "_open", dying_open)


@pytest.mark.parametrize("broken", ["no graph", "no data", "short data", "long data", "data write fails"])
def test_a_half_written_pair_is_never_used(model_dir, tmp_path, monkeypatch, broken):
    monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", 0)
    cache = str(tmp_path / "c")
    want = _run(enc_cache.export_encoder(model_dir, 2, cache_dir=str(tmp_path / "ref"))["onnx"])
    if broken in ("no graph", "data write fails"):
        if broken == "no graph":
            _only_data_then_fail(monkeypatch)
        else:  # the data file is written while the graph is built (ExternalData): fail half-way
            _data_file_dies_midway(monkeypatch)
        with pytest.raises(OSError, match=r"No space left|Input/output error"):
            enc_cache.export_encoder(model_dir, 2, cache_dir=cache)
        folder = next((tmp_path / "c" / "encoders").iterdir())
        assert not (folder / "manifest.json").exists()
        assert not (folder / "model.onnx").exists()
        assert _leftovers(folder) == []
        assert (folder / "model.onnx.data").exists() == (broken == "no graph")
        monkeypatch.undo()
        monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", 0)
    else:
        man = enc_cache.export_encoder(model_dir, 2, cache_dir=cache)
        data = Path(man["onnx"]).with_name("model.onnx.data")
        if broken == "no data":
            data.unlink()
        else:
            raw = data.read_bytes()
            data.write_bytes(raw[:-100] if broken == "short data" else raw + b"\0" * 100)
        folder = data.parent
        assert enc_cache.read_manifest(folder) is None  # not picked up ...
    man = enc_cache.export_encoder(model_dir, 2, cache_dir=cache)  # ... but rebuilt
    assert Path(man["onnx"]).with_name("model.onnx.data").stat().st_size == man["external_data_bytes"]
    assert _leftovers(Path(man["onnx"]).parent) == []
    np.testing.assert_array_equal(_run(man["onnx"]), want)


def test_save_model_of_a_finished_model(model_dir, tmp_path, monkeypatch):
    """save_model without the builder's ExternalData (a model made elsewhere: the fused graph,
    torch.onnx) writes the data file itself, the same bytes the streamed export writes; a write
    that fails half-way leaves nothing behind."""
    from external_data_reference import folder_files

    from mtscore.engine.encoder import onnx_builder
    from mtscore.engine.encoder.model_dir import load_weights, read_config, weights_file

    def built():
        return onnx_builder.build_encoder_graph(read_config(model_dir), load_weights(weights_file(model_dir)), 2)

    monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", 0)
    streamed = Path(enc_cache.export_encoder(model_dir, 2, cache_dir=str(tmp_path / "c"))["onnx"])
    (tmp_path / "m").mkdir()
    info = enc_cache.save_model(built(), tmp_path / "m" / "model.onnx")
    assert info == {"external_data": "model.onnx.data",
                    "external_data_bytes": (streamed.parent / "model.onnx.data").stat().st_size}
    assert folder_files(tmp_path / "m") == folder_files(streamed.parent)
    _data_file_dies_midway(monkeypatch)  # save_model writes the data file through ExternalData too
    (tmp_path / "f").mkdir()
    with pytest.raises(OSError, match="Input/output error"):
        enc_cache.save_model(built(), tmp_path / "f" / "model.onnx")
    assert list((tmp_path / "f").iterdir()) == []


def test_streamed_encoder_export_is_byte_identical(model_dir, tmp_path, monkeypatch):
    """BERTScore's export streams its weights while building too: at thresholds that put every
    weight, or those after the first half, in the data file, its files are those of the graph
    built in memory and saved afterwards (the reference writer); the loaded weights are consumed."""
    from external_data_reference import folder_files, reference_files, total_initializer_bytes

    from mtscore.engine.encoder import onnx_builder
    from mtscore.engine.encoder.model_dir import load_weights, read_config, weights_file

    config, wfile = read_config(model_dir), weights_file(model_dir)
    total = total_initializer_bytes(onnx_builder.build_encoder_graph(config, load_weights(wfile), 2))
    left = []
    real_build = onnx_builder.build_encoder_graph

    def spy(config, weights, *a, **k):
        model = real_build(config, weights, *a, **k)
        left.append(len(weights))
        return model

    monkeypatch.setattr(onnx_builder, "build_encoder_graph", spy)
    for threshold in (0, total // 2):
        want = reference_files(real_build(config, load_weights(wfile), 2), threshold)
        assert "model.onnx.data" in want
        monkeypatch.setattr(enc_cache, "EXTERNAL_DATA_BYTES", threshold)
        man = enc_cache.export_encoder(model_dir, 2, cache_dir=str(tmp_path / str(threshold)))
        assert folder_files(Path(man["onnx"]).parent) == want
    assert left == [0, 0]  # a 2-layer model cut at layer 2 uses every weight


def test_data_file_sweeps_a_dead_builds_temporary_file(tmp_path):
    """A build killed outright leaves ``.model.onnx.data.*.tmp`` (up to the weights' size) that no
    later export would remove: the next export's data file removes those older than a day, and
    leaves a younger one alone (another process may be writing it now)."""
    import os
    import time

    import numpy as np

    from mtscore.engine.encoder.cache import ExternalData

    old, young = tmp_path / ".model.onnx.data.dead.tmp", tmp_path / ".model.onnx.data.busy.tmp"
    other = tmp_path / ".tokenizer.json.dead.tmp"  # not this data file's
    for p in (old, young, other):
        p.write_bytes(b"x" * 10)
    two_days_ago = time.time() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    os.utime(other, (two_days_ago, two_days_ago))
    with ExternalData(tmp_path / "model.onnx") as data:
        data.write(np.ones(512, np.float32))
        data.commit()
    assert (tmp_path / "model.onnx.data").read_bytes() == np.ones(512, np.float32).tobytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([young.name, other.name, "model.onnx.data"])
