"""COMET's estimator head: the sentence features and the feed-forward on top of them, in numpy
float32 (CPU) and as a small ONNX graph (so that on CUDA the embeddings never leave the device).

What unbabel-comet 2.2.7 computes (Rei et al., 2020, "COMET: A Neural Framework for MT Evaluation";
Rei et al., 2022, "CometKiwi"), read from ``comet/models/regression/{regression_metric,referenceless}.py``,
``comet/models/multitask/unified_metric.py`` and ``comet/modules/feedforward.py``:

* features, concatenated along the embedding axis in this order (:data:`.spec.FEATURES`):
  ``regression_metric``: ``[mt; ref; mt*ref; |mt-ref|; mt*src; |mt-src|]`` (``estimate``);
  ``referenceless_regression_metric``: ``[mt; src; mt*src; |mt-src|]`` (``forward``);
  ``unified_metric``: the first-token embedding of the joint ``<s> mt </s></s> src </s>`` sequence
  alone (``forward``: ``sentemb = embeddings[:, 0, :]``);
* the estimator ``FeedForward``: ``Linear, act, Dropout`` per hidden size, then ``Linear(.., 1)``
  and ``final_activation`` when it is not null; activations are ``getattr(torch.nn, name.title())``,
  so only names whose title case is a ``torch.nn`` class work there ("Tanh", "Sigmoid"; "relu" ->
  "Relu" is no ``torch.nn`` class); mtscore supports Tanh and Sigmoid
  (:data:`.model.ACTIVATIONS`); dropout is the identity at inference;
* the reported score is the estimator's output ``.view(-1)``, the final activation included; for
  ``unified_metric`` with ``input_segments: [mt, src]`` (the only one mtscore accepts)
  ``predict_step`` returns that one forward's score (the three-way average is only for inputs with
  a reference).

All arithmetic stays float32 (one matrix product per layer for the whole batch; numpy's float32
``matmul`` is BLAS sgemm, accumulating in float32 as torch's CPU ``Linear`` does).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .spec import FEATURES, CometSpec, EstimatorLayer

if TYPE_CHECKING:
    import onnx

__all__ = ["HEAD_OPSET", "PAIR_ROWS", "build_head_graph", "comet_features", "head_inputs", "head_scores", "head_scores_pairs"]

#: the ONNX opset of :func:`build_head_graph`
HEAD_OPSET = 17
#: the sentence embeddings each feature name is built from
_SOURCES = {"mt": ("mt",), "src": ("src",), "ref": ("ref",), "joint": ("joint",), "mt*ref": ("mt", "ref"),
            "|mt-ref|": ("mt", "ref"), "mt*src": ("mt", "src"), "|mt-src|": ("mt", "src")}
_WHAT = {"mt": "the translations' embeddings (h)", "src": "the sources' embeddings (s)",
         "ref": "the references' embeddings (r)", "joint": "the joint mt+src embeddings (h)"}
#: rows of pairwise features built at once by :func:`head_scores_pairs` (bounds its memory)
PAIR_ROWS = 4096


def _layout(spec_or_features: CometSpec | Sequence[str]) -> tuple[str, tuple[str, ...], int | None]:
    """(name for messages, feature names, hidden size or None)."""
    if isinstance(spec_or_features, CometSpec):
        return spec_or_features.class_identifier, spec_or_features.features, spec_or_features.dims.hidden
    features = tuple(spec_or_features)
    for cid, known in FEATURES.items():
        if features == known:
            return cid, features, None
    raise ValueError(f"features {features!r}: not a COMET feature layout (known: "
                     + "; ".join(f"{c}: {list(f)}" for c, f in FEATURES.items()) + ")")


def head_inputs(spec_or_features: CometSpec | Sequence[str]) -> tuple[str, ...]:
    """The sentence embeddings a class's head takes, in the order of :func:`comet_features`'s
    arguments: ``("mt", "ref", "src")`` minus the unused ones (regression: mt, src, ref ->
    ``("mt", "src", "ref")``; referenceless: ``("mt", "src")``; unified: ``("joint",)``). These are
    also the input names of :func:`build_head_graph`."""
    _, features, _ = _layout(spec_or_features)
    used = {s for f in features for s in _SOURCES[f]}
    return tuple(n for n in ("joint", "mt", "src", "ref") if n in used)


def _as_matrix(x: np.ndarray | None, name: str, cid: str, rows: int | None, hidden: int | None) -> np.ndarray:
    if x is None:
        raise ValueError(f"{cid}: {_WHAT[name]} are missing: the {cid} head needs "
                         f"{', '.join(_WHAT[n] for n in head_inputs(FEATURES[cid]))}")
    a = np.asarray(x)
    if a.ndim != 2 or a.dtype.kind != "f":
        raise ValueError(f"{cid}: {_WHAT[name]}: expected a float [batch, hidden] array, got "
                         f"{a.dtype} {list(a.shape)}")
    if rows is not None and a.shape[0] != rows:
        raise ValueError(f"{cid}: {_WHAT[name]}: {a.shape[0]} rows, but the translations' embeddings (h) "
                         f"have {rows}")
    if hidden is not None and a.shape[1] != hidden:
        raise ValueError(f"{cid}: {_WHAT[name]}: width {a.shape[1]}, expected the encoder's hidden size {hidden}")
    return np.ascontiguousarray(a, dtype=np.float32)


def comet_features(spec_or_features: CometSpec | Sequence[str], h: np.ndarray, s: np.ndarray | None = None,
                   r: np.ndarray | None = None) -> np.ndarray:
    """The estimator's input features, float32 ``[B, F * H]`` (F = ``len(features)``), laid out as
    COMET concatenates them (see the module docstring).

    ``spec_or_features``: a :class:`CometSpec` (its ``features``, and its hidden size checked) or one
    of the tuples of :data:`.spec.FEATURES`. ``h``: the translations' sentence embeddings
    ``[B, H]`` (for ``unified_metric``: the pooled joint ``mt``+``src`` embeddings); ``s``: the
    sources' ``[B, H]``; ``r``: the references' ``[B, H]``. Any float dtype is taken and computed
    in float32. Raises ValueError naming the class and the input when one the layout needs is
    missing, one it does not use is given (``r`` for a referenceless model, ``s``/``r`` for
    ``unified_metric``), or the shapes disagree."""
    cid, features, hidden = _layout(spec_or_features)
    given = {"src": s, "ref": r}
    used = head_inputs(features)
    for name, value in given.items():
        if value is not None and name not in used:
            raise ValueError(f"{cid}: {_WHAT[name]} were given, but the {cid} head does not use them "
                             f"(it takes {', '.join(_WHAT[n] for n in used)})")
    hh = _as_matrix(h, "joint" if "joint" in used else "mt", cid, None, hidden)
    B, H = hh.shape
    emb = {"mt": hh, "joint": hh}
    for name, value in given.items():
        if name in used:
            emb[name] = _as_matrix(value, name, cid, B, H)
    out = np.empty((B, len(features) * H), dtype=np.float32)
    for k, f in enumerate(features):
        block = out[:, k * H:(k + 1) * H]
        if f in emb:
            block[...] = emb[f]
        elif f.startswith("|"):
            other = emb[_SOURCES[f][1]]
            np.subtract(hh, other, out=block)
            np.abs(block, out=block)
        else:
            np.multiply(hh, emb[_SOURCES[f][1]], out=block)
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """float32 logistic function without overflow: ``e = exp(-|x|)``, ``1/(1+e)`` or ``e/(1+e)``."""
    e = np.exp(-np.abs(x))
    d = e + np.float32(1.0)
    return np.where(x >= 0, np.float32(1.0) / d, e / d).astype(np.float32, copy=False)


def _apply(x: np.ndarray, activation: str | None, index: int) -> np.ndarray:
    if activation is None:
        return x
    if activation == "Tanh":
        return np.tanh(x, out=x)
    if activation == "Sigmoid":
        return _sigmoid(x)
    raise ValueError(f"estimator layer {index}: activation {activation!r} is not supported (Tanh, Sigmoid, None)")


def _check_estimator(spec: CometSpec) -> tuple[EstimatorLayer, ...]:
    layers = spec.estimator
    if not layers:
        raise ValueError(f"{spec.class_identifier}: the estimator has no layers")
    width = spec.feature_dim
    for j, layer in enumerate(layers):
        out, inp = layer.shape
        if inp != width or layer.bias.shape != (out,):
            raise ValueError(f"{spec.class_identifier}: estimator layer {j}: weight {list(layer.weight.shape)} "
                             f"bias {list(layer.bias.shape)} do not take {width} inputs")
        width = out
    if width != 1:
        raise ValueError(f"{spec.class_identifier}: the estimator's last layer has {width} outputs, expected 1")
    return layers


def head_scores(spec: CometSpec, features: np.ndarray) -> np.ndarray:
    """The estimator on ``features`` (float32 ``[B, F * H]`` from :func:`comet_features`): float32
    ``[B]``, the score COMET reports (final activation included). Each layer is one float32 matrix
    product for the whole batch plus the bias, then its activation, as torch's ``Linear`` + ``Tanh``
    / ``Sigmoid`` (dropout is the identity at inference). Raises ValueError on a features width
    other than the spec's ``feature_dim``."""
    layers = _check_estimator(spec)
    x = np.asarray(features)
    if x.ndim != 2 or x.shape[1] != spec.feature_dim:
        raise ValueError(f"{spec.class_identifier}: features {list(x.shape)}: expected [batch, {spec.feature_dim}] "
                         f"({len(spec.features)} x hidden {spec.dims.hidden})")
    return _layers(layers, np.ascontiguousarray(x, dtype=np.float32), 0)


