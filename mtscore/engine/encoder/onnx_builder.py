"""Build an ONNX encoder graph directly from Hugging Face weights, without torch.

Supported families (``config.json`` ``model_type``):

* ``bert`` (BERT, MiniLM, most ``BertModel`` checkpoints), ``electra``-style names are not covered,
* ``roberta``, ``xlm-roberta``, ``camembert`` (position ids offset by ``pad_token_id + 1``, computed
  from ``input_ids != pad`` exactly like ``transformers``' ``create_position_ids_from_input_ids``),
* ``distilbert``.

The graph has inputs ``input_ids`` and ``attention_mask`` (int64, ``[batch, seq]``) and one output
``hidden_states`` (float32, ``[batch, seq, hidden]``) = ``hidden_states[layer]`` of the full model,
i.e. the encoder cut after ``layer`` transformer blocks (``layer=0`` is the embedding output). This is
the tensor ``bert_score`` uses for ``num_layers=layer``.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Callable, Protocol

import numpy as np

#: config ``model_type`` values whose weights this builder understands.
BERT_LIKE = {"bert", "roberta", "xlm-roberta", "camembert"}
SUPPORTED = BERT_LIKE | {"distilbert"}
OPSET = 17
#: bump when the generated graph changes, so cached exports are rebuilt.
BUILDER_VERSION = 1

_PREFIXES = ("bert.", "roberta.", "distilbert.", "model.", "encoder_model.")


class UnsupportedArchitecture(ValueError):
    pass


def _stripped(key: str) -> str:
    for p in _PREFIXES:
        if key.startswith(p):
            return key[len(p):]
    return key


def _strip_prefix(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {_stripped(k): v for k, v in weights.items()}


class InitializerSink(Protocol):
    """Where :class:`GraphBuilder` streams large initializers while it builds (the encoder cache's
    :class:`~mtscore.engine.encoder.cache.ExternalData`): once the initializers' total serialised
    size exceeds ``threshold`` bytes, every initializer of at least ``min_bytes`` bytes (the ones
    already made, then each new one) goes to ``write``, which stores its bytes and returns
    ``(location, offset)``; the graph keeps a reference to it (ONNX external data)."""

    threshold: int
    min_bytes: int

    def write(self, data: np.ndarray) -> tuple[str, int]: ...


#: numpy dtypes whose TensorProto (``numpy_helper.from_array``) is dims, data_type, name and the
#: little-endian bytes as ``raw_data``, nothing else: those can be written out without a proto copy
_RAW_KINDS = "biuf"


def _raw_size(header_bytes: int, n: int) -> int:
    """The serialised size of a TensorProto of ``header_bytes`` (without data) once it holds ``n``
    bytes of ``raw_data`` (field 9: a one-byte tag, the varint length, the bytes)."""
    return header_bytes + 1 + max(1, (n.bit_length() + 6) // 7) + n


class GraphBuilder:
    """Tiny helper around onnx.helper that names nodes and holds initializers: ``const`` adds an
    initializer (in the graph's dtype unless ``dtype`` is given), ``op`` a node; both return the
    name of the new value. Public so that graphs built on the encoder (COMET's sentence embedding)
    can add their own nodes.

    ``sink``: an :class:`InitializerSink` that takes the large initializers' bytes as soon as the
    graph is known to need external data (the same rule and order as the cache's ``save_model``,
    which writes them after the fact without a sink), so a graph of 2 GB of weights never holds
    them as protobuf copies: until then a large initializer is kept as the numpy array it was made
    from (often the checkpoint's own array, no copy), after that it goes straight to the sink."""

    def __init__(self, dtype: np.dtype, sink: InitializerSink | None = None):
        import onnx
        from onnx import helper, numpy_helper

        self.onnx, self.helper, self.numpy_helper = onnx, helper, numpy_helper
        self.nodes: list = []
        self.inits: list = []
        self.n = 0
        self.dtype = np.dtype(dtype)
        self.onnx_dtype = onnx.TensorProto.FLOAT16 if self.dtype == np.float16 else onnx.TensorProto.FLOAT
        self.sink = sink
        #: the serialised size of the initializers so far, with their data (what ``save_model`` sums)
        self.init_bytes = 0
        #: whether large initializers go to the sink (the total has exceeded its threshold)
        self.external = False
        # large initializers made before that: (their proto without data, the array), in order
        self._pending: list[tuple[Any, np.ndarray]] = []

    def name(self, base: str) -> str:
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, value, base: str = "c", dtype=None) -> str:
        arr = np.asarray(value, dtype=dtype if dtype is not None else self.dtype)
        name = self.name(base)
        self.add_initializer(name, arr)
        return name

    def add_initializer(self, name: str, arr: np.ndarray) -> None:
        """Add ``arr`` as the initializer ``name``: a TensorProto with ``raw_data`` (small, or no
        sink), else held as an array or written to the sink (see the class docstring)."""
        sink = self.sink
        if sink is None or arr.nbytes < sink.min_bytes or arr.dtype.kind not in _RAW_KINDS:
            t = self.numpy_helper.from_array(arr, name)
            self.inits.append(t)
            self.init_bytes += t.ByteSize()
        else:
            t = self.onnx.TensorProto()  # what from_array makes, without the data
            t.dims.extend(arr.shape)
            t.name = name
            t.data_type = self.helper.np_dtype_to_tensor_dtype(arr.dtype)
            self.inits.append(t)
            self.init_bytes += _raw_size(t.ByteSize(), arr.nbytes)
            if self.external:
                self._write(t, arr)
            else:
                self._pending.append((t, arr))
        if sink is not None and not self.external and self.init_bytes > sink.threshold:
            self.external = True
            self._pending.reverse()
            while self._pending:
                self._write(*self._pending.pop())

    def _write(self, t, arr: np.ndarray) -> None:
        """Store ``arr``'s bytes in the sink and point ``t`` at them (the fields and their order
        are those of ``onnx.external_data_helper.set_external_data``)."""
        assert self.sink is not None
        data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
        location, offset = self.sink.write(data)
        t.data_location = self.onnx.TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", offset), ("length", data.nbytes)):
            entry = t.external_data.add()
            entry.key = key
            entry.value = str(value)

    def take_initializers(self) -> list:
        """The initializers in order, emptied from the builder (the large ones still held as
        arrays given their ``raw_data`` now, each array dropped as soon as its bytes are in)."""
        self._pending.reverse()
        while self._pending:
            t, arr = self._pending.pop()
            # the bytes numpy_helper.from_array stores (little-endian, C order); its own helper for
            # them, tobytes_little_endian, is new in onnx 1.20 and the project allows onnx>=1.15
            t.raw_data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
            del arr
        inits, self.inits = self.inits, []
        return inits

    def op(self, op_type: str, inputs: list[str], base: str | None = None, domain: str = "",
           **attrs) -> str:
        out = self.name(base or op_type.lower())
        kw = {"domain": domain} if domain else {}
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], name=out + "_node", **kw, **attrs))
        return out


