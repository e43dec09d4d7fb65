"""Greedy cosine matching on the host, over threads (the kernel runs without the GIL).

:func:`match_host` is :func:`mtscore.kernels._greedy.greedy_prf` with the pairs split into
contiguous slices, one per thread; each pair is scored by the same arithmetic whatever the
split, so the result does not depend on ``threads``.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: fewest pairs per thread worth a thread of their own
MIN_PAIRS_PER_THREAD = 256


def match_host(emb: np.ndarray, off: np.ndarray, w: np.ndarray, hyp: np.ndarray, ref: np.ndarray,
               clamp_p: np.ndarray, clamp_r: np.ndarray, threads: int = 1) -> np.ndarray:
    """float64 ``[n, 3]`` (P, R, F) of the pairs ``(hyp[p], ref[p])``.

    ``emb`` float32 ``[T, D]`` (L2-normalised token states of all sentences), ``off`` int64
    ``[n_sentences + 1]``, ``w`` float64 ``[T]`` token weights, ``hyp``/``ref`` int64 ``[n]``,
    ``clamp_p``/``clamp_r`` uint8 ``[n]`` (see ``greedy_prf``); ``threads`` >= 1.
    """
    from ...kernels._greedy import greedy_prf

    n = len(hyp)
    k = max(1, min(int(threads), n // MIN_PAIRS_PER_THREAD))
    if k == 1:
        return greedy_prf(emb, off, w, emb, off, w, hyp, ref, clamp_p, clamp_r)
    out = np.zeros((n, 3), dtype=np.float64)
    cuts = np.linspace(0, n, k + 1).astype(np.int64)
    with ThreadPoolExecutor(k) as pool:
        jobs = [pool.submit(greedy_prf, emb, off, w, emb, off, w, hyp, ref, clamp_p, clamp_r, out,
                            int(cuts[i]), int(cuts[i + 1])) for i in range(k)]
        for j in jobs:
            j.result()
    return out
