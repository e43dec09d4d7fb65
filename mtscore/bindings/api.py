"""Batch API: score one or many systems against one reference set, all metrics in one call.

>>> r = mtscore.score(hyps, [refs], metrics=["bleu", "chrf"])
>>> r.corpus["bleu"].score          # sacrebleu-identical corpus score
>>> r.segments                      # pyarrow Table: seg, bleu, chrf (sentence scores)

Many systems: pass ``{"sysA": hyps_a, "sysB": hyps_b}``; ``r.corpus[system][metric]`` and a
``system`` column in ``r.segments``. References are prepared once per chunk of segments and
reused by every system; large corpora are processed in chunks so memory stays bounded.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from ..engine.metrics.base import Metric, Score

#: metric name -> (module, class, default kwargs)
_METRICS = {
    "bleu": ("mtscore.engine.metrics.bleu", "BLEU", {}),
    "chrf": ("mtscore.engine.metrics.chrf", "CHRF", {}),
    "chrf++": ("mtscore.engine.metrics.chrf", "CHRF", {"word_order": 2}),
    "ter": ("mtscore.engine.metrics.ter", "TER", {}),
}

DEFAULT_CHUNK = 65536


def make_metric(name: str, **kwargs) -> Metric:
    """A metric object from its CLI name (bleu, chrf, chrf++, ter) and constructor arguments."""
    import importlib

    key = name.lower()
    if key not in _METRICS:
        raise ValueError(f"unknown metric {name!r}; choose from {', '.join(_METRICS)}")
    mod, cls, defaults = _METRICS[key]
    return getattr(importlib.import_module(mod), cls)(**{**defaults, **kwargs})


@dataclass
class ScoreResult:
    """Result of :func:`score`.

    corpus   : ``{metric: Score}`` for one system, or ``{system: {metric: Score}}`` for several
    segments : pyarrow Table, one row per (system, segment): ``system`` (several systems only),
               ``seg`` (int64, 0-based), one float64 column of sentence scores per metric
    stats    : ``{system: {metric: ndarray (N, k)}}`` per-segment sufficient statistics
    signatures : ``{metric: str}``
    """

    corpus: Dict[str, Any]
    segments: Any
    stats: Dict[str, Dict[str, np.ndarray]] = field(repr=False)
    signatures: Dict[str, str]
    metrics: Dict[str, Metric] = field(repr=False, default_factory=dict)

    def __repr__(self) -> str:
        return f"ScoreResult(corpus={self.corpus!r}, segments={self.segments.num_rows} rows)"


def _as_systems(hyps) -> tuple:
    """Returns (systems dict, single: bool)."""
    if isinstance(hyps, Mapping):
        if not hyps:
            raise ValueError("score: no systems given")
        return dict(hyps), False
    return {"hyp": hyps}, True


def _metric_objects(metrics, kwargs_by_name: Dict[str, dict], workers: int) -> Dict[str, Metric]:
    out: Dict[str, Metric] = {}
    for m in metrics:
        if isinstance(m, Metric):
            name = type(m).__name__.lower()
            if name == "chrf" and getattr(m, "word_order", 0):
                name = "chrf++"
            out[name] = m
        else:
            name = m.lower()
            base = "chrf" if name == "chrf++" else name
            out[name] = make_metric(name, **kwargs_by_name.get(base, {}))
        if hasattr(out[name], "workers"):
            out[name].workers = workers
    return out


def score(hyps, refs, metrics: Sequence[Union[str, Metric]] = ("bleu", "chrf"), *,
          workers: int = 1, sentence_level: bool = True, chunk_size: int = DEFAULT_CHUNK,
          progress: Optional[bool] = None, bleu_kwargs: Optional[dict] = None,
          chrf_kwargs: Optional[dict] = None, ter_kwargs: Optional[dict] = None) -> ScoreResult:
    """Score one system (a sequence of N strings) or many (``{name: hyps}``) against ``refs``
    (K reference streams of N strings; ``None`` = no reference for that segment).

    metrics     : names ("bleu", "chrf", "chrf++", "ter") or configured metric objects
    workers     : threads (0 = all cores); results are identical for any value
    sentence_level : also compute per-segment sentence scores (the ``segments`` table)
    chunk_size  : segments per chunk; bounds memory for very large corpora
    *_kwargs    : constructor arguments for metrics given by name
    """
    import pyarrow as pa

    from ..engine.corpus import as_ref_streams, as_text_list
    from ..engine.metrics.lexical import count_refs, present_mask, resolve_workers

    systems, single = _as_systems(hyps)
    systems = {k: as_text_list(v, f"score: hyps[{k!r}]" if not single else "score: hyps")
               for k, v in systems.items()}
    n = len(next(iter(systems.values())))
    for name, h in systems.items():
        if len(h) != n:
            raise ValueError(f"score: system {name!r} has {len(h)} segments, expected {n}")
    streams = as_ref_streams(refs, n, "score: refs")
    num_refs = count_refs(present_mask(streams)) if n else len(streams)
    mobjs = _metric_objects(metrics, {"bleu": bleu_kwargs or {}, "chrf": chrf_kwargs or {},
                                      "ter": ter_kwargs or {}}, resolve_workers(workers))

    bounds = [(a, min(a + chunk_size, n)) for a in range(0, n, chunk_size)] or [(0, 0)]
    stats_parts: Dict[str, Dict[str, list]] = {s: {m: [] for m in mobjs} for s in systems}
    score_parts: Dict[str, Dict[str, list]] = {s: {m: [] for m in mobjs} for s in systems}
    bar = _progress(len(bounds) * len(mobjs), progress)
    for a, z in bounds:
        ref_slice = [st[a:z] for st in streams]
        for mname, metric in mobjs.items():
            prepared = metric._prepare_refs(ref_slice)
            for sname, h in systems.items():
                if sentence_level and hasattr(metric, "_stats_and_scores"):
                    st, sc = metric._stats_and_scores(h[a:z], prepared)
                    if sc is None:
                        sc = metric.sentence_scores_from_stats(st)
                    score_parts[sname][mname].append(sc)
                else:
                    st = metric._stats_from_prepared(h[a:z], prepared)
                    if sentence_level:
                        score_parts[sname][mname].append(_sentence_scores_generic(metric, st))
                stats_parts[sname][mname].append(st)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()

    corpus: Dict[str, Dict[str, Score]] = {}
    stats: Dict[str, Dict[str, np.ndarray]] = {}
    columns: Dict[str, list] = {"system": [], "seg": []}
    for m in mobjs:
        columns[m] = []
    for sname in systems:
        stats[sname] = {}
        corpus[sname] = {}
        for mname, metric in mobjs.items():
            parts = stats_parts[sname][mname]
            st = parts[0] if len(parts) == 1 else np.concatenate(parts)
            stats[sname][mname] = st
            metric.num_refs = num_refs
            corpus[sname][mname] = metric.compute_score_from_stats(metric.sum_stats(st))
            if sentence_level:
                sp = score_parts[sname][mname]
                columns[mname].append(sp[0] if len(sp) == 1 else np.concatenate(sp))
        if sentence_level:
            columns["system"].append(np.full(n, sname, dtype=object))
            columns["seg"].append(np.arange(n, dtype=np.int64))
    if sentence_level:
        table = {}
        if not single:
            table["system"] = pa.array(np.concatenate(columns["system"]).tolist(), pa.string())
        table["seg"] = pa.array(np.concatenate(columns["seg"]))
        for m in mobjs:
            table[m] = pa.array(np.concatenate(columns[m]), pa.float64())
        segments = pa.table(table)
    else:
        segments = pa.table({})
    signatures = {m: str(obj.get_signature()) for m, obj in mobjs.items()}
    return ScoreResult(corpus=corpus["hyp"] if single else corpus, segments=segments,
                       stats=stats, signatures=signatures, metrics=mobjs)


def _sentence_scores_generic(metric: Metric, stats: np.ndarray) -> np.ndarray:
    if hasattr(metric, "sentence_scores_from_stats"):
        try:
            return metric.sentence_scores_from_stats(stats)
        except NotImplementedError:
            pass
    return np.array([metric.compute_score_from_stats(list(row)).score for row in stats],
                    dtype=np.float64)


def _progress(total: int, enabled: Optional[bool]):
    if enabled is None:
        enabled = sys.stderr.isatty() and total > 4
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, unit="chunk", desc="mtscore", leave=False)
