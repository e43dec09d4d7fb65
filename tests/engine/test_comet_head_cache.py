"""The cached COMET head (mtscore.engine.comet.head_cache) on the golden models of tests/golden/comet:
a warm load_comet (head and export cached) never reads the checkpoint and gives bit-identical scores;
a damaged, edited or foreign head entry, or a missing export, falls back to the full read (never to
other numbers) and a fallback for a bad entry writes it again; an edited hparams.yaml or config.json
has its own entry, a copied model folder finds the entry of the original (the key is content, not
path or mtime); an unwritable cache keeps no head beside the temporary export (one warning)."""
from __future__ import annotations

import errno
import json
import shutil
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from mtscore.engine.comet import export as comet_export
from mtscore.engine.comet import head_cache
from mtscore.engine.comet import spec as comet_spec_module
from mtscore.engine.comet.head_cache import HEAD_FORMAT, comet_head_folder, tensors_digest
from mtscore.engine.comet.model import resolve_comet_model
from mtscore.engine.comet.scorer import CometScorer, load_comet
from mtscore.engine.encoder.cache import EncoderCacheWarning
from tests.comet_golden import ENCODER, GOLDEN, golden, golden_inputs

MODELS = ("regression-sparsemax", "regression-softmax-norm", "referenceless-cls", "unified-kiwi")
N = 40  # segments scored per check


class ReadCounter:
    """Stands in for the checkpoint reader the spec module calls: counts the reads (and does them),
    or fails the test when a read is forbidden."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, forbid: bool = False):
        self.calls = 0
        real = comet_spec_module.read_checkpoint

        def read(path):
            if forbid:
                raise AssertionError(f"the checkpoint was read: {path}")
            self.calls += 1
            return real(path)

        monkeypatch.setattr(comet_spec_module, "read_checkpoint", read)


def _load(cache: Path, name: str = "regression-sparsemax", model: Path | None = None, **kw) -> CometScorer:
    return load_comet(model or GOLDEN / "models" / name, encoder=kw.pop("encoder", ENCODER), cache_dir=cache,
                      threads=1, **kw)


def _scores(s: CometScorer) -> np.ndarray:
    d = golden_inputs(N)
    return s.score(d["mt"], d["src"], d["ref"] if s.uses_references else None)


def _head_folder(cache: Path, name: str = "regression-sparsemax", model: Path | None = None,
                 encoder: Path = ENCODER) -> Path:
    files = resolve_comet_model(model or GOLDEN / "models" / name, encoder=encoder)
    folder = comet_head_folder(files, golden()["files"][f"models/{name}/checkpoints/model.ckpt"], str(cache))
    return folder


@pytest.fixture(scope="module")
def first(tmp_path_factory) -> dict[str, tuple[Path, CometScorer, np.ndarray]]:
    """Each golden model loaded once in its own fresh cache: (cache, scorer, scores of N segments)."""
    golden()
    out = {}
    for name in MODELS:
        cache = tmp_path_factory.mktemp(f"cache-{name}")
        s = _load(cache, name)
        out[name] = (cache, s, _scores(s))
    return out


@pytest.mark.parametrize("name", MODELS)
def test_warm_load_reads_no_checkpoint_and_scores_the_same(name, first, monkeypatch):
    cache, cold, want = first[name]
    assert cold.checkpoint_read  # the first load read the checkpoint
    # ... and let its encoder weights go once the export held them (one copy at the first call's peak)
    assert cold.spec.head_only
    assert cold.spec.encoder_weights == {}
    gold = golden()["models"][name]["scores"][:N]
    np.testing.assert_allclose(want, gold, rtol=0, atol=1e-5)
    folder = _head_folder(cache, name)
    assert sorted(p.name for p in folder.iterdir()) == ["head.npz", "manifest.json"]
    man = json.loads((folder / "manifest.json").read_text())
    assert (man["format"], man["checkpoint_sha256"]) == (HEAD_FORMAT, cold.checkpoint_sha256)
    assert man["spec"]["class_identifier"] == cold.class_identifier
    with np.load(folder / "head.npz", allow_pickle=False) as z:  # the head only: no encoder tensor
        assert z.files
        assert not any(k.startswith("encoder.") for k in z.files)
    ReadCounter(monkeypatch, forbid=True)
    monkeypatch.setattr(comet_export, "build_comet_embedding_graph",
                        lambda *a, **k: pytest.fail("the export was rebuilt"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warm = _load(cache, name)
    assert not warm.checkpoint_read
    assert warm.spec.encoder_weights == {}
    assert warm.graph_path == cold.graph_path
    assert warm.checkpoint_sha256 == cold.checkpoint_sha256
    for f in ("class_identifier", "dims", "layer", "mix", "layer_norm", "gamma", "pool", "features", "ignored"):
        assert getattr(warm.spec, f) == getattr(cold.spec, f), f
    np.testing.assert_array_equal(_scores(warm), want)


def _full_read_without_warnings(cache: Path, monkeypatch) -> tuple[CometScorer, ReadCounter]:
    """``_load(cache)``, which must read the checkpoint exactly once and warn about nothing; the
    scorer and the counter of checkpoint reads (still counting)."""
    reads = ReadCounter(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = _load(cache)
    assert reads.calls == 1
    assert s.checkpoint_read
    return s, reads


def _rewrite_npz(folder: Path, change, fix_digest: bool = True) -> None:
    """Rewrite head.npz with ``change(arrays)`` applied; with ``fix_digest`` the manifest's digest
    is made to match (so the shape checks, not the digest, must catch the damage)."""
    with np.load(folder / "head.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    change(arrays)
    np.savez(folder / "head.npz", **arrays)
    if fix_digest:
        _edit_manifest(folder, lambda m: m.update(tensors_digest=tensors_digest(arrays)))


def _edit_manifest(folder: Path, change) -> None:
    f = folder / "manifest.json"
    man = json.loads(f.read_text())
    change(man)
    f.write_text(json.dumps(man))


def _write_npy(path: Path) -> None:
    with open(path, "wb") as fh:  # np.save to a name would append .npy to it
        np.save(fh, np.zeros(3, np.float32))


def _deflated_then_corrupted(path: Path) -> None:
    """head.npz rewritten with deflated members whose compressed bytes are then overwritten:
    zipfile reads the directory and fails inside zlib (zlib.error, not BadZipFile)."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for n, data in members.items():
            z.writestr(n, data)
    with zipfile.ZipFile(path) as z:
        info = z.infolist()[0]
    raw = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start:start + info.compress_size] = b"\xff" * info.compress_size
    path.write_bytes(bytes(raw))


