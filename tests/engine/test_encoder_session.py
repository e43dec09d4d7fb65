"""Opening the encoder's ONNX Runtime session (issue P15): precision modes, CUDA never silently on
the CPU, onnxruntime's spurious warnings silenced, a model directory without the default package.

The CUDA cases run against a fake ``onnxruntime`` module (no GPU needed): it records the
providers and options each session is asked for and answers ``get_providers()`` as a machine
whose CUDA libraries did (or did not) load would.
"""
import shutil
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="BERTScore needs onnxruntime (pip install 'mtscore[bertscore]')")
pytest.importorskip("tokenizers", reason="BERTScore needs tokenizers")

from mtscore.engine.bertscore import BERTScore
from mtscore.engine.encoder import EncoderError, hub, load_encoder, session
from mtscore.engine.encoder import cache as enc_cache
from mtscore.engine.encoder import model_dir as model_dir_module
from mtscore.engine.encoder.runtime import Encoder
from mtscore.engine.encoder.session import EncoderFallbackWarning, open_session

CANDS = ["The cat sat on the mat.", "A quick brown fox jumps.", ""]
REFS = [["The cat is sitting on the mat.", "A fast brown fox leaped.", "Nothing here."]]


# ------------------------------------------------------------------------- a fake onnxruntime
class FakeORT(types.ModuleType):
    """Enough of onnxruntime for :func:`open_session`; ``loads``: providers a CUDA session gets."""

    def __init__(self, root: Path, cuda_loads: bool = True, cuda_lib: bytes | None = b"not a library"):
        super().__init__("onnxruntime")
        (root / "capi").mkdir(parents=True, exist_ok=True)
        self.__file__ = str(root / "__init__.py")
        if cuda_lib is not None:
            (root / "capi" / "libonnxruntime_providers_cuda.so").write_bytes(cuda_lib)
        self.cuda_loads = cuda_loads
        self.calls: list = []  # ("severity", level) / ("session", providers, kwargs)
        self.severity = 2
        ort = self

        class SessionOptions:
            def __init__(self):
                self.entries = {}

            def add_session_config_entry(self, k, v):
                self.entries[k] = v

        class Session:
            def __init__(self, path, sess_options=None, providers=None, **kw):
                ort.calls.append(("session", providers, kw, ort.severity))
                names = [p[0] if isinstance(p, tuple) else p for p in providers]
                if not ort.cuda_loads:
                    names = [n for n in names if n != "CUDAExecutionProvider"]
                self._providers = names
                self.fallback = True

            def get_providers(self):
                return list(self._providers)

            def get_outputs(self):
                return [types.SimpleNamespace(name="hidden_states")]

            def disable_fallback(self):
                self.fallback = False

        self.SessionOptions = SessionOptions
        self.InferenceSession = Session
        self.ExecutionMode = types.SimpleNamespace(ORT_SEQUENTIAL=0)
        self.GraphOptimizationLevel = types.SimpleNamespace(ORT_ENABLE_ALL=99)

    def get_available_providers(self):
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]

    def set_default_logger_severity(self, level):
        self.calls.append(("severity", level))
        self.severity = level

    def sessions(self):
        return [c for c in self.calls if c[0] == "session"]


@pytest.fixture
def fake_ort(tmp_path, monkeypatch):
    ort = FakeORT(tmp_path / "onnxruntime")
    monkeypatch.setattr(session, "import_ort", lambda metric=None: ort)
    return ort


def _cuda_options(ort, i=-1):
    providers = ort.sessions()[i][1]
    assert providers[0][0] == "CUDAExecutionProvider"
    assert providers[-1] == "CPUExecutionProvider"
    return providers[0][1]


# ------------------------------------------------------------------------------- precision
def test_fp32_asks_cuda_for_ieee_float32(fake_ort):
    s = open_session(Path("m.onnx"), device="cuda", precision="fp32")
    assert _cuda_options(fake_ort) == {"device_id": 0, "use_tf32": 0}
    assert (s.device, s.precision) == ("cuda", "fp32")


def test_tf32_and_device_number(fake_ort):
    s = open_session(Path("m.onnx"), device="cuda:1", precision="tf32")
    assert _cuda_options(fake_ort) == {"device_id": 1, "use_tf32": 1}
    assert (s.device, s.precision) == ("cuda:1", "tf32")


