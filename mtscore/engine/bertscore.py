"""BERTScore on ONNX Runtime, numerically equal to the ``bert_score`` package (0.3.13).

Rules reproduced from bert_score (see shared/reference/bertscore-onnx.md):

* sentences are ``strip()``-ed, tokenised with their special tokens and truncated to
  ``model_max_length`` (512 for the packaged MiniLM) keeping them; ``""`` is ``[CLS][SEP]``.
  bert_score cuts silently; mtscore cuts the same way (parity) but says so: one
  :class:`BERTScoreTruncationWarning` per scoring call with the number of cut candidates and
  references, also kept on the result (``truncated_candidates``, ``truncated_references``);
* the embedding is ``hidden_states[layer]``; every token (specials included) is L2-normalised
  and takes part in the greedy max, but specials weigh 0 in the averages;
* idf (optional) is computed over the references: ``log((M+1)/(df+1))`` with df over sets of token
  ids, unseen ids ``log(M+1)``; candidates use the references' idf;
* an empty candidate or reference gives P = R = 0, F = 0 (NaN -> 0);
* several references: P, R and F each take their own maximum over the references;
* baseline rescaling after that, per metric: ``(x - b) / (1 - b)`` with the baseline file's row
  ``layer`` (bert_score's CSV format ``LAYER,P,R,F``).

Outputs are float64 arrays in [0, 1] (bert_score's scale); the ``Score`` objects used by the
CLI / significance machinery report ``100 * mean F``.
"""
from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import numpy as np

from .bertscore_files import packaged_baseline, read_baseline, write_baseline
from .bertscore_pairs import ChunkPlan, best_over_refs, plan_chunk, quirk_flags
from .bertscore_result import BERTScoreResult, BERTScoreSignature, BERTScoreTruncationWarning, warn_truncated
from .encoder.host_matching import match_host
from .encoder.windows import DEFAULT_OVERLAP, embed_windowed, window_starts
from .metrics.base import Metric, Score, count_refs, present_mask
from .progress import NullBar, progress_bar

__all__ = ["BERTScore", "BERTScoreResult", "BERTScoreSignature", "BERTScoreTruncationWarning", "read_baseline",
           "write_baseline"]

#: largest |difference| of any P, R or F between two scorings of the same pairs that differ only in
#: batch size (``batch_size``, ``batch_tokens``), order, or the other segments of the call; it is
#: room for float noise from ONNX Runtime's kernels on differently padded batches. Measured on CPU in
#: fp32 (tests/engine/test_bertscore_invariance.py, bench/results/bertscore_invariance.md): 0, the
#: scores are bit-identical. On CUDA (H100, bench/bertscore_gpu_checks.py): 3.0e-7 in fp32 over
#: batch_tokens 512..65,536; fp16 is not covered (2.0e-4). The greedy matching itself is per pair.
INVARIANCE_TOL = 1e-6

#: segments per chunk when streaming; bounds the embedding memory (chunk x (1 + K) sentences).
DEFAULT_CHUNK = 4096

log = logging.getLogger(__name__)


class _Prepared:
    """References prepared once: streams, and idf weights when idf is computed over them."""

    def __init__(self, streams: list[list[str | None]], idf_table: np.ndarray | None):
        self.streams = streams
        self.idf_table = idf_table
        self.n = len(streams[0]) if streams else 0
        present = present_mask(streams)
        self.num_refs = count_refs(present)
        self._missing = np.asarray(~present.any(axis=0), dtype=bool)

    def slice(self, a: int, z: int) -> _Prepared:
        """Segments ``a:z`` (the idf weights stay those of the whole reference set)."""
        return _Prepared([st[a:z] for st in self.streams], self.idf_table)

    def missing(self) -> np.ndarray | None:
        """bool (n,): segments without any reference, or None."""
        return self._missing if self._missing.any() else None


class PRFScore(Score):
    """BERTScore's ``Score``: ``score`` = 100 x mean F1, plus the 0..1 means ``precision``,
    ``recall`` and ``f1``."""

    precision: float
    recall: float
    f1: float


