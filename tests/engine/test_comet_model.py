"""Locating a COMET model (mtscore.engine.comet.model): a local folder or its checkpoint, a Hugging Face
name or its bare Unbabel alias from a real hub-cache layout built in a temporary folder (offline), the
encoder's config and tokenizer from the cache or a local folder, a download only when allowed; and
one clear line for every refusal (no hparams.yaml, no checkpoint, unknown class, unsupported
options, a name offline without a cache)."""
from __future__ import annotations

from pathlib import Path

import pytest
from comet_fixtures import HPARAMS, with_key, write_encoder_folder, write_model_folder

from mtscore.engine.checkpoints import CheckpointError
from mtscore.engine.comet import CLASS_IDENTIFIERS, comet_repo_id, resolve_comet_model
from mtscore.engine.encoder import EncoderError
from mtscore.errors import UserError

COMMIT = "c" * 40
ENC_COMMIT = "e" * 40


@pytest.fixture
def enc(tmp_path):
    return write_encoder_folder(tmp_path / "xlmr-files")


@pytest.mark.parametrize("cid", CLASS_IDENTIFIERS)
def test_local_folder_each_class(tmp_path, enc, cid):
    folder = write_model_folder(tmp_path / "my-comet", cid)
    files = resolve_comet_model(folder, encoder=enc)
    assert files.name == "my-comet"
    assert files.folder == folder.absolute()
    assert files.revision is None
    assert files.class_identifier == cid
    assert files.hparams_file == folder / "hparams.yaml"
    assert files.checkpoint == folder / "checkpoints" / "model.ckpt"
    assert files.encoder_folder == enc
    assert files.encoder_name == "xlmr-files"
    assert files.config["hidden_size"] == 8
    assert files.tokenizer_file == enc / "tokenizer.json"
    # the checkpoint file itself names the same model (hparams.yaml two levels up, as unbabel-comet reads it)
    assert resolve_comet_model(str(files.checkpoint), encoder=str(enc)).folder == files.folder


def test_a_ckpt_file_given_is_the_checkpoint_read(tmp_path, enc):
    """--comet-model .../checkpoints/epoch=3.ckpt reads that file (as unbabel-comet's
    load_from_checkpoint does), not the folder's model.ckpt beside it."""
    folder = write_model_folder(tmp_path / "trained", "regression_metric")
    other = folder / "checkpoints" / "epoch=3.ckpt"
    other.write_bytes(b"another checkpoint")
    files = resolve_comet_model(other, encoder=enc)
    assert files.folder == folder.absolute()
    assert files.checkpoint == other.absolute()
    assert files.checkpoint != folder / "checkpoints" / "model.ckpt"
    (folder / "checkpoints" / "model.ckpt").unlink()   # the folder's own checkpoint is not needed then
    assert resolve_comet_model(other, encoder=enc).checkpoint == other.absolute()
    with pytest.raises(CheckpointError, match=r"checkpoints/model\.ckpt missing"):
        resolve_comet_model(folder, encoder=enc)


def test_sentencepiece_only_encoder_folder(tmp_path):
    enc = write_encoder_folder(tmp_path / "infoxlm", tokenizer="sentencepiece.bpe.model")
    files = resolve_comet_model(write_model_folder(tmp_path / "kiwi", "unified_metric"), encoder=enc)
    assert files.tokenizer_file is None
    assert (files.encoder_folder / "sentencepiece.bpe.model").is_file()


def test_pretrained_model_as_a_local_folder(tmp_path, monkeypatch):
    """pretrained_model names a folder relative to the working directory: it is used as it is."""
    write_encoder_folder(tmp_path / "xlm-roberta-large")
    monkeypatch.chdir(tmp_path)
    files = resolve_comet_model(write_model_folder(tmp_path / "m"))
    assert files.encoder_folder == tmp_path / "xlm-roberta-large"


