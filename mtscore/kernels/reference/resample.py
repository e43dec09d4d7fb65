"""Plain-Python twin of ``mtscore/kernels/_resample.pyx`` (used by tests only).

Written as explicit loops with numpy scalars of the kernel's dtype, so the accumulation order
and precision are visibly the same as the compiled kernel's.
"""
import numpy as np


def resample_sums(stats, idx, out):
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


def masked_sums(stats, mask, out):
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



def draw_counts(idx, counts):
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
