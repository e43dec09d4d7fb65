"""Speed spike (P18): can a GEMM kernel of our own (no torch, no oneDNN) run the split-bfloat16
"bf16x3" product on AMX at ~2x the fp32 GEMM rate? Yes: ~3x onnxruntime's fp32 MatMul at K = 1024.

``bench/spike_amx_bf16x3.c`` computes ``C = A_hi B_hi + A_hi B_lo + A_lo B_hi`` (``x_hi = bf16(x)``,
``x_lo = bf16(x - x_hi)``, round to nearest even; Henry, Tang & Heinecke, ARITH 2019) on AMX tiles
with fp32 accumulators (never rounded to bf16); the weight is split and packed once, the activations
per call. Two layouts: "x3", the product as one bf16 GEMM over K' = 3K on ``[A_hi, A_hi, A_lo]`` and
``[W_hi; W_lo; W_hi]``; "x2" (default), hi and lo tiles stored once and the kernel running the three
products per 32 k (10 tile loads per 12 tile products instead of 12, packed operands 2/3 the size).
This script compiles the C file with ``cc`` into a temp dir, checks it against a numpy emulation of the
product and times it against onnxruntime's fp32 MatMul (one-node graph, the weight an initializer,
mtscore's ``session_options``) on XLM-R large's dense-layer shapes at batch_tokens 2048. Not mtscore
code: it decides whether mtscore grows such a kernel. Exits 0 with a message where the CPU lacks AMX
or the compiler lacks the flags. Run (quiet machine, load < 1.5)::

    /work/main/.venv/bin/python bench/spike_amx_bf16x3.py                          # x2, with accuracy
    /work/main/.venv/bin/python bench/spike_amx_bf16x3.py --layout x3 --no-accuracy

GFLOPS are the fp32 product's ``2 M K N`` per second (bf16x3 does 3x that work on AMX), best of 5, 2
threads for both; "spike" includes splitting/packing A (the weight is packed once, outside the
timing); "kernel" is the GEMM alone on an already-packed A; "pack A ms" the packing alone. Errors are
``max |C - C64| / max |C64|`` against a float64 numpy product, on N(0, 1) activations ("normal") and
the same with 4 of the K columns x50 ("outlier", as XLM-R activations have); weights N(0, 0.02).
"vs emu" is the spike against the numpy emulation (float32 hi/lo parts, three float64 products summed):
what is left is fp32 accumulation order, the size of fp32's own error.

Measured 2026-11-28 12:07 UTC, 2-core Intel Xeon (Sapphire Rapids class, 2.6 GHz, amx_bf16),
onnxruntime 1.32.0, gcc 12.2, blocks mc=64 nc=256 kc=1024, load average 0.2-0.6:

| M x K x N | ORT fp32 GFLOPS | spike x2 GFLOPS | x ORT | kernel GFLOPS | pack A ms | err fp32 normal | err spike normal | err fp32 outlier | err spike outlier | spike vs emu |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
| 2048x1024x3072 | 316 | 992 | 3.14 | 1088 | 0.3 | 5.2e-07 | 4.6e-06 | 8.0e-07 | 1.1e-05 | 4.6e-07 |
| 2048x1024x1024 | 324 | 917 | 2.83 | 1124 | 0.3 | 4.8e-07 | 4.6e-06 | 8.1e-07 | 1.0e-05 | 5.5e-07 |
| 2048x1024x4096 | 322 | 994 | 3.09 | 1061 | 0.3 | 4.8e-07 | 4.3e-06 | 6.3e-07 | 1.1e-05 | 4.3e-07 |
| 2048x4096x1024 | 303 | 635 | 2.10 | 755 | 2.0 | 3.4e-07 | 5.1e-06 | 5.5e-07 | 1.1e-05 | 8.7e-07 |
| 1999x1024x4096 | 298 | 878 | 2.94 | 951 | 0.4 | 5.1e-07 | 4.5e-06 | 6.1e-07 | 1.2e-05 | 6.1e-07 |

A second x2 run a minute later: 2.98x, 2.91x, 2.92x, 2.10x, 3.08x. The x3 layout (one GEMM over
K' = 3K, as the torch probe did), same blocks: spike 627 / 616 / 630 / 468 / 657 GFLOPS, 2.20x /
1.97x / 2.13x / 1.47x / 2.17x ORT (kernel alone 674 / 725 / 643 / 573 / 701): torch/oneDNN's rate
(bench/RESULTS.md: 2.1-2.2x), and x2 is ~1.5x faster than x3.

What limits it: the kernel, not the packing (packing A is 2-8% of a call). The 2x2-tile inner loop
(x3 form, one core, 32x32 C, a throwaway C harness) reaches ~2,400 bf16 GFLOPS with its operands in L1
(90% of AMX's 1,024 flops/cycle at 2.6 GHz), ~1,770 streaming them from L2 and ~500 from L3; in the
GEMM the x2 kernel runs at ~1,600-1,700 per core (60% of peak) for K = 1024 and ~1,130 for K = 4096
(the FFN output: A is re-read per 256-column block and C reloaded per K pass; no block size tried
moved it, and a software prefetch of the next A strip did not help at K = 1024). Tile rows must not
straddle cache lines: with numpy's 16-byte alignment the same kernel ran at half speed, so every
buffer here is 64-byte aligned.

Accuracy: bf16x3 is a ~16-bit-mantissa product, ~10x fp32's GEMM error (4-5e-6 of max|C|, ~1e-5 with
outlier columns); the torch probe measured its effect on COMET scores (max 2.3e-6).
"""
from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SRC = HERE / "spike_amx_bf16x3.c"
FLAGS = ["-O3", "-fPIC", "-shared", "-fopenmp", "-mamx-tile", "-mamx-bf16", "-mavx512f", "-mavx512bw",
         "-mavx512bf16"]