def _activation(g: GraphBuilder, x: str, act: str) -> str:
    act = (act or "gelu").lower()
    if act == "gelu":  # exact erf form (torch.nn.functional.gelu default)
        t = g.op("Div", [x, g.const(math.sqrt(2.0))])
        t = g.op("Erf", [t])
        t = g.op("Add", [t, g.const(1.0)])
        t = g.op("Mul", [x, t])
        return g.op("Mul", [t, g.const(0.5)])
    if act in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        x3 = g.op("Mul", [g.op("Mul", [x, x]), x])
        inner = g.op("Add", [x, g.op("Mul", [x3, g.const(0.044715)])])
        inner = g.op("Mul", [inner, g.const(math.sqrt(2.0 / math.pi))])
        t = g.op("Add", [g.op("Tanh", [inner]), g.const(1.0)])
        return g.op("Mul", [g.op("Mul", [x, t]), g.const(0.5)])
    if act == "relu":
        return g.op("Relu", [x])
    if act in ("silu", "swish"):
        return g.op("Mul", [x, g.op("Sigmoid", [x])])
    raise UnsupportedArchitecture(f"activation {act!r} is not supported by the ONNX builder")


def _linear(g: GraphBuilder, x: str, w: np.ndarray, b: np.ndarray | None, base: str) -> str:
    # HF Linear stores weight as [out, in]; MatMul wants [in, out].
    y = g.op("MatMul", [x, g.const(np.ascontiguousarray(w.T), base + "_w")])
    if b is not None:
        y = g.op("Add", [y, g.const(b, base + "_b")])
    return y


def _layer_norm(g: GraphBuilder, x: str, w: np.ndarray, b: np.ndarray, eps: float, base: str) -> str:
    return g.op("LayerNormalization", [x, g.const(w, base + "_g"), g.const(b, base + "_b")],
                axis=-1, epsilon=float(eps))