def test_no_hparams_and_no_checkpoint(tmp_path, enc):
    folder = tmp_path / "empty"
    folder.mkdir()
    with pytest.raises(CheckpointError, match=r"hparams\.yaml missing; a COMET model folder holds hparams\.yaml "
                                              r"and checkpoints/model\.ckpt") as e:
        resolve_comet_model(folder, encoder=enc)
    assert str(e.value).startswith(str(folder.absolute()) + ": ")
    no_ckpt = write_model_folder(tmp_path / "no-ckpt", checkpoint=False)
    with pytest.raises(CheckpointError, match=r"no-ckpt: checkpoints/model\.ckpt missing"):
        resolve_comet_model(no_ckpt, encoder=enc)
    with pytest.raises(CheckpointError, match=r"a file that is not a \.ckpt"):
        resolve_comet_model(no_ckpt / "hparams.yaml", encoder=enc)
    with pytest.raises(CheckpointError, match=r"--comet-model 'no such/\.\./x': no such file or folder, and not a "
                                              r"COMET model name.*Unbabel/wmt22-comet-da"):
        resolve_comet_model("no such/../x")


def test_unknown_class_identifier_lists_the_supported(tmp_path, enc):
    folder = write_model_folder(tmp_path / "m", hparams=with_key(HPARAMS["regression_metric"], "class_identifier",
                                                                 "xcomet_metric"), checkpoint=False)
    with pytest.raises(CheckpointError) as e:
        resolve_comet_model(folder, encoder=enc)
    assert str(e.value) == (f"{folder.absolute() / 'hparams.yaml'}: class_identifier: 'xcomet_metric' is not "
                            "supported (supported: regression_metric, referenceless_regression_metric, unified_metric)")
    assert "\n" not in str(e.value)
    assert isinstance(e.value, UserError)
    folder = write_model_folder(tmp_path / "m2", hparams=with_key(HPARAMS["regression_metric"], "class_identifier",
                                                                  None), checkpoint=False)
    with pytest.raises(CheckpointError, match=r"class_identifier: missing \(supported: regression_metric, "):
        resolve_comet_model(folder, encoder=enc)


@pytest.mark.parametrize(("cid", "key", "value", "message"), [
    # unbabel-comet 2.2.7 raises "Invalid pooling technique." for these when it first scores
    ("regression_metric", "pool", "mix", r"pool: 'mix' is not supported \(supported: avg, cls, max, default: the "
                                         r"values unbabel-comet 2.2.7 accepts\)$"),
    ("regression_metric", "pool", "cls+avg", r"pool: 'cls\+avg' is not supported"),
    ("referenceless_regression_metric", "pool", "MAX", r"pool: 'MAX' is not supported"),
    ("referenceless_regression_metric", "pool", None, r"pool: missing \(supported: avg, cls, max, default\)"),
    ("regression_metric", "layer", "last", r"layer: 'last' is not supported \(supported: mix, or a layer number\)"),
    ("regression_metric", "layer", "-1", r"layer: -1 is not supported"),
    ("unified_metric", "sent_layer", "cls", r"sent_layer: 'cls' is not supported"),
    ("unified_metric", "layer", "24", r"layer: 24 differs from sent_layer 'mix'"),
    ("regression_metric", "use_context", "true", r"use_context: true \(document-level context pooling\) is not"),
    ("regression_metric", "encoder_model", "XLM-RoBERTa-XL",
     r"encoder_model: 'XLM-RoBERTa-XL' is not supported \(supported: XLM-RoBERTa\)"),
    ("regression_metric", "encoder_model", "MiniLM", r"encoder_model: 'MiniLM' is not supported"),
    ("regression_metric", "layer_transformation", "entmax",
     r"layer_transformation: 'entmax' is not supported \(supported: softmax, sparsemax, sparsemax_patch\)"),
    ("regression_metric", "layer_transformation", None, r"layer_transformation: missing \(needed with layer: mix"),
    ("unified_metric", "layer_norm", None, r"layer_norm: missing \(needed with sent_layer: mix"),
    ("regression_metric", "layer_norm", "'no'", r"layer_norm: 'no': expected true or false"),
    ("regression_metric", "activations", "ReLU", r"activations: 'ReLU' is not supported \(supported: Tanh, Sigmoid\)"),
    ("regression_metric", "activations", None, r"activations: missing"),
    ("regression_metric", "final_activation", "Softmax",
     r"final_activation: 'Softmax' is not supported \(supported: Tanh, Sigmoid, null\)"),
    ("regression_metric", "hidden_sizes", "[]", r"hidden_sizes: \[\]: expected a non-empty list"),
    ("regression_metric", "pretrained_model", None, r"pretrained_model: missing"),
    ("unified_metric", "word_level_training", "true", r"word_level_training: true \(word-level tags"),
    ("unified_metric", "input_segments", "[mt, src, ref]",
     r"input_segments: \['mt', 'src', 'ref'\] is not supported \(supported: \[mt, src\]\)"),
])
def test_unsupported_options_one_line(tmp_path, enc, cid, key, value, message):
    folder = write_model_folder(tmp_path / "m", hparams=with_key(HPARAMS[cid], key, value), checkpoint=False)
    with pytest.raises(CheckpointError, match=message) as e:
        resolve_comet_model(folder, encoder=enc)
    assert str(e.value).startswith(f"{folder.absolute() / 'hparams.yaml'}: {key}: ")
    assert "\n" not in str(e.value)


