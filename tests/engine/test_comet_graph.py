"""COMET's sentence-embedding graph (mtscore.engine.comet.graph) against two references on a tiny
random XLM-R: transformers' ``XLMRobertaModel(output_hidden_states=True)`` + torch ops written the
way unbabel-comet 2.2.7 writes them (layerwise_attention.py, pooling_utils.py, entmax's sparsemax),
and a float64 numpy version of the same math on the same hidden states. Every combination of mix
(softmax / sparsemax with and without zero weights / one layer), layer norm and pooling, with
non-uniform scalars and gamma != 1; the pool values avg, max, cls and default (the last hidden
state's first token, whatever the mix); padding does not move a sentence's embedding by a bit; fp16
encoder."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from comet_fixtures import TINY, as_numpy, state_dict, tiny_config, torch_and_transformers

from mtscore.engine.checkpoints import read_hparams
from mtscore.engine.comet import comet_spec
from mtscore.engine.comet.graph import (
    OUTPUT,
    build_comet_embedding_graph,
    mix_weights,
    softmax_f32,
    sparsemax_f32,
)

ort = pytest.importorskip("onnxruntime")
PAD = TINY["pad_token_id"]
L = TINY["num_hidden_layers"]

# name -> (layer, mix, scalars); scalars chosen so that the sparsemax weights are all non-zero,
# zero in the middle, zero at the top (the top block is then not built)
MIXES = {
    "softmax": (None, "softmax", [0.3, -0.7, 1.1]),
    "sparsemax": (None, "sparsemax", [0.5, 0.3, 0.4]),       # [0.433, 0.233, 0.333]
    "sparsemax-mid0": (None, "sparsemax", [0.9, 0.2, 0.6]),  # [0.65, 0, 0.35]
    "sparsemax-top0": (None, "sparsemax", [1.5, 2.0, 0.1]),  # [0.25, 0.75, 0]
    "layer1": (1, None, None),
    "layer2": (2, None, None),
}
CASES = [(m, ln, pool) for m in MIXES for ln in (False, True) for pool in ("avg", "max", "cls")
         if not (ln and MIXES[m][0] is not None)]
# "default" ignores the mix and the layer: one case of each kind
CASES += [("sparsemax-top0", True, "default"), ("layer1", False, "default")]


def _spec(tmp_path, name: str, layer_norm: bool, pool: str, gamma: float = 1.75):
    from comet_fixtures import HPARAMS

    f = tmp_path / "hparams.yaml"
    f.write_text(HPARAMS["regression_metric"])
    sd = as_numpy(state_dict("regression_metric"))
    rng = np.random.default_rng(7)
    for k in sd:  # transformers inits LayerNorm to (1, 0): every hidden state would have mean ~0
        if "LayerNorm" in k:
            sd[k] = sd[k] + rng.normal(0.5 if k.endswith("bias") else 0.0, 0.5, sd[k].shape).astype(np.float32)
    base = comet_spec(read_hparams(f), tiny_config(), sd)
    layer, mix, scalars = MIXES[name]
    if layer is not None:
        return dataclasses.replace(base, layer=layer, mix=None, layer_norm=False, scalar_parameters=None,
                                   gamma=None, pool=pool)
    return dataclasses.replace(base, mix=mix, layer_norm=layer_norm, pool=pool, gamma=gamma,
                               scalar_parameters=np.array(scalars, np.float32))


def _batch(lengths, seed=0):
    """XLM-R-like ids: <s> (0) ... </s> (2), pieces 3..23, padded with 1; mask 1 on real tokens."""
    rng = np.random.default_rng(seed)
    T = max(lengths)
    ids = np.full((len(lengths), T), PAD, np.int64)
    mask = np.zeros((len(lengths), T), np.int64)
    for i, n in enumerate(lengths):
        ids[i, :n] = [0, *rng.integers(3, TINY["vocab_size"], n - 2), 2]
        mask[i, :n] = 1
    return ids, mask


def _run(model, ids, mask):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = sess.run([OUTPUT], {"input_ids": ids, "attention_mask": mask})
    return out


# ---- the references ------------------------------------------------------------------------------

def _hidden_states(spec, ids, mask):
    """transformers' hidden states (torch float32 tensors) of the spec's encoder weights."""
    torch, transformers = torch_and_transformers()
    model = transformers.XLMRobertaModel(transformers.XLMRobertaConfig(**TINY), add_pooling_layer=False).eval()
    model.load_state_dict({k: torch.from_numpy(np.asarray(v, np.float32)) for k, v in spec.encoder_weights.items()},
                          strict=False)
    with torch.no_grad():
        out = model(torch.from_numpy(ids), torch.from_numpy(mask), output_hidden_states=True)
    return list(out.hidden_states)


def _entmax_sparsemax(torch, X):
    """entmax 1.3's SparsemaxFunction.forward (full sort), dim 0."""
    X = X - X.max(dim=0, keepdim=True).values
    topk, _ = torch.sort(X, dim=0, descending=True)
    cumsum = topk.cumsum(0) - 1
    rhos = torch.arange(1, X.shape[0] + 1, dtype=X.dtype)
    support = (rhos * topk > cumsum).sum(dim=0).unsqueeze(0)
    tau = cumsum.gather(0, support - 1) / support.to(X.dtype)
    return torch.clamp(X - tau, min=0)