def _attention(g: GraphBuilder, x: str, mask_bias: str, W: Callable[[str], np.ndarray], names: dict[str, str],
               n_heads: int, hidden: int, base: str) -> str:
    dh = hidden // n_heads
    shape_bthd = g.const(np.array([0, 0, n_heads, dh], dtype=np.int64), "shp", dtype=np.int64)

    def heads(t: str) -> str:
        r = g.op("Reshape", [t, shape_bthd])
        return g.op("Transpose", [r], perm=[0, 2, 1, 3])  # [B, H, T, dh]

    q = heads(_linear(g, x, W(names["q"] + ".weight"), W(names["q"] + ".bias"), base + "_q"))
    k = _linear(g, x, W(names["k"] + ".weight"), W(names["k"] + ".bias"), base + "_k")
    k = g.op("Transpose", [g.op("Reshape", [k, shape_bthd])], perm=[0, 2, 3, 1])  # [B, H, dh, T]
    v = heads(_linear(g, x, W(names["v"] + ".weight"), W(names["v"] + ".bias"), base + "_v"))
    scores = g.op("MatMul", [q, k])
    scores = g.op("Div", [scores, g.const(math.sqrt(dh))])
    scores = g.op("Add", [scores, mask_bias])
    probs = g.op("Softmax", [scores], axis=-1)
    ctx = g.op("MatMul", [probs, v])  # [B, H, T, dh]
    ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3])
    ctx = g.op("Reshape", [ctx, g.const(np.array([0, 0, hidden], dtype=np.int64), "shp", dtype=np.int64)])
    return _linear(g, ctx, W(names["o"] + ".weight"), W(names["o"] + ".bias"), base + "_o")


class _Weights:
    """The model's parameters by name (prefix stripped), as ``dtype`` arrays; a missing name
    raises :class:`UnsupportedArchitecture`. ``consume``: each parameter is removed from the
    caller's ``weights`` dict when it is taken (each is taken once), so the dict stops holding the
    arrays the graph has turned into initializers."""

    def __init__(self, weights: dict[str, np.ndarray], dtype: np.dtype, model_type: str, consume: bool = False):
        self.table = _strip_prefix(weights)
        self.dtype = dtype
        self.model_type = model_type
        self.source = weights if consume else None
        # stripped name -> the caller's key, to pop it there too
        self.keys = {_stripped(k): k for k in weights} if consume else {}

    def __contains__(self, name: str) -> bool:
        return name in self.table

    def __call__(self, name: str) -> np.ndarray:
        try:
            value = self.table.pop(name) if self.source is not None else self.table[name]
        except KeyError:
            raise UnsupportedArchitecture(f"weight {name!r} missing for model_type {self.model_type!r}") from None
        if self.source is not None:
            self.source.pop(self.keys[name], None)
        return np.asarray(value, dtype=self.dtype)


def build_encoder_graph(config: dict, weights: dict[str, np.ndarray], layer: int,
                        dtype=np.float32, producer: str = "mtscore", *, sink: InitializerSink | None = None,
                        consume: bool = False):
    """Return an ``onnx.ModelProto`` computing ``hidden_states[layer]``.

    ``weights`` maps parameter names (as in ``model.safetensors``) to numpy arrays. ``dtype`` is
    float32 (exact) or float16 (for GPU execution; the output is always cast to float32).
    ``sink``: large initializers streamed out while building (:class:`GraphBuilder`);
    ``consume``: each weight the graph uses is removed from ``weights`` as it is used.
    Raises :class:`UnsupportedArchitecture` for a ``model_type`` this builder does not know.
    """
    mt = config.get("model_type", "")
    if mt not in SUPPORTED:
        raise UnsupportedArchitecture(
            f"model_type {mt!r} is not supported by the torch-free ONNX builder "
            f"(supported: {', '.join(sorted(SUPPORTED))})")
    g = GraphBuilder(np.dtype(dtype), sink)
    hidden, _, n_layers, _, _ = _encoder_dims(mt, config)
    if not 0 <= layer <= n_layers:
        raise ValueError(f"layer {layer} out of range: the model has {n_layers} layers (0..{n_layers})")
    *_, x = encoder_hidden_states(g, config, weights, layer, consume=consume)
    return finish_model(g, x, "hidden_states", ["batch", "seq", hidden], f"{mt}_encoder_L{layer}", producer)


