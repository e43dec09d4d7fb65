"""COMET as a registry metric (``-m comet``, ``mtscore.score(..., metrics=["comet"])``): the metric
contract (:class:`~mtscore.engine.metrics.base.Metric`) over :class:`~.scorer.CometScorer`.

The contract passes hypotheses and references only, so the source segments are a constructor
argument (``sources=``, N strings in segment order): one :class:`COMET` object scores every
system of one test set (references of fewer segments than the sources are taken as the next
chunk of the corpus, in order, as the batch API's ``chunk_size`` cuts it). Statistics are ``[segment score, 1]`` per segment (float64), so the
corpus score is the mean of the segment scores (unbabel-comet's system score), and bootstrap
CIs and paired tests take the segment scores (:mod:`mtscore.engine.significance.segments`).

Several references (mtscore's choice; unbabel-comet scores one reference per segment): each
segment is scored against each of its references and ``multi_ref`` picks the ``"mean"``
(default) or the ``"max"`` of those scores. Models that read no reference (referenceless,
unified ``[mt, src]``) ignore the references with a warning, as :meth:`CometScorer.score` does.
Scores are COMET's own scale (not x100).
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

import numpy as np

from ..encoder.runtime import DEFAULT_BATCH_TOKENS
from ..metrics.base import Metric, OwnSignature, Score
from ..metrics.mean_score import sum_mean_stats
from .scorer import DEFAULT_EMBEDDING_CACHE, CometInputError, CometReferencesIgnoredWarning, CometScorer, load_comet

__all__ = ["COMET", "MULTI_REF", "COMETScore", "COMETSignature"]

#: how one segment's scores against several references become its score
MULTI_REF = ("mean", "max")


class COMETSignature(OwnSignature):
    """e.g. ``nrefs:1|model:regression-sparsemax|hash:1a2b3c4d5e6f|prec:fp32|multi:mean|version:mtscore-X``;
    with an encoder given (``encoder=``, ``--comet-encoder``) instead of the one hparams.yaml names,
    ``enc:<12 hex>`` after ``hash`` (:meth:`~.model.CometModelFiles.encoder_sha256`: its tokenizer
    files and config.json, which change the scores)."""

    def __init__(self, args: dict):
        super().__init__(args)
        self._abbr.update({"model": "m", "hash": "h", "enc": "e", "prec": "p", "multi": "mr"})
        self.info.update({"model": args["model_name"], "hash": args["model_hash"]})
        if args.get("encoder_hash"):
            self.info["enc"] = args["encoder_hash"]
        self.info.update({"prec": args["precision"], "multi": args["multi_ref"]})


class COMETScore(Score):
    """``score``: the mean segment COMET score (COMET's scale); ``count``: segments averaged."""

    def __init__(self, score: float, count: float):
        super().__init__("COMET", score)
        self.count = int(count)


class _Prepared:
    """References (K streams of N, None where absent) with the N sources."""

    def __init__(self, streams: list[list[str | None]], sources: list[str]):
        self.streams = streams
        self.sources = sources
        self.n = len(sources)
        self.num_refs = len(streams)

    def slice(self, a: int, z: int) -> _Prepared:
        return _Prepared([s[a:z] for s in self.streams], self.sources[a:z])

    def missing(self) -> np.ndarray | None:
        if not self.streams:
            return None
        miss = np.array([all(s[i] is None for s in self.streams) for i in range(self.n)], dtype=bool)
        return miss if miss.any() else None


class COMET(Metric):
    """COMET (Rei et al., 2020, 2022) on mtscore's torch-free engine.

    :param model: a COMET model folder, checkpoint, Hub name or bare Unbabel name (required
        unless ``scorer`` is given)
    :param sources: the N source segments of the test set (required: every COMET model reads them)
    :param encoder: folder or Hub name of the encoder's config.json/tokenizer.json
    :param device: cpu, cuda, cuda:N, auto; :param precision: fp32 (default), tf32, fp16
    :param multi_ref: "mean" (default) or "max" over a segment's references' scores
    :param embedding_cache: sentence embeddings kept by text across calls (several systems against
        one test set encode each source and reference once; 0: none); see :func:`load_comet`
    :param scorer: an already loaded :class:`CometScorer` (then model/encoder/device/precision/
        batch_tokens/threads/embedding_cache unused)
    """

    reads_sources = True

    _SIGNATURE_TYPE = COMETSignature

    def __init__(self, model: str | os.PathLike[str] | None = None, *, sources: Sequence[str] | None = None,
                 encoder: str | os.PathLike[str] | None = None, device: str | None = "cpu",
                 precision: str | None = "fp32", multi_ref: str = "mean", batch_tokens: int | None = None,
                 threads: int | None = None, scorer: CometScorer | None = None, missing_refs: str = "error",
                 progress: bool | None = None, embedding_cache: int = DEFAULT_EMBEDDING_CACHE):
        super().__init__(missing_refs)
        #: a bar over the encoded sequences of each scoring call: None = only on a terminal
        #: (:mod:`mtscore.engine.progress`); the CLI labels it "COMET i/n"
        self.progress = progress
        self.progress_desc = "COMET"
        if multi_ref not in MULTI_REF:
            raise CometInputError(f"multi_ref={multi_ref!r}: expected one of {', '.join(MULTI_REF)} "
                                  "(--comet-multi-ref)")
        if scorer is None:
            if model is None:
                raise CometInputError("COMET: no model; give one (--comet-model NAME|DIR, or model=)")
            scorer = load_comet(model, encoder=encoder, device=device or "cpu", precision=precision or "fp32",
                                threads=threads, batch_tokens=batch_tokens or DEFAULT_BATCH_TOKENS,
                                embedding_cache=embedding_cache)
        self.scorer = scorer
        self.multi_ref = multi_ref
        self.sources = None if sources is None else self._coerce_sources(sources)
        self.model_name = scorer.name
        self.model_hash = scorer.checkpoint_sha256[:12]
        #: the encoder files' hash when an encoder was given explicitly (else None: not in the signature)
        self.encoder_hash = scorer.files.encoder_sha256()[:12] if scorer.files.encoder_given else None
        self.precision = scorer.precision

    def run_facts(self) -> dict[str, str]:
        """The signature fields that depend on where this object runs: ``prec``, the precision its
        session runs in (tf32 only on CUDA). Ray's actors report them to the driver, whose copy
        of the model runs on the CPU (``mtscore.bindings.ray``)."""
        return {"prec": self.precision}

    def take_run_facts(self, facts) -> None:
        """Sign statistics computed elsewhere: ``facts`` is :meth:`run_facts` of the objects that
        computed them (``{"prec": "tf32"}``; "fp32+tf32" when they differed)."""
        if "prec" in facts:
            self.precision = str(facts["prec"])

    def _coerce_sources(self, sources) -> list[str]:
        if isinstance(sources, (str, bytes)):
            raise CometInputError("sources: expected a sequence of strings (--source FILE), got one string")
        out: list[str] = list(sources)
        for i, s in enumerate(out):
            if not isinstance(s, str):
                raise CometInputError(f"sources[{i}]: expected a str, got {type(s).__name__}")
        return out

    # ---- the contract -----------------------------------------------------------------
    def prepare(self, refs, rows=None, *, offset: int | None = None) -> _Prepared:
        """The references and their sources. ``offset``: where these references start in the
        corpus when the batch API prepares a long corpus chunk by chunk (it passes each chunk's
        first segment); without it the references must cover every source segment."""
        if self.sources is None:
            raise CometInputError(f"sources: missing; COMET ({self.model_name}) needs the source segments "
                                  "(--source FILE, or sources=)")
        total = len(self.sources)
        streams = [] if refs is None else self._coerce_refs(refs)
        n = len(streams[0]) if streams else total
        if offset is None:
            if n != total:
                raise CometInputError(f"COMET: {n} reference segments but {total} source segments (--source "
                                      "FILE / sources=); they must have the same number of lines")
            return _Prepared(streams, self.sources)
        if offset < 0 or offset + n > total:
            raise CometInputError(f"COMET: references of segments {offset}..{offset + n - 1} but only {total} "
                                  "sources; the sources and references must have the same number of lines")
        return _Prepared(streams, self.sources[offset:offset + n])

    def corpus_stats(self, hyps, refs=None):
        if refs is None and self._ref_cache is None:  # no references: fine for a referenceless model
            hyps = self._coerce_hyps(hyps)
            return self.stats(hyps, self.prepare(None))
        return super().corpus_stats(hyps, refs)

    def stats(self, hyps, prepared: _Prepared) -> np.ndarray:
        """``(N, 2)`` float64 ``[segment score, 1]`` (``[0, 0]`` for a segment skipped for want of a
        reference, ``missing_refs="skip"``)."""
        hyps = self._coerce_hyps(hyps)
        if len(hyps) != prepared.n:
            raise CometInputError(f"COMET: {len(hyps)} hypotheses but {prepared.n} source segments; "
                                  "the hypothesis and source files must have the same number of lines")
        self.num_refs = prepared.num_refs
        from ..progress import progress_bar

        with progress_bar(None, self.progress_desc, self.progress, unit="seq") as bar:
            return self._stats(hyps, prepared, bar.update)

    def _stats(self, hyps: list[str], prepared: _Prepared, tick) -> np.ndarray:
        out = np.zeros((len(hyps), 2), dtype=np.float64)
        if not self.scorer.uses_references:
            if any(any(r is not None for r in s) for s in prepared.streams):
                warnings.warn(CometReferencesIgnoredWarning(
                    f"references: ignored; {self.model_name} ({self.scorer.class_identifier}) scores from "
                    "sources and hypotheses only, as unbabel-comet does"), stacklevel=3)
            out[:, 0] = self.scorer.score(hyps, sources=prepared.sources, progress=tick)
            out[:, 1] = 1.0
            return out
        if not prepared.streams:
            raise CometInputError(f"references: missing; {self.model_name} (regression_metric) needs a "
                                  "reference per segment")
        skip = self._skipped(prepared)
        keep = np.ones(len(hyps), dtype=bool) if skip is None else ~skip
        out[keep, 0] = self.segment_scores([h for h, k in zip(hyps, keep) if k],
                                           [s for s, k in zip(prepared.sources, keep) if k],
                                           [[r for r, k in zip(st, keep) if k] for st in prepared.streams], tick)
        out[keep, 1] = 1.0
        return out

    def segment_scores(self, hyps: list[str], sources: list[str], streams: list[list[str | None]],
                       progress=None) -> np.ndarray:
        """float64 ``[N]``: each segment's score against each of its references (None: that
        reference absent), combined by ``multi_ref`` (mean or max)."""
        n = len(hyps)
        if n and all(r is not None for st in streams for r in st):   # every text encoded once
            cols = self.scorer.score_references(hyps, sources, [[str(r) for r in st] for st in streams],
                                                progress=progress)
            return cols.max(axis=0) if self.multi_ref == "max" else cols.mean(axis=0)
        cols = np.full((len(streams), n), np.nan)
        for k, st in enumerate(streams):
            have = [i for i in range(n) if st[i] is not None]
            if have:
                cols[k, have] = self.scorer.score([hyps[i] for i in have], sources=[sources[i] for i in have],
                                                  references=[str(st[i]) for i in have], progress=progress)
        if n == 0:
            return np.empty(0)
        return np.nanmax(cols, axis=0) if self.multi_ref == "max" else np.nanmean(cols, axis=0)

    def compute_score_from_stats(self, stats) -> COMETScore:
        total, count = float(stats[0]), float(stats[1])
        return COMETScore(total / count if count > 0 else 0.0, count)

    def sum_stats(self, stats) -> list:
        return sum_mean_stats(stats)

    def stats_columns(self) -> int:
        return 2

    def stats_layout(self) -> str:
        return "segment COMET score, count"

    def _scores_of_checked(self, stats: np.ndarray) -> np.ndarray:
        stats = stats.astype(np.float64, copy=False)
        return np.divide(stats[:, 0], stats[:, 1], out=np.full(len(stats), np.nan), where=stats[:, 1] > 0)

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> COMETScore:
        raise CometInputError("COMET.sentence_score: a segment needs its source; use "
                              "COMET(..., sources=[src]).corpus_score([hyp], [[ref]]) or CometScorer.score")
