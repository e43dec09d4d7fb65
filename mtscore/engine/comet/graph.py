"""COMET's sentence embedding as one ONNX graph: XLM-R encoder, layer mix, pooling.

The math is unbabel-comet 2.2.7's (``comet/modules/layerwise_attention.py``,
``comet/models/pooling_utils.py``, ``comet/models/base.py`` ``compute_sentence_embedding``):

* layer mix (``spec.layer is None``): ``gamma * (0 + w_0 h_0 + w_1 h_1 + ... + w_L h_L)`` with
  ``h_0`` the embedding output and ``h_k`` block ``k``'s output; ``w = softmax(s)`` or
  ``sparsemax(s)`` (Martins & Astudillo, 2016) of the scalars ``s``. The weights are computed here
  once, in numpy float32, the way torch / entmax do (:func:`mix_weights`), and enter the graph as
  constants. The sum is accumulated inside the graph as each block finishes, so no
  ``[L+1, B, T, H]`` tensor exists; a term whose weight is exactly 0 (sparsemax) is left out, and
  blocks above the last non-zero weight are not built at all (``0 * h`` adds nothing);
* with ``layer_norm``: each ``h_k`` is first normalised **per sentence** over all its unmasked
  tokens and all ``H`` dims at once: with ``m`` the attention mask and ``n = H * sum(m)``,
  ``mean = sum(h * m) / n``, ``var = sum(((h * m - mean) * m)^2) / n``,
  ``(h - mean) / sqrt(var + 1e-12)`` (padded positions are normalised too; pooling drops them);
  each of the two sums is taken over ``H`` per token, then over the positions in order;
* a layer number instead of the mix takes that hidden state as it is;
* ``avg`` pooling: positions whose token id is the pad id are zeroed, the sum over positions (taken
  in position order) is divided by the attention-mask sum; ``max``: positions whose token id is
  the pad id are set to ``-inf``, then the maximum over positions (``max_pooling``: the same
  token-id rule, not the attention mask); ``cls``: the first position;
* ``default``: the encoder's own ``sentemb``, which for XLM-R (``comet/encoders/xlmr.py``) is the
  first position of the **last** hidden state (``last_hidden_states[:, 0, :]``), not of the mix or
  of ``layer``: unbabel-comet computes the mix and drops it, so only the encoder is built here.

A sentence's embedding does not depend on the batch it is encoded in, bit for bit (onnxruntime's
CPU kernels, measured on the golden models at 1 and 2 threads; CUDA's were not measured): every
token's hidden state is the same bits at any padded length ``T``; a sum over a sentence's positions
is the last row of a ``CumSum`` along ``T``, a sequential sum in position order whose padded
positions, zero after the mask multiply, add exact zeros (a ``ReduceSum`` over ``T`` is a MatMul by
ones in onnxruntime, blocked and threaded by ``T``: it moved avg-pooled embeddings by ~1e-6); the
layer norm's sums over ``T * H`` values are sums over ``H`` per token (a fixed length), then such
a sequential sum; the attention-mask counts are sums of 0s and 1s, exact in any order. The
sentence-embedding memo and ``batch_tokens`` therefore change no embedding.

The mix, the layer norm and the pooling always run in float32; with ``dtype=float16`` only the
encoder runs in float16 and each hidden state is cast to float32 before it is used.
"""
from __future__ import annotations

import numpy as np

from ..encoder.onnx_builder import GraphBuilder, InitializerSink, encoder_hidden_states, finish_model
from .spec import CometSpec

__all__ = ["GRAPH_VERSION", "LAYER_NORM_EPS", "OUTPUT", "build_comet_embedding_graph", "mix_weights", "softmax_f32",
           "sparsemax_f32"]

#: bump when the graph built here changes, so cached exports are rebuilt (with onnx_builder's version)
GRAPH_VERSION = 2
#: the graph's output: the pooled sentence embedding, float32 ``[batch, hidden]``
OUTPUT = "sentemb"
#: added to the variance inside the square root (``_layer_norm`` of layerwise_attention.py)
LAYER_NORM_EPS = 1e-12


def softmax_f32(s: np.ndarray) -> np.ndarray:
    """``torch.softmax(s, 0)`` of a float32 vector in float32: max subtracted, exp, sum, divide."""
    x = np.asarray(s, dtype=np.float32)
    e = np.exp(x - x.max())
    return (e / e.sum(dtype=np.float32)).astype(np.float32)


