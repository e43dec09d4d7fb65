"""P16 item 8: the command line starts numpy with one BLAS thread unless the user chose a number
(OPENBLAS_NUM_THREADS or OMP_NUM_THREADS); the library leaves the environment alone."""
import os

import pytest

from mtscore.bindings.cli import main as cli

BLAS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


@pytest.fixture
def no_blas_env(monkeypatch):
    for var in BLAS:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_cli_sets_one_blas_thread(no_blas_env, capsys):
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    capsys.readouterr()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert "OMP_NUM_THREADS" not in os.environ


@pytest.mark.parametrize(("var", "value"), [("OPENBLAS_NUM_THREADS", "4"), ("OMP_NUM_THREADS", "3")])
def test_cli_keeps_the_users_choice(no_blas_env, capsys, var, value):
    no_blas_env.setenv(var, value)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    capsys.readouterr()
    assert {v: os.environ.get(v) for v in BLAS} == {**dict.fromkeys(BLAS), var: value}


def test_meta_and_human_and_the_library_leave_blas_alone(no_blas_env, capsys):
    import mtscore

    with pytest.raises(SystemExit):
        cli.main(["meta", "--help"])
    capsys.readouterr()
    assert mtscore.score(["a b c"], [["a b c"]], metrics=["bleu"]) is not None
    assert not any(v in os.environ for v in BLAS)