def _torch_comet(spec, ids, mask):
    """unbabel-comet's compute_sentence_embedding, its formulas in torch float32."""
    torch, _ = torch_and_transformers()
    hs = _hidden_states(spec, ids, mask)
    tokens, attn = torch.from_numpy(ids), torch.from_numpy(mask)
    if spec.layer is not None:
        emb = hs[spec.layer]
    else:
        s = torch.from_numpy(spec.scalar_parameters)
        w = _entmax_sparsemax(torch, s) if spec.mix == "sparsemax" else torch.softmax(s, dim=0)
        gamma = torch.tensor([spec.gamma], dtype=torch.float32)
        mf = attn.float()
        bm = mf.unsqueeze(-1)

        def norm(t):
            tm = t * bm
            B, _, H = t.size()
            n = mf.sum(1) * H
            mean = (tm.view(B, -1).sum(1) / n).view(B, 1, 1)
            var = (((tm - mean) * bm) ** 2).view(B, -1).sum(1) / n
            return (t - mean) / torch.sqrt(var + 1e-12).view(B, 1, 1)

        pieces = [wk * (norm(h) if spec.layer_norm else h) for wk, h in zip(torch.split(w, 1), hs)]
        emb = gamma * sum(pieces)
    if spec.pool == "default":  # the encoder's sentemb: last_hidden_states[:, 0, :]
        return hs[-1][:, 0, :].numpy()
    if spec.pool == "cls":
        return emb[:, 0, :].numpy()
    if spec.pool == "max":  # pooling_utils.max_pooling
        return emb.float().masked_fill_(tokens.eq(PAD).unsqueeze(-1), float("-inf")).max(dim=1)[0].numpy()
    word = emb.float().masked_fill_(tokens.eq(PAD).unsqueeze(-1), 0.0)
    return (word.sum(1) / attn.unsqueeze(-1).expand(emb.size()).float().sum(1)).numpy()


def _numpy_comet(spec, ids, mask):
    """The same math in float64 numpy on transformers' hidden states."""
    hs = [h.numpy().astype(np.float64) for h in _hidden_states(spec, ids, mask)]
    m = mask.astype(np.float64)[:, :, None]
    if spec.layer is not None:
        emb = hs[spec.layer]
    else:
        w = mix_weights(spec).astype(np.float64)
        emb = 0.0
        for k, h in enumerate(hs):
            if spec.layer_norm:
                n = m.sum(axis=(1, 2), keepdims=True) * h.shape[2]
                mean = (h * m).sum(axis=(1, 2), keepdims=True) / n
                var = (((h - mean) * m) ** 2).sum(axis=(1, 2), keepdims=True) / n
                h = (h - mean) / np.sqrt(var + 1e-12)
            emb = emb + w[k] * h
        emb = spec.gamma * emb
    if spec.pool == "default":
        return hs[-1][:, 0, :]
    if spec.pool == "cls":
        return emb[:, 0, :]
    if spec.pool == "max":
        return np.where((ids == PAD)[:, :, None], -np.inf, emb).max(axis=1)
    keep = (ids != PAD).astype(np.float64)[:, :, None]
    return (emb * keep).sum(1) / m.sum(1)


