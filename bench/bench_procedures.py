"""Thesis procedures speed: E8 correlation over system subsets (vectorised chunks vs a loop of
np.corrcoef per subset) and the exact small-sample rank-sum p (integer Gaussian-binomial counts
vs scipy's exact Mann-Whitney), same process, CPU time (time.process_time), best of 3.

    python bench/bench_procedures.py [--data ../shared/data]
"""
import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mtscore.analysis import data as datasets
from mtscore.analysis.human.significance import rank_sum_test
from mtscore.analysis.metaeval.subsets import subset_correlations, system_subsets


def cpu(fn, repeat=3):
    best = np.inf
    out = None
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "data"))
    args = ap.parse_args()
    sl = datasets.tangled_sys_level(args.data, "en-de").complete_metrics()
    rows = []
    draws = 20000
    sub = system_subsets(len(sl.systems), 10, draws=draws, seed=1)

    def loop():
        return np.array([[np.corrcoef(sl.human[i], y[i])[0, 1] for y in sl.scores] for i in sub])

    t_loop, r_loop = cpu(loop, 1)
    t_vec, res = cpu(lambda: subset_correlations(sl.human, sl.scores, 10, draws=draws, seed=1, return_all=True))
    assert np.allclose(res["r"], r_loop, atol=1e-12, equal_nan=True)
    rows.append((f"E8: r of {len(sl.metrics)} metrics on {draws:,} random 10-of-22 subsets (WMT19 en-de)",
                 t_loop, t_vec))
    t_all, res_all = cpu(lambda: subset_correlations(sl.human, sl.scores, 10), 1)
    rng = np.random.default_rng(0)
    # 50 pairs of distinct sizes (cache misses: the counts are cached per (n1, n2) pair of sizes)
    sizes = [(a, b) for a in range(30, 50) for b in range(30, 50)]
    pick = rng.choice(len(sizes), 50, replace=False)
    pairs = [(rng.normal(0.3, 1, sizes[i][0]), rng.normal(0, 1, sizes[i][1])) for i in pick]
    t_sp, p_sp = cpu(lambda: [stats.mannwhitneyu(a, b, alternative="greater", method="exact").pvalue
                              for a, b in pairs])
    t_ms, p_ms = cpu(lambda: [rank_sum_test(a, b).p for a, b in pairs], 1)  # first call: nothing cached
    assert np.allclose(p_sp, p_ms, rtol=1e-9)
    rows.append(("A4.1: 50 exact rank-sum p-values, sizes 30-49 (mtscore uncached, exact integers)", t_sp, t_ms))
    t_mc, _ = cpu(lambda: [rank_sum_test(a, b).p for a, b in pairs])
    rows.append(("A4.1: the same 50 again (counts cached per pair of sizes)", t_sp, t_mc))
    print(f"machine: {platform.machine()}, {platform.system()} {platform.release()}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    print("| task | peer CPU s | mtscore CPU s | speed-up |\n|---|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {a:.4f} | {b:.4f} | {a / b:.1f}x |")
    print(f"\nall {res_all['subsets']:,} subsets, {len(sl.metrics)} metrics: {t_all:.2f} CPU s (1 run)")


if __name__ == "__main__":
    main()