def sparsemax_f32(s: np.ndarray) -> np.ndarray:
    """``entmax.sparsemax(s, 0)`` (full sort) of a float32 vector: ``x = s - max(s)``, ``z`` =
    ``x`` sorted descending, ``c = cumsum(z) - 1`` (torch accumulates a CPU float32 cumsum in
    float64 and rounds each partial sum to float32), support ``k = #{j : j * z_j > c_j}`` (j from
    1), ``tau = c_k / k``, result ``max(x - tau, 0)``; several entries are exactly 0 in general."""
    x = np.asarray(s, dtype=np.float32)
    x = (x - x.max()).astype(np.float32)
    z = -np.sort(-x)
    c = (np.cumsum(z.astype(np.float64)).astype(np.float32) - np.float32(1)).astype(np.float32)
    rho = np.arange(1, x.size + 1, dtype=np.float32)
    k = int(np.count_nonzero(rho * z > c))
    tau = np.float32(c[k - 1] / np.float32(k))
    return np.maximum(x - tau, np.float32(0)).astype(np.float32)


def mix_weights(spec: CometSpec) -> np.ndarray:
    """The normalised layer-mix weights (float32 ``[layers + 1]``) of a spec with a mix."""
    if spec.layer is not None or spec.scalar_parameters is None:
        raise ValueError(f"{spec.class_identifier}: the model takes hidden state {spec.layer}; it has no layer mix")
    fn = sparsemax_f32 if spec.mix == "sparsemax" else softmax_f32
    return fn(spec.scalar_parameters)


def _f32(g: GraphBuilder, x: str) -> str:
    return x if g.dtype == np.float32 else g.op("Cast", [x], to=g.onnx.TensorProto.FLOAT)


def _c32(g: GraphBuilder, value, base: str) -> str:
    return g.const(np.asarray(value, dtype=np.float32), base, dtype=np.float32)


def _last(g: GraphBuilder, x: str) -> str:
    """The last position along axis 1 of ``x`` ``[B, T, ...]``, the axis kept: ``[B, 1, ...]``."""
    i64 = np.int64
    return g.op("Slice", [x, g.const([-1], "start", i64), g.const([np.iinfo(i64).max], "end", i64),
                          g.const([1], "ax", i64)])


def _sum_over_positions(g: GraphBuilder, x: str) -> str:
    """``x`` ``[B, T, K]`` summed over the positions, ``[B, 1, K]``, in the order 0, 1, ..., T-1
    whatever ``T`` is: the last row of a CumSum along T (a sequential sum, onnxruntime's CPU kernel),
    so positions past a sentence's own (zero after the mask multiply) add exact zeros and the sum
    is the same bits at any padded length. A ReduceSum over T is not: onnxruntime's CPU kernel
    reduces a middle axis with a MatMul by a ones vector whose blocking and threads depend on T."""
    return _last(g, g.op("CumSum", [x, g.const(1, "ax", np.int64)]))


class _SentenceNorm:
    """COMET's per-sentence masked layer norm; the mask-derived tensors are built once. Each sum
    over a sentence's ``T * H`` values is a sum over ``H`` per token (a fixed length: the same bits
    at any ``T``), then over the positions in order (:func:`_sum_over_positions`)."""

    def __init__(self, g: GraphBuilder, hidden: int):
        self.g = g
        m = g.op("Cast", ["attention_mask"], to=g.onnx.TensorProto.FLOAT)  # [B, T]
        self.bmask = g.op("Unsqueeze", [m, g.const([-1], "ax", np.int64)], "bmask")  # [B, T, 1]
        # a sum of 0s and 1s: exact in float32 in any order (T < 2^24)
        count = g.op("ReduceSum", [m, g.const([1], "ax", np.int64)], keepdims=1)  # [B, 1]
        count = g.op("Mul", [count, _c32(g, hidden, "hidden")])
        self.count = g.op("Unsqueeze", [count, g.const([-1], "ax", np.int64)], "count")  # [B, 1, 1]
        self.h_axis = g.const([2], "ax2", np.int64)

    def _sum(self, x: str) -> str:
        """``x`` ``[B, T, H]`` summed per sentence, ``[B, 1, 1]``."""
        per_token = self.g.op("ReduceSum", [x, self.h_axis], keepdims=1)  # [B, T, 1]
        return _sum_over_positions(self.g, per_token)

    def __call__(self, h: str) -> str:
        g = self.g
        masked = g.op("Mul", [h, self.bmask])
        mean = g.op("Div", [self._sum(masked), self.count])  # [B, 1, 1]
        dev = g.op("Mul", [g.op("Sub", [masked, mean]), self.bmask])
        var = g.op("Div", [self._sum(g.op("Mul", [dev, dev])), self.count])
        std = g.op("Sqrt", [g.op("Add", [var, _c32(g, LAYER_NORM_EPS, "eps")])])
        return g.op("Div", [g.op("Sub", [h, mean]), std])


