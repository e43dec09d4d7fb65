"""COMET scores end to end without torch: load a model once, score many segment lists.

:func:`load_comet` resolves the model (:func:`~.model.resolve_comet_model`), reads and checks its
checkpoint (:func:`~.spec.load_comet_spec`; a warm load takes everything but the encoder from the
cached head instead, :mod:`.head_cache`), builds the sentence-embedding graph
(:func:`~.graph.build_comet_embedding_graph`) into the cache (:func:`comet_graph_path`; external
data for graphs over 2 GiB) and opens it in onnxruntime
(:func:`~mtscore.engine.encoder.session.open_session`); :meth:`CometScorer.score`
then does what unbabel-comet 2.2.7's ``predict`` does (Rei et al., 2020, 2022):

* ``regression_metric``: every distinct text of the sources, translations and references is encoded
  once; the head takes ``[mt; ref; mt*ref; |mt-ref|; mt*src; |mt-src|]``;
* ``referenceless_regression_metric``: the same with sources and translations only;
* ``unified_metric`` (``input_segments: [mt, src]``, e.g. wmt22-cometkiwi-da): each distinct
  (translation, source) pair is encoded as one joint ``<s> mt </s></s> src </s>`` sequence, its
  first token is the sentence embedding.

Several references (``regression_metric``): :meth:`CometScorer.score_references` gives one row of
scores per reference stream, each text encoded once; combining them is the caller's choice.

Several systems against the same sources and references: the two regression classes keep a
bounded memo text -> sentence embedding for :meth:`CometScorer.score` and
:meth:`~CometScorer.score_references` (``embedding_cache`` rows, least recently used dropped
first; default :data:`DEFAULT_EMBEDDING_CACHE`, about 256 MB at hidden size 1024; 0 disables it),
so a second system's call encodes only its own new texts (its translations), not the sources and
references again. ``unified_metric`` encodes (translation, source) pairs jointly and has no memo.
On the CPU, with every pooling (``avg`` with and without the layer norm, ``max``, ``cls``,
``default``), an embedding does not depend on the batch it was encoded in, bit for bit (the sums
over positions are sequential, :mod:`.graph`; tests/engine/test_comet_memo.py), so the memo changes
no score: a system's scores are those of a fresh scorer whatever the same scorer encoded before,
and ``batch_tokens`` changes none either. CUDA's kernels were not measured: take both as float
noise there.

References given to a model that does not read them (referenceless, unified) are ignored with a
:class:`CometReferencesIgnoredWarning`, as unbabel-comet ignores them (its kiwi ``prepare_sample``
drops ``ref`` when ``input_segments`` lacks it, so its score is the one-pass score): the numbers
are the ones COMET gives. A unified model whose ``input_segments`` include ``ref`` (xCOMET, which
averages three passes) is refused when the model is loaded (:func:`~.model.check_hparams`).

Example (the golden test models of the repository; any COMET folder or Hub name works alike)::

    >>> from mtscore.engine.comet.scorer import load_comet
    >>> scorer = load_comet("tests/golden/comet/models/regression-sparsemax",
    ...                     encoder="tests/golden/comet/encoder")          # doctest: +SKIP
    >>> scorer.score(["Das Haus ist klein."], sources=["The house is small."],
    ...              references=["Das Haus ist klein."]).shape            # doctest: +SKIP
    (1,)
"""
from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ...errors import UserError
from ..encoder.cache import cache_location
from ..encoder.model_dir import memo_file_sha256
from ..encoder.runtime import DEFAULT_BATCH_TOKENS, MAX_BATCH_ROWS
from ..encoder.session import DeviceSession, check_precision, open_session
from .export import cached_comet_embedding, export_comet_embedding
from .graph import GRAPH_VERSION, OUTPUT
from .head import comet_features, head_scores
from .head_cache import read_comet_head, write_comet_head
from .inputs import CometTokenizer, load_comet_tokenizer, padded_batches, unique_pairs, unique_texts
from .model import CometModelFiles, resolve_comet_model
from .spec import CometSpec, load_comet_spec

__all__ = ["DEFAULT_EMBEDDING_CACHE", "GRAPH_VERSION", "CometInputError", "CometReferencesIgnoredWarning",
           "CometScorer", "comet_graph_path", "load_comet"]

