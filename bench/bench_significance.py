"""Significance benchmark: mtscore vs sacrebleu 2.6.0 side by side (CPU time via
time.process_time; peak RSS of each job measured in its own subprocess).

Jobs:
  pbs16-e2e   paired bootstrap (1000) of the 16 WMT17 en-de systems, BLEU 13a, incl. statistics
  pbs16-rs    the same, resampling only (statistics precomputed for both tools)
  par16-rs    paired AR (10000), resampling only
  ci100k      BLEU 1000-resample CI on a 100k-segment corpus, end to end (corpus_score)
  ci100k-rs   the same, resampling only
  ci1m        mtscore only: BLEU 1000-resample CI on 1M segments, end to end

Usage: python bench/bench_significance.py [--out bench/results/significance.md] [--skip-1m]
"""
import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")) / "wmt17-en-de-systems"


def _load():
    exp = json.loads((DATA / "expected" / "wmt17_en_de_significance_2.6.0.json").read_text())
    names = list(exp["bleu_tok_none|bs|1000"]["results"])
    rd = lambda p: p.read_text(encoding="utf-8").split("\n")[:-1]  # noqa: E731
    return {n: rd(DATA / f"{n}.txt") for n in names}, [rd(DATA / "reference.txt")]


def _corpus(n_seg):
    systems, refs = _load()
    hyps, ref = [], []
    allsys = list(systems.values())
    i = 0
    while len(hyps) < n_seg:
        hyps.extend(allsys[i % len(allsys)])
        ref.extend(refs[0])
        i += 1
    return hyps[:n_seg], [ref[:n_seg]]


