"""Probe for P18's CPU speed target: would a three-pass bfloat16 GEMM on the CPU's matrix unit (AMX)
keep COMET's scores at unbabel-comet's fp32 within tolerance, and how much faster is its GEMM?

Not mtscore code: a measurement that decides whether mtscore should grow such a GEMM. Run in the
unbabel-comet venv (it needs torch, whose oneDNN uses AMX for bfloat16 matmuls where the CPU has it)::

    /work/oracle-comet/bin/python bench/probe_comet_bf16x3.py --n 48 --model /work/bench-comet/model

1. **GEMM rates** (M x K x N = 2048 x 1024 x 4096, all threads): fp32; bf16 (one pass, AMX); and
   "bf16x3" as one bf16 GEMM over K' = 3K: ``[A_hi, A_hi, A_lo] @ [B_hi; B_lo; B_hi]`` with
   ``x_hi = bf16(x)``, ``x_lo = bf16(x - x_hi)``, which computes ``A_hi B_hi + A_hi B_lo + A_lo B_hi``
   (the split-bfloat16 scheme of Henry, Tang & Heinecke, "Leveraging the bfloat16 Artificial
   Intelligence Datatype For Higher-Precision Computations", ARITH 2019). torch rounds that GEMM's
   output to bf16; a kernel of mtscore's own would keep the fp32 accumulators, at the same speed.
2. **Accuracy**: unbabel-comet's ``predict(gpus=0)`` on the first ``--n`` newstest2021 en-de triples
   in fp32, then again with every ``torch.nn.functional.linear`` replaced by the bf16x3 product
   emulated exactly in fp32 (products of two bf16 values are exact in fp32; the sums accumulate in
   fp32, as AMX's do), and by a plain one-pass bf16 product for contrast: the largest and mean
   |score - fp32 score|.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_comet import triples


def gemm_rates(m: int = 2048, k: int = 1024, n: int = 4096, reps: int = 5) -> dict[str, float]:
    """GFLOPS counted as the fp32 product's ``2 m k n`` for all three (bf16x3 does 3x that work)."""
    import torch

    a, b = torch.randn(m, k), torch.randn(k, n)

    def rate(f) -> float:
        f()
        t = time.perf_counter()
        for _ in range(reps):
            f()
        return 2 * m * k * n * reps / (time.perf_counter() - t) / 1e9

    ah, bh = a.bfloat16(), b.bfloat16()
    a3 = torch.cat([ah, ah, (a - ah.float()).bfloat16()], 1)
    b3 = torch.cat([bh, (b - bh.float()).bfloat16(), bh], 0)
    return {"fp32": rate(lambda: a @ b), "bf16": rate(lambda: ah @ bh), "bf16x3": rate(lambda: a3 @ b3)}


def split_bf16(x):
    hi = x.bfloat16().float()
    return hi, (x - hi).bfloat16().float()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="/work/bench-comet/model", help="the COMET model folder")
    ap.add_argument("--n", type=int, default=48, help="triples (first N lines of newstest2021 en-de)")
    ap.add_argument("--system", default="Online-W", help="whose outputs are the translations")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import torch
    import torch.nn.functional as F

    r = gemm_rates()
    print(f"GEMM 2048x1024x4096, {torch.get_num_threads()} threads: fp32 {r['fp32']:.0f} GFLOPS, "
          f"bf16 {r['bf16']:.0f} ({r['bf16'] / r['fp32']:.1f}x), bf16x3 as one GEMM over 3K: the fp32 "
          f"product's 2MKN flops at {r['bf16x3']:.0f} GFLOPS ({r['bf16x3'] / r['fp32']:.1f}x)", flush=True)

    from comet import load_from_checkpoint

    rows = triples(args.n, args.system)
    model = load_from_checkpoint(str(Path(args.model) / "checkpoints" / "model.ckpt"))

    def predict() -> np.ndarray:
        return np.array(model.predict(rows, batch_size=16, gpus=0, progress_bar=False).scores)

    base = predict()
    linear = F.linear

    def bf16x3(x, w, b=None):
        (xh, xl), (wh, wl) = split_bf16(x), split_bf16(w)
        y = linear(xh, wh) + linear(xh, wl) + linear(xl, wh)
        return y if b is None else y + b

    def bf16(x, w, b=None):
        y = linear(x.bfloat16().float(), w.bfloat16().float())
        return y if b is None else y + b

    for name, fn in (("bf16x3", bf16x3), ("bf16", bf16)):
        F.linear = fn
        try:
            d = np.abs(predict() - base)
        finally:
            F.linear = linear
        print(f"{name}: {args.n} triples, max |score - fp32| {d.max():.2e}, mean {d.mean():.2e} "
              f"(scores {base.min():.3f}..{base.max():.3f})", flush=True)


if __name__ == "__main__":
    main()
