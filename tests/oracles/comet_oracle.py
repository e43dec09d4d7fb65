"""The unbabel-comet oracle: tiny COMET models built and scored by unbabel-comet 2.2.7 itself, and
the golden scores that mtscore's COMET must reproduce (1e-5 per segment, 1e-6 for the system score).

It runs in its own venv, never in mtscore's (unbabel-comet pins numpy<2, torchmetrics 0.10, ...)::

    python3.11 -m venv /work/oracle-comet
    /work/oracle-comet/bin/pip install /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl
    /work/oracle-comet/bin/pip install -c tests/oracles/comet-constraints.txt unbabel-comet==2.2.7 "setuptools<81"
    MTSCORE_COMET_ORACLE=1 /work/oracle-comet/bin/python tests/oracles/comet_oracle.py      # from the repo root

(``MTSCORE_DATA`` points at the shared data, default /work/shared/data; ``--check`` rebuilds
everything in a temporary folder and compares it with the committed files instead of writing;
``--add NAME ...`` builds and scores only the models named (new entries of :data:`MODELS`) in the
committed folder and adds them to ``golden.json``, leaving every other file and score as it is
(the encoder, inputs and versions must match golden.json); a full rerun rewrites everything;
``--train DIR`` writes two checkpoints of a short real training run instead, see
:func:`train_checkpoint`; read them with mtscore's venv:
``python -c "from mtscore.engine.checkpoints import read_checkpoint as r; print(len(r('DIR/full.ckpt')))"``.)
Without ``MTSCORE_COMET_ORACLE=1`` it refuses to run (CI runs it only when asked: ~2 min on 1 core).

What it writes under ``tests/golden/comet/`` (everything deterministic from :data:`SEED` and the data):

* ``encoder/``: the tokenizer -- a SentencePiece unigram model (4,000 pieces) trained on newstest2021
  en-de text (source, references, system outputs), saved as an ``XLMRobertaTokenizer`` folder
  (``sentencepiece.bpe.model``, fairseq's +1 id offset, ``<mask>`` last) and converted by
  ``XLMRobertaTokenizerFast`` (``tokenizer.json``) -- and ``config.json`` of a small XLM-R
  (:data:`ENCODER`: 4 layers, hidden 32, 4 heads, intermediate 128, 514 positions);
* ``models/<name>/hparams.yaml`` + ``models/<name>/checkpoints/model.ckpt`` for each of :data:`MODELS`,
  built by unbabel-comet's own classes under ``torch.manual_seed``, the layer-mix scalars and gamma
  set away from their uniform init (:data:`MIX`; a model with a layer number has no mix), saved by a
  real ``pytorch_lightning.Trainer``
  (``save_checkpoint``) and Lightning's ``save_hparams_to_yaml`` (the released folder layout);
  ``pretrained_model`` is ``encoder`` (a folder relative to ``tests/golden/comet``, where the
  script runs; mtscore's tests pass that folder as the encoder);
* ``inputs.jsonl``: the scored triples ``{"src", "mt", "ref"}``: 300 newstest2021 en-de segments
  (every 3rd line; mt from the 20 systems in turn; ref A) and synthetic lines for the length rules
  (:func:`synthetic_triples`);
* ``golden.json``: format 1::

    {"format": 1, "seed": ..., "versions": {package: version},
     "inputs": {"file": "inputs.jsonl", "sha256": ..., "n": ...},
     "files": {relative path: sha256, ...},          # encoder files and every model file
     "models": {name: {"folder": "models/<name>", "class_identifier": ..., "fields": ["src", "mt", "ref"],
                       "batch_size": 16, "scores": [float, ...], "system_score": float}}}

  ``scores`` are in input order, unbabel-comet's float32 outputs as Python floats (JSON numbers
  are ``repr`` floats: they round-trip exactly); ``system_score`` is ``predict``'s
  ``sum(scores) / len(scores)``.

Scoring is ``comet.load_from_checkpoint(path).predict(samples, batch_size=16, gpus=0)``: fp32 on
the CPU, unbabel-comet's own length batching, one torch thread.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "comet"
DATA = Path(os.environ.get("MTSCORE_DATA", "/work/shared/data")) / "wmt21-news-systems" / "txt"
SEED = 20261128
VOCAB = 4000  # SentencePiece pieces (4,000: each checkpoint stays under 1 MiB); the tokenizer has VOCAB + 2 ids (fairseq offset, <mask>)
ENCODER = {"num_hidden_layers": 4, "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 128,
           "max_position_embeddings": 514, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
           # wider than transformers' 0.02 so that the sentences' embeddings (and scores) differ visibly
           "initializer_range": 0.2}
N_SEGMENTS = 300
HIDDEN_SIZES = [96, 32]
#: name -> (class, keyword arguments beyond the common ones)
MODELS = {
    "regression-sparsemax": ("RegressionMetric", {"layer": "mix", "layer_transformation": "sparsemax",
                                                  "layer_norm": False, "pool": "avg"}),
    "regression-softmax-norm": ("RegressionMetric", {"layer": "mix", "layer_transformation": "softmax",
                                                     "layer_norm": True, "pool": "avg"}),
    "referenceless-cls": ("ReferencelessRegression", {"layer": "mix", "layer_transformation": "softmax",
                                                      "layer_norm": False, "pool": "cls"}),
    # wmt22-cometkiwi-da's hyper-parameters (sparsemax_patch = softmax in 2.2.7), tiny sizes
    "unified-kiwi": ("UnifiedMetric", {"sent_layer": "mix", "layer_transformation": "sparsemax_patch",
                                       "layer_norm": False, "word_layer": 4, "input_segments": ["mt", "src"],
                                       "word_level_training": False, "loss_lambda": 0.65}),
    # the other two pool values of compute_sentence_embedding (added later with --add; appended so
    # that the seeds of the models above, SEED + index, do not move): max over the non-pad tokens of
    # the normalised mix; "default", the encoder's sentemb (the LAST hidden state's first token),
    # with a layer number that it then ignores
    "regression-max-norm": ("RegressionMetric", {"layer": "mix", "layer_transformation": "softmax",
                                                 "layer_norm": True, "pool": "max"}),
    "referenceless-default-layer2": ("ReferencelessRegression", {"layer": 2, "layer_transformation": "softmax",
                                                                 "layer_norm": False, "pool": "default"}),
}
#: the layer-mix scalars (one per hidden state, embeddings first) and gamma set after the build;
#: sparsemax of the first gives weights ~[0, .08, 0, .58, .33] (two exactly zero)
MIX = {
    "regression-sparsemax": ([-0.2, 0.1, -0.4, 0.6, 0.35], 1.7),
    "regression-softmax-norm": ([0.3, -0.8, 0.5, 1.2, -0.1], 0.6),
    "referenceless-cls": ([1.0, 0.2, -0.5, 0.4, 0.9], 2.3),
    "unified-kiwi": ([-0.3, 0.7, 0.2, -1.1, 0.9], 1.4),
    "regression-max-norm": ([0.8, -0.6, 0.1, 0.9, -0.3], 1.3),
}
FIELDS = {"RegressionMetric": ["src", "mt", "ref"], "ReferencelessRegression": ["src", "mt"],
          "UnifiedMetric": ["src", "mt"]}
SYSTEMS_GLOB = "newstest2021.en-de.hyp.*.de"
CHECK_TOL = 1e-6  # --check: scores may differ this much (float kernels of another CPU: 2.8e-7 seen between
#                   two machines, 1-3 float32 ulps; the parity tests allow 1e-5); files not at all


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def news_text() -> tuple[list[str], list[str], list[list[str]]]:
    """newstest2021 en-de: source, reference A, and the system outputs (sorted by file name)."""
    src = read_lines(DATA / "sources" / "newstest2021.en-de.src.en")
    ref = read_lines(DATA / "references" / "newstest2021.en-de.ref.A.de")
    systems = [read_lines(p) for p in sorted((DATA / "system-outputs").glob(SYSTEMS_GLOB))]
    if not systems or any(len(x) != len(src) for x in [ref, *systems]):
        sys.exit(f"{DATA}: newstest2021 en-de source, reference A and system outputs missing or of unequal length")
    return src, ref, systems


def train_tokenizer(folder: Path, src: list[str], ref: list[str], systems: list[list[str]]) -> None:
    """SentencePiece unigram (XLM-R's conventions: nmt_nfkc, <unk>=0 <s>=1 </s>=2) -> tokenizer folder."""
    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer, XLMRobertaTokenizerFast

    refs = [read_lines(p) for p in sorted((DATA / "references").glob("newstest2021.en-de.ref.*.de"))]
    lines = sorted({line.strip() for part in [src, ref, *refs, *systems] for line in part if line.strip()})
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)  # relative paths only: the trainer spec stored in the model names its input
        try:
            Path("train.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
            spm.SentencePieceTrainer.train(input="train.txt", model_prefix="spm", vocab_size=VOCAB,
                                           model_type="unigram", character_coverage=0.9995, num_threads=1,
                                           input_sentence_size=0, shuffle_input_sentence=False,
                                           minloglevel=2)
            folder.mkdir(parents=True, exist_ok=True)
            XLMRobertaTokenizer(vocab_file="spm.model").save_pretrained(str(folder))
        finally:
            os.chdir(cwd)
    fast = XLMRobertaTokenizerFast.from_pretrained(str(folder), from_slow=True)
    fast.save_pretrained(str(folder))


def write_config(folder: Path) -> None:
    from transformers import AutoTokenizer, XLMRobertaConfig

    tok = AutoTokenizer.from_pretrained(str(folder))
    XLMRobertaConfig(vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                     eos_token_id=tok.eos_token_id, **ENCODER).save_pretrained(str(folder))


def _inner(tok, text: str) -> int:
    """The pieces of ``text`` without <s> and </s> (untruncated)."""
    return len(tok(text, add_special_tokens=False)["input_ids"])


def _prefix_with(tok, text: str, n: int) -> str:
    """The longest character prefix of ``text`` with exactly ``n`` inner pieces (``n`` reachable)."""
    lo, hi = 0, len(text)
    while lo < hi:  # the smallest prefix length with >= n pieces
        mid = (lo + hi) // 2
        if _inner(tok, text[:mid]) >= n:
            hi = mid
        else:
            lo = mid + 1
    for end in range(lo, min(len(text), lo + 40) + 1):
        if _inner(tok, text[:end]) == n and (end == len(text) or _inner(tok, text[:end + 1]) != n):
            return text[:end]
    for end in range(lo, min(len(text), lo + 40) + 1):
        if _inner(tok, text[:end]) == n:
            return text[:end]
    raise RuntimeError(f"no prefix with exactly {n} pieces")


def synthetic_triples(tok, src: list[str], ref: list[str], systems: list[list[str]]) -> list[dict]:
    """Lines for the length rules (inner = pieces without <s>/</s>; COMET keeps 508 inner pieces per
    segment, and for unified_metric cuts ``<s> mt </s></s> src </s>`` to 512 ids when the inner
    pieces of mt and src exceed 507)."""
    long_en = " ".join(src[100:160])
    long_de = " ".join(ref[100:160])
    long_mt = " ".join(systems[0][100:160])
    t = []
    t.append({"src": long_en, "mt": systems[1][5], "ref": ref[5]})            # src far over 510
    t.append({"src": src[6], "mt": long_mt, "ref": ref[6]})                   # mt far over 510
    t.append({"src": src[7], "mt": systems[2][7], "ref": long_de})            # ref far over 510
    for n in (507, 508, 509, 510):                                              # the per-segment edge
        t.append({"src": _prefix_with(tok, long_en, n), "mt": _prefix_with(tok, long_mt, n),
                  "ref": _prefix_with(tok, long_de, n)})
    for mt_n, src_n in ((250, 257), (250, 258), (300, 300), (30, 500)):       # the unified 507 edge
        t.append({"src": _prefix_with(tok, long_en, src_n), "mt": _prefix_with(tok, long_mt, mt_n),
                  "ref": ref[8]})
    t.append({"src": "Ja.", "mt": "Ja.", "ref": "Ja."})                        # one piece each
    t.append({"src": "The ﬁrst ＡＢＣ — “quotes” … café", "mt": "Die ﬁrste ＡＢＣ — „Zitate“ … Café",
              "ref": "Das erste ABC – „Anführungszeichen“ … Café"})            # NFKC-normalised characters
    return t


def news_triples(src: list[str], ref: list[str], systems: list[list[str]]) -> list[dict]:
    rows = list(range(0, len(src), 3))[:N_SEGMENTS]
    return [{"src": src[i], "mt": systems[k % len(systems)][i], "ref": ref[i]} for k, i in enumerate(rows)]


def build_model(name: str, out: Path) -> None:
    """Build ``name`` with unbabel-comet's class, set its mix, save hparams.yaml + checkpoints/model.ckpt."""
    import pytorch_lightning as pl
    import torch
    from comet import models
    from pytorch_lightning.core.saving import save_hparams_to_yaml

    cls_name, kwargs = MODELS[name]
    torch.manual_seed(SEED + list(MODELS).index(name))
    model = getattr(models, cls_name)(pretrained_model="encoder", load_pretrained_weights=False,
                                      hidden_sizes=HIDDEN_SIZES, activations="Tanh", final_activation=None,
                                      dropout=0.1, batch_size=16, **kwargs)
    if model.layerwise_attention is not None:  # None with a layer number
        scalars, gamma = MIX[name]
        with torch.no_grad():
            for p, v in zip(model.layerwise_attention.scalar_parameters, scalars, strict=True):
                p.fill_(v)
            model.layerwise_attention.gamma.fill_(gamma)
    folder = out / "models" / name
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    trainer = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False)
    trainer.strategy.connect(model)
    trainer.save_checkpoint(str(folder / "checkpoints" / "model.ckpt"))
    save_hparams_to_yaml(str(folder / "hparams.yaml"), model.hparams)