def child(job, tool):
    os.environ["SACREBLEU_SEED"] = "12345"
    import numpy as np
    res = {}
    if job.startswith(("pbs16", "par16")):
        systems, refs = _load()
        test = "bs" if job.startswith("pbs") else "ar"
        n = 1000 if test == "bs" else 10000
        if tool == "sacrebleu":
            from sacrebleu.metrics import BLEU
            from sacrebleu.significance import PairedTest
            m = BLEU(references=refs)
            named = list(systems.items())
            if job.endswith("-rs"):
                cache = {id(h): m._extract_corpus_statistics(h, None) for _, h in named}
                orig = m._extract_corpus_statistics
                m._extract_corpus_statistics = lambda h, r: cache[id(h)] if id(h) in cache else orig(h, r)
            t = time.process_time()
            _, scores = PairedTest(named, {"BLEU": m}, references=None, test_type=test, n_samples=n)()
            res["cpu"] = time.process_time() - t
            res["p"] = [x.p_value for x in scores["BLEU"]]
        else:
            import mtscore.engine.significance as sig
            from mtscore import BLEU
            from mtscore.engine.significance.adapter import corpus_score
            from mtscore.engine.significance.paired import paired_ar_core, paired_bs_core
            if job.endswith("-rs"):
                m = BLEU()
                m.prepare_references(refs)
                stats = [[m.corpus_stats(h)] for h in systems.values()]
                exact = [[float(corpus_score(m, s[0]).score)] for s in stats]
                pairs = [(0, j) for j in range(1, len(stats))]
                t = time.process_time()
                if test == "bs":
                    p, _ = paired_bs_core([m], stats, exact, n, 12345, pairs, list(range(len(stats))))
                else:
                    p, _ = paired_ar_core([m], stats, exact, n, 12345, pairs)
                res["cpu"] = time.process_time() - t
                res["p"] = [None] + [p[0, j][0] for j in range(1, len(stats))]
            else:
                t = time.process_time()
                r = sig.compare(systems, refs, metrics=[BLEU()], test=test, n=n)
                res["cpu"] = time.process_time() - t
                res["p"] = [x.p_value for x in r.results["BLEU"]]
    elif job.startswith("ci"):
        n_seg = 1_000_000 if job.startswith("ci1m") else 100_000
        hyps, refs = _corpus(n_seg)
        if tool == "sacrebleu":
            from sacrebleu.metrics import BLEU
            m = BLEU()
            if job.endswith("-rs"):
                from sacrebleu.significance import _bootstrap_resample
                stats = m._extract_corpus_statistics(hyps, refs)
                t = time.process_time()
                _, scores = _bootstrap_resample(stats, m, 1000)
                res["cpu"] = time.process_time() - t
                import statistics
                raw = sorted(x.score for x in scores)
                res["mean"] = statistics.mean(raw)
            else:
                t = time.process_time()
                s = m.corpus_score(hyps, refs, n_bootstrap=1000)
                res["cpu"] = time.process_time() - t
                res["mean"] = s._mean
        else:
            from mtscore import BLEU
            from mtscore.engine.significance import bootstrap_ci
            m = BLEU()
            if job.startswith("ci1m"):
                # statistics extracted in 50k-segment batches (the engine's streaming road);
                # only the (N, 10) matrix grows with N, then the chunked bootstrap
                t = time.process_time()
                b = 50_000
                stats = np.concatenate([m.corpus_stats(hyps[i:i + b], [r[i:i + b] for r in refs])
                                        for i in range(0, len(hyps), b)])
                score = m.compute_score_from_stats(m.sum_stats(stats))
                bootstrap_ci(m, stats, score, 1000)
                res["cpu"] = time.process_time() - t
                res["mean"] = score._mean
            elif job.endswith("-rs"):
                stats = m.corpus_stats(hyps, refs)
                score = m.compute_score_from_stats(m.sum_stats(stats))
                t = time.process_time()
                bootstrap_ci(m, stats, score, 1000)
                res["cpu"] = time.process_time() - t
                res["mean"] = score._mean
            else:
                t = time.process_time()
                s = m.corpus_score(hyps, refs, n_bootstrap=1000)
                res["cpu"] = time.process_time() - t
                res["mean"] = s._mean
    res["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(res))


def run(job, tool):
    # single thread for both tools (numpy's BLAS pool would otherwise spin and count as CPU)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run([sys.executable, __file__, "--child", job, tool], capture_output=True, text=True,
                       cwd=REPO, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{job}/{tool} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=2)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "significance.md"))
    ap.add_argument("--skip-1m", action="store_true")
    ap.add_argument("--jobs", default="pbs16-e2e,pbs16-rs,par16-rs,ci100k,ci100k-rs")
    a = ap.parse_args()
    if a.child:
        return child(*a.child)
    rows = []
    for job in a.jobs.split(","):
        sb = run(job, "sacrebleu")
        mt = run(job, "mtscore")
        same = sb.get("p", sb.get("mean")) == mt.get("p", mt.get("mean"))
        rows.append((job, sb, mt, same))
        print(f"{job:10s} sacrebleu {sb['cpu']:8.2f}s {sb['maxrss_mb']:8.0f}MB | mtscore {mt['cpu']:7.3f}s "
              f"{mt['maxrss_mb']:7.0f}MB | x{sb['cpu'] / mt['cpu']:6.1f} RSS {100 * mt['maxrss_mb'] / sb['maxrss_mb']:.1f}% "
              f"identical={same}", flush=True)
    m1 = None if a.skip_1m else run("ci1m", "mtscore")
    if m1:
        print(f"ci1m mtscore {m1['cpu']:.2f}s peak RSS {m1['maxrss_mb']:.0f} MB", flush=True)
    lines = [
        "# Significance benchmark (mtscore vs sacrebleu 2.6.0)", "",
        f"Command: `python bench/bench_significance.py{' --skip-1m' if a.skip_1m else ''}`  ",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {__import__('numpy').__version__}; shared VM, CPU time = time.process_time() of the measured call; "
        "peak RSS = ru_maxrss of a separate subprocess per job (includes interpreter, imports and the corpus).", "",
        "| job | sacrebleu CPU s | mtscore CPU s | speed-up | sacrebleu peak RSS MB | mtscore peak RSS MB | RSS ratio | identical results |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for job, sb, mt, same in rows:
        lines.append(f"| {job} | {sb['cpu']:.2f} | {mt['cpu']:.3f} | {sb['cpu'] / mt['cpu']:.1f}x | {sb['maxrss_mb']:.0f} | "
                     f"{mt['maxrss_mb']:.0f} | {100 * mt['maxrss_mb'] / sb['maxrss_mb']:.1f}% | {same} |")
    if m1:
        lines += ["", f"1M-segment BLEU CI (1000 resamples, mtscore, statistics extracted in 50k-segment batches "
                      f"then one chunked bootstrap): {m1['cpu']:.2f} s CPU, peak RSS {m1['maxrss_mb']:.0f} MB."]
    lines += ["", "Jobs: pbs16 = paired bootstrap, 1000 resamples, 16 WMT17 en-de systems, BLEU 13a (e2e: including "
              "statistics extraction; rs: statistics precomputed for both); par16-rs = paired AR, 10000 trials; "
              "ci100k = 1000-resample BLEU CI on 100k segments (WMT17 systems concatenated)."]
    Path(a.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("wrote", a.out)


if __name__ == "__main__":
    main()
