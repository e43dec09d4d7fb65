"""``mtscore mbr`` and ``mtscore nbest``: the decoder API (:mod:`mtscore.bindings.decoder`) on
files.

    mtscore mbr samples.jsonl -m chrf                 # one selected sample per group
    mtscore mbr groups.txt --log-probs -m bleu -O effective_order=true --format jsonl
    mtscore mbr samples.jsonl -m comet --comet-model Unbabel/wmt22-comet-da --source src.en
    mtscore nbest nbest.txt -r ref.de -m bleu -O effective_order=true            # oracle
    mtscore nbest nbest.txt -r ref.de --mode rerank -o reranked.nbest

Errors follow the CLI's contract: one line ``mtscore mbr: error: FILE:LINE: ...``, exit 1, and
no output file written half-way (written to a temp file and renamed).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Optional

from .inputs import CLIError
from .report import emit

#: the -O options `mtscore mbr -m comet` passes to load_comet (its keyword arguments)
COMET_LOAD_OPTIONS = ("precision", "batch_tokens", "cache_dir", "revision")


def _metric_names() -> list[str]:
    """The names ``-m`` offers: the registry's metrics with ``decoder`` set."""
    from ...engine.metrics.registry import specs

    return [s.name for s in specs() if s.decoder]


def _common(p: argparse.ArgumentParser, default_metric: str, extra_metrics: tuple[str, ...] = ()) -> None:
    from .parser import int_at_least

    names = _metric_names()
    names += [m for m in extra_metrics if m not in names]
    p.add_argument("-m", "--metric", default=default_metric, type=str.lower, choices=names,
                   help=f"metric (default {default_metric})")
    p.add_argument("-O", "--metric-option", action="append", default=[], metavar="KEY=VALUE",
                   help="metric constructor option, e.g. effective_order=true, tokenize=intl, "
                        "word_order=2 (VALUE is JSON, else a string); repeatable")
    p.add_argument("--workers", type=int_at_least(0), default=1,
                   help="threads (0: all cores; default 1)")
    p.add_argument("--format", "-f", choices=["text", "jsonl"], default="text",
                   help="text: one line per group/source; jsonl: indices and scores too")
    p.add_argument("--output", "-o", default=None, help="output file (default stdout; written atomically)")
    p.add_argument("--encoding", "-e", default="utf-8", help="input encoding (default utf-8)")


def _options(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in pairs:
        key, sep, value = kv.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"-O {kv!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def _metric(args):
    from ..decoder import resolve_metric

    try:
        return resolve_metric(args.metric, _options(args.metric_option), args.workers)
    except TypeError as e:  # an unknown constructor argument (make_metric names it)
        raise CLIError(f"-O: {e}") from None


def _read_lines(path: str, encoding: str) -> list[str]:
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for no, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode(encoding).rstrip("\r"))
        except UnicodeDecodeError as e:
            raise CLIError(f"{path}:{no}: invalid {encoding}: {e.reason}") from None
    return out


# ---- mbr --------------------------------------------------------------------------------------
Group = tuple[list[str], Optional[list[float]], int]  # samples, log-probs, first line


def _jsonl_groups(path: str, lines: list[str]) -> list[Group]:
    groups: list[Group] = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise CLIError(f"{path}:{no}: invalid JSON: {e.msg}") from None
        lp = None
        if isinstance(obj, dict):
            if "samples" not in obj:
                raise CLIError(f"{path}:{no}: a JSON object needs a \"samples\" list")
            samples, lp = obj["samples"], obj.get("log_probs")
        else:
            samples = obj
        if not isinstance(samples, list) or not all(isinstance(s, str) for s in samples):
            raise CLIError(f"{path}:{no}: samples must be a list of strings")
        if not samples:
            raise CLIError(f"{path}:{no}: empty group (no samples)")
        if lp is not None:
            if (not isinstance(lp, list) or len(lp) != len(samples)
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in lp)):
                raise CLIError(f"{path}:{no}: log_probs must be {len(samples)} numbers, one per sample")
            lp = [float(x) for x in lp]
        groups.append((samples, lp, no))
    return groups