def score(name: str, out: Path, triples: list[dict]) -> dict:
    from comet import load_from_checkpoint

    folder = out / "models" / name
    model = load_from_checkpoint(str(folder / "checkpoints" / "model.ckpt"))
    fields = FIELDS[MODELS[name][0]]
    samples = [{k: t[k] for k in fields} for t in triples]
    pred = model.predict(samples, batch_size=16, gpus=0, progress_bar=False)
    scores = [float(s) for s in pred.scores]
    return {"folder": f"models/{name}", "class_identifier": model.hparams.class_identifier, "fields": fields,
            "batch_size": 16, "scores": scores, "system_score": float(pred.system_score)}


def train_checkpoint(folder: Path) -> None:
    """``--train DIR``: a training run as unbabel-comet's ``comet-train`` sets it up (EarlyStopping and
    ModelCheckpoint on val_kendall, LearningRateMonitor; 2 epochs on 40 golden triples with made-up
    scores), writing ``DIR/full.ckpt`` (callback and AdamW states) and ``DIR/weights_only.ckpt``: the
    pickles a released checkpoint may look like, for mtscore's restricted reader (not committed)."""
    import pandas as pd
    import pytorch_lightning as pl
    from comet.models import RegressionMetric
    from pytorch_lightning.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
    from pytorch_lightning.loggers import CSVLogger

    folder.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in (GOLDEN / "inputs.jsonl").read_text(encoding="utf-8").splitlines()[:60]]
    df = pd.DataFrame([{**r, "score": (i % 7) / 7.0, "system": f"s{i % 3}"} for i, r in enumerate(rows)])
    df[:40].drop(columns=["system"]).to_csv(folder / "train.csv", index=False)
    df[40:].to_csv(folder / "val.csv", index=False)
    pl.seed_everything(SEED)
    model = RegressionMetric(pretrained_model=str(GOLDEN / "encoder"), load_pretrained_weights=False,
                             hidden_sizes=HIDDEN_SIZES, train_data=[str(folder / "train.csv")],
                             validation_data=[str(folder / "val.csv")], batch_size=8, **MODELS["regression-sparsemax"][1])
    callbacks = [EarlyStopping(monitor="val_kendall", mode="max", patience=1),
                 ModelCheckpoint(dirpath=str(folder), filename="full", monitor="val_kendall", mode="max", save_top_k=1),
                 LearningRateMonitor(logging_interval="step")]
    trainer = pl.Trainer(max_epochs=2, accelerator="cpu", devices=1, callbacks=callbacks,
                         logger=CSVLogger(str(folder / "logs")), enable_progress_bar=False,
                         enable_model_summary=False, num_sanity_val_steps=0)
    trainer.fit(model)
    trainer.save_checkpoint(str(folder / "weights_only.ckpt"), weights_only=True)


