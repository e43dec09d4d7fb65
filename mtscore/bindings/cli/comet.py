"""The command line's COMET (``-m comet``): the metric from the parsed ``mtscore`` arguments, the
sources from ``--source FILE``, and its result as the report needs it (:class:`COMETRunner`, the
registry entry's ``report_runner``). The engine's :class:`~mtscore.engine.comet.metric.COMET`
knows nothing of argparse; this module maps the options.

Signature (mtscore's, in the style of the others):
``nrefs:K|model:NAME|hash:<checkpoint sha256[:12]>|prec:fp32|multi:mean|version:mtscore-X``;
with ``--comet-encoder DIR|NAME`` (a tokenizer and config.json instead of those hparams.yaml's
``pretrained_model`` names: they change the scores) ``enc:<sha256[:12]>`` follows ``hash``: the
sha256 of the lines ``<file name> <file sha256>`` of the encoder's tokenizer.json (or
sentencepiece.bpe.model), special_tokens_map.json and tokenizer_config.json where present, and
config.json. Without ``--comet-encoder`` the signature has no ``enc`` field.
Scores print with at least 4 decimals (COMET's scale is 0..1-ish, not x100)."""
from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Sequence
from typing import Any

from .inputs import CLIError

#: fewest decimals a COMET score prints with (``--width`` is sacrebleu's 1 by default)
MIN_WIDTH = 4


def read_sources(args: argparse.Namespace) -> list[str]:
    """The lines of ``--source FILE`` (``--encoding``; .gz ok); a :class:`CLIError` without it."""
    path = getattr(args, "source", None)
    if not path:
        raise CLIError("-m comet: no sources; give the source segments with --source FILE "
                       "(one per line, aligned with the references)")
    from ...engine.textio import read_lines

    return list(read_lines(path, encoding=args.encoding, errors=getattr(args, "encoding_errors", "strict")))


def metric_from_args(args: argparse.Namespace, sources: Sequence[str] | None):
    """The :class:`COMET` metric of the COMET options (loads the model); errors name the option."""
    from ...engine.metrics.registry import get_spec

    if not getattr(args, "comet_model", None):
        raise CLIError("-m comet: no model; give one with --comet-model NAME|DIR (e.g. "
                       "Unbabel/wmt22-comet-da, or a folder with hparams.yaml and checkpoints/model.ckpt)")
    from ...engine.comet.metric import COMET
    from ...errors import UserError

    try:
        # score-table's --missing-refs (the mtscore command has none: a missing line is an error)
        return COMET(sources=sources, missing_refs=getattr(args, "missing_refs", None) or "error",
                     **get_spec("comet").cli_kwargs(args))
    except (UserError, OSError) as e:  # the model's files: name the option that chose them
        raise CLIError(f"--comet-model {args.comet_model}: {e}") from None