# ---- tests ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("mix", "layer_norm", "pool"), CASES)
def test_graph_equals_comets_formulas(tmp_path, mix, layer_norm, pool):
    spec = _spec(tmp_path, mix, layer_norm, pool)
    ids, mask = _batch([12, 7, 3, 10, 5], seed=1)
    got = _run(build_comet_embedding_graph(spec), ids, mask)
    assert got.dtype == np.float32
    assert got.shape == (5, TINY["hidden_size"])
    want_torch = _torch_comet(spec, ids, mask)
    want_numpy = _numpy_comet(spec, ids, mask)
    np.testing.assert_allclose(got, want_torch, rtol=0, atol=2e-6)
    np.testing.assert_allclose(got, want_numpy, rtol=0, atol=2e-6)
    assert np.isfinite(got).all()
    # the mix is not degenerate: a different gamma moves the result by its ratio
    if spec.layer is None and pool != "default":
        other = _run(build_comet_embedding_graph(dataclasses.replace(spec, gamma=1.0)), ids, mask)
        np.testing.assert_allclose(got, other * 1.75, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("mix", "layer_norm", "pool"), [c for c in CASES if c[2] in ("avg", "max")] +
                         [("softmax", True, "cls"), ("softmax", True, "default")])
def test_padding_does_not_move_an_embedding(tmp_path, mix, layer_norm, pool):
    spec = _spec(tmp_path, mix, layer_norm, pool)
    model = build_comet_embedding_graph(spec)
    lengths = [12, 4, 9, 6]
    ids, mask = _batch(lengths, seed=2)
    batch = _run(model, ids, mask)
    for i, n in enumerate(lengths):
        alone = _run(model, ids[i:i + 1, :n], mask[i:i + 1, :n])
        np.testing.assert_array_equal(batch[i].view(np.uint32), alone[0].view(np.uint32))  # the same bytes


def test_max_pooling_skips_pad_tokens_by_id(tmp_path):
    """max: the maximum over the positions whose id is not the pad id (unbabel-comet masks by token
    id, not by the attention mask), per hidden dim; a pad id inside the mask is skipped too."""
    spec = _spec(tmp_path, "softmax", False, "max")
    model = build_comet_embedding_graph(spec)
    ids, mask = _batch([9, 4], seed=4)
    got = _run(model, ids, mask)
    np.testing.assert_allclose(got, _numpy_comet(spec, ids, mask), rtol=0, atol=2e-6)
    # the maximum is taken per hidden dim: not all from one position
    full = _numpy_comet(dataclasses.replace(spec, pool="cls"), ids, mask)
    assert not np.allclose(got[0], full[0])
    # a pad id at a real (mask 1) position: dropped from the maximum as unbabel-comet drops it
    ids2 = ids.copy()
    ids2[0, 3] = PAD
    np.testing.assert_allclose(_run(model, ids2, mask), _torch_comet(spec, ids2, mask), rtol=0, atol=2e-6)


def test_default_pool_is_the_last_layers_first_token_whatever_the_mix(tmp_path):
    ids, mask = _batch([11, 6, 8], seed=5)
    outs = [_run(build_comet_embedding_graph(_spec(tmp_path, m, ln, "default")), ids, mask)
            for m, ln in [("softmax", True), ("sparsemax-top0", False), ("layer1", False), ("layer2", False)]]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
    spec = _spec(tmp_path, "layer2", False, "default")  # layer 2 is the last of the tiny encoder
    np.testing.assert_allclose(outs[0], _run(build_comet_embedding_graph(dataclasses.replace(spec, pool="cls")),
                                             ids, mask), rtol=0, atol=1e-6)
    # and not the first token of the mix
    mixed = _run(build_comet_embedding_graph(_spec(tmp_path, "softmax", True, "cls")), ids, mask)
    assert np.abs(mixed - outs[0]).max() > 1e-2
    # only the encoder is built: no mix terms
    g = build_comet_embedding_graph(_spec(tmp_path, "sparsemax-top0", False, "default"))
    assert not [n for n in g.graph.node if n.name.startswith(("mix", "acc", "scaled"))]
    assert _count(g, "MatMul") == 8 * L  # every block, though the mix's top weight is 0


