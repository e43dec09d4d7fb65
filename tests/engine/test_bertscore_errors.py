"""BERTScore's user-facing failure modes (issue P6, findings 4 and 5, and the bad-input sweep):

* the encoder cache: an unusable MTSCORE_CACHE / XDG_CACHE_HOME no longer ends in a bare OSError;
  a read-only pre-filled cache works (also with int8); an artefact that must be built in an
  unwritable cache is built in a temporary directory with one warning naming the variable;
* truncation at the model's maximum length: one BERTScoreTruncationWarning per scoring call with
  the counts, also on the result;
* bad options (--model, --layer, --batch-tokens, --device, --rescale-baseline) give one clear
  message naming the option.
"""
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="BERTScore needs onnxruntime (pip install 'mtscore[bertscore]')")
pytest.importorskip("tokenizers", reason="BERTScore needs tokenizers")

from mtscore.engine.bertscore import BERTScore, BERTScoreTruncationWarning, read_baseline
from mtscore.engine.encoder import EncoderCacheWarning, EncoderError, cuda_available, load_encoder

REPO = Path(__file__).resolve().parents[2]
LONG = " ".join(["word"] * 2000)  # 2002 tokens with [CLS]/[SEP]
# two 2,000-word lines that share their first 600 words: both are cut inside the shared part
SHARED_PREFIX_A = " ".join(["alpha"] * 600 + ["beta"] * 1400)
SHARED_PREFIX_B = " ".join(["alpha"] * 600 + ["gamma"] * 1400)


@pytest.fixture(scope="module")
def filled_cache(model_dir, tmp_path_factory):
    """A cache holding the default export and its int8 file (built once for the module)."""
    root = tmp_path_factory.mktemp("filled-cache")
    load_encoder(None, 6, cache_dir=str(root), threads=1, quantize=True)
    return root


@pytest.fixture(scope="module")
def scorer(filled_cache):
    return BERTScore(layer=6, cache_dir=str(filled_cache), threads=1, progress=False)


def _env(monkeypatch, **env):
    for k in ("MTSCORE_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, str(v))


def _block_writes(monkeypatch, root: Path) -> None:
    """Make ``root`` behave like a read-only mount (tests run as root, where chmod doesn't stop
    writes): creating folders or files below it fails with EROFS, existing folders give EEXIST."""
    root_s = os.path.realpath(root)
    real_mkdir, real_mkstemp, real_replace = os.mkdir, tempfile.mkstemp, os.replace

    def under(p) -> bool:
        return os.path.realpath(os.fspath(p)).startswith(root_s)

    def deny(p):
        if os.path.exists(p):
            raise FileExistsError(errno.EEXIST, "File exists", os.fspath(p))
        raise OSError(errno.EROFS, "Read-only file system", os.fspath(p))

    def mkdir(p, *a, **k):
        return deny(p) if under(p) else real_mkdir(p, *a, **k)

    def mkstemp(*a, dir=None, **k):
        if dir is not None and under(dir):
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(dir))
        return real_mkstemp(*a, dir=dir, **k)

    def replace(src, dst, *a, **k):
        if under(dst):
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(dst))
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(os, "replace", replace)


def _one_cache_warning(record, variable: str, path) -> str:
    cache_w = [w for w in record if issubclass(w.category, EncoderCacheWarning)]
    assert len(cache_w) == 1, [str(w.message) for w in record]
    msg = str(cache_w[0].message)
    assert variable in msg, msg
    assert str(path) in msg, msg
    assert "not writable" in msg, msg
    assert "MTSCORE_CACHE" in msg, msg
    return msg


# ---- finding 4: the cache ------------------------------------------------------------------