SHAPES = [(2048, 1024, 3072), (2048, 1024, 1024), (2048, 1024, 4096), (2048, 4096, 1024), (1999, 1024, 4096)]

_i64, _ptr = ctypes.c_int64, ctypes.c_void_p


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def build(tmp: str) -> ctypes.CDLL | None:
    """The compiled spike, or None (with a message) where this machine cannot run it."""
    missing = {"amx_tile", "amx_bf16", "avx512f", "avx512bw"} - cpu_flags()
    if missing:
        print(f"spike_amx_bf16x3: this CPU lacks {', '.join(sorted(missing))}; nothing to measure")
        return None
    cc = shutil.which("cc")
    if cc is None:
        print("spike_amx_bf16x3: no C compiler `cc` on PATH; nothing to measure")
        return None
    so = os.path.join(tmp, "spike_amx_bf16x3.so")
    r = subprocess.run([cc, *FLAGS, "-o", so, str(SRC)], capture_output=True, text=True)
    if r.returncode != 0:
        err = (r.stderr.strip().splitlines() or ["?"])[0]
        print(f"spike_amx_bf16x3: `cc {' '.join(FLAGS)}` failed on {SRC.name} ({err}); nothing to measure")
        return None
    lib = ctypes.CDLL(so)
    lib.amx_init.restype = ctypes.c_int
    for f in (lib.packed_a_elems, lib.packed_a2_elems, lib.packed_b_elems):
        f.restype, f.argtypes = _i64, [_i64, _i64]
    for f in (lib.pack_a, lib.pack_b, lib.pack_a2, lib.pack_b2):
        f.argtypes = [_ptr, _i64, _i64, _ptr]
    for f in (lib.gemm_packed, lib.gemm_packed2):
        f.argtypes = [_ptr, _ptr, _ptr, _i64, _i64, _i64, _i64, _i64, _i64]
    for f in (lib.gemm_bf16x3, lib.gemm2_bf16x3):
        f.argtypes = [_ptr, _ptr, _ptr, _ptr, _i64, _i64, _i64, _i64, _i64, _i64]
    if lib.amx_init() != 0:
        print("spike_amx_bf16x3: the kernel refused AMX tile data (arch_prctl ARCH_REQ_XCOMP_PERM); nothing to measure")
        return None
    return lib