def test_fp16_session_keeps_tf32_off(fake_ort):
    open_session(Path("m.onnx"), device="cuda:2", precision="fp16")
    assert _cuda_options(fake_ort) == {"device_id": 2, "use_tf32": 0}


def test_tf32_on_cpu_runs_and_records_fp32(fake_ort):
    s = open_session(Path("m.onnx"), device="cpu", precision="tf32")
    assert fake_ort.sessions()[-1][1] == ["CPUExecutionProvider"]
    assert (s.device, s.precision) == ("cpu", "fp32")


def test_encoder_precision_attribute(fake_ort):
    enc = Encoder(Path("m.onnx"), None, name="m", model_hash="0" * 64, layer=6, device="cuda", precision="tf32")
    assert (enc.device, enc.precision, enc.output_name) == ("cuda", "tf32", "hidden_states")


@pytest.mark.parametrize("bad", ["bf16", "FP32", "int8", ""])
def test_bad_precision_names_the_option(fake_ort, bad):
    with pytest.raises(ValueError, match=r"--precision .*fp32.*tf32.*fp16"):
        open_session(Path("m.onnx"), device="cpu", precision=bad)


def test_precision_none_is_fp32(fake_ort):
    assert open_session(Path("m.onnx"), device="cuda", precision=None).precision == "fp32"
    assert _cuda_options(fake_ort)["use_tf32"] == 0


# ------------------------------------------------------------- CUDA never silently on the CPU
def test_cuda_without_the_provider_raises_with_the_loader_reason(fake_ort):
    fake_ort.cuda_loads = False
    with pytest.raises(EncoderError) as e:
        open_session(Path("m.onnx"), device="cuda:0")
    msg = str(e.value)
    assert msg.startswith("--device cuda:0: onnxruntime's CUDA provider did not load")
    # the dynamic loader's own words about the provider library (here: not an ELF file)
    assert "libonnxruntime_providers_cuda.so" in msg
    assert "onnxruntime-gpu" in msg
    assert "--device cpu" in msg
    assert len(fake_ort.sessions()) == 1  # no CPU session was opened behind the user's back


def test_cuda_reason_when_the_library_is_missing(fake_ort):
    (Path(fake_ort.__file__).parent / "capi" / "libonnxruntime_providers_cuda.so").unlink()
    fake_ort.cuda_loads = False
    with pytest.raises(EncoderError, match=r"providers_cuda\.so is missing"):
        open_session(Path("m.onnx"), device="cuda")


def test_auto_falls_back_with_one_warning(fake_ort):
    fake_ort.cuda_loads = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = open_session(Path("m.onnx"), device="auto", precision="tf32")
    fallback = [x for x in w if issubclass(x.category, EncoderFallbackWarning)]
    assert len(fallback) == 1
    assert len(w) == 1
    assert "libonnxruntime_providers_cuda.so" in str(fallback[0].message)
    assert (s.device, s.precision) == ("cpu", "fp32")
    assert fake_ort.sessions()[-1][1] == ["CPUExecutionProvider"]


def test_auto_with_cuda_working_runs_on_cuda(fake_ort):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = open_session(Path("m.onnx"), device="auto")
    assert s.device == "cuda"


def test_cuda_session_that_raises(fake_ort):
    """onnxruntime raising while it opens the CUDA session (e.g. no GPU visible): an EncoderError
    for cuda, the CPU with one warning for auto."""
    base = fake_ort.InferenceSession

    def failing(path, sess_options=None, providers=None, **kw):
        if any(isinstance(p, tuple) for p in providers):
            raise RuntimeError("CUDA failure 100: no CUDA-capable device is detected\nmore")
        return base(path, sess_options, providers, **kw)

    fake_ort.InferenceSession = failing
    with pytest.raises(EncoderError, match=r"--device cuda: .* on the GPU \(CUDA failure 100: no CUDA-capable"):
        open_session(Path("m.onnx"), device="cuda")
    with pytest.warns(EncoderFallbackWarning, match=r"CUDA failure 100"):
        s = open_session(Path("m.onnx"), device="auto")
    assert s.device == "cpu"


