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

from ...analysis.errors import AnalysisInputError
from ...engine.strict_numbers import parse_number
from .parser import positive_int, probability

__all__ = ["COMMANDS", "add_parsers", "run"]

COMMANDS = ("da-batches",)


def _scale(text: str) -> tuple[float, float]:
    try:
        lo, hi = (parse_number(v) for v in text.split(","))  # plain decimals only
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
    p.add_argument("--downsample-order", choices=("submit", "file"), default="submit",
                   help="order in which run B's HITs are added for the down-sampling curve (default: submit time)")
    p.add_argument("--qe-texts", nargs=2, metavar=("MT", "REF"),
                   help="MT output and reference files, line i = segment id i (the key's NEW.LN): adds document "
                        "TER(MT, ref) and its Pearson r with the DA document scores (A13)")
    p.add_argument("--qe-gold", help="official document QE labels, 'document<TAB>label' per line: with --qe-texts, "
                                     "the A13 W2 sweep of G = TER(PE1, MT) + W2 * TER(PE2, PE1)")
    p.add_argument("--pe1-stats", nargs=2, type=float, metavar=("MEAN", "SD"),
                   help="published mean and SD of TER(PE1, MT) for the simulation (default: those of document TER)")
    p.add_argument("--write-dir", help="also write each run's files in the DA scripts' layout (ad-trk-stats.csv, "
                                       "ad-wrkr-stats.csv, ad-corrected-hit-times.csv, seg-key-enes, doc-key-enes.csv) "
                                       "into WRITE_DIR/runA and WRITE_DIR/runB")
    p.add_argument("--figdir", help="write figures (PNG, needs the plot extra) into this folder: each run's "
                                    "worker means by QC status, and with --run-b the down-sampling curve")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--output", "-o", help="write the result to this file instead of stdout")


def _pipeline(paths: list[str], args: argparse.Namespace, key):
    from ...analysis.crowd.batches import WHOLE_DOCUMENTS_LEFT_OUT, read_appraise_export, read_mturk_batches
    from ...analysis.crowd.scores import da_pipeline

    if args.input_format == "appraise":
        r = read_appraise_export(paths, scale=args.scale)
    else:
        r = read_mturk_batches(paths, answer_column=args.answer_column, scale=args.scale,
                               items_per_hit=args.items_per_hit or None)
    for s in r.skipped:
        if args.input_format == "appraise" and s.endswith(WHOLE_DOCUMENTS_LEFT_OUT):
            # not lost: _whole_documents reads and scores them (the "whole-document scores" part)
            print(f"mtscore: {s[:-len(WHOLE_DOCUMENTS_LEFT_OUT)]}whole-document ratings scored apart from the "
                  "segments", file=sys.stderr)
            continue
        print(f"mtscore: warning: {s}", file=sys.stderr)
    return da_pipeline(r, key, alpha=args.alpha, use_repeats=args.use_repeats,
                       drop_rejected=not args.keep_rejected, min_n=args.min_n, replicate_r=not args.no_r_quirks)


def _whole_documents(paths: list[str], args: argparse.Namespace, res, summary: dict) -> None:
    """Appraise document-layout input: the whole-document ratings' scores per (system, document)
    into ``summary["whole_documents"]`` (nothing when the files hold none)."""
    if args.input_format != "appraise":
        return
    from ...analysis.crowd.batches import read_appraise_documents
    from ...analysis.crowd.scores import whole_document_scores

    docs = read_appraise_documents(paths, scale=args.scale)
    if not len(docs):
        return
    w = whole_document_scores(docs, res.ratings, res.qc.worker[res.qc.passed], replicate_r=not args.no_r_quirks)
    summary["whole_documents"] = {"ratings": len(docs), **_jsonable(w)}


def _read_gold(path: str) -> dict[str, float]:
    from ...analysis.data.tables import read_text
    from ...engine.strict_numbers import NumberSyntaxError, parse_number

    gold: dict[str, float] = {}
    for i, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        cells = line.split("\t") if "\t" in line else line.split()
        if len(cells) < 2:
            raise AnalysisInputError(f"{path}:{i}: expected 'document<TAB>label', got {line[:60]!r}")
        try:
            gold[cells[0].strip()] = parse_number(cells[-1])
        except NumberSyntaxError as exc:
            raise AnalysisInputError(f"{path}:{i}: label {exc}; expected 'document<TAB>label'") from None
    return gold


