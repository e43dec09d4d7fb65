"""Encoder states kept on the encoder's device, greedy matching run there: only P, R, F come back.

:class:`DevicePipeline` wraps an :class:`~.runtime.Encoder` (any encoder metric can use it):

* :meth:`DevicePipeline.embed` encodes sentences in the encoder's own length-sorted token-budget
  batches and writes each batch's output, through ONNX Runtime IO binding, straight into one
  preallocated buffer on the device (float32 ``[rows, D]``; a batch of ``b`` sentences padded to
  ``T`` tokens takes ``b * T`` consecutive rows). Nothing is copied back to the host.
* :meth:`DevicePipeline.match` runs BERTScore's greedy cosine matching with token weights
  (:mod:`.matcher_graph`) over padded batches of pairs, with the buffer bound as the matcher's
  input on the device; only float32 P, R, F per pair come back, and the host rules of
  :func:`mtscore.kernels._greedy.greedy_prf` (empty sentence, NaN) are applied in float64.

With the CPU provider the same code runs with IO binding to ``"cpu"`` (that is how it is tested
without a GPU); the host path (``Encoder.embed`` + ``greedy_prf``) is the faster one there.

Budgets. Encoder batches are the encoder's (``Encoder.batches``: ``batch_tokens`` padded tokens,
at most ``max_rows`` sentences). Matcher batches hold ``B`` pairs padded to ``Lh`` x ``Lr``
tokens with ``B * (Lh + Lr) * D <= pair_floats`` and ``B * Lh * Lr <= pair_floats`` (at least one
pair per batch). ONNX Runtime's Python API exposes no reliable free-memory figure, so
``pair_floats`` is an option; its default (:data:`DEFAULT_PAIR_FLOATS`) is 2**25 floats on CUDA
(each of the graph's few [B, L, D] temporaries then takes at most 128 MiB) and 2**20 on the CPU.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .matcher_graph import INPUTS, OUTPUTS, PAD_BIAS, host_rules, matcher_model
from .model_dir import EncoderError
from .runtime import Encoder, pad_batch
from .session import session_options

#: default matcher budget in float32 values per call (see the module docstring), by device type.
DEFAULT_PAIR_FLOATS = {"cpu": 1 << 20, "cuda": 1 << 25}


@dataclass
class DeviceStates:
    """Un-normalised token states of ``n`` sentences in one device buffer.

    ``buffer``: an ``onnxruntime.OrtValue`` float32 ``[rows, hidden]`` on the pipeline's device;
    sentence ``s`` is rows ``row0[s] : row0[s] + length[s]`` (``row0``, ``length``: int64 ``[n]``).
    Rows between sentences hold the encoder's padded positions and are never read.
    """

    buffer: Any
    row0: np.ndarray
    length: np.ndarray
    hidden: int

    def to_host(self) -> np.ndarray:
        """float32 ``[rows, hidden]``: the whole buffer copied to the host (for checks); sentence
        ``s`` is ``to_host()[row0[s] : row0[s] + length[s]]``."""
        return np.asarray(self.buffer.numpy())


def _device_of(device: str) -> tuple[str, int]:
    """``"cpu"`` / ``"cuda[:N]"`` as ONNX Runtime's (device type, device id)."""
    base, _, idx = device.partition(":")
    if base == "cpu":
        return "cpu", 0
    if base == "cuda":
        return "cuda", int(idx) if idx else 0
    raise EncoderError(f"--device {device!r}: the device pipeline runs on cpu or cuda[:N]")


