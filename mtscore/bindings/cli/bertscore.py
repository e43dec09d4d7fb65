"""The command line's BERTScore: a scorer from the parsed ``mtscore`` arguments, its result as the
report needs it (:class:`BERTScoreRunner`, the registry entry's ``report_runner``: ``mtscore`` and
``score-table`` load it by that name, naming no metric), and ``mtscore bertscore baseline`` (a
rescale baseline from a monolingual corpus). The engine's ``BERTScore`` knows nothing of argparse;
this module maps the options."""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from ...engine.bertscore import BERTScore, write_baseline
from ...engine.bertscore_baseline import compute_baseline
from .inputs import CLIError


def scorer_from_args(args: argparse.Namespace) -> BERTScore:
    """The scorer configured by the BERTScore group of ``mtscore``'s options (``bertscore_*``)
    and ``--progress`` (None when absent: a bar only on a terminal, see
    :mod:`mtscore.engine.progress`); loads the encoder."""
    return BERTScore(model=args.bertscore_model, layer=args.bertscore_layer,
                     idf=args.bertscore_idf, rescale_baseline=args.bertscore_baseline,
                     batch_tokens=args.bertscore_batch_tokens,
                     device=args.bertscore_device or "cpu", quantize=args.bertscore_int8,
                     precision=getattr(args, "bertscore_precision", None),
                     progress=getattr(args, "progress", None))


def score_system(scorer: BERTScore, hyps: Sequence[str],
                 refs: Sequence[Sequence[str | None]]) -> dict:
    """``{"name", "score" (100 * mean F), "precision", "recall", "f1" (0..1 means),
    "signature", "segments": {...}, "truncated": {...}}`` of one system (``refs``: K streams
    of N). Truncation and cache warnings are Python warnings, shown as one line by the CLI."""
    r = scorer.score(hyps, refs)
    return {"name": "BERTScore", "score": 100.0 * r.mean_f1, "precision": r.mean_precision,
            "recall": r.mean_recall, "f1": r.mean_f1, "signature": r.signature,
            "segments": {"precision": r.precision.tolist(), "recall": r.recall.tolist(),
                         "f1": r.f1.tolist()},
            "truncated": {"candidates": r.truncated_candidates, "references": r.truncated_references,
                          "max_length": r.max_length}}


def baseline_main(argv: list[str] | None = None) -> int:
    """``mtscore bertscore baseline --corpus FILE --out FILE [--model M | --lang L] [--layers 1,2]``:
    parse (usage errors exit 2), compute, write."""
    from .parser import OneLineErrorParser, nonnegative_int, positive_int
    from .runner import run_command

    ap = OneLineErrorParser(prog="mtscore bertscore baseline",
                            description="Compute a BERTScore rescale baseline (bert_score's LAYER,P,R,F "
                                        "file) from a monolingual corpus, one sentence per line, with "
                                        "bert_score's recipe: lines under 32 words, random disjoint pairs, "
                                        "mean P/R/F per layer without idf.")
    ap.add_argument("--corpus", required=True, help="one sentence per line (the first 1,000,000 are used)")
    ap.add_argument("--out", required=True, help="baseline file to write")
    ap.add_argument("--model", default=None,
                    help="model directory, .onnx file or Hugging Face name (default: bert_score's model "
                         "for --lang, else the packaged MiniLM)")
    ap.add_argument("--lang", default=None, help="language code: picks bert_score's model when --model is absent")
    ap.add_argument("--revision", default=None, help="Hub branch, tag or commit of a model given by name")
    ap.add_argument("--layers", default=None, help="comma-separated layers (default: all)")
    ap.add_argument("--pairs", type=positive_int, default=None, help="random pairs (default: all)")
    ap.add_argument("--seed", type=nonnegative_int, default=0)
    ap.add_argument("--batch-size", type=nonnegative_int, default=64,
                    help="bert_score's batch size, whose zero-padding quirk its baselines contain "
                         "(default 64, as its recipe; 0: without the quirk)")
    a = ap.parse_args(argv)
    return run_command(_baseline_run, a, "mtscore bertscore baseline")


