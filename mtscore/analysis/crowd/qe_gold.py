"""The WMT-16 document-level QE gold label and the simulation of it by
Graham et al. 2017, EACL §2, with mtscore's own TER.

The gold label is G = W1 * TER(PE1, MT) + W2 * TER(PE2, PE1) (W1 = 1, W2 = 13). The post-edits
were not released, so the authors simulated TER(PE1, MT) from document-level TER(MT, reference),
relocated towards the DA distribution and rescaled to the published mean and SD of TER(PE1, MT);
TER(PE2, PE1) is then backed out of the official gold, and W2 is swept to show how the second
term comes to dominate. Document-level TER here is the corpus TER of the document's segments
(edits summed over segments / reference lengths summed), times 100 as sacrebleu reports it.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import AnalysisInputError

__all__ = ["document_ter", "qe_gold_sweep", "simulate_ter_pe1"]


def document_ter(hyps: Sequence[str], refs: Sequence[str], documents: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Corpus TER (sacrebleu's, 0-100) of each document's segments. ``hyps``, ``refs``,
    ``documents``: one entry per segment (N,). Returns (document ids (D,) str in first-seen
    order, TER (D,) float64)."""
    from ...engine.metrics.ter import TER

    if not (len(hyps) == len(refs) == len(documents)):
        raise AnalysisInputError(f"document_ter: {len(hyps)} hypotheses, {len(refs)} references and "
                                 f"{len(documents)} document ids; give one of each per segment")
    metric = TER()
    stats = metric.stats(list(hyps), metric.prepare([list(refs)]))
    docs = np.asarray(documents, dtype=str)
    names, first, inv = np.unique(docs, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    ter = np.empty(len(names))
    for j in range(len(names)):
        ter[j] = metric.compute_score_from_stats(metric.sum_stats(stats[inv == j])).score
    return names[order], ter[order]


def simulate_ter_pe1(ter_mt_ref, da=None, mean: float | None = None, sd: float | None = None,
                     relocate: str = "da-quantiles") -> np.ndarray:
    """Simulated TER(PE1, MT) per document (Graham et al. 2017, EACL §2, steps 1-3).

    ``ter_mt_ref`` (D,): document TER(MT, reference). ``relocate``: 'da-quantiles' keeps the
    TER ranking but takes the shape of the (negated: higher DA = fewer edits) DA distribution
    ``da`` (D,) by quantile mapping, a reading of the paper's [VAGUE] "relocate"; 'none' keeps
    TER's own shape. The result is rescaled to ``mean`` and ``sd`` (the published TER(PE1, MT)
    statistics; default the mean and SD of ``ter_mt_ref``)."""
    t = np.asarray(ter_mt_ref, dtype=np.float64)
    if t.size < 2 or not np.isfinite(t).all():
        raise AnalysisInputError("simulate_ter_pe1 needs at least 2 finite document TER values")
    m0 = float(t.mean()) if mean is None else float(mean)
    s0 = float(t.std(ddof=1)) if sd is None else float(sd)
    if relocate == "da-quantiles":
        if da is None:
            raise AnalysisInputError("relocate='da-quantiles' needs the documents' DA scores (da=)")
        d = -np.asarray(da, dtype=np.float64)
        if d.shape != t.shape:
            raise AnalysisInputError(f"da has {d.size} documents, ter_mt_ref {t.size}; give one DA score per document")
        rank = np.argsort(np.argsort(t, kind="stable"), kind="stable")
        shaped = np.sort(d)[rank]
    elif relocate == "none":
        shaped = t
    else:
        raise AnalysisInputError(f"relocate must be 'da-quantiles' or 'none', not {relocate!r}")
    sdev = shaped.std(ddof=1)
    if sdev == 0:
        raise AnalysisInputError("the relocated TER values are constant; cannot rescale them to an SD")
    return m0 + s0 * (shaped - shaped.mean()) / sdev


def qe_gold_sweep(ter_pe1, gold, w2_official: float = 13.0, w2_values: Sequence[float] = tuple(range(1, 26)),
                  da=None, predictions: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Graham et al. 2017, EACL §2, steps 4-5: back out TER(PE2, PE1) = (gold - TER(PE1, MT)) / ``w2_official`` and
    recompute G(W2) = TER(PE1, MT) + W2 * TER(PE2, PE1) for each W2.

    Returns dict: w2 (K,), gold (K, D) the labels, r_da (K,) Pearson r of G(W2) with ``da``
    (NaN without it), and for every named prediction set ``r_<name>`` (K,) its Pearson r with
    G(W2) (the paper's Figure 1)."""
    t1 = np.asarray(ter_pe1, dtype=np.float64)
    g = np.asarray(gold, dtype=np.float64)
    if t1.shape != g.shape:
        raise AnalysisInputError(f"gold has {g.size} documents, ter_pe1 {t1.size}; give one of each per document")
    t2 = (g - t1) / w2_official
    w = np.asarray(list(w2_values), dtype=np.float64)
    labels = t1[None, :] + w[:, None] * t2[None, :]
    out: dict[str, np.ndarray] = {"w2": w, "gold": labels, "ter_pe2": t2}

    def corr(y) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        res = np.full(len(w), np.nan)
        for k in range(len(w)):
            if labels[k].std() > 0 and y.std() > 0:
                res[k] = np.corrcoef(labels[k], y)[0, 1]
        return res

    out["r_da"] = corr(da) if da is not None else np.full(len(w), np.nan)
    for name, pred in (predictions or {}).items():
        out[f"r_{name}"] = corr(pred)
    return out
