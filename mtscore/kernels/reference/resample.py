"""Plain-Python twin of ``mtscore/kernels/_resample.pyx`` (used by tests only): same names and
signatures. The PCG64 draws are numpy's own generator (what the kernel reproduces bit for bit).

The sums are written as explicit loops with numpy scalars of the kernel's dtype, so the accumulation order
and precision are visibly the same as the compiled kernel's.
"""
from typing import Any

import numpy as np
import numpy.typing as npt


def resample_sums(stats: npt.NDArray[Any], idx: npt.NDArray[np.int64], out: npt.NDArray[Any]) -> None:
    """``out[s, j] = sum_i stats[idx[s, i], j]``, accumulated sequentially in ``stats.dtype``."""
    stats = np.asarray(stats)
    idx = np.asarray(idx)
    n_rows, k = stats.shape
    if out.shape != (idx.shape[0], k):
        raise ValueError(f"resample_sums: out has shape {out.shape}, expected {(idx.shape[0], k)}")
    zero = stats.dtype.type(0)
    for s in range(idx.shape[0]):
        acc = [zero] * k
        for r in idx[s]:
            r = int(r)
            if r < 0 or r >= n_rows:
                raise IndexError("resample_sums: resample index out of range for the statistics matrix")
            row = stats[r]
            for j in range(k):
                acc[j] = acc[j] + row[j]  # numpy scalar + numpy scalar: stays in stats.dtype
        out[s, :] = acc


def masked_sums(stats: npt.NDArray[np.int64], mask: npt.NDArray[np.uint8], out: npt.NDArray[np.int64]) -> None:
    """``out[t, j] = sum_i [mask[t, i] != 0] * stats[i, j]`` in exact int64 arithmetic."""
    stats = np.asarray(stats)
    mask = np.asarray(mask)
    if mask.shape[1] != stats.shape[0]:
        raise ValueError(f"masked_sums: mask has {mask.shape[1]} columns, stats has {stats.shape[0]} rows")
    k = stats.shape[1]
    for t in range(mask.shape[0]):
        acc = [0] * k
        for i in range(stats.shape[0]):
            if mask[t, i]:
                for j in range(k):
                    acc[j] += int(stats[i, j])
        out[t, :] = acc



def draw_counts(idx: npt.NDArray[np.int64], counts: npt.NDArray[np.float32]) -> None:
    """``counts[s, i]`` = how often row i occurs in ``idx[s]`` (float32, overwritten)."""
    idx = np.asarray(idx)
    n_rows = counts.shape[1]
    if counts.shape[0] != idx.shape[0]:
        raise ValueError(f"draw_counts: counts has {counts.shape[0]} rows, expected {idx.shape[0]}")
    for s in range(idx.shape[0]):
        row = [0] * n_rows
        for r in idx[s]:
            r = int(r)
            if r < 0 or r >= n_rows:
                raise IndexError("draw_counts: resample index out of range for the statistics matrix")
            row[r] += 1
        counts[s, :] = row


def _generator(state: dict[str, Any]) -> np.random.Generator:
    if state.get("bit_generator") != "PCG64":
        raise ValueError("not a PCG64 state")
    g = np.random.Generator(np.random.PCG64())
    g.bit_generator.state = state
    return g


def pcg64_draw_indices(state: dict[str, Any], S: int, N: int, M: int = -1
                       ) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
    """``(rng.integers(0, N, size=(S, M), dtype=np.int64), rng.bit_generator.state)`` for a PCG64
    generator in ``state`` (M defaults to N)."""
    if M < 0:
        M = N
    g = _generator(state)
    if N > 0x7FFFFFFF:
        raise ValueError("range too large for the 32-bit path")
    if N <= 1:  # integers(0, 1) draws nothing; N == 0 is numpy's error, the kernel's zeros
        return np.zeros((S, M), dtype=np.int64), dict(g.bit_generator.state)
    idx = g.integers(0, N, size=(S, M), dtype=np.int64)
    return idx, dict(g.bit_generator.state)


def pcg64_draw_counts(state: dict[str, Any], counts: npt.NDArray[np.float32]) -> dict[str, Any]:
    """``counts[s, i]`` = how often row i is drawn in resample s of
    ``rng.integers(0, N, size=(S, N))`` (float32, overwritten); returns the new state."""
    S, N = counts.shape
    if N == 0:
        raise ValueError("pcg64_draw_counts: no statistics rows")
    g = _generator(state)
    if N > 0x7FFFFFFF:
        raise ValueError("range too large for the 32-bit path")
    if S == 0:
        return state
    idx = g.integers(0, N, size=(S, N), dtype=np.int64)
    for s in range(S):
        counts[s, :] = np.bincount(idx[s], minlength=N)
    return dict(g.bit_generator.state)
