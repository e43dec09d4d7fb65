"""Segment-level meta-evaluation tasks from the WMT20/WMT21 releases in ``shared/data``.

A :class:`SegTask` holds one language pair: ``systems`` (S,), ``human`` (S, N) float64 DA
scores (NaN = not rated), ``metric_names`` (M,) and ``metrics`` (M, S, N) float64 (higher is
better; cells without a metric score are dropped from ``human``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import data as datasets
from .. import data as loaders
from ..errors import AnalysisInputError

__all__ = ["WMT20_SEG_METRICS", "WMT21_SEG_METRICS", "SegTask", "wmt20_seg_task", "wmt21_seg_task"]

#: WMT20 segment-level metric files present in the snapshot (larger ones are missing).
WMT20_SEG_METRICS = ("chrF", "TER", "parbleu", "parchrf++", "YiSi-2", "EQ_static", "BAQ_static")
#: sentence-level metrics mtscore computes for the WMT21 outputs (no WMT21 metric scores are public here).
WMT21_SEG_METRICS = ("BLEU", "chrF", "chrF++", "TER")


@dataclass
class SegTask:
    lp: str
    systems: list[str]
    human: np.ndarray
    metric_names: list[str]
    metrics: np.ndarray


def _finish(lp: str, systems: list[str], human: np.ndarray, names: list[str], metrics: list[np.ndarray]) -> SegTask:
    M = np.stack(metrics) if metrics else np.zeros((0, *human.shape))
    human = human.copy()
    human[np.isnan(M).any(axis=0)] = np.nan
    M[:, np.isnan(human)] = 0.0
    return SegTask(lp, systems, human, names, M)


def wmt20_seg_task(root, lp: str, metrics: Sequence[str] = WMT20_SEG_METRICS, gold: str = "z") -> SegTask:
    """WMT20 newstest2020 segment DA (``metrics-ad-seg-scores``, Human-* systems left out) and
    the stored segment-level metric scores, as (S, N) matrices over (doc, seg) items."""
    da = datasets.wmt20_seg_da(root, lp)
    keep = np.array([not str(s).startswith("Human") for s in da["sys"]])
    da = {k: v[keep] for k, v in da.items()}
    systems = sorted(set(da["sys"]))
    items = sorted(set(zip(da["doc"], da["seg"])))
    row = {s: i for i, s in enumerate(systems)}
    col = {it: j for j, it in enumerate(items)}
    r = np.array([row[s] for s in da["sys"]], dtype=np.int64)
    c = np.array([col[it] for it in zip(da["doc"], da["seg"])], dtype=np.int64)
    human = np.full((len(systems), len(items)), np.nan)
    # first score per (system, segment), as the WMT20 DARR scripts
    first = np.unique(r * len(items) + c, return_index=True)[1]
    human[r[first], c[first]] = da["raw" if gold == "raw" else "z"][first]
    mats = []
    for name in metrics:
        v = datasets.wmt20_seg_metric(root, name, lp, da)
        m = np.full(human.shape, np.nan)
        m[r[first], c[first]] = v[first]
        mats.append(m)
    return _finish(lp, systems, human, list(metrics), mats)


def _wmt21_system(name: str) -> str:
    base = name.rsplit(".", 1)[0]
    return {"Nemo": "NVIDIA-NeMo"}.get(base, base)


def wmt21_seg_task(root, lp: str, metrics: Sequence[str] = WMT21_SEG_METRICS, gold: str = "z",
                   ref: str = "A", systems: Sequence[str] | None = None,
                   docids: str | PathLike[str] | Sequence[str] | None = None) -> SegTask:
    """WMT21 newstest2021 to-English segment DA (``humaneval/newstest2021-toen/ad-seg-scores``)
    and sentence-level ``metrics`` computed by mtscore on the primary outputs against reference
    ``ref`` (error metrics negated); ``human`` and ``metrics`` columns are txt lines (N = lines).

    The DA file's SID is not a txt line: the release numbers the segments with the test set's
    documents sorted by document id as strings ("text_205" before "text_34"), segments in
    document order (to-English DA was collected per document, Akhbardeh et al., 2021; with
    this order sentence chrF vs DA z on is-en has Pearson 0.285, with SID = line 0.052).
    ``docids`` (a file with one document id per txt line, e.g. ``sacrebleu -t wmt21 -l de-en
    --echo docid``, or a sequence of str) gives that order: SID k is the k-th line after a
    stable sort of the lines by document id. Errors name the file: no ``docids``, a doc-id
    count other than the reference's line count, a SID out of range (with its DA-file line).
    """
    root = Path(root)
    _src, tgt = lp.split("-")
    da_path = root / "humaneval" / "newstest2021-toen" / f"ad-seg-scores-{lp}.csv"
    t, linenos = loaders.read_da_scores_lines(da_path)
    if docids is None:
        raise AnalysisInputError(
            f"{da_path}: the DA file's SIDs count segments in document-id order, not txt lines, so the "
            f"join needs the doc ids: --docids FILE (one document id per line of the test set, e.g. "
            f"`sacrebleu -t wmt21 -l {lp} --echo docid`)")
    txt = root / "txt"
    ref_path = txt / "references" / f"newstest2021.{lp}.ref.{ref}.{tgt}"
    refs = loaders.read_text(ref_path).splitlines()
    line_of_sid = _sid_lines(docids, len(refs), ref_path)
    outs = {p.name.split(".hyp.", 1)[1][:-len(tgt) - 1]: p
            for p in sorted((txt / "system-outputs").glob(f"newstest2021.{lp}.hyp.*.{tgt}"))}
    names = [_wmt21_system(s) for s in t.column("SYS").to_pylist()]
    sysl = sorted(n for n in set(names) if n in outs) if systems is None else list(systems)
    if not sysl:
        raise AnalysisInputError(f"{root}: no system of the {lp} DA file has an output file")
    row = {s: i for i, s in enumerate(sysl)}
    human = np.full((len(sysl), len(refs)), np.nan)
    sid = t.column("SID").to_numpy()
    score = loaders.float_column(t, "RAW.SCR" if gold == "raw" else "Z.SCR", linenos, da_path)
    for n, i, v, lineno in zip(names, sid, score, linenos):
        if not 1 <= int(i) <= len(line_of_sid):
            raise AnalysisInputError(f"{da_path}:{lineno}: SID {int(i)} out of range: the test set has "
                                     f"{len(line_of_sid)} segments ({ref_path})")
        if n in row and np.isnan(human[row[n], line_of_sid[int(i) - 1]]):
            human[row[n], line_of_sid[int(i) - 1]] = v
    mats = [np.stack([_sentence_scores(name, loaders.read_text(outs[s]).splitlines(), refs) for s in sysl])
            for name in metrics]
    return _finish(lp, sysl, human, list(metrics), mats)


def _sid_lines(docids: str | PathLike[str] | Sequence[str], n: int, ref_path: Path) -> list[int]:
    """The txt line (0-based) of each SID - 1: line indices stably sorted by document id (str order)."""
    where = "docids"
    if isinstance(docids, (str, PathLike)):
        where = str(docids)
        try:
            ids = loaders.read_text(Path(docids)).splitlines()
        except FileNotFoundError as exc:
            raise AnalysisInputError(f"docids: {exc}") from None
    else:
        ids = [str(d) for d in docids]
    if len(ids) != n:
        raise AnalysisInputError(f"{where}: {len(ids)} document ids for {n} lines of {ref_path} "
                                 f"(one document id per line of the test set)")
    return sorted(range(n), key=ids.__getitem__)


def _sentence_scores(name: str, hyps: list[str], refs: list[str]) -> np.ndarray:
    from ...engine.metrics.bleu import BLEU
    from ...engine.metrics.chrf import CHRF
    from ...engine.metrics.ter import TER

    makers: dict[str, Callable[[], Any]] = {"BLEU": lambda: BLEU(effective_order=True), "chrF": CHRF,
                                            "chrF++": lambda: CHRF(word_order=2), "TER": TER}
    if name not in makers:
        raise AnalysisInputError(f"metric {name!r}: WMT21 tasks compute one of {', '.join(makers)}")
    metric = makers[name]()
    if len(hyps) != len(refs):
        raise AnalysisInputError(f"{name}: {len(hyps)} hypotheses for {len(refs)} references")
    scores = np.asarray(metric.stats_and_scores(hyps, metric.prepare_references([refs]))[1], dtype=np.float64)
    return -scores if metric.lower_is_better else scores
