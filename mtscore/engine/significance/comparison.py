"""The entry points of the paired tests: :func:`compare` (texts of several systems, any metrics)
and :func:`compare_stats` (statistics already computed), identical to sacrebleu's ``PairedTest``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from ..metrics.bootstrap import resolve_seed
from .adapter import corpus_score, prepare_refs, systems_stats, without_skipped
from .paired import CIs, PValues, paired_ar_core, paired_bs_core, system_pairs
from .resampling import DEFAULT_SAMPLES, bootstrap_scores, estimate_ci, seed_for_signature
from .results import ComparisonResult, TestResult

__all__ = ["compare", "compare_stats"]


def _default_metrics():
    from ..metrics.registry import make_metric

    return [make_metric("bleu")]


def _resolve_metrics(metrics: Sequence[Any] | None) -> list[Any]:
    """Metric objects (default ``[BLEU()]``; names made by the registry)."""
    metrics = list(metrics) if metrics is not None else _default_metrics()
    if any(isinstance(m, str) for m in metrics):
        from ..metrics.registry import get_spec, make_metric

        for m in metrics:
            if isinstance(m, str) and not get_spec(m).resamples:
                raise ValueError(f"compare: metric {m!r} is not tested on resampled statistics; "
                                 "test its segment scores with compare_segment_scores(...)")
        metrics = [make_metric(m) if isinstance(m, str) else m for m in metrics]
    return metrics


def compare(systems: Mapping[str, Sequence[str]] | Sequence[tuple[str, Sequence[str]]],
            refs=None, metrics: Sequence[Any] | None = None, test: str = "bs",
            n: int | None = None, seed: int | str | None = None,
            baseline: str | None = None, all_pairs: bool = False,
            n_ar_confidence: int = -1) -> ComparisonResult:
    """Paired significance tests of several systems, identical to sacrebleu's ``PairedTest``.

    systems: {name: N hypotheses} (or a list of (name, hyps)); refs: K reference streams of N
    segments (None: use each metric's cached references); metrics: mtscore (or sacrebleu)
    metric objects, default ``[BLEU()]``; test: ``bs`` (paired bootstrap, default n=1000) or
    ``ar`` (approximate randomisation, default n=10000); seed: overrides ``SACREBLEU_SEED``;
    baseline: a system name (default: the first); all_pairs: also test every pair and return
    (M, M) p-value matrices in ``result.p_values``; n_ar_confidence: AR only, bootstrap
    resamples for each system's CI (-1: none, 0: 1000), as sacrebleu's API.

    Metrics may also be given by registered name ("bleu", "chrf", "chrf++", "ter", ...; not
    those whose registry entry says they do not resample: BERTScore). The statistics are
    computed once (references prepared once per metric) and tested by :func:`compare_stats`.

    Metrics whose corpus score is a mean of segment scores (objects with ``segment_scores(hyps,
    refs)`` and no ``corpus_stats``) are tested with the paired bootstrap of the mean (``bs``)
    or a paired t-test (``ttest``); see :func:`compare_segment_scores`.
    """
    _check_test(test)
    items: list[tuple[str, Sequence[str]]] = (list(systems.items()) if isinstance(systems, Mapping)
                                             else [cast(tuple[str, Sequence[str]], tuple(x)) for x in systems])
    names = _check_names([x[0] for x in items], baseline)
    if baseline is not None and not all_pairs:
        items.insert(0, items.pop(names.index(baseline)))
    metrics = _resolve_metrics(metrics)
    for metric in metrics:
        prepare_refs(metric, refs)
    by_metric = [systems_stats(metric, [hyps for _, hyps in items]) for metric in metrics]
    stats = [[by_metric[m][s] for m in range(len(metrics))] for s in range(len(items))]
    return compare_stats([x[0] for x in items], metrics, without_skipped(metrics, stats),
                         test=test, n=n, seed=seed, all_pairs=all_pairs,
                         n_ar_confidence=n_ar_confidence)


def _check_test(test: str) -> None:
    if test not in ("bs", "ar"):
        raise ValueError(f"compare: test must be 'bs' or 'ar', got {test!r}")


def _check_names(names: list[str], baseline: str | None) -> list[str]:
    if len(names) < 2:
        raise ValueError("compare: paired tests need at least 2 systems")
    if len(set(names)) != len(names):
        raise ValueError("compare: system names must be unique")
    if baseline is not None and baseline not in names:
        raise ValueError(f"compare: baseline {baseline!r} is not one of the systems {names}")
    return names


def _check_lengths(names: Sequence[str], stats: Sequence[Sequence[np.ndarray]]) -> None:
    N = stats[0][0].shape[0]
    for s in range(len(names)):
        if stats[s][0].shape[0] != N:
            raise ValueError(f"compare: system {names[s]!r} has {stats[s][0].shape[0]} segments, "
                             f"{names[0]!r} has {N}")


def compare_stats(names: Sequence[str], metrics: Sequence[Any],
                  stats: Sequence[Sequence[np.ndarray]], test: str = "bs",
                  n: int | None = None, seed: int | str | None = None,
                  all_pairs: bool = False, n_ar_confidence: int = -1) -> ComparisonResult:
    """:func:`compare` on statistics already computed (streamed from files, gathered from
    workers): ``stats[s][m]`` is system ``names[s]``'s (N, k) statistics matrix for
    ``metrics[m]`` (the objects that computed it: they score the resamples and give the
    signatures), the first system being the baseline unless ``all_pairs``. Only the integer
    statistics are needed, never the text; results equal :func:`compare`'s for the same seed."""
    _check_test(test)
    names = _check_names(list(names), None)
    _check_lengths(names, stats)
    M = len(names)
    n_samples = n if n and n > 0 else DEFAULT_SAMPLES[test]
    n_conf = n_ar_confidence if n_ar_confidence != 0 else DEFAULT_SAMPLES["bs"]
    seed_int, _ = resolve_seed(seed)
    corpus = [[corpus_score(metric, stats[s][m]) for m, metric in enumerate(metrics)] for s in range(M)]
    metric_names = _unique_metric_names([c.name for c in corpus[0]])
    pairs = system_pairs(M, all_pairs)
    exact = [[float(c.score) for c in row] for row in corpus]
    if test == "bs":
        pv, cis = paired_bs_core(metrics, stats, exact, n_samples, seed_int, pairs, list(range(M)))
    else:
        pv, cis = paired_ar_core(metrics, stats, exact, n_samples, seed_int, pairs, n_conf)
        if n_conf > 0:
            _add_ar_baseline_cis(cis, metrics, stats, n_conf, seed_int, all_pairs)
    results = {nm: [TestResult(corpus[s][m].score) for s in range(M)] for m, nm in enumerate(metric_names)}
    pmats = _fill_results(results, metric_names, pv, cis, M, all_pairs)
    signatures = {metric_names[m]: _signature(metric, test, n_samples, n_conf, seed_int)
                  for m, metric in enumerate(metrics)}
    return ComparisonResult(
        systems=names, baseline=None if all_pairs else names[0], test=test, n_samples=n_samples,
        seed=seed_for_signature(seed_int), metrics=metric_names, results=results,
        signatures=signatures, p_values=pmats, n_ar_confidence=n_conf if test == "ar" else -1)


def _add_ar_baseline_cis(cis: CIs, metrics: Sequence[Any], stats: Sequence[Sequence[np.ndarray]],
                         n_conf: int, seed_int: int | None, all_pairs: bool) -> None:
    """CIs of the systems an AR test drew none for (the baseline; with ``all_pairs``, every system
    never in second place): sacrebleu's ``_bootstrap_resample`` with a fresh generator from
    ``SACREBLEU_SEED``."""
    for s in ([0] if not all_pairs else [i for i in range(len(stats)) if i not in cis]):
        cis[s] = [estimate_ci(bootstrap_scores(metric, stats[s][m], n_conf,
                                               np.random.default_rng(seed_int)).array)
                  for m, metric in enumerate(metrics)]


def _signature(metric, test: str, n_samples: int, n_conf: int, seed_int: int | None):
    """The metric's signature with ``seed``, ``bs``/``ar`` added as sacrebleu adds them."""
    sig = metric.get_signature()
    sig.update("seed", seed_for_signature(seed_int))
    sig.update(test, n_samples)
    if n_conf > 0:  # sacrebleu: set whenever n_ar_confidence > 0, whatever the test
        sig.update("bs", n_conf)
    return sig


def _unique_metric_names(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    for nm in names:
        while nm in out:
            nm = nm + "'"
        out.append(nm)
    return out


def _fill_results(results: dict[str, list[TestResult]], metric_names: list[str], pv: PValues,
                  cis: CIs, M: int, all_pairs: bool) -> dict[str, np.ndarray] | None:
    """p-values and CIs into ``results``; the (M, M) p-value matrices when ``all_pairs``."""
    pmats = {nm: np.full((M, M), np.nan) for nm in metric_names} if all_pairs else None
    for (a, b), row in pv.items():
        for m, nm in enumerate(metric_names):
            if pmats is not None:
                pmats[nm][a, b] = pmats[nm][b, a] = row[m]
            elif a == 0:
                results[nm][b].p_value = row[m]
    for s, ci_row in cis.items():
        for m, nm in enumerate(metric_names):
            results[nm][s].mean, results[nm][s].ci = ci_row[m]
    return pmats