class COMETRunner:
    """``-m comet`` in ``mtscore`` / ``score-table`` (the registry's ``report_runner``): the model is
    loaded on the first system; :meth:`result` ``(hyps, refs)`` scores one system against the
    ``--source`` lines (``refs``: K streams of N)."""

    def __init__(self, args: argparse.Namespace, n_systems: int | None = None):
        self.args = args
        self.metric: Any = None
        self.sources: list[str] | None = None  # score-table's source column (else --source FILE)
        self.n_systems = n_systems
        self.systems_done = 0
        if not getattr(args, "comet_model", None):  # before any text is read
            metric_from_args(args, None)

    def result(self, hyps: Sequence[str], refs: Sequence[Sequence[str | None]]) -> dict:
        if self.metric is None:
            self.metric = metric_from_args(self.args, self.sources if self.sources is not None
                                           else read_sources(self.args))
        self.systems_done += 1
        m = self.metric
        m.progress = getattr(self.args, "progress", None)
        i, n = self.systems_done, self.n_systems
        m.progress_desc = "COMET" if n == 1 else f"COMET {i}/{n}" if n else f"COMET system {i}"
        refs_in = [list(r) for r in refs] if refs and any(len(r) for r in refs) else None
        from ...engine.metrics.base import MissingReferenceError

        try:
            stats = m.corpus_stats(list(hyps), refs_in)
        except MissingReferenceError as e:  # score-table's null references: name its option
            raise CLIError(str(e).replace("pass missing_refs='skip'", "pass --missing-refs skip")) from None
        sc = m.compute_score_from_stats(m.sum_stats(stats))
        sig = m.get_signature().format(getattr(self.args, "short", False))
        return {"name": "COMET", "score": sc.score, "signature": sig, "min_width": MIN_WIDTH,
                "segments": m.scores_from_stats(stats).tolist()}

    def use_sources(self, sources: list[str]) -> None:
        """Score the next systems against these sources (score-table: one test set's)."""
        self.sources = sources
        if self.metric is not None:
            self.metric.sources = sources

    @staticmethod
    def table_sources(args: argparse.Namespace, split) -> list[list[str]]:
        """score-table: the sources of each test set (``split(corpus)``: ``[(test set, corpus)]``,
        as the table's rows are split), from the ``--src-column`` (default ``src``); every system
        of a test set must carry the same sources, row for row. A :class:`CLIError` naming the
        option when the column is missing, and naming the system and the first row (of the
        table, 1-based, as the other row errors) whose source differs from the first system's."""
        import pyarrow as pa

        from ...engine.corpus import Corpus, load_corpus
        from ...engine.corpus_error import CorpusError

        col = getattr(args, "src_column", None) or "src"
        try:
            corpora = [load_corpus(p, hyp=col, ref_columns=[], system=args.system_column) for p in args.paths]
        except CorpusError as e:
            raise CLIError(f"-m comet: the source column {col!r} (--src-column): "
                           f"{str(e).split('; pass hyp=')[0]}") from None
        corpus = corpora[0]
        if len(corpora) > 1:
            corpus = Corpus.from_table(pa.concat_tables([c.table for c in corpora]), source=args.paths[0])
        # the row numbers, split as the sources are: where a differing source is in the table
        numbers = {"hyp": pa.array([str(i) for i in range(len(corpus))], pa.string())}
        if "system" in corpus.columns:
            numbers["system"] = corpus.table.column("system")
        rows = Corpus.from_table(pa.table(numbers), source=corpus.source)
        out = []
        for (_, part), (_, part_rows) in zip(split(corpus), split(rows)):
            by_system, row_of = part.by_system()[0], part_rows.by_system()[0]
            base, *others = by_system
            for name in others:
                j = next((j for j, (a, b) in enumerate(zip(by_system[name], by_system[base])) if a != b), None)
                if j is not None:
                    raise CLIError(
                        f"-m comet: the source column {col!r} (--src-column): {corpus.source}: system "
                        f"{name!r} has another source than system {base!r} at row {int(row_of[name][j]) + 1} "
                        f"({_clip(by_system[name][j])} != {_clip(by_system[base][j])}); every system must "
                        "be scored against the same sources")
            out.append(by_system[base])
        return out

    def paired(self, systems: dict[str, Sequence[str]], refs: Sequence[Sequence[str | None]]) -> str:
        """``--paired-bs`` / ``--paired-ar`` (the first system the baseline): the paired
        bootstrap or approximate randomisation (whole segments swapped between the two systems,
        as sacrebleu's ``_paired_ar_test``) of the mean of the systems' segment scores
        (:func:`~mtscore.engine.significance.compare_segment_scores`, sacrebleu's seeds and
        p-value rule), in sacrebleu's paired-test layout; the signature is COMET's followed by
        the test's (``test:bs|n:N|seed:S`` or ``test:ar|...``). Segments with no score (all their
        references missing under ``--missing-refs skip``) are left out for every system."""
        import numpy as np

        from ...engine.significance import compare_segment_scores
        from .significance_report import colors_enabled, format_comparison

        args = self.args
        results = {name: self.result(hyps, refs) for name, hyps in systems.items()}
        sig = next(iter(results.values()))["signature"]
        test, n = ("ar", args.paired_ar_n) if args.paired_ar else ("bs", args.paired_bs_n)
        # a segment without a score (its references all missing, --missing-refs skip) is left out
        # of the test for every system: the test compares the means of the scored segments
        segs = {k: np.asarray(r["segments"], dtype=np.float64) for k, r in results.items()}
        scored = np.logical_and.reduce([np.isfinite(v) for v in segs.values()])
        if not scored.any():
            raise CLIError(f"-m comet --paired-{test}: no segment has a COMET score (every one was skipped "
                           "for missing references, --missing-refs skip)")
        res = compare_segment_scores({k: v[scored].tolist() for k, v in segs.items()}, test=test,
                                     n=n, seed=args.seed, name="COMET")
        res.signatures["COMET"] = f"{sig}|{res.signatures['COMET']}"
        return format_comparison(res, args.format, max(args.width, MIN_WIDTH), args.short, colors_enabled(args))

    @staticmethod
    def check_ray(args: argparse.Namespace) -> None:
        """``score-table --ray``: a model is named (before any cluster starts)."""
        if not getattr(args, "comet_model", None):
            metric_from_args(args, None)  # the --comet-model error

    @staticmethod
    def ray_kwargs(args: argparse.Namespace) -> dict[str, Any]:
        """``COMET`` arguments from the COMET options, for the scoring actors (the device only
        when one other than "cpu" is named: otherwise Ray puts each actor on a GPU when the
        cluster has GPUs, and on the CPU when not); the sources come from the table's
        ``--src-column``."""
        from ...engine.metrics.registry import get_spec

        kw = dict(get_spec("comet").cli_kwargs(args))
        if kw.get("device") in (None, "cpu"):
            kw.pop("device", None)
        return kw

    @classmethod
    def from_ray(cls, args: argparse.Namespace, result: Any, test_set: str | None,
                 name: str = "comet") -> COMETRunner:
        """The report's COMET of one test set of a ``score_ray`` run (``result``: its
        ``RayScoreResult``; ``name``: the metric's name there): this formatting over the scores
        the actors computed (its :meth:`result` is given a system name, not hypotheses)."""
        return _RayRunner(args, result, test_set, name)

    def format(self, hyps: Sequence[str], refs: Sequence[Sequence[str | None]]) -> str:
        args = self.args
        res = self.result(hyps, refs)
        w = max(args.width, MIN_WIDTH)
        sc = f"{res['score']:.{w}f}"
        if args.score_only:
            return sc
        sig = res["signature"]
        ci = self._confidence(res) if getattr(args, "confidence", False) else None
        if ci is not None:
            sig = f"{sig}|{ci[2]}"
            ci_text = f"μ = {ci[0]:.{w}f} ± {ci[1]:.{w}f}"
            sc_text = f"{sc} ({ci_text})"
        else:
            sc_text = sc
        if args.format == "json":
            d: dict[str, Any] = {"name": res["name"], "score": float(sc), "signature": sig}
            if ci is not None:
                d.update(confidence_mean=float(f"{ci[0]:.{w}f}"), confidence_var=float(f"{ci[1]:.{w}f}"),
                         confidence=ci_text)
            for param in sig.split("|"):
                key, _, value = param.partition(":")
                d[key] = value
            return json.dumps(d, indent=1, ensure_ascii=False)
        return f"{res['name']}|{sig} = {sc_text}"

    def _confidence(self, res: dict) -> tuple[float, float, str]:
        """``--confidence`` (one system): ``(mean, 95% CI half-width, signature fields)`` of the
        bootstrap of the mean segment score, by
        :func:`~mtscore.engine.significance.compare_segment_scores` (sacrebleu's seeds and CI
        rule; ``--confidence-n`` resamples), the path ``--paired-bs`` takes."""
        from ...engine.significance import compare_segment_scores

        args = self.args
        cs = compare_segment_scores({"system": res["segments"]}, test="bs", n=args.confidence_n,
                                    seed=args.seed, name="COMET")
        r = cs.results["COMET"][0]
        return float(r.mean), float(r.ci), cs.signatures["COMET"]


def _clip(text: str, width: int = 60) -> str:
    """``repr`` of a source for a one-line message, cut to about ``width`` characters."""
    return repr(text if len(text) <= width else text[:width] + "...")


class _RayRunner(COMETRunner):
    """:meth:`COMETRunner.from_ray`'s runner: ``result(system, _)`` reads the actors' scores
    (the segment scores too where the run kept the statistics)."""

    def __init__(self, args: argparse.Namespace, ray_result: Any, test_set: str | None, name: str):
        super().__init__(args)
        self.ray_result = ray_result
        self.test_set = test_set
        self.name = name

    def result(self, hyps, refs) -> dict:
        r, name, ts = self.ray_result, self.name, self.test_set or ""
        m = r.metrics[name]
        sc = m.compute_score_from_stats(r.corpus_row(self.test_set, hyps, name))
        out = {"name": "COMET", "score": sc.score, "signature": r.signatures[name], "min_width": MIN_WIDTH}
        with contextlib.suppress(ValueError):  # kept only the summed statistics (no test, no CI)
            out["segments"] = m.scores_from_stats(r.group_stats(ts, hyps)[name]).tolist()
        return out

    def use_sources(self, sources: list[str]) -> None:  # the actors read the source column
        pass