def test_messages_name_the_metric_and_option_in_use(fake_ort, monkeypatch, tmp_path):
    """The caller's metric and model option are what the messages name (COMET's --comet-model, not
    BERTScore's --model); a caller naming neither gets neither."""
    fake_ort.cuda_loads = False
    with pytest.warns(EncoderFallbackWarning, match=r"; COMET runs on the CPU\."):
        open_session(Path("m.onnx"), device="auto", metric="COMET", option="--comet-model")
    with pytest.warns(EncoderFallbackWarning, match=r"; the encoder runs on the CPU\."):
        open_session(Path("m.onnx"), device="auto")
    monkeypatch.undo()  # the real onnxruntime from here on
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a protobuf")
    with pytest.raises(EncoderError, match=r"^--comet-model: .*bad\.onnx: onnxruntime cannot load this ONNX file"):
        open_session(bad, metric="COMET", option="--comet-model")
    with pytest.raises(EncoderError, match=r"^/.*bad\.onnx: onnxruntime cannot load this ONNX file") as e:
        open_session(bad)
    assert "--model" not in str(e.value)
    monkeypatch.setitem(__import__("sys").modules, "onnxruntime", None)  # import onnxruntime fails
    with pytest.raises(EncoderError, match=r"^COMET needs onnxruntime: pip install"):
        open_session(bad, metric="COMET", option="--comet-model")
    with pytest.raises(EncoderError, match=r"^onnxruntime is not installed: pip install") as e:
        session.check_device("cuda")
    assert "BERTScore" not in str(e.value)
    with pytest.raises(EncoderError, match=r"^BERTScore needs onnxruntime: pip install"):
        load_encoder(None, device="cuda")


def test_onnxruntime_fallback_is_off(fake_ort):
    s = open_session(Path("m.onnx"), device="cuda")
    assert fake_ort.sessions()[-1][2] == {"enable_fallback": 0}  # no retry on the CPU at creation
    assert s.session.fallback is False  # nor when a run fails


def test_old_onnxruntime_printed_fallback_becomes_the_error(fake_ort, capsys):
    """An onnxruntime that ignores ``enable_fallback`` prints "EP Error ... Falling back" and
    retries on the CPU: the print is not shown, its reason ends in the EncoderError."""
    base = fake_ort.InferenceSession

    def printing(path, sess_options=None, providers=None, **kw):
        print("*************** EP Error ***************")
        print("EP Error libcublasLt.so.13: cannot open shared object file when using [...]")
        print("Falling back to ['CPUExecutionProvider'] and retrying.")
        return base(path, sess_options, ["CPUExecutionProvider"], **kw)

    fake_ort.InferenceSession = printing
    with pytest.raises(EncoderError, match=r"did not load \(EP Error libcublasLt\.so\.13"):
        open_session(Path("m.onnx"), device="cuda")
    assert capsys.readouterr().out == ""


# ------------------------------------------------------------- onnxruntime's default logger
def test_severity_set_before_every_session(fake_ort):
    open_session(Path("m.onnx"), device="cuda")
    open_session(Path("m.onnx"), device="cpu")
    assert fake_ort.calls[0] == ("severity", session.ORT_LOG_SEVERITY) == ("severity", 3)
    assert [c[3] for c in fake_ort.sessions()] == [3, 3]  # the level when each session was created