def test_cache_env_var_pointing_at_a_regular_file_falls_back(model_dir, tmp_path, monkeypatch):
    afile = tmp_path / "not-a-dir"
    afile.write_text("x")
    _env(monkeypatch, MTSCORE_CACHE=afile)
    with pytest.warns(EncoderCacheWarning) as record:
        s = BERTScore(layer=6, threads=1, progress=False)
    _one_cache_warning(record, "MTSCORE_CACHE", afile)
    assert not str(s.encoder.onnx_path).startswith(str(afile))
    assert s.score(["a cat sat"], [["the cat sat"]]).f1[0] > 0.5


def test_xdg_cache_home_under_a_regular_file_falls_back(model_dir, tmp_path, monkeypatch):
    afile = tmp_path / "file"
    afile.write_text("x")
    _env(monkeypatch, XDG_CACHE_HOME=afile / "sub")  # ENOTDIR, not EACCES: works as root too
    with pytest.warns(EncoderCacheWarning) as record:
        enc = load_encoder(None, 6, threads=1)
    msg = _one_cache_warning(record, "XDG_CACHE_HOME", afile / "sub" / "mtscore")
    assert "ENOTDIR" in msg
    assert enc.onnx_path.is_file()


def test_read_only_prefilled_cache_with_int8_needs_no_write(filled_cache, monkeypatch):
    _block_writes(monkeypatch, filled_cache)
    _env(monkeypatch, MTSCORE_CACHE=filled_cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = BERTScore(layer=6, threads=1, quantize=True, progress=False)
    assert s.encoder.onnx_path.name == "model.int8.onnx"
    assert str(s.encoder.onnx_path).startswith(str(filled_cache))
    assert s.score(["a cat sat"], [["the cat sat"]]).f1[0] > 0.5


def test_read_only_cache_without_int8_builds_it_in_a_temp_dir(filled_cache, tmp_path, monkeypatch):
    ro = tmp_path / "ro-cache"
    shutil.copytree(filled_cache, ro)
    for f in ro.rglob("model.int8.onnx"):
        f.unlink()
    _block_writes(monkeypatch, ro)
    _env(monkeypatch, MTSCORE_CACHE=ro)
    with pytest.warns(EncoderCacheWarning) as record:
        enc = load_encoder(None, 6, threads=1, quantize=True)
    msg = _one_cache_warning(record, "MTSCORE_CACHE", ro)
    assert "Read-only file system" in msg
    assert "int8" in msg
    assert enc.onnx_path.name == "model.int8.onnx"
    assert not str(enc.onnx_path).startswith(str(ro))
    assert not list(ro.rglob("*.tmp*"))


def test_read_only_cache_with_chmod(filled_cache, tmp_path, monkeypatch):
    ro = tmp_path / "chmod-cache"
    shutil.copytree(filled_cache, ro)
    for f in ro.rglob("model.int8.onnx"):
        f.unlink()
    for d in [ro, *[p for p in ro.rglob("*") if p.is_dir()]]:
        os.chmod(d, 0o555)
    try:
        if os.access(ro / "encoders", os.W_OK):
            pytest.skip("chmod does not stop writes here (running as root); the EROFS test covers it")
        _env(monkeypatch, MTSCORE_CACHE=ro)
        with pytest.warns(EncoderCacheWarning, match="MTSCORE_CACHE"):
            enc = load_encoder(None, 6, threads=1, quantize=True)
        assert enc.onnx_path.is_file()
    finally:
        for d in [ro, *[p for p in ro.rglob("*") if p.is_dir()]]:
            os.chmod(d, 0o755)


def test_cache_copied_elsewhere_is_used_read_only(filled_cache, tmp_path, monkeypatch):
    """A pre-filled cache moved to another path (e.g. baked into an image): the manifest's absolute
    ONNX path is stale, the file is found in the manifest's own folder, nothing is rebuilt."""
    moved = tmp_path / "moved"
    shutil.copytree(filled_cache, moved)
    (man_file,) = moved.rglob("manifest.json")
    man = json.loads(man_file.read_text())
    man["onnx"] = str(tmp_path / "gone" / "model.onnx")
    man_file.write_text(json.dumps(man))
    _block_writes(monkeypatch, moved)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = load_encoder(None, 6, threads=1, cache_dir=str(moved))
    assert enc.onnx_path == man_file.parent / "model.onnx"


def test_unusable_cache_and_no_temp_dir_is_one_clear_error(model_dir, tmp_path):
    """The last resort: no temporary directory either -> one line naming the variable, the path
    and the remedy (run in a fresh process: the fallback directory is per process)."""
    afile = tmp_path / "file"
    afile.write_text("x")
    code = textwrap.dedent("""
        import sys, tempfile
        def no_tmp(*a, **k):
            raise PermissionError(13, "Permission denied", "/tmp")
        tempfile.mkdtemp = no_tmp
        from mtscore.bindings.cli.main import main
        sys.exit(main(sys.argv[1:]))
    """)
    (tmp_path / "h.txt").write_text("a cat sat\n")
    (tmp_path / "r.txt").write_text("the cat sat\n")
    env = dict(os.environ, MTSCORE_CACHE=str(afile), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r.txt"), "-i", str(tmp_path / "h.txt"),
                          "-m", "bertscore"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("mtscore:")]
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert "MTSCORE_CACHE" in lines[0]
    assert str(afile) in lines[0]
    assert "writable directory" in lines[0]


def test_concurrent_exports_into_one_cache(model_dir, tmp_path):
    """Two processes exporting the same encoder at once: both succeed, whole files, no temp litter."""
    code = ("import sys; from mtscore.engine.encoder import load_encoder; "
            "e = load_encoder(None, 6, cache_dir=sys.argv[1], threads=1); print(e.onnx_path)")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "c")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    (folder,) = (tmp_path / "c" / "encoders").iterdir()
    assert sorted(f.name for f in folder.iterdir()) == ["manifest.json", "model.onnx"]
    assert json.loads((folder / "manifest.json").read_text())["onnx"] == outs[0][0].strip()