def encoder_hidden_states(g: GraphBuilder, config: dict, weights: dict[str, np.ndarray], last: int,
                          ids: str = "input_ids", mask: str = "attention_mask",
                          consume: bool = False) -> Iterator[str]:
    """Add the encoder to ``g`` and yield the names of ``hidden_states[0..last]`` (in ``g``'s dtype,
    ``[batch, seq, hidden]``) one by one, each as soon as it is built, so a caller can consume hidden
    state ``k`` (e.g. add it into a running sum) before block ``k + 1`` exists. ``ids`` / ``mask``
    name the graph's int64 ``[batch, seq]`` inputs. Weights are cast to ``g.dtype`` (fp16 -> fp32
    exactly). ``consume``: each weight is removed from ``weights`` when the graph takes it (the
    dict then holds only what the graph did not use). Raises :class:`UnsupportedArchitecture` /
    ``ValueError`` as :func:`build_encoder_graph`."""
    mt = config.get("model_type", "")
    if mt not in SUPPORTED:
        raise UnsupportedArchitecture(
            f"model_type {mt!r} is not supported by the torch-free ONNX builder "
            f"(supported: {', '.join(sorted(SUPPORTED))})")
    W = _Weights(weights, g.dtype, mt, consume)
    hidden, n_heads, n_layers, act, eps = _encoder_dims(mt, config)
    if not 0 <= last <= n_layers:
        raise ValueError(f"layer {last} out of range: the model has {n_layers} layers (0..{n_layers})")
    x = _embeddings(g, W, config, ids, eps)
    yield x
    bias = _mask_bias(g, mask)
    for i in range(last):
        x = _block(g, x, bias, W, _block_names(mt, i), n_heads, hidden, act, eps, f"l{i}")
        yield x


def _encoder_dims(mt: str, config: dict):
    """``(hidden, n_heads, n_layers, activation, layer-norm eps)`` of a supported config."""
    if mt == "distilbert":
        return config["dim"], config["n_heads"], config["n_layers"], config.get("activation", "gelu"), 1e-12
    hidden, n_heads = config["hidden_size"], config["num_attention_heads"]
    n_layers, act = config["num_hidden_layers"], config.get("hidden_act", "gelu")
    eps = config.get("layer_norm_eps", 1e-12)
    pet = config.get("position_embedding_type", "absolute")
    if pet not in (None, "absolute"):
        raise UnsupportedArchitecture(f"position_embedding_type {pet!r} is not supported")
    return hidden, n_heads, n_layers, act, eps


def _embeddings(g: GraphBuilder, W: _Weights, config: dict, ids: str, eps: float) -> str:
    """Word (+ token type 0) + position embeddings, layer-normalised: ``hidden_states[0]``."""
    mt = W.model_type
    word = g.op("Gather", [g.const(W("embeddings.word_embeddings.weight"), "word_emb"), ids], axis=0)
    pos_table = W("embeddings.position_embeddings.weight")
    if mt in BERT_LIKE and "embeddings.token_type_embeddings.weight" in W:
        # token_type_ids are never passed (bert_score passes none) -> type 0 for every token.
        tt0 = W("embeddings.token_type_embeddings.weight")[0]
        word = g.op("Add", [word, g.const(tt0, "tok_type0")])
    if mt in ("roberta", "xlm-roberta", "camembert"):
        pad = int(config.get("pad_token_id", 1))
        not_pad = g.op("Cast", [g.op("Not", [g.op("Equal", [ids, g.const(pad, "pad", np.int64)])])],
                       to=g.onnx.TensorProto.INT64)
        pos_ids = g.op("Mul", [g.op("CumSum", [not_pad, g.const(1, "axis", np.int64)]), not_pad])
        pos_ids = g.op("Add", [pos_ids, g.const(pad, "pad", np.int64)])
    else:
        seq_len = g.op("Gather", [g.op("Shape", [ids]), g.const(1, "one", np.int64)], axis=0)
        pos_ids = g.op("Range", [g.const(0, "zero", np.int64), seq_len, g.const(1, "one", np.int64)])
        pos_ids = g.op("Unsqueeze", [pos_ids, g.const([0], "ax0", np.int64)])
    pos = g.op("Gather", [g.const(pos_table, "pos_emb"), pos_ids], axis=0)
    x = g.op("Add", [word, pos])
    return _layer_norm(g, x, W("embeddings.LayerNorm.weight"), W("embeddings.LayerNorm.bias"), eps, "emb_ln")


