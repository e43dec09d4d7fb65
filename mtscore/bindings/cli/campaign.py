"""``mtscore human build-hits`` and ``mtscore human simulate-batches`` (registered by
:mod:`.analysis`; heavy imports happen when a command runs).

Examples::

    mtscore human build-hits --system online-A=newstest.online-A --system uedin=newstest.uedin \\
        --reference newstest.ref --src en --trg de --seed 1 -o ad.mturk-hits.en-de.csv --items items.tsv
    mtscore human simulate-batches --hits ad.mturk-hits.en-de.csv --quality online-A=70,uedin=62 \\
        --good 20 --random 5 --assignments 3 --seed 1 -o Batch_1_batch_results.csv
    mtscore human check-hits ad.mturk-hits.en-de.csv Batch_*_batch_results.csv
    mtscore human build-hits --docs docids ... -o doc-hits.jsonl      # document HITs (JSON Lines)
    mtscore human check-hits doc-hits.jsonl
    mtscore human simulate-batches --hits doc-hits.jsonl --quality online-A=70,uedin=62 -o export.csv
    mtscore human da-batches export.csv --input-format appraise
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...analysis.errors import AnalysisInputError
from ...engine.strict_numbers import parse_number
from .analysis_output import counted
from .analysis_output import emit as _emit
from .analysis_output import write_output as _write
from .parser import nonnegative_int, positive_int

__all__ = ["COMMANDS", "add_parsers", "run"]

COMMANDS = ("build-hits", "simulate-batches", "check-hits")


def add_parsers(hsub) -> None:
    """Add the campaign subcommands to the ``mtscore human`` subparsers ``hsub``."""
    b = hsub.add_parser("build-hits", help="100-item DA HITs (70 outputs + 10 REF, 10 BAD_REF, 10 REPEAT) "
                                           "as a Mechanical Turk batch input CSV",
                        description="Place every output line of every system into 100-item HITs with the "
                                    "quality-control items 41+ positions from their originals (WMT / Graham "
                                    "et al.), degrade the BAD_REF copies, and write the batch input CSV. "
                                    "Deterministic for --seed.")
    b.add_argument("--system", action="append", default=[], metavar="NAME=PATH",
                   help="a system's output file, one line per segment (repeat the option for each system)")
    b.add_argument("--reference", required=True, help="the reference translations, one line per segment")
    b.add_argument("--src", required=True, help="source language code written into the CSV, e.g. en")
    b.add_argument("--trg", required=True, help="target language code written into the CSV, e.g. de")
    b.add_argument("--item", default="ad", help="task code written into the CSV (default ad: adequacy)")
    b.add_argument("--seed", type=nonnegative_int, default=0, help="random seed, 0 or more (default 0)")
    b.add_argument("--degrade", choices=("replace", "delete", "duplicate"), default="replace",
                   help="BAD_REF: replace a span by an n-gram of the references (WMT, default), delete it "
                        "(NLE adequacy) or copy a word pair elsewhere (NLE fluency HITs)")
    b.add_argument("--no-balance", action="store_true",
                   help="one plain shuffle (the reference script) instead of equal shares of systems per HIT")
    b.add_argument("--texts", action="store_true",
                   help="add text_i (what to rate) and ref_i (the reference) columns for a text template")
    b.add_argument("--source", metavar="FILE",
                   help="with --texts: the source sentences, one line per segment, as srctext_i columns "
                        "(for source-based DA: human serve --setting src)")
    b.add_argument("--workers-per-hit", type=positive_int, default=None, metavar="W",
                   help="emit each HIT W times, each copy in its own random order that keeps every "
                        "composition and spacing rule (one copy per worker: thesis ch. 4's per-worker "
                        "order against sequence effects; default: one order per HIT)")
    b.add_argument("--docs", metavar="FILE",
                   help="document-level DA: the document id of each reference line (a document's lines "
                        "contiguous); HITs of about 100 items, each (system, document) its segments in order "
                        "then the whole document, one BAD_REF and one REPEAT document per HIT; written as "
                        "JSON Lines for human serve (mtscore.analysis.crowd.doc_hits)")
    b.add_argument("--items", help="also write every item (rid, hit, position, system, segment, type, text) here")
    b.add_argument("--output", "-o", help="the batch input CSV (default: stdout)")
    s = hsub.add_parser("simulate-batches", help="simulated raters' answers to a batch input CSV (a Mechanical "
                                                 "Turk batch result file) or to document HITs (an Appraise export)",
                        description="Rate every HIT of a batch input CSV by simulated good, random and "
                                    "constant workers whose systems' true quality you set; write the "
                                    "result file in the layout of real Mechanical Turk batches (for "
                                    "testing a DA pipeline end to end). Given a document HIT file "
                                    "(build-hits --docs, told by its content), the raters also rate each "
                                    "whole document (its true quality: the mean of its segments') and the "
                                    "ratings are written as Appraise's document-layout export, as "
                                    "campaign-export --format appraise writes it, for da-batches "
                                    "--input-format appraise (--batch-id and --display shuffled do not "
                                    "apply there).")
    s.add_argument("--hits", required=True, help="the batch input CSV or document HIT file (from build-hits)")
    s.add_argument("--quality", required=True, metavar="SYS=Q,...",
                   help="each system's mean true quality on the 0-100 scale")
    s.add_argument("--good", type=nonnegative_int, default=20, help="good workers (default 20)")
    s.add_argument("--random", type=nonnegative_int, default=0, help="workers answering at random (default 0)")
    s.add_argument("--constant", type=nonnegative_int, default=0, help="workers giving one score (default 0)")
    s.add_argument("--assignments", type=positive_int, default=3, help="workers per HIT (default 3)")
    s.add_argument("--seed", type=nonnegative_int, default=0, help="random seed, 0 or more (default 0)")
    s.add_argument("--batch-id", type=nonnegative_int, default=None, help="BatchId written into the file")
    s.add_argument("--display", choices=("input", "shuffled"), default="input",
                   help="items shown in HIT order (default) or in a fresh random order per assignment, as the "
                        "docqe-eacl2017 HIT template did")
    s.add_argument("--truth", help="also write the true quality of every output (system, segment, quality)")
    s.add_argument("--output", "-o", help="the batch result CSV (default: stdout)")
    c = hsub.add_parser("check-hits", help="check 100-item or document HITs against the rules they are built by",
                        description="Read the HITs of batch input CSVs or of Mechanical Turk batch result files "
                                    "(Input.* columns) and list every break of the rules: 70 SYSTEM + 10 "
                                    "BAD_REF + 10 REPEAT + 10 REF, 7 + 3 per block of 10, QC originals in the "
                                    "block 5 away. A document HIT file (build-hits --docs, told by its "
                                    "content) is checked against the document rules: each (system, document) "
                                    "its segments complete and in order closed by the whole-document item, "
                                    "one BAD_REF and one REPEAT document per HIT after their originals, no "
                                    "document twice, HIT sizes as built (mtscore.analysis.crowd.doc_checks). "
                                    "Exit status 1 when a HIT breaks a rule.")
    c.add_argument("files", nargs="+", help="batch input or batch result CSV files, or document HIT files")


def _lines(path: str) -> list[str]:
    from ...analysis.data.tables import read_text

    text = read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _systems(specs: list[str]) -> dict[str, list[str]]:
    if len(specs) < 1:
        raise AnalysisInputError("--system: give at least one NAME=PATH")
    out: dict[str, list[str]] = {}
    for spec in specs:
        name, eq, path = spec.partition("=")
        if not eq or not name or not path:
            raise AnalysisInputError(f"--system {spec!r}: expected NAME=PATH")
        if name in out:
            raise AnalysisInputError(f"--system {name}: given twice")
        out[name] = _lines(path)
    return out


def _quality(spec: str) -> dict[str, float]:
    out = {}
    for part in [p for p in spec.split(",") if p.strip()]:
        name, eq, val = part.partition("=")
        try:
            q = parse_number(val)  # plain decimals only (no 1_0, no full-width digits)
        except ValueError:
            q = float("nan")
        if not eq or not name.strip() or not 0 <= q <= 100:
            raise AnalysisInputError(f"--quality {part!r}: expected SYSTEM=Q with Q between 0 and 100")
        out[name.strip()] = q
    if not out:
        raise AnalysisInputError("--quality: give SYSTEM=Q for every system, comma-separated")
    return out


def _build_docs(args: argparse.Namespace, outputs: dict[str, list[str]], refs: list[str]) -> int:
    from ...analysis.crowd.doc_hits import build_doc_campaign, doc_hits_jsonl, document_ids

    for option in ("workers_per_hit", "items", "no_balance"):
        if getattr(args, option):
            raise AnalysisInputError(f"--{option.replace('_', '-')}: not available with --docs (document HITs)")
    docs = document_ids(_lines(args.docs), where=f"--docs {args.docs}")
    if len(docs) != len(refs):
        raise AnalysisInputError(f"--docs {args.docs}: {len(docs)} lines, the reference {len(refs)}: they must match")
    sources = _lines(args.source) if args.source else None
    if sources is not None and len(sources) != len(refs):
        raise AnalysisInputError(f"--source {args.source}: {len(sources)} lines, the reference {len(refs)}: "
                                 "they must match")
    camp = build_doc_campaign(outputs, refs, docs, sources, seed=args.seed, degrade=args.degrade)
    _emit(doc_hits_jsonl(camp, args.src, args.trg, args.item), args.output)
    sizes = camp.hit_sizes()
    span = f"{min(sizes)}" if min(sizes) == max(sizes) else f"{min(sizes)}-{max(sizes)}"
    print(f"mtscore: {counted(camp.n_hits, 'document HIT')} of {span} items from "
          f"{counted(len(outputs), 'system')} x "
          f"{len(set(docs))} documents ({len(refs)} segments)", file=sys.stderr)
    return 0


def _build(args: argparse.Namespace) -> int:
    from ...analysis.crowd.hits import batch_input_csv, build_campaign, items_tsv

    outputs = _systems(args.system)
    refs = _lines(args.reference)
    if args.docs:
        return _build_docs(args, outputs, refs)
    camp = build_campaign(outputs, refs, seed=args.seed, degrade=args.degrade, balance=not args.no_balance,
                          workers_per_hit=args.workers_per_hit)
    sources = None
    if args.source:
        if not args.texts:
            raise AnalysisInputError("--source: needs --texts (the source is shown beside the text to rate)")
        sources = _lines(args.source)
        if len(sources) != len(refs):
            raise AnalysisInputError(f"--source {args.source}: {len(sources)} lines, the reference {len(refs)}: "
                                     "they must match")
    text = batch_input_csv(camp, args.src, args.trg, args.item, texts=args.texts, sources=sources)
    if args.items:
        _write("--items", args.items, items_tsv(camp))
    _emit(text, args.output)
    print(f"mtscore: {counted(camp.n_hits, 'HIT')} of 100 items from {counted(len(outputs), 'system')} x "
          f"{len(refs)} segments",
          file=sys.stderr)
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from ...analysis.crowd.doc_hits import is_doc_hits_file, read_doc_hits
    from ...analysis.crowd.hits import read_batch_input
    from ...analysis.crowd.simulate import appraise_results_csv, batch_results_csv, rater_pool, simulate

    docs = is_doc_hits_file(args.hits)
    if docs:
        for option, given in (("--batch-id", args.batch_id is not None), ("--display shuffled",
                                                                          args.display == "shuffled")):
            if given:
                raise AnalysisInputError(f"{option}: not available with a document HIT file ({args.hits}); its "
                                         "ratings are written as an Appraise export, batchNo = the HIT, in "
                                         "document order")
    raters = rater_pool(args.good, args.random, args.constant, seed=args.seed)
    if docs:
        doc = read_doc_hits(args.hits)
        sim = simulate(doc, _quality(args.quality), raters, assignments=args.assignments, seed=args.seed)
        text = appraise_results_csv(doc, sim, doc.meta.get("src", "xx"), doc.meta.get("trg", "yy"))
    else:
        camp = read_batch_input(args.hits)
        sim = simulate(camp, _quality(args.quality), raters, assignments=args.assignments, seed=args.seed,
                       display=args.display)
        m = camp.meta
        text = batch_results_csv(camp, sim, m.get("src", ""), m.get("trg", ""), m.get("item", "ad"),
                                 batch_id=1 if args.batch_id is None else args.batch_id, seed=args.seed)
    if args.truth:
        rows = ["system\tsegment\tquality"] + [f"{s}\t{g}\t{q!r}" for (s, g), q in sorted(sim.truth.items())]
        _write("--truth", args.truth, "\n".join(rows) + "\n")
    _emit(text, args.output)
    return 0


def _check(args: argparse.Namespace) -> int:
    from ...analysis.crowd.doc_checks import check_doc_hits
    from ...analysis.crowd.doc_hits import is_doc_hits_file, read_doc_hits
    from ...analysis.crowd.hits import hit_problems, read_batch_input

    bad = 0
    for f in args.files:
        if is_doc_hits_file(f):
            doc = read_doc_hits(f, check_order=False)
            problems = check_doc_hits(doc)
            n, what = len({it.hit for it in doc.items}), "document HITs"
        else:
            camp = read_batch_input(f)
            problems = hit_problems(camp)
            n, what = camp.n_hits, "HITs"
        bad += len(problems)
        print(f"{f}: {n} {what}, " + (f"{len(problems)} problem(s)" if problems else "all follow the rules"))
        for p in problems:
            print(f"  {p}")
    return 1 if bad else 0


def run(args: argparse.Namespace) -> int:
    """Run ``args.cmd`` (one of :data:`COMMANDS`); bad input raises :class:`AnalysisInputError`."""
    for option in ("output", "items", "truth"):
        path = getattr(args, option, None)
        if path and Path(path).is_dir():
            raise AnalysisInputError(f"--{option} {path}: is a folder, expected a file name")
    if args.cmd == "check-hits":
        return _check(args)
    return _build(args) if args.cmd == "build-hits" else _simulate(args)
