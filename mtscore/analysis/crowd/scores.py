"""DA scores from raw crowd ratings: standardisation, segment, document (Graham et al. 2017, EACL §3) and
system scores (Graham et al. 2017, NLE §3.4; Mathur 2021 §2.1.4), the whole pipeline from batches to scores, and run-A vs run-B
reliability with its down-sampling curve (Graham et al. 2017, EACL §3.1).

:func:`da_pipeline` chains QC (:mod:`.qc`), standardisation and scoring as the DA
scripts of Graham et al. do (``proc-hits``), so that the ``docqe-eacl2017`` release's
``seg-key-enes`` / ``doc-key-enes.csv`` of each run are reproduced from its raw batches.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import AnalysisInputError
from ..human.scores import SCORED_TYPES, group_means, r_mean, standardize
from .batches import Ratings
from .qc import HitStats, WorkerQC, WorkerStats, hit_stats, qc_workers, worker_stats
from .r_numbers import perl_atof, r_format, r_print_read

__all__ = [
    "SCORED_TYPES",
    "DAResult",
    "DocumentScores",
    "SegmentKey",
    "SegmentScores",
    "WholeDocumentScores",
    "da_pipeline",
    "document_scores",
    "downsampling_curve",
    "r_mean",
    "read_segment_key",
    "run_correlation",
    "segment_scores",
    "standardize_ratings",
    "system_scores",
    "whole_document_scores",
]

@dataclass(frozen=True)
class SegmentKey:
    """Where each rated segment id comes from (the release's ``seg-key-enes``). Arrays (S,):
    segment (str, the HIT's sid = NEW.LN), document (str, ORIG.TRG.FN), source_document (str,
    ORIG.SRC.FN), line (int64, ORIG.LN: the line inside the document)."""

    segment: np.ndarray
    document: np.ndarray
    source_document: np.ndarray
    line: np.ndarray

    def mapping(self) -> dict[str, str]:
        return dict(zip(self.segment.tolist(), self.document.tolist()))


def read_segment_key(path: str | Path) -> SegmentKey:
    """Read a ``seg-key-enes`` file (whitespace separated, header ``ORIG.SRC.FN ORIG.TRG.FN
    ORIG.LN NEW.LN ...``; further columns are ignored)."""
    from ..data.tables import read_table_lines

    table, lines = read_table_lines(path, ragged="pad", string_columns=("ORIG.SRC.FN", "ORIG.TRG.FN", "NEW.LN"))
    need = ("ORIG.SRC.FN", "ORIG.TRG.FN", "ORIG.LN", "NEW.LN")
    missing = [c for c in need if c not in table.column_names]
    if missing:
        raise AnalysisInputError(f"{path}:1: missing column(s) {', '.join(missing)}; a segment key has "
                                 "ORIG.SRC.FN ORIG.TRG.FN ORIG.LN NEW.LN")
    seg = np.array(table.column("NEW.LN").to_pylist(), dtype=str)
    u, c = np.unique(seg, return_counts=True)
    if (c > 1).any():
        dup = u[c > 1][0]
        raise AnalysisInputError(f"{path}:{lines[int(np.flatnonzero(seg == dup)[1])]}: segment {dup} (NEW.LN) "
                                 "appears twice; a key gives each rated segment one document")
    return SegmentKey(segment=seg, document=np.array(table.column("ORIG.TRG.FN").to_pylist(), dtype=str),
                      source_document=np.array(table.column("ORIG.SRC.FN").to_pylist(), dtype=str),
                      line=np.array(table.column("ORIG.LN").to_pylist(), dtype=np.int64))


def standardize_ratings(r: Ratings, stats_from: Ratings | None = None, replicate_r: bool = True
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Per-worker z-scores (Graham et al. 2017, NLE §3.4; Mathur 2021 §2.1.4): (trunc(score) - mean_w) / sd_w, mean and sample SD (n - 1)
    over all of the worker's ratings in ``stats_from`` (default ``r``; the DA scripts use every
    rating of the run, QC items and rejected assignments included). ``replicate_r`` passes
    mean and SD through R's ``print`` (7 significant digits) and perl's numification
    (:func:`~.r_numbers.perl_atof`), as the scripts hand them from R to the perl script that
    computes z, and z through perl's ``%.15g`` and R's reading.

    Returns (z (N,) float64, keep (N,) bool): a worker with SD 0 or a single rating (SD
    undefined) gets NaN and keep False (the scripts drop SD-0 workers).

    The statistics are :func:`~mtscore.analysis.human.scores.standardize`'s with numpy's
    per-worker ``mean`` / ``std`` (``sums='numpy'``), taken from the rows of ``stats_from``
    appended after the scored rows (``mask``): raw scores there, truncated ones in z."""
    src = r if stats_from is None else stats_from
    missing = sorted(set(np.unique(r.worker).tolist()) - set(np.unique(src.worker).tolist()))
    if missing:
        raise AnalysisInputError(f"worker {missing[0]} has no ratings in the table the statistics come from")
    n = len(r)
    z, keep = standardize(np.concatenate([r.worker, src.worker]), np.concatenate([np.trunc(r.score), src.score]),
                          mask=np.arange(n + len(src)) >= n, sums="numpy",
                          round_stats=_r_print_perl_read if replicate_r else None)
    z, keep = z[:n], keep[:n]
    if replicate_r:  # the perl script prints z with its default %.15g; R reads that back
        z[keep] = r_print_read(z[keep], 15)
    return z, keep


def _r_print_perl_read(v: np.ndarray) -> np.ndarray:
    """Each worker's mean or SD (k,) as the DA scripts hand it from R to perl."""
    # R prints each worker's mean and SD (7 digits) and the perl script that computes z
    # reads them back with its own atof: perl before 5.30 adds the integer and fraction
    # parts as two rounded doubles, so run B's F0007 (SD "27.40367") gets an SD one ulp
    # low. Evidence: github ygraham/eacl2017 keeps the scripts' intermediates; its
    # runX/ad-enes-trk-mean-sd.txt is this R print, and all 16,000 z strings of its
    # runX/ad-enes-good-stnd.csv match only with perl's reading (a correctly rounded one
    # gives 15 of F0007's z 1 unit higher in the 15th digit, hence 6 segment lines and 1
    # document line of run B's seg-key-enes / doc-key-enes.csv).
    return np.array([perl_atof(r_format(x, 7)) for x in v.tolist()], dtype=np.float64)


@dataclass(frozen=True)
class SegmentScores:
    """Per (system, segment), sorted by system then segment (natural order). Arrays (S,):
    system, segment, document (str; "" without a key), z (mean z-score), raw (mean raw
    score), n (int64 judgements)."""

    system: np.ndarray
    segment: np.ndarray
    document: np.ndarray
    z: np.ndarray
    raw: np.ndarray
    n: np.ndarray


def _natural(values: np.ndarray) -> np.ndarray:
    """Sort key: numeric ids by value, others after them by text."""
    def key(v):
        try:
            return (0, float(v), "")
        except ValueError:
            return (1, 0.0, v)
    return np.array(sorted(range(len(values)), key=lambda i: key(values[i])), dtype=np.int64)


def segment_scores(r: Ratings, z: np.ndarray, types: Sequence[str] = SCORED_TYPES, min_n: int = 1) -> SegmentScores:
    """Segment scores (Mathur 2021 §2.1.4): plain means of z and raw scores over the judgements of each
    (system, segment) whose type is in ``types`` (SYSTEM and REPEAT) and whose z is finite;
    ``min_n`` keeps segments with at least that many judgements (15 for strict segment DA)."""
    m = np.isin(r.item_type, list(types)) & np.isfinite(z)
    sy, sg, dc = r.system[m], r.segment[m], r.document[m]
    if not m.any():
        e = np.array([], dtype=str)
        return SegmentScores(e, e, e, np.array([]), np.array([]), np.array([], np.int64))
    g = group_means([sy, sg], [z[m], r.score[m]])
    (gsy, gsg), (zm, rm), n = g.keys, g.means, g.n
    order = np.lexsort((_rank(gsg), gsy))
    order = order[n[order] >= min_n]
    return SegmentScores(system=gsy[order], segment=gsg[order], document=dc[g.first][order],
                         z=zm[order], raw=rm[order], n=n[order].astype(np.int64))


def _rank(values: np.ndarray) -> np.ndarray:
    rank = np.empty(len(values), np.int64)
    rank[_natural(values)] = np.arange(len(values))
    return rank


@dataclass(frozen=True)
class DocumentScores:
    """Per (system, document) (Graham et al. 2017, EACL §3: unweighted mean of the segment means). Arrays (D,):
    system, document (str), z, raw (float64), n (int64 judgements), n_segments (int64)."""

    system: np.ndarray
    document: np.ndarray
    z: np.ndarray
    raw: np.ndarray
    n: np.ndarray
    n_segments: np.ndarray


def document_scores(seg: SegmentScores, digits: int | None = None) -> DocumentScores:
    """Document scores from segment scores (the segments need a document: read the
    ratings with a key, :meth:`Ratings.with_documents`). ``digits`` rounds the segment means
    to that many significant digits first (15: as the scripts read them back from the file)."""
    if len(seg.document) and (seg.document == "").any():
        raise AnalysisInputError("document scores need each segment's document: attach a segment key "
                                 "(Ratings.with_documents / --segment-key)")
    if not len(seg.document):
        e = np.array([], dtype=str)
        return DocumentScores(e, e, np.array([]), np.array([]), np.array([], np.int64), np.array([], np.int64))
    sz, sr = (seg.z, seg.raw) if digits is None else (r_print_read(seg.z, digits), r_print_read(seg.raw, digits))
    g = group_means([seg.system, seg.document], [sz, sr])
    return DocumentScores(system=g.keys[0], document=g.keys[1], z=g.means[0], raw=g.means[1],
                          n=np.bincount(g.inv, seg.n).astype(np.int64), n_segments=g.n.astype(np.int64))


@dataclass(frozen=True)
class WholeDocumentScores:
    """Per (system, document), from the whole-document ratings of document-level DA. Arrays (D,),
    sorted by system then document: system, document (str), z, raw (float64 means), n (int64
    ratings)."""

    system: np.ndarray
    document: np.ndarray
    z: np.ndarray
    raw: np.ndarray
    n: np.ndarray


def whole_document_scores(docs: Ratings, segments: Ratings, workers: Sequence[str] | np.ndarray,
                          types: Sequence[str] = SCORED_TYPES, replicate_r: bool = True) -> WholeDocumentScores:
    """Mean raw score and mean z of the whole-document ratings ``docs``
    (:func:`~.batches.read_appraise_documents`) per (system, document), over the ratings of
    ``types`` (SYSTEM and REPEAT) by ``workers`` (those who passed quality control).

    A rater's document rating is standardised with the mean and SD of that rater's segment
    ratings in ``segments`` (:func:`standardize_ratings` ``stats_from``), not of their document
    ratings: a HIT holds only about ten document ratings per rater, too few for a stable SD, and
    on the segments' scale a document z reads like a segment z. A rater without segment ratings
    is refused (named); one whose segment SD is 0 is left out (as the segment z drops them)."""
    have = set(np.unique(segments.worker).tolist())
    missing = sorted(set(np.unique(docs.worker).tolist()) - have)
    if missing:
        raise AnalysisInputError(f"worker {missing[0]} has whole-document ratings but no segment ratings to "
                                 "standardise them with")
    z, keep = standardize_ratings(docs, stats_from=segments, replicate_r=replicate_r)
    m = keep & np.isin(docs.item_type, list(types)) & np.isin(docs.worker, np.asarray(workers, dtype=str))
    if not m.any():
        e = np.array([], dtype=str)
        return WholeDocumentScores(e, e, np.array([]), np.array([]), np.array([], np.int64))
    g = group_means([docs.system[m], docs.document[m]], [z[m], docs.score[m]], how="numpy")  # in key order
    return WholeDocumentScores(system=g.keys[0], document=g.keys[1], z=g.means[0], raw=g.means[1],
                               n=g.n.astype(np.int64))


def system_scores(r: Ratings, z: np.ndarray, seg: SegmentScores, types: Sequence[str] = SCORED_TYPES
                  ) -> dict[str, np.ndarray]:
    """System scores both ways: ``z``/``raw`` = mean over the system's judgements
    (Graham et al. 2017, NLE; Mathur 2021), ``z_seg``/``raw_seg`` = mean of its segment means (WMT). Returns a dict of
    arrays (K,) sorted by ``z`` descending: system, z, raw, z_seg, raw_seg, n, n_segments.
    Means are numpy's plain ones (:func:`~mtscore.analysis.human.scores.group_means`,
    ``how='numpy'``); a system without segments (``min_n``) gets NaN segment means."""
    m = np.isin(r.item_type, list(types)) & np.isfinite(z)
    if not m.any():
        return {k: np.array([]) for k in ("system", "z", "raw", "z_seg", "raw_seg", "n", "n_segments")}
    j = group_means([r.system[m]], [z[m], r.score[m]], how="numpy")
    names = j.keys[0].tolist()
    res = {"system": np.array(names), "z": j.means[0], "raw": j.means[1],
           "z_seg": np.full(len(names), np.nan), "raw_seg": np.full(len(names), np.nan),
           "n": j.n.astype(np.int64), "n_segments": np.zeros(len(names), np.int64)}
    if len(seg.system):
        g = group_means([seg.system], [seg.z, seg.raw], how="numpy")
        at = {s: i for i, s in enumerate(names)}
        for s, zs, rs, k in zip(g.keys[0].tolist(), *g.means, g.n.tolist()):
            if s in at:
                res["z_seg"][at[s]], res["raw_seg"][at[s]], res["n_segments"][at[s]] = zs, rs, k
    order = np.argsort(-res["z"], kind="stable")
    return {k: v[order] for k, v in res.items()}


@dataclass(frozen=True)
class DAResult:
    """Everything :func:`da_pipeline` computes. ``z`` (N,) z-scores of every rating (NaN where
    the worker's SD is 0/undefined); ``used`` (N,) bool: ratings of QC-passing workers that
    enter the scores (every item type; scores then take SYSTEM and REPEAT)."""

    ratings: Ratings
    hits: HitStats
    workers: WorkerStats
    qc: WorkerQC
    z: np.ndarray
    used: np.ndarray
    segments: SegmentScores
    documents: DocumentScores | None
    systems: dict[str, np.ndarray]


def da_pipeline(r: Ratings, key: SegmentKey | None = None, alpha: float = 0.05, use_repeats: bool = False,
                drop_rejected: bool = True, min_n: int = 1, replicate_r: bool = True,
                adequacy: bool = True) -> DAResult:
    """Raw ratings -> red flags, worker QC, z-scores, segment / document / system scores, in
    the order of the DA scripts: flags and hit times over every assignment; workers with a
    rejected assignment removed; the paired t-test per worker; z from every rating of the
    worker; scores from the QC-passing workers' SYSTEM and REPEAT ratings."""
    if len(r) == 0:
        raise AnalysisInputError("no ratings to score (every assignment was left out or the batches are empty)")
    if key is not None:
        r = r.with_documents(key.mapping())
    hits = hit_stats(r, replicate_r=replicate_r)
    workers = worker_stats(r, hits, adequacy=adequacy, replicate_r=replicate_r)
    qc = qc_workers(r, workers, alpha=alpha, use_repeats=use_repeats, drop_rejected=drop_rejected,
                    replicate_r=replicate_r)
    z, keep = standardize_ratings(r, replicate_r=replicate_r)
    used = np.isin(r.worker, qc.worker[qc.passed]) & keep
    zu = np.where(used, z, np.nan)
    seg = segment_scores(r, zu, min_n=min_n)
    docs = document_scores(seg, 15 if replicate_r else None) if key is not None else None
    return DAResult(ratings=r, hits=hits, workers=workers, qc=qc, z=z, used=used, segments=seg,
                    documents=docs, systems=system_scores(r, zu, seg))


def run_correlation(a: DocumentScores, b: DocumentScores, field: str = "z") -> tuple[float, int]:
    """Reliability by self-replication (Graham et al. 2017, EACL §3.1): Pearson r of two runs' document scores
    (``field`` 'z' or 'raw') over the (system, document) pairs both scored. Returns (r, n);
    r is NaN with fewer than 3 common documents or a constant side."""
    ka = {k: v for k, v in zip(zip(a.system.tolist(), a.document.tolist()), getattr(a, field).tolist())}
    pairs = [(ka[k], v) for k, v in zip(zip(b.system.tolist(), b.document.tolist()), getattr(b, field).tolist())
             if k in ka]
    if len(pairs) < 3:
        return np.nan, len(pairs)
    x, y = np.asarray(pairs).T
    if x.std() == 0 or y.std() == 0:
        return np.nan, len(pairs)
    return float(np.corrcoef(x, y)[0, 1]), len(pairs)


def downsampling_curve(res: DAResult, other: DocumentScores, order: str = "submit", field: str = "z"
                       ) -> dict[str, np.ndarray]:
    """Reliability as a function of effort (Graham et al. 2017, EACL §3.1): the QC-passing assignments of ``res`` are
    added one HIT at a time (``order`` 'submit': by submit time, as collected; 'file': batch
    order); after each, document scores are recomputed from those HITs only (same z-scores)
    and correlated with ``other`` (the full other run).

    Returns dict of arrays (K,): hits (int64), min_n (int64, fewest judgements of a scored
    document), mean_n (float64, judgements per scored document), n_docs (int64), r (float64)."""
    r = res.ratings
    if (r.document == "").any():
        raise AnalysisInputError("the down-sampling curve needs documents: run the pipeline with a segment key")
    if order not in ("submit", "file"):
        raise AnalysisInputError(f"order must be 'submit' or 'file', not {order!r}")
    used = res.used
    asg = r.assignment[used]
    _, first = np.unique(asg, return_index=True)
    ids = asg[np.sort(first)]
    if order == "submit":
        sub = {a: s for a, s in zip(r.assignment[used].tolist(), r.submit[used])}
        ids = np.array(sorted(ids.tolist(), key=lambda a: (sub[a], a)), dtype=str)
    rank = {a: i for i, a in enumerate(ids.tolist())}
    pos = np.array([rank.get(a, -1) for a in r.assignment.tolist()])
    out: dict[str, list] = {k: [] for k in ("hits", "min_n", "mean_n", "n_docs", "r")}
    for k in range(1, len(ids) + 1):
        zz = np.where(used & (pos >= 0) & (pos < k), res.z, np.nan)
        docs = document_scores(segment_scores(r, zz))
        rr, _ = run_correlation(docs, other, field)
        for name, v in zip(out, (k, docs.n.min(), docs.n.mean(), len(docs.n), rr)):
            out[name].append(v)
    kinds = {"hits": np.int64, "min_n": np.int64, "n_docs": np.int64}
    return {k: np.array(v, dtype=kinds.get(k, np.float64)) for k, v in out.items()}
