"""Tiny synthetic COMET model folders for the tests of mtscore.engine.comet (no real COMET checkpoint
can be downloaded in the test environment): an ``hparams.yaml`` in the shape of the released files
(the keys of wmt22-comet-da, wmt20-comet-qe-da and wmt22-cometkiwi-da), an encoder ``config.json``
from transformers' ``XLMRobertaConfig`` and a state dict whose encoder part is a real
``XLMRobertaModel(add_pooling_layer=False)`` (so the tensor names and shapes are transformers' own,
not mtscore's idea of them), saved as a Lightning-style checkpoint with ``torch.save``.

torch and transformers (the test extra) write the fixtures; mtscore's reading path imports neither."""
from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

#: the tiny encoder: 2 layers -> 3 hidden states, hidden 8, 2 heads
TINY = {"vocab_size": 24, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 16, "max_position_embeddings": 14, "type_vocab_size": 1, "pad_token_id": 1,
        "bos_token_id": 0, "eos_token_id": 2, "layer_norm_eps": 1e-5}
HIDDEN_SIZES = {"regression_metric": [6, 4], "referenceless_regression_metric": [5, 3], "unified_metric": [7, 4]}
N_FEATURES = {"regression_metric": 6, "referenceless_regression_metric": 4, "unified_metric": 1}

# the released files' keys (wmt22-comet-da, wmt20-comet-qe-da as converted for 2.x, wmt22-cometkiwi-da),
# with the tiny hidden sizes
HPARAMS = {
    "regression_metric": """\
activations: Tanh
batch_size: 16
class_identifier: regression_metric
dropout: 0.1
encoder_learning_rate: 1.0e-06
encoder_model: XLM-RoBERTa
final_activation: null
hidden_sizes:
- 6
- 4
keep_embeddings_frozen: true
layer: mix
layer_norm: false
layer_transformation: sparsemax
layerwise_decay: 0.95
learning_rate: 1.5e-05
load_pretrained_weights: true
loss: mse
nr_frozen_epochs: 0.3
optimizer: AdamW
pool: avg
pretrained_model: xlm-roberta-large
train_data:
- data/1720-da.csv
validation_data:
- data/wmt-ende-newstest2021.csv
- data/wmt-enru-newstest2021.csv
""",
    "referenceless_regression_metric": """\
activations: Tanh
batch_size: 16
class_identifier: referenceless_regression_metric
dropout: 0.1
encoder_learning_rate: 1.0e-05
encoder_model: XLM-RoBERTa
final_activation: null
hidden_sizes:
- 5
- 3
keep_embeddings_frozen: true
layer: mix
layer_norm: true
layer_transformation: softmax
layerwise_decay: 0.95
learning_rate: 3.0e-05
loss: mse
nr_frozen_epochs: 0.3
optimizer: AdamW
pool: avg
pretrained_model: xlm-roberta-large
train_data:
- data/qe-da.csv
validation_data:
- data/qe-da-dev.csv
""",
    "unified_metric": """\
activations: Tanh
batch_size: 4
class_identifier: unified_metric
dropout: 0.1
encoder_learning_rate: 1.0e-06
encoder_model: XLM-RoBERTa
final_activation: null
hidden_sizes:
- 7
- 4
input_segments:
- mt
- src
keep_embeddings_frozen: true
layer: mix
layer_norm: false
layer_transformation: sparsemax_patch
layerwise_decay: 0.95
learning_rate: 1.5e-05
loss: mse
loss_lambda: 0.65
nr_frozen_epochs: 0.3
optimizer: AdamW
pool: avg
pretrained_model: microsoft/infoxlm-large
sent_layer: mix
train_data:
- data/1720-da.mlqe-src.csv
validation_data:
- data/wmt-ende-newstest2021.csv
word_layer: 24
word_level_training: false
word_weights:
- 0.15
- 0.85
""",
}


def torch_and_transformers():
    torch = pytest.importorskip("torch", reason="torch (the test extra) writes the checkpoints")
    transformers = pytest.importorskip("transformers", reason="transformers (the test extra) builds the encoder")
    return torch, transformers


