"""Progress bars: one rule (mtscore.engine.progress), and BERTScore's bar moving per encoder batch
on a terminal, absent when stderr is a pipe (issue P14 item 5)."""
import io
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mtscore.engine import progress as P

REPO = Path(__file__).resolve().parents[2]
#: one tqdm frame of BERTScore's bar: "BERTScore 1/2:  40%|####      | 12/30 [...]"
FRAME = re.compile(r"(BERTScore[^:\r\n]*):\s+\d+%\|[^|\r\n]*\|\s*(\d+)/(\d+)")


class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


# ---- the rule ------------------------------------------------------------------------------

@pytest.mark.parametrize(("enabled", "tty", "ci", "expected"), [
    (True, False, None, True),      # forced (--progress): also into a pipe or a file
    (True, True, "true", True),     # forced wins over CI
    (False, True, None, False),     # off
    (None, True, None, True),       # a terminal
    (None, False, None, False),     # a pipe or a file
    (None, True, "true", False),    # CI logs are terminals sometimes; no bar there
    (None, True, "1", False),
    (None, True, "false", True),
    (None, True, "", True),
])
def test_progress_rule(monkeypatch, enabled, tty, ci, expected):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    assert P.progress_enabled(enabled, _Stream(tty)) is expected


def test_default_stream_is_stderr(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys, "stderr", _Stream(True))
    assert P.progress_enabled() is True
    monkeypatch.setattr(sys, "stderr", _Stream(False))
    assert P.progress_enabled() is False
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    assert P.progress_enabled() is False


def test_progress_bar_off_is_a_null_bar_and_on_is_tqdm(monkeypatch):
    pytest.importorskip("tqdm")
    err = _Stream(False)
    monkeypatch.setattr(sys, "stderr", err)
    bar = P.progress_bar(10, "x")
    assert isinstance(bar, P.NullBar)
    with bar as b:
        b.update(3)
        b.set_description("y")
    assert bar.n == 3
    assert err.getvalue() == ""
    bar = P.progress_bar(10, "forced", enabled=True, unit="seg")
    assert not isinstance(bar, P.NullBar)
    bar.update(4)
    bar.refresh()  # tqdm draws at most every 0.1 s by itself
    bar.close()
    assert "forced" in err.getvalue()
    assert "4/10 [" in err.getvalue()


# ---- BERTScore: the bar moves with every encoder batch --------------------------------------

pytest.importorskip("onnxruntime", reason="BERTScore needs onnxruntime (pip install 'mtscore[bertscore]')")
pytest.importorskip("tokenizers", reason="BERTScore needs tokenizers")


def _lines(n: int, seed: int):
    rnd = random.Random(seed)
    words = ["the", "cat", "sat", "on", "a", "mat", "while", "dogs", "barked", "loudly", "at", "passing", "cars", "near", "old", "houses"]
    return [" ".join(rnd.choice(words) for _ in range(rnd.randint(3, 25))) for _ in range(n)]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """An encoder cache holding the default model's export (built once for the module)."""
    from mtscore.engine.encoder import EncoderError, load_encoder

    root = tmp_path_factory.mktemp("progress-cache")
    try:
        load_encoder(None, 6, cache_dir=str(root), threads=1)
    except EncoderError as e:
        pytest.skip(str(e))
    return root


class _Recorder:
    """Records a bar's updates (a drawing bar: not a NullBar, which BERTScore does not feed)."""

    def __init__(self, total, desc):
        self.total, self.desc, self.steps, self.closed = total, desc, [], False

    def update(self, n=1):
        self.steps.append(n)

    def close(self):
        self.closed = True


