"""Paired-test and CI reports are byte-identical to the sacrebleu 2.6.0 CLI's output."""
import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

pytest.importorskip("sacrebleu")
pytest.importorskip("tabulate")
from sacrebleu.metrics import BLEU as SBLEU
from sacrebleu.metrics import CHRF as SCHRF

from mtscore.bindings.cli.significance_report import run_ci_cli, run_paired_cli

try:
    from mtscore import BLEU, CHRF
except Exception:  # pragma: no cover
    BLEU, CHRF = SBLEU, SCHRF

SYS = ["LIUM-NMT.4900", "C-3MA.4959", "FBK.4870"]


@pytest.fixture(scope="module")
def files(shared_data, tmp_path_factory):
    d = shared_data / "wmt17-en-de-systems"
    out = tmp_path_factory.mktemp("sigcli")
    for name, src in [("ref.txt", d / "reference.txt")] + [(f"{s}.txt", d / f"newstest2017.{s}.en-de.txt") for s in SYS]:
        lines = require(src).read_text(encoding="utf-8").split("\n")[:200]
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _sacrebleu_cli(cwd, *argv):
    env = dict(os.environ, SACREBLEU_SEED="12345", NO_COLOR="1")
    env.pop("SACREBLEU_FORMAT", None)
    r = subprocess.run([sys.executable, "-m", "sacrebleu", "-q", *argv], cwd=cwd, env=env,
                       capture_output=True, text=True, check=True)
    return r.stdout


def _lines(p: Path):
    return [x.rstrip() for x in p.read_text(encoding="utf-8").split("\n")][:200]


@pytest.mark.parametrize(("fmt", "test", "metrics"), [("text", "bs", ("bleu", "chrf")), ("latex", "ar", ("bleu", "chrf")),
                                              ("json", "bs", ("bleu",)), ("text", "ar", ("chrf", "bleu"))])
def test_paired_report_equals_sacrebleu_cli(files, fmt, test, metrics, monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    flag = ["-pbs"] if test == "bs" else ["-par", "-parn", "300"]
    want = _sacrebleu_cli(files, "ref.txt", "-i", *[f"{s}.txt" for s in SYS], "-m", *metrics, *flag, "-f", fmt)
    args = argparse.Namespace(paired_bs=test == "bs", paired_ar=test == "ar", paired_bs_n=1000, paired_ar_n=300,
                              format=fmt, width=1, short=False, no_color=True)
    refs = [_lines(files / "ref.txt")]
    make = {"bleu": BLEU, "chrf": CHRF}
    systems = {f"{s}.txt": _lines(files / f"{s}.txt") for s in SYS}
    got = run_paired_cli(args, systems, refs, [make[m]() for m in metrics], color=False)
    assert got == want


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_ci_report_equals_sacrebleu_cli(files, fmt, monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    want = _sacrebleu_cli(files, "ref.txt", "-i", "FBK.4870.txt", "-m", "chrf", "bleu", "-ci", "-f", fmt)
    args = argparse.Namespace(confidence=True, confidence_n=1000, format=fmt, width=1, short=False,
                              no_color=True, score_only=False)
    refs = [_lines(files / "ref.txt")]
    got = run_ci_cli(args, _lines(files / "FBK.4870.txt"), refs, {"CHRF": CHRF(), "BLEU": BLEU()}, color=False)
    assert got == want


def test_ci_report_with_explicit_seed(files, monkeypatch):
    # an explicit seed takes its own path (bootstrap_ci with seed=); it wins over SACREBLEU_SEED
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    want = _sacrebleu_cli(files, "ref.txt", "-i", "FBK.4870.txt", "-m", "chrf", "bleu", "-ci", "-f", "text")
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    args = argparse.Namespace(confidence=True, confidence_n=1000, format="text", width=1, short=False,
                              no_color=True, score_only=False, seed="12345")
    refs = [_lines(files / "ref.txt")]
    got = run_ci_cli(args, _lines(files / "FBK.4870.txt"), refs, {"CHRF": CHRF(), "BLEU": BLEU()}, color=False)
    assert got == want


def test_json_with_chrf_does_not_crash(files):
    # sacrebleu's CLI crashes here (numpy float32 mean is not JSON serialisable); we write floats
    import json
    args = argparse.Namespace(paired_bs=True, paired_ar=False, paired_bs_n=200, format="json", width=1,
                              short=False, no_color=True)
    refs = [_lines(files / "ref.txt")]
    systems = {f"{s}.txt": _lines(files / f"{s}.txt") for s in SYS}
    out = json.loads(run_paired_cli(args, systems, refs, [CHRF()], color=False))
    assert out[0]["system"] == "Baseline: LIUM-NMT.4900.txt"
    assert isinstance(out[1]["chrF2"]["mean"], float)
