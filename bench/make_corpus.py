"""Build the lexical benchmark corpora from the WMT21 system outputs (nothing is copied into git).

Every newstest2021 / florestest2021 system output is paired, line by line, with reference A of its
language pair. All pairs are shuffled (fixed seed) and written as
``bench/out/corpus1m.{hyp,ref}`` (1,000,000 segments: the shuffled pair list repeated, each cycle
re-shuffled, until 1M) and ``bench/out/corpus100k.{hyp,ref}`` (every 10th line of the 1M corpus), one
segment per line, UTF-8, ``rstrip()``'d like sacrebleu's CLI reads files. ``corpus_stats.json``
records sizes and how repetitive the corpus is (only ~19k distinct references exist, so references
repeat; sacrebleu's 13a ``lru_cache`` profits from that, which makes the speed ratios conservative).

    python bench/make_corpus.py            # -> bench/out/corpus1m.*, corpus100k.*
"""
from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")) / "wmt21-news-systems" / "txt"
OUT = REPO / "bench" / "out"
TESTSETS = ("newstest2021", "florestest2021")


def read(path: Path) -> list:
    with open(path, encoding="utf-8", newline="\n") as f:
        text = f.read()
    if text.endswith("\n"):
        text = text[:-1]
    return [line.rstrip() for line in text.split("\n")]


def systems(testsets=TESTSETS, data: Path = DATA):
    """Yields ``(testset, pair, system, hyps, refs)`` for every system output with a reference A."""
    sysdir, refdir = data / "system-outputs", data / "references"
    for name in sorted(os.listdir(sysdir)):
        parts = name.split(".")
        if len(parts) < 5 or parts[0] not in testsets or parts[2] != "hyp":
            continue
        testset, pair, trg = parts[0], parts[1], parts[-1]
        system = ".".join(parts[3:-1])
        ref = refdir / f"{testset}.{pair}.ref.A.{trg}"
        if not ref.exists():
            continue
        hyps, refs = read(sysdir / name), read(ref)
        if len(hyps) != len(refs):
            raise SystemExit(f"{name}: {len(hyps)} lines but {ref.name} has {len(refs)}")
        yield testset, pair, system, hyps, refs


def write(path: Path, lines) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line)
            f.write("\n")
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--every", type=int, default=10, help="subset = every k-th line (100k)")
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)

    pairs = []
    n_sys = 0
    for _, _, _, hyps, refs in systems():
        n_sys += 1
        pairs.extend(zip(hyps, refs))
    rng = random.Random(a.seed)
    big = []
    while len(big) < a.size:
        cyc = pairs[:]
        rng.shuffle(cyc)
        big.extend(cyc[: a.size - len(big)])
    sub = big[:: a.every]
    tag_big = f"corpus{a.size // 1000}k" if a.size % 1_000_000 else f"corpus{a.size // 1_000_000}m"
    tag_sub = f"corpus{len(sub) // 1000}k"
    for tag, rows in ((tag_big, big), (tag_sub, sub)):
        write(a.out / f"{tag}.hyp", (h for h, _ in rows))
        write(a.out / f"{tag}.ref", (r for _, r in rows))
    stats = {
        "systems": n_sys, "distinct_pairs_source": len(pairs), "seed": a.seed,
        tag_big: {"segments": len(big), "distinct_hyps": len({h for h, _ in big}),
                  "distinct_refs": len({r for _, r in big}),
                  "hyp_chars": sum(len(h) for h, _ in big), "ref_chars": sum(len(r) for _, r in big)},
        tag_sub: {"segments": len(sub), "distinct_hyps": len({h for h, _ in sub}),
                  "distinct_refs": len({r for _, r in sub}),
                  "hyp_chars": sum(len(h) for h, _ in sub), "ref_chars": sum(len(r) for _, r in sub)},
    }
    (a.out / "corpus_stats.json").write_text(json.dumps(stats, indent=1))
    print(json.dumps(stats))


if __name__ == "__main__":
    main()
