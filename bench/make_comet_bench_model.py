"""A random, seeded COMET checkpoint with Unbabel/wmt22-comet-da's shapes, for bench/bench_comet.py.

Runs in the unbabel-comet oracle venv (see tests/oracles/comet_oracle.py's docstring), from the
repository root::

    /work/oracle-comet/bin/python bench/make_comet_bench_model.py --out /work/bench-comet

It builds the model with unbabel-comet 2.2.7's own ``RegressionMetric`` and wmt22-comet-da's
hyper-parameters (layer mix with sparsemax, no layer norm, average pooling, estimator
``hidden_sizes`` [3072, 1024], Tanh, no final activation) over an XLM-R large encoder (24 layers,
hidden 1024, 16 heads, intermediate 4096, 514 positions, vocabulary 250,002) initialised at random
under :data:`SEED` (no pretrained weights can be downloaded here). The tokenizer is the golden
test tokenizer (tests/golden/comet/encoder: 4,002 ids, all < the 250,002 rows of the embedding
table), so token counts differ from the real XLM-R tokenizer's but every weight shape is real. The
layer-mix scalars are set away from their uniform init (:data:`MIX_SEED`), as the oracle does. With
the default seed, sparsemax gives hidden states 6, 8, 14, 15, 17 and 18 non-zero weights, so a
scorer that skips the layers above the last used one (mtscore does; unbabel-comet runs all 24)
runs 18 of 24 layers; ``--all-layers`` raises the last scalar to the largest one, so that the top
layer is used and every peer must run all 24 (a different checkpoint: a conservative speed bench).

Writes (~2.3 GB; never commit it)::

    OUT/encoder/        config.json (XLM-R large) + the golden tokenizer files
    OUT/model/hparams.yaml, OUT/model/checkpoints/model.ckpt   (a real pl.Trainer checkpoint)

and prints the checkpoint's sha256.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLDEN_ENCODER = REPO / "tests" / "golden" / "comet" / "encoder"
SEED = 20261128
MIX_SEED = 22
#: xlm-roberta-large's config.json (the encoder of wmt22-comet-da)
XLMR_LARGE = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
              "max_position_embeddings": 514, "vocab_size": 250002, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
              "initializer_range": 0.02, "hidden_act": "gelu", "pad_token_id": 1, "bos_token_id": 0,
              "eos_token_id": 2, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}
#: wmt22-comet-da's hparams.yaml (besides pretrained_model / load_pretrained_weights / data paths)
HPARAMS = {"activations": "Tanh", "batch_size": 16, "dropout": 0.1, "encoder_learning_rate": 1.0e-06,
           "encoder_model": "XLM-RoBERTa", "final_activation": None, "hidden_sizes": [3072, 1024],
           "keep_embeddings_frozen": True, "layer": "mix", "layer_norm": False, "layer_transformation": "sparsemax",
           "layerwise_decay": 0.95, "learning_rate": 1.5e-05, "loss": "mse", "nr_frozen_epochs": 0.3,
           "optimizer": "AdamW", "pool": "avg", "warmup_steps": 0}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            h.update(block)
    return h.hexdigest()


def write_encoder(folder: Path) -> None:
    from transformers import XLMRobertaConfig

    folder.mkdir(parents=True, exist_ok=True)
    for name in ("sentencepiece.bpe.model", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy2(GOLDEN_ENCODER / name, folder / name)
    XLMRobertaConfig(**XLMR_LARGE).save_pretrained(str(folder))


def build(out: Path, all_layers: bool = False) -> Path:
    import pytorch_lightning as pl
    import torch
    from comet.models import RegressionMetric
    from pytorch_lightning.core.saving import save_hparams_to_yaml

    encoder = out / "encoder"
    write_encoder(encoder)
    torch.manual_seed(SEED)
    model = RegressionMetric(pretrained_model=str(encoder), load_pretrained_weights=False, **HPARAMS)
    n = len(model.layerwise_attention.scalar_parameters)
    g = torch.Generator().manual_seed(MIX_SEED)
    scalars = (torch.rand(n, generator=g) * 2 - 1).tolist()
    if all_layers:
        scalars[-1] = max(scalars)
    with torch.no_grad():
        for p, v in zip(model.layerwise_attention.scalar_parameters, scalars, strict=True):
            p.fill_(v)
        model.layerwise_attention.gamma.fill_(1.3)
    folder = out / "model"
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    trainer = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False)
    trainer.strategy.connect(model)
    ckpt = folder / "checkpoints" / "model.ckpt"
    trainer.save_checkpoint(str(ckpt))
    save_hparams_to_yaml(str(folder / "hparams.yaml"), model.hparams)
    return ckpt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/work/bench-comet"), help="output folder (outside the repo)")
    ap.add_argument("--all-layers", action="store_true",
                    help="give the top layer a non-zero mix weight (no scorer can skip layers)")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    if out == REPO or REPO in out.parents:
        sys.exit(f"--out {out}: inside the repository; the checkpoint is ~2.3 GB and must not be committed")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    warnings.filterwarnings("ignore")
    ckpt = build(out, all_layers=args.all_layers)
    print(f"{ckpt}: {ckpt.stat().st_size} bytes, sha256 {sha256(ckpt)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
