"""``mtscore human da-batches``: the DA pipeline from raw crowd batches (Mechanical Turk or Appraise).

Example (the docqe-eacl2017 release)::

    mtscore human da-batches batched-hits/runA --run-b batched-hits/runB --segment-key seg-key-enes

Reads one run (and optionally a second, independent run) of Mechanical Turk batch results,
applies the red flags and the degraded-item QC, standardises, and prints worker QC, document
and system scores; with ``--run-b`` also the run A vs run B document correlation and its
down-sampling curve (run B's HITs added in submission order).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Dict, List, Tuple

import numpy as np

from ..engine.errors import positive_int, probability
from .errors import AnalysisInputError

__all__ = ["COMMANDS", "add_parsers", "run"]

COMMANDS = ("da-batches",)


def _scale(text: str) -> Tuple[float, float]:
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be LOW,HIGH such as 0,100, got {text!r}") from None
    if not lo < hi:
        raise argparse.ArgumentTypeError(f"LOW must be below HIGH, got {text!r}")
    return lo, hi


def add_parsers(hsub) -> None:
    p = hsub.add_parser("da-batches", help="DA from raw Mechanical Turk batches: QC, z-scores, document scores, "
                                           "run A vs B reliability",
                        description=__doc__.split("::", 1)[1].strip(),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_a", nargs="+", help="batch result files of run A, or a folder of Batch_*.csv files")
    p.add_argument("--run-b", nargs="+", help="batch result files (or folder) of an independent run B")
    p.add_argument("--segment-key", help="seg-key file (ORIG.SRC.FN ORIG.TRG.FN ORIG.LN NEW.LN): enables "
                                          "document scores and the run correlation")
    p.add_argument("--alpha", type=probability, default=0.05, help="QC significance level (default 0.05)")
    p.add_argument("--use-repeats", action="store_true",
                   help="also drop workers whose repeat scores differ significantly (Assumption B)")
    p.add_argument("--keep-rejected", action="store_true",
                   help="do not drop workers with a rejected assignment before the QC test")
    p.add_argument("--no-r-quirks", action="store_true",
                   help="corrected computation instead of the DA scripts' quirks (duplicated shared-accept HITs, "
                        "7-digit mean/SD and p-values, constant runs across HITs)")
    p.add_argument("--min-n", type=positive_int, default=1, help="keep segments with at least N judgements")
    p.add_argument("--scale", type=_scale, default=(0.0, 100.0), help="rating scale LOW,HIGH (default 0,100)")
    p.add_argument("--items-per-hit", type=int, default=100,
                   help="answers an assignment must hold; others are left out with a warning (0: any, default 100)")
    p.add_argument("--input-format", choices=("mturk", "appraise"), default="mturk",
                   help="Mechanical Turk batch results (default) or Appraise ExportSystemScoresToCSV files")
    p.add_argument("--answer-column", default="Answer.Q1", help="batch column holding the answers")
    p.add_argument("--write-dir", help="also write each run's files in the DA scripts' layout (ad-trk-stats.csv, "
                                       "ad-wrkr-stats.csv, ad-corrected-hit-times.csv, seg-key-enes, doc-key-enes.csv) "
                                       "into WRITE_DIR/runA and WRITE_DIR/runB")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--output", "-o", help="write the result to this file instead of stdout")


def _pipeline(paths: List[str], args: argparse.Namespace, key):
    from .crowd import read_appraise_export, read_mturk_batches
    from .crowd_scores import da_pipeline

    if args.input_format == "appraise":
        r = read_appraise_export(paths, scale=args.scale)
    else:
        r = read_mturk_batches(paths, answer_column=args.answer_column, scale=args.scale,
                               items_per_hit=args.items_per_hit or None)
    for s in r.skipped:
        print(f"mtscore: warning: {s}", file=sys.stderr)
    return da_pipeline(r, key, alpha=args.alpha, use_repeats=args.use_repeats,
                       drop_rejected=not args.keep_rejected, min_n=args.min_n, replicate_r=not args.no_r_quirks)


def _write_dir(args: argparse.Namespace, name: str, res, key) -> None:
    if not args.write_dir:
        return
    from pathlib import Path

    from .crowd_write import write_release_files

    folder = Path(args.write_dir) / name
    if folder.exists() and not folder.is_dir():
        raise AnalysisInputError(f"--write-dir {args.write_dir}: {folder} exists and is not a folder")
    write_release_files(res, folder, key, replicate_r=not args.no_r_quirks)


def _jsonable(obj) -> Dict[str, list]:
    return {k: np.asarray(v).tolist() for k, v in vars(obj).items()
            if isinstance(v, np.ndarray) and k not in ("accept", "submit")}


def _summary(res) -> Dict:
    r = res.ratings
    out = {"ratings": len(r), "assignments": int(len(res.hits.hit)), "workers": int(len(res.workers.worker)),
           "workers_passed": int(res.qc.passed.sum()), "ratings_used": int(res.used.sum()),
           "skipped": list(r.skipped), "qc": _jsonable(res.qc), "red_flags": _jsonable(res.workers),
           "systems": {k: np.asarray(v).tolist() for k, v in res.systems.items()},
           "segments": _jsonable(res.segments)}
    if res.documents is not None:
        out["documents"] = _jsonable(res.documents)
    return out


def run(args: argparse.Namespace) -> int:
    from .crowd_scores import downsampling_curve, read_segment_key, run_correlation

    key = read_segment_key(args.segment_key) if args.segment_key else None
    if args.run_b and key is None:
        raise AnalysisInputError("--run-b compares document scores: give --segment-key too")
    res_a = _pipeline(args.run_a, args, key)
    _write_dir(args, "runA", res_a, key)
    result: Dict = {"run_a": _summary(res_a)}
    if args.run_b:
        res_b = _pipeline(args.run_b, args, key)
        _write_dir(args, "runB", res_b, key)
        result["run_b"] = _summary(res_b)
        rz, n = run_correlation(res_a.documents, res_b.documents, "z")
        rr, _ = run_correlation(res_a.documents, res_b.documents, "raw")
        curve = downsampling_curve(res_b, res_a.documents)
        result["reliability"] = {"r_z": rz, "r_raw": rr, "documents": n,
                                 "downsampling": {k: v.tolist() for k, v in curve.items()}}
    text = json.dumps(result, indent=1, default=float) + "\n" if args.format == "json" else _text(result)
    if args.output:
        from .report import write_atomic

        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _text_run(name: str, s: Dict) -> List[str]:
    q, f = s["qc"], s["red_flags"]
    out = [f"== {name}: {s['ratings']} ratings, {s['assignments']} assignments, {s['workers']} workers; "
           f"{s['workers_passed']} passed QC, {s['ratings_used']} ratings used",
           f"{'worker':<12} {'hits':>4} {'pairs':>5} {'t':>9} {'p':>11} {'status':<10} flags"]
    for i, w in enumerate(q["worker"]):
        flags = ",".join(n for n in ("scores", "time", "seq", "rej") if f[f"flag_{n}"][i]) or "-"
        out.append(f"{w:<12} {f['hit_count'][i]:>4} {q['n_pairs'][i]:>5} {q['t'][i]:>9.4f} {q['p'][i]:>11.4g} "
                   f"{q['status'][i]:<10} {flags}")
    sy = s["systems"]
    out.append(f"{'system':<24} {'z':>8} {'raw':>8} {'n':>6}")
    for i, name_ in enumerate(sy["system"]):
        out.append(f"{name_:<24} {sy['z'][i]:>8.4f} {sy['raw'][i]:>8.2f} {sy['n'][i]:>6}")
    if "documents" in s:
        d = s["documents"]
        out.append(f"{len(d['document'])} documents; judgements per document: mean {np.mean(d['n']):.1f}, "
                   f"min {min(d['n']) if d['n'] else 0}")
    return out


def _text(result: Dict) -> str:
    out = _text_run("run A", result["run_a"])
    if "run_b" in result:
        out += _text_run("run B", result["run_b"])
        rel = result["reliability"]
        c = rel["downsampling"]
        out.append(f"== run A vs run B over {rel['documents']} documents: r(z) = {rel['r_z']:.4f}, "
                   f"r(raw) = {rel['r_raw']:.4f}")
        out.append("down-sampling run B (HITs added in submission order) against all of run A:")
        out.append(f"{'hits':>5} {'min n':>6} {'mean n':>8} {'docs':>5} {'r':>8}")
        for i in range(len(c["hits"])):
            out.append(f"{c['hits'][i]:>5} {c['min_n'][i]:>6} {c['mean_n'][i]:>8.2f} {c['n_docs'][i]:>5} "
                       f"{c['r'][i]:>8.4f}")
    return "\n".join(out) + "\n"