def _block_groups(path: str, lines: list[str], with_log_probs: bool) -> list[Group]:
    groups: list[Group] = []
    cur: list[str] = []
    lps: list[float] = []
    start = 0
    for no, line in enumerate([*lines, ""], 1):
        if line.strip():
            if not cur:
                start = no
            if with_log_probs:
                text, tab, lp = line.rpartition("\t")
                try:
                    if not tab:
                        raise ValueError
                    lps.append(float(lp))
                except ValueError:
                    raise CLIError(f"{path}:{no}: --log-probs: expected 'sample<TAB>log-probability', "
                                   f"got {line[:60]!r}") from None
                cur.append(text)
            else:
                cur.append(line)
        elif cur:
            groups.append((cur, lps if with_log_probs else None, start))
            cur, lps = [], []
    return groups


def mbr_main(argv: list[str]) -> int:
    """``mtscore mbr ARGS``: parse (usage errors exit 2), select, write."""
    from .parser import OneLineErrorParser
    from .runner import run_command

    p = OneLineErrorParser(
        prog="mtscore mbr", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Minimum-Bayes-risk selection: per group of samples, the one with the highest "
                    "expected metric score against all samples of the group (lowest for TER).",
        epilog="input formats:\n"
               "  JSONL: one group per line, a JSON list of samples or {\"samples\": [...], "
               "\"log_probs\": [...]}\n"
               "  text:  one sample per line, groups separated by blank lines; with --log-probs "
               "each line is 'sample<TAB>log-probability'")
    p.add_argument("input", help="samples file (.jsonl: JSON lines; anything else: blank-line-separated groups)")
    p.add_argument("--input-format", choices=["auto", "jsonl", "text"], default="auto",
                   help="how INPUT is read (see 'input formats' below): jsonl, text, or auto "
                        "(default: jsonl for a .jsonl/.json file name, text otherwise)")
    p.add_argument("--log-probs", action="store_true",
                   help="text input: each line ends in a TAB and the sample's log-probability")
    p.add_argument("--utility", choices=["pairwise", "aggregate"], default="pairwise",
                   help="pairwise: expected metric over all sample pairs (O(n^2), default); "
                        "aggregate: the metric against the averaged n-gram statistics of the "
                        "samples (O(n); chrF/chrF++, BLEU, and COMET against the mean embedding; "
                        "a different utility)")
    _common(p, "chrf", ("comet",))
    c = p.add_argument_group("COMET (-m comet)")
    c.add_argument("--comet-model", default=None, metavar="NAME|DIR",
                   help="COMET model folder or Hub name (a regression_metric model, e.g. "
                        "Unbabel/wmt22-comet-da); -O KEY=VALUE are load options (precision, batch_tokens, "
                        "cache_dir, revision)")
    c.add_argument("--comet-encoder", default=None, metavar="NAME|DIR",
                   help="the encoder's config.json and tokenizer.json, instead of hparams.yaml's pretrained_model")
    c.add_argument("--source", default=None, metavar="FILE",
                   help="the source segments, line g = the source of group g (required with -m comet)")
    c.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, auto")
    return run_command(_run_mbr, p.parse_args(argv), "mtscore mbr")


def _comet(args, n_groups: int):
    """(scorer, sources) for ``-m comet``, checked before any group is scored."""
    from ...engine.comet.mbr import check_mbr_model
    from ...engine.comet.scorer import load_comet

    if args.comet_model is None:
        raise CLIError("-m comet: --comet-model NAME|DIR is required")
    if args.source is None:
        raise CLIError("-m comet: --source FILE is required (line g: the source of group g)")
    sources = _read_lines(args.source, args.encoding)
    if len(sources) != n_groups:
        raise CLIError(f"--source {args.source}: {len(sources)} lines, but {args.input} has {n_groups} groups "
                       "(one source line per group)")
    options = _options(args.metric_option)
    unknown = sorted(set(options) - set(COMET_LOAD_OPTIONS))
    if unknown:   # checked here: a TypeError from inside load_comet is not the user's option
        raise CLIError(f"-O {unknown[0]}: not a COMET load option (one of {', '.join(COMET_LOAD_OPTIONS)})")
    from ...errors import UserError

    try:
        scorer = load_comet(args.comet_model, encoder=args.comet_encoder, device=args.device,
                            threads=None if args.workers == 0 else args.workers, **options)
    except (UserError, OSError) as e:  # the model's files: name the option that chose them, as -m comet
        raise CLIError(f"--comet-model {args.comet_model}: {e}") from None
    check_mbr_model(scorer)  # a CometMBRError (a UserError): one line naming the model class
    return scorer, sources


