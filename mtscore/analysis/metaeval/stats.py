"""Deterministic meta-evaluation statistics on Numba kernels (mt-metrics-eval parity).

Shapes: ``human`` and each ``metric`` are float64 (S, N) matrices (systems x items; NaN in
``human`` = no human score, that cell is skipped) or (n,) vectors (system level). Averaging
follows mt-metrics-eval's ``average_by``: 'none' (one pooled vector), 'sys' (mean over system
rows) or 'item' (mean over item columns, the WMT23+ segment-level "group by item").
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError
from ..kendall_tau import VARIANT_CODES
from ._inputs import Stream, as_scores, groups
from ._jit import kernels

__all__ = ["VARIANTS", "TieCalibration", "kendall_variant", "pairwise_accuracy", "tie_calibrated_accuracy"]

# the variants the kernels compute (tau-c only in correlation.kendall), codes of kendall_tau
VARIANTS = {name: code for name, code in VARIANT_CODES.items() if name != "c"}


def variant_code(variant: str) -> int:
    try:
        return VARIANTS[variant]
    except KeyError:
        raise AnalysisInputError(f"Kendall variant {variant!r}: use one of {', '.join(VARIANTS)} "
                                 f"(tau-c: mtscore.analysis.correlation.kendall)") from None


def grouped(human, metric, average_by: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gold (T,), metric (T,), offs (G+1,)) of the scored cells grouped by ``average_by``."""
    h, m = as_scores(human, metric)
    pos, offs = groups(h, average_by)
    return h.ravel()[pos], m.ravel()[pos], offs


def kendall_variant(human, metric, variant: str = "b", average_by: str = "none", epsilon: float = 0.0,
                    replace_nans_with_zeros: bool = False) -> float:
    """Kendall's tau variant ('b', '23' or 'acc23' of Deutsch et al. 2023) averaged by
    ``average_by``; a metric difference <= ``epsilon`` is a tie. Equals mt-metrics-eval's
    ``Correlation.KendallVariants`` (groups whose value is NaN are left out of the mean, or
    count as 0 with ``replace_nans_with_zeros``). Returns float."""
    if epsilon < 0:
        raise AnalysisInputError(f"epsilon={epsilon}: it must be >= 0")
    k = kernels()
    g, m, offs = grouped(human, metric, average_by)
    vals = k.group_variants(g, m, offs, float(epsilon) if epsilon > 0 else -1.0, variant_code(variant))
    return float(k.seqmean(vals, replace_nans_with_zeros))


def pairwise_accuracy(human, metric, blocks: Sequence[int] | None = None) -> tuple[float, int]:
    """Pairwise (system) accuracy of Kocmi et al. 2021: the share of system pairs whose human
    and metric differences have the same sign (a tie agrees only with a tie), pooled over
    ``blocks`` (sizes of consecutive language-pair blocks of the (n,) vectors; default one
    block). NaN human scores are skipped. Returns (accuracy, number of pairs), as
    mt-metrics-eval's ``Agreement`` / global accuracy."""
    h = np.asarray(human, dtype=np.float64).ravel()
    m = np.asarray(metric, dtype=np.float64).ravel()
    if h.shape != m.shape:
        raise AnalysisInputError(f"human has {h.shape[0]} scores, metric {m.shape[0]}: they must match")
    sizes = [h.shape[0]] if blocks is None else [int(b) for b in blocks]
    if sum(sizes) != h.shape[0]:
        raise AnalysisInputError(f"blocks sum to {sum(sizes)}, but there are {h.shape[0]} scores")
    rows, b = [], 0
    for n in sizes:
        ok = ~np.isnan(h[b:b + n])
        rows.append(np.flatnonzero(ok) + b)
        b += n
    rows = [r for r in rows if r.shape[0] >= 2]
    if not rows:
        raise AnalysisInputError("no block has two scored systems: no pair to compare")
    offs = np.zeros(len(rows) + 1, np.int64)
    offs[1:] = np.cumsum([r.shape[0] for r in rows])
    pos = np.concatenate(rows)
    codes = kernels().pair_codes(h[pos], m[pos], offs, -1.0)
    agree = int(((codes == 0) | (codes == 4)).sum())
    return agree / codes.shape[0], int(codes.shape[0])


@dataclass
class TieCalibration:
    """Result of :func:`tie_calibrated_accuracy`: the optimal ``value`` (acc_eq or tau_eq),
    its ``epsilon``, and the whole curve: ``thresholds`` (K,) and ``values`` (K,) float64."""
    value: float
    epsilon: float
    thresholds: np.ndarray
    values: np.ndarray


def tie_calibrated_accuracy(human, metric, variant: str = "acc23", average_by: str = "none",
                            sample_rate: float = 1.0, seed: int | None = None) -> TieCalibration:
    """Pairwise accuracy with tie calibration (acc_eq, Deutsch et al. 2023): sweep every
    candidate epsilon (the sorted |metric differences|), treat metric differences <= epsilon
    as ties, and keep the epsilon with the best mean ``variant`` ('acc23' = acc_eq, '23' =
    tau_eq). Equals mt-metrics-eval's ``KendallWithTiesOpt`` bit for bit. With
    ``sample_rate`` < 1 each pair is kept with that probability, drawn as mt-metrics-eval does
    from NumPy's legacy generator: ``np.random.RandomState(seed)``, or with no ``seed`` the
    global ``np.random`` stream (advanced as the reference would advance it)."""
    if variant not in ("acc23", "23"):
        raise AnalysisInputError(f"variant={variant!r}: tie calibration supports 'acc23' and '23'")
    if not 0 < sample_rate <= 1:
        raise AnalysisInputError(f"sample_rate={sample_rate}: it must be in (0, 1]")
    k = kernels()
    g, m, offs = grouped(human, metric, average_by)
    rs = Stream("legacy", seed)
    thr, taus, best = k.tie_calibration(g, m, offs, variant == "acc23", float(sample_rate), rs.key, rs.st)
    if sample_rate < 1:
        rs.commit()
    return TieCalibration(float(taus[best]), float(thr[best]), thr, taus)