def _p(a: np.ndarray) -> int:
    return a.ctypes.data


def aligned(size: int, dtype, align: int = 64) -> np.ndarray:
    """``np.empty(size, dtype)`` starting on a cache line: a 64-byte tile row that straddles two lines
    costs two loads (numpy only promises 16-byte alignment)."""
    item = np.dtype(dtype).itemsize
    raw = np.empty(size * item + align, np.uint8)
    off = -raw.ctypes.data % align
    return raw[off:off + size * item].view(dtype)


class Spike:
    """``C = A @ W`` as bf16x3 on AMX; W packed once at construction. ``layout`` "x3": one GEMM over
    K' = 3K on ``[A_hi, A_hi, A_lo]``, ``[W_hi; W_lo; W_hi]``; "x2": the hi and lo tiles stored once,
    the kernel runs the three products per 32 k (10 tile loads per 12 tile products instead of 12).
    ``kc`` counts K either way."""

    def __init__(self, lib: ctypes.CDLL, w: np.ndarray, mc: int, nc: int, kc: int, layout: str = "x2") -> None:
        self.lib, (self.k, self.n) = lib, w.shape
        x3 = layout == "x3"
        self.blocks = (mc, nc, kc * 3 if x3 else kc)
        self._a_elems = lib.packed_a_elems if x3 else lib.packed_a2_elems
        self._pack_a = lib.pack_a if x3 else lib.pack_a2
        self._gemm = lib.gemm_bf16x3 if x3 else lib.gemm2_bf16x3
        self._kernel = lib.gemm_packed if x3 else lib.gemm_packed2
        if self.k % 32 or self.n % 32:
            raise ValueError(f"spike_amx_bf16x3: K={self.k} and N={self.n} must be multiples of 32")
        w = np.ascontiguousarray(w, dtype=np.float32)
        self.bp = aligned(lib.packed_b_elems(self.k, self.n), np.uint16)
        (lib.pack_b if x3 else lib.pack_b2)(_p(w), self.k, self.n, _p(self.bp))
        self._ap = np.empty(0, np.uint16)

    def scratch(self, m: int) -> np.ndarray:
        size = self._a_elems(m, self.k)
        if self._ap.size < size:
            self._ap = aligned(size, np.uint16)
        return self._ap

    def __call__(self, a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        m = a.shape[0]
        a = np.ascontiguousarray(a, dtype=np.float32)
        c = aligned(m * self.n, np.float32).reshape(m, self.n) if out is None else out
        self._gemm(_p(a), _p(self.bp), _p(c), _p(self.scratch(m)), m, self.k, self.n, *self.blocks)
        return c

    def pack_a(self, a: np.ndarray) -> np.ndarray:
        ap = self.scratch(a.shape[0])
        self._pack_a(_p(a), a.shape[0], self.k, _p(ap))
        return ap

    def kernel(self, ap: np.ndarray, m: int, c: np.ndarray) -> None:
        self._kernel(_p(ap), _p(self.bp), _p(c), m, self.k, self.n, *self.blocks)


def bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (nearest even, as torch's ``.bfloat16()``), returned as float32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    one, sixteen = np.uint64(1), np.uint64(16)
    r = (u + np.uint64(0x7FFF) + ((u >> sixteen) & one)) & np.uint64(0xFFFF0000)
    return r.astype(np.uint32).view(np.float32)


def emulate(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    ah, wh = bf16(a), bf16(w)
    al, wl = bf16(a - ah), bf16(w - wh)
    f = np.float64
    return ah.astype(f) @ wh.astype(f) + ah.astype(f) @ wl.astype(f) + al.astype(f) @ wh.astype(f)


def ort_matmul(w: np.ndarray, threads: int):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    sys.path.insert(0, str(HERE.parent))
    from mtscore.engine.encoder.session import session_options

    g = helper.make_graph(
        [helper.make_node("MatMul", ["A", "W"], ["C"])], "mm",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["M", w.shape[0]])],
        [helper.make_tensor_value_info("C", TensorProto.FLOAT, ["M", w.shape[1]])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    so, _ = session_options(ort, threads)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    del onnx
    return lambda a: sess.run(None, {"A": a})[0]


def best_rate(f, flops: float, reps: int) -> float:
    f()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return flops / best / 1e9


def rel_err(c: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(c - ref).max() / np.abs(ref).max())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="timed repetitions (best kept)")
    ap.add_argument("--threads", type=int, default=2, help="threads for both (OMP_NUM_THREADS for the spike)")
    ap.add_argument("--layout", choices=("x2", "x3"), default="x2", help="packed hi/lo once (x2) or K' = 3K (x3)")
    ap.add_argument("--mc", type=int, default=64, help="spike block: rows of A per L2 block (multiple of 32)")
    ap.add_argument("--nc", type=int, default=256, help="spike block: columns per thread block (multiple of 32)")
    ap.add_argument("--kc", type=int, default=1024, help="spike block: K per pass (multiple of 32)")
    ap.add_argument("--shapes", default="", help="MxKxN,... (default: XLM-R large at batch_tokens 2048)")
    ap.add_argument("--no-accuracy", action="store_true", help="timing only")
    ap.add_argument("--no-timing", action="store_true", help="accuracy only")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before the OpenMP runtime loads with the .so
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
    with tempfile.TemporaryDirectory() as tmp:
        lib = build(tmp)
        if lib is None:
            return 0
        rng = np.random.default_rng(0)
        print(f"layout {args.layout}, blocks mc={args.mc} nc={args.nc} kc={args.kc}, {args.threads} threads, best of {args.reps}; "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)
        print("| M x K x N | ORT fp32 GFLOPS | spike GFLOPS | spike / ORT | kernel GFLOPS | pack A ms |"
              " err fp32 normal | err spike normal | err fp32 outlier | err spike outlier | spike vs emu |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for m, k, n in shapes:
            w = (rng.standard_normal((k, n)) * 0.02).astype(np.float32)
            a = rng.standard_normal((m, k)).astype(np.float32)
            spike, ort_mm = Spike(lib, w, args.mc, args.nc, args.kc, args.layout), ort_matmul(w, args.threads)
            flops = 2.0 * m * k * n
            row = [f"{m}x{k}x{n}"]
            if args.no_timing:
                row += ["-"] * 5
            else:
                c = aligned(m * n, np.float32).reshape(m, n)
                r_ort = best_rate(lambda: ort_mm(a), flops, args.reps)  # noqa: B023
                r_sp = best_rate(lambda: spike(a, c), flops, args.reps)  # noqa: B023
                apk = spike.pack_a(a)
                r_k = best_rate(lambda: spike.kernel(apk, m, c), flops, args.reps)  # noqa: B023
                t_pack = flops / best_rate(lambda: spike.pack_a(a), flops, args.reps) / 1e9 * 1e3  # noqa: B023
                row += [f"{r_ort:.0f}", f"{r_sp:.0f}", f"{r_sp / r_ort:.2f}", f"{r_k:.0f}", f"{t_pack:.1f}"]
            if args.no_accuracy:
                row += ["-"] * 5
            else:
                errs, emu_err = [], 0.0
                for outlier in (False, True):
                    x = a.copy()
                    if outlier:
                        x[:, rng.choice(k, 4, replace=False)] *= 50
                    ref = x.astype(np.float64) @ w.astype(np.float64)
                    cs = spike(x)
                    errs += [rel_err(ort_mm(x), ref), rel_err(cs, ref)]
                    emu_err = max(emu_err, rel_err(cs, emulate(x, w)))
                row += [f"{e:.1e}" for e in errs] + [f"{emu_err:.1e}"]
            print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
