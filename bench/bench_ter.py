"""TER benchmark: mtscore vs sacrebleu 2.6.0, side by side in one process.

Measures (CPU time via time.process_time; the machine is shared, so ratios are the figure):

1. corpus TER on every newstest2021 en-de and de-en system (reference A), references prepared
   once per pair by each peer (``TER(references=...)``), single thread; the statistics of the
   two peers are checked to be identical;
2. the slowest single segment of up to 1000 tokens for mtscore (adversarial constructions +
   the longest real segments);
3. ``workers=2`` vs ``workers=1`` wall-clock speed-up of mtscore on the same corpus.

Usage: python bench/bench_ter.py [--max-systems K] [--out bench/results/ter.md]
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench_data import data_dir, read_lines  # noqa: E402

from mtscore.engine.metrics.ter import TER  # noqa: E402


def load_pair(pair: str, trg: str, max_systems: int):
    d = data_dir() / "wmt21-news-systems" / "txt"
    ref = read_lines(d / "references" / f"newstest2021.{pair}.ref.A.{trg}")
    files = sorted((d / "system-outputs").glob(f"newstest2021.{pair}.hyp.*"))[:max_systems]
    return ref, {f.name: read_lines(f) for f in files}


def corpus_bench(corpora, workers=1, sacre=True):
    from sacrebleu.metrics import TER as SacreTER

    res = {}
    t0 = time.process_time()
    w0 = time.perf_counter()
    ours = {}
    for ref, systems in corpora.values():
        m = TER(references=[ref], workers=workers)
        for name, hyp in systems.items():
            ours[name] = m.corpus_stats(hyp)
    res["mtscore_cpu"] = time.process_time() - t0
    res["mtscore_wall"] = time.perf_counter() - w0
    if sacre:
        t0 = time.process_time()
        theirs = {}
        for ref, systems in corpora.values():
            m = SacreTER(references=[ref])
            for name, hyp in systems.items():
                theirs[name] = m._extract_corpus_statistics(hyp, None)
                m._aggregate_and_compute(theirs[name])
        res["sacrebleu_cpu"] = time.process_time() - t0
        res["identical"] = all(
            [[int(a), float(b)] for a, b in ours[k]] == [[a, b] for a, b in theirs[k]]
            for k in ours)
    res["segments"] = sum(len(h) for _, s in corpora.values() for h in s.values())
    res["systems"] = sum(len(s) for _, s in corpora.values())
    return res


def worst_segments(corpora):
    """Slowest single segment (mtscore, CPU ms) among adversarial <=1000-token segments and the
    longest real ones."""
    rng = random.Random(0)
    cases = {}
    ref = [f"w{rng.randrange(300)}" for _ in range(1000)]
    cases["1000 random vs 1000 random (vocab 300)"] = (
        [f"w{rng.randrange(300)}" for _ in range(1000)], ref)
    cases["1000 tokens, 30% substituted"] = (
        [w if rng.random() < 0.7 else f"x{rng.randrange(300)}" for w in ref], ref)
    blocks = [ref[i:i + 10] for i in range(0, 1000, 10)]
    rng.shuffle(blocks)
    cases["1000 tokens, 10-token blocks shuffled"] = ([w for b in blocks for w in b], ref)
    cases["1000 tokens, vocab of 3 (repetition)"] = (
        [f"r{rng.randrange(3)}" for _ in range(1000)], [f"r{rng.randrange(3)}" for _ in range(1000)])
    cases["1000 vs 20 tokens (beam widening)"] = (ref, ref[:20])
    cases["20 vs 1000 tokens"] = (ref[:20], ref)
    cases["banded: 400 junk + first 600 of ref"] = ([f"j{i}" for i in range(400)] + ref[:600], ref)
    real = []
    for _, (r, systems) in corpora.items():
        for hyp in systems.values():
            for h, rr in zip(hyp, r):
                real.append((len(h.split()) + len(rr.split()), h, rr))
    real.sort(key=lambda t: -t[0])
    for k, (_, h, rr) in enumerate(real[:5]):
        cases[f"real longest #{k + 1} ({len(h.split())}/{len(rr.split())} tokens)"] = (
            h.split(), rr.split())
    out = []
    for name, (h, r) in cases.items():
        m = TER()
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            m.corpus_stats([" ".join(h)], [[" ".join(r)]])
            best = min(best, time.process_time() - t0)
        out.append((name, best * 1000))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-systems", type=int, default=1000)
    ap.add_argument("--skip-sacrebleu", action="store_true")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "ter.md"))
    args = ap.parse_args()

    corpora = {p: load_pair(p, t, args.max_systems) for p, t in [("en-de", "de"), ("de-en", "en")]}
    main_res = corpus_bench(corpora, sacre=not args.skip_sacrebleu)
    print(main_res, flush=True)
    # workers: the search work only (mtscore), wall clock
    # (interleaved, best of 7: the VM's second core comes and goes)
    rounds = [(corpus_bench(corpora, workers=1, sacre=False)["mtscore_wall"],
               corpus_bench(corpora, workers=2, sacre=False)["mtscore_wall"]) for _ in range(7)]
    w1 = min(r[0] for r in rounds)
    w2 = min(r[1] for r in rounds)
    # kernel only: token ids prepared beforehand, search on 1 vs 2 threads
    from mtscore.engine.metrics.ter import ter_stats
    prepared = []
    for ref, systems in corpora.values():
        m = TER(references=[ref])
        pr = m._ref_cache
        for hyp in systems.values():
            hi, ho = m.tokenize(hyp)
            prepared.append((hi, ho, pr.ref_ids, pr.ref_offsets, pr.seg_refs))

    def kernel_wall(workers):
        t0 = time.perf_counter()
        for args_ in prepared:
            ter_stats(*args_, workers=workers)
        return time.perf_counter() - t0
    krounds = [(kernel_wall(1), kernel_wall(2)) for _ in range(7)]
    k1 = min(r[0] for r in krounds)
    k2 = min(r[1] for r in krounds)
    worst = worst_segments(corpora)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    if args.skip_sacrebleu:  # mtscore-only run: no ratio
        main_res.update(sacrebleu_cpu=float("nan"), identical="not checked")
    ratio = main_res["sacrebleu_cpu"] / main_res["mtscore_cpu"]
    lines = [
        "# TER: mtscore vs sacrebleu 2.6.0",
        "",
        f"Command: `python bench/bench_ter.py --max-systems {args.max_systems}`  ",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared "
        f"with other jobs), Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}",
        "",
        "## Corpus TER, newstest2021 en-de + de-en, every system, reference A (1 thread)",
        "",
        "| peer | systems | segments | CPU s | ratio |",
        "|---|---:|---:|---:|---:|",
        f"| sacrebleu 2.6.0 | {main_res['systems']} | {main_res['segments']} | "
        f"{main_res['sacrebleu_cpu']:.2f} | 1.0x |",
        f"| mtscore | {main_res['systems']} | {main_res['segments']} | "
        f"{main_res['mtscore_cpu']:.3f} | **{ratio:.0f}x** |",
        "",
        f"Per-segment statistics identical: {main_res['identical']}. Both peers prepare the "
        "references once per pair (`TER(references=...)`), tokenisation included in the times.",
        "",
        "## Threads (mtscore, wall clock, best of 7 interleaved rounds)",
        "",
        f"workers=1: {w1:.3f} s, workers=2: {w2:.3f} s -> speed-up **{w1 / w2:.2f}x** "
        "(tokenisation included: with workers > 1 the calling thread tokenises chunks of 256 "
        "hypotheses while the other threads search them; segments are claimed costliest first "
        "from a shared counter). Per-round ratios: "
        + ", ".join(f"{a / b:.2f}" for a, b in rounds) + ".",
        "",
        f"Kernel only (pre-tokenised ids, `ter_stats`): workers=1: {k1:.3f} s, workers=2: "
        f"{k2:.3f} s -> speed-up **{k1 / k2:.2f}x**. Load average at the end: "
        f"{os.getloadavg()[0]:.2f}.",
        "",
        "## Slowest single segments (mtscore, CPU ms, best of 3)",
        "",
        "| case | ms |",
        "|---|---:|",
    ] + [f"| {n} | {ms:.2f} |" for n, ms in worst] + [
        "",
        f"Max: {max(ms for _, ms in worst):.2f} ms. Peak RSS of the whole run: {rss:.0f} MiB.",
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