def _scaled(arrays):
    arrays["estimator.ff.0.weight"] = arrays["estimator.ff.0.weight"] * np.float32(2)


def _narrowed(arrays):
    arrays["estimator.ff.0.weight"] = arrays["estimator.ff.0.weight"][:, :-1].copy()


def _float64(arrays):
    arrays["layerwise_attention.gamma"] = arrays["layerwise_attention.gamma"].astype(np.float64) + 1


DAMAGE = {
    "older format": lambda f: _edit_manifest(f, lambda m: m.update(format=HEAD_FORMAT - 1)),
    "another key": lambda f: _edit_manifest(f, lambda m: m.update(key="0" * 20)),
    "no manifest": lambda f: (f / "manifest.json").unlink(),
    "manifest not json": lambda f: (f / "manifest.json").write_text("{"),
    "no head.npz": lambda f: (f / "head.npz").unlink(),
    "head.npz truncated": lambda f: (f / "head.npz").write_bytes((f / "head.npz").read_bytes()[:300]),
    "head.npz a .npy": lambda f: _write_npy(f / "head.npz"),
    "head.npz deflated and corrupt": lambda f: _deflated_then_corrupted(f / "head.npz"),
    "head.npz an object array": lambda f: _rewrite_npz(
        f, lambda a: a.update({"estimator.ff.0.bias": np.array([{"x": 1}], dtype=object)})),
    "missing array": lambda f: _rewrite_npz(f, lambda a: a.pop("estimator.ff.3.bias")),
    "array of wrong shape": lambda f: _rewrite_npz(f, _narrowed),
    "extra array": lambda f: _rewrite_npz(f, lambda a: a.update({"encoder.model.x": np.zeros(2, np.float32)})),
    "values changed, digest stale": lambda f: _rewrite_npz(f, _scaled, fix_digest=False),
    "gamma widened to float64 and changed": lambda f: _rewrite_npz(f, _float64),
    "spec field edited": lambda f: _edit_manifest(f, lambda m: m["spec"].update(pool="cls")),
    "ignored not a known tensor": lambda f: _edit_manifest(f, lambda m: m["spec"].update(
        ignored=["estimator.ff.0.weight"])),
    "spec missing": lambda f: _edit_manifest(f, lambda m: m.pop("spec")),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_bad_head_entry_falls_back_to_the_full_read(damage, first, tmp_path, monkeypatch):
    _, _, want = first["regression-sparsemax"]
    cache = tmp_path / "cache"
    shutil.copytree(first["regression-sparsemax"][0], cache)
    folder = _head_folder(cache)
    DAMAGE[damage](folder)
    s, reads = _full_read_without_warnings(cache, monkeypatch)
    np.testing.assert_array_equal(_scores(s), want)
    # the fallback wrote the entry again: the next load is warm
    again = _load(cache)
    assert reads.calls == 1
    assert not again.checkpoint_read
    np.testing.assert_array_equal(_scores(again), want)


def test_missing_export_falls_back_to_the_full_read(first, tmp_path, monkeypatch):
    """A head entry without its export (removed here; e.g. a new graph version): the checkpoint is
    read, the export built again; the head entry is not rewritten."""
    _, cold, want = first["regression-sparsemax"]
    cache = tmp_path / "cache"
    shutil.copytree(first["regression-sparsemax"][0], cache)
    shutil.rmtree(cache / "encoders" / cold.graph_path.parent.name)
    head = _head_folder(cache) / "manifest.json"
    before = head.stat().st_mtime_ns
    reads = ReadCounter(monkeypatch)
    s = _load(cache)
    assert reads.calls == 1
    assert s.checkpoint_read
    assert s.graph_path.parent.name == cold.graph_path.parent.name
    assert s.graph_path.is_file()
    assert head.stat().st_mtime_ns == before
    np.testing.assert_array_equal(_scores(s), want)
    # fp16 has its own export, not cached yet: the same fallback, with the same head entry
    s16 = _load(cache, precision="fp16")
    assert reads.calls == 2
    assert s16.precision == "fp16"
    assert s16.checkpoint_read
    assert not _load(cache, precision="fp16").checkpoint_read
    assert reads.calls == 2


def test_edited_hparams_or_config_have_their_own_entry(first, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    shutil.copytree(first["regression-sparsemax"][0], cache)
    _, _, want = first["regression-sparsemax"]
    model = tmp_path / "regression-sparsemax"
    shutil.copytree(GOLDEN / "models" / "regression-sparsemax", model)
    reads = ReadCounter(monkeypatch)
    # a copy of the folder (another path, another mtime, the same bytes) finds the original's entry
    copy = _load(cache, model=model)
    assert reads.calls == 0
    assert not copy.checkpoint_read
    np.testing.assert_array_equal(_scores(copy), want)
    # hparams.yaml edited (softmax instead of sparsemax): another entry, read from the checkpoint
    hp = model / "hparams.yaml"
    hp.write_text(hp.read_text().replace("layer_transformation: sparsemax", "layer_transformation: softmax"))
    assert _head_folder(cache, model=model) != _head_folder(cache)
    soft = _load(cache, model=model)
    assert reads.calls == 1
    assert (soft.spec.mix, soft.checkpoint_read) == ("softmax", True)
    assert not np.allclose(_scores(soft), want)
    assert _head_folder(cache, model=model).is_dir()
    assert _head_folder(cache).is_dir()
    warm_soft = _load(cache, model=model)
    assert reads.calls == 1
    assert (warm_soft.spec.mix, warm_soft.checkpoint_read) == ("softmax", False)
    np.testing.assert_array_equal(_scores(warm_soft), _scores(soft))
    # the encoder's config.json edited (a key the graph does not use): another entry too
    enc = tmp_path / "encoder"
    shutil.copytree(ENCODER, enc)
    cfg = json.loads((enc / "config.json").read_text())
    (enc / "config.json").write_text(json.dumps({**cfg, "note": "edited"}))
    assert _head_folder(cache, encoder=enc) != _head_folder(cache)
    other = _load(cache, encoder=enc)
    assert reads.calls == 2
    assert other.checkpoint_read
    assert other.spec.encoder_config["note"] == "edited"
    np.testing.assert_array_equal(_scores(other), want)
    assert _head_folder(cache, encoder=enc).is_dir()


def test_unwritable_cache_keeps_no_head(first, tmp_path, monkeypatch):
    """The cache is a regular file: the export goes to this process's temporary folder with one
    warning, and no head entry is written there (no later process would find it)."""
    _, _, want = first["referenceless-cls"]
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    reads = ReadCounter(monkeypatch)
    with pytest.warns(EncoderCacheWarning) as rec:
        s = _load(blocked, "referenceless-cls")
    assert reads.calls == 1
    msgs = [str(w.message) for w in rec if issubclass(w.category, EncoderCacheWarning)]
    assert len(msgs) == 1
    assert "ONNX export of the COMET model" in msgs[0]
    assert not any(p.name.startswith("comet-head-") for p in s.graph_path.parent.parent.iterdir())
    np.testing.assert_array_equal(_scores(s), want)


def test_a_cache_that_cannot_take_the_head_still_loads(tmp_path, monkeypatch):
    """Writing the head is best effort: a read-only or full cache that holds the export but no head
    (one filled by an older mtscore, say) loads and scores with no warning and no error."""
    cache = tmp_path / "cache"
    want = _scores(_load(cache))
    shutil.rmtree(_head_folder(cache))

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(head_cache, "atomic_write", full)
    s, _ = _full_read_without_warnings(cache, monkeypatch)
    assert not _head_folder(cache).exists() or not (_head_folder(cache) / "manifest.json").exists()
    np.testing.assert_array_equal(_scores(s), want)