def _baseline_run(a: argparse.Namespace) -> int:
    import numpy as np

    from ...engine.encoder.bert_score_defaults import bert_score_defaults

    try:
        layers = [int(x) for x in a.layers.split(",")] if a.layers else None
    except ValueError:
        raise ValueError(f"--layers {a.layers!r}: expected comma-separated whole numbers, e.g. 5,6") from None
    model, _ = bert_score_defaults(a.model, a.lang, None)
    try:
        with open(a.corpus, encoding="utf-8") as f:
            sents = [line.rstrip("\n") for line in f]
    except UnicodeDecodeError as e:
        raise ValueError(f"--corpus {a.corpus}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise ValueError(f"--corpus {a.corpus}: cannot read it ({e.strerror or e})") from None
    table = compute_baseline(sents, model, layers, n_pairs=a.pairs, seed=a.seed, revision=a.revision,
                             batch_size=a.batch_size or None)
    write_baseline(a.out, np.nan_to_num(table, nan=0.0))
    print(f"wrote {a.out}")
    return 0


class BERTScoreRunner:
    """BERTScore for the ``mtscore`` report: the encoder is loaded on first use and reused for
    every system; :meth:`format` gives the line (or JSON object) of one system.

    Each system's scoring draws a bar that moves with every encoder batch (on a terminal, or
    with ``--progress``), labelled ``BERTScore i/n`` (``n_systems`` given) or ``BERTScore system i``."""

    def __init__(self, args: argparse.Namespace, n_systems: int | None = None):
        self.args = args
        self.scorer: BERTScore | None = None
        self.n_systems = n_systems
        self.systems_done = 0

    def result(self, hyps: Sequence[str], refs: Sequence[Sequence[str | None]]) -> dict:
        if self.scorer is None:
            self.scorer = scorer_from_args(self.args)
        self.systems_done += 1
        i, n = self.systems_done, self.n_systems
        self.scorer.progress_desc = ("BERTScore" if n == 1 else f"BERTScore {i}/{n}" if n
                                     else f"BERTScore system {i}")
        return score_system(self.scorer, hyps, refs)

    @staticmethod
    def check_ray(args: argparse.Namespace) -> None:
        """``score-table --ray``: the options the scoring actors cannot run (idf)."""
        if args.bertscore_idf:
            raise CLIError("score-table --ray -m bertscore --idf: not supported (idf weights need every "
                           "reference first); compute them with BERTScore().idf_weights(refs) in Python "
                           "and call score_ray(..., bertscore_kwargs={'idf': weights})")

    @staticmethod
    def ray_kwargs(args: argparse.Namespace) -> dict[str, Any]:
        """``BERTScore`` arguments from the BERTScore options, for the scoring actors (the device
        only when one other than the default "cpu" is named: otherwise Ray puts each actor on a
        GPU when the cluster has GPUs, and on the CPU when not)."""
        kw: dict[str, Any] = {"model": args.bertscore_model, "layer": args.bertscore_layer,
                              "rescale_baseline": args.bertscore_baseline,
                              "batch_tokens": args.bertscore_batch_tokens, "quantize": args.bertscore_int8,
                              "precision": getattr(args, "bertscore_precision", None)}
        if args.bertscore_device not in (None, "cpu"):
            kw["device"] = args.bertscore_device
        return kw

    @classmethod
    def from_ray(cls, args: argparse.Namespace, result: Any, test_set: str | None,
                 name: str = "bertscore") -> BERTScoreRunner:
        """The report's BERTScore of one test set of a ``score_ray`` run (``result``: its
        ``RayScoreResult``; ``name``: the metric's name there): this formatting over the scores
        the actors computed (its :meth:`result` is given a system name, not hypotheses: no
        text reaches this process)."""
        return _RayRunner(args, result, test_set, name)

    def format(self, hyps: Sequence[str], refs: Sequence[Sequence[str | None]]) -> str:
        args = self.args
        res = self.result(hyps, refs)
        w = args.width
        sc = f"{res['score']:.{w}f}"
        if args.score_only:
            return sc
        sig = res["signature"]
        prf = {k: 100 * res[k] for k in ("precision", "recall", "f1")}
        if args.format == "json":
            d = {"name": res["name"], "score": float(sc), "signature": sig}
            d.update({k: float(f"{v:.{w}f}") for k, v in prf.items()})
            for param in sig.split("|"):
                key, _, value = param.partition(":")
                d[key] = value
            return json.dumps(d, indent=1, ensure_ascii=False)
        return (f"{res['name']}|{sig} = {sc} P = {prf['precision']:.{w}f} "
                f"R = {prf['recall']:.{w}f} F1 = {prf['f1']:.{w}f}")


class _RayRunner(BERTScoreRunner):
    """:meth:`BERTScoreRunner.from_ray`'s runner: ``result(system, _)`` reads the actors' scores."""

    def __init__(self, args: argparse.Namespace, ray_result: Any, test_set: str | None, name: str):
        super().__init__(args)
        self.ray_result = ray_result
        self.test_set = test_set
        self.name = name

    def result(self, hyps, refs) -> dict:
        r, name = self.ray_result, self.name
        sc = r.metrics[name].compute_score_from_stats(r.corpus_row(self.test_set, hyps, name))
        return {"name": "BERTScore", "score": sc.score, "precision": sc.precision,
                "recall": sc.recall, "f1": sc.f1, "signature": r.signatures[name]}
