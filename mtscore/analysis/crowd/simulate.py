"""Simulated crowd raters for a DA campaign, written as Mechanical Turk batch *result* files.

A simulation whose true parameters are known is how the DA pipeline (QC, standardisation,
scores) is tested end to end: build HITs (:mod:`mtscore.analysis.crowd.hits`), let simulated
workers rate them (:func:`simulate`), write the results in the layout of the raw batches of
the ``docqe-eacl2017`` release (:func:`batch_results_csv`), read them back and check that the
pipeline recovers the systems' quality and flags the bad workers.

The model (0-100 scale):

* true quality of output (s, g): ``quality[s] + d_g + e_sg`` with a segment difficulty
  ``d_g ~ N(0, segment_sd)`` and an interaction ``e_sg ~ N(0, item_sd)``; a REF item's is
  ``ref_quality + d_g / 2``; a BAD_REF item's is its original's minus ``bad_ref_drop``;
  a REPEAT is its original.
* a *good* worker answers ``clip(round(50 + bias + scale * (true - 50) + N(0, noise)), 0, 100)``
  (a fresh draw for a repeat) and works 15-60 minutes per HIT;
* a *random* worker answers uniform integers 0-100 and works 1-5 minutes (under the 300 s
  of the WMT time flag);
* a *constant* worker answers one value with an occasional +-1, for 1-5 minutes.

Document-level HITs (:mod:`.doc_hits`) are rated the same way: a whole-document item's true
quality is the mean of its unit's segments' (minus ``bad_ref_drop`` for the BAD_REF copy), and
:func:`appraise_results_csv` writes the ratings as Appraise's document-layout score export.

Each worker does their HITs one after another (the platform's concurrency correction is 1).

:attr:`Simulation.truth` holds the true quality of every output, :attr:`Simulation.system_truth`
the mean over a system's outputs, so a test can compare what the pipeline recovers.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Union

import numpy as np

from ..errors import AnalysisInputError
from .batches import APPRAISE_TYPES
from .doc_hits import DocCampaign, DocItem
from .hits import Campaign, HitItem

__all__ = [
    "KINDS",
    "RESULT_COLUMNS",
    "Assignment",
    "Rater",
    "Simulation",
    "appraise_results_csv",
    "batch_results_csv",
    "rater_pool",
    "simulate",
    "write_batch_results",
]

KINDS = ("good", "random", "constant")
PathLike = Union[str, Path]

# the columns of a Mechanical Turk batch result file before the Input.* columns (docqe-eacl2017 layout)
RESULT_COLUMNS = (
    "HITId", "HITTypeId", "Title", "Description", "Keywords", "Reward", "CreationTime", "MaxAssignments",
    "RequesterAnnotation", "AssignmentDurationInSeconds", "AutoApprovalDelayInSeconds", "Expiration",
    "NumberOfSimilarHITs", "LifetimeInSeconds", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime",
    "SubmitTime", "AutoApprovalTime", "ApprovalTime", "RejectionTime", "RequesterFeedback", "WorkTimeInSeconds",
    "LifetimeApprovalRate", "Last30DaysApprovalRate", "Last7DaysApprovalRate")
_ALNUM = np.array(list("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"))


@dataclass(frozen=True)
class Rater:
    """A simulated worker: ``kind`` in :data:`KINDS`; ``bias``/``scale``/``noise`` (good
    workers) shift, stretch and blur the true quality; ``constant`` is a constant worker's value."""

    worker: str
    kind: str
    bias: float = 0.0
    scale: float = 1.0
    noise: float = 10.0
    constant: float = 50.0


@dataclass
class Assignment:
    """One worker's answers to one HIT of n items (100; a document HIT: its length): ``order``
    (n,) int64, the HIT positions in the order the worker saw them; ``scores`` (n,) int64, the
    answers in that display order."""

    hit: int
    worker: str
    scores: np.ndarray
    accept: datetime
    seconds: int
    order: np.ndarray