def tiny_config() -> dict:
    _, transformers = torch_and_transformers()
    return transformers.XLMRobertaConfig(**TINY).to_dict()


def tiny_encoder(seed: int = 0):
    """A random tiny ``XLMRobertaModel(add_pooling_layer=False)`` in eval mode."""
    torch, transformers = torch_and_transformers()
    torch.manual_seed(seed)
    model = transformers.XLMRobertaModel(transformers.XLMRobertaConfig(**TINY), add_pooling_layer=False)
    return model.eval()


def state_dict(cid: str, seed: int = 0, mix: bool = True) -> OrderedDict:
    """The state dict unbabel-comet's model of class ``cid`` would hold (as torch tensors): the
    encoder under ``encoder.model.``, the layer mix (25 -> 3 scalars, perturbed from their uniform
    init) and ``gamma``, and ``estimator.ff.{0,3,6}``."""
    torch, _ = torch_and_transformers()
    enc = tiny_encoder(seed)
    sd = OrderedDict(("encoder.model." + k, v.detach().clone()) for k, v in enc.state_dict().items())
    g = torch.Generator().manual_seed(seed + 1)
    if mix:
        for i in range(TINY["num_hidden_layers"] + 1):
            sd[f"layerwise_attention.scalar_parameters.{i}"] = torch.randn(1, generator=g)
        sd["layerwise_attention.gamma"] = torch.tensor([1.25])
    sizes = [N_FEATURES[cid] * TINY["hidden_size"], *HIDDEN_SIZES[cid], 1]
    for j in range(len(sizes) - 1):
        sd[f"estimator.ff.{3 * j}.weight"] = torch.randn(sizes[j + 1], sizes[j], generator=g)
        sd[f"estimator.ff.{3 * j}.bias"] = torch.randn(sizes[j + 1], generator=g)
    return sd


def as_numpy(sd) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in sd.items()}


def save_lightning(sd, path: Path, hparams_text: str = "") -> Path:
    """``torch.save`` of a checkpoint in Lightning 2.x's layout holding ``sd``."""
    torch, _ = torch_and_transformers()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"epoch": 1, "global_step": 10, "pytorch-lightning_version": "2.2.1",
                "state_dict": sd, "loops": {}, "callbacks": {}, "optimizer_states": [], "lr_schedulers": [],
                "hparams_name": "kwargs", "hyper_parameters": {"hparams_text": hparams_text}}, path)
    return path


def write_encoder_folder(folder: Path, tokenizer: str = "tokenizer.json") -> Path:
    """config.json (the tiny XLM-R's) and a tokenizer file (a placeholder: only its presence counts)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(tiny_config()))
    if tokenizer:
        (folder / tokenizer).write_text("{}")
    return folder


def write_model_folder(folder: Path, cid: str = "regression_metric", hparams: str | None = None,
                       sd=None, checkpoint: bool = True) -> Path:
    """A COMET model folder: hparams.yaml + checkpoints/model.ckpt."""
    folder.mkdir(parents=True, exist_ok=True)
    text = HPARAMS[cid] if hparams is None else hparams
    (folder / "hparams.yaml").write_text(text)
    if checkpoint:
        save_lightning(state_dict(cid) if sd is None else sd, folder / "checkpoints" / "model.ckpt", text)
    return folder


def with_key(text: str, key: str, value: str | None) -> str:
    """``text`` (an hparams.yaml) with ``key: value`` replaced, added (absent key) or removed (None)."""
    lines = text.splitlines()
    out, done = [], False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(key + ":"):
            done = True
            i += 1
            while i < len(lines) and lines[i].startswith("- "):  # its block sequence
                i += 1
            if value is not None:
                out.append(f"{key}: {value}")
            continue
        out.append(line)
        i += 1
    if not done and value is not None:
        out.append(f"{key}: {value}")
    return "\n".join(out) + "\n"
