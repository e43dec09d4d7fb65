"""Worker group x lag analysis of variance for sequence effects (Mathur 2021 §4.4.1).

The thesis splits the MT-adequacy workers into good (passed quality control), moderate (paid
but failed the significance tests) and bad (payment rejected after inspection) and compares
the sequence effect across the groups with an analysis of variance. The paper does not say
how the ANOVA was set up; two readings are offered:

* ``lag="bins"`` (default): a two-way ANOVA of the score difference ``score - gold`` of each
  judgement (the part of the rating its item's quality does not explain) on the worker's
  ``group`` and the ``lag`` bin, the equal-frequency bin (Low / Middle / High, as in the
  thesis' Table 4.3) of the gold score of the previous item of the HIT. A group x lag
  interaction means the previous item pulls the groups' scores differently.
* ``lag="score"``: the eq. 4.1 regression pooled over groups with group-specific slopes,
  ``score ~ gold + group + lag + group:lag`` with the lag the worker's previous score in the
  HIT (a covariate); the group:lag F test is the test that beta_1 is equal in every group.

:func:`two_way_anova` is the general computation (numpy least squares, F and p from scipy):
sums of squares of type I (sequential: covariates, A, B, A:B, as R's ``aov``) or type II
(each main effect adjusted for the other, the interaction for both; as R's ``car::Anova``).
For a balanced design the two agree with the textbook formulas.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError
from .sequence_effects import lagged_pairs

__all__ = ["AnovaTable", "group_lag_anova", "two_way_anova"]


@dataclass(frozen=True)
class AnovaTable:
    """An ANOVA table. ``effect`` (k,) str: the covariates' names, A, B, ``A:B``, then
    ``Residuals``. ``df`` (k,) int64, ``ss``, ``ms``, ``f``, ``p`` (k,) float64 (F and p are NaN
    on the residual row and for an effect with no degrees of freedom). ``n``: observations;
    ``ss_type``: 1 or 2. ``levels``: the levels of each factor in coding order."""

    effect: list[str]
    df: np.ndarray
    ss: np.ndarray
    ms: np.ndarray
    f: np.ndarray
    p: np.ndarray
    n: int
    ss_type: int
    levels: dict[str, list[str]]

    def __getitem__(self, effect: str) -> tuple[float, float]:
        """(F, p) of the named effect, e.g. ``table['group:lag']``."""
        if effect not in self.effect:
            raise KeyError(f"no effect {effect!r}; the table has {', '.join(self.effect)}")
        i = self.effect.index(effect)
        return float(self.f[i]), float(self.p[i])


def _dummies(x: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Treatment coding of a factor (N,): (N, L - 1) indicator columns, the first level dropped."""
    levels, code = np.unique(x.astype(str), return_inverse=True)
    code = code.ravel()
    cols = (code[:, None] == np.arange(1, levels.size)[None, :]).astype(np.float64)
    return cols, levels.tolist()