def _versions() -> dict:
    return {p: metadata.version(p) for p in ("unbabel-comet", "torch", "pytorch-lightning", "transformers",
                                             "tokenizers", "sentencepiece", "numpy", "entmax", "torchmetrics")}


def _files(out: Path) -> dict:
    files = sorted(p for sub in ("encoder", "models") for p in (out / sub).rglob("*") if p.is_file())
    return {p.relative_to(out).as_posix(): sha256(p) for p in files}


def generate(out: Path) -> dict:
    """Write everything under ``out`` (run with ``out`` as the working folder) and return golden.json."""
    import torch
    from transformers import XLMRobertaTokenizerFast

    torch.set_num_threads(1)
    src, ref, systems = news_text()
    enc = out / "encoder"
    if enc.exists():
        shutil.rmtree(enc)
    train_tokenizer(enc, src, ref, systems)
    write_config(enc)
    tok = XLMRobertaTokenizerFast.from_pretrained(str(enc))
    triples = news_triples(src, ref, systems) + synthetic_triples(tok, src, ref, systems)
    inputs = out / "inputs.jsonl"
    inputs.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in triples), encoding="utf-8")
    if (out / "models").exists():
        shutil.rmtree(out / "models")
    results = {}
    for name in MODELS:
        build_model(name, out)
    for name in MODELS:
        results[name] = score(name, out, triples)
    return {"format": 1, "generator": "tests/oracles/comet_oracle.py", "seed": SEED, "versions": _versions(),
            "inputs": {"file": "inputs.jsonl", "sha256": sha256(inputs), "n": len(triples)},
            "files": _files(out), "models": results}