def _mask_bias(g: GraphBuilder, mask: str) -> str:
    """Additive mask bias [B, 1, 1, T]: 0 for real tokens, a large negative number for padding."""
    neg = -1.0e4 if g.dtype == np.float16 else -3.0e38
    m = g.op("Cast", [mask], to=g.onnx_dtype)
    bias = g.op("Mul", [g.op("Sub", [g.const(1.0), m]), g.const(neg)])
    return g.op("Unsqueeze", [bias, g.const([1, 2], "ax12", np.int64)])


def _block_names(mt: str, i: int) -> dict[str, str]:
    """Parameter name stems of transformer block ``i``: attention q/k/v/o, the two layer norms
    (ln1 after attention, ln2 after the feed-forward) and the feed-forward layers ff1/ff2."""
    if mt == "distilbert":
        p = f"transformer.layer.{i}."
        return {"q": p + "attention.q_lin", "k": p + "attention.k_lin", "v": p + "attention.v_lin",
                "o": p + "attention.out_lin", "ln1": p + "sa_layer_norm", "ff1": p + "ffn.lin1",
                "ff2": p + "ffn.lin2", "ln2": p + "output_layer_norm"}
    p = f"encoder.layer.{i}."
    return {"q": p + "attention.self.query", "k": p + "attention.self.key",
            "v": p + "attention.self.value", "o": p + "attention.output.dense",
            "ln1": p + "attention.output.LayerNorm", "ff1": p + "intermediate.dense",
            "ff2": p + "output.dense", "ln2": p + "output.LayerNorm"}


def _block(g: GraphBuilder, x: str, bias: str, W: _Weights, names: dict[str, str], n_heads: int, hidden: int,
           act: str, eps: float, base: str) -> str:
    """One post-norm transformer block: attention, add & norm, feed-forward, add & norm."""
    a = _attention(g, x, bias, W, names, n_heads, hidden, base)
    x = _layer_norm(g, g.op("Add", [a, x]), W(names["ln1"] + ".weight"), W(names["ln1"] + ".bias"), eps,
                    base + "_ln1")
    f = _linear(g, x, W(names["ff1"] + ".weight"), W(names["ff1"] + ".bias"), base + "_ff1")
    f = _activation(g, f, act)
    f = _linear(g, f, W(names["ff2"] + ".weight"), W(names["ff2"] + ".bias"), base + "_ff2")
    return _layer_norm(g, g.op("Add", [f, x]), W(names["ln2"] + ".weight"), W(names["ln2"] + ".bias"), eps,
                       base + "_ln2")


def finish_model(g: GraphBuilder, x: str, output: str, shape: list, graph_name: str, producer: str,
                 cast: bool = True):
    """The ``onnx.ModelProto`` of ``g`` with inputs ``input_ids`` / ``attention_mask`` (int64
    ``[batch, seq]``) and one float32 output named ``output`` of symbolic ``shape`` = the value
    ``x``, cast to float32 when ``g`` is float16 unless ``cast`` is False (``x`` float32 already)."""
    h = g.helper
    if cast and g.dtype != np.float32:
        x = g.op("Cast", [x], to=g.onnx.TensorProto.FLOAT)
    g.nodes.append(h.make_node("Identity", [x], [output], name="output_node"))
    TP = g.onnx.TensorProto
    inputs = [h.make_tensor_value_info("input_ids", TP.INT64, ["batch", "seq"]),
              h.make_tensor_value_info("attention_mask", TP.INT64, ["batch", "seq"])]
    outputs = [h.make_tensor_value_info(output, TP.FLOAT, shape)]
    # the initializers are moved into the model one at a time (protobuf copies each message it is
    # given; the builder's copy is dropped right after), instead of make_graph(initializer=...)
    # followed by make_model, which held three copies of every weight at once (XLM-R large:
    # 3 x 2.2 GB); the model is the same, byte for byte
    graph = h.make_graph(g.nodes, graph_name, inputs, outputs)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name=producer)
    del graph
    inits = model.graph.initializer
    made = g.take_initializers()
    made.reverse()
    while made:
        inits.append(made.pop())
    model.ir_version = 8
    return model


def model_dims(config: dict):
    """(hidden_size, num_heads, num_layers) of a config (BERT-like or DistilBERT names)."""
    if config.get("model_type") == "distilbert":
        return config["dim"], config["n_heads"], config["n_layers"]
    return config["hidden_size"], config["num_attention_heads"], config["num_hidden_layers"]
