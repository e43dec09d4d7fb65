"""The mtscore command streams its inputs in chunks (P6 finding 2: it used to read every file and
prepare every reference at once, ~9 GB for 1M lines) and the smaller CLI findings of P6 (6).

Chunked runs are compared with one-chunk runs of the same command (which test_cli.py compares
with the sacrebleu command), in every mode: one system, several, paired tests, CIs, sentence
level, per-segment tables, stdin, --num-refs.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from mtscore.bindings.cli import inputs as cli_input
from mtscore.bindings.cli import main as cli

LINES = 53
HYPS = [f"the cat {i % 7} sat on the mat number {i} ." if i % 5 else f"a dog {i} barked" for i in range(LINES)]
HYPS2 = [f"the cat sat on mat {i}" if i % 4 else f"mat {i}" for i in range(LINES)]
REFS = [f"the cat sat on the mat {i} ." for i in range(LINES)]
REFS2 = [f"a cat is on the mat {i % 3}" for i in range(LINES)]


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, lines in (("h1", HYPS), ("h2", HYPS2), ("r1", REFS), ("r2", REFS2)):
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out[name] = str(p)
    tab = tmp_path / "tab"
    tab.write_text("\n".join(f"{a}\t{b}" for a, b in zip(REFS, REFS2)) + "\n", encoding="utf-8")
    out["tab"] = str(tab)
    return out


class _Stdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def _run(argv, capsys, monkeypatch, chunk=None, stdin=None):
    if chunk is not None:
        monkeypatch.setattr(cli_input, "CHUNK", chunk)
        monkeypatch.setattr(cli_input.open_inputs, "__defaults__", (chunk,))
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", _Stdin(stdin))
    rc = cli.main(["-q", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


MODES = [
    ["{r1}", "-i", "{h1}", "-m", "bleu", "chrf", "ter"],
    ["{r1}", "{r2}", "-i", "{h1}", "-m", "bleu", "chrf", "ter", "-f", "text"],
    ["{r1}", "-i", "{h1}", "{h2}", "-m", "bleu", "chrf", "ter"],
    ["{r1}", "-i", "{h1}", "{h2}", "-m", "bleu", "chrf", "--paired-bs", "-pbsn", "50"],
    ["{r1}", "-i", "{h1}", "{h2}", "-m", "bleu", "ter", "--paired-ar", "-parn", "50", "-f", "text"],
    ["{r1}", "-i", "{h1}", "-m", "bleu", "chrf", "-ci", "-cin", "50"],
    ["{r1}", "-i", "{h1}", "-m", "bleu", "-sl"],
    ["{r1}", "-i", "{h1}", "{h2}", "-m", "bleu", "chrf", "ter", "-f", "tsv"],
    ["{tab}", "-nr", "2", "-i", "{h1}", "-m", "bleu", "chrf"],
]


@pytest.mark.parametrize("mode", MODES, ids=[" ".join(m[3:]) for m in MODES])
def test_chunked_equals_one_chunk(mode, files, capsys, monkeypatch):
    argv = [a.format(**files) for a in mode]
    whole = _run(argv, capsys, monkeypatch, chunk=10**6)
    chunked = _run(argv, capsys, monkeypatch, chunk=7)
    assert whole[0] == 0, whole[2]
    assert chunked == whole


def test_stdin_systems_chunked(files, capsys, monkeypatch):
    data = "".join(f"{a}\t{b}\r\n" for a, b in zip(HYPS, HYPS2)).encode()
    whole = _run([files["r1"], "-m", "bleu", "chrf"], capsys, monkeypatch, 10**6, stdin=data)
    chunked = _run([files["r1"], "-m", "bleu", "chrf"], capsys, monkeypatch, 7, stdin=data)
    by_files = _run([files["r1"], "-i", files["h1"], files["h2"], "-m", "bleu", "chrf"],
                    capsys, monkeypatch)
    assert chunked == whole
    assert whole[1].replace(files["h1"], "System 1").replace(files["h2"], "System 2") == by_files[1] \
        .replace(files["h1"], "System 1").replace(files["h2"], "System 2")


def test_stdin_invalid_utf8_names_the_line(files, capsys, monkeypatch):
    data = ("\n".join(HYPS[:40]) + "\nbad \xff line\n").encode("latin-1")
    rc, out, err = _run([files["r1"], "-m", "bleu"], capsys, monkeypatch, 7, stdin=data)
    assert rc == 1
    assert out == ""
    assert err.startswith("mtscore: error: <stdin>:41: invalid UTF-8")
    assert err.count("\n") == 1


def test_stdin_field_count_names_the_line(files, capsys, monkeypatch):
    data = "".join(f"{a}\t{b}\n" for a, b in zip(HYPS, HYPS2)).encode()
    data = data.replace(b"\n", b"\tx\n", 30).replace(b"\tx\n", b"\n", 29)  # line 30 has 3 fields
    rc, _, err = _run([files["r1"], "-m", "bleu"], capsys, monkeypatch, 7, stdin=data)
    assert rc == 1
    assert "<stdin>:30: 3 tab-separated fields" in err


def test_line_count_mismatch_found_while_streaming(files, tmp_path, capsys, monkeypatch):
    short = tmp_path / "short"
    short.write_text("\n".join(HYPS[:20]) + "\n", encoding="utf-8")
    rc, out, err = _run([files["r1"], "-i", str(short), "-m", "bleu"], capsys, monkeypatch, 7)
    assert rc == 1
    assert out == ""
    assert "20 lines" in err
    assert f"{LINES} lines" in err


def test_num_refs_short_line_names_the_line(files, tmp_path, capsys, monkeypatch):
    tab = tmp_path / "tab"
    tab.write_text("\n".join(f"{a}\t{b}" if i != 33 else a for i, (a, b) in
                             enumerate(zip(REFS, REFS2))) + "\n", encoding="utf-8")
    rc, _, err = _run([str(tab), "-nr", "2", "-i", files["h1"], "-m", "chrf"], capsys, monkeypatch, 7)
    assert rc == 1
    assert f"{tab}:34: expected 2 tab-separated references, found 1" in err


@pytest.mark.parametrize(("flag", "value"), [("-w", "-2"), ("--workers", "-1"), ("-cin", "1"),
                                        ("-pbsn", "0"), ("-parn", "-5"), ("-nr", "0")])
def test_bad_numbers_name_the_option(flag, value, files, capsys, monkeypatch):
    with pytest.raises(SystemExit) as exc:  # a usage error: one line, exit 2 (argparse's)
        _run([files["r1"], "-i", files["h1"], flag, value], capsys, monkeypatch)
    _, err = capsys.readouterr()
    assert exc.value.code == 2
    assert err.count("\n") == 1
    assert flag in err
    assert "or more, got " + value in err
    assert "Format specifier" not in err


def test_output_errors_name_the_requested_path(files, tmp_path, capsys, monkeypatch):
    target = tmp_path / "missing-dir" / "out.json"
    rc, _, err = _run([files["r1"], "-i", files["h1"], "-o", str(target)], capsys, monkeypatch)
    assert rc == 1
    assert f"--output {target}" in err
    assert ".tmp" not in err
    rc, _, err = _run([files["r1"], "-i", files["h1"], "-o", str(tmp_path)], capsys, monkeypatch)
    assert rc == 1
    assert "is a folder" in err
    assert ".tmp" not in err
    assert sorted(os.listdir(tmp_path)) == ["h1", "h2", "r1", "r2", "tab"]  # no temp file left


def test_per_segment_bleu_uses_effective_order_everywhere(files, capsys, monkeypatch):
    """-f tsv and --sentence-level give the same per-segment BLEU (effective order, like
    sacrebleu's --sentence-level)."""
    import mtscore

    _, tsv, _ = _run([files["r1"], "-i", files["h2"], "-m", "bleu", "-f", "tsv"], capsys, monkeypatch)
    _, sl, _ = _run([files["r1"], "-i", files["h2"], "-m", "bleu", "-sl", "-b", "-w", "8"],
                    capsys, monkeypatch)
    col = [float(line.split("\t")[-1]) for line in tsv.splitlines()[1:]]
    bleu = mtscore.BLEU(effective_order=True)
    assert col == [bleu.sentence_score(h, [r]).score for h, r in zip(HYPS2, REFS)]
    assert [f"{x:.8f}" for x in col] == sl.split()
    assert any(mtscore.BLEU().sentence_score(h, [r]).score != x for h, r, x in zip(HYPS2, REFS, col))


def test_empty_corpus_is_an_error_for_every_metric():
    import mtscore

    for metric in (mtscore.BLEU(), mtscore.CHRF(), mtscore.TER()):
        with pytest.raises(ValueError, match="empty corpus"):
            metric.corpus_score([], [[]])


def test_interrupt_after_output_exits_130_without_traceback(files, tmp_path):
    """SIGINT while the worker threads wind down: one line, exit 130 (was: a threading
    traceback and exit 0). The interrupt is raised where the pools are joined."""
    script = (
        "import sys, mtscore.engine.parallel as lx\n"
        "orig = lx.shutdown_pools\n"
        "def interrupted():\n"
        "    orig()\n"
        "    raise KeyboardInterrupt\n"
        "lx.shutdown_pools = interrupted\n"
        "from mtscore.bindings.cli.main import main\n"
        f"sys.exit(main([{files['r1']!r}, '-i', {files['h1']!r}, '--workers', '2', '-q']))\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert r.returncode == 130
    assert r.stderr.decode() == "mtscore: interrupted\n"


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="peak RSS read from /proc (Linux)")
def test_memory_is_bounded_by_the_chunk_not_the_corpus(tmp_path):
    """chrF of 100k segments with distinct references: the command used to prepare every
    reference at once (~8.7 KB each, ~900 MB peak here); streamed, only one chunk of 16384 is
    prepared at a time (~400 MB). Peak RSS of the child process, not time."""
    import random

    rng = random.Random(6)
    letters = "abcdefghijklmnopqrstuvwxyzäöüßéçñ"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 11))) for _ in range(20000)]
    words += ["Straße", "猫", "کتاب", "😀"]
    lines = [" ".join(rng.choice(words) for _ in range(20)) for _ in range(100000)]
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    ref.write_text("\n".join(lines) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    # VmHWM: this process's own peak (ru_maxrss would include the forking parent's RSS at fork
    # time on Linux, and a pytest-xdist worker may hold gigabytes by then)
    script = ("import sys\nfrom mtscore.bindings.cli.main import main\n"
              f"rc = main([{str(ref)!r}, '-i', {str(hyp)!r}, '-m', 'chrf', '-q', '-b'])\n"
              "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
              "print(hwm.split()[1], file=sys.stderr)\n"
              "sys.exit(rc)\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    peak_mb = int(r.stderr.decode().split()[-1]) / 1024
    assert peak_mb < 600, f"peak RSS {peak_mb:.0f} MB"