def add(out: Path, names: list[str]) -> dict:
    """``--add``: build and score ``names`` in the committed folder ``out`` (the working folder) and
    return its golden.json with them added (files and models in the order a full run writes them);
    nothing else is rebuilt. Exits naming the problem when a name is unknown or already there, or
    when the encoder files, inputs.jsonl or the package versions differ from golden.json's."""
    import torch

    torch.set_num_threads(1)
    old = json.loads((out / "golden.json").read_text(encoding="utf-8"))
    unknown = [n for n in names if n not in MODELS]
    present = [n for n in names if n in old["models"] or (out / "models" / n).exists()]
    if unknown or present:
        sys.exit(f"--add: {', '.join(unknown)} not in MODELS" if unknown else
                 f"--add: {', '.join(present)} already in {out} (a full run rebuilds everything)")
    if _versions() != old["versions"]:
        sys.exit(f"--add: this venv's versions {_versions()} differ from golden.json's {old['versions']}")
    inputs = out / old["inputs"]["file"]
    if sha256(inputs) != old["inputs"]["sha256"]:
        sys.exit(f"--add: {inputs} differs from golden.json's sha256")
    changed = [p for p, digest in old["files"].items() if not (out / p).is_file() or sha256(out / p) != digest]
    if changed:
        sys.exit(f"--add: files differ from golden.json: {', '.join(changed)}")
    triples = [json.loads(line) for line in inputs.read_text(encoding="utf-8").splitlines() if line]
    for name in names:
        build_model(name, out)
    results = dict(old["models"])
    for name in names:
        results[name] = score(name, out, triples)
    return {**old, "files": _files(out), "models": {n: results[n] for n in MODELS if n in results}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=GOLDEN, help="where to write (default tests/golden/comet)")
    ap.add_argument("--check", action="store_true",
                    help="rebuild in a temporary folder and compare with --out instead of writing")
    ap.add_argument("--add", nargs="+", metavar="NAME", choices=list(MODELS),
                    help="build and score only these models in --out and add them to its golden.json")
    ap.add_argument("--train", type=Path, metavar="DIR",
                    help="instead: write a trained full.ckpt and weights_only.ckpt to DIR (see train_checkpoint)")
    args = ap.parse_args(argv)
    if os.environ.get("MTSCORE_COMET_ORACLE") != "1":
        print("comet_oracle.py: set MTSCORE_COMET_ORACLE=1 to run it (in the unbabel-comet venv; see its docstring)",
              file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore")
    if args.train is not None:
        import torch

        torch.set_num_threads(1)
        train_checkpoint(args.train.resolve())
        print(f"wrote {args.train}/full.ckpt and weights_only.ckpt")
        return 0
    if args.add and args.check:
        ap.error("--add and --check: one at a time")
    target = Path(tempfile.mkdtemp(prefix="comet-oracle-")) if args.check else args.out.resolve()
    target.mkdir(parents=True, exist_ok=True)
    cwd = os.getcwd()
    os.chdir(target)  # pretrained_model "encoder" is relative to it
    try:
        golden = add(target, args.add) if args.add else generate(target)
    finally:
        os.chdir(cwd)
    text = json.dumps(golden, indent=1, ensure_ascii=False) + "\n"
    if not args.check:
        (target / "golden.json").write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        return 0
    old = json.loads((args.out / "golden.json").read_text(encoding="utf-8"))
    return compare(old, golden, target)


def compare(old: dict, new: dict, folder: Path) -> int:
    """``--check``: inputs and files must be identical; scores equal to :data:`CHECK_TOL` (another
    CPU's float kernels may move the last bits), else exit status 1 naming what differs."""
    bad = ["inputs"] if old["inputs"] != new["inputs"] else []
    bad += [f"files/{p}" for p in sorted(set(old["files"]) | set(new["files"]))
            if old["files"].get(p) != new["files"].get(p)]
    worst = 0.0
    for name in sorted(set(old["models"]) | set(new["models"])):
        a, b = old["models"].get(name), new["models"].get(name)
        if a is None or b is None or len(a["scores"]) != len(b["scores"]):
            bad.append(f"models/{name}")
            continue
        diff = max(abs(x - y) for x, y in zip(a["scores"] + [a["system_score"]], b["scores"] + [b["system_score"]]))
        worst = max(worst, diff)
        if diff > CHECK_TOL:
            bad.append(f"models/{name} (max score difference {diff:.3g})")
    if not bad:
        shutil.rmtree(folder)
    print(f"check: max score difference {worst:.3g}; " +
          ("the same" if not bad else f"differs ({folder}): " + ", ".join(bad[:10])))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
