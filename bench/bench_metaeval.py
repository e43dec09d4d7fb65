"""Meta-evaluation speed: mtscore.analysis.metaeval (Numba) vs google-research/mt-metrics-eval
on one WMT21-sized segment-level task (WMT21 de-en newstest2021: 19 systems x 1000 segments,
DA z as gold, "group by item" as WMT23+), CPU time, side by side in one process.

    MTSCORE_DATA=../shared/data python bench/bench_metaeval.py [--extra-metrics 8] [--oracle-draws 20]

Metrics: sentence BLEU, chrF, chrF++ and TER computed by mtscore on the primary outputs (no
WMT21 segment-level metric scores are public here) plus ``--extra-metrics`` synthetic ones
(gold + noise of growing size) to reach the metric count of a WMT metrics task.
mt-metrics-eval's permutation tests take minutes per metric pair, so its time per draw is
measured on ``--oracle-draws`` draws (same random stream, p-values checked equal) and
multiplied by the draws of the full run; everything else runs in full.
Writes bench/results/metaeval.md.
"""
import argparse
import os
import platform
import sys
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench_data import cpu  # noqa: E402

from mtscore.analysis.metaeval import compare_metrics, pairwise_permutation_test, tie_calibrated_accuracy  # noqa: E402
from mtscore.analysis.metaeval.wmt import wmt21_seg_task  # noqa: E402


def _oracle(data: Path):
    root = Path(os.environ.get("MTSCORE_ORACLES", data.parent / "oracles")) / "mt-metrics-eval"
    sys.path.insert(0, str(root))
    for name in ("apache_beam", "dacite"):
        sys.modules.setdefault(name, types.ModuleType(name))
    from mt_metrics_eval import stats

    return stats


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--extra-metrics", type=int, default=8)
    ap.add_argument("--oracle-draws", type=int, default=20)
    ap.add_argument("--k", type=int, default=1000)
    args = ap.parse_args()
    data = Path(os.environ.get("MTSCORE_DATA", HERE.parent.parent / "shared" / "data")).resolve()
    mme = _oracle(data)
    # the DA file's SIDs count segments in document-id order, and the shared data has no doc ids:
    # identity ids (every line its own document, in line order) keep the matrices' shapes and the
    # timing the same; the correlations are not WMT21's (this bench times, it does not evaluate)
    refs = data / "wmt21-news-systems" / "txt" / "references" / "newstest2021.de-en.ref.A.en"
    n_lines = len(refs.read_text(encoding="utf-8").splitlines())
    task = wmt21_seg_task(data / "wmt21-news-systems", "de-en", docids=[f"d{i:05d}" for i in range(n_lines)])
    rng = np.random.default_rng(0)
    h = task.human
    extra = [np.round(np.nan_to_num(h) + (0.5 + 0.25 * i) * rng.normal(size=h.shape), 3)
             for i in range(args.extra_metrics)]
    metrics = np.concatenate([task.metrics, np.stack(extra)]) if extra else task.metrics
    names = list(task.metric_names) + [f"synth-{i}" for i in range(args.extra_metrics)]
    S, N = h.shape
    gold = [None if np.isnan(x) else float(x) for x in h.ravel()]
    corrs = [mme.Correlation(S, gold, [float(x) for x in m.ravel()]) for m in metrics]
    rows = []
    print(f'task {S}x{N}, {len(names)} metrics', flush=True)

    # 1. tie-calibrated pairwise accuracy (acc_eq, group by item) of every metric
    tie_calibrated_accuracy(h[:, :5], metrics[0][:, :5], average_by="item")      # JIT warm-up / cache load
    t_ours, ours = cpu(lambda: [tie_calibrated_accuracy(h, m, "acc23", "item") for m in metrics])
    t_ref, ref = cpu(lambda: [mme.KendallWithTiesOpt(c.gold_scores, c.metric_scores, "acc23", S, "item", 1.0)
                               for c in corrs])
    assert [(o.value, o.epsilon) for o in ours] == [(r[0], r[1]) for r in ref]
    rows.append(("acc_eq (tie calibration), all metrics", t_ref, t_ours, "equal, bit for bit"))
    print(rows[-1], flush=True)

    # 2. one metric pair, pairwise permutation test, k draws without early stopping
    a, b = metrics[1], metrics[0]
    e1, e2 = ours[1].epsilon, ours[0].epsilon
    kd = args.oracle_draws
    psd = mme.PermutationSigDiffParams(kd, 0.0, 1.0)
    np.random.seed(1)
    t_ref_k, r_ref = cpu(lambda: mme.PairwisePermutationSigDiff(corrs[1], corrs[0], "acc23", "item", kd, psd, e1, e2))
    np.random.seed(1)
    r_ours = pairwise_permutation_test(h, a, b, "acc23", "item", e1, e2, k=kd, block_size=kd, early_min=0.0,
                                       early_max=1.0, stream="legacy")
    assert (r_ours.p_value, r_ours.n_draws) == (r_ref[0], r_ref[2])
    per_draw = t_ref_k / kd
    print("oracle s/draw", per_draw, flush=True)
    k = args.k
    t_leg, _ = cpu(lambda: pairwise_permutation_test(h, a, b, "acc23", "item", e1, e2, k=k, block_size=k,
                                                     stream="legacy", seed=1))
    t_fast, _ = cpu(lambda: pairwise_permutation_test(h, a, b, "acc23", "item", e1, e2, k=k, block_size=k, seed=1))
    rows.append((f"pairs permutation test, 1 metric pair, k={k} (legacy stream)", per_draw * k, t_leg,
                 f"p equal to the oracle's on {kd} shared draws"))
    rows.append((f"pairs permutation test, 1 metric pair, k={k} (fast stream)", per_draw * k, t_fast,
                 "same test, other random numbers"))

    # 3. all metrics, all pairs, k-block early stopping (block 100, WMT task defaults)
    np.random.seed(2)
    t_all, res = cpu(lambda: compare_metrics(h, metrics, names, "acc_eq", average_by="item", k=k, block_size=100,
                                             stream="legacy"))
    pairs = len(names) * (len(names) - 1) // 2
    t_all_fast, res_fast = cpu(lambda: compare_metrics(h, metrics, names, "acc_eq", average_by="item", k=k,
                                                       block_size=100, seed=2))
    n_draws = int(res.n_draws.sum())   # the oracle, on the same stream, uses the same draws
    rows.append((f"all {len(names)} metrics, {pairs} pairs, k={k}, k-block 100 (legacy stream)", per_draw * n_draws
                 + t_ref, t_all, f"{n_draws} draws in all; oracle = acc_eq time + draws x time per draw"))
    rows.append((f"all {len(names)} metrics, {pairs} pairs, k={k}, k-block 100 (fast stream)", per_draw * n_draws
                 + t_ref, t_all_fast, "clusters: " + " ".join(map(str, res_fast.ranks))))
    write(rows, args, S, N, len(names), res)


