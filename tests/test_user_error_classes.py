"""The encoder's and the output writer's errors are :class:`~mtscore.errors.UserError`\\ s, as the
other user-facing errors, and keep the built-in class they always had (``EncoderError`` a
``RuntimeError``, ``OutputError`` an ``OSError`` with its ``filename``/``strerror``); the command
line prints each as the one line it always printed (paths no golden record covers: an output
folder that does not exist, a model folder without ``config.json``, an unknown ``--device``)."""
from __future__ import annotations

import errno

import pytest

from mtscore.bindings.cli.main import main
from mtscore.bindings.cli.runner import ANALYSIS, SCORING, run_command
from mtscore.engine.atomic import OutputError
from mtscore.engine.encoder import EncoderError
from mtscore.errors import UserError


def test_both_are_user_errors_and_keep_their_base():
    enc = EncoderError("--model m: config.json missing")
    assert isinstance(enc, UserError)
    assert isinstance(enc, RuntimeError)
    out = OutputError(errno.ENOENT, "its folder does not exist", "d/x.json", "--output d/x.json")
    assert isinstance(out, UserError)
    assert isinstance(out, OSError)
    assert (out.errno, out.strerror, out.filename) == (errno.ENOENT, "its folder does not exist", "d/x.json")
    assert str(out) == "cannot write --output d/x.json: its folder does not exist"
    with pytest.raises(RuntimeError, match=r"config\.json missing"):
        raise enc
    with pytest.raises(OSError, match="cannot write"):
        raise out


def _raise(e: Exception):
    def fn(args) -> int:
        raise e
    return fn


def test_runner_lines(capsys):
    out = OutputError(errno.ENOENT, "its folder does not exist", "d/x.csv", "--output d/x.csv")
    assert run_command(_raise(out), None, "mtscore", SCORING) == 1
    assert capsys.readouterr().err == "mtscore: error: cannot write --output d/x.csv: its folder does not exist\n"
    assert run_command(_raise(out), None, "mtscore", ANALYSIS) == 1  # the analysis commands' file-error line
    assert capsys.readouterr().err == "mtscore: error: d/x.csv: its folder does not exist\n"
    for policy in (SCORING, ANALYSIS):
        assert run_command(_raise(EncoderError("--model m: bad")), None, "mtscore", policy) == 1
        assert capsys.readouterr().err == "mtscore: error: --model m: bad\n"


@pytest.fixture
def files(tmp_path):
    ref, hyp = tmp_path / "ref.txt", tmp_path / "hyp.txt"
    ref.write_text("the cat sat on the mat\na dog barked\n")
    hyp.write_text("the cat is on the mat\na dog barks\n")
    return str(ref), str(hyp)


def test_cli_output_folder_missing(files, tmp_path, capsys):
    ref, hyp = files
    out = str(tmp_path / "no_such_folder" / "x.json")
    assert main([ref, "-i", hyp, "-m", "bleu", "-q", "-o", out]) == 1
    assert capsys.readouterr().err == f"mtscore: error: cannot write --output {out}: its folder does not exist\n"


def test_cli_encoder_errors(files, tmp_path, capsys):
    pytest.importorskip("onnxruntime", reason="the bertscore extra is not installed")
    ref, hyp = files
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([ref, "-i", hyp, "-m", "bertscore", "-q", "--model", str(empty)]) == 1
    assert capsys.readouterr().err == (
        f"mtscore: error: --model {empty}: config.json missing; a Hugging Face model directory needs "
        "config.json, model.safetensors and tokenizer.json\n")
    assert main([ref, "-i", hyp, "-m", "bertscore", "-q", "--device", "tpu"]) == 1
    assert capsys.readouterr().err == (
        "mtscore: error: --device 'tpu': expected cpu, cuda, cuda:N (N a GPU number) or auto\n")
