"""What every section of a report reads: the checked input, the corpus scores of every system
and metric (:func:`mtscore.score`), their bootstrap CIs and pairwise paired-bootstrap p-values
(:func:`mtscore.compare_stats`, sacrebleu's ``PairedTest`` numbers for the same seed), the
sentence scores and the token lists the analyses count.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...analysis.compare.tokens import tokenize
from ...engine.metrics.registry import get_spec
from ...engine.significance import compare_segment_scores, compare_stats
from ...engine.significance.resampling import bootstrap_ci
from ..api.batch import score

__all__ = ["Context", "build_context", "check_input"]


@dataclass
class Context:
    """The numbers of a report.

    ``names`` (S,) systems in input order; ``metrics`` (M,) metric keys; ``scores`` / ``mean`` /
    ``ci`` float64 (M, S) corpus score, bootstrap mean and 95% CI half-width; ``p`` float64
    (M, S, S) paired-bootstrap p-values (NaN on the diagonal; all NaN with one system);
    ``lower_better`` (M,) bool; ``best`` int (M,) the best system per metric; ``cluster`` bool
    (M, S) the best system and those not significantly different from it at ``alpha``;
    ``sentence`` float64 (M, S, N) sentence scores; ``signatures`` (M,) strings;
    ``metric_objects`` the configured metrics (M,); ``stats[s][m]`` the (N, k) statistics; token lists of refs / systems / source;
    ``by_mean`` (M,) bool: the metric's registry entry has no resampled statistics (BERTScore),
    so its CIs and p-values are the (paired) bootstrap of the mean of its sentence scores."""

    names: list[str]
    metrics: list[str]
    refs: list[list[str]]
    systems: list[list[str]]
    src: list[str] | None
    scores: np.ndarray
    mean: np.ndarray
    ci: np.ndarray
    p: np.ndarray
    lower_better: np.ndarray
    best: np.ndarray
    cluster: np.ndarray
    sentence: np.ndarray
    signatures: list[str]
    metric_objects: list
    stats: list[list[np.ndarray]]
    ref_tokens: list[list[list[str]]]
    sys_tokens: list[list[list[str]]]
    src_tokens: list[list[str]] | None
    n_bootstrap: int
    seed: int
    alpha: float
    pairs: list[tuple[int, int]] = field(default_factory=list)
    by_mean: list[bool] = field(default_factory=list)


def _lines(x, what: str) -> list[str]:
    if isinstance(x, str) or not isinstance(x, Sequence):
        raise ValueError(f"report: {what} must be a list of strings (one per segment), got "
                         f"{type(x).__name__}")
    for i, line in enumerate(x):
        if not isinstance(line, str):
            raise ValueError(f"report: {what}[{i}] is a {type(line).__name__}, not a string")
    return list(x)


def check_input(refs, systems, src, metrics) -> tuple[list[list[str]], dict[str, list[str]], list[str] | None]:
    """``(K reference streams, {name: outputs}, source or None)`` after checking that every
    stream has the same N >= 1 segments; a ValueError names the stream that is wrong."""
    if isinstance(refs, Sequence) and not isinstance(refs, str) and refs and isinstance(refs[0], str):
        refs = [refs]  # one reference stream given as a list of strings
    if isinstance(refs, str) or not isinstance(refs, Sequence) or len(refs) == 0:
        raise ValueError("report: refs must be one reference stream or a list of K >= 1 streams")
    ref_streams = [_lines(r, f"refs[{k}]") for k, r in enumerate(refs)]
    n = len(ref_streams[0])
    if n == 0:
        raise ValueError("report: refs[0] is empty (no segments)")
    for k, r in enumerate(ref_streams):
        if len(r) != n:
            raise ValueError(f"report: refs[{k}] has {len(r)} segments but refs[0] has {n}")
    if not isinstance(systems, Mapping) or len(systems) == 0:
        raise ValueError("report: systems must be a non-empty dict {system name: outputs}")
    out: dict[str, list[str]] = {}
    for name, hyps in systems.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"report: system names must be non-empty strings, got {name!r}")
        lines = _lines(hyps, f"systems[{name!r}]")
        if len(lines) == 0:
            raise ValueError(f"report: systems[{name!r}] is empty (no segments); the references have {n}")
        if len(lines) != n:
            raise ValueError(f"report: systems[{name!r}] has {len(lines)} segments but the references "
                             f"have {n}")
        out[name] = lines
    src_lines = None
    if src is not None:
        src_lines = _lines(src, "src")
        if len(src_lines) != n:
            raise ValueError(f"report: src has {len(src_lines)} segments but the references have {n}")
    if isinstance(metrics, str) or not metrics:
        raise ValueError("report: metrics must be a non-empty list of metric names")
    for m in metrics:
        if not isinstance(m, str):
            raise ValueError(f"report: metrics must be names, got {type(m).__name__}")
        spec = get_spec(m.lower())
        if not spec.resamples and spec.aggregate != "mean":
            raise ValueError(f"report: metric {m!r} has no resampled statistics and its corpus score "
                             "is not a mean of segment scores (no CI or paired test)")
    return ref_streams, out, src_lines


def build_context(refs: list[list[str]], systems: dict[str, list[str]], src: list[str] | None,
                  metrics: Sequence[str], n_bootstrap: int, seed: int, alpha: float,
                  tokenizer: str, metric_kwargs: Mapping | None = None) -> Context:
    """Score, test and tokenise once for every section."""
    names = list(systems)
    res = score(systems, refs, list(metrics), metric_kwargs=metric_kwargs)
    keys = list(res.metrics)
    mobjs = [res.metrics[k] for k in keys]
    S, M, N = len(names), len(keys), len(refs[0])
    scores = np.array([[float(res.corpus[s][k].score) for s in names] for k in keys])
    mean, ci = np.full((M, S), np.nan), np.full((M, S), np.nan)
    p = np.full((M, S, S), np.nan)
    stats = [[res.stats[s][k] for k in keys] for s in names]
    sentence = np.stack([res.sentence_scores[k].reshape(S, N) for k in keys])
    by_mean = [not get_spec(name).resamples for name in metrics]  # BERTScore: mean of segments
    rs = [m for m in range(M) if not by_mean[m]]
    if S >= 2 and rs:
        cmp = compare_stats(names, [copy.copy(mobjs[m]) for m in rs], [[st[m] for m in rs] for st in stats],
                            test="bs", n=n_bootstrap, seed=seed, all_pairs=True)
        assert cmp.p_values is not None
        for m, mname in zip(rs, cmp.metrics):
            p[m] = cmp.p_values[mname]
            for s, r in enumerate(cmp.results[mname]):
                mean[m, s] = np.nan if r.mean is None else float(r.mean)
                ci[m, s] = np.nan if r.ci is None else float(r.ci)
    elif rs:
        for m in rs:
            mc = copy.copy(mobjs[m])
            sc = bootstrap_ci(mc, stats[0][m], mc.compute_score_from_stats(mc.sum_stats(stats[0][m])),
                              n_bootstrap, seed)
            mean[m, 0], ci[m, 0] = float(sc._mean), float(sc._ci)
    for m in (m for m in range(M) if by_mean[m]):
        # corpus score = mean of the segment scores: bootstrap of the mean, paired bootstrap
        # of the mean for the p-values (same resamples and seed as the others)
        seg = compare_segment_scores({nm: sentence[m, s] for s, nm in enumerate(names)}, test="bs",
                                     n=n_bootstrap, seed=seed, all_pairs=True, name=keys[m])
        assert seg.p_values is not None
        p[m] = seg.p_values[keys[m]]
        for s, r in enumerate(seg.results[keys[m]]):
            mean[m, s], ci[m, s] = float(r.mean), float(r.ci)
    lower = np.array([bool(getattr(m, "lower_is_better", False)) for m in mobjs])
    best = np.array([int(np.argmin(scores[m]) if lower[m] else np.argmax(scores[m])) for m in range(M)])
    cluster = np.zeros((M, S), dtype=bool)
    for m in range(M):
        cluster[m, best[m]] = True
        for s in range(S):
            if s != best[m] and p[m, best[m], s] > alpha:
                cluster[m, s] = True
    sys_lines = [systems[s] for s in names]
    return Context(
        names=names, metrics=keys, refs=refs, systems=sys_lines, src=src, scores=scores, mean=mean,
        ci=ci, p=p, lower_better=lower, best=best, cluster=cluster, sentence=sentence,
        signatures=[res.signatures[k] for k in keys], metric_objects=mobjs, stats=stats,
        ref_tokens=[tokenize(r, tokenizer) for r in refs],
        sys_tokens=[tokenize(h, tokenizer) for h in sys_lines],
        src_tokens=tokenize(src, tokenizer) if src is not None else None,
        n_bootstrap=n_bootstrap, seed=seed, alpha=alpha, by_mean=by_mean)
