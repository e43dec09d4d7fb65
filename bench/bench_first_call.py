"""First calls and whole CLI processes: what a user who runs one command pays.

Two families of rows, every measurement in a fresh interpreter (``--child``), CPU time
(``time.thread_time`` of the calling thread inside the child, with the other threads' CPU
reported beside it, or user + sys of the whole child process):

* ``first``: a short-segment corpus (UI-message-like, median 5 words, 8 target languages) built
  from the WMT21 system outputs (``bench/out/short.{hyp,ref}``; nothing is copied into git). In
  a new process the first ``corpus_score`` call (call 1) is timed, then a second call on other
  data of the same shape (call 2: the hypotheses and references swapped, so that mtscore's
  prepared-reference cache cannot help). Reported: call 1 / call 2 per tool, and mtscore's
  call 1 against sacrebleu 2.6.0's call 1. BLEU, chrF and chrF++ on all 30,000 segments, TER on
  the first 2,000.
* ``cli``: ``REF -i SYS1..SYS8 -m bleu chrf --paired-bs`` (and ``--paired-ar``) on newstest2021
  en-de (1,002 lines, the first 8 systems alphabetically, reference A), mtscore's
  ``python -m mtscore`` against sacrebleu's ``python -m sacrebleu ... -f text``: user + sys CPU
  of the whole process, interpreter start and imports included; stdout compared.

    python bench/bench_first_call.py [--repeats 5] [--out bench/results/first_call.md]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"
DATA = Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")) / "wmt21-news-systems" / "txt"

#: target languages written with spaces between words (13a/chrF tokenisation is meaningful)
SHORT_PAIRS = ("en-de", "en-cs", "en-ru", "en-is", "en-ha", "de-en", "de-fr", "fr-de", "ru-en")
SHORT_SEGMENTS = 30_000
TER_SEGMENTS = 2_000


def _read(path: Path) -> list:
    with open(path, encoding="utf-8", newline="\n") as f:
        return f.read().rstrip("\n").split("\n")


def build_short_corpus() -> tuple:
    """30,000 (hyp, ref) pairs of UI-message length: from each system output line and its
    reference, a prefix of L words of each (L drawn so that the median is 5), fixed seed."""
    hyp_path, ref_path = OUT / "short.hyp", OUT / "short.ref"
    if hyp_path.exists() and ref_path.exists():
        return _read(hyp_path), _read(ref_path)
    rng = random.Random(2026)
    pairs = []
    sysdir, refdir = DATA / "system-outputs", DATA / "references"
    for name in sorted(os.listdir(sysdir)):
        parts = name.split(".")
        if parts[0] != "newstest2021" or parts[1] not in SHORT_PAIRS or parts[2] != "hyp":
            continue
        ref = refdir / f"newstest2021.{parts[1]}.ref.A.{parts[-1]}"
        if ref.exists():
            pairs.extend(zip(_read(sysdir / name), _read(ref)))
    rng.shuffle(pairs)
    hyps, refs = [], []
    for h, r in pairs:
        hw, rw = h.split(), r.split()
        if not hw or not rw:
            continue
        n = max(1, min(12, round(rng.lognormvariate(1.6, 0.5))))  # median e**1.6 ~ 5
        hyps.append(" ".join(hw[:max(1, n + rng.choice((-1, 0, 0, 1)))]))
        refs.append(" ".join(rw[:n]))
        if len(hyps) == SHORT_SEGMENTS:
            break
    OUT.mkdir(parents=True, exist_ok=True)
    for path, lines in ((hyp_path, hyps), (ref_path, refs)):
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
    return hyps, refs


def child_first(tool: str, metric: str) -> dict:
    hyps, refs = _read(OUT / "short.hyp"), _read(OUT / "short.ref")
    if metric == "ter":
        hyps, refs = hyps[:TER_SEGMENTS], refs[:TER_SEGMENTS]
    t0 = time.process_time()
    if tool == "mtscore":
        from mtscore import BLEU, CHRF, TER
    else:
        from sacrebleu.metrics import BLEU, CHRF, TER
    t_import = time.process_time() - t0
    make = {"bleu": BLEU, "chrf": CHRF, "chrf++": lambda: CHRF(word_order=2), "ter": TER}[metric]
    import resource

    out, faults, others = [], [], []
    for h, r in ((hyps, refs), (refs, hyps)):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0, p0 = time.thread_time(), time.process_time()
        score = make().corpus_score(h, [r]).score
        out.append(time.thread_time() - t0)  # the calling thread: both tools score in it
        others.append(time.process_time() - p0 - out[-1])  # other threads of the process
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    return {"import": t_import, "call1": out[0], "call2": out[1], "score": score,
            "others1": others[0], "faults1": faults[0], "faults2": faults[1],
            "us_per_fault": _fault_cost()}


def _fault_cost(pages: int = 2048) -> float:
    """CPU microseconds per first touch of a fresh page in this process, right now (the
    VM's host may back guest pages lazily: then this is ~7 us instead of ~0.2)."""
    import mmap
    import resource

    m = mmap.mmap(-1, pages * 4096)
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = time.process_time()
    for i in range(0, pages * 4096, 4096):
        m[i] = 1
    dt = time.process_time() - t0
    n = max(1, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    m.close()
    return dt / n * 1e6


def _cli_files() -> tuple:
    sysdir = DATA / "system-outputs"
    systems = sorted(p for p in os.listdir(sysdir) if p.startswith("newstest2021.en-de.hyp."))[:8]
    return str(DATA / "references" / "newstest2021.en-de.ref.A.de"), [str(sysdir / s) for s in systems]


def cli_row(tool: str, test: str) -> dict:
    ref, systems = _cli_files()
    if tool == "mtscore":
        cmd = [sys.executable, "-m", "mtscore", ref, "-i", *systems, "-m", "bleu", "chrf", test,
               "-f", "text"]
    else:
        cmd = [sys.executable, "-m", "sacrebleu", ref, "-i", *systems, "-m", "bleu", "chrf", test,
               "-f", "text"]
    before = os.times()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    after = os.times()
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"cpu": cpu, "stdout": r.stdout}


def _fresh(tool: str, metric: str) -> dict:
    r = subprocess.run([sys.executable, __file__, "--child", tool, metric], capture_output=True,
                       text=True, cwd=REPO)
    if r.returncode:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout)