@dataclass
class Simulation:
    """What :func:`simulate` produced, with the truth it was drawn from."""

    assignments: list[Assignment]
    raters: list[Rater]
    truth: dict[tuple[str, int], float]
    system_truth: dict[str, float] = field(default_factory=dict)


def rater_pool(good: int, random: int = 0, constant: int = 0, seed: int | None = 0,
               bias_sd: float = 5.0, noise: tuple[float, float] = (8.0, 16.0)) -> list[Rater]:
    """``good`` + ``random`` + ``constant`` raters named W0001, W0002, ... in that order. Good
    raters draw bias ~ N(0, ``bias_sd``), scale ~ U(0.8, 1.2), noise ~ U(``noise``)."""
    if min(good, random, constant) < 0 or good + random + constant == 0:
        raise AnalysisInputError(f"rater counts must be 0 or more and not all 0, got good={good} "
                                 f"random={random} constant={constant}")
    rng = np.random.default_rng(seed)
    out: list[Rater] = []
    for _ in range(good):
        out.append(Rater(f"W{len(out) + 1:04d}", "good", float(rng.normal(0, bias_sd)),
                         float(rng.uniform(0.8, 1.2)), float(rng.uniform(*noise))))
    out += [Rater(f"W{len(out) + k + 1:04d}", "random") for k in range(random)]
    out += [Rater(f"W{len(out) + k + 1:04d}", "constant", constant=float(rng.integers(30, 90)))
            for k in range(constant)]
    return out


def _truth(campaign: Campaign | DocCampaign, quality: Mapping[str, float], rng: np.random.Generator, segment_sd: float,
           item_sd: float) -> tuple[dict[tuple[str, int], float], dict[int, float]]:
    outputs = sorted({(it.system, it.segment) for it in campaign.items})
    missing = sorted({s for s, _ in outputs} - set(quality))
    if missing:
        raise AnalysisInputError(f"no quality given for system(s) {', '.join(missing)}")
    segs = sorted({g for _, g in outputs})
    d = {g: float(v) for g, v in zip(segs, rng.normal(0, segment_sd, len(segs)))}
    e = rng.normal(0, item_sd, len(outputs))
    return {o: float(quality[o[0]] + d[o[1]] + e[k]) for k, o in enumerate(outputs)}, d


