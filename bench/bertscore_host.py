"""BERTScore's host-side cost on the CPU: the same call under two source trees, A/B in fresh processes.

Each run is a fresh interpreter with ``PYTHONPATH`` (and the working directory) set to one tree
(``--tree``, given twice: e.g. a worktree of the previous code built with ``setup.py build_ext
--inplace``, then this checkout) that builds ``BERTScore(layer=L, device="cpu", threads=T,
progress=False)`` and scores the newstest2021 de-en pairs (19 systems x 1,000 segments against
reference A) twice; the second (warm) call is timed. Runs alternate A, B, A, B, ... ``--reps`` times
per layer; the medians and their ratio B / A are printed. ``layer=0`` matches the embedding output,
so the encoder costs almost nothing and what is left is the pipeline's own cost (tokenising,
batching, copies, greedy matching); ``layer=6`` is the full all-MiniLM-L6-v2.

    python bench/bertscore_host.py --tree /work/p15base --tree /work/main --layers 0,6 --reps 3

``--layers 0,6:2000``: a layer with ``:N`` uses the first ceil(N / 19) segments of every system
(default: all 19,000 pairs). Before the timed runs, one short untimed run per tree and layer fills
the ONNX export cache.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bertscore_gpu import load_pairs

WORKER = r"""
import json, time
import numpy as np
cands, refs = json.load(open({texts!r}, encoding="utf-8"))
import mtscore
from mtscore.engine.bertscore import BERTScore
t0 = time.perf_counter()
s = BERTScore(layer={layer}, device="cpu", threads={threads}, progress=False)
t1 = time.perf_counter()
s.score(cands, [refs])
t2, c2 = time.perf_counter(), time.process_time()
r = s.score(cands, [refs])
t3, c3 = time.perf_counter(), time.process_time()
np.save({npy!r}, np.stack([r.precision, r.recall, r.f1]).astype(np.float64))
print(json.dumps(dict(file=mtscore.__file__, n=len(cands), load_s=t1 - t0, first_s=t2 - t1,
                      warm_s=t3 - t2, warm_cpu_s=c3 - c2, mean_f=float(np.mean(r.f1)))))
"""


def run_once(tree: Path, layer: int, pairs: int | None, a, npy: Path) -> dict:
    """One fresh process under ``tree``: its timings (JSON printed by WORKER)."""
    _names, cands, refs, _per = load_pairs(a.data, pairs)
    texts = npy.with_suffix(".texts.json")
    texts.write_text(json.dumps([cands, refs]), encoding="utf-8")
    code = WORKER.format(texts=str(texts), layer=layer, threads=a.threads, npy=str(npy))
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tree, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"--tree {tree}, layer {layer}: exit {p.returncode}\n{p.stderr[-3000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    if not Path(res["file"]).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"--tree {tree}: the run imported mtscore from {res['file']}")
    return res


def parse_layers(spec: str, pairs: int | None) -> list[tuple[int, int | None]]:
    out = []
    for item in spec.split(","):
        layer, _, n = item.partition(":")
        out.append((int(layer), int(n) if n else pairs))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", required=True, help="source tree (twice: A then B)")
    ap.add_argument("--layers", default="0,6", help="LAYER[:PAIRS],...")
    ap.add_argument("--pairs", type=int, default=None, help="default pair count (all 19,000)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data", default=None, help="data root or a folder with ref.en + hyp.*")
    ap.add_argument("--out", default=None, help="write the JSON results and the table here (a folder)")
    a = ap.parse_args()
    trees = [Path(t).resolve() for t in a.tree]
    if len(trees) != 2:
        raise SystemExit("--tree: give exactly two trees (A, then B)")
    tmp = Path(tempfile.mkdtemp(prefix="bertscore_host_"))
    results: dict = {"trees": [str(t) for t in trees], "threads": a.threads, "reps": a.reps,
                     "load_avg_start": os.getloadavg()[0], "layers": {}}
    rows = []
    for layer, pairs in parse_layers(a.layers, a.pairs):
        for t in trees:  # fills the export cache, checks both trees run
            run_once(t, layer, 50, a, tmp / "warmup.npy")
        runs: dict[str, list[dict]] = {str(t): [] for t in trees}
        for rep in range(a.reps):
            for i, t in enumerate(trees):
                r = run_once(t, layer, pairs, a, tmp / f"l{layer}_{i}.npy")
                runs[str(t)].append(r)
                print(f"layer {layer} rep {rep + 1} {'AB'[i]} ({t}): warm {r['warm_s']:.2f} s wall, "
                      f"{r['warm_cpu_s']:.2f} s CPU (first {r['first_s']:.2f} s, load {r['load_s']:.2f} s)",
                      flush=True)
        prf = [np.load(tmp / f"l{layer}_{i}.npy") for i in range(2)]
        med = [statistics.median(r["warm_s"] for r in runs[str(t)]) for t in trees]
        med_cpu = [statistics.median(r["warm_cpu_s"] for r in runs[str(t)]) for t in trees]
        dmax = float(np.abs(prf[1] - prf[0]).max())
        results["layers"][str(layer)] = {"pairs": runs[str(trees[0])][0]["n"], "runs": runs, "median_warm_s": med,
                                        "median_warm_cpu_s": med_cpu, "max_abs_dprf_b_vs_a": dmax}
        rows.append((layer, runs[str(trees[0])][0]["n"], med, med_cpu, dmax))
    lines = [f"A = {trees[0]}, B = {trees[1]}; BERTScore(layer=L, device='cpu', threads={a.threads}), warm "
             f"(second) call, median of {a.reps} alternating fresh-process runs; load average at start "
             f"{results['load_avg_start']:.1f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
             "| layer | pairs | A warm s (CPU s) | B warm s (CPU s) | B / A wall | B / A CPU | max abs dP/R/F B vs A |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for layer, n, med, med_cpu, dmax in rows:
        lines.append(f"| {layer} | {n} | {med[0]:.2f} ({med_cpu[0]:.2f}) | {med[1]:.2f} ({med_cpu[1]:.2f}) | "
                     f"{med[1] / med[0]:.2f} | {med_cpu[1] / med_cpu[0]:.2f} | {dmax:.1e} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "bertscore_host.json").write_text(json.dumps(results, indent=1))
        (out / "bertscore_host.md").write_text(text)


if __name__ == "__main__":
    main()
