"""Inter-rater agreement and the reference-bias analysis (Ma et al. 2017, EMNLP).

* :func:`cohen_kappa` - Cohen's kappa, unweighted or weighted, with the Fleiss, Cohen & Everitt
  (1969) large-sample variance and normal confidence interval, computed the way R's
  ``psych::cohen.kappa`` (2.3 and later) computes them, so its numbers are reproduced to
  rounding (checked against the ``refbias`` release for every judge pair).
* :func:`pairwise_kappas` - kappa for every pair of judges of a ratings matrix, each pair
  labelled with its judges' groups and a *setting* (SAME / DIFF / SOURCE / SOURCE-REF).
* :func:`bootstrap_mean_ci` and :func:`figure1_intervals` - the bootstrap CI of a setting's
  mean kappa: the flawed original procedure and each correction of Ma et al. (2017) Fig. 1.
* :func:`nonoverlap_shares` - the share of pairs of judge pairs whose kappa CIs do not
  overlap, for every combination of settings (Ma et al. 2017, Table 2).
* :func:`rating_crosstab` - how the ratings of two judges pair up, per setting (Fig. 4).

psych facts restated here (from its ``cohen.kappa1``):

* Categories are the sorted union of the values the two raters used (``levels`` overrides).
  The default weights of the weighted kappa are *agreement* weights on the category
  *positions*, not values: ``w_ij = 1 - |i - j|^e / (k - 1)^e`` with ``e = 2`` (quadratic);
  ``"linear"`` here is ``e = 1``. So a pair that never used one of the five scale points gets
  weights over four categories unless ``levels`` names all five.
* kappa = (p_o - p_c) / (1 - p_c) on the proportions table p (rows: first rater); weighted:
  p_o = sum w*p, p_c = sum w*r*c (r, c the row and column marginals); when the weight matrix
  has a zero trace (disagreement weights) psych uses 1 - p_o / p_c instead.
* Var = [sum_ij p_ij (w_ij (1 - p_c) - (a_i + b_j)(1 - p_o))^2 - (p_o p_c - 2 p_c + p_o)^2]
  / (n (1 - p_c)^4) with a_i = sum_k w_ki c_k, b_j = sum_k w_kj r_k (for the identity matrix
  this is the unweighted formula of Fleiss et al.). A negative or undefined variance is set
  to 0 (``variance_clamped``).
* CI = kappa +- z_(1-alpha/2) sqrt(Var), with each bound cut to [-1, 1].

NaN policy (documented, never an exception for data that merely lacks information): a pair
with no item rated by both gives n = 0 and NaN everywhere; a pair in which both judges used one
and the same category has no chance-corrected agreement (p_c = 1): kappa and its CI are NaN.
One constant judge against a varied one is defined (kappa = 0), as in psych.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Union

import numpy as np

__all__ = [
    "FIGURE1_PANELS",
    "SETTINGS",
    "WEIGHTS",
    "BootstrapSetting",
    "Kappa",
    "KappaTable",
    "bootstrap_mean_ci",
    "cohen_kappa",
    "figure1_intervals",
    "kappa_weights",
    "nonoverlap_shares",
    "pair_setting",
    "pairwise_kappas",
    "rating_crosstab",
    "self_replication",
]

WEIGHTS = (None, "linear", "quadratic")
SETTINGS = ("SOURCE", "SAME", "DIFF", "SOURCE-REF", "ALL")
_EXPONENT = {"linear": 1, "quadratic": 2}
WeightsArg = Union[None, str, np.ndarray]


@dataclass(frozen=True, eq=False)  # holds an array: compare fields, not objects
class Kappa:
    """Cohen's kappa of two raters with its ``1 - alpha`` confidence interval.

    ``observed`` / ``expected`` are the (weighted) observed and chance agreement p_o, p_c;
    ``table`` the (k, k) int64 contingency counts over ``levels`` (rows: the first rater);
    ``variance_clamped`` says psych's rule set a negative/undefined variance to 0."""

    kappa: float
    low: float
    high: float
    var: float
    n: int
    weights: str
    alpha: float
    observed: float
    expected: float
    levels: tuple = ()
    table: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64), repr=False)
    variance_clamped: bool = False

    @property
    def se(self) -> float:
        """Standard error, sqrt(var)."""
        return math.sqrt(self.var) if self.var >= 0 else math.nan

    def __iter__(self):  # low, kappa, high: psych's ``confid`` row order
        return iter((self.low, self.kappa, self.high))