def _machine() -> str:
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                   platform.processor())
    import sacrebleu

    import mtscore
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"mtscore {mtscore.__version__}, sacrebleu {sacrebleu.__version__}")


def _back_guest_memory(gib: int = 3) -> None:
    """Touch and free ``gib`` GiB once before measuring. On a VM whose host backs guest memory
    lazily (this sandbox: 7 us per 4 KiB page the first time a guest page is ever touched,
    0.4 us afterwards) a fresh process would otherwise pay the host's cost on whichever
    allocation first lands on never-used guest pages: a cost of the VM, not of either tool
    (bare metal does not have it), that falls on the tools at random."""
    import numpy as np

    block = np.ones(gib * 2**30 // 8)
    del block


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="fresh processes per row (median)")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "first_call.md")
    ap.add_argument("--metrics", nargs="*", default=["bleu", "chrf", "chrf++", "ter"],
                    help="first-call rows to run (default: all)")
    ap.add_argument("--tests", nargs="*", default=["bs", "ar"], choices=["bs", "ar"],
                    help="CLI rows to run: bs (--paired-bs), ar (--paired-ar); default both, "
                         "none given: skip")
    ap.add_argument("--child", nargs=2, metavar=("TOOL", "METRIC"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child_first(*args.child)))
        return
    _back_guest_memory()
    # byte-compile the package as an install does (a checkout run with PYTHONDONTWRITEBYTECODE
    # would otherwise compile every module from source in each fresh process)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "mtscore")], check=True)
    hyps, _ = build_short_corpus()
    words = sorted(len(h.split()) for h in hyps)
    lines = ["# First calls and whole CLI processes", "",
             f"Machine: {_machine()}.", "",
             f"Command: `python bench/bench_first_call.py --repeats {args.repeats}` "
             f"(medians of {args.repeats} fresh processes per row, CPU time; a call: the CPU time of "
             "the calling thread, in which both tools score; the last column: what the process's "
             "other threads burnt meanwhile, mostly OpenBLAS's worker threads spinning for their "
             "first ~0.1 s after `import numpy`, which mtscore imports and sacrebleu does not).", "",
             f"Short corpus: {len(hyps)} segments, median {words[len(words) // 2]} words per "
             f"hypothesis, newstest2021 {', '.join(SHORT_PAIRS)}.", "",
             "| metric | segments | mtscore call 1 | mtscore call 2 | call1/call2 | sacrebleu call 1 | "
             "sacrebleu call1/call2 | sacrebleu / mtscore (call 1) | same score | mtscore page "
             "faults call 1 / call 2, us per fresh page | mtscore: other threads' CPU during "
             "call 1 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for metric in args.metrics:
        runs = {t: [_fresh(t, metric) for _ in range(args.repeats)] for t in ("mtscore", "sacrebleu")}
        med = {t: {k: statistics.median(r[k] for r in rs)
                   for k in ("call1", "call2", "others1", "faults1", "faults2", "us_per_fault")}
               for t, rs in runs.items()}
        m, s = med["mtscore"], med["sacrebleu"]
        same = runs["mtscore"][0]["score"] == runs["sacrebleu"][0]["score"]
        n = TER_SEGMENTS if metric == "ter" else len(hyps)
        row = (f"| {metric} | {n} | {m['call1'] * 1e3:.1f} ms | {m['call2'] * 1e3:.1f} ms | "
               f"{m['call1'] / m['call2']:.2f}x | {s['call1'] * 1e3:.0f} ms | "
               f"{s['call1'] / s['call2']:.2f}x | **{s['call1'] / m['call1']:.1f}x** | {same} | "
               f"{m['faults1']:.0f} / {m['faults2']:.0f}, {m['us_per_fault']:.2f} | "
               f"{m['others1'] * 1e3:.1f} ms |")
        print(row, flush=True)
        lines.append(row)
    lines += ["", "CLI, whole processes (user + sys CPU of the child, interpreter start included), "
              "newstest2021 en-de, 8 systems, `-m bleu chrf`:", "",
              "| test | mtscore CPU | sacrebleu CPU | sacrebleu / mtscore | stdout identical |",
              "|---|---|---|---|---|"]
    for test in (f"--paired-{t}" for t in args.tests):
        runs = {t: [cli_row(t, test) for _ in range(args.repeats)] for t in ("mtscore", "sacrebleu")}
        m = statistics.median(r["cpu"] for r in runs["mtscore"])
        s = statistics.median(r["cpu"] for r in runs["sacrebleu"])
        same = runs["mtscore"][0]["stdout"] == runs["sacrebleu"][0]["stdout"]
        row = f"| {test} | {m:.3f} s | {s:.3f} s | **{s / m:.1f}x** | {same} |"
        print(row, flush=True)
        lines.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
