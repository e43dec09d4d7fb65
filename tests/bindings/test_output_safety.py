"""No output destroys a file it should not, and inputs are read once (P13 items 1, 2, 4).

Each test reproduces a finding of the hostile-user probe: ``-o`` replaced a device, a FIFO or a
symbolic link with a regular file, ``-o`` onto an input overwrote it, a pipe given as input was
read twice (counted, then read), a truncated ``.gz`` ended in a traceback, a SIGTERM during a
write left the temporary file behind, and ``-pbs -f tsv`` dropped the test's results. Devices
and FIFOs are created in a temporary folder, never the system's own.
"""
import gzip
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

PY = sys.executable
ENV = dict(os.environ, NO_COLOR="1")

HYP = ["The cat sat on the mat .", "a quick brown fox", "", "Hello world !",
       "it is raining today", "no reference words here"]
HYP2 = ["The cat is on the mat .", "the quick brown fox", "x", "Hello , world !",
        "it rains today", "reference words"]
REF = ["The cat sat on the mat .", "The quick brown fox jumps", "nothing", "Hello world !",
       "It is raining today .", "the reference"]


def run(args, stdin=None, **kw):
    return subprocess.run([PY, "-m", "mtscore", *args], input=stdin, capture_output=True,
                          env=ENV, timeout=300, **kw)


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, lines in (("hyp", HYP), ("hyp2", HYP2), ("ref", REF)):
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths[name] = str(p)
    return paths


def sacrebleu_score(hyps=HYP, ref=REF) -> str:
    from sacrebleu.metrics import BLEU

    return f"{BLEU().corpus_score(hyps, [ref]).score:.1f}"


# ---- outputs ------------------------------------------------------------------------------

def test_output_onto_a_reference_or_hypothesis_is_refused_before_any_work(files):
    for victim in ("ref", "hyp"):
        before = Path(files[victim]).read_bytes()
        r = run([files["ref"], "-i", files["hyp"], "-b", "-o", files[victim]])
        assert r.returncode == 2, r.stderr
        assert Path(files[victim]).read_bytes() == before
        msg = r.stderr.decode()
        assert msg.count("\n") == 1
        assert "refusing to overwrite it" in msg
        assert f"--output {files[victim]} is also an input" in msg


def test_output_onto_an_input_through_a_link_or_another_spelling_is_refused(files, tmp_path):
    link = tmp_path / "link"
    os.symlink(files["ref"], link)
    before = Path(files["ref"]).read_bytes()
    for out in (str(link), os.path.relpath(files["ref"]), files["ref"].replace("/ref", "/./ref")):
        r = run([files["ref"], "-i", files["hyp"], "-b", "-o", out])
        assert r.returncode == 2, (out, r.stderr)
    assert Path(files["ref"]).read_bytes() == before


def test_score_table_and_meta_refuse_output_onto_their_input(tmp_path):
    table = tmp_path / "x.csv"
    table.write_text("hyp,ref\n" + "".join(f'"{h}","{r}"\n' for h, r in zip(HYP, REF)), encoding="utf-8")
    before = table.read_bytes()
    r = run(["score-table", str(table), "-m", "bleu", "-o", str(table)])
    assert r.returncode == 2, r.stderr
    assert table.read_bytes() == before, r.stderr
    scores = tmp_path / "scores.tsv"
    scores.write_text("metric\tsystem\tscore\nhuman\ta\t1\nhuman\tb\t2\nbleu\ta\t3\nbleu\tb\t4\n")
    before = scores.read_bytes()
    r = run(["meta", "sys", "--scores", str(scores), "-o", str(scores)])
    assert r.returncode == 2, r.stderr
    assert scores.read_bytes() == before, r.stderr
    assert "is also an input (--scores" in r.stderr.decode()


def test_output_to_a_character_device_writes_to_it_and_keeps_it(files, tmp_path):
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the null device, in our folder
    except (PermissionError, OSError) as e:
        pytest.skip(f"cannot create a character device here ({e})")
    r = run([files["ref"], "-i", files["hyp"], "-b", "-o", str(dev)])
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def _read_fifo(path, out):
    with open(path, "rb") as f:
        out.append(f.read())