def _run_mbr(args) -> int:
    from ..decoder import mbr

    lines = _read_lines(args.input, args.encoding)
    fmt = args.input_format
    if fmt == "auto":
        fmt = "jsonl" if args.input.endswith((".jsonl", ".json")) else "text"
    groups = (_jsonl_groups(args.input, lines) if fmt == "jsonl"
              else _block_groups(args.input, lines, args.log_probs))
    if not groups:
        raise CLIError(f"{args.input}: no groups of samples")
    sources: list[str] | None = None
    if args.metric == "comet":
        metric, sources = _comet(args, len(groups))
    else:
        for opt in ("comet_model", "comet_encoder", "source"):
            if getattr(args, opt) is not None:
                raise CLIError(f"--{opt.replace('_', '-')}: only read with -m comet, not -m {args.metric}")
        metric = _metric(args)
    out = []
    for g, (samples, lp, line) in enumerate(groups):
        try:
            res = mbr(samples, metric=metric, log_probs=lp, workers=args.workers,
                      utility=args.utility, source=None if sources is None else sources[g])
        except ValueError as e:
            raise CLIError(f"{args.input}:{line}: group {g}: {e}") from None
        if args.format == "jsonl":
            out.append(json.dumps({"group": g, "index": res.index, "sample": res.sample,
                                   "expected_utility": res.expected_utility.tolist()},
                                  ensure_ascii=False))
        else:
            out.append(res.sample)
    emit("".join(x + "\n" for x in out), args)
    return 0


# ---- nbest ------------------------------------------------------------------------------------
def nbest_main(argv: list[str]) -> int:
    """``mtscore nbest ARGS``: parse (usage errors exit 2), select or rerank, write."""
    from .parser import OneLineErrorParser
    from .runner import run_command

    p = OneLineErrorParser(
        prog="mtscore nbest", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Oracle selection / metric reranking of a Moses n-best list "
                    "('id ||| hypothesis ||| features ||| score') against reference files.")
    p.add_argument("nbest", help="Moses n-best file (.gz ok)")
    p.add_argument("--refs", "-r", nargs="+", required=True,
                   help="reference file(s), line s = the reference of sentence id s")
    p.add_argument("--mode", choices=["oracle", "rerank"], default="oracle",
                   help="oracle: the best hypothesis per sentence; rerank: the n-best list sorted "
                        "by the metric, its score appended to the features")
    _common(p, "bleu")
    return run_command(_run_nbest, p.parse_args(argv), "mtscore nbest")


def _run_nbest(args) -> int:
    from ..decoder import NBestFormatError, nbest_oracle, read_moses_nbest

    try:
        lists = read_moses_nbest(args.nbest, args.encoding)
    except NBestFormatError as e:
        raise CLIError(str(e)) from None
    n = len(lists)
    for s, entries in enumerate(lists):
        if not entries:
            raise CLIError(f"{args.nbest}: sentence id {s} has no hypotheses (ids must run 0..{n - 1})")
    streams = [_read_lines(r, args.encoding) for r in args.refs]
    for r, st in zip(args.refs, streams):
        if len(st) < n:
            raise CLIError(f"{r}: {len(st)} lines, but {args.nbest} has sentence id {n - 1}")
    refs = [[st[s] for st in streams] for s in range(n)]
    metric = _metric(args)
    res = nbest_oracle([[e.hypothesis for e in x] for x in lists], refs, metric=metric,
                       workers=args.workers)
    name = args.metric.upper().replace("++", "PP")
    out = []
    for s, entries in enumerate(lists):
        if args.mode == "oracle":
            i = int(res.index[s])
            if args.format == "jsonl":
                out.append(json.dumps({"id": s, "index": i, "hypothesis": entries[i].hypothesis,
                                       "score": float(res.score[s]),
                                       "scores": res.scores[s].tolist()}, ensure_ascii=False))
            else:
                out.append(entries[i].hypothesis)
            continue
        for i in res.ranking[s].tolist():
            ent = entries[i]
            sc = float(res.scores[s][i])
            if args.format == "jsonl":
                out.append(json.dumps({"id": s, "index": i, "hypothesis": ent.hypothesis,
                                       "features": ent.features, "score": ent.score,
                                       "metric_score": sc}, ensure_ascii=False))
            else:
                feats = f"{ent.features} {name}= {sc!r}".strip()
                out.append(f"{s} ||| {ent.hypothesis} ||| {feats} ||| {ent.score!r}")
    emit("".join(x + "\n" for x in out), args)
    return 0
