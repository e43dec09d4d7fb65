"""Opening an ONNX Runtime session on a device, in a given precision, and never silently elsewhere.

* ``device``: cpu, cuda, cuda:N or auto (:func:`check_device`). A CUDA request whose session did
  not get the CUDA provider (its libraries did not load: onnxruntime then runs the model on the
  CPU without a word) raises :class:`~.model_dir.EncoderError` naming the library that failed
  (:func:`cuda_provider_error`); ``auto`` falls back to the CPU with one
  :class:`EncoderFallbackWarning` instead. onnxruntime's own Python fallback (it prints
  "EP Error ... Falling back" and retries on the CPU) is switched off.
* ``precision`` (:data:`PRECISIONS`): "fp32" is IEEE float32 on every device (the CUDA provider
  gets ``use_tf32=0``: its default runs float32 MatMul in TF32, 10-bit mantissas); "tf32" is the
  float32 model with ``use_tf32=1`` (CUDA only: on the CPU it runs plain fp32, and the session
  records "fp32", what ran); "fp16" is the float16 export (chosen by the caller, which picks the
  file; here it only labels the session).
* ``metric`` / ``option``: the metric whose encoder this is and the option that chose the model
  (BERTScore's ``--model``, COMET's ``--comet-model``), named by the messages; callers that name
  neither get messages naming only onnxruntime, the file and ``--device``.
* onnxruntime >= 1.30 logs "No registered plugin EP device found for 'CUDAExecutionProvider'"
  through its default logger at every session; the session's ``log_severity_level`` does not
  reach that logger, so :func:`open_session` sets the default logger's severity to 3 (errors
  only) before each session. onnxruntime has no getter for that severity, so it cannot be put
  back: after mtscore opens an encoder, onnxruntime's warnings stay silenced in the process
  (errors still print, exceptions still raise; ``onnxruntime.set_default_logger_severity(2)``
  restores its default).
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..missing_extra import install_hint
from .model_dir import EncoderError, EncoderWarning

#: the precision modes, exact first
PRECISIONS = ("fp32", "tf32", "fp16")

#: onnxruntime's default-logger severity while mtscore opens sessions (3 = error)
ORT_LOG_SEVERITY = 3

#: how to get a working CUDA provider
CUDA_INSTALL = ("pip install onnxruntime-gpu built for this machine's CUDA (its CUDA 12 and CUDA 13 builds "
                "differ: https://onnxruntime.ai/docs/install/)")


class EncoderFallbackWarning(EncoderWarning):
    """(A ``UserWarning``.) ``device="auto"`` found onnxruntime's CUDA provider but could not use it; the encoder runs
    on the CPU. The message says why (the library that failed to load)."""


@dataclass(frozen=True)
class DeviceSession:
    """An open session and what it actually runs: ``device`` cpu / cuda / cuda:N, ``precision``
    fp32 / tf32 / fp16, ``threads`` intra-op threads."""

    session: Any
    device: str
    precision: str
    threads: int


def import_ort(metric: str | None = None):
    """The ``onnxruntime`` module, or EncoderError with the install hint (naming ``metric``, the
    metric that needs it, when given)."""
    try:
        import onnxruntime as ort
    except ImportError:
        who = f"{metric} needs onnxruntime" if metric else "onnxruntime is not installed"
        raise EncoderError(f"{who}: {install_hint('bertscore')} (onnxruntime-gpu for CUDA)") from None
    return ort


def cuda_available(metric: str | None = None) -> bool:
    """onnxruntime here lists the CUDA provider (it may still fail to load: see :func:`open_session`)."""
    return "CUDAExecutionProvider" in import_ort(metric).get_available_providers()


def check_device(device: str, metric: str | None = None) -> str:
    """``device`` (cpu, cuda, cuda:N or auto) resolved to cpu / cuda[:N]; EncoderError naming
    ``--device`` for anything else or for CUDA without onnxruntime-gpu (``metric``: named when
    onnxruntime is missing)."""
    d = str(device).strip().lower()
    base, _, idx = d.partition(":")
    if d not in ("cpu", "auto", "cuda") and not (base == "cuda" and idx.isdigit()):
        raise EncoderError(f"--device {device!r}: expected cpu, cuda, cuda:N (N a GPU number) or auto")
    if d == "auto":
        return "cuda" if cuda_available(metric) else "cpu"
    if base == "cuda" and not cuda_available(metric):
        raise EncoderError(f"--device {device}: onnxruntime has no CUDA provider here "
                           f"(it has {', '.join(import_ort(metric).get_available_providers())}); "
                           "pip install onnxruntime-gpu, or use --device cpu")
    return d


def check_precision(precision: str | None) -> str:
    """``precision`` (None = fp32) as one of :data:`PRECISIONS`, else ValueError naming ``--precision``."""
    if precision is None:
        return "fp32"
    if precision not in PRECISIONS:
        raise ValueError(f"--precision {precision!r}: expected fp32 (exact, the default), tf32 or fp16 "
                         "(fast and approximate, on CUDA)")
    return str(precision)


def cuda_provider_options(device: str, precision: str) -> dict[str, int]:
    """The CUDA provider's options for ``device`` cuda / cuda:N: its GPU number and TF32 only
    under ``precision="tf32"`` (IEEE float32 MatMul otherwise)."""
    dev_id = int(device.split(":")[1]) if ":" in device else 0
    return {"device_id": dev_id, "use_tf32": 1 if precision == "tf32" else 0}


def session_options(ort, threads: int | None):
    """``(SessionOptions, threads)``: ``threads`` intra-op threads (None or <= 0: all cores),
    sequential, all graph optimisations, no spinning on small machines, errors-only logging."""
    so = ort.SessionOptions()
    ncpu = os.cpu_count() or 1
    if threads is None or threads <= 0:
        threads = ncpu
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if ncpu <= 4 or threads == 1:
        # busy-waiting worker threads steal the only other core on small/shared machines
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.log_severity_level = ORT_LOG_SEVERITY
    return so, int(threads)


def cuda_provider_error(ort) -> str | None:
    """Why onnxruntime's CUDA provider library does not load here: the dynamic loader's message
    (it names the missing library, e.g. ``libcublasLt.so.13``), or None when it loads (the CUDA
    runtime itself failed then: no GPU visible, or a driver too old for this build)."""
    import ctypes

    capi = Path(getattr(ort, "__file__", "") or ".").parent / "capi"
    if sys.platform == "win32":
        shared, cuda = "onnxruntime_providers_shared.dll", "onnxruntime_providers_cuda.dll"
    else:
        shared, cuda = "libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so"
    if not (capi / cuda).is_file():
        return f"{capi / cuda} is missing"
    try:
        if (capi / shared).is_file():  # onnxruntime loads it first, globally
            ctypes.CDLL(str(capi / shared), mode=ctypes.RTLD_GLOBAL)
        ctypes.CDLL(str(capi / cuda))
    except OSError as e:
        return str(e).strip() or type(e).__name__
    return None


def open_session(onnx_path: Path, *, device: str = "cpu", precision: str = "fp32",
                 threads: int | None = None, metric: str | None = None,
                 option: str | None = None) -> DeviceSession:
    """An ONNX Runtime session of ``onnx_path`` on ``device`` (see the module docstring).

    EncoderError naming the file (after ``option``, the option that chose the model, when given)
    when onnxruntime cannot load it, naming ``--device`` (and the CUDA library that failed) when
    a cuda / cuda:N session did not get the CUDA provider; ``metric`` (e.g. "BERTScore",
    "COMET") is named when onnxruntime is missing and by the ``auto`` fallback's warning."""
    ort = import_ort(metric)
    precision = check_precision(precision)
    want = str(device).strip().lower()
    dev = check_device(device, metric)
    so, threads = session_options(ort, threads)
    if dev == "cpu":
        return _cpu_session(ort, onnx_path, so, precision, threads, option)
    providers = [("CUDAExecutionProvider", cuda_provider_options(dev, precision)), "CPUExecutionProvider"]
    try:
        sess, why = _create(ort, onnx_path, so, providers)
    except Exception as e:  # ORT raises its own pybind exception types
        if want != "auto":
            raise EncoderError(f"--device {device}: onnxruntime cannot open {onnx_path} on the GPU "
                               f"({_first_line(e)}); {CUDA_INSTALL}, or use --device cpu") from None
        sess, why = None, _first_line(e)
    if sess is not None and "CUDAExecutionProvider" in sess.get_providers():
        return DeviceSession(sess, dev, precision, threads)
    if why is None:
        lib = cuda_provider_error(ort)
        why = (f"its library did not load: {lib}" if lib is not None else
               "its library loads, so the CUDA runtime failed: no GPU visible or a driver too old for "
               "this onnxruntime-gpu build (an onnxruntime error printed above, if any, says which)")
    if want != "auto":
        raise EncoderError(f"--device {device}: onnxruntime's CUDA provider did not load ({why}), and "
                           f"the model would have run on the CPU; {CUDA_INSTALL}, or use --device cpu")
    warnings.warn(EncoderFallbackWarning(
        f"--device auto: onnxruntime's CUDA provider did not load ({why}); {metric or 'the encoder'} runs "
        f"on the CPU. For the GPU: {CUDA_INSTALL}"), stacklevel=4)
    return _cpu_session(ort, onnx_path, so, precision, threads, option)