# ---- finding 5: truncation -------------------------------------------------------------------

def test_truncation_warns_once_with_counts(scorer):
    cands = [LONG, "a short candidate", LONG + " more"]
    refs = [LONG, "a short reference", "short"]
    with pytest.warns(BERTScoreTruncationWarning) as record:
        r = scorer.score(cands, [refs])
    mine = [w for w in record if issubclass(w.category, BERTScoreTruncationWarning)]
    assert len(mine) == 1
    msg = str(mine[0].message)
    assert "2 candidate(s) and 1 reference(s)" in msg
    assert "512 tokens" in msg
    assert "bert_score" in msg
    assert (r.truncated_candidates, r.truncated_references, r.n_truncated, r.max_length) == (2, 1, 3, 512)


def test_two_long_lines_sharing_a_prefix_are_no_longer_silent(scorer):
    with pytest.warns(BERTScoreTruncationWarning, match=r"1 candidate\(s\) and 1 reference\(s\)"):
        r = scorer.score([SHARED_PREFIX_A], [[SHARED_PREFIX_B]])
    assert r.f1[0] == pytest.approx(1.0, abs=1e-6)  # bert_score parity: both are cut to the prefix
    assert r.n_truncated == 2


def test_truncation_counted_per_segment_over_chunks_and_references(filled_cache):
    s = BERTScore(layer=6, cache_dir=str(filled_cache), threads=1, progress=False, chunk_size=1)
    with pytest.warns(BERTScoreTruncationWarning) as record:
        r = s.score([LONG, LONG, "x"], [[LONG, "y", "z"], [LONG, LONG, None]])
    assert len([w for w in record if issubclass(w.category, BERTScoreTruncationWarning)]) == 1
    assert (r.truncated_candidates, r.truncated_references) == (2, 3)
    with pytest.warns(BERTScoreTruncationWarning, match=r"2 candidate\(s\) and 3 reference\(s\)") as rec2:
        blocks = list(s.iter_scores(iter([LONG, LONG, "x"]), [iter([LONG, "y", "z"]), iter([LONG, LONG, None])]))
    assert len(rec2) == 1
    assert len(blocks) == 3


