"""The figures of the reference-bias re-analysis (Ma, Graham, Baldwin & Liu 2017, EMNLP) of the
Fomicheva & Specia (2016) ratings: 25 judges in 5 groups rate the same MT outputs on a 1-5 scale;
one group sees the source (G1), each of the others a different reference (G2-G5).

* :func:`rating_ranges` - Fig. 3: each judge's average rating, grouped by setting; the range of
  the group averages across the reference groups (printed: 0.76) and the range of the judge
  averages inside each group (printed: up to 0.97, in G5).
* :func:`kappa_distributions` - Fig. 2: the Cohen's kappa of every judge pair, grouped by
  setting (SOURCE / SAME / DIFF / SOURCE-REF), with each pair's confidence interval.

The kappas come from :func:`mtscore.analysis.human.agreement.pairwise_kappas`; Table 2 and
Figs. 1 and 4 are in :mod:`.agreement`.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .agreement import SETTINGS, KappaTable

__all__ = ["KappaDistribution", "RatingRanges", "kappa_distributions", "rating_ranges"]


@dataclass(frozen=True, eq=False)  # holds arrays
class RatingRanges:
    """Ma et al. (2017) Fig. 3.

    ``judges`` (J,) names and ``judge_mean`` (J,) float64 each judge's average rating (over
    the items the judge rated), ``judge_group`` (J,) its group; per group (in ``groups`` order):
    ``group_mean`` the average of its judges' averages, ``within_range`` max - min of its
    judges' averages. ``reference_groups``: the groups that saw a reference (not in
    ``source_groups``); ``across_range``: max - min of their ``group_mean`` (NaN for fewer than
    one such group)."""

    judges: list[str]
    judge_mean: np.ndarray
    judge_group: list[str]
    group_mean: dict[str, float]
    within_range: dict[str, float]
    reference_groups: list[str]
    across_range: float

    def widest_group(self) -> str:
        """The group whose judges' averages spread most (Fig. 3: G5, 0.97)."""
        return max(self.within_range, key=lambda g: self.within_range[g])


def rating_ranges(ratings, judges: Sequence[str] | None, groups: Mapping[str, Sequence[str]],
                  source_groups: Sequence[str] = ()) -> RatingRanges:
    """Each judge's average rating and the ranges of Ma et al. (2017) Fig. 3.

    ``ratings``: (J, I) float array, judges x items, NaN where a judge did not rate an item;
    ``judges``: J names (default ``j1..jJ``); ``groups``: group name -> its judges (every
    judge in exactly one group); ``source_groups``: the groups that saw the source instead of
    a reference (left out of ``across_range``). On the released ratings the reference groups'
    averages span 0.76 and the widest group (G5, batch4 of the release) spans 0.97."""
    R = np.asarray(ratings, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] < 1:
        raise ValueError(f"ratings must be a 2-D judges x items matrix, got shape {R.shape}")
    names = [f"j{i + 1}" for i in range(R.shape[0])] if judges is None else [str(j) for j in judges]
    if len(names) != R.shape[0]:
        raise ValueError(f"{len(names)} judge names for {R.shape[0]} rows of ratings")
    unknown = [g for g in source_groups if g not in groups]
    if unknown:
        raise ValueError(f"source group(s) {', '.join(map(str, unknown))} are not groups")
    idx = {n: i for i, n in enumerate(names)}
    of: dict[str, str] = {}
    for g, members in groups.items():
        for j in members:
            if str(j) not in idx:
                raise ValueError(f"group {g!r}: judge {j!r} is not a judge of the ratings matrix")
            if str(j) in of:
                raise ValueError(f"judge {j!r} is in two groups ({of[str(j)]!r} and {g!r})")
            of[str(j)] = g
    missing = [n for n in names if n not in of]
    if missing:
        raise ValueError(f"judge(s) {', '.join(missing)} are in no group; every judge needs one")
    rated = ~np.isnan(R)
    if not rated.any(axis=1).all():
        raise ValueError(f"judge {names[int(np.flatnonzero(~rated.any(axis=1))[0])]} rated no item")
    judge_mean = np.nansum(R, axis=1) / rated.sum(axis=1)
    group_mean, within = {}, {}
    for g, members in groups.items():
        m = judge_mean[[idx[str(j)] for j in members]]
        group_mean[g] = float(m.mean()) if m.size else math.nan
        within[g] = float(m.max() - m.min()) if m.size else math.nan
    ref = [g for g in groups if g not in source_groups and not math.isnan(group_mean[g])]
    across = float(max(group_mean[g] for g in ref) - min(group_mean[g] for g in ref)) if ref else math.nan
    return RatingRanges(names, judge_mean, [of[n] for n in names], group_mean, within, ref, across)


@dataclass(frozen=True, eq=False)  # holds arrays
class KappaDistribution:
    """The judge pairs of one setting in Ma et al. (2017) Fig. 2, sorted by kappa: ``kappa``,
    ``low``, ``high`` (P,) float64 (the pair's kappa and CI; NaN pairs last), ``judge_a``,
    ``judge_b`` (P,) names; ``mean``/``median``/``minimum``/``maximum`` over the non-NaN kappas."""

    setting: str
    kappa: np.ndarray
    low: np.ndarray
    high: np.ndarray
    judge_a: list[str]
    judge_b: list[str]
    mean: float
    median: float
    minimum: float
    maximum: float

    def __len__(self) -> int:
        return len(self.kappa)


def kappa_distributions(table: KappaTable, settings: Sequence[str] | None = None) -> dict[str, KappaDistribution]:
    """setting -> :class:`KappaDistribution`: the kappas Ma et al. (2017) Fig. 2 plots per
    setting. ``settings`` default: those of ``table`` in the order SOURCE, SAME, DIFF,
    SOURCE-REF, ALL; a named setting with no pairs is an error. On the released ratings
    (unweighted kappa): SOURCE 10 pairs (mean 0.247), SAME 40 (0.197), DIFF 150 (0.164)."""
    names = table.settings() if settings is None else list(settings)
    out: dict[str, KappaDistribution] = {}
    for s in names:
        if s not in SETTINGS:
            raise ValueError(f"setting {s!r}: choose from {', '.join(SETTINGS)}")
        m = np.flatnonzero(table.where(s))
        if m.size == 0:
            raise ValueError(f"setting {s} has no judge pairs in this table (present: {', '.join(table.settings())})")
        k = table.kappa[m]
        order = m[np.argsort(np.where(np.isnan(k), np.inf, k), kind="stable")]
        kk = table.kappa[order]
        ok = kk[~np.isnan(kk)]
        stat = (float(ok.mean()), float(np.median(ok)), float(ok.min()), float(ok.max())) if ok.size \
            else (math.nan,) * 4
        out[s] = KappaDistribution(s, kk, table.low[order], table.high[order],
                                   [str(v) for v in table.judge_a[order]], [str(v) for v in table.judge_b[order]],
                                   *stat)
    return out
