"""The golden COMET scores of tests/golden/comet (unbabel-comet 2.2.7's ``predict``) recomputed from
the models' weights by an independent, sentence-at-a-time reference of the rules P18's later steps
implement: transformers' ``XLMRobertaModel`` for the encoder (test extra), ``tokenizers`` on
``tokenizer.json``, and the COMET math written out here:

* truncation: ``<s>`` + the first 508 pieces + ``</s>`` (510 ids, specials included);
* unified_metric: ``<s> mt </s></s> src </s>`` from the truncated inner pieces, cut to its first 512
  ids when the inner pieces of mt and src together exceed 507; the first token pooled;
* the layer mix: softmax (also for ``sparsemax_patch``) or sparsemax of the scalars, each hidden
  state normalised per sentence over all its tokens and dims (eps 1e-12) when ``layer_norm``,
  ``gamma * sum``, or the one hidden state of a layer number; average pooling (no padding here),
  the maximum over the tokens, or the first token; ``default``: the first token of the last hidden
  state, whatever the mix or layer;
* features ``[h; r; h*r; |h-r|; h*s; |h-s|]`` / ``[h; s; h*s; |h-s|]`` / the joint embedding, and the
  Tanh feed-forward.

Every truncation and cut edge of inputs.jsonl (its last 13 lines) and every 10th newstest2021 line
are checked; they agree to ~2e-7 (a wrong rule moves scores by >1e-4)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mtscore.engine.comet import load_comet_spec, resolve_comet_model

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "comet"
TOL = 2e-6
N_NEWS = 300  # the first 300 lines are newstest2021, the rest the synthetic length edges


def _sparsemax(z: np.ndarray) -> np.ndarray:
    zs = np.sort(z)[::-1]
    k = np.arange(1, len(z) + 1)
    cs = np.cumsum(zs)
    kk = k[1 + k * zs > cs][-1]
    return np.maximum(z - (cs[kk - 1] - 1) / kk, 0)


@pytest.fixture(scope="module")
def golden() -> dict:
    f = GOLDEN / "golden.json"
    if not f.is_file():
        pytest.skip(f"{f}: absent (tests/oracles/comet_oracle.py writes it)")
    return json.loads(f.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["regression-sparsemax", "regression-softmax-norm", "referenceless-cls",
                                  "unified-kiwi", "regression-max-norm", "referenceless-default-layer2"])
def test_reference_reproduces_golden_scores(golden: dict, name: str) -> None:
    torch = pytest.importorskip("torch", reason="the reference encoder runs in torch (test extra)")
    transformers = pytest.importorskip("transformers", reason="the reference encoder is transformers' (test extra)")
    tokenizers = pytest.importorskip("tokenizers")
    rows = [json.loads(line) for line in (GOLDEN / "inputs.jsonl").read_text(encoding="utf-8").splitlines()]
    tok = tokenizers.Tokenizer.from_file(str(GOLDEN / "encoder" / "tokenizer.json"))
    spec = load_comet_spec(resolve_comet_model(GOLDEN / "models" / name, encoder=GOLDEN / "encoder"))
    config = {k: v for k, v in spec.encoder_config.items() if k not in ("model_type", "transformers_version")}
    model = transformers.XLMRobertaModel(transformers.XLMRobertaConfig(**config), add_pooling_layer=False).eval()
    loaded = model.load_state_dict({k: torch.from_numpy(v) for k, v in spec.encoder_weights.items()}, strict=False)
    assert not loaded.unexpected_keys
    assert not [k for k in loaded.missing_keys if "position_ids" not in k]
    scalars = spec.scalar_parameters
    if spec.layer is not None:  # one hidden state
        weights = torch.zeros(spec.dims.layers + 1, dtype=torch.float32)
        weights[spec.layer] = 1
    elif spec.mix == "softmax":
        weights = torch.softmax(torch.from_numpy(scalars), 0)
    else:
        weights = torch.from_numpy(_sparsemax(scalars))
    gamma = 1.0 if spec.gamma is None else spec.gamma
    if name == "regression-sparsemax":  # the mix is really sparse: two hidden states weigh exactly 0
        assert int((weights == 0).sum()) == 2

    def ids(text: str) -> list[int]:
        e = tok.encode(text).ids  # <s> pieces </s>
        return e if len(e) <= 510 else [*e[:509], e[-1]]

    def embed(seq: list[int], pool: str = spec.pool):
        x = torch.tensor([seq])
        with torch.no_grad():
            states = model(input_ids=x, attention_mask=torch.ones_like(x), output_hidden_states=True).hidden_states
        if pool == "default":
            return states[-1][0, 0]
        mixed = 0
        for w, h in zip(weights, states):
            if spec.layer_norm:
                mean = h.mean()
                h = (h - mean) / torch.sqrt(((h - mean) ** 2).mean() + 1e-12)
            mixed = mixed + w * h
        mixed = gamma * mixed
        if pool == "max":
            return mixed[0].max(0).values
        return mixed[0, 0] if pool == "cls" else mixed[0].mean(0)

    def score(row: dict, pool: str = spec.pool) -> float:
        if spec.class_identifier == "unified_metric":
            mt, src = ids(row["mt"])[1:-1], ids(row["src"])[1:-1]
            joint = [0, *mt, 2, 2, *src, 2]
            f = embed(joint[:512] if len(mt) + len(src) > 507 else joint)
        else:
            h, s = embed(ids(row["mt"]), pool), embed(ids(row["src"]), pool)
            if spec.class_identifier == "regression_metric":
                r = embed(ids(row["ref"]), pool)
                f = torch.cat([h, r, h * r, (h - r).abs(), h * s, (h - s).abs()])
            else:
                f = torch.cat([h, s, h * s, (h - s).abs()])
        with torch.no_grad():
            for layer in spec.estimator:
                f = torch.from_numpy(layer.weight) @ f + torch.from_numpy(layer.bias)
                if layer.activation == "Tanh":
                    f = torch.tanh(f)
        return float(f[0])

    scores = golden["models"][name]["scores"]
    picked = [*range(0, N_NEWS, 10), *range(N_NEWS, len(rows))]
    got = np.array([score(rows[i]) for i in picked])
    np.testing.assert_allclose(got, np.array([scores[i] for i in picked]), rtol=0, atol=TOL)
    # the pooling rule matters: another pool moves the scores far beyond TOL (max vs avg of the
    # same mix; default vs the first token of the layer the hyper-parameters name)
    if spec.pool in ("max", "default"):
        other = "avg" if spec.pool == "max" else "cls"
        moved = np.array([score(rows[i], other) for i in picked[:20]])
        assert np.abs(moved - np.array([scores[i] for i in picked[:20]])).max() > 1e-3