def kappa_weights(k: int, weights: WeightsArg) -> np.ndarray:
    """(k, k) float64 agreement weights: identity for ``None``; psych's position weights
    ``1 - |i - j|^e / (k - 1)^e`` for ``"linear"`` (e = 1) / ``"quadratic"`` (e = 2); an
    array is returned as given (checked square k x k, finite)."""
    if weights is None:
        return np.eye(k)
    if isinstance(weights, str):
        if weights not in _EXPONENT:
            raise ValueError(f"weights must be None, 'linear', 'quadratic' or a k x k array, got {weights!r}")
        e = _EXPONENT[weights]
        pos = np.arange(k, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.0 - np.abs(pos[None, :] - pos[:, None]) ** e / float(k - 1) ** e
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (k, k):
        raise ValueError(f"a weight matrix for {k} categories must be {k} x {k}, got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("the weight matrix has NaN or infinite entries")
    return w


def _missing(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.isnan(a)
    if a.dtype.kind == "O":
        return np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in a], bool)
    return np.zeros(a.shape, bool)


def _as_codes(x, y, levels) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Pairwise-complete codes of x and y over the category list (psych's ``labels``)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D of the same length, got shapes {x.shape} and {y.shape}")
    keep = ~(_missing(x) | _missing(y))
    x, y = x[keep], y[keep]
    if levels is None:
        cats = np.unique(np.concatenate([x, y])) if x.size else np.array([])
    else:
        cats = np.asarray(list(levels))
        if len(np.unique(cats)) != len(cats):
            raise ValueError(f"levels has repeated categories: {list(levels)}")
    order = np.argsort(cats, kind="stable")
    sorted_cats = cats[order]
    codes = []
    for v in (x, y):
        pos = np.searchsorted(sorted_cats, v) if sorted_cats.size else np.zeros(v.shape, np.intp)
        pos = np.minimum(pos, max(len(sorted_cats) - 1, 0))
        ok = sorted_cats[pos] == v if sorted_cats.size else np.zeros(v.shape, bool)
        if not np.all(ok):
            bad = v[~ok][0]
            raise ValueError(f"rating {bad!r} is not one of levels {list(levels or [])}")
        codes.append(order[pos])
    return codes[0], codes[1], tuple(c.item() if hasattr(c, "item") else c for c in cats)


def cohen_kappa(x, y, weights: WeightsArg = None, alpha: float = 0.05, levels: Sequence | None = None) -> Kappa:
    """Cohen's kappa of ratings ``x`` and ``y`` (1-D, same length, one entry per item) and its
    Fleiss-Cohen-Everitt ``1 - alpha`` interval, as ``psych::cohen.kappa(cbind(x, y))``.

    ``weights``: ``None`` (unweighted kappa, psych's ``kappa``), ``"quadratic"`` (psych's
    ``weighted.kappa`` with its default weights), ``"linear"`` (psych with ``w.exp = 1``) or a
    (k, k) agreement-weight matrix over ``levels`` (psych's ``w``). Items where either rating
    is missing (NaN / None) are left out (psych's ``na.omit``). ``levels``: the categories in
    order (default: the sorted values the two raters used); a rating outside them is a
    ``ValueError``. See the module docstring for the NaN results."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    xc, yc, cats = _as_codes(x, y, levels)
    k, n = len(cats), int(xc.size)
    wname = weights if weights is None or isinstance(weights, str) else "custom"
    w = kappa_weights(k, weights)
    table = np.zeros((k, k), np.int64)
    np.add.at(table, (xc, yc), 1)
    name = "none" if wname is None else str(wname)
    if n == 0:
        nan = math.nan
        return Kappa(nan, nan, nan, nan, 0, name, alpha, nan, nan, cats, table)
    p = table / n
    r, c = p.sum(axis=1), p.sum(axis=0)
    po, pc = float((w * p).sum()), float((w * np.outer(r, c)).sum())
    colw = (w * c[:, None]).sum(axis=0)  # a_i = sum_k w_ki c_k
    roww = (w * r[:, None]).sum(axis=0)  # b_j = sum_k w_kj r_k
    with np.errstate(invalid="ignore", divide="ignore"):
        if np.trace(w) > 0:
            kappa = (po - pc) / (1.0 - pc) if pc != 1.0 else math.nan
        else:
            kappa = 1.0 - po / pc if pc != 0 else math.nan
        core = float((p * (w * (1.0 - pc) - (colw[:, None] + roww[None, :]) * (1.0 - po)) ** 2).sum())
        var = (1.0 / (n * (1.0 - pc) ** 4)) * (core - (po * pc - 2.0 * pc + po) ** 2) if pc != 1.0 else math.nan
    if k == 1 or not math.isfinite(kappa):
        nan = math.nan
        return Kappa(nan, nan, nan, nan, n, name, alpha, po, pc, cats, table)
    clamped = not math.isfinite(var) or var < 0
    if clamped:
        var = 0.0
    z = NormalDist().inv_cdf(alpha / 2.0)  # negative, as R's qnorm(alpha/2)
    low = min(max(kappa + z * math.sqrt(var), -1.0), 1.0)
    high = min(max(kappa - z * math.sqrt(var), -1.0), 1.0)
    return Kappa(float(kappa), low, high, float(var), n, name, alpha, po, pc, cats, table, clamped)


# ---- judge pairs of a ratings matrix ------------------------------------------------------------

@dataclass
class KappaTable:
    """One row per judge pair (a < b in judge order). Arrays are (P,): ``judge_a``/``judge_b``/
    ``group_a``/``group_b``/``setting`` object, ``n`` int64 (items rated by both), ``kappa``,
    ``low``, ``high``, ``se`` float64 (NaN where undefined, see :func:`cohen_kappa`)."""

    judge_a: np.ndarray
    judge_b: np.ndarray
    group_a: np.ndarray
    group_b: np.ndarray
    setting: np.ndarray
    n: np.ndarray
    kappa: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray
    index_a: np.ndarray
    index_b: np.ndarray
    weights: str = "none"
    alpha: float = 0.05

    def __len__(self) -> int:
        return len(self.kappa)

    def settings(self) -> list[str]:
        """The settings present: SOURCE, SAME, DIFF, SOURCE-REF, ALL (Table 2's order)."""
        present = set(self.setting.tolist())
        return [s for s in SETTINGS if s in present]

    def where(self, setting: str) -> np.ndarray:
        """Boolean (P,) mask of the pairs in ``setting``."""
        return self.setting == setting

    def rows(self) -> list[dict]:
        cols = ("judge_a", "judge_b", "group_a", "group_b", "setting", "n", "kappa", "low", "high", "se")
        return [dict(zip(cols, vals)) for vals in zip(*(getattr(self, c).tolist() for c in cols))]


def pair_setting(group_a, group_b, source_groups: Sequence = ()) -> str:
    """The reference-bias setting of a judge pair from its judges' groups: SAME (one group),
    DIFF (two groups), SOURCE (both in one group that saw the source instead of a reference,
    i.e. named in ``source_groups``), SOURCE-REF (a source judge with a reference judge);
    ALL when there are no groups (``None``)."""
    if group_a is None or group_b is None:
        return "ALL"
    src_a, src_b = group_a in source_groups, group_b in source_groups
    if group_a == group_b:
        return "SOURCE" if src_a else "SAME"
    if src_a or src_b:
        return "SOURCE-REF"
    return "DIFF"


def _judge_groups(judges: Sequence[str], groups: Mapping[str, Sequence[str]] | None) -> list:
    if groups is None:
        return [None] * len(judges)
    of: dict[str, str] = {}
    known = set(judges)
    for g, members in groups.items():
        for j in members:
            if j not in known:
                raise ValueError(f"group {g!r}: judge {j!r} is not a judge of the ratings matrix")
            if j in of and of[j] != g:
                raise ValueError(f"judge {j!r} is in two groups ({of[j]!r} and {g!r})")
            of[j] = g
    missing = [j for j in judges if j not in of]
    if missing:
        raise ValueError(f"judge(s) {', '.join(map(str, missing))} are in no group; every judge needs one")
    return [of[j] for j in judges]


def pairwise_kappas(ratings, judges: Sequence[str] | None = None,
                    groups: Mapping[str, Sequence[str]] | None = None, weights: WeightsArg = None,
                    alpha: float = 0.05, levels: Sequence | None = None,
                    source_groups: Sequence[str] = ()) -> KappaTable:
    """Cohen's kappa (:func:`cohen_kappa`) for every pair of judges.

    ``ratings``: (J, I) float array, judges x items, NaN where a judge did not rate an item
    (each pair uses the items both rated). ``judges``: J names (default ``j1..jJ``).
    ``groups``: group name -> its judges' names (every judge in exactly one group), which sets
    each pair's :func:`pair_setting` with ``source_groups``."""
    R = np.asarray(ratings, dtype=np.float64)
    if R.ndim != 2:
        raise ValueError(f"ratings must be a 2-D judges x items matrix, got shape {R.shape}")
    J = R.shape[0]
    if J < 2:
        raise ValueError(f"agreement needs at least 2 judges, got {J}")
    names = [f"j{i + 1}" for i in range(J)] if judges is None else [str(j) for j in judges]
    if len(names) != J:
        raise ValueError(f"{len(names)} judge names for {J} rows of ratings")
    if len(set(names)) != J:
        raise ValueError("judge names must be unique")
    unknown = [g for g in source_groups if groups is None or g not in groups]
    if unknown:
        raise ValueError(f"source group(s) {', '.join(map(str, unknown))} are not groups")
    gof = _judge_groups(names, groups)
    ia, ib = np.triu_indices(J, 1)
    res = [cohen_kappa(R[a], R[b], weights, alpha, levels) for a, b in zip(ia, ib)]
    obj = lambda v: np.asarray(v, dtype=object)  # noqa: E731
    return KappaTable(
        judge_a=obj([names[a] for a in ia]), judge_b=obj([names[b] for b in ib]),
        group_a=obj([gof[a] for a in ia]), group_b=obj([gof[b] for b in ib]),
        setting=obj([pair_setting(gof[a], gof[b], source_groups) for a, b in zip(ia, ib)]),
        n=np.array([k.n for k in res], np.int64), kappa=np.array([k.kappa for k in res]),
        low=np.array([k.low for k in res]), high=np.array([k.high for k in res]),
        se=np.array([k.se for k in res]), index_a=ia, index_b=ib,
        weights=res[0].weights if res else "none", alpha=alpha)


# ---- bootstrap CI of a setting's mean kappa (Fig. 1) --------------------------------------------

def bootstrap_mean_ci(values, n_resamples: int = 1000, sample_size: int | None = None,
                      replace: bool = True, level: float = 0.95, seed=None) -> tuple[float, float, float]:
    """(mean, low, high): percentile bootstrap interval of the mean of ``values`` (NaN left out).

    Draws ``n_resamples`` samples of ``sample_size`` values (default: all N) with or without
    replacement (numpy ``default_rng(seed)``), and takes the ``(1 - level)/2`` and
    ``(1 + level)/2`` percentiles (linear interpolation) of the sample means. The correct
    procedure is the default; the flawed one of Fomicheva & Specia is reached through the
    arguments (see :data:`FIGURE1_PANELS`). NaN when no value is left."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    N = v.size
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be 1 or more, got {n_resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (exclusive), got {level}")
    n = N if sample_size is None else int(sample_size)
    if N == 0:
        return math.nan, math.nan, math.nan
    if n < 1 or (not replace and n > N):
        raise ValueError(f"sample_size must be between 1 and {N if not replace else 'any'}, got {n}")
    rng = np.random.default_rng(seed)
    if replace:
        means = v[rng.integers(0, N, size=(n_resamples, n))].mean(axis=1)
    else:
        means = np.array([v[rng.choice(N, n, replace=False)].mean() for _ in range(n_resamples)])
    lo, hi = np.percentile(means, [50.0 * (1 - level), 50.0 * (1 + level)])
    return float(v.mean()), float(lo), float(hi)


@dataclass(frozen=True)
class BootstrapSetting:
    """One panel of Ma et al. (2017) Fig. 1. ``sample_size``/``level`` None mean: the original
    procedure's value (passed to :func:`figure1_intervals`); ``sample_size`` "N": all values."""

    panel: str
    what: str
    n_resamples: int
    replace: bool
    sample_size: str | None
    level: float | None


FIGURE1_PANELS = (
    BootstrapSetting("a", "original: M=50, without replacement, n < N, the original proportion", 50, False, None, None),
    BootstrapSetting("b", "(a) with the correct 95% proportion", 50, False, None, 0.95),
    BootstrapSetting("c", "(b) with M=1000", 1000, False, None, 0.95),
    BootstrapSetting("d", "(c) with replacement", 1000, True, None, 0.95),
    BootstrapSetting("e", "(f) with M=50", 50, True, "N", 0.95),
    BootstrapSetting("f", "(d) with n=N: the corrected bootstrap", 1000, True, "N", 0.95),
)


def figure1_intervals(values, original_sample_size: int, original_level: float,
                      seed=None) -> dict[str, tuple[float, float, float]]:
    """panel -> (mean, low, high) for every panel of :data:`FIGURE1_PANELS` on ``values``.

    Ma et al. (2017, Fig. 1) do not quote the original code's resample size n (< N) and the
    proportion it actually took (narrower than the claimed 99%), so both are arguments:
    ``original_sample_size`` (used by panels a-d) and ``original_level`` (panel a). Each panel
    draws from ``default_rng(seed)`` afresh."""
    out = {}
    for s in FIGURE1_PANELS:
        size = None if s.sample_size == "N" else original_sample_size
        level = original_level if s.level is None else s.level
        out[s.panel] = bootstrap_mean_ci(values, s.n_resamples, size, s.replace, level, seed)
    return out


# ---- Table 2: judge pairs whose kappa CIs do not overlap ----------------------------------------

def nonoverlap_shares(table: KappaTable, settings: Sequence[str] | None = None) -> list[dict]:
    """For every pair of settings (A, B), A first in ``settings`` order (default: the table's
    settings; each with itself too), the share of pairs of judge pairs whose kappa CIs do not
    overlap (``high_1 < low_2`` or ``low_1 > high_2``). Within one setting unordered pairs
    (i < j) are counted, across settings all cross pairs. Judge pairs with a NaN CI are left
    out. Rows: ``setting_a, setting_b, nonoverlap, total, share`` (share NaN when total is 0)."""
    names = table.settings() if settings is None else list(settings)
    ok = ~(np.isnan(table.low) | np.isnan(table.high))
    rows = []
    for i, a in enumerate(names):
        ma = table.where(a) & ok
        for b in names[i:]:
            mb = table.where(b) & ok
            la, ha, lb, hb = table.low[ma], table.high[ma], table.low[mb], table.high[mb]
            apart = (ha[:, None] < lb[None, :]) | (la[:, None] > hb[None, :])
            if a == b:
                iu = np.triu_indices(len(la), 1)
                count, total = int(apart[iu].sum()), len(iu[0])
            else:
                count, total = int(apart.sum()), apart.size
            rows.append({"setting_a": a, "setting_b": b, "nonoverlap": count, "total": total,
                         "share": count / total if total else math.nan})
    return rows


# ---- Fig. 4: how individual ratings pair up -----------------------------------------------------

def rating_crosstab(ratings, table: KappaTable, levels: Sequence | None = None,
                    source_groups: Sequence[str] = ()) -> dict[str, dict]:
    """setting -> {"levels", "counts" (k, k) int64, "row_percent" (k, k) float64}: for every
    judge pair of the setting and every item both rated, the pair of ratings. Settings of two
    interchangeable judges (SAME, DIFF, SOURCE, ALL) count each pair both ways, so the table is
    symmetric; in SOURCE-REF the row is the source judge's rating. Rows sum to 100 (NaN for a
    rating never given). ``levels`` default: the sorted ratings present in the matrix."""
    R = np.asarray(ratings, dtype=np.float64)
    cats = np.unique(R[~np.isnan(R)]) if levels is None else np.asarray(list(levels), dtype=np.float64)
    k = len(cats)
    out: dict[str, dict] = {}
    for s in table.settings():
        counts = np.zeros((k, k), np.int64)
        m = table.where(s)
        for a, b, ga in zip(table.index_a[m], table.index_b[m], table.group_a[m]):
            both = ~(np.isnan(R[a]) | np.isnan(R[b]))
            ca, cb = _positions(cats, R[a][both]), _positions(cats, R[b][both])
            if s == "SOURCE-REF" and ga not in source_groups:
                ca, cb = cb, ca
            np.add.at(counts, (ca, cb), 1)
            if s != "SOURCE-REF":
                np.add.at(counts, (cb, ca), 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            pct = 100.0 * counts / counts.sum(axis=1, keepdims=True)
        out[s] = {"levels": cats.tolist(), "counts": counts, "row_percent": pct}
    return out


def _positions(cats: np.ndarray, values: np.ndarray) -> np.ndarray:
    pos = np.minimum(np.searchsorted(cats, values), len(cats) - 1)
    bad = cats[pos] != values
    if bad.any():
        raise ValueError(f"rating {values[bad][0]} is not one of levels {cats.tolist()}")
    return pos


def self_replication(item_a, score_a, item_b, score_b):
    """Reliability by self-replication (Graham et al. 2017, EACL §3.1): Pearson r between two independent runs' per-item
    scores over the items both runs scored. Returns (r, n_items)."""
    from ..correlation import pearson

    la = {k: v for k, v in zip(np.asarray(item_a).tolist(), np.asarray(score_a, float))}
    common = [(la[k], v) for k, v in zip(np.asarray(item_b).tolist(), np.asarray(score_b, float)) if k in la]
    if len(common) < 3:
        return np.nan, len(common)
    x, y = np.asarray(common).T
    return float(pearson(x, y)), len(common)

