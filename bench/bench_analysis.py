"""Meta-evaluation speed: mtscore.analysis (vectorised over metrics) vs the usual per-metric
scipy/pandas-style loops, same process, CPU time (time.process_time) and peak RSS.

    python bench/bench_analysis.py [--data ../shared/data]
"""
import argparse
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mtscore.analysis import correlation as C
from mtscore.analysis import data as datasets
from mtscore.analysis.metaeval.darr import darr_kendall, darr_pairs
from mtscore.analysis.metaeval.williams import williams_matrix


def cpu(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def williams_loop(h, M):
    n = len(h)
    r = [stats.pearsonr(h, m)[0] for m in M]
    p = np.full((len(M), len(M)), np.nan)
    for i in range(len(M)):
        for j in range(len(M)):
            if i != j and r[i] >= r[j]:
                r23 = stats.pearsonr(M[i], M[j])[0]
                k = 1 - r[i] ** 2 - r[j] ** 2 - r23 ** 2 + 2 * r[i] * r[j] * r23
                t = (r[i] - r[j]) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(
                    2 * (n - 1) / (n - 3) * k + ((r[i] + r[j]) / 2) ** 2 * (1 - r23) ** 3)
                p[i, j] = stats.t.sf(abs(t), n - 3)
    return p


def boot_loop(h, M, B=1000, seed=12345):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(h), size=(B, len(h)))
    out = np.empty((B, len(M)))
    for b, ii in enumerate(idx):
        for j, m in enumerate(M):
            out[b, j] = np.corrcoef(h[ii], m[ii])[0, 1]
    return np.nanpercentile(out, [2.5, 97.5], axis=0)


def darr_loop(sys_, sid, raw, metric):
    rows = {}
    for i, (s, g) in enumerate(zip(sys_, sid)):
        if not s.startswith("Human"):
            rows.setdefault(g, {}).setdefault(s, i)
    c = d = 0
    for d_ in rows.values():
        items = list(d_.values())
        for a in range(len(items)):
            for b in range(a + 1, len(items)):
                i, j = items[a], items[b]
                if abs(raw[i] - raw[j]) >= 25:
                    better, worse = (i, j) if raw[i] > raw[j] else (j, i)
                    if metric[better] > metric[worse]:
                        c += 1
                    else:
                        d += 1
    return (c - d) / (c + d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "data"))
    args = ap.parse_args()
    root = Path(args.data) / "wmt20-metrics"
    sl = datasets.wmt20_sys_level(root, "en-de").complete_metrics()
    h, M = sl.human, sl.scores
    rows = []
    t_ours, (_, p_ours) = cpu(lambda: williams_matrix(h, M))
    t_ref, p_ref = cpu(lambda: williams_loop(h, M))
    assert np.allclose(np.nan_to_num(p_ours), np.nan_to_num(p_ref), atol=1e-9)
    rows.append((f"Williams all-pairs (en-de, {M.shape[0]} metrics, {M.shape[1]} systems)", t_ref, t_ours))
    t_ours, _ = cpu(lambda: C.kendall(h, M))
    t_ref, _ = cpu(lambda: [stats.kendalltau(h, m)[0] for m in M])
    rows.append(("Kendall tau-b, all metrics", t_ref, t_ours))
    t_ours, (_, lo, hi) = cpu(lambda: C.bootstrap_ci(h, M, n_resamples=1000), repeat=1)
    t_ref, ref = cpu(lambda: boot_loop(h, M), repeat=1)
    assert np.allclose(ref[0], lo)
    assert np.allclose(ref[1], hi)
    rows.append(("bootstrap CI of Pearson, 1000 resamples, all metrics", t_ref, t_ours))
    da = datasets.wmt20_seg_da(root, "de-en")
    m = datasets.wmt20_seg_metric(root, "chrF", "de-en", da)

    def ours_darr():
        b, w = darr_pairs(da["sys"], da["sid"], da["raw"])
        return darr_kendall(m, b, w)["tau"]
    t_ours, tau = cpu(ours_darr)
    t_ref, tau_ref = cpu(lambda: darr_loop(list(da["sys"]), list(da["sid"]), da["raw"], m))
    assert abs(tau - tau_ref) < 1e-12
    rows.append(("DARR pairs + Kendall-like (de-en chrF, 16584 pairs)", t_ref, t_ours))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()} {platform.release()}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    print("| task | loop (scipy/numpy per metric) CPU s | mtscore CPU s | speed-up |")
    print("|---|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {a:.4f} | {b:.4f} | {a / max(b, 1e-9):.1f}x |")
    print(f"\npeak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
