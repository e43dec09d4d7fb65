"""Model resolution like bert_score: its language / model / layer tables (checked against
bert_score's own), the Hugging Face cache (a real hub layout built in a temporary directory from
the packaged MiniLM files, loaded by repo name with HF_HUB_OFFLINE=1), revisions, the offline
error, and the export cache keyed on the resolved revision."""
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="BERTScore needs onnxruntime (pip install 'mtscore[bertscore]')")
pytest.importorskip("tokenizers", reason="BERTScore needs tokenizers")
pytest.importorskip("huggingface_hub", reason="loading by name needs huggingface_hub")

from mtscore.engine.encoder import (
    EncoderError,
    hub,
    resolve_source,
)
from mtscore.engine.encoder import bert_score_defaults as tables
from mtscore.engine.encoder import model_dir as md

REPO = "mtscore-test/minilm-copy"
COMMIT_MAIN = "a" * 40
COMMIT_V2 = "b" * 40


# ---- bert_score's tables ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bs_utils():
    pytest.importorskip("torch", reason="importing bert_score needs torch")
    pytest.importorskip("bert_score", reason="pip install bert-score for the table checks")
    import bert_score.utils as bu

    return bu


def test_model_layer_table_equals_bert_score(bs_utils):
    assert bs_utils.model2layers == tables.MODEL_LAYERS
    assert len(tables.MODEL_LAYERS) >= 140


@pytest.mark.parametrize("lang", ["en", "EN", "zh", "tr", "en-sci", "de", "fr", "cs", "xx", "ja"])
def test_language_defaults_equal_bert_score(bs_utils, lang):
    # bert_score.score: model_type = lang2model[lang.lower()]; num_layers = model2layers[model_type]
    want_model = bs_utils.lang2model[lang.lower()]
    assert tables.model_for_lang(lang) == want_model
    assert tables.bert_score_defaults(None, lang, None) == (want_model, bs_utils.model2layers[want_model])


def test_layer_defaults_and_explicit_values(bs_utils):
    for name, layer in bs_utils.model2layers.items():
        assert tables.bert_score_defaults(name, None, None) == (name, layer)
    # an explicit model wins over lang, an explicit layer over the table; unknown model -> None (last)
    assert tables.bert_score_defaults("bert-base-uncased", "en", None) == ("bert-base-uncased", 9)
    assert tables.bert_score_defaults("roberta-large", None, 3) == ("roberta-large", 3)
    assert tables.bert_score_defaults("/some/local/dir", None, None) == ("/some/local/dir", None)
    assert tables.bert_score_defaults(None, None, None) == (None, None)  # packaged MiniLM


def test_rescale_baseline_files_of_bert_score(bs_utils):
    import pandas as pd

    from mtscore.engine.bertscore import read_baseline
    from mtscore.engine.bertscore_files import packaged_baseline

    f = packaged_baseline("EN", "roberta-large")
    assert f.name == "roberta-large.tsv"
    assert f.parent.name == "en"
    want = pd.read_csv(f).iloc[17].to_numpy()[1:].astype(np.float32)  # bert_score's reading
    np.testing.assert_array_equal(read_baseline(f, 17), want.astype(np.float64))
    with pytest.raises(FileNotFoundError, match=r"no baseline for model 'all-MiniLM-L6-v2'.*mtscore bertscore baseline"):
        packaged_baseline("en", "all-MiniLM-L6-v2")


# ---- a Hugging Face cache in a temporary directory ------------------------------------------
def _blob(blobs, src):
    data = Path(src).read_bytes() if os.path.getsize(src) < 5_000_000 else None
    if data is None:  # the weights: linked, not copied (90 MB)
        digest = hashlib.sha256(str(src).encode()).hexdigest()
        dst = blobs / digest
        if not dst.exists():
            os.symlink(src, dst)
        return dst
    digest = hashlib.sha256(data).hexdigest()
    dst = blobs / digest
    dst.write_bytes(data)
    return dst


def _snapshot(repo_dir, commit, src_dir, files, edit_config=None):
    """huggingface_hub's layout: snapshots/<commit>/<file> -> ../../blobs/<hash>."""
    blobs = repo_dir / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    snap = repo_dir / "snapshots" / commit
    snap.mkdir(parents=True)
    for name in files:
        src = src_dir / name
        if name == "config.json" and edit_config:
            cfg = json.loads(src.read_text())
            cfg.update(edit_config)
            tmp = repo_dir / "config.tmp"
            tmp.write_text(json.dumps(cfg))
            src = tmp
        b = _blob(blobs, src)
        os.symlink(os.path.relpath(b, snap), snap / name)
    return snap


@pytest.fixture(scope="module")
def hf_home(tmp_path_factory):
    try:
        src = md.default_model_dir()
    except EncoderError as e:
        pytest.skip(str(e))
    home = tmp_path_factory.mktemp("hf-home")
    repo_dir = home / "hub" / ("models--" + REPO.replace("/", "--"))
    files = ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
             "vocab.txt", "model.safetensors"]
    _snapshot(repo_dir, COMMIT_MAIN, src, files)
    _snapshot(repo_dir, COMMIT_V2, src, files, edit_config={"_name_or_path": "v2"})
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text(COMMIT_MAIN)
    (repo_dir / "refs" / "v2").write_text(COMMIT_V2)
    return home


@pytest.fixture
def offline_env(hf_home, monkeypatch):
    for v in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return hf_home


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("bs-hub-cache"))