class DevicePipeline:
    """Encoder states on the device and greedy matching there (see the module docstring).

    ``encoder``: an open :class:`~.runtime.Encoder`; its session, providers (with their options)
    and ``device`` are reused. ``pair_floats``: the matcher budget (default by device type,
    :data:`DEFAULT_PAIR_FLOATS`), a positive int.
    """

    def __init__(self, encoder: Encoder, *, pair_floats: int | None = None):
        import onnxruntime as ort

        self.encoder = encoder
        self.device_type, self.device_id = _device_of(encoder.device)
        if pair_floats is None:
            pair_floats = DEFAULT_PAIR_FLOATS[self.device_type]
        if isinstance(pair_floats, bool) or not isinstance(pair_floats, (int, np.integer)) or pair_floats < 1:
            raise ValueError(f"pair_floats {pair_floats!r}: must be a positive number of float32 values "
                             "per matcher call")
        self.pair_floats = int(pair_floats)
        out = encoder.session.get_outputs()[0]
        if out.type != "tensor(float)":
            raise EncoderError(f"--model {encoder.onnx_path}: output {out.name} is {out.type}; the device "
                               "pipeline needs float32 hidden states")
        dim = out.shape[-1] if out.shape else None
        self._hidden: int | None = int(dim) if isinstance(dim, (int, np.integer)) and dim > 0 else None
        so, _ = session_options(ort, encoder.threads)  # the encoder's own settings
        providers = encoder.session.get_providers()
        options = encoder.session.get_provider_options()
        #: the matcher graph's session, on the encoder's device with the encoder's provider options
        self.matcher = ort.InferenceSession(matcher_model(), sess_options=so, providers=providers,
                                            provider_options=[options.get(p, {}) for p in providers])
        self._ort = ort

    # ---- encoding ---------------------------------------------------------------------------
    def _probe_hidden(self, ids: np.ndarray) -> int:
        """The hidden size, from one unbound run of a single sentence (graphs without a fixed D)."""
        x = np.asarray(ids, dtype=np.int64)[None, :]
        h = self.encoder.session.run([self.encoder.output_name],
                                     {"input_ids": x, "attention_mask": np.ones_like(x)})[0]
        return int(h.shape[-1])

    def embed(self, ids: Sequence[np.ndarray],
              progress: Callable[[int, int], None] | None = None) -> DeviceStates:
        """Encode ``ids`` (int64 token-id arrays, one per sentence) into one device buffer.

        ``progress(done, total)`` is called after every encoder batch with the sentences encoded so
        far and ``len(ids)``, like ``Encoder.embed``'s. The encoder's memo is not used here.
        """
        enc = self.encoder
        n = len(ids)
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=n)
        batches = enc.batches(lengths) if n else []
        row0 = np.zeros(n, dtype=np.int64)
        rows = 0
        widths = []
        for b in batches:
            T = int(lengths[b[0]])
            widths.append(T)
            row0[b] = rows + T * np.arange(len(b), dtype=np.int64)
            rows += len(b) * T
        if self._hidden is None:
            self._hidden = self._probe_hidden(ids[int(batches[0][-1])]) if n else 1
        D = self._hidden
        buf = self._ort.OrtValue.ortvalue_from_shape_and_type([max(rows, 1), D], np.float32,
                                                              self.device_type, self.device_id)
        base = buf.data_ptr()
        pad = enc.tokenizer.pad_id
        done = 0
        for b, T in zip(batches, widths):
            inp, mask, _real = pad_batch(ids, b, lengths, pad)
            io = enc.session.io_binding()
            io.bind_cpu_input("input_ids", inp)
            io.bind_cpu_input("attention_mask", mask)
            io.bind_output(enc.output_name, self.device_type, self.device_id, np.float32, [len(b), T, D],
                           base + int(row0[b[0]]) * D * 4)
            enc.session.run_with_iobinding(io)
            if progress is not None:
                done += len(b)
                progress(done, n)
        return DeviceStates(buf, row0, lengths, D)

    # ---- matching ---------------------------------------------------------------------------
    def pair_batches(self, len_h: np.ndarray, len_r: np.ndarray, hidden: int) -> list[np.ndarray]:
        """Pair index batches (int64), pairs sorted by (len_h, len_r), each within the budget."""
        order = np.lexsort((len_r, len_h))
        out: list[np.ndarray] = []
        cap = self.pair_floats
        i, n = 0, len(order)
        while i < n:
            j, lr = i, 0
            while j < n:
                lh_j = max(int(len_h[order[j]]), 1)
                lr_j = max(lr, int(len_r[order[j]]), 1)
                B = j - i + 1
                if B > 1 and (B * (lh_j + lr_j) * hidden > cap or B * lh_j * lr_j > cap):
                    break
                lr = lr_j
                j += 1
            out.append(order[i:j])
            i = j
        return out

    def match(self, states: DeviceStates, weights: np.ndarray | Sequence[np.ndarray], hyp: np.ndarray,
              ref: np.ndarray, clamp_p: np.ndarray, clamp_r: np.ndarray) -> np.ndarray:
        """float64 ``[n, 3]`` (P, R, F) of the pairs ``(hyp[p], ref[p])`` like ``greedy_prf``.

        ``weights``: per-token weights (idf, or bert_score's 0/1 special weights) as float64 arrays,
        one per sentence, or one flat float64 array in sentence order (``Encoder.embed``'s offsets).
        ``hyp``/``ref`` int64 ``[n]`` index the sentences of ``states``; ``clamp_p``/``clamp_r``
        uint8 ``[n]``: bert_score's padding quirk (the maxima are at least 0).
        """
        hyp = np.asarray(hyp, dtype=np.int64)
        ref = np.asarray(ref, dtype=np.int64)
        n = len(hyp)
        clamp_p = np.asarray(clamp_p, dtype=np.uint8)
        clamp_r = np.asarray(clamp_r, dtype=np.uint8)
        if len(ref) != n or len(clamp_p) != n or len(clamp_r) != n:
            raise ValueError("hyp, ref, clamp_p, clamp_r must have the same length")
        if isinstance(weights, np.ndarray):
            w = np.asarray(weights, dtype=np.float32)
        else:
            w = (np.concatenate([np.asarray(x, dtype=np.float32) for x in weights]) if len(weights)
                 else np.zeros(0, dtype=np.float32))
        woff = np.zeros(len(states.length) + 1, dtype=np.int64)
        np.cumsum(states.length, out=woff[1:])
        if len(w) != woff[-1]:
            raise ValueError(f"weights: {len(w)} values for {int(woff[-1])} tokens")
        out = np.zeros((n, 3), dtype=np.float32)
        if n == 0:
            return out.astype(np.float64)
        lh, lr = states.length[hyp], states.length[ref]
        for b in self.pair_batches(lh, lr, states.hidden):
            out[b] = self._run_batch(states, w, woff, hyp[b], ref[b], clamp_p[b], clamp_r[b])
        return host_rules(out, lh, lr)

    def _run_batch(self, states: DeviceStates, w: np.ndarray, woff: np.ndarray, h: np.ndarray,
                   r: np.ndarray, cp: np.ndarray, cr: np.ndarray) -> np.ndarray:
        """float32 ``[B, 3]`` (P, R, F) of one padded batch of pairs, from the matcher session."""
        hidx, hw, hbias = self._side(states, w, woff, h)
        ridx, rw, rbias = self._side(states, w, woff, r)
        floor = np.float32(PAD_BIAS)
        feeds = {"hidx": hidx, "ridx": ridx, "hw": hw, "rw": rw, "hbias": hbias, "rbias": rbias,
                 "pfloor": np.where(cp != 0, np.float32(0), floor).astype(np.float32),
                 "rfloor": np.where(cr != 0, np.float32(0), floor).astype(np.float32)}
        io = self.matcher.io_binding()
        io.bind_ortvalue_input(INPUTS[0], states.buffer)
        for name in INPUTS[1:]:
            io.bind_cpu_input(name, feeds[name])
        for name in OUTPUTS:
            io.bind_output(name, "cpu")
        self.matcher.run_with_iobinding(io)
        return np.stack([np.asarray(x) for x in io.copy_outputs_to_cpu()], axis=1)

    @staticmethod
    def _side(states: DeviceStates, w: np.ndarray, woff: np.ndarray,
              s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One side of a pair batch: rows int64, weights float32 and bias float32, all ``[B, L]``."""
        lens = states.length[s]
        ar = np.arange(max(int(lens.max()), 1), dtype=np.int64)
        real = ar[None, :] < lens[:, None]
        rows = np.where(real, states.row0[s][:, None] + ar[None, :], 0)
        wt = np.where(real, w[np.where(real, woff[s][:, None] + ar[None, :], 0)] if len(w) else 0, 0)
        bias = np.where(real, np.float32(0), np.float32(PAD_BIAS))
        return rows, wt.astype(np.float32), bias.astype(np.float32)