class BERTScore(Metric):
    """BERTScore with an ONNX Runtime encoder.

    Args:
        model: None (the packaged all-MiniLM-L6-v2, or bert_score's model for ``lang``), a Hugging
            Face model directory or name (``roberta-large``, ``ORG/NAME``: the HF cache, else a
            download; see :mod:`mtscore.engine.encoder.hub`) or an ``.onnx`` file. Exported to
            ONNX on first use and cached per model revision.
        lang: a language code: picks bert_score's default model when ``model`` is None, and
            bert_score's shipped baseline file for ``rescale_baseline=True``.
        layer: hidden layer whose states are matched (bert_score's ``num_layers``; default:
            bert_score's tuned layer for a model in its table, else the last layer).
        revision: Hub branch, tag or commit of a model given by name.
        idf: False; True (idf over the references of each call, or over ``idf_sents``);
            a ``{token_id: weight}`` dict (a ``defaultdict`` supplies unseen ids) or a float array
            ``[vocab]`` of weights.
        idf_sents: sentences to compute idf over instead of the references.
        rescale_baseline: path of a bert_score baseline file, a ``(P, R, F)`` triple, or True
            (bert_score's shipped file for ``lang`` and the model name; needs bert-score installed).
        long_inputs: "truncate" (default, as bert_score: cut at the model's maximum length, with one
            :class:`BERTScoreTruncationWarning` per call giving the counts) or "window" (encode
            overlapping windows and stitch the token embeddings: long segments scored whole; see
            :mod:`mtscore.engine.encoder.windows`). window_overlap: tokens shared by windows.
        batch_tokens: padded tokens per ONNX call. batch_size: most sentences per ONNX call (set on
            the encoder, so scorers sharing an ``encoder`` share it). Neither changes a score beyond
            float noise (see ``INVARIANCE_TOL``).
        device: cpu / cuda / auto. threads: intra-op threads (default: all cores).
        precision: "fp32" (default, every device: IEEE float32, bert_score's numbers within 1e-6),
            "tf32" (TF32 MatMul on CUDA, fast and approximate; plain fp32 on the CPU) or "fp16"
            (the float16 export, fast and approximate); the signature names tf32 / fp16 (``prec``).
        quantize: int8 (approximate, explicit opt-in).
        chunk_size: segments per streamed chunk. progress: a bar over the segments of each call that
            moves with every encoder batch: True forces it, False hides it, None (default) shows it
            when stderr is a terminal and CI is not set (:mod:`mtscore.engine.progress`).
        pad_quirk_batch: reproduce bert_score's zero-padding quirk for its ``batch_size``
            (single reference only; off by default, it never triggers on normal data).
        encoder: an already loaded :class:`~mtscore.engine.encoder.Encoder` to share.
        matching: where the greedy matching runs: None (default: on the encoder's device, so on
            CUDA the token states never leave the GPU and only P, R, F come back; on the host for
            the CPU, for ``long_inputs="window"`` and for ``reuse_embeddings``), "host" or
            "device" (the device pipeline also on the CPU; for tests).
        reuse_embeddings: remember sentence embeddings across calls (bounded, ~500k tokens), so a
            reference set scored against many systems is encoded once.
    """

    def __init__(self, model: str | None = None, layer: int | None = None, idf=False,
                 idf_sents: Sequence[str] | None = None,
                 rescale_baseline: bool | str | Path | Sequence[float] | None = None,
                 batch_tokens: int | None = None, device: str = "cpu", threads: int | None = None,
                 fused: bool = False, quantize: bool = False, precision: str | None = None,
                 chunk_size: int = DEFAULT_CHUNK, progress: bool | None = None,
                 cache_dir: str | None = None, pad_quirk_batch: int | None = None,
                 encoder=None, reuse_embeddings: bool = False, lang: str | None = None,
                 revision: str | None = None, long_inputs: str = "truncate",
                 window_overlap: int = DEFAULT_OVERLAP, batch_size: int | None = None,
                 matching: str | None = None):
        super().__init__()
        from .encoder import load_encoder
        from .encoder.bert_score_defaults import bert_score_defaults

        self.model_name, layer = bert_score_defaults(model, lang, layer)
        self.lang = lang
        if encoder is None:
            encoder = load_encoder(self.model_name, layer, device=device, threads=threads,
                                   batch_tokens=batch_tokens,
                                   fused=fused, quantize=quantize, precision=precision, cache_dir=cache_dir,
                                   revision=revision)
        self.encoder = encoder
        if batch_size is not None:
            if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
                raise ValueError(f"batch_size={batch_size!r}: must be a positive number of sentences")
            encoder.max_rows = int(batch_size)
        if reuse_embeddings and encoder.memo is None:
            encoder.enable_memo()
        self.tokenizer = self.encoder.tokenizer
        self.layer = self.encoder.layer
        if long_inputs not in ("truncate", "window"):
            raise ValueError(f"long_inputs={long_inputs!r}: expected 'truncate' (bert_score's behaviour) "
                             "or 'window' (score long segments whole with a sliding window)")
        self.long_inputs = long_inputs
        self.window_overlap = int(window_overlap)
        if long_inputs == "window":
            head, tail = self.tokenizer.special_frame()
            window_starts(1, self.tokenizer.max_length - head - tail, self.window_overlap)  # checks it
        self._pipeline = self._device_pipeline(matching)
        self.chunk_size = max(1, int(chunk_size))
        self.progress = progress
        #: the progress bar's label (the CLI adds the system: "BERTScore 3/19")
        self.progress_desc = "BERTScore"
        self.pad_quirk_batch = pad_quirk_batch
        self._special = self.tokenizer.special_weights()
        self._fixed_idf: np.ndarray | None = None
        self.idf_mode = "no"
        if isinstance(idf, dict):
            self._fixed_idf = self._idf_from_dict(idf)
            self.idf_mode = "given"
        elif isinstance(idf, np.ndarray):
            self._fixed_idf = np.asarray(idf, dtype=np.float64)
            self.idf_mode = "given"
        elif idf:
            self.idf_mode = "refs"
            if idf_sents is not None:
                self._fixed_idf = self.idf_weights(idf_sents)
                self.idf_mode = "sents"
        self.baseline, self.rescale = self._baseline(rescale_baseline)

    def _device_pipeline(self, matching: str | None):
        """The encoder's :class:`~mtscore.engine.encoder.device_pipeline.DevicePipeline` when the
        matching runs on the encoder's device, else None (see ``matching``)."""
        if matching not in (None, "host", "device"):
            raise ValueError(f"matching={matching!r}: expected 'host', 'device' or None (device on CUDA)")
        device = str(getattr(self.encoder, "device", "cpu"))
        use = matching == "device" or (matching is None and device.startswith("cuda"))
        if use and (self.long_inputs == "window" or getattr(self.encoder, "memo", None) is not None):
            if matching == "device":
                raise ValueError("matching='device' keeps the states on the device: it cannot be combined "
                                 "with long_inputs='window' or reuse_embeddings=True")
            use = False
        if not use:
            return None
        from .encoder.device_pipeline import DevicePipeline

        return DevicePipeline(self.encoder)

    def _baseline(self, rescale_baseline) -> tuple[np.ndarray | None, str]:
        """(float64 [3] P, R, F baseline or None, its description for the signature)."""
        if rescale_baseline is None or rescale_baseline is False:
            return None, "no"
        if rescale_baseline is True:
            if self.lang is None or self.model_name is None:
                raise ValueError("rescale_baseline=True uses bert_score's file for a language and model "
                                 "name: pass lang= and model= (or lang alone), or a baseline file path")
            path = packaged_baseline(self.lang, self.model_name)
            return read_baseline(path, self.layer), "bert_score:" + self.lang.lower()
        if isinstance(rescale_baseline, (str, Path)):
            return read_baseline(rescale_baseline, self.layer), "file:" + Path(rescale_baseline).name
        b = np.asarray(rescale_baseline, dtype=np.float32).astype(np.float64)
        if b.shape != (3,):
            raise ValueError("rescale_baseline must be a file path, True or a (P, R, F) triple")
        return b, "given"

    # ---- idf ------------------------------------------------------------------------------
    def _idf_from_dict(self, d: dict) -> np.ndarray:
        default = None
        factory = getattr(d, "default_factory", None)  # a defaultdict's default idf
        if factory is not None:
            default = float(factory())
        n = max(self.tokenizer.vocab_size, (max(d) + 1) if d else 0)
        table = np.full(n, np.nan if default is None else default, dtype=np.float64)
        for k, v in d.items():
            table[int(k)] = float(v)
        return table

    def idf_weights(self, refs: Sequence[str | None]) -> np.ndarray:
        """float64 ``[vocab]`` idf over ``refs`` exactly like bert_score's ``get_idf_dict``:
        M = number of references, df over sets of token ids (specials included)."""
        present = [r for r in refs if r is not None]
        M = len(present)
        df = np.zeros(self.tokenizer.vocab_size, dtype=np.int64)
        for start in range(0, M, 8192):
            for ids in self._encode(present[start:start + 8192])[0]:
                df[np.unique(ids)] += 1
        # bert_score stores Python floats and pads them into a float32 tensor
        return np.log((M + 1) / (df + 1.0)).astype(np.float32).astype(np.float64)

    def _encode(self, texts: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray]:
        """(token ids, bool [n] cut): truncated as bert_score does, or whole for the window."""
        if self.long_inputs == "window":
            ids = self.tokenizer.encode_full(texts)
            return ids, np.zeros(len(ids), dtype=bool)
        return self.tokenizer.encode_flagged(texts)

    def _embed(self, ids: list[np.ndarray], progress: Callable[[int, int], None] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        if self.long_inputs == "window":
            head, tail = self.tokenizer.special_frame()
            return embed_windowed(self.encoder, ids, head, tail, self.tokenizer.max_length, self.window_overlap,
                                  progress=progress)
        if progress is None:  # an ``encoder=`` object need not take ``progress``
            return self.encoder.embed(ids, normalize=True)
        return self.encoder.embed(ids, normalize=True, progress=progress)

    # ---- Metric interface -----------------------------------------------------------------
    def prepare(self, refs, rows=None) -> _Prepared:
        streams = self._streams(refs, None)
        table = None
        if self.idf_mode == "refs":
            table = self.idf_weights([r for s in streams for r in s])
        return _Prepared(streams, table)

    def _streams(self, refs, n: int | None) -> list[list[str | None]]:
        if isinstance(refs, _Prepared):
            return refs.streams
        if not isinstance(refs, str) and hasattr(refs, "__len__") and len(refs) and \
                all(isinstance(r, str) for r in refs):
            refs = [refs]  # a flat list is a single reference stream (bert_score's single-ref form)
        return self._coerce_refs(refs, n)

    def stats(self, hyps, prepared: _Prepared) -> np.ndarray:
        """``(N, 4)`` float64 ``[P, R, F, 1]`` per segment (the corpus score is the mean F);
        segments without a reference follow ``missing_refs`` (skipped: an all-zero row)."""
        hyps = self._coerce_hyps(hyps)
        missing = prepared.missing()
        skip = None if missing is None else self._unreferenced(missing)
        if skip is None:
            r = self._score_prepared(hyps, prepared)
            return np.stack([r.precision, r.recall, r.f1, np.ones_like(r.f1)], axis=1)
        out = np.zeros((len(hyps), 4), dtype=np.float64)
        keep = np.flatnonzero(~skip)
        if len(keep):
            sub = _Prepared([[st[i] for i in keep] for st in prepared.streams], prepared.idf_table)
            out[keep] = self.stats([hyps[i] for i in keep], sub)
        return out

    def compute_score_from_stats(self, stats) -> PRFScore:
        """Score of a summed ``[P, R, F, count]`` row: ``100 * sum(F) / count``."""
        s = PRFScore("BERTScore", 100.0 * float(stats[2]) / float(stats[3]) if stats[3] else 0.0)
        s.precision = float(stats[0]) / float(stats[3]) if stats[3] else 0.0
        s.recall = float(stats[1]) / float(stats[3]) if stats[3] else 0.0
        s.f1 = float(stats[2]) / float(stats[3]) if stats[3] else 0.0
        return s

    def corpus_stats(self, hyps, refs=None) -> np.ndarray:
        """float64 ``[N, 4]``: per-segment P, R, F and a 1 (so column sums / count = corpus means;
        additive, for bootstrap and paired tests)."""
        return super().corpus_stats(hyps, refs)

    #: the precision the statistics were computed in elsewhere (Ray's actors), else None
    _ran_precision: str | None = None

    def run_facts(self) -> dict[str, str]:
        """The signature fields that depend on where this object runs: ``prec``, the precision
        its encoder runs in (tf32 only on CUDA). Ray's actors report them to the driver, whose
        copy runs on the CPU (``mtscore.bindings.ray``)."""
        return {"prec": str(getattr(self.encoder, "precision", "fp32"))}

    def take_run_facts(self, facts) -> None:
        """Sign statistics computed elsewhere: ``facts`` is :meth:`run_facts` of the objects that
        computed them ("fp32+tf32" when they differed)."""
        if "prec" in facts:
            self._ran_precision = str(facts["prec"])

    def get_signature(self) -> BERTScoreSignature:
        from .. import __version__

        enc = self.encoder
        model = f"{enc.name}@{enc.model_hash[:12]}"
        if enc.approximate:
            model += f"+{enc.approximate}"
        info = {"nrefs": self.num_refs if self.num_refs is not None else "?",
                "model": model, "layer": self.layer, "idf": self.idf_mode, "rescale": self.rescale}
        if self.long_inputs == "window":  # absent by default: old signatures keep their form
            info["long"] = f"window{self.window_overlap}"
        # what ran (the actors' report on Ray: take_run_facts); absent for fp32, as "long"
        prec = self._ran_precision or getattr(enc, "precision", "fp32")
        if prec != "fp32":
            info["prec"] = prec
        info["version"] = f"mtscore-{__version__}"
        return BERTScoreSignature(info)

    # ---- public scoring -------------------------------------------------------------------
    def score(self, cands, refs=None) -> BERTScoreResult:
        """Per-segment P/R/F of ``cands`` (N strings) against ``refs`` (K streams of N strings,
        ``None`` for a missing reference; a flat list of N strings is one stream).
        Returns :class:`BERTScoreResult` (float64 arrays ``[N]`` and corpus means)."""
        cands = self._coerce_hyps(cands)
        prepared = self._get_prepared(refs if refs is None else self._streams(refs, len(cands)))
        return self._score_prepared(cands, prepared)

    def _get_prepared(self, refs):
        if refs is None:
            if self._ref_cache is None:
                raise RuntimeError("No references provided and the cache is empty.")
            return self._ref_cache
        return self.prepare(refs)

    def sentence_score(self, cand: str, refs: Sequence[str]) -> BERTScoreResult:
        return self.score([cand], [[r] for r in refs])

    def corpus_score(self, hyps, refs=None, n_bootstrap: int = 1) -> Score:
        """``Score`` with ``score = 100 * mean F`` and attributes precision/recall/f1 (0..1 means)."""
        return super().corpus_score(hyps, refs, n_bootstrap)

    def _score_prepared(self, cands: list[str], prepared: _Prepared) -> BERTScoreResult:
        streams = prepared.streams
        if any(len(s) != len(cands) for s in streams):
            raise ValueError(f"BERTScore: {len(cands)} candidates but reference streams of lengths "
                             f"{sorted({len(s) for s in streams})}")
        self.num_refs = len(streams)
        table = self._weights_table(prepared)
        parts = list(self._iter_chunks(cands, streams, table))
        out = np.concatenate([p[0] for p in parts], axis=0) if parts else np.zeros((0, 3))
        n_cands, n_refs = sum(p[1] for p in parts), sum(p[2] for p in parts)
        warn_truncated(n_cands, n_refs, self.tokenizer.max_length)
        return self._result(out, n_cands, n_refs)

    def _result(self, out: np.ndarray, n_cands: int = 0, n_refs: int = 0) -> BERTScoreResult:
        sig = str(self.get_signature())
        return BERTScoreResult(np.ascontiguousarray(out[:, 0]), np.ascontiguousarray(out[:, 1]),
                               np.ascontiguousarray(out[:, 2]), signature=sig,
                               truncated_candidates=int(n_cands), truncated_references=int(n_refs),
                               max_length=self.tokenizer.max_length)

    def _weights_table(self, prepared: _Prepared | None) -> np.ndarray:
        if self._fixed_idf is not None:
            return self._fixed_idf
        if self.idf_mode == "refs":
            if prepared is None or prepared.idf_table is None:
                raise RuntimeError("idf=True over references needs the references up front; "
                                   "pass idf_sents= or a precomputed idf table to stream")
            return prepared.idf_table
        return self._special

    def iter_scores(self, cands: Iterable[str], refs: Sequence[Iterable[str | None]]
                    ) -> Iterator[np.ndarray]:
        """Stream: yields float64 ``[n_chunk, 3]`` (P, R, F) blocks of ``chunk_size`` segments.
        ``cands`` and each reference stream may be lazy iterables (e.g. open files); memory stays
        bounded by the chunk. idf must be off, supplied, or computed from ``idf_sents``.
        Truncated segments are counted over the whole stream and reported by one
        :class:`BERTScoreTruncationWarning` when the stream ends (or is closed)."""
        table = self._weights_table(None)
        it = zip(cands, *refs)
        n_cands = n_refs = 0
        bar = progress_bar(None, self.progress_desc, self.progress, unit="seg")  # one for the stream
        try:
            while True:
                block = list(itertools.islice(it, self.chunk_size))
                if not block:
                    return
                c = [b[0].rstrip("\n") for b in block]
                ss = [[(b[k + 1].rstrip("\n") if b[k + 1] is not None else None) for b in block]
                      for k in range(len(refs))]
                for out, tc, tr in self._iter_chunks(c, ss, table, bar):
                    n_cands, n_refs = n_cands + tc, n_refs + tr
                    yield out
        finally:
            bar.close()
            warn_truncated(n_cands, n_refs, self.tokenizer.max_length, stacklevel=3)

    # ---- core -----------------------------------------------------------------------------
    def _iter_chunks(self, cands: list[str], streams: list[list[str | None]],
                     table: np.ndarray, bar=None) -> Iterator[tuple[np.ndarray, int, int]]:
        """``(prf [n_chunk, 3], truncated candidates, truncated reference entries)`` per chunk;
        ``bar``: the stream's bar (kept open), else one over these segments (closed at the end).
        The next chunk is tokenised on a second thread while this one is encoded and matched
        (the tokenizer and ONNX Runtime both run without the GIL)."""
        n = len(cands)
        own = bar is None
        if bar is None:
            bar = progress_bar(n, self.progress_desc, self.progress, unit="seg")
        starts = list(range(0, n, self.chunk_size))

        def plan(start: int) -> ChunkPlan:
            stop = min(n, start + self.chunk_size)
            p = plan_chunk(cands[start:stop], [st[start:stop] for st in streams])
            p.ids, p.cut = self._encode(p.texts)
            return p

        pool = ThreadPoolExecutor(1) if len(starts) > 1 else None
        try:
            nxt = pool.submit(plan, starts[0]) if pool is not None and starts else None
            for c, start in enumerate(starts):
                cur = nxt.result() if nxt is not None else plan(start)
                nxt = pool.submit(plan, starts[c + 1]) if pool is not None and c + 1 < len(starts) else None
                tick = None if isinstance(bar, NullBar) else _ChunkTicker(bar, cur.n)
                yield self._score_chunk(cur, table, tick)
                if tick is not None:
                    tick.finish()
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            if own:
                bar.close()

    def _score_chunk(self, plan: ChunkPlan, table: np.ndarray, tick=None) -> tuple[np.ndarray, int, int]:
        ids = plan.ids
        assert ids is not None
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        if self._pipeline is not None:
            states = self._pipeline.embed(ids, tick)
        else:
            emb, off = self._embed(ids, tick)
        flat = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
        if flat.size and flat.max() >= len(table):
            raise ValueError(f"token id {int(flat.max())} outside the idf table of size {len(table)}")
        w = np.ascontiguousarray(table[flat], dtype=np.float64)
        if np.isnan(w).any():
            bad = int(flat[np.isnan(w)][0])
            raise KeyError(f"idf dict has no weight for token id {bad}; pass a defaultdict or a full table")
        cp, cr = quirk_flags(lengths, plan, self.pad_quirk_batch)
        if self._pipeline is not None:
            prf = self._pipeline.match(states, w, plan.ph, plan.pr, cp, cr)
        else:
            prf = match_host(emb, off, w, plan.ph, plan.pr, cp, cr, threads=self.encoder.threads)
        out = best_over_refs(prf, plan)
        if self.baseline is not None:
            b = self.baseline
            out = ((out.astype(np.float32) - b.astype(np.float32)) / (np.float32(1) - b.astype(np.float32))
                   ).astype(np.float64)
        n_cands, n_refs = plan.truncated()
        return out, n_cands, n_refs


class _ChunkTicker:
    """Moves a bar counted in segments while a chunk's sentences are encoded: the encoder reports
    ``(batches' sentences done, sentences to encode)`` after every batch, and the chunk's ``n``
    segments are advanced in that proportion (the greedy matching after it is quick)."""

    def __init__(self, bar, n: int):
        self.bar, self.n, self.shown = bar, n, 0

    def __call__(self, done: int, total: int) -> None:
        target = min(self.n, (self.n * done) // total) if total > 0 else 0
        if target > self.shown:
            self.bar.update(target - self.shown)
            self.shown = target

    def finish(self) -> None:
        """The chunk is scored: the rest of its segments (also those whose sentences were memoised)."""
        if self.shown < self.n:
            self.bar.update(self.n - self.shown)
            self.shown = self.n

