"""Many references: how BLEU and chrF grow with the number of reference streams K (issue P13,
"Bounded work"). mtscore vs sacrebleu 2.6.0, side by side, each measurement in a fresh process
(``--child``; CPU time, ``time.process_time``, of one ``corpus_score`` call).

Workload: one segment (the first line of the newstest2021 de-en reference A as the hypothesis)
against K reference streams, each holding one distinct line of the newstest2021 ``*-en`` system
outputs (96,682 distinct lines; K beyond that repeats lines). A hostile user's shape: the
n-gram entries of one segment grow with K, which made mtscore's BLEU reference preparation
quadratic in K before (a pass over all the segment's entries after each reference).

Columns: CPU s of the call; "growth" = (time at K / time at the smallest K) / (K / smallest K),
1.0 for linear growth; sacrebleu's CPU s (only up to ``--sacre-max`` references: it takes
minutes beyond) and the ratio sacrebleu / mtscore. Scores are checked equal where both ran.
``--before DIR`` also times another built checkout of mtscore (say the commit before a kernel
change, ``git worktree add`` + ``python setup.py build_ext --inplace``) up to
``--before-max`` references.

    python bench/bench_refs_scaling.py [--ks 20000,40000,100000] [--sacre-max 40000]
        [--before DIR --before-max 40000] [--out bench/results/refs_scaling.md]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench_data import data_dir, read_lines, shared_machine  # noqa: E402


def workload(k: int):
    d = data_dir() / "wmt21-news-systems" / "txt"
    hyp = read_lines(d / "references" / "newstest2021.de-en.ref.A.en")[0]
    pool: list = []
    for f in sorted((d / "system-outputs").glob("newstest2021.*-en.hyp.*")):
        pool += [x for x in read_lines(f) if x]
    pool = list(dict.fromkeys(pool))
    return [hyp], [[pool[i % len(pool)]] for i in range(k)]


def child(tool: str, metric: str, k: int) -> None:
    hyps, refs = workload(k)
    if tool != "sacrebleu":   # a checkout of mtscore
        sys.path.insert(0, tool)
        from mtscore.engine.metrics.bleu import BLEU
        from mtscore.engine.metrics.chrf import CHRF
    else:
        from sacrebleu.metrics import BLEU, CHRF
    m = BLEU() if metric == "BLEU" else CHRF()
    t0 = time.process_time()
    score = m.corpus_score(hyps, refs).score
    print(json.dumps({"cpu": time.process_time() - t0, "score": score}))


def run(tool: str, metric: str, k: int) -> dict:
    """``tool``: "sacrebleu" or the root of an mtscore checkout."""
    out = subprocess.run([sys.executable, __file__, "--child", tool, metric, str(k)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ks", default="20000,40000,100000")
    ap.add_argument("--sacre-max", type=int, default=40000)
    ap.add_argument("--before", default=None)
    ap.add_argument("--before-max", type=int, default=40000)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "refs_scaling.md"))
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    ks = [int(x) for x in args.ks.split(",")]
    machine = shared_machine()
    cmd = "python bench/bench_refs_scaling.py" + (f" --ks {args.ks}" if args.ks != "20000,40000,100000" else "") \
        + (f" --sacre-max {args.sacre_max}" if args.sacre_max != 40000 else "") \
        + (f" --before DIR --before-max {args.before_max}" if args.before else "")
    rows = []
    for metric in ("BLEU", "chrF"):
        base = None
        for k in ks:
            ours = run(str(REPO), metric, k)
            if base is None:
                base = (k, ours["cpu"])
            growth = (ours["cpu"] / base[1]) / (k / base[0])
            theirs = run("sacrebleu", metric, k) if k <= args.sacre_max else None
            same = None if theirs is None else theirs["score"] == ours["score"]
            old = run(args.before, metric, k) if args.before and k <= args.before_max else None
            rows.append((metric, k, ours["cpu"], growth, theirs, same, old))
            print(metric, k, f"{ours['cpu']:.2f}", f"growth {growth:.2f}",
                  "" if theirs is None else f"sacrebleu {theirs['cpu']:.2f} equal {same}",
                  "" if old is None else f"before {old['cpu']:.2f}",
                  flush=True)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")
    lines = [
        "# Many references: BLEU and chrF against K reference streams (P13, bounded work)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine}, {when} UTC",
        "",
        "One segment scored against K reference streams, each a distinct line of the "
        "newstest2021 `*-en` system outputs; `corpus_score` CPU s, each run in a fresh process. "
        "growth = (time / time at the smallest K) / (K / smallest K): 1.0 is linear.",
        "",
        "| metric | K references | mtscore CPU s | growth vs linear | sacrebleu CPU s | ratio | scores equal |"
        + (" mtscore before (DIR) CPU s |" if args.before else ""),
        "|---|---:|---:|---:|---:|---:|---|" + ("---:|" if args.before else ""),
    ]
    for metric, k, cpu, growth, theirs, same, old in rows:
        sac = "not run" if theirs is None else f"{theirs['cpu']:.2f}"
        ratio = "" if theirs is None else f"**{theirs['cpu'] / cpu:.1f}x**"
        lines.append(f"| {metric} | {k:,} | {cpu:.2f} | {growth:.2f} | {sac} | {ratio} | "
                     f"{'' if same is None else same} |"
                     + ((" not run |" if old is None else f" {old['cpu']:.2f} |") if args.before else ""))
    lines.append("")
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