def _rss_rank(X: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    if X.shape[1] == 0:
        return float(y @ y), 0
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = y - X @ beta
    return float(r @ r), int(np.linalg.matrix_rank(X))


def _interaction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.shape[1] == 0 or b.shape[1] == 0:
        return np.empty((a.shape[0], 0))
    return (a[:, :, None] * b[:, None, :]).reshape(a.shape[0], -1)


def two_way_anova(y, a, b, covariates: dict[str, np.ndarray] | None = None, b_numeric: bool = False,
                  names: tuple[str, str] = ("A", "B"), ss_type: int = 2) -> AnovaTable:
    """Two-way analysis of variance of ``y`` (N,) float64 on the factor ``a`` (N,) and ``b``
    (N,) (a factor, or with ``b_numeric`` a numeric covariate whose slope may differ by ``a``),
    with their interaction, after the numeric ``covariates`` {name: (N,)}. Effects are named
    ``names[0]``, ``names[1]`` and ``names[0]:names[1]``. ``ss_type`` 1 (sequential) or 2.
    Missing cells of an unbalanced design lower the interaction's degrees of freedom (they
    are the rank each term adds)."""
    yv = np.asarray(y, dtype=np.float64)
    n = yv.shape[0]
    if yv.ndim != 1:
        raise AnalysisInputError(f"y must be 1-D, got shape {yv.shape}")
    cov = {} if covariates is None else dict(covariates)
    for name, v in [(names[0], a), (names[1], b), *cov.items()]:
        if np.shape(v) != (n,):
            raise AnalysisInputError(f"{name} must have one entry per observation ({n}), got shape {np.shape(v)}")
    if ss_type not in (1, 2):
        raise AnalysisInputError(f"ss_type must be 1 or 2 (got {ss_type})")
    if not np.isfinite(yv).all():
        raise AnalysisInputError(f"y[{int(np.flatnonzero(~np.isfinite(yv))[0])}] is not finite")
    A, la = _dummies(np.asarray(a))
    levels = {names[0]: la}
    if b_numeric:
        bv = np.asarray(b, dtype=np.float64)
        if not np.isfinite(bv).all():
            raise AnalysisInputError(f"{names[1]}[{int(np.flatnonzero(~np.isfinite(bv))[0])}] is not finite")
        B = bv[:, None]
    else:
        B, lb = _dummies(np.asarray(b))
        levels[names[1]] = lb
    C = np.column_stack([np.asarray(v, dtype=np.float64) for v in cov.values()]) if cov else np.empty((n, 0))
    terms = {**{k: C[:, [i]] for i, k in enumerate(cov)}, names[0]: A, names[1]: B,
             f"{names[0]}:{names[1]}": _interaction(A, B)}
    order = list(terms)
    one = np.ones((n, 1))

    def fit(use: Sequence[str]) -> tuple[float, int]:
        return _rss_rank(np.column_stack([one, *(terms[t] for t in use)]), yv)

    rss_full, rank_full = fit(order)
    df_res = n - rank_full
    if df_res <= 0:
        raise AnalysisInputError(f"two_way_anova: {n} observations leave no residual degrees of freedom "
                                 f"for {rank_full} parameters; need replicates in the cells")
    ss, df = [], []
    inter = order[-1]
    for i, t in enumerate(order):
        if ss_type == 1:
            without, with_ = order[:i], order[:i + 1]
        elif t == inter:
            without, with_ = order[:-1], order
        else:
            with_ = order[:-1]
            without = [u for u in with_ if u != t]
        r0, k0 = fit(without)
        r1, k1 = fit(with_)
        ss.append(max(r0 - r1, 0.0))
        df.append(k1 - k0)
    from scipy.special import fdtrc

    ssa, dfa = np.array([*ss, rss_full]), np.array([*df, df_res], np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ms = ssa / dfa
        f = ms / (rss_full / df_res)
    f[-1] = np.nan
    f[dfa == 0] = np.nan
    p = np.where(np.isfinite(f), fdtrc(np.maximum(dfa, 1), df_res, np.nan_to_num(f)), np.nan)
    return AnovaTable(effect=[*order, "Residuals"], df=dfa, ss=ssa, ms=ms, f=f, p=p, n=n, ss_type=ss_type,
                      levels=levels)


def group_lag_anova(worker, hit, position, score, gold, group, lag: str = "bins", bins: int = 3,
                    ss_type: int = 2) -> AnovaTable:
    """Mathur 2021 §4.4.1: worker group x lag ANOVA of the sequence effect.

    Parallel arrays with one entry per judgement (N,): ``worker``, ``hit``, ``position``
    (presentation order in the HIT), ``score`` (z), ``gold`` (the gold score of the judged
    item, e.g. the mean z of good workers), ``group`` (the worker's group, e.g. good /
    moderate / bad from :func:`mtscore.analysis.crowd.qc.worker_groups`). The first item of
    each worker's HIT has no lag and is left out. ``lag="bins"``: ``score - gold`` on group x
    the ``bins`` equal-frequency bins of the previous item's gold (effects ``group``, ``lag``,
    ``group:lag``); ``lag="score"``: ``score`` on gold, group, the previous score and
    group:lag (the group:lag F tests equal beta_1 across groups). See the module notes."""
    n = np.shape(score)[0]
    for name, v in (("gold", gold), ("group", group)):
        if np.shape(v) != (n,):
            raise AnalysisInputError(f"{name} must have one entry per judgement ({n}), got shape {np.shape(v)}")
    s = np.asarray(score, dtype=np.float64)
    g = np.asarray(gold, dtype=np.float64)
    bad = ~(np.isfinite(s) & np.isfinite(g))
    if bad.any():
        raise AnalysisInputError(f"judgement {int(np.flatnonzero(bad)[0])}: score or gold is not finite; "
                                 "drop unscored judgements first")
    cur, prev = lagged_pairs(worker, hit, position)
    grp = np.asarray(group).astype(str)[cur]
    if lag == "bins":
        if bins < 2:
            raise AnalysisInputError(f"bins must be at least 2 (got {bins})")
        pg = g[prev]
        edges = np.quantile(pg, np.linspace(0, 1, bins + 1))
        lag_bin = np.clip(np.searchsorted(edges, pg, side="right") - 1, 0, bins - 1)
        return two_way_anova(s[cur] - g[cur], grp, lag_bin, names=("group", "lag"), ss_type=ss_type)
    if lag == "score":
        return two_way_anova(s[cur], grp, s[prev], covariates={"gold": g[cur]}, b_numeric=True,
                             names=("group", "lag"), ss_type=ss_type)
    raise AnalysisInputError(f"lag must be 'bins' or 'score' (got {lag!r})")