def test_real_cpu_session_is_quiet(tmp_path, capfd):
    """With the real onnxruntime: a CPU session prints nothing (errors would still)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    model = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y]))
    onnx.save(model, str(tmp_path / "id.onnx"))
    s = open_session(tmp_path / "id.onnx", device="cpu", threads=1)
    assert s.session.get_providers() == ["CPUExecutionProvider"]
    out = capfd.readouterr()
    assert out.out == ""
    assert out.err == ""


# ----------------------------------------------------------- model directory, default absent
@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("session-cache"))


@pytest.fixture(scope="module")
def default_scorer(model_dir, cache):
    return BERTScore(layer=6, cache_dir=cache, threads=1, progress=False)


def _not_installed():
    raise EncoderError("the default BERTScore model (all-MiniLM-L6-v2) is not installed: run `pip ...`")


def test_model_dir_without_the_default_package(model_dir, default_scorer, cache, tmp_path, monkeypatch):
    own = tmp_path / "my-minilm"
    own.mkdir()
    for f in model_dir.iterdir():
        if f.is_file():
            (own / f.name).symlink_to(f) if f.name == "model.safetensors" else shutil.copy(f, own / f.name)
    monkeypatch.setattr(model_dir_module, "default_model_dir", _not_installed)  # runtime looks it up here
    monkeypatch.setattr(hub, "default_model_dir", _not_installed)
    with pytest.raises(EncoderError, match="not installed"):
        BERTScore(layer=6, cache_dir=cache, threads=1, progress=False)  # the default really is gone
    mine = BERTScore(model=str(own), layer=6, cache_dir=cache, threads=1, progress=False)
    r, d = mine.score(CANDS, REFS), default_scorer.score(CANDS, REFS)
    np.testing.assert_array_equal(r.f1, d.f1)
    np.testing.assert_array_equal(r.precision, d.precision)
    np.testing.assert_array_equal(r.recall, d.recall)
    assert "model:my-minilm@" in str(mine.get_signature())


# ------------------------------------------------------------------------------ signature
def test_signature_names_precision_only_when_not_fp32(default_scorer, monkeypatch):
    default_scorer.score(CANDS, REFS)
    assert default_scorer.encoder.precision == "fp32"
    sig = default_scorer.get_signature()
    assert "prec" not in sig.info
    assert "|prec:" not in str(sig)
    monkeypatch.setattr(default_scorer.encoder, "precision", "fp16")
    sig = default_scorer.get_signature()
    assert "|prec:fp16|version:" in str(sig)
    assert "|pr:fp16|v:" in sig.format(short=True)


def test_fp16_picks_the_float16_export(model_dir, fake_ort, monkeypatch, tmp_path):
    asked = []

    def export(path, layer, dtype="float32", **kw):
        asked.append(dtype)
        return {"onnx": str(tmp_path / f"x-{dtype}.onnx"), "source_sha256": "ab" * 32}

    monkeypatch.setattr(enc_cache, "export_encoder", export)
    enc = load_encoder(None, 6, device="cuda", precision="fp16")
    assert asked == ["float16"]
    assert enc.onnx_path.name == "x-float16.onnx"
    assert enc.precision == "fp16"
    assert _cuda_options(fake_ort)["use_tf32"] == 0
    enc = load_encoder(None, 6, device="cuda")  # the default: fp32 on CUDA too
    assert asked[-1] == "float32"
    assert enc.precision == "fp32"
    assert _cuda_options(fake_ort)["use_tf32"] == 0
    with pytest.raises(ValueError, match=r"--precision 'half'"):
        load_encoder(None, 6, device="cpu", precision="half")


def test_fp16_with_an_onnx_file_is_refused(tmp_path):
    f = tmp_path / "m.onnx"
    f.write_bytes(b"")
    with pytest.raises(ValueError, match=r"--precision fp16 --model .*an \.onnx file runs as it was exported"):
        load_encoder(str(f), device="cpu", precision="fp16")


# ------------------------------------------------------------------------------------- CLI
def test_cli_precision_reaches_bertscore(monkeypatch):
    from mtscore.bindings.cli import bertscore as cli_bs
    from mtscore.bindings.cli.score import build_parser

    got = {}
    monkeypatch.setattr(cli_bs, "BERTScore", lambda **kw: got.update(kw))
    args = build_parser().parse_args(["ref.txt", "-m", "bertscore", "--precision", "fp16", "--device", "cuda"])
    cli_bs.scorer_from_args(args)
    assert got["precision"] == "fp16"
    assert got["device"] == "cuda"
    assert cli_bs.BERTScoreRunner.ray_kwargs(args)["precision"] == "fp16"
    args = build_parser().parse_args(["ref.txt", "-m", "bertscore"])
    cli_bs.scorer_from_args(args)
    assert got["precision"] == "fp32"


def test_cli_bad_precision(capsys):
    from mtscore.bindings.cli.score import build_parser

    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["ref.txt", "-m", "bertscore", "--precision", "bf16"])
    assert e.value.code == 2
    assert "--precision" in capsys.readouterr().err