def _cpu_session(ort, onnx_path: Path, so, precision: str, threads: int, option: str | None) -> DeviceSession:
    try:
        sess, _ = _create(ort, onnx_path, so, ["CPUExecutionProvider"])
    except Exception as e:  # InvalidProtobuf, Fail, ... (pybind types)
        named = f"{option}: " if option else ""
        raise EncoderError(f"{named}{onnx_path}: onnxruntime cannot load this ONNX file "
                           f"({_first_line(e)})") from None
    return DeviceSession(sess, "cpu", "fp32" if precision == "tf32" else precision, threads)


def _create(ort, onnx_path: Path, so, providers) -> tuple[Any, str | None]:
    """``(session, why)``: an InferenceSession with onnxruntime's CPU fallback off, and the
    reason an older onnxruntime (which ignores ``enable_fallback``) printed when it fell back
    anyway (None when it did not). Warnings of onnxruntime's default logger are silenced first."""
    ort.set_default_logger_severity(ORT_LOG_SEVERITY)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # older versions print their fallback to stdout
        sess = ort.InferenceSession(str(onnx_path), sess_options=so, providers=providers, enable_fallback=0)
    printed = out.getvalue()
    why = None
    if "Falling back" in printed:
        why = next((ln.strip() for ln in printed.splitlines() if ln.startswith("EP Error")), printed.strip())
    elif printed:
        sys.stdout.write(printed)
    if hasattr(sess, "disable_fallback"):  # no silent retry on the CPU when a run fails either
        sess.disable_fallback()
    return sess, why


def _first_line(e: BaseException) -> str:
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__