def test_output_to_a_fifo_reaches_its_reader(files, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list = []
    t = threading.Thread(target=_read_fifo, args=(fifo, got), daemon=True)
    t.start()
    r = run([files["ref"], "-i", files["hyp"], "-b", "-o", str(fifo)])
    t.join(60)
    assert r.returncode == 0, r.stderr
    assert got == [(sacrebleu_score() + "\n").encode()]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_output_through_a_symlink_replaces_the_target_and_keeps_the_link(files, tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "out.txt"
    os.symlink(target, link)
    r = run([files["ref"], "-i", files["hyp"], "-b", "-o", str(link)])
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link)
    assert os.readlink(link) == str(target)
    assert target.read_text() == sacrebleu_score() + "\n"


def test_sigterm_during_a_write_removes_the_temporary_file(tmp_path):
    out = tmp_path / "out.tsv"
    script = (
        "import os, signal, time\n"
        "from mtscore.engine.atomic import atomic_write\n"
        "def write(f):\n"
        "    f.write(b'x' * 100000); f.flush()\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(30)\n"
        f"atomic_write({str(out)!r}, write, '--output')\n")
    r = subprocess.run([PY, "-c", script], capture_output=True, timeout=120)
    assert r.returncode == -signal.SIGTERM, r.stderr
    assert os.listdir(tmp_path) == []


def test_the_signal_handler_is_only_there_while_writing(tmp_path):
    from mtscore.engine.atomic import atomic_write, pending_temporary_files

    seen = []
    atomic_write(tmp_path / "a", lambda f: seen.append((signal.getsignal(signal.SIGTERM),
                                                        pending_temporary_files())))
    handler, pending = seen[0]
    assert handler not in (signal.SIG_DFL, None)
    assert len(pending) == 1
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    assert pending_temporary_files() == set()


# ---- inputs read once -------------------------------------------------------------------

def test_process_substitution_input_gives_sacrebleus_score(files):
    r = subprocess.run(["bash", "-c", f'{PY} -m mtscore {files["ref"]} -i <(cat {files["hyp"]}) -b'],
                       capture_output=True, env=ENV, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == sacrebleu_score() + "\n"


def _write_fifo(path, data):
    with open(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("which", ["hyp", "ref"])
def test_fifo_input_gives_sacrebleus_score(files, tmp_path, which):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    data = Path(files[which]).read_bytes()
    t = threading.Thread(target=_write_fifo, args=(fifo, data), daemon=True)
    t.start()
    args = [str(fifo), "-i", files["hyp"]] if which == "ref" else [files["ref"], "-i", str(fifo)]
    r = run([*args, "-b"])
    t.join(60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == sacrebleu_score() + "\n"


def test_a_length_mismatch_found_at_the_end_of_a_pipe_writes_nothing(files, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t = threading.Thread(target=_write_fifo, args=(fifo, ("\n".join(HYP[:-1]) + "\n").encode()),
                         daemon=True)
    t.start()
    out = tmp_path / "out.tsv"
    r = run([files["ref"], "-i", str(fifo), "-m", "bleu", "-f", "tsv", "-o", str(out)])
    t.join(60)
    assert r.returncode == 1
    assert "line-count mismatch" in r.stderr.decode()
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["fifo", "hyp", "hyp2", "ref"]


def test_a_truncated_gz_is_one_line_naming_the_file(files, tmp_path):
    gz = tmp_path / "hyp.gz"
    data = gzip.compress(("\n".join(HYP * 200) + "\n").encode())
    gz.write_bytes(data[: len(data) // 2])
    r = run([files["ref"], "-i", str(gz), "-b"])
    assert r.returncode == 1
    msg = r.stderr.decode()
    assert "Traceback" not in msg
    assert msg.count("\n") == 1
    assert f"{gz}: cannot read: the compressed file is truncated" in msg
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage that is no deflate stream" * 3)
    r = run([files["ref"], "-i", str(bad), "-b"])
    assert r.returncode == 1
    assert f"{bad}: cannot read:" in r.stderr.decode()
    assert "Traceback" not in r.stderr.decode()


# ---- formats that cannot hold a test's results -------------------------------------------

@pytest.mark.parametrize("flags", [["--paired-bs"], ["--paired-ar"], ["--confidence"]])
def test_tsv_with_a_test_is_refused(files, tmp_path, flags):
    out = tmp_path / "seg.tsv"
    inputs = [files["hyp"], files["hyp2"]] if flags != ["--confidence"] else [files["hyp"]]
    r = run([files["ref"], "-i", *inputs, "-m", "bleu", *flags, "-f", "tsv", "-o", str(out)])
    assert r.returncode == 2
    assert f"{flags[0]} with --format tsv" in r.stderr.decode()
    assert not out.exists()


def _report_of(path):
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata
    return meta[b"mtscore.report"].decode()


@pytest.mark.parametrize("flags", [["--paired-bs", "-pbsn", "200"], ["--paired-ar", "-parn", "200"]])
def test_parquet_with_a_paired_test_carries_the_json_report(files, tmp_path, flags):
    import pyarrow.parquet as pq

    out = tmp_path / "seg.parquet"
    argv = [files["ref"], "-i", files["hyp"], files["hyp2"], "-m", "bleu", "chrf", *flags]
    r = run([*argv, "-f", "parquet", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    want = run([*argv, "-f", "json"])
    assert want.returncode == 0
    assert json.loads(_report_of(out)) == json.loads(want.stdout)
    table = pq.read_table(out)
    assert sorted(set(table.column("system").to_pylist())) == sorted([files["hyp"], files["hyp2"]])


def test_parquet_with_confidence_carries_the_json_report(files, tmp_path):
    out = tmp_path / "seg.parquet"
    argv = [files["ref"], "-i", files["hyp"], "-m", "bleu", "--confidence", "-cin", "200"]
    r = run([*argv, "-f", "parquet", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    want = run([*argv, "-f", "json"])
    assert json.loads(_report_of(out)) == json.loads(want.stdout)


def test_score_table_parquet_with_a_paired_test_carries_the_report(tmp_path):
    table = tmp_path / "x.jsonl"
    rows = [{"system": s, "hyp": h, "ref": r} for s, hyps in (("A", HYP), ("B", HYP2))
            for h, r in zip(hyps, REF)]
    table.write_text("".join(json.dumps(x) + "\n" for x in rows), encoding="utf-8")
    out = tmp_path / "seg.parquet"
    argv = ["score-table", str(table), "-m", "bleu", "--paired-bs", "-pbsn", "200"]
    r = run([*argv, "-f", "parquet", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    want = run([*argv, "-f", "json"])
    assert json.loads(_report_of(out)) == json.loads(want.stdout)
    r = run([*argv, "-f", "tsv"])
    assert r.returncode == 2
    assert b"--paired-bs with --format tsv" in r.stderr


def test_no_stray_temporary_files_after_success(files, tmp_path):
    out = tmp_path / "out.txt"
    t0 = time.time()
    r = run([files["ref"], "-i", files["hyp"], "-b", "-o", str(out)])
    assert r.returncode == 0
    assert out.read_text() == sacrebleu_score() + "\n"
    assert out.stat().st_mtime >= t0 - 1
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


# ---- bounded work: one huge line ------------------------------------------------------------

def test_a_line_over_the_limit_is_refused_naming_file_and_line(tmp_path):
    """A 92 MB line took over 4 GB and ended in a MemoryError traceback; a line longer than
    --max-line-chars is refused before any work, naming the file and its line (the absolute
    line, also past the first streamed chunk)."""
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_text("a b\n" * 20000 + "x" * 5000 + "\nc\n")
    ref.write_text("a b\n" * 20000 + "x\nc\n")
    r = run([str(ref), "-i", str(hyp), "-m", "bleu", "chrf", "--max-line-chars", "4000"])
    assert r.returncode == 1
    assert r.stderr.decode() == (f"mtscore: error: {hyp}:20001: the line has 5,000 characters, more than "
                                 "--max-line-chars 4,000 (its n-gram tables could need gigabytes; "
                                 "--max-line-chars 0: no limit)\n")
    r = run([str(ref), "-i", str(hyp), "-m", "bleu", "--max-line-chars", "0", "-b"])
    assert r.returncode == 0
    assert r.stdout.decode() == sacrebleu_score(hyp.read_text().splitlines(), ref.read_text().splitlines()) + "\n"
    table = tmp_path / "t.jsonl"
    table.write_text(json.dumps({"hyp": "y" * 300, "ref": "y"}) + "\n")
    r = run(["score-table", str(table), "-m", "chrf", "--max-line-chars", "100"])
    assert r.returncode == 1
    assert "line 1 has 300 characters, more than the limit of 100" in r.stderr.decode()