def _pool(g: GraphBuilder, x: str, pool: str, pad_id: int) -> str:
    if pool in ("cls", "default"):  # "default": x is the last hidden state
        return g.op("Gather", [x, g.const(0, "first", np.int64)], axis=1)  # [B, H]
    if pool == "max":
        pad = g.op("Equal", ["input_ids", g.const(pad_id, "pad", np.int64)])
        pad = g.op("Unsqueeze", [pad, g.const([-1], "ax", np.int64)])  # [B, T, 1]
        masked = g.op("Where", [pad, _c32(g, -np.inf, "neg_inf"), x])
        return g.op("ReduceMax", [masked], axes=[1], keepdims=0)  # [B, H]; axes an attribute up to opset 17
    if pool != "avg":
        raise ValueError(f"pool {pool!r}: expected 'avg', 'max', 'cls' or 'default'")
    keep = g.op("Not", [g.op("Equal", ["input_ids", g.const(pad_id, "pad", np.int64)])])
    keep = g.op("Unsqueeze", [g.op("Cast", [keep], to=g.onnx.TensorProto.FLOAT), g.const([-1], "ax", np.int64)])
    total = _sum_over_positions(g, g.op("Mul", [x, keep]))  # [B, 1, H]
    m = g.op("Cast", ["attention_mask"], to=g.onnx.TensorProto.FLOAT)
    n = g.op("ReduceSum", [m, g.const([1], "ax", np.int64)], keepdims=1)  # [B, 1]: 0s and 1s, exact
    return g.op("Div", [g.op("Squeeze", [total, g.const([1], "ax", np.int64)]), n])  # [B, H]


def build_comet_embedding_graph(spec: CometSpec, dtype=np.float32, producer: str = "mtscore", *,
                                sink: InitializerSink | None = None, consume: bool = False):
    """An ``onnx.ModelProto`` computing COMET's sentence embedding of ``spec`` (see the module
    docstring for the math).

    Inputs ``input_ids`` and ``attention_mask``: int64 ``[batch, seq]`` (XLM-R ids with ``<s>`` /
    ``</s>``, padded with ``spec.dims.pad_token_id``; mask 1 for real tokens). Output
    :data:`OUTPUT` (``"sentemb"``): float32 ``[batch, hidden]``. ``dtype``: float32 (parity) or
    float16 (the encoder only; the weights are cast from whatever dtype the checkpoint stored).
    ``sink``: where large initializers are streamed while building (see
    :class:`~mtscore.engine.encoder.onnx_builder.GraphBuilder`; the cache's ``ExternalData``).
    ``consume``: the spec's ``encoder_weights`` dict is emptied, each weight as the graph takes
    it and the unused ones (blocks above the mix's last non-zero weight) at the end, so the
    checkpoint's arrays are freed while the graph is built; the spec cannot build a graph again.
    Raises ValueError for a ``head_only`` spec (it has no encoder weights), and for a spec whose
    weights an earlier ``consume`` build took."""
    if spec.head_only:
        raise ValueError(f"{spec.class_identifier}: cannot build the embedding graph of a head_only spec "
                         "(rebuilt from the cached COMET head, without the encoder weights); build it from "
                         "the spec of the checkpoint (load_comet_spec)")
    if not spec.encoder_weights:
        raise ValueError(f"{spec.class_identifier}: the spec's encoder weights were consumed by an earlier "
                         "export; read the checkpoint again (load_comet_spec) to build another graph")
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float16):
        raise ValueError(f"dtype {dt}: expected float32 or float16")
    g = GraphBuilder(dt, sink)
    hidden = spec.dims.hidden
    weights = spec.encoder_weights
    try:
        if spec.pool == "default":
            *_, x = encoder_hidden_states(g, spec.encoder_config, weights, spec.dims.layers, consume=consume)
            emb = _f32(g, x)
            name = f"comet_default_L{spec.dims.layers}"
        elif spec.layer is not None:
            *_, x = encoder_hidden_states(g, spec.encoder_config, weights, spec.layer, consume=consume)
            emb = _f32(g, x)
            name = f"comet_L{spec.layer}_{spec.pool}"
        else:
            w = mix_weights(spec)
            used = np.flatnonzero(w)
            last = int(used[-1])
            norm = _SentenceNorm(g, hidden) if spec.layer_norm else None
            acc = None
            for k, h in enumerate(encoder_hidden_states(g, spec.encoder_config, weights, last, consume=consume)):
                if w[k] == 0:
                    continue
                h = _f32(g, h)
                if norm is not None:
                    h = norm(h)
                term = g.op("Mul", [_c32(g, w[k], f"w{k}"), h], f"mix{k}")
                acc = term if acc is None else g.op("Add", [acc, term], f"acc{k}")
            assert acc is not None  # sparsemax and softmax weights sum to 1: one is non-zero
            emb = g.op("Mul", [_c32(g, np.float32(spec.gamma), "gamma"), acc], "scaled")
            name = f"comet_{spec.mix}{'_norm' if spec.layer_norm else ''}_{spec.pool}"
    finally:
        if consume:  # what the graph did not take (blocks it does not build), also after a failure:
            weights.clear()  # a half-consumed spec would otherwise blame a missing weight
    out = _pool(g, emb, spec.pool, spec.dims.pad_token_id)
    return finish_model(g, out, OUTPUT, ["batch", hidden], name, producer, cast=False)  # float32 already