#: sentence embeddings a scorer keeps by text (``embedding_cache``): 65,536 float32 rows, 256 MB at
#: hidden size 1024 (XLM-R large): the sources and references of a large test set
DEFAULT_EMBEDDING_CACHE = 65536

class CometInputError(UserError, ValueError):
    """The segments given to :meth:`CometScorer.score` do not fit the model (a missing column, lengths
    that differ, a non-string entry); the message names the argument."""


class CometReferencesIgnoredWarning(UserWarning):
    """References were given to a COMET model that does not read them (referenceless or unified
    ``[mt, src]``); they were ignored, as unbabel-comet ignores them."""


def comet_graph_path(spec: CometSpec, checkpoint_sha256: str, dtype: str = "float32",
                     cache_dir: str | os.PathLike[str] | None = None, *, consume_weights: bool = False) -> Path:
    """The ONNX file of ``spec``'s sentence-embedding graph (:func:`~.graph.build_comet_embedding_graph`),
    built once per (checkpoint sha256, hyper-parameters, ``dtype`` "float32" | "float16", graph
    version) under the cache (``cache_dir``, else ``MTSCORE_CACHE`` / ``XDG_CACHE_HOME`` /
    ``~/.cache/mtscore``) by :func:`~.export.export_comet_embedding`: graphs over the cache's
    external-data threshold (XLM-R large fp32, over 2 GiB) keep their weights in ``model.onnx.data``
    beside the file, so open it by path. An unwritable cache falls back to a temporary folder of
    this process with a warning. ``consume_weights``: an export empties ``spec.encoder_weights``
    as it goes (see :func:`~.export.export_comet_embedding`)."""
    return export_comet_embedding(spec, checkpoint_sha256, dtype,
                                  cache_dir=None if cache_dir is None else os.fspath(cache_dir),
                                  consume_weights=consume_weights)


def _column(values: Sequence[str] | None, name: str, n: int | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, (str, bytes)):
        raise CometInputError(f"{name}: expected a sequence of strings, got one {type(values).__name__}")
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise CometInputError(f"{name}[{i}]: expected a str, got {type(v).__name__}")
    if n is not None and len(out) != n:
        raise CometInputError(f"{name}: {len(out)} segments, but hypotheses has {n}")
    return out


def _check_cache_size(embedding_cache: object) -> int:
    if isinstance(embedding_cache, bool) or not isinstance(embedding_cache, int) or embedding_cache < 0:
        raise CometInputError(f"embedding_cache: {embedding_cache!r}; expected a number of sentence embeddings "
                              ">= 0 (0: no memo)")
    return embedding_cache