def test_supported_variants_pass(tmp_path, enc):
    base = HPARAMS["regression_metric"]
    for key, value in [("pool", "cls"), ("pool", "max"), ("pool", "default"), ("layer", "2"), ("layer_transformation", "softmax"),
                       ("activations", "sigmoid"), ("final_activation", "Sigmoid"), ("use_context", "false")]:
        folder = write_model_folder(tmp_path / f"{key}-{value}", hparams=with_key(base, key, value))
        assert resolve_comet_model(folder, encoder=enc).hparams[key] is not None
    # a layer number needs neither layer_transformation nor layer_norm
    text = with_key(with_key(with_key(base, "layer", "1"), "layer_norm", None), "layer_transformation", None)
    assert resolve_comet_model(write_model_folder(tmp_path / "l1", hparams=text), encoder=enc).hparams["layer"] == 1


def test_encoder_folder_errors(tmp_path):
    folder = write_model_folder(tmp_path / "m", checkpoint=False)
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "model.ckpt").write_bytes(b"not read here")
    no_tok = write_encoder_folder(tmp_path / "enc", tokenizer="")
    with pytest.raises(CheckpointError, match=r"--comet-encoder .*enc: the folder has no tokenizer\.json or "
                                              r"sentencepiece\.bpe\.model \(the encoder's config and tokenizer\)"):
        resolve_comet_model(folder, encoder=no_tok)
    (no_tok / "config.json").write_text("[1, 2]")
    (no_tok / "tokenizer.json").write_text("{}")
    with pytest.raises(CheckpointError, match=r"config\.json: expected a JSON object, got list"):
        resolve_comet_model(folder, encoder=no_tok)
    (no_tok / "config.json").write_text("{oops")
    with pytest.raises(CheckpointError, match=r"config\.json: not a readable JSON file"):
        resolve_comet_model(folder, encoder=no_tok)


# ---- names: a Hugging Face cache in a temporary folder ------------------------------------------

def test_bare_names_are_unbabel_repositories():
    assert comet_repo_id("wmt22-comet-da") == "Unbabel/wmt22-comet-da"
    assert comet_repo_id("Unbabel/wmt22-cometkiwi-da") == "Unbabel/wmt22-cometkiwi-da"
    assert comet_repo_id("someone/my-comet") == "someone/my-comet"


def _snapshot(home: Path, repo: str, commit: str, files: dict[str, bytes]) -> Path:
    """huggingface_hub's cache layout: refs/main -> snapshots/<commit>/<file> -> ../blobs/<n>."""
    repo_dir = home / "hub" / ("models--" + repo.replace("/", "--"))
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    snap = repo_dir / "snapshots" / commit
    (repo_dir / "blobs").mkdir()
    for i, (name, data) in enumerate(files.items()):
        blob = repo_dir / "blobs" / f"blob{i}"
        blob.write_bytes(data)
        dst = snap / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.symlink_to(Path(*[".."] * (len(Path(name).parts) + 1)) / "blobs" / blob.name)
    return snap


