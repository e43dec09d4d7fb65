"""Univariate outlier detection on system-level human scores (Mathur et al. 2020 §4.2; Mathur 2021 §6.2.1).

robust z = (h - median(h)) / (b * median(|h - median(h)|)) with b = 1.4826 = 1/Phi^-1(0.75)
(the released code; the papers print 1.483, which gives the same sets on WMT19); a system is
an outlier when |z| > 2.5 (strict, Leys et al. 2013). Apply to the DA z-scores of MT
systems only (drop human "systems" first).
"""
from __future__ import annotations

import numpy as np

__all__ = ["MAD_B", "MAD_CUTOFF", "mad_outliers", "robust_z"]

MAD_B = 1.4826
MAD_CUTOFF = 2.5


def robust_z(h, b: float = MAD_B) -> np.ndarray:
    """Robust z-scores (n,) float64. When MAD = 0 the values off the median get +-inf and
    the median values 0 (so all-equal scores have no outliers)."""
    h = np.asarray(h, dtype=np.float64)
    med = np.nanmedian(h)
    mad = b * np.nanmedian(np.abs(h - med))
    dev = h - med
    with np.errstate(divide="ignore", invalid="ignore"):
        z = dev / mad
    if mad == 0:
        z = np.where(dev > 0, np.inf, np.where(dev < 0, -np.inf, 0.0))
    return z


def mad_outliers(h, cutoff: float = MAD_CUTOFF, b: float = MAD_B) -> np.ndarray:
    """Boolean mask (n,) of systems whose |robust z| > cutoff."""
    return np.abs(robust_z(h, b)) > cutoff