def write(rows, args, S, N, M, res) -> None:
    lines = ["# Meta-evaluation (mtscore.analysis.metaeval vs mt-metrics-eval)", "",
             f"Task: WMT21 de-en newstest2021 segment level, {S} systems x {N} segments ({M} metrics: "
             f"sentence BLEU, chrF, chrF++, TER by mtscore + {args.extra_metrics} synthetic), DA z gold, "
             "group by item, acc_eq with each metric's optimal epsilon, PairwisePermutationSigDiff.", "",
             f"Machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; shared with other jobs while measured (load average "
             f"{os.getloadavg()[0]:.1f} at the end; noisy). CPU time "
             "(process_time), one process, mt-metrics-eval @68a481a as the peer.", "",
             f"Command: `MTSCORE_DATA=../shared/data python bench/bench_metaeval.py --extra-metrics "
             f"{args.extra_metrics} --oracle-draws {args.oracle_draws} --k {args.k}`", "",
             "| workload | mt-metrics-eval CPU s | mtscore CPU s | speed-up | check |", "|---|---:|---:|---:|---|"]
    for name, ref, ours, note in rows:
        lines.append(f"| {name} | {ref:.2f} | {ours:.3f} | {ref / max(ours, 1e-9):.0f}x | {note} |")
    lines += ["", "Permutation rows: mt-metrics-eval's CPU time per draw was measured on "
              f"{args.oracle_draws} draws of the same stream and multiplied by the draws of the full run "
              "(its loop does the same work every draw). The first call of a session also loads the "
              "Numba cache (compiles once, about 10-20 s, on a fresh install); that is not counted. "
              "The oracle estimate leaves out that its CompareMetrics re-runs the tie calibration of both "
              "metrics for every pair (about 2 x the acc_eq row / metrics per pair), so the all-pairs "
              "ratios are lower bounds. With mt-metrics-eval's early-stopping rule for the pairs test "
              "(checked only after a draw whose delta is large) a pair with p near 0 never stops early, "
              "which is why the k-block rows use all k draws here.", "",
              "Significance clusters (legacy stream after np.random.seed(2), the numbers mt-metrics-eval's CompareMetrics would draw; test_compare_metrics_equals_oracle checks the equality on a small task): "
              + ", ".join(f"{n}={r}" for n, r in zip(res.names, res.ranks)), ""]
    (HERE / "results" / "metaeval.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
