"""BERTScore's greedy cosine matching with token weights as a small ONNX graph (runs on the encoder's device).

The graph takes the encoder's token states ``E`` (float32 ``[N, D]``, not normalised) of many
sentences and a batch of ``B`` padded pairs given as row indices into ``E``; it returns only the
pairs' P, R and F (float32 ``[B]``), so the states never leave the device:

    H = E[hidx] / ||E[hidx]||      (per token, float32, like bert_score's ``div_(norm)``)
    Rt = E[ridx] / ||E[ridx]||
    sim = H @ Rt^T + hbias[:, :, None] + rbias[:, None, :]        [B, Lh, Lr]
    wp = max(max_j sim, pfloor)    wr = max(max_i sim, rfloor)
    P = sum(wp * hw) / sum(hw)     R = sum(wr * rw) / sum(rw)     F = 2PR / (P + R)

``hbias``/``rbias`` are 0 at real tokens and -1e4 at padding (a padded position never wins a
maximum; its weight is 0). ``pfloor``/``rfloor`` are -1e4, or 0 under bert_score's padding quirk
(``clamp_p``/``clamp_r`` of :func:`mtscore.kernels._greedy.greedy_prf`). The empty-sentence rule
and NaN -> 0 are applied by the caller on the host (see :func:`host_rules`).
Reference: Zhang et al., "BERTScore: Evaluating Text Generation with BERT", ICLR 2020.
"""
from __future__ import annotations

import numpy as np

#: ONNX opset of the matcher graph (ReduceMax takes ``axes`` as an attribute here, ReduceSum as an input).
OPSET = 17
#: bias at padded positions and the "no floor" value of ``pfloor``/``rfloor``.
PAD_BIAS = -1.0e4
#: names of the graph's inputs, in order.
INPUTS = ("E", "hidx", "ridx", "hw", "rw", "hbias", "rbias", "pfloor", "rfloor")
#: names of the graph's outputs, in order.
OUTPUTS = ("P", "R", "F")

_MODEL: bytes | None = None


def matcher_model() -> bytes:
    """The serialised matcher model (built once per process, checked by the onnx checker)."""
    global _MODEL
    if _MODEL is None:
        _MODEL = _build()
    return _MODEL


def _build() -> bytes:
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper, numpy_helper

    nodes: list = []
    inits: list = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    def op(op_type: str, inputs: list[str], out: str, **attrs) -> str:
        nodes.append(helper.make_node(op_type, inputs, [out], name=out + "_node", **attrs))
        return out

    last = const("axis_last", np.array([-1], dtype=np.int64))
    ax1 = const("axis_1", np.array([1], dtype=np.int64))
    ax2 = const("axis_2", np.array([2], dtype=np.int64))
    two = const("two", np.array(2.0, dtype=np.float32))

    def normalised(idx: str, tag: str) -> str:
        x = op("Gather", ["E", idx], f"{tag}_x", axis=0)                      # [B, L, D]
        sq = op("Mul", [x, x], f"{tag}_sq")
        norm = op("Sqrt", [op("ReduceSum", [sq, last], f"{tag}_ss", keepdims=1)], f"{tag}_norm")
        return op("Div", [x, norm], f"{tag}_n")

    hn = normalised("hidx", "h")
    rn = normalised("ridx", "r")
    sim = op("MatMul", [hn, op("Transpose", [rn], "r_t", perm=[0, 2, 1])], "sim0")      # [B, Lh, Lr]
    sim = op("Add", [sim, op("Unsqueeze", ["hbias", ax2], "hb3")], "sim1")
    sim = op("Add", [sim, op("Unsqueeze", ["rbias", ax1], "rb3")], "sim")
    wp = op("Max", [op("ReduceMax", [sim], "rowmax", axes=[2], keepdims=0),
                    op("Unsqueeze", ["pfloor", ax1], "pf2")], "wp")                    # [B, Lh]
    wr = op("Max", [op("ReduceMax", [sim], "colmax", axes=[1], keepdims=0),
                    op("Unsqueeze", ["rfloor", ax1], "rf2")], "wr")                    # [B, Lr]

    def weighted(v: str, w: str, out: str) -> str:
        num = op("ReduceSum", [op("Mul", [v, w], f"{out}_vw"), ax1], f"{out}_num", keepdims=0)
        den = op("ReduceSum", [w, ax1], f"{out}_den", keepdims=0)
        return op("Div", [num, den], out)

    p = weighted(wp, "hw", "P")
    r = weighted(wr, "rw", "R")
    op("Div", [op("Mul", [op("Mul", [two, p], "twoP"), r], "twoPR"), op("Add", [p, r], "PplusR")], "F")

    inputs = [helper.make_tensor_value_info("E", TP.FLOAT, ["N", "D"]),
              helper.make_tensor_value_info("hidx", TP.INT64, ["B", "Lh"]),
              helper.make_tensor_value_info("ridx", TP.INT64, ["B", "Lr"]),
              helper.make_tensor_value_info("hw", TP.FLOAT, ["B", "Lh"]),
              helper.make_tensor_value_info("rw", TP.FLOAT, ["B", "Lr"]),
              helper.make_tensor_value_info("hbias", TP.FLOAT, ["B", "Lh"]),
              helper.make_tensor_value_info("rbias", TP.FLOAT, ["B", "Lr"]),
              helper.make_tensor_value_info("pfloor", TP.FLOAT, ["B"]),
              helper.make_tensor_value_info("rfloor", TP.FLOAT, ["B"])]
    outputs = [helper.make_tensor_value_info(name, TP.FLOAT, ["B"]) for name in OUTPUTS]
    graph = helper.make_graph(nodes, "mtscore_greedy_matcher", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="mtscore")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model.SerializeToString()


def host_rules(prf: np.ndarray, len_h: np.ndarray, len_r: np.ndarray) -> np.ndarray:
    """The graph's float32 ``[n, 3]`` (P, R, F) as float64 ``[n, 3]`` with greedy_prf's host rules.

    ``len_h``/``len_r`` int64 ``[n]``: token counts of the pairs' sentences. F is kept as computed
    (before the empty rule, like :func:`mtscore.kernels._greedy.greedy_prf`); P = R = 0 where either
    sentence has exactly 2 tokens ([CLS][SEP]); a NaN F becomes 0.
    """
    out = np.asarray(prf, dtype=np.float64).copy()
    empty = (np.asarray(len_h) == 2) | (np.asarray(len_r) == 2)
    out[empty, 0] = 0.0
    out[empty, 1] = 0.0
    f = out[:, 2]
    f[np.isnan(f)] = 0.0
    return out
