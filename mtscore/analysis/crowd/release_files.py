"""Write a :class:`~mtscore.analysis.crowd.scores.DAResult` in the layout of the DA scripts'
outputs (the ``docqe-eacl2017`` release's per-run files), so results can be diffed against
such a release or fed to tools that read it:

* ``ad-trk-stats.csv``: worker, p, t, number of pairs (tab separated; workers whose test ran);
* ``ad-wrkr-stats.csv``: the per-worker red flags (space separated, header);
* ``ad-corrected-hit-times.csv``: HIT times corrected for concurrent HITs;
* ``seg-key-enes``: the segment key with z mean, raw mean and N per segment;
* ``doc-key-enes.csv``: document z mean, raw mean and N.

Numbers are printed as R prints them (7 significant digits for p and t, 15 for means).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .qc import hit_rows
from .r_numbers import r_format, r_round
from .scores import DAResult, SegmentKey

__all__ = ["release_files", "write_release_files"]


def _trk(res: DAResult) -> str:
    q = res.qc
    out = []
    for i, w in enumerate(q.worker.tolist()):
        if q.status[i] in ("good", "bad", "repeats"):
            out.append(f"{w}\t{r_format(q.p[i], 7)}\t{r_format(q.t[i], 7)} \t{q.n_pairs[i]}\n")
    return "".join(out)


def _wrkr(res: DAResult) -> str:
    w = res.workers
    cols = ["wid", "hit.count", "mean.bad.ref", "mean.sys.out", "mean.ref", "min.hit.time", "mean.hit.time",
            "mean.concurrent", "max.concurrent", "max.const.seq.len", "reject.rate", "scores.flag", "time.flag",
            "seq.flag", "reject.flag"]
    out = [" ".join(cols) + " \n"]
    for i, name in enumerate(w.worker.tolist()):
        nums = r_round([w.mean_bad_ref[i], w.mean_system[i], w.mean_ref[i], w.min_hit_time[i],
                        w.mean_hit_time[i], w.mean_concurrent[i], w.max_concurrent[i]], 1)
        flags = [("flag(scrs)" if w.flag_scores[i] else "-"), ("flag(time)" if w.flag_time[i] else "-"),
                 ("flag(seq)" if w.flag_seq[i] else "-"), ("flag(rej)" if w.flag_rej[i] else "-")]
        cells = [name, str(w.hit_count[i]), *(r_format(v, 7) for v in nums), str(w.max_const_run[i]),
                 r_format(w.reject_rate[i], 7), *flags]
        out.append(" ".join(cells) + " \n")
    return "".join(out)


def _hit_times(res: DAResult, replicate_r: bool) -> str:
    h = res.hits
    r = res.ratings
    first = {a: i for i, a in reversed(list(enumerate(r.assignment.tolist())))}
    out = ["hit wid src trg item work.seconds accept.time submit.time concurrent.hits corrected.work.seconds "
           "approval \n"]
    order: list[int] = []
    for w in dict.fromkeys(h.worker.tolist()):
        order.extend(hit_rows(h, np.flatnonzero(h.worker == w), replicate_r).tolist())
    for j in order:
        i = first[h.assignment[j]]
        acc = str(h.accept[j]).replace("T", " ")
        sub = str(h.submit[j]).replace("T", " ")
        cells = [h.hit[j], h.worker[j], r.src_lang[i], r.trg_lang[i], r.task[i], r_format(h.work_seconds[j], 15),
                 f'"{acc}"', f'"{sub}"', str(h.concurrent[j]), r_format(h.corrected_seconds[j], 15), h.status[j]]
        out.append("\t".join(cells) + "\t\n")
    return "".join(out)


def _seg_key(res: DAResult, key: SegmentKey) -> str:
    s = res.segments
    idx = {g: i for i, g in enumerate(s.segment.tolist())}
    out = ["ORIG.SRC.FN ORIG.TRG.FN ORIG.LN NEW.LN z.mean raw.mean N\n"]
    for j, g in enumerate(key.segment.tolist()):
        i = idx.get(g)
        vals = ("NA", "NA", "0") if i is None else (r_format(s.z[i], 15), r_format(s.raw[i], 15), str(s.n[i]))
        out.append(f"{key.source_document[j]} {key.document[j]} {key.line[j]} {g} {' '.join(vals)} \n")
    return "".join(out)


def _doc_key(res: DAResult, key: SegmentKey) -> str:
    d = res.documents
    assert d is not None
    idx = {g: i for i, g in enumerate(d.document.tolist())}
    src = dict(zip(key.document.tolist(), key.source_document.tolist()))
    out = ["ORIG.SRC.FN ORIG.TRG.FN Z.MEAN RAW.MEAN N\n"]
    for doc in dict.fromkeys(key.document.tolist()):
        i = idx.get(doc)
        vals = ("NA", "NA", "0") if i is None else (r_format(d.z[i], 15), r_format(d.raw[i], 15), str(d.n[i]))
        out.append(f"{src[doc]} {doc} {' '.join(vals)} \n")
    return "".join(out)


def release_files(res: DAResult, key: SegmentKey | None = None, replicate_r: bool = True) -> dict[str, str]:
    """File name -> content of the DA scripts' per-run outputs (the key ones need ``key``);
    ``replicate_r`` lists an assignment sharing its accept time once per sharer, as they do."""
    files = {"ad-trk-stats.csv": _trk(res), "ad-wrkr-stats.csv": _wrkr(res),
             "ad-corrected-hit-times.csv": _hit_times(res, replicate_r)}
    if key is not None and res.documents is not None:
        files["seg-key-enes"] = _seg_key(res, key)
        files["doc-key-enes.csv"] = _doc_key(res, key)
    return files


def write_release_files(res: DAResult, folder: str | Path, key: SegmentKey | None = None,
                        replicate_r: bool = True) -> list[Path]:
    """Write :func:`release_files` into ``folder`` (created if missing), each atomically."""
    from ..output import write_atomic

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in release_files(res, key, replicate_r).items():
        write_atomic(str(folder / name), text)
        paths.append(folder / name)
    return paths