class _EmbeddingMemo:
    """Sentence embeddings by text, float32 rows of their own (no view keeps a larger array alive),
    at most ``capacity``, the least recently used dropped first; a lock around each look-up and
    store (a scorer may be shared by threads; Ray's actors call it one at a time)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def fill(self, texts: Sequence[str], out: np.ndarray) -> list[int]:
        """Copy the embedding of each ``texts[i]`` the memo holds into ``out[i]`` (marking it
        recently used); the positions of the others, in order."""
        if not self.capacity:
            return list(range(len(texts)))
        misses = []
        rows = self._rows
        with self._lock:
            for i, t in enumerate(texts):
                row = rows.get(t)
                if row is None:
                    misses.append(i)
                else:
                    rows.move_to_end(t)
                    out[i] = row
        return misses

    def store(self, texts: Sequence[str], emb: np.ndarray) -> None:
        """Keep ``emb[i]`` as the embedding of ``texts[i]``; past ``capacity``, drop the least
        recently used (of a call with more texts than that, only its last ``capacity`` are kept)."""
        keep = min(len(texts), self.capacity)
        if not keep:
            return
        start = len(texts) - keep
        with self._lock:
            rows = self._rows
            for t, row in zip(texts[start:], emb[start:]):
                rows[t] = row.copy()
                rows.move_to_end(t)
            while len(rows) > self.capacity:
                rows.popitem(last=False)


@dataclass(frozen=True, eq=False)  # compared and hashed by identity (the spec holds arrays)
class CometScorer:
    """A loaded COMET model (see :func:`load_comet`). Facts for signatures: ``name`` (Hub id or
    folder name), ``checkpoint_sha256``, ``precision`` (what ran: fp32 / tf32 / fp16), ``device``,
    ``class_identifier``, ``uses_references``. ``files``/``spec``/``tokenizer``/``session`` are the
    resolved files, the checked architecture (``head_only``: the encoder's weights live only in the
    ONNX graph), the tokenizer and the onnxruntime session; ``graph_path`` is the ONNX file the
    session runs; ``checkpoint_read``: whether loading parsed the checkpoint (False when the head
    and the export came from the cache); ``embedding_cache``: how many sentence embeddings the
    regression classes keep by text for later calls (0: none; see the module notes). A copy made
    with :func:`dataclasses.replace` starts with an empty memo."""

    files: CometModelFiles
    spec: CometSpec
    tokenizer: CometTokenizer
    session: DeviceSession
    checkpoint_sha256: str
    graph_path: Path
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    checkpoint_read: bool = True
    embedding_cache: int = DEFAULT_EMBEDDING_CACHE
    _memo: _EmbeddingMemo = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # frozen: the memo is set once here; it is mutable inside (and guarded by its own lock)
        object.__setattr__(self, "_memo", _EmbeddingMemo(_check_cache_size(self.embedding_cache)))

    @property
    def name(self) -> str:
        return self.files.name

    @property
    def class_identifier(self) -> str:
        return self.spec.class_identifier

    @property
    def precision(self) -> str:
        return self.session.precision

    @property
    def device(self) -> str:
        return self.session.device

    @property
    def uses_references(self) -> bool:
        return self.spec.class_identifier == "regression_metric"

    @property
    def cached_embeddings(self) -> int:
        """How many sentence embeddings the memo holds now (at most ``embedding_cache``)."""
        return len(self._memo)

    def embed_ids(self, ids: Sequence[np.ndarray], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Sentence embeddings, float32 ``[len(ids), H]``, of token-id sequences (int64 each, as
        :meth:`CometTokenizer.encode` or :meth:`CometTokenizer.joint` give them), run in
        length-sorted batches of at most ``batch_tokens`` padded tokens; ``progress(rows)`` is
        called after each batch with the number of sequences it encoded."""
        out = np.empty((len(ids), self.spec.dims.hidden), dtype=np.float32)
        sess = self.session.session
        for b in padded_batches(ids, self.tokenizer.pad_id, batch_tokens=self.batch_tokens, max_rows=MAX_BATCH_ROWS):
            out[b.rows] = sess.run([OUTPUT], {"input_ids": b.input_ids, "attention_mask": b.attention_mask})[0]
            if progress is not None:
                progress(len(b.rows))
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """COMET's sentence embedding of each text, float32 ``[len(texts), H]`` (each distinct text
        encoded once). Not defined for ``unified_metric``, whose embeddings are of (mt, src) pairs.
        Not through the memo of :meth:`score` (MBR's groups rarely repeat a text)."""
        if self.spec.class_identifier == "unified_metric":
            raise CometInputError(f"{self.name}: unified_metric embeds (translation, source) pairs jointly, "
                                  "not single texts; use score()")
        col = _column(texts, "texts", None)
        assert col is not None
        uniq, (index,) = unique_texts(col)
        return self.embed_ids(self.tokenizer.encode(uniq))[index]

    def _sentence_embeddings(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """float32 ``[len(texts), H]`` of distinct single ``texts``: those in the memo from it, the
        others tokenized and encoded in one :meth:`embed_ids` call (batched together), then kept."""
        out = np.empty((len(texts), self.spec.dims.hidden), dtype=np.float32)
        misses = self._memo.fill(texts, out)
        if len(misses) == len(texts):  # nothing found: the encoder's array itself (``out`` untouched)
            emb = self.embed_ids(self.tokenizer.encode(texts), progress)
            self._memo.store(texts, emb)
            return emb
        if misses:
            new = [texts[i] for i in misses]
            emb = self.embed_ids(self.tokenizer.encode(new), progress)
            out[misses] = emb
            self._memo.store(new, emb)
        return out

    def score(self, hypotheses: Sequence[str], sources: Sequence[str] | None = None,
              references: Sequence[str] | None = None, *,
              progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Per-segment COMET scores, float64 ``[N]`` (N = ``len(hypotheses)``): the model's float32
        outputs widened, equal to unbabel-comet 2.2.7's ``predict`` scores in fp32 up to float
        noise. ``sources`` are required by every class; ``references`` by ``regression_metric``
        (given to another class: ignored with a :class:`CometReferencesIgnoredWarning`).
        ``progress``: called with the number of sequences each encoder batch encoded (a progress
        bar's ``update``; texts found in the embedding memo are not encoded again, see the module
        notes). Raises :class:`CometInputError` naming the argument."""
        hyp = _column(hypotheses, "hypotheses", None)
        assert hyp is not None
        n = len(hyp)
        src = _column(sources, "sources", n)
        ref = _column(references, "references", n)
        cid = self.spec.class_identifier
        if src is None:
            raise CometInputError(f"sources: missing; {self.name} ({cid}) needs the source segments")
        if cid == "regression_metric" and ref is None:
            raise CometInputError(f"references: missing; {self.name} (regression_metric) needs a reference per "
                                  "segment (a reference-free model: e.g. Unbabel/wmt22-cometkiwi-da)")
        if cid != "regression_metric" and ref is not None:
            warnings.warn(CometReferencesIgnoredWarning(
                f"references: ignored; {self.name} ({cid}) scores from sources and hypotheses only, as "
                "unbabel-comet does"), stacklevel=2)
            ref = None
        if n == 0:
            return np.empty(0, dtype=np.float64)
        if cid == "unified_metric":
            texts, (i_mt, i_src) = unique_texts(hyp, src)
            ids = self.tokenizer.encode(texts)
            pairs, index = unique_pairs(i_mt, i_src)
            joint = self.tokenizer.joint([ids[a] for a in pairs[:, 0]], [ids[b] for b in pairs[:, 1]])
            feats = comet_features(self.spec, self.embed_ids(joint, progress)[index])
        elif ref is None:
            texts, (i_mt, i_src) = unique_texts(hyp, src)
            emb = self._sentence_embeddings(texts, progress)
            feats = comet_features(self.spec, emb[i_mt], emb[i_src])
        else:
            return self._with_references(hyp, src, [ref], progress)[0]
        return head_scores(self.spec, feats).astype(np.float64)

    def score_references(self, hypotheses: Sequence[str], sources: Sequence[str],
                         references: Sequence[Sequence[str]],
                         progress: Callable[[int], None] | None = None) -> np.ndarray:
        """A ``regression_metric``'s scores against each of K reference streams, float64 ``[K, N]``
        (row k = :meth:`score` with ``references[k]``), every distinct text of all the columns
        encoded once. How to combine the rows (mean, max) is the caller's choice. Raises
        :class:`CometInputError` for another class (it reads no references: use :meth:`score`),
        no stream, or a stream of another length."""
        cid = self.spec.class_identifier
        if cid != "regression_metric":
            raise CometInputError(f"references: {self.name} ({cid}) reads no references; use score()")
        hyp = _column(hypotheses, "hypotheses", None)
        assert hyp is not None
        src = _column(sources, "sources", len(hyp))
        if src is None:
            raise CometInputError(f"sources: missing; {self.name} ({cid}) needs the source segments")
        if isinstance(references, (str, bytes)) or not len(references):
            raise CometInputError("references: expected one or more reference streams (sequences of strings)")
        refs = []
        for k, stream in enumerate(references):
            col = _column(stream, f"references[{k}]", len(hyp))
            if col is None:
                raise CometInputError(f"references[{k}]: None; expected a sequence of strings")
            refs.append(col)
        if not hyp:
            return np.empty((len(refs), 0), dtype=np.float64)
        return self._with_references(hyp, src, refs, progress)

    def _with_references(self, hyp: list[str], src: list[str], refs: list[list[str]],
                         progress: Callable[[int], None] | None = None) -> np.ndarray:
        """float64 ``[len(refs), N]``: the regression head against each reference stream."""
        texts, index_of = unique_texts(hyp, src, *refs)
        emb = self._sentence_embeddings(texts, progress)
        h, s = emb[index_of[0]], emb[index_of[1]]
        out = np.empty((len(refs), len(hyp)), dtype=np.float64)
        for k in range(len(refs)):
            out[k] = head_scores(self.spec, comet_features(self.spec, h, s, emb[index_of[2 + k]]))
        return out


def load_comet(model: str | os.PathLike[str], *, encoder: str | os.PathLike[str] | None = None,
               device: str = "cpu", precision: str = "fp32", threads: int | None = None,
               batch_tokens: int = DEFAULT_BATCH_TOKENS, cache_dir: str | os.PathLike[str] | None = None,
               revision: str | None = None, embedding_cache: int = DEFAULT_EMBEDDING_CACHE) -> CometScorer:
    """Load a COMET model for scoring (see the module docstring).

    ``model``: a model folder (``hparams.yaml`` + ``checkpoints/model.ckpt``), its checkpoint, a Hub
    name or a bare name under Unbabel; ``encoder``: a folder or Hub name with the encoder's
    ``config.json`` and ``tokenizer.json`` instead of hparams.yaml's ``pretrained_model``;
    ``device``: cpu, cuda, cuda:N, auto; ``precision``: fp32 (default, IEEE float32 everywhere),
    tf32 (CUDA only), fp16 (the encoder in float16; mix, pooling and head in float32);
    ``threads``: onnxruntime intra-op threads (None: all cores); ``batch_tokens``: padded tokens
    per encoder call (scores do not depend on it: bit for bit on the CPU); ``cache_dir``: where the
    ONNX graph and the model's head are kept; ``revision``: the model's Hub revision;
    ``embedding_cache``: sentence embeddings kept by text across calls (regression classes: a later
    system's call encodes only texts not seen before; default :data:`DEFAULT_EMBEDDING_CACHE`, about
    256 MB at hidden size 1024; 0: none; the scores' dependence on it is in the module notes). A warm load
    (export and head cached for this checkpoint's sha256) does not read the checkpoint beyond hashing
    it (:mod:`.head_cache`; ``checkpoint_read`` is then False); either way the returned ``spec`` is
    ``head_only`` (the encoder's weights live in the exported graph only). Raises
    :class:`~mtscore.errors.UserError` subclasses naming the file or option."""
    if isinstance(batch_tokens, bool) or not isinstance(batch_tokens, int) or batch_tokens < 1:
        raise CometInputError(f"batch_tokens: {batch_tokens!r}; expected a positive integer")
    _check_cache_size(embedding_cache)
    prec = check_precision(precision)
    files = resolve_comet_model(model, revision=revision, encoder=encoder)
    tokenizer = load_comet_tokenizer(files)
    # the checkpoint's hash keys both caches (and goes in the signature); a warm load finds the
    # head and the export by it and never parses the checkpoint, whose encoder weights the export
    # already holds
    sha = memo_file_sha256(files.checkpoint)
    dtype = "float16" if prec == "fp16" else "float32"
    cache = None if cache_dir is None else os.fspath(cache_dir)
    spec = read_comet_head(files, sha, cache)
    path = None if spec is None else cached_comet_embedding(spec, sha, dtype, cache_dir=cache)
    checkpoint_read = spec is None or path is None
    if spec is None or path is None:
        head_cached = spec is not None
        spec = load_comet_spec(files)
        # the export takes the encoder's weights out of the spec as it writes them (one copy of
        # the 2.2 GB alive at a time, XLM-R large); the spec's head stays for write_comet_head
        path = comet_graph_path(spec, sha, dtype, cache, consume_weights=True)
        # an export that went to this process's temporary folder (an unwritable cache, already
        # warned about) leaves no head worth keeping: no later process would find either
        if not head_cached and cache_location(cache).path.resolve() in path.resolve().parents:
            write_comet_head(files, sha, spec, cache)
        # the export holds the encoder now: drop its weights (2.2 GB for XLM-R large) before
        # onnxruntime loads the same weights again, so the first call's peak memory holds one copy
        spec = replace(spec, encoder_weights={}, head_only=True)
    session = open_session(path, device=device, precision=prec, threads=threads, metric="COMET")
    return CometScorer(files=files, spec=spec, tokenizer=tokenizer, session=session, checkpoint_sha256=sha,
                       graph_path=path, batch_tokens=batch_tokens, checkpoint_read=checkpoint_read,
                       embedding_cache=embedding_cache)