@pytest.fixture
def hf_home(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub", reason="loading by name needs huggingface_hub (the hub extra)")
    home = tmp_path / "hf"
    src = write_model_folder(tmp_path / "src-model")
    _snapshot(home, "Unbabel/wmt22-comet-da", COMMIT,
              {"hparams.yaml": (src / "hparams.yaml").read_bytes(),
               "checkpoints/model.ckpt": (src / "checkpoints" / "model.ckpt").read_bytes()})
    enc = write_encoder_folder(tmp_path / "src-enc")
    _snapshot(home, "xlm-roberta-large", ENC_COMMIT,
              {"config.json": (enc / "config.json").read_bytes(), "tokenizer.json": b"{}"})
    for v in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)  # no folder named like a model here
    return home


@pytest.mark.parametrize("name", ["Unbabel/wmt22-comet-da", "wmt22-comet-da"])
def test_name_and_alias_from_the_cache_offline(hf_home, name):
    files = resolve_comet_model(name)
    snap = hf_home / "hub" / "models--Unbabel--wmt22-comet-da" / "snapshots" / COMMIT
    assert files.name == "Unbabel/wmt22-comet-da"
    assert files.revision == COMMIT
    assert files.folder == snap
    assert files.checkpoint == snap / "checkpoints" / "model.ckpt"
    assert files.hparams["pretrained_model"] == "xlm-roberta-large"
    assert files.encoder_name == "xlm-roberta-large"
    assert files.encoder_revision == ENC_COMMIT
    assert files.encoder_folder.name == ENC_COMMIT
    assert files.config["num_hidden_layers"] == 2


def test_name_offline_without_cache_names_the_variable_and_the_command(hf_home):
    with pytest.raises(EncoderError) as e:
        resolve_comet_model("wmt22-cometkiwi-da")
    msg = str(e.value)
    assert msg.startswith("--comet-model 'Unbabel/wmt22-cometkiwi-da': not in the Hugging Face cache ")
    assert "HF_HUB_OFFLINE is set (no download tried)" in msg
    assert "`hf download Unbabel/wmt22-cometkiwi-da`" in msg
    assert str(hf_home / "hub") in msg
    assert msg.endswith("or pass the model folder (hparams.yaml and checkpoints/model.ckpt)")
    assert "\n" not in msg
    assert isinstance(e.value, UserError)
    with pytest.raises(EncoderError, match=r"'Unbabel/wmt22-comet-da' at revision 'v9': not in the Hugging Face"):
        resolve_comet_model("wmt22-comet-da", revision="v9")


def test_encoder_offline_without_cache_names_pretrained_model(hf_home, tmp_path):
    folder = write_model_folder(tmp_path / "kiwi", "unified_metric")
    with pytest.raises(EncoderError) as e:
        resolve_comet_model(folder)
    msg = str(e.value)
    assert msg.startswith(f"{folder / 'hparams.yaml'}: pretrained_model 'microsoft/infoxlm-large': not in the "
                          "Hugging Face cache")
    assert "HF_HUB_OFFLINE" in msg
    assert "`hf download microsoft/infoxlm-large`" in msg
    assert msg.endswith("or pass --comet-encoder DIR, a folder with its config.json and tokenizer.json "
                        "(or sentencepiece.bpe.model)")
    # --comet-encoder names a cached repository instead
    files = resolve_comet_model(folder, encoder="xlm-roberta-large")
    assert files.encoder_revision == ENC_COMMIT


def test_download_only_when_allowed_and_only_the_model_files(hf_home, monkeypatch, tmp_path):
    import huggingface_hub

    calls = []
    real = huggingface_hub.snapshot_download
    target = write_model_folder(tmp_path / "downloaded" / ("d" * 40), "referenceless_regression_metric")

    def fake(repo_id, **kw):
        calls.append((repo_id, kw.get("local_files_only", False), sorted(kw.get("allow_patterns") or [])))
        if repo_id == "Unbabel/wmt20-comet-qe-da":
            if kw.get("local_files_only"):
                raise huggingface_hub.errors.LocalEntryNotFoundError("not cached")
            return str(target)
        return real(repo_id, **kw)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    with pytest.raises(EncoderError, match="HF_HUB_OFFLINE is set"):
        resolve_comet_model("wmt20-comet-qe-da")
    assert calls == [("Unbabel/wmt20-comet-qe-da", True, ["checkpoints/model.ckpt", "hparams.yaml"])]
    monkeypatch.delenv("HF_HUB_OFFLINE")
    calls.clear()
    files = resolve_comet_model("wmt20-comet-qe-da")
    assert files.folder == target
    assert files.revision == "d" * 40
    assert calls[:2] == [("Unbabel/wmt20-comet-qe-da", True, ["checkpoints/model.ckpt", "hparams.yaml"]),
                         ("Unbabel/wmt20-comet-qe-da", False, ["checkpoints/model.ckpt", "hparams.yaml"])]
    assert calls[2][:2] == ("xlm-roberta-large", True)  # the encoder: found in the cache, nothing downloaded
    assert len(calls) == 3
    assert "pytorch_model.bin" not in calls[2][2]
    assert "model.safetensors" not in calls[2][2]