def test_resolves_repo_name_from_hf_cache(offline_env):
    src = resolve_source(REPO)
    assert src.name == REPO
    assert src.revision == COMMIT_MAIN
    assert src.path == offline_env / "hub" / "models--mtscore-test--minilm-copy" / "snapshots" / COMMIT_MAIN
    v2 = resolve_source(REPO, revision="v2")
    assert v2.revision == COMMIT_V2
    assert v2.path.name == COMMIT_V2
    assert resolve_source(REPO, revision=COMMIT_V2).path == v2.path  # a commit hash directly


def test_hf_hub_cache_variable_wins(offline_env, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(offline_env / "hub"))
    monkeypatch.setenv("HF_HOME", str(offline_env / "elsewhere"))
    assert hub.hub_cache_dir() == offline_env / "hub"
    assert resolve_source(REPO).revision == COMMIT_MAIN


def test_local_path_comes_first(offline_env, tmp_path, monkeypatch):
    local = tmp_path / "mtscore-test" / "minilm-copy"
    local.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    src = resolve_source(REPO)  # a directory of that name in the working directory
    assert src.path == local.absolute()
    assert src.revision is None


def test_offline_error_is_clear(offline_env):
    with pytest.raises(EncoderError, match=r"'nobody/not-there'.*not in the Hugging Face cache .*HF_HUB_OFFLINE"):
        resolve_source("nobody/not-there")
    with pytest.raises(EncoderError, match=r"revision 'v9'"):
        resolve_source(REPO, revision="v9")


def test_failed_download_is_one_clear_error(hf_home, monkeypatch, tmp_path):
    # network allowed but unreachable: huggingface_hub's own error becomes one EncoderError
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    import huggingface_hub

    def no_network(*a, **kw):
        if kw.get("local_files_only"):
            raise huggingface_hub.errors.LocalEntryNotFoundError("not cached")
        raise ConnectionError("Failed to resolve 'huggingface.co'")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_network)
    with pytest.raises(EncoderError, match=r"the download failed \(ConnectionError: Failed to resolve"):
        resolve_source("roberta-large")


def test_scores_by_repo_name_equal_packaged_and_export_keyed_on_revision(offline_env, cache_dir):
    from mtscore.engine.bertscore import BERTScore

    cands, refs = ["The cat sat on the mat.", "A quick test"], ["A cat was sitting on the mat.", "quick tests"]
    packaged = BERTScore(layer=6, cache_dir=cache_dir, progress=False, threads=1)
    by_name = BERTScore(model=REPO, layer=6, cache_dir=cache_dir, progress=False, threads=1)
    a, b = packaged.score(cands, [refs]), by_name.score(cands, [refs])
    np.testing.assert_array_equal(a.f1, b.f1)
    assert f"model:{REPO}@53aa5117" in b.signature
    v2 = BERTScore(model=REPO, layer=6, revision="v2", cache_dir=cache_dir, progress=False, threads=1)
    m_main = json.loads((by_name.encoder.onnx_path.parent / "manifest.json").read_text())
    m_v2 = json.loads((v2.encoder.onnx_path.parent / "manifest.json").read_text())
    assert m_main["revision"] == COMMIT_MAIN
    assert m_v2["revision"] == COMMIT_V2
    assert by_name.encoder.onnx_path.parent != v2.encoder.onnx_path.parent
    np.testing.assert_array_equal(v2.score(cands, [refs]).f1, a.f1)
    # default layer when the model is not in bert_score's table: the last one
    assert BERTScore(model=REPO, cache_dir=cache_dir, progress=False, threads=1).layer == 6


def test_no_huggingface_hub_names_the_install(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *a, **kw):
        if name == "huggingface_hub":
            raise ImportError("no huggingface_hub")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(EncoderError, match=r"needs huggingface_hub: pip install"):
        resolve_source("someone/some-model")


def test_not_a_name_nor_a_path():
    with pytest.raises(EncoderError, match="not a Hugging Face model name"):
        resolve_source("./missing/dir/../x")


def test_download_path_when_the_network_is_allowed(hf_home, monkeypatch, tmp_path):
    """Not cached, not offline: huggingface_hub downloads (simulated here: no network in CI) only the
    encoder's files, safetensors first, pytorch_model.bin only when a repo has no safetensors."""
    import huggingface_hub

    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    calls = []

    def fake(repo, revision=None, cache_dir=None, local_files_only=False, allow_patterns=None):
        calls.append((local_files_only, tuple(allow_patterns)))
        if local_files_only:
            raise huggingface_hub.errors.LocalEntryNotFoundError("not cached")
        snap = tmp_path / "hub" / "snap" / ("c" * 40)
        snap.mkdir(parents=True, exist_ok=True)
        (snap / "config.json").write_text("{}")
        if "pytorch_model.bin" in allow_patterns:  # this repo only has the .bin weights
            (snap / "pytorch_model.bin").write_bytes(b"")
        assert cache_dir == str(tmp_path / "hub")
        return str(snap)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    src = resolve_source("someone/bin-only", revision="main")
    assert src.revision == "c" * 40
    assert (src.path / "pytorch_model.bin").is_file()
    assert [c[0] for c in calls] == [True, False, False]
    assert "model.safetensors" in calls[1][1]
    assert "pytorch_model.bin" not in calls[1][1]
    assert "pytorch_model.bin" in calls[2][1]
    assert "tokenizer.json" in calls[2][1]