def _qe(args: argparse.Namespace, res_a, res_b) -> dict:
    """A13 on the runs' document scores: document TER(MT, ref), its r with DA, the W2 sweep."""
    import numpy as np

    from ...analysis.crowd.qe_gold import document_ter, qe_gold_sweep, simulate_ter_pe1
    from ...analysis.data.tables import read_text

    if res_a.documents is None:
        raise AnalysisInputError("--qe-texts needs document scores: give --segment-key too")
    mt, ref = (read_text(p).splitlines() for p in args.qe_texts)
    if len(mt) != len(ref):
        raise AnalysisInputError(f"--qe-texts: {args.qe_texts[0]} has {len(mt)} lines, {args.qe_texts[1]} {len(ref)}")
    seg2doc = dict(zip(res_a.ratings.segment.tolist(), res_a.ratings.document.tolist()))
    lines = [i for i in range(len(mt)) if str(i + 1) in seg2doc]
    if not lines:
        raise AnalysisInputError("--qe-texts: no line number matches a rated segment id (line i = segment i)")
    docs, ter = document_ter([mt[i] for i in lines], [ref[i] for i in lines], [seg2doc[str(i + 1)] for i in lines])
    out: dict = {"document": docs.tolist(), "ter": ter.tolist()}
    for name, res in (("run_a", res_a), ("run_b", res_b)):
        if res is None:
            continue
        d = res.documents
        z = dict(zip(d.document.tolist(), d.z.tolist()))
        have = [k for k, doc in enumerate(docs.tolist()) if doc in z]
        x, y = -ter[have], np.array([z[docs[k]] for k in have])
        out[f"r_negTER_{name}"] = float(np.corrcoef(x, y)[0, 1]) if len(have) > 2 and x.std() and y.std() else np.nan
    if args.qe_gold:
        gold = _read_gold(args.qe_gold)
        have = [k for k, doc in enumerate(docs.tolist()) if doc in gold]
        if len(have) < 3:
            raise AnalysisInputError(f"--qe-gold {args.qe_gold}: fewer than 3 of its documents are rated documents")
        da = dict(zip(res_a.documents.document.tolist(), res_a.documents.z.tolist()))
        da_v = np.array([da[docs[k]] for k in have])
        mean, sd = args.pe1_stats if args.pe1_stats else (None, None)
        t1 = simulate_ter_pe1(ter[have], da_v, mean=mean, sd=sd)
        sweep = qe_gold_sweep(t1, np.array([gold[docs[k]] for k in have]), da=da_v, predictions={"ter": ter[have]})
        out["sweep"] = {k: v.tolist() for k, v in sweep.items() if k != "gold"}
    return out


def _figures(figdir: str, res_a, res_b, curve) -> None:
    from pathlib import Path

    from ...analysis.plots import downsampling_plot, worker_means_plot

    folder = Path(figdir)
    folder.mkdir(parents=True, exist_ok=True)
    for name, res in (("runA", res_a), ("runB", res_b)):
        if res is not None:
            worker_means_plot(res.workers, res.qc, title=f"{name}: workers", path=str(folder / f"workers-{name}.png"))
    if curve is not None:
        downsampling_plot(curve, path=str(folder / "downsampling.png"))


def _write_dir(args: argparse.Namespace, name: str, res, key) -> None:
    if not args.write_dir:
        return
    from pathlib import Path

    from ...analysis.crowd.release_files import write_release_files

    folder = Path(args.write_dir) / name
    if folder.exists() and not folder.is_dir():
        raise AnalysisInputError(f"--write-dir {args.write_dir}: {folder} exists and is not a folder")
    write_release_files(res, folder, key, replicate_r=not args.no_r_quirks)


def _jsonable(obj) -> dict[str, list]:
    import numpy as np

    return {k: np.asarray(v).tolist() for k, v in vars(obj).items()
            if isinstance(v, np.ndarray) and k not in ("accept", "submit")}


def _summary(res) -> dict:
    import numpy as np

    r = res.ratings
    out = {"ratings": len(r), "assignments": len(res.hits.hit), "workers": len(res.workers.worker),
           "workers_passed": int(res.qc.passed.sum()), "ratings_used": int(res.used.sum()),
           "skipped": list(r.skipped), "qc": _jsonable(res.qc), "red_flags": _jsonable(res.workers),
           "hits": _jsonable(res.hits),
           "systems": {k: np.asarray(v).tolist() for k, v in res.systems.items()},
           "segments": _jsonable(res.segments)}
    if res.documents is not None:
        out["documents"] = _jsonable(res.documents)
    return out