def _answer(r: Rater, true: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = true.shape[0]
    if r.kind == "good":
        x = 50 + r.bias + r.scale * (true - 50) + rng.normal(0, r.noise, n)
    elif r.kind == "random":
        return np.asarray(rng.integers(0, 101, size=n), dtype=np.int64)
    else:
        x = r.constant + rng.choice([-1, 0, 0, 0, 0, 0, 0, 0, 0, 1], n)
    return np.clip(np.rint(x), 0, 100).astype(np.int64)


def simulate(campaign: Campaign | DocCampaign, quality: Mapping[str, float], raters: Sequence[Rater],
             assignments: int = 3, seed: int | None = 0, segment_sd: float = 10.0, item_sd: float = 5.0,
             ref_quality: float = 95.0, bad_ref_drop: float = 30.0,
             start: datetime = datetime(2016, 11, 21, 9, 0, tzinfo=timezone.utc),
             display: str = "input") -> Simulation:
    """Every HIT of ``campaign`` rated by ``assignments`` different raters of ``raters``
    (drawn at random, as the platform hands HITs out), deterministic for ``seed``.

    ``quality``: system -> mean true quality (0-100). See the module docstring for the model.
    ``display``: "input" shows the items in HIT order (the QC spacing holds); "shuffled" shows
    each assignment a fresh random order, as the HIT template of the ``docqe-eacl2017`` runs did
    (none of its 249 complete assignments follows the input order, and QC pairs end up as
    close as adjacent). A :class:`~.doc_hits.DocCampaign` is shown in HIT order only (a document's
    segments in line order, then the whole document)."""
    if display not in ("input", "shuffled"):
        raise AnalysisInputError(f"display {display!r}: choose 'input' or 'shuffled'")
    if display == "shuffled" and isinstance(campaign, DocCampaign):
        raise AnalysisInputError("display 'shuffled': document HITs are shown in document order ('input')")
    kinds = {r.kind for r in raters} - set(KINDS)
    if kinds:
        raise AnalysisInputError(f"unknown rater kind(s) {', '.join(sorted(kinds))}: use {', '.join(KINDS)}")
    if not 1 <= assignments <= len(raters):
        raise AnalysisInputError(f"assignments per HIT must be between 1 and the {len(raters)} raters, "
                                 f"got {assignments}")
    rng = np.random.default_rng(seed)
    truth, d = _truth(campaign, quality, rng, segment_sd, item_sd)
    lines: dict[tuple[str, str], list[int]] = {}  # a document's segments, for its whole-document item
    for it in campaign.items:
        if it.document and not it.is_document:
            seg = lines.setdefault((it.system, it.document), [])
            if it.segment not in seg:
                seg.append(it.segment)
    # each worker works through their HITs one after another (no concurrent HITs), starting
    # at a random time in the first day
    clock = {r.worker: start + timedelta(seconds=int(rng.integers(0, 86400))) for r in raters}
    out = []
    for h in range(campaign.n_hits):
        true = np.array([_item_truth(it, truth, d, ref_quality, bad_ref_drop, lines) for it in campaign.hit(h)])
        for w in rng.choice(len(raters), assignments, replace=False):
            r = raters[int(w)]
            lo, hi = (900, 3600) if r.kind == "good" else (60, 290)
            accept = clock[r.worker] + timedelta(seconds=int(rng.integers(60, 7200)))
            secs = int(rng.integers(lo, hi))
            clock[r.worker] = accept + timedelta(seconds=secs)
            order = rng.permutation(len(true)) if display == "shuffled" else np.arange(len(true))
            out.append(Assignment(h, r.worker, _answer(r, true[order], rng), accept, secs, order.astype(np.int64)))
    sys_truth: dict[str, list[float]] = {}
    for (s, _), v in truth.items():
        sys_truth.setdefault(s, []).append(v)
    return Simulation(out, list(raters), truth, {s: float(np.mean(v)) for s, v in sys_truth.items()})


def _item_truth(it: HitItem | DocItem, truth: dict[tuple[str, int], float], d: dict[int, float], ref_quality: float,
                drop: float, lines: dict[tuple[str, str], list[int]]) -> float:
    if it.type == "REF":
        return ref_quality + d[it.segment] / 2
    if it.is_document:
        t = float(np.mean([truth[(it.system, g)] for g in lines[(it.system, it.document)]]))
    else:
        t = truth[(it.system, it.segment)]
    return t - drop if it.type == "BAD_REF" else t


def _mturk_time(t: datetime) -> str:
    """Mechanical Turk's time format, e.g. ``Mon Nov 21 08:26:47 PST 2016`` (shown in US Pacific
    time, as the release; the offset is a fixed -8 h)."""
    return (t - timedelta(hours=8)).strftime("%a %b %d %H:%M:%S PST %Y")


def _token(rng: np.random.Generator, n: int = 30) -> str:
    return "".join(rng.choice(_ALNUM, n))


def batch_results_csv(campaign: Campaign, sim: Simulation, src: str, trg: str, item: str = "ad",
                      batch_id: int = 1, reward: str = "$0.99", seed: int | None = 0,
                      title: str = "Rate the meaning of texts") -> str:
    """The Mechanical Turk batch result file of ``sim`` as text, in the layout of the
    ``docqe-eacl2017`` raw batches: every field in double quotes, CRLF line ends, the 27
    platform columns, the ``Input.*`` columns of the batch input (single-quoted values),
    ``Answer.Q1`` = ``sys_sid_type_position__score`` joined by ``|`` in display order
    (position = the display position),
    ``Answer.comments`` ``{}``; the header ends with ``Approve,Reject`` and the rows stop
    before them, as in the release. HIT and assignment ids are random 30-character tokens."""
    rng = np.random.default_rng(seed)
    hit_ids = [_token(rng) for _ in range(campaign.n_hits)]
    hit_type = _token(rng)
    inputs = ["src", "trg", "item", "hit"] + [f"{k}_{i}" for i in range(100) for k in ("sys", "sid", "tst", "rid")]
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    w.writerow(list(RESULT_COLUMNS) + [f"Input.{c}" for c in inputs] + ["Answer.Q1", "Answer.comments",
                                                                         "Approve", "Reject"])
    created = min((a.accept for a in sim.assignments), default=datetime(2016, 11, 21, tzinfo=timezone.utc))
    created -= timedelta(hours=1)
    per_hit = {h: sum(a.hit == h for a in sim.assignments) for h in range(campaign.n_hits)}
    for a in sim.assignments:
        items = campaign.hit(a.hit)
        submit = a.accept + timedelta(seconds=a.seconds)
        meta = [hit_ids[a.hit], hit_type, title, title, "translation rating", reward, _mturk_time(created),
                str(per_hit[a.hit]), f"BatchId:{batch_id};", "5400", "2592000",
                _mturk_time(created + timedelta(days=30)), "", "", _token(rng), a.worker, "Submitted",
                _mturk_time(a.accept), _mturk_time(submit), _mturk_time(submit + timedelta(days=30)), "", "", "",
                str(a.seconds), "0% (0/0)", "0% (0/0)", "0% (0/0)"]
        vals = [f"'{src}'", f"'{trg}'", f"'{item}'", str(items[0].hit)]
        for it in items:
            vals += [f"'{it.system}'", f"'{it.segment}'", f"'{it.type}'", f"'{it.rid}'"]
        answer = "|".join(f"{items[k].system}_{items[k].segment}_{items[k].type}_{j}__{int(s)}"
                          for j, (k, s) in enumerate(zip(a.order.tolist(), a.scores)))
        w.writerow(meta + vals + [answer, "{}"])
    return buf.getvalue()


def appraise_results_csv(campaign: DocCampaign, sim: Simulation, src: str, trg: str) -> str:
    """The ratings of ``sim`` over the document HITs of ``campaign`` as Appraise's document-layout
    score export, the 13 cells that ``campaign-export --format appraise`` writes and
    :func:`~.batches.read_appraise_export` / :func:`~.batches.read_appraise_documents` read:
    user, system, item (segment line; a document item: its document's last line), type (TGT,
    CHK, BAD), src, tgt, score, documentID, isCompleteDocument, start, end (epoch seconds with
    milliseconds: an assignment's work time spread evenly over its items in display order),
    batchNo (the HIT) and item_id (``rid``); no header, one row per rating in presentation order."""
    code = {t: c for c, t in APPRAISE_TYPES.items()}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for a in sim.assignments:
        items = campaign.hit(a.hit)
        step = a.seconds / len(items)
        t0 = a.accept.timestamp()
        for j, (k, score) in enumerate(zip(a.order.tolist(), a.scores.tolist())):
            it = items[k]
            w.writerow([a.worker, it.system, it.segment, code[it.type], src, trg, int(score), it.document,
                        "True" if it.is_document else "False", f"{t0 + j * step:.3f}", f"{t0 + (j + 1) * step:.3f}",
                        it.hit, it.rid])
    return buf.getvalue()


def write_batch_results(campaign: Campaign, sim: Simulation, path: PathLike, src: str, trg: str,
                        item: str = "ad", batch_id: int = 1, seed: int | None = 0) -> None:
    """Write :func:`batch_results_csv` to ``path`` (UTF-8, atomically)."""
    from ..output import write_atomic

    write_atomic(str(path), batch_results_csv(campaign, sim, src, trg, item, batch_id, seed=seed))