def test_mix_weights_are_torchs_and_entmaxs():
    torch, _ = torch_and_transformers()
    rng = np.random.default_rng(5)
    for s in [np.array(v, np.float32) for _, _, v in MIXES.values() if v] + \
             [rng.normal(size=25).astype(np.float32) * 2 for _ in range(20)]:
        # torch's vectorised exp and sum order differ from numpy's by a few ulp (<= 6 seen): rtol 1e-6
        np.testing.assert_allclose(softmax_f32(s), torch.softmax(torch.from_numpy(s), 0).numpy(), rtol=1e-6, atol=0)
        want = _entmax_sparsemax(torch, torch.from_numpy(s)).numpy()
        np.testing.assert_allclose(sparsemax_f32(s), want, rtol=2e-7, atol=1e-9)
        np.testing.assert_array_equal(sparsemax_f32(s) == 0, want == 0)  # the same support
    np.testing.assert_allclose(sparsemax_f32(np.array([0.9, 0.2, 0.6], np.float32)), [0.65, 0.0, 0.35], atol=1e-7)
    assert sparsemax_f32(np.array([0.9, 0.2, 0.6], np.float32))[1] == 0.0


def _count(model, op):
    return sum(n.op_type == op for n in model.graph.node)


def test_zero_weights_skip_terms_and_unused_top_blocks(tmp_path):
    full = build_comet_embedding_graph(_spec(tmp_path, "sparsemax", False, "avg"))
    top0 = build_comet_embedding_graph(_spec(tmp_path, "sparsemax-top0", False, "avg"))
    assert _count(full, "MatMul") == 8 * L  # q, k, v, scores, context, out, ff1, ff2 per block
    assert _count(top0, "MatMul") == 8 * (L - 1)  # block 2 has weight 0: not built
    # no stacked [L+1, B, T, H] tensor: the mix is a chain of Mul/Add, one Mul per used hidden state
    assert _count(full, "Concat") == 0
    assert {n.name.split("_")[0] for n in full.graph.node if n.name.startswith("mix")} == {"mix0", "mix1", "mix2"}
    mid0 = build_comet_embedding_graph(_spec(tmp_path, "sparsemax-mid0", False, "avg"))
    assert {n.name.split("_")[0] for n in mid0.graph.node if n.name.startswith("mix")} == {"mix0", "mix2"}


def test_fp16_encoder_gives_float32_close_to_fp32(tmp_path):
    spec = _spec(tmp_path, "softmax", True, "avg")
    ids, mask = _batch([12, 6], seed=3)
    f32 = _run(build_comet_embedding_graph(spec), ids, mask)
    f16 = _run(build_comet_embedding_graph(spec, dtype=np.float16), ids, mask)
    assert f16.dtype == np.float32
    np.testing.assert_allclose(f16, f32, rtol=0, atol=2e-2)
    assert not np.array_equal(f16, f32)  # the encoder did run in float16


def test_fp16_encoder_max_pooling_is_float32_and_finite(tmp_path):
    spec = _spec(tmp_path, "sparsemax", True, "max")
    ids, mask = _batch([12, 5], seed=6)
    f16 = _run(build_comet_embedding_graph(spec, dtype=np.float16), ids, mask)
    assert f16.dtype == np.float32
    assert np.isfinite(f16).all()
    np.testing.assert_allclose(f16, _run(build_comet_embedding_graph(spec), ids, mask), rtol=0, atol=5e-2)


def test_bad_dtype_and_mix_weights_without_mix(tmp_path):
    with pytest.raises(ValueError, match="float64: expected float32 or float16"):
        build_comet_embedding_graph(_spec(tmp_path, "softmax", False, "avg"), dtype=np.float64)
    with pytest.raises(ValueError, match="hidden state 1; it has no layer mix"):
        mix_weights(_spec(tmp_path, "layer1", False, "avg"))