def test_no_truncation_warning_at_exactly_max_length(scorer):
    exactly = " ".join(["a"] * 510)  # 510 word pieces + [CLS] + [SEP] = 512
    assert len(scorer.tokenizer.encode([exactly])[0]) == 512
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = scorer.score([exactly, "short"], [[exactly, "short"]])
    assert r.n_truncated == 0


def test_truncation_warning_is_one_cli_line(filled_cache, tmp_path):
    (tmp_path / "h.txt").write_text(f"{LONG}\nshort\n")
    (tmp_path / "r.txt").write_text("short\nshort\n")
    env = dict(os.environ, MTSCORE_CACHE=str(filled_cache), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-m", "mtscore", str(tmp_path / "r.txt"), "-i", str(tmp_path / "h.txt"),
                          "-m", "bertscore"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if "BERTScore" in ln or "warnings.warn" in ln]
    assert lines == [
        "mtscore: warning: BERTScore: 1 candidate(s) and 0 reference(s) longer than the model's 512 tokens "
        "were truncated (bert_score does the same); their scores ignore the text beyond that point; pass "
        "long_inputs=\"window\" to score them whole with a sliding window, or split long segments (e.g. into "
        "sentences)"], out.stderr


# ---- bad inputs: one clear message naming the option ----------------------------------------

def _copy_model(src: Path, dst: Path, skip=()) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        if f.is_file() and f.name not in skip:
            (dst / f.name).symlink_to(f)
    return dst


def test_model_errors_name_the_option(model_dir, tmp_path):
    with pytest.raises(EncoderError, match=r"--model '/nonexistent/x': no such file"):
        load_encoder("/nonexistent/x")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EncoderError, match=r"--model .*empty: config\.json missing"):
        load_encoder(str(tmp_path / "empty"))
    notok = _copy_model(model_dir, tmp_path / "notok", skip={"tokenizer.json"})
    with pytest.raises(EncoderError, match=r"--model: .*notok/tokenizer\.json: missing"):
        load_encoder(str(notok))
    badcfg = _copy_model(model_dir, tmp_path / "badcfg", skip={"config.json"})
    (badcfg / "config.json").write_text("{bad")
    with pytest.raises(EncoderError, match=r"--model: .*badcfg/config\.json: not a readable JSON file"):
        load_encoder(str(badcfg))
    badtok = _copy_model(model_dir, tmp_path / "badtok", skip={"tokenizer.json"})
    (badtok / "tokenizer.json").write_text("{bad")
    with pytest.raises(EncoderError, match=r"--model: .*badtok/tokenizer\.json: not a readable JSON file"):
        load_encoder(str(badtok))
    (badtok / "tokenizer.json").write_text('{"model": {"type": "NoSuchModel"}}')
    with pytest.raises(EncoderError, match=r"--model: .*tokenizer\.json: not a valid tokenizer\.json"):
        load_encoder(str(badtok))
    (tmp_path / "text.txt").write_text("x")
    with pytest.raises(EncoderError, match=r"--model .*text\.txt: expected a model directory or an \.onnx file"):
        load_encoder(str(tmp_path / "text.txt"))


def test_invalid_onnx_file_names_the_file(model_dir, tmp_path):
    d = _copy_model(model_dir, tmp_path / "m", skip={"model.safetensors"})
    (d / "enc.onnx").write_bytes(b"not a protobuf")
    with pytest.raises(EncoderError, match=r"--model: .*enc\.onnx: onnxruntime cannot load this ONNX file"):
        load_encoder(str(d / "enc.onnx"), cache_dir=str(tmp_path / "c"))


@pytest.mark.parametrize("layer", [-1, 7, 99])
def test_layer_out_of_range(filled_cache, layer):
    with pytest.raises(ValueError, match=rf"--layer {layer}: all-MiniLM-L6-v2 has hidden layers 0\.\.6"):
        load_encoder(None, layer, cache_dir=str(filled_cache))


