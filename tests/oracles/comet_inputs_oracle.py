"""Check mtscore.engine.comet.inputs against unbabel-comet 2.2.7's own encoder code, in its environment.

unbabel-comet's ``XLMREncoder.prepare_sample`` (each sentence tokenised, truncated to
``max_positions - 2`` ids) and ``Encoder.concat_sequences`` (the ``unified_metric`` joint input) run
on transformers 4.x and torch; mtscore's ``CometTokenizer.encode`` / ``joint`` and ``padded_batches``
run beside them in the same process, on the tokenizer of tests/engine/comet_tokenizer_fixture.py
given both ways an encoder ships it: ``tokenizer.json`` (xlm-roberta-large) and
``sentencepiece.bpe.model`` alone (microsoft/infoxlm-large: transformers converts it). Texts: the
fixture's adversarial ones, 1,000 WMT21 lines, joined lines past the 510 cut and lines of exactly
506..510 and 700 pieces. It prints the mismatches and exits 1 when there is one. No golden file: the
normal tests (test_comet_inputs, test_comet_spm_tokenizer) hold the facts this confirmed.

Environment (not the project's: unbabel-comet pins transformers < 5)::

    python -m venv /tmp/comet-inputs-venv
    /tmp/comet-inputs-venv/bin/pip install "transformers>=4.17,<5" sentencepiece "protobuf>=5" pytest \\
        numpy torch        # a CPU torch wheel
    pip download --no-deps unbabel-comet==2.2.7 -d /tmp/uc && unzip /tmp/uc/unbabel_comet-2.2.7-*.whl -d /tmp/uc/src

unbabel-comet's package ``__init__`` imports Lightning and its models; only its encoder modules are
loaded here (by file), so neither Lightning nor its other pins are needed.

Usage (from the repository root)::

    /tmp/comet-inputs-venv/bin/python tests/oracles/comet_inputs_oracle.py --comet-src /tmp/uc/src [--data DIR]

Last run (transformers 4.57.6, tokenizers 0.22.2, torch 2.13.0+cpu): 1,042 texts, no mismatch for
either folder (single sentences and joint inputs with their padded batch and attention mask).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "engine")]

import numpy as np  # noqa: E402
from comet_tokenizer_fixture import ADVERSARIAL, long_lines, train_lines, write_tokenizer_folder  # noqa: E402

from mtscore.engine.comet.inputs import CometTokenizer, padded_batches  # noqa: E402

DATA_FILES = ("sources/newstest2021.en-de.src.en", "references/newstest2021.en-de.ref.A.de",
              "sources/newstest2021.zh-en.src.zh", "sources/newstest2021.ha-en.src.ha",
              "sources/newstest2021.ru-en.src.ru")
CONFIG = {"model_type": "xlm-roberta", "vocab_size": 4002, "hidden_size": 8, "num_hidden_layers": 1,
          "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 514,
          "type_vocab_size": 1, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}


def comet_xlmr_encoder(src: Path):
    """unbabel-comet's ``comet.encoders.xlmr`` loaded by file, its package ``__init__`` skipped."""
    root = src / "comet"
    for name, folder in (("comet", root), ("comet.models", root / "models"), ("comet.encoders", root / "encoders")):
        pkg = types.ModuleType(name)
        pkg.__path__ = [str(folder)]
        sys.modules[name] = pkg
    mod = None
    for name, rel in (("comet.models.utils", "models/utils.py"), ("comet.encoders.base", "encoders/base.py"),
                      ("comet.encoders.bert", "encoders/bert.py"), ("comet.encoders.xlmr", "encoders/xlmr.py")):
        spec = importlib.util.spec_from_file_location(name, root / rel)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return mod.XLMREncoder


def check(encoder_cls, folder: Path, tokenizer_file: Path, texts: list[str]) -> int:
    enc = encoder_cls.from_pretrained(str(folder), load_pretrained_weights=False, local_files_only=True)
    tok = CometTokenizer(tokenizer_file, CONFIG)
    assert enc.max_positions == tok.max_positions, (enc.max_positions, tok.max_positions)
    bad = 0
    for lo in range(0, len(texts), 64):
        chunk = texts[lo:lo + 64]
        sample = enc.prepare_sample(chunk)
        want = [r[m.bool()].tolist() for r, m in zip(sample["input_ids"], sample["attention_mask"])]
        got = [x.tolist() for x in tok.encode(chunk)]
        for t, w, g in zip(chunk, want, got):
            if w != g:
                bad += 1
                print(f"{folder.name}: encode {t[:60]!r}: comet {w[:20]} mtscore {g[:20]}")
        mt, src = chunk, chunk[::-1]
        joint, _, _ = enc.concat_sequences([enc.prepare_sample(mt), enc.prepare_sample(src)])
        (batch,) = padded_batches(tok.joint(tok.encode(mt), tok.encode(src)), tok.pad_id,
                                  batch_tokens=10**9, max_rows=10**6)
        order = np.argsort(batch.rows)
        if not (np.array_equal(batch.input_ids[order], joint["input_ids"].numpy())
                and np.array_equal(batch.attention_mask[order], joint["attention_mask"].numpy().astype(np.int64))):
            bad += 1
            print(f"{folder.name}: joint inputs of texts {lo}..{lo + len(chunk) - 1} differ")
    print(f"{folder.name}: {len(texts)} texts, {bad} mismatches")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--comet-src", type=Path, required=True, help="the unpacked unbabel-comet 2.2.7 wheel")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the shared WMT data")
    args = ap.parse_args()
    encoder_cls = comet_xlmr_encoder(args.comet_src)
    lines = []
    for f in DATA_FILES:
        lines += (args.data / "wmt21-news-systems" / "txt" / f).read_text(encoding="utf-8").splitlines()[300:500]
    texts = ADVERSARIAL + lines + long_lines(lines) + [" ".join(["a"] * n) for n in (506, 507, 508, 509, 510, 700)]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        full = write_tokenizer_folder(Path(tmp) / "xlmr-json", train_lines(args.data))
        spm_only = Path(tmp) / "infoxlm-spm"
        spm_only.mkdir()
        (spm_only / "sentencepiece.bpe.model").write_bytes((full / "sentencepiece.bpe.model").read_bytes())
        (full / "sentencepiece.bpe.model").unlink()  # transformers must read tokenizer.json here
        for folder in (full, spm_only):
            (folder / "config.json").write_text(json.dumps(CONFIG))
        bad += check(encoder_cls, full, full / "tokenizer.json", texts)
        bad += check(encoder_cls, spm_only, spm_only / "sentencepiece.bpe.model", texts)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