def test_bertscore_bar_moves_per_encoder_batch(cache_dir, monkeypatch):
    from mtscore.engine import bertscore as B

    bars = []

    def recorder(total, desc, enabled=None, unit="it", leave=False):
        assert enabled is True
        assert unit == "seg"
        bars.append(_Recorder(total, desc))
        return bars[-1]

    monkeypatch.setattr(B, "progress_bar", recorder)
    s = B.BERTScore(layer=6, cache_dir=str(cache_dir), threads=1, progress=True, batch_tokens=64)
    s.progress_desc = "BERTScore 2/5"
    hyps, refs = _lines(30, 1), _lines(30, 2)
    s.score(hyps, [refs])
    (bar,) = bars
    assert bar.desc == "BERTScore 2/5"
    assert bar.total == 30
    assert bar.closed
    assert sum(bar.steps) == 30
    assert all(k > 0 for k in bar.steps)
    ids = s.tokenizer.encode_flagged([x.strip() for x in hyps + refs])[0]
    n_batches = len(s.encoder.batches(np.array([len(x) for x in ids])))
    assert n_batches >= 5
    assert len(bar.steps) >= 5


def _write_inputs(tmp_path: Path, n_systems: int = 2, n: int = 40):
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(_lines(n, 0)) + "\n", encoding="utf-8")
    hyps = []
    for k in range(n_systems):
        h = tmp_path / f"sys{k + 1}.txt"
        h.write_text("\n".join(_lines(n, k + 1)) + "\n", encoding="utf-8")
        hyps.append(str(h))
    return [str(ref), "-i", *hyps, "-m", "bertscore", "--batch-tokens", "48"]


def _env(cache_dir) -> dict:
    env = dict(os.environ, MTSCORE_CACHE=str(cache_dir), TQDM_MININTERVAL="0",  # draw every update
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CI", None)
    return env


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_cli_bar_on_a_terminal_moves_before_the_scores(cache_dir, tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    args = _write_inputs(tmp_path)
    master, slave = pty.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "mtscore", *args], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=_env(cache_dir), cwd=str(tmp_path))
    os.close(slave)
    reads = []  # (time, text) of every read, in order: what a user sees arrive
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            reads.append(chunk.decode("utf-8", "replace"))
    finally:
        os.close(master)
        rc = proc.wait(timeout=60)
    out = "".join(reads)
    assert rc == 0, out
    first_score = out.find('"BERTScore":')
    assert first_score > 0, out
    before = out[:first_score]
    frames = FRAME.findall(before)
    # labelled per system ("i/n" once the CLI passes the number of systems to the runner)
    assert {d for d, _, _ in frames} in ({"BERTScore 1/2", "BERTScore 2/2"},
                                         {"BERTScore system 1", "BERTScore system 2"}), frames
    per_system = {}
    for desc, done, total in frames:
        assert int(total) == 40
        per_system.setdefault(desc, set()).add(int(done))
    for desc, counts in per_system.items():
        assert len(counts - {0}) >= 2, (desc, counts)  # at least two distinct updates besides 0
    # streamed while it ran: frames arrived in more than one read before the score line
    pos, reads_with_frames = 0, 0
    for text in reads:
        if pos >= first_score:
            break
        if FRAME.search(text):
            reads_with_frames += 1
        pos += len(text)
    assert reads_with_frames >= 2, reads


def _run_piped(args, cache_dir, tmp_path):
    return subprocess.run([sys.executable, "-m", "mtscore", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=_env(cache_dir), cwd=str(tmp_path), timeout=300)


def test_cli_no_bar_when_stderr_is_a_pipe(cache_dir, tmp_path):
    r = _run_piped(_write_inputs(tmp_path), cache_dir, tmp_path)
    assert r.returncode == 0, r.stderr
    assert '"BERTScore":' in r.stdout
    assert "BERTScore" not in r.stderr, r.stderr
    assert "\r" not in r.stderr, r.stderr
    assert "%|" not in r.stderr, r.stderr


def test_cli_progress_forces_the_bar_into_a_pipe(cache_dir, tmp_path):
    r = _run_piped([*_write_inputs(tmp_path), "--progress"], cache_dir, tmp_path)
    assert r.returncode == 0, r.stderr
    counts = {int(done) for desc, done, _ in FRAME.findall(r.stderr) if desc.startswith("BERTScore")}
    assert len(counts - {0}) >= 2, r.stderr