def test_failed_download_and_repository_without_the_files(hf_home, monkeypatch, tmp_path):
    import huggingface_hub

    monkeypatch.delenv("HF_HUB_OFFLINE")
    empty = tmp_path / "empty-snapshot"
    empty.mkdir()

    def fake(repo_id, **kw):
        if kw.get("local_files_only"):
            raise huggingface_hub.errors.LocalEntryNotFoundError("not cached")
        if repo_id == "Unbabel/gone":
            raise ConnectionError("Failed to resolve 'huggingface.co'")
        return str(empty)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    with pytest.raises(EncoderError, match=r"--comet-model 'Unbabel/gone': .*the download failed \(ConnectionError: "
                                           r"Failed to resolve"):
        resolve_comet_model("gone")
    with pytest.raises(EncoderError, match=r"--comet-model 'someone/not-comet': the Hub repository has no "
                                           r"hparams\.yaml, checkpoints/model\.ckpt$"):
        resolve_comet_model("someone/not-comet")


def test_encoder_cached_under_its_new_hub_name(hf_home, tmp_path):
    """The Hub renamed xlm-roberta-large to FacebookAI/xlm-roberta-large; a cache holding only the new
    name serves a model whose hparams.yaml says xlm-roberta-large (and the other way round)."""
    old = hf_home / "hub" / "models--xlm-roberta-large"
    old.rename(hf_home / "hub" / "models--FacebookAI--xlm-roberta-large")
    files = resolve_comet_model("wmt22-comet-da")
    assert files.encoder_name == "FacebookAI/xlm-roberta-large"
    assert files.encoder_revision == ENC_COMMIT
    assert files.config["hidden_size"] == 8
    (hf_home / "hub" / "models--FacebookAI--xlm-roberta-large").rename(old)
    folder = write_model_folder(tmp_path / "new-name",
                                hparams=with_key(HPARAMS["regression_metric"], "pretrained_model",
                                                 "FacebookAI/xlm-roberta-large"))
    assert resolve_comet_model(folder).encoder_name == "xlm-roberta-large"
    # neither name cached: the error names the one asked for
    with pytest.raises(EncoderError, match=r"--comet-encoder 'FacebookAI/xlm-roberta-base': not in the Hugging"):
        resolve_comet_model(folder, encoder="FacebookAI/xlm-roberta-base")


def test_encoder_that_is_neither_folder_nor_name(tmp_path, enc):
    folder = write_model_folder(tmp_path / "m")
    with pytest.raises(CheckpointError, match=r"^--comet-encoder 'no/such/../dir': no such folder, and not a "
                                              r"Hugging Face model name$"):
        resolve_comet_model(folder, encoder="no/such/../dir")
    text = with_key(HPARAMS["regression_metric"], "pretrained_model", "'./gone folder'")
    hp_folder = write_model_folder(tmp_path / "m2", hparams=text, checkpoint=True)
    with pytest.raises(CheckpointError, match=r"m2/hparams\.yaml: pretrained_model '\./gone folder': no such folder"):
        resolve_comet_model(hp_folder)


def test_names_without_huggingface_hub(tmp_path, monkeypatch):
    """Without the hub extra a name is one line naming the install command; local folders still work."""
    import sys

    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(EncoderError, match=r"^--comet-model 'Unbabel/wmt22-comet-da': not a local path; loading "
                                           r"models by name needs huggingface_hub: pip install .*hub"):
        resolve_comet_model("wmt22-comet-da")
    enc = write_encoder_folder(tmp_path / "enc")
    assert resolve_comet_model(write_model_folder(tmp_path / "m"), encoder=enc).name == "m"
