"""Decoder-side benchmarks: what one call costs when a metric sits inside an MT decoder (n-best
reranking, MBR, RL rewards).

``single_calls()``: median CPU time of one ``sentence_score(hyp, [ref])`` call, mtscore vs
sacrebleu 2.6.0 side by side in one process, on newstest2021 en-de pairs whose hypothesis and
reference both have 15-25 words (first system output against reference A). Each pair is scored
``reps`` times in a row (CPU time via ``time.process_time_ns``, divided by ``reps``); the figure
is the median over pairs, best of ``rounds`` rounds. Every pair's scores are checked to be equal
(``==``) first. sacrebleu's tokenizer caches (``lru_cache``) are warm when a pair repeats, which
favours sacrebleu. The issue's targets (P8): BLEU <= 5 us, chrF and chrF++ <= 8 us, TER <= 10 us.

Usage: python bench/bench_decoder.py [--pairs N] [--reps R] [--rounds K] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

#: per-call targets of issue P8 (microseconds of CPU time, median)
TARGETS_US = {"BLEU": 5.0, "chrF": 8.0, "chrF++": 8.0, "TER": 10.0}


def data_dir() -> Path:
    return Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")).resolve()


def read_lines(p: Path):
    lines = p.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def sentence_pairs(n: int, lo: int = 15, hi: int = 25):
    """Up to ``n`` (hypothesis, reference) pairs of newstest2021 en-de with lo-hi words each."""
    d = data_dir() / "wmt21-news-systems" / "txt"
    ref = read_lines(d / "references" / "newstest2021.en-de.ref.A.de")
    hyp_file = sorted((d / "system-outputs").glob("newstest2021.en-de.hyp.*"))[0]
    hyp = read_lines(hyp_file)
    out = [(h, r) for h, r in zip(hyp, ref)
           if lo <= len(h.split()) <= hi and lo <= len(r.split()) <= hi]
    return out[:n]


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    return (f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, load average {load[0]:.2f}")


def _per_call_us(score, pairs, reps: int) -> float:
    """Median over pairs of the CPU time of one call (microseconds)."""
    times = []
    clock = time.process_time_ns
    for h, r in pairs:
        refs = [r]
        t0 = clock()
        for _ in range(reps):
            score(h, refs)
        times.append((clock() - t0) / reps / 1000.0)
    return statistics.median(times)


def single_calls(n_pairs: int = 300, reps: int = 20, rounds: int = 3) -> list:
    """Rows ``(metric, mtscore us, sacrebleu us, ratio, target us)``, printed as a table."""
    import sacrebleu
    from sacrebleu.metrics import BLEU as SBLEU, CHRF as SCHRF, TER as STER

    import mtscore

    pairs = sentence_pairs(n_pairs)
    configs = [
        ("BLEU", mtscore.BLEU(effective_order=True), SBLEU(effective_order=True)),
        ("chrF", mtscore.CHRF(), SCHRF()),
        ("chrF++", mtscore.CHRF(word_order=2), SCHRF(word_order=2)),
        ("TER", mtscore.TER(), STER()),
    ]
    rows = []
    print(f"single sentence_score calls: {len(pairs)} newstest2021 en-de pairs of 15-25 words, "
          f"{reps} calls per pair, median over pairs, best of {rounds} rounds; CPU time")
    print(f"mtscore {mtscore.__version__} vs sacrebleu {sacrebleu.__version__}; {machine()}")
    print(f"{'metric':8} {'mtscore us':>11} {'sacrebleu us':>13} {'ratio':>7} {'target us':>10}")
    for name, ours, theirs in configs:
        for h, r in pairs:  # equal results first (and warm caches on both sides)
            a, b = ours.sentence_score(h, [r]), theirs.sentence_score(h, [r])
            assert a.score == b.score, (name, h, r, a.score, b.score)
        t_ours = min(_per_call_us(ours.sentence_score, pairs, reps) for _ in range(rounds))
        t_theirs = min(_per_call_us(theirs.sentence_score, pairs, max(1, reps // 4))
                       for _ in range(rounds))
        rows.append((name, t_ours, t_theirs, t_theirs / t_ours, TARGETS_US[name]))
        print(f"{name:8} {t_ours:11.2f} {t_theirs:13.1f} {t_theirs / t_ours:6.1f}x "
              f"{TARGETS_US[name]:10.1f}{'' if t_ours <= TARGETS_US[name] else '  (over)'}")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="also write the table (markdown) here")
    args = ap.parse_args(argv)
    rows = single_calls(args.pairs, args.reps, args.rounds)
    if args.out is not None:
        lines = ["| metric | mtscore us/call | sacrebleu us/call | ratio | target us |",
                 "|---|---:|---:|---:|---:|"]
        lines += [f"| {m} | {a:.2f} | {b:.1f} | {r:.1f}x | {t:.0f} |" for m, a, b, r, t in rows]
        args.out.write_text(f"{machine()}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