def _layers(layers: Sequence[EstimatorLayer], x: np.ndarray, first: int) -> np.ndarray:
    """``layers`` (numbered from ``first`` in messages) on float32 ``x``; the last output flattened."""
    for j, layer in enumerate(layers, first):
        w = np.asarray(layer.weight, dtype=np.float32)
        b = np.asarray(layer.bias, dtype=np.float32)
        y = np.matmul(x, w.T)
        y += b
        x = _apply(y, layer.activation, j)
    return x.reshape(-1)


def head_scores_pairs(spec: CometSpec, hyp: np.ndarray, pseudo_ref: np.ndarray, s: np.ndarray,
                      *, block_rows: int = PAIR_ROWS, factored: bool = True) -> np.ndarray:
    """MBR utilities of a ``regression_metric``: float32 ``[n, m]``, entry ``(i, j)`` the score of
    ``hyp[i]`` against the reference ``pseudo_ref[j]`` with the one source ``s``.

    ``hyp``: ``[n, H]``, ``pseudo_ref``: ``[m, H]``, ``s``: ``[H]`` or ``[1, H]`` (the source shared by
    every pair). Pairs are evaluated ``block_rows`` (default :data:`PAIR_ROWS`) at a time, whole rows
    of hypotheses per block (at least one), so memory stays at about ``block_rows * (F * H + the
    first hidden size) * 4`` bytes.

    ``factored`` (default): the first layer is linear in the features, so its product is split into
    the part of ``[mt; mt*src; |mt-src|]`` (once per hypothesis), of ``ref`` (once per reference) and
    of ``[mt*ref; |mt-ref|]`` (per pair): a third of the first layer's per-pair work (the largest:
    ``6H x 3072`` of wmt22-comet-da's ``6H x 3072 + 3072 x 1024``), ~2.3x fewer operations in all;
    float32 throughout, it differs from the explicit triple only in summation order (~1e-7 at real
    sizes). ``factored=False`` builds each pair's full features and runs :func:`head_scores` on them.
    Raises ValueError for the other classes (a referenceless model uses no reference;
    ``unified_metric`` encodes mt and src jointly, so its head cannot pair embeddings) and on shape
    mismatches."""
    cid = spec.class_identifier
    if cid != "regression_metric":
        raise ValueError(f"{cid}: pairwise (MBR) utilities need a model with references (regression_metric); "
                         f"{cid} takes " + ", ".join(_WHAT[n] for n in head_inputs(spec)))
    layers = _check_estimator(spec)
    H = spec.dims.hidden
    hh = _as_matrix(hyp, "mt", cid, None, H)
    rr = _as_matrix(pseudo_ref, "ref", cid, None, H)
    src = np.asarray(s)
    if src.ndim == 1:
        src = src[None, :]
    if src.ndim != 2 or src.shape[0] != 1:
        raise ValueError(f"{cid}: {_WHAT['src']}: {list(src.shape)}: expected the one source, [H] or [1, H]")
    ss = _as_matrix(src, "src", cid, 1, H)
    if block_rows < 1:
        raise ValueError(f"block_rows: {block_rows}: expected a positive number of rows")
    n, m = hh.shape[0], rr.shape[0]
    out = np.empty((n, m), dtype=np.float32)
    if n == 0 or m == 0:
        return out
    step = max(1, block_rows // m)
    if factored:
        w1 = np.asarray(layers[0].weight, dtype=np.float32)
        cols = {f: w1[:, k * H:(k + 1) * H] for k, f in enumerate(spec.features)}
        per_hyp = comet_features(("mt", "src", "mt*src", "|mt-src|"), hh, np.broadcast_to(ss, hh.shape))
        w_hyp = np.concatenate([cols["mt"], cols["mt*src"], cols["|mt-src|"]], axis=1)
        row_part = np.matmul(np.concatenate([per_hyp[:, :H], per_hyp[:, 2 * H:]], axis=1), w_hyp.T)
        row_part += np.asarray(layers[0].bias, dtype=np.float32)  # [n, o]
        col_part = np.matmul(rr, cols["ref"].T)                     # [m, o]
        w_pair = np.ascontiguousarray(np.concatenate([cols["mt*ref"], cols["|mt-ref|"]], axis=1).T)  # [2H, o]
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        k = i1 - i0
        h_blk = np.repeat(hh[i0:i1], m, axis=0)  # row i*m + j = hyp[i0 + i]
        r_blk = np.tile(rr, (k, 1))               # row i*m + j = pseudo_ref[j]
        if not factored:
            feats = comet_features(spec, h_blk, np.broadcast_to(ss, h_blk.shape), r_blk)
            out[i0:i1] = head_scores(spec, feats).reshape(k, m)
            continue
        pair = np.empty((k * m, 2 * H), dtype=np.float32)
        np.multiply(h_blk, r_blk, out=pair[:, :H])
        np.subtract(h_blk, r_blk, out=pair[:, H:])
        np.abs(pair[:, H:], out=pair[:, H:])
        z = np.matmul(pair, w_pair).reshape(k, m, -1)
        z += row_part[i0:i1, None, :]
        z += col_part[None, :, :]
        x = _apply(z.reshape(k * m, -1), layers[0].activation, 0)
        out[i0:i1] = _layers(layers[1:], x, 1).reshape(k, m)
    return out


def build_head_graph(spec: CometSpec, *, pairs: bool = False) -> onnx.ModelProto:
    """The head as an ONNX graph (opset :data:`HEAD_OPSET`): inputs the sentence embeddings the class
    takes (:func:`head_inputs`: ``mt``, ``src``, ``ref`` for regression_metric; ``mt``, ``src`` for
    referenceless; ``joint`` for unified_metric), each float32 ``[batch, H]``; output ``score``
    float32 ``[batch]``. The features are built as :func:`comet_features` (``Mul``, ``Sub``+``Abs``,
    one ``Concat``), each layer is a ``Gemm`` (weights ``[out, in]``, ``transB=1``) and its
    activation. Needs ``onnx`` (the ``bertscore`` extra).

    ``pairs=True`` (regression_metric only): the MBR form of :func:`head_scores_pairs`: inputs
    ``mt`` ``[n, H]``, ``ref`` ``[m, H]``, ``src`` ``[1, H]``; output ``score`` ``[n, m]`` (every
    hypothesis against every reference, the features of all ``n * m`` pairs built on the device:
    the caller bounds memory by passing blocks of ``mt`` rows)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    layers = _check_estimator(spec)
    if pairs and spec.class_identifier != "regression_metric":
        raise ValueError(f"{spec.class_identifier}: pairwise (MBR) utilities need a model with references "
                         "(regression_metric)")
    H = spec.dims.hidden
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out + "_node", **attrs))
        return out

    def const(value: np.ndarray, name: str) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    names = head_inputs(spec)
    emb = {n: n for n in names}
    if pairs:  # mt [n, 1, H], ref [1, m, H], src [1, 1, H]: the pairs by broadcasting
        emb = {n: node("Unsqueeze", [n, const(np.array([1 if n == "mt" else 0], np.int64), f"{n}_axis")],
                       f"{n}_3d") for n in names}
        shape3 = node("Shape", [node("Mul", [emb["mt"], emb["ref"]], "pair_probe")], "pair_shape")
    blocks = []
    for k, f in enumerate(spec.features):
        src = [emb[n] for n in _SOURCES[f]]
        if len(src) == 1:
            block = src[0]
        elif f.startswith("|"):
            block = node("Abs", [node("Sub", src, f"diff_{k}")], f"absdiff_{k}")
        else:
            block = node("Mul", src, f"prod_{k}")
        if pairs and set(_SOURCES[f]) != {"mt", "ref"}:  # only mt*ref and |mt-ref| are [n, m, H] already
            block = node("Expand", [block, shape3], f"pairs_{k}")
        blocks.append(block)
    x = node("Concat", blocks, "features", axis=-1) if len(blocks) > 1 else blocks[0]
    if pairs:
        x = node("Reshape", [x, const(np.array([-1, spec.feature_dim], np.int64), "rows_shape")], "pair_rows")
    for j, layer in enumerate(layers):
        w = const(np.ascontiguousarray(layer.weight, dtype=np.float32), f"ff_{j}_weight")
        b = const(np.ascontiguousarray(layer.bias, dtype=np.float32), f"ff_{j}_bias")
        x = node("Gemm", [x, w, b], f"ff_{j}_linear", transB=1)
        if layer.activation is not None:
            if layer.activation not in ("Tanh", "Sigmoid"):
                raise ValueError(f"estimator layer {j}: activation {layer.activation!r} is not supported "
                                 "(Tanh, Sigmoid, None)")
            x = node(layer.activation, [x], f"ff_{j}_{layer.activation.lower()}")
    if pairs:
        nm = node("Slice", [shape3, const(np.array([0], np.int64), "nm_start"),
                            const(np.array([2], np.int64), "nm_end")], "nm_shape")
        node("Reshape", [x, nm], "score")
        dims: dict[str, list[str | int]] = {"mt": ["n", H], "ref": ["m", H], "src": [1, H]}
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims[n]) for n in names]
        output = helper.make_tensor_value_info("score", TensorProto.FLOAT, ["n", "m"])
    else:
        node("Reshape", [x, const(np.array([-1], np.int64), "score_shape")], "score")
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", H]) for n in names]
        output = helper.make_tensor_value_info("score", TensorProto.FLOAT, ["batch"])
    graph = helper.make_graph(nodes, f"comet_head_{spec.class_identifier}" + ("_pairs" if pairs else ""), inputs,
                              [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", HEAD_OPSET)],
                              producer_name="mtscore.engine.comet.head")
    model.ir_version = 8  # opset 17 needs IR 8 (as the encoder graphs: older onnxruntime reads no newer IR)
    onnx.checker.check_model(model)
    return model
