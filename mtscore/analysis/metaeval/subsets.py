"""Correlation over sub-sampled system sets (Mathur et al. 2020 §4.2, Figure 2; Mathur 2021 Figure 6.4).

Draw k of the n systems (every one of the C(n, k) subsets when that is affordable, otherwise
random draws), compute each metric's Pearson r with the human scores on each subset, and group
the subsets by which of some marked systems (typically the outliers) they contain.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..correlation import pow2_normalise
from ..errors import AnalysisInputError

__all__ = ["MAX_ENUMERATE", "QUANTILES", "subset_correlations", "system_subsets"]

MAX_ENUMERATE = 2_000_000  # C(22, 10) = 646,646 subsets (Mathur et al. 2020, en-de) are enumerated
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
_CHUNK = 16384


def system_subsets(n: int, k: int, draws: int | None = None, seed: int = 0,
                   max_enumerate: int = MAX_ENUMERATE) -> np.ndarray:
    """(S, k) int64 sorted system indices: all C(n, k) subsets in lexicographic order when
    ``draws`` is None (refused above ``max_enumerate``), else ``draws`` uniform random subsets
    (drawn independently, so a subset may repeat)."""
    if not (1 <= k <= n):
        raise AnalysisInputError(f"subset size k={k} must be between 1 and the number of systems ({n})")
    if draws is None:
        total = math.comb(n, k)
        if total > max_enumerate:
            raise AnalysisInputError(f"C({n}, {k}) = {total:,} subsets is more than {max_enumerate:,}; "
                                     "pass a number of random draws instead")
        flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), k)),
                           dtype=np.int64, count=total * k)
        return flat.reshape(total, k)
    if draws < 1:
        raise AnalysisInputError(f"draws must be at least 1 (got {draws})")
    rng = np.random.default_rng(seed)
    return np.sort(np.argsort(rng.random((draws, n)), axis=1)[:, :k], axis=1)


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis; x (c, k), y (m, c, k) -> (c, m); NaN where constant.
    Scale-safe (exact power-of-two normalisation, :func:`mtscore.analysis.correlation.pow2_normalise`)."""
    x, y = pow2_normalise(x), pow2_normalise(y)
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    num = np.einsum("ck,mck->cm", xc, yc)
    den = np.sqrt(np.einsum("ck,ck->c", xc, xc)[:, None] * np.einsum("mck,mck->cm", yc, yc))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / den
    r[den == 0] = np.nan
    return r


def _group_stats(r: np.ndarray, code: np.ndarray, groups: list[int]) -> dict[str, np.ndarray]:
    """count (G,), mean/std/min/max (G, m) and quantiles (G, m, 5) of r per subset group."""
    G, m = len(groups), r.shape[1]
    out = {"count": np.zeros(G, np.int64), "mean": np.full((G, m), np.nan), "std": np.full((G, m), np.nan),
           "quantiles": np.full((G, m, len(QUANTILES)), np.nan), "min": np.full((G, m), np.nan),
           "max": np.full((G, m), np.nan)}
    for g, c in enumerate(groups):
        rg = r[code == c]
        out["count"][g] = rg.shape[0]
        for j in range(m):
            v = rg[:, j][np.isfinite(rg[:, j])]
            if v.size:
                out["mean"][g, j], out["std"][g, j] = v.mean(), v.std()
                out["quantiles"][g, j] = np.quantile(v, QUANTILES)
                out["min"][g, j], out["max"][g, j] = v.min(), v.max()
    return out


def subset_correlations(human, scores, k: int, marked: Sequence[int] = (), draws: int | None = None,
                        seed: int = 0, names: Sequence[str] | None = None,
                        return_all: bool = False) -> dict[str, Any]:
    """Pearson r of every metric on every k-subset of the systems.

    ``human`` (n,) float64 system scores; ``scores`` (m, n) float64 metric scores (one row per
    metric); ``marked`` indices (at most 6) of systems whose presence labels each subset (e.g.
    the outliers ``en_de_task`` and ``online-X`` of WMT19 en-de); ``names`` (n,) system names
    for the labels. Subsets as :func:`system_subsets`.

    Returns dict: subsets (S), exhaustive (bool), k, groups (G,) labels ('none', 'A', 'A+B',
    ...; every combination of the marked systems that can occur), count (G,) int64, and per group
    and metric: mean (G, m), std (G, m), quantiles (G, m, 5) at :data:`QUANTILES`, min (G, m),
    max (G, m) (NaN correlations of constant subsets are left out). With ``return_all`` also
    r (S, m) float64, group (S,) int64 index into groups, and the subsets (S, k).
    """
    h = np.asarray(human, dtype=np.float64)
    Y = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    n = h.shape[0]
    if h.ndim != 1 or Y.shape[1] != n:
        raise AnalysisInputError(f"scores must be (metrics, systems) with {n} systems like human; got {Y.shape}")
    if not (np.isfinite(h).all() and np.isfinite(Y).all()):
        raise AnalysisInputError("human and metric scores must be finite (drop metrics with missing systems first)")
    if k < 3:
        raise AnalysisInputError(f"subset size k={k}: Pearson r needs at least 3 systems")
    marked = [int(i) for i in marked]
    if len(marked) > 6 or len(set(marked)) != len(marked) or any(not 0 <= i < n for i in marked):
        raise AnalysisInputError(f"marked must be at most 6 distinct system indices in 0..{n - 1} (got {marked})")
    label_names = [str(s) for s in names] if names is not None else [str(i) for i in range(n)]
    if len(label_names) != n:
        raise AnalysisInputError(f"names: {len(label_names)} names for {n} systems")
    sub = system_subsets(n, k, draws, seed)
    S, m = sub.shape[0], Y.shape[0]
    r = np.empty((S, m))
    from ...engine.progress import progress_bar

    # a bar (terminal only) when there are enough subsets to take seconds
    with progress_bar(S, f"r over {k}-system subsets", None if S > 8 * _CHUNK else False,
                      unit="subset") as bar:
        for a in range(0, S, _CHUNK):
            idx = sub[a:a + _CHUNK]
            r[a:a + _CHUNK] = _pearson_rows(h[idx], Y[:, idx])
            bar.update(len(idx))
    present = np.zeros((n,), np.int64)
    for bit, i in enumerate(marked):
        present[i] = 1 << bit
    code = present[sub].sum(axis=1)
    groups = [c for c in range(1 << len(marked)) if (code == c).any()]
    labels: list[str] = ["+".join(label_names[marked[b]] for b in range(len(marked)) if c >> b & 1) or "none"
                         for c in groups]
    out: dict[str, Any] = {"subsets": S, "exhaustive": draws is None, "k": k, "groups": labels}
    out.update(_group_stats(r, code, groups))
    if return_all:
        out.update({"r": r, "group": np.searchsorted(np.asarray(groups), code), "indices": sub})
    return out