def run(args: argparse.Namespace) -> int:
    from ...analysis.crowd.scores import downsampling_curve, read_segment_key, run_correlation

    key = read_segment_key(args.segment_key) if args.segment_key else None
    if args.run_b and key is None:
        raise AnalysisInputError("--run-b compares document scores: give --segment-key too")
    res_a = _pipeline(args.run_a, args, key)
    _write_dir(args, "runA", res_a, key)
    result: dict = {"run_a": _summary(res_a)}
    _whole_documents(args.run_a, args, res_a, result["run_a"])
    res_b = curve = None
    if args.run_b:
        res_b = _pipeline(args.run_b, args, key)
        _write_dir(args, "runB", res_b, key)
        result["run_b"] = _summary(res_b)
        _whole_documents(args.run_b, args, res_b, result["run_b"])
        rz, n = run_correlation(res_a.documents, res_b.documents, "z")
        rr, _ = run_correlation(res_a.documents, res_b.documents, "raw")
        curve = downsampling_curve(res_b, res_a.documents, order=args.downsample_order)
        result["reliability"] = {"r_z": rz, "r_raw": rr, "documents": n, "order": args.downsample_order,
                                 "downsampling": {k: v.tolist() for k, v in curve.items()}}
    if args.qe_texts:
        result["qe"] = _qe(args, res_a, res_b)
    if args.figdir:
        _figures(args.figdir, res_a, res_b, curve)
    text = json.dumps(result, indent=1, default=float) + "\n" if args.format == "json" else _text(result)
    if args.output:
        from ...analysis.output import write_atomic

        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _text_run(name: str, s: dict) -> list[str]:
    import numpy as np

    q, f = s["qc"], s["red_flags"]
    h = s["hits"]
    out = [f"== {name}: {s['ratings']} ratings, {s['assignments']} assignments, {s['workers']} workers; "
           f"{s['workers_passed']} passed QC, {s['ratings_used']} ratings used; HITs flagged: "
           f"{sum(h['flag_time'])} too fast, {sum(h['flag_seq'])} with a long constant run",
           f"{'worker':<12} {'hits':>4} {'pairs':>5} {'t':>9} {'p':>11} {'status':<10} {'fast':>4} {'const':>5} flags"]
    for i, w in enumerate(q["worker"]):
        flags = ",".join(n for n in ("scores", "time", "seq", "rej") if f[f"flag_{n}"][i]) or "-"
        mine = [j for j, x in enumerate(h["worker"]) if x == w]
        fast, const = sum(h["flag_time"][j] for j in mine), sum(h["flag_seq"][j] for j in mine)
        out.append(f"{w:<12} {f['hit_count'][i]:>4} {q['n_pairs'][i]:>5} {q['t'][i]:>9.4f} {q['p'][i]:>11.4g} "
                   f"{q['status'][i]:<10} {fast:>4} {const:>5} {flags}")
    sy = s["systems"]
    out.append(f"{'system':<24} {'z':>8} {'raw':>8} {'n':>6}")
    for i, name_ in enumerate(sy["system"]):
        out.append(f"{name_:<24} {sy['z'][i]:>8.4f} {sy['raw'][i]:>8.2f} {sy['n'][i]:>6}")
    if "documents" in s:
        d = s["documents"]
        out.append(f"{len(d['document'])} documents; judgements per document: mean {np.mean(d['n']):.1f}, "
                   f"min {min(d['n']) if d['n'] else 0}")
    if "whole_documents" in s:
        w = s["whole_documents"]
        out.append(f"whole-document ratings: {w['ratings']} read, {sum(w['n'])} used (SYSTEM and REPEAT of workers "
                   "who passed QC; z from each worker's segment mean and SD)")
        out.append(f"{'system':<24} {'document':<24} {'z':>8} {'raw':>8} {'n':>4}")
        for i, sys_ in enumerate(w["system"]):
            out.append(f"{sys_:<24} {w['document'][i]:<24} {w['z'][i]:>8.4f} {w['raw'][i]:>8.2f} {w['n'][i]:>4}")
    return out


def _text(result: dict) -> str:
    out = _text_run("run A", result["run_a"])
    if "run_b" in result:
        out += _text_run("run B", result["run_b"])
        rel = result["reliability"]
        c = rel["downsampling"]
        out.append(f"== run A vs run B over {rel['documents']} documents: r(z) = {rel['r_z']:.4f}, "
                   f"r(raw) = {rel['r_raw']:.4f}")
        out.append(f"down-sampling run B (HITs added in {rel['order']} order) against all of run A:")
        out.append(f"{'hits':>5} {'min n':>6} {'mean n':>8} {'docs':>5} {'r':>8}")
        for i in range(len(c["hits"])):
            out.append(f"{c['hits'][i]:>5} {c['min_n'][i]:>6} {c['mean_n'][i]:>8.2f} {c['n_docs'][i]:>5} "
                       f"{c['r'][i]:>8.4f}")
    if "qe" in result:
        out += _text_qe(result["qe"])
    return "\n".join(out) + "\n"


def _text_qe(q: dict) -> list[str]:
    import numpy as np

    rs = ", ".join(f"{k[len('r_negTER_'):].replace('_', ' ')} {v:.4f}" for k, v in q.items() if k.startswith("r_negTER"))
    out = [f"== document TER(MT, ref) over {len(q['document'])} documents: mean {np.mean(q['ter']):.2f}; "
           f"Pearson r of -TER with DA document z: {rs}"]
    if "sweep" in q:
        out.append(f"{'W2':>4} {'r(G, DA)':>9} {'r(G, TER)':>10}")
        for w2, a, b in zip(q["sweep"]["w2"], q["sweep"]["r_da"], q["sweep"]["r_ter"]):
            out.append(f"{w2:>4g} {a:>9.4f} {b:>10.4f}")
    return out