@pytest.mark.parametrize("bt", [0, -1, 2.5])
def test_batch_tokens_must_be_positive(filled_cache, bt):
    with pytest.raises(ValueError, match=r"--batch-tokens .*positive"):
        load_encoder(None, 6, cache_dir=str(filled_cache), batch_tokens=bt)
    with pytest.raises(ValueError, match=r"--batch-tokens"):
        BERTScore(layer=6, cache_dir=str(filled_cache), batch_tokens=bt)


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "cuda:", "tpu"])
def test_unknown_device(filled_cache, device):
    with pytest.raises(EncoderError, match=r"--device .*expected cpu, cuda, cuda:N"):
        load_encoder(None, 6, cache_dir=str(filled_cache), device=device)


def test_cuda_without_onnxruntime_gpu(filled_cache):
    if cuda_available():
        pytest.skip("onnxruntime-gpu is installed here")
    with pytest.raises(EncoderError, match=r"--device cuda: onnxruntime has no CUDA provider.*onnxruntime-gpu"):
        load_encoder(None, 6, cache_dir=str(filled_cache), device="cuda")


def test_empty_candidate_list(scorer):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = scorer.score([], [[]])
    assert r.f1.shape == (0,)
    assert np.isnan(r.mean_f1)
    assert r.n_truncated == 0


@pytest.mark.parametrize(("text", "match"), [
    ("LAYER,P,R,F\n0,0.1,0.2\n", r":2: 3 field\(s\)"),
    ("garbage\n", r":1: expected a header ending in P,R,F"),
    ("LAYER,P,R,F\n0,a,b,c\n", r":2: not a number"),
    ("LAYER,P,R,F\n0,nan,0.1,0.1\n", r":2: baseline values must be finite and below 1"),
    ("LAYER,P,R,F\n0,1.0,0.1,0.1\n", r":2: baseline values must be finite and below 1"),
    ("LAYER,P,R,F\n0,0.1,0.1,0.1\n", r": no baseline row for layer 3 \(file has layers 0\.\.0"),
])
def test_malformed_baseline_file(tmp_path, text, match):
    f = tmp_path / "base.tsv"
    f.write_text(text)
    with pytest.raises(ValueError, match=r"--rescale-baseline .*base\.tsv" + match):
        read_baseline(f, 3 if "layer 3" in match else 0)


def test_baseline_not_utf8_or_a_directory(tmp_path):
    f = tmp_path / "bin.tsv"
    f.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match=r"--rescale-baseline .*bin\.tsv: not UTF-8 text"):
        read_baseline(f, 0)
    with pytest.raises(OSError, match=r"--rescale-baseline .*: is a directory"):
        read_baseline(tmp_path, 0)


@pytest.mark.parametrize(("extra", "match"), [
    (["--batch-tokens", "0"], "--batch-tokens 0: must be a positive"),
    (["--device", "gpu"], "--device 'gpu': expected cpu"),
    (["--layer", "7"], "--layer 7: all-MiniLM-L6-v2 has hidden layers 0..6"),
    (["--model", "/nonexistent"], "--model '/nonexistent': no such file"),
])
def test_cli_bad_options_are_one_line(filled_cache, tmp_path, monkeypatch, capsys, extra, match):
    from mtscore.bindings.cli.main import main

    _env(monkeypatch, MTSCORE_CACHE=filled_cache)
    (tmp_path / "h.txt").write_text("a cat sat\n")
    (tmp_path / "r.txt").write_text("the cat sat\n")
    rc = main([str(tmp_path / "r.txt"), "-i", str(tmp_path / "h.txt"), "-m", "bertscore", "-q", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1, err
    assert len(err) == 1, err
    assert err[0].startswith("mtscore: error: "), err
    assert match in err[0], err
