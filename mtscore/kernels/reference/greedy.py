"""Plain-Python twin of ``mtscore.kernels._greedy`` (tests only). Same inputs, same semantics.

The kernel's cosines are float32 (one sgemm per pair, as bert_score's ``torch.bmm``); here each is
an exact sum rounded once to float32, so the two agree to a few float32 ulps, not bit for bit."""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt


def greedy_prf(hemb: npt.NDArray[np.float32], hoff: npt.NDArray[np.int64],
               hw: npt.NDArray[np.float64], remb: npt.NDArray[np.float32],
               roff: npt.NDArray[np.int64], rw_: npt.NDArray[np.float64],
               hyp: npt.NDArray[np.int64], ref: npt.NDArray[np.int64],
               clamp_p: npt.NDArray[np.uint8], clamp_r: npt.NDArray[np.uint8],
               out: npt.NDArray[np.float64] | None = None, start: int = 0, stop: int | None = None
               ) -> npt.NDArray[np.float64]:
    """float64 ``[n_pairs, 3]`` (P, R, F); see ``mtscore/kernels/_greedy.pyx`` for the rules
    (``out``/``start``/``stop``: only pairs ``start:stop``, written into ``out``)."""
    n = len(hyp)
    if len(ref) != n or len(clamp_p) != n or len(clamp_r) != n:
        raise ValueError("hyp, ref, clamp_p, clamp_r must have the same length")
    if len(hw) != len(hemb) or len(rw_) != len(remb):
        raise ValueError("weights must have one entry per embedding row")
    stop = n if stop is None else stop
    if not 0 <= start <= stop <= n:
        raise ValueError(f"start={start}, stop={stop}: expected 0 <= start <= stop <= {n}")
    if out is None:
        out = np.zeros((n, 3), dtype=np.float64)
    elif out.shape != (n, 3):
        raise ValueError(f"out must be float64 [{n}, 3]")
    for p in range(start, stop):
        h0, h1 = int(hoff[hyp[p]]), int(hoff[hyp[p] + 1])
        r0, r1 = int(roff[ref[p]]), int(roff[ref[p] + 1])
        H = [[float(v) for v in hemb[i]] for i in range(h0, h1)]
        Rr = [[float(v) for v in remb[j]] for j in range(r0, r1)]
        sim = [[float(np.float32(math.fsum(a * b for a, b in zip(h, r)))) for r in Rr] for h in H]
        rowmax = [max(row + ([0.0] if clamp_p[p] else [])) if (row or clamp_p[p]) else -1e300 for row in sim]
        colmax = [max([sim[i][j] for i in range(len(H))] + ([0.0] if clamp_r[p] else []))
                  if (H or clamp_r[p]) else -1e300 for j in range(len(Rr))]
        wh = [float(w) for w in hw[h0:h1]]
        wr = [float(w) for w in rw_[r0:r1]]
        P = _div(sum(m * w for m, w in zip(rowmax, wh)), sum(wh))
        R = _div(sum(m * w for m, w in zip(colmax, wr)), sum(wr))
        F = _div(2.0 * P * R, P + R)
        if len(H) == 2 or len(Rr) == 2:
            P = R = 0.0
        if math.isnan(F):
            F = 0.0
        out[p] = (P, R, F)
    return out


def _div(a: float, b: float) -> float:
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a)
    return a / b
