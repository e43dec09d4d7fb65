"""Lexical metrics (BLEU, chrF, chrF++): mtscore vs sacrebleu 2.6.0 and the fast peers, side by side.

Every measurement runs in a FRESH subprocess (tokenizer ``lru_cache``s start cold; peak RSS is per
measurement). Inputs are read into Python strings before the clock starts (except the 1M task, which
times reading the files too); the clock covers the scoring call(s) end to end from strings:

* CPU s  = ``time.process_time()`` of the measured call (all threads of the process),
* wall s = ``time.perf_counter()`` of the same call,
* RSS    = ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of that subprocess (data included),
* parity = every score (corpus scores; BLEU counts/totals/lengths; per-segment sentence scores
  compared as float64 bit patterns) equal to sacrebleu's.

Peers (each optional, `pip install -e '.[bench]'`; one that is not importable is skipped with a note): bleuscore (Rust BLEU,
``ref_len_method='closest'``), fastchrf (Rust sentence chrF), sacrebleu-mojo (Mojo kernels; its
wheel needs ``pip download --no-deps sacrebleu-mojo --python-version 3.12 --only-binary=:all:`` and
``pip install --ignore-requires-python --no-deps <wheel>``). Rust peers run with RAYON_NUM_THREADS=1.

    python bench/make_corpus.py                      # once: bench/out/corpus1m.*, corpus100k.*
    python bench/bench_lexical.py                    # everything -> bench/results/lexical.md
    python bench/bench_lexical.py --quick            # small subset (~2 min), -> bench/out/lexical_quick.md
    python bench/bench_lexical.py --tasks corpus cli # some tasks only
    python bench/bench_lexical.py --fresh-baselines  # also re-measure sacrebleu/peers (else reused from cache)
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from lexical_measure import REUSE, Report, best_of, fmt_rss, loadavg, machine, measure  # noqa: E402
from lexical_workloads import DATA, OUT, run_worker  # noqa: E402

TASKS = ("corpus", "wmt21", "sentence", "multisys", "big", "bigcli", "workers", "cli")
TARGETS = {  # (task, metric) -> (kind, target); kind: 'ratio' (>=), 'rss_gb' (<), 'speedup' (>=), 'half'
    ("corpus", "bleu"): ("ratio", 40), ("corpus", "chrf"): ("ratio", 25),
    ("corpus", "chrf++"): ("ratio", 25),
    ("wmt21", "bleu"): ("ratio", 40), ("wmt21", "chrf"): ("ratio", 25),
    ("wmt21", "chrf++"): ("ratio", 25),
    ("sentence", "bleu"): ("ratio", 30), ("sentence", "chrf"): ("ratio", 30),
    ("sentence", "bleu+chrf"): ("ratio", 30),
    ("multisys", "bleu+chrf"): ("ratio", 50), ("multisys", "bleu"): ("ratio", 50),
    ("multisys", "chrf"): ("ratio", 50),
}


# ------------------------------------------------------------------------------------------------
def task_corpus(rep, cfg):
    for metric in ("bleu", "chrf", "chrf++"):
        base = best_of(dict(task="corpus", peer="sacrebleu", metric=metric, data=cfg["corpus"]), cfg["slow_reps"])
        rep.add("corpus", f"corpus {metric}, {cfg['corpus_label']}", "sacrebleu 2.6.0", base, base)
        r = best_of(dict(task="corpus", peer="mtscore", metric=metric, data=cfg["corpus"]), cfg["reps"])
        ratio = rep.add("corpus", f"corpus {metric}, {cfg['corpus_label']}", "mtscore", r, base)
        verdict(rep, "corpus", metric, ratio, f"corpus {metric} ({cfg['corpus_label']})")
        peers = ["sacrebleu-mojo"] + (["bleuscore"] if metric == "bleu" else [])
        for peer in peers:
            r = best_of(dict(task="corpus", peer=peer, metric=metric, data=cfg["corpus"]), cfg["peer_reps"])
            rep.add("corpus", f"corpus {metric}, {cfg['corpus_label']}", peer, r, base)


def task_wmt21(rep, cfg):
    for testset in cfg["testsets"]:
        for metric in ("bleu", "chrf", "chrf++"):
            spec = dict(task="wmt21", metric=metric, testset=testset, pairs=cfg["pairs"])
            base = best_of(dict(spec, peer="sacrebleu"), cfg["slow_reps"])
            label = f"corpus {metric}, every {testset} system" + (f" ({base.get('n_systems')} systems, {base.get('n_segments')} segs)" if "error" not in base else "")
            rep.add("wmt21", label, "sacrebleu 2.6.0", base, base)
            r = best_of(dict(spec, peer="mtscore"), cfg["reps"])
            ratio = rep.add("wmt21", label, "mtscore", r, base)
            if testset == "newstest2021":
                verdict(rep, "wmt21", metric, ratio, f"corpus {metric} summed over all newstest2021 systems")
            for peer in ["sacrebleu-mojo"] + (["bleuscore"] if metric == "bleu" else []):
                rep.add("wmt21", label, peer, best_of(dict(spec, peer=peer), cfg["peer_reps"]), base)


def task_sentence(rep, cfg):
    res = {}
    for metric in ("bleu", "chrf"):
        base = best_of(dict(task="sentence", peer="sacrebleu", metric=metric, data=cfg["corpus"]), cfg["slow_reps"])
        res[metric] = base
        lab = f"sentence {metric}{' (effective_order)' if metric == 'bleu' else ''}, {cfg['corpus_label']}"
        rep.add("sentence", lab, "sacrebleu 2.6.0 sentence_score loop", base, base)
        r = best_of(dict(task="sentence", peer="mtscore", metric=metric, data=cfg["corpus"]), cfg["reps"])
        verdict(rep, "sentence", metric, rep.add("sentence", lab, "mtscore.score(sentence_level=True)", r, base),
                f"sentence {metric} via mtscore.score")
        if metric == "chrf":
            rep.add("sentence", lab, "fastchrf.pairwise_chrf", best_of(
                dict(task="sentence", peer="fastchrf", metric=metric, data=cfg["corpus"]), cfg["peer_reps"]), base)
    if all("error" not in v for v in res.values()):
        comb = dict(cpu=res["bleu"]["cpu"] + res["chrf"]["cpu"], wall=res["bleu"]["wall"] + res["chrf"]["wall"],
                    rss_mb=max(res["bleu"]["rss_mb"], res["chrf"]["rss_mb"]),
                    arrays={**res["bleu"].get("arrays", {}), **res["chrf"].get("arrays", {})},
                    note="sum of the two loops above")
        lab = f"sentence bleu+chrf, {cfg['corpus_label']}"
        rep.add("sentence", lab, "sacrebleu 2.6.0 sentence_score loops", comb, comb)
        r = best_of(dict(task="sentence", peer="mtscore", metric="bleu+chrf", data=cfg["corpus"]), cfg["reps"])
        verdict(rep, "sentence", "bleu+chrf", rep.add("sentence", lab, "mtscore.score(metrics=[bleu, chrf])", r, comb),
                "sentence BLEU+chrF in one mtscore.score call")


def task_multisys(rep, cfg):
    res = {}
    spec = dict(task="multisys", pair=cfg["multisys_pair"], max_systems=cfg["multisys_n"])
    for metric in ("bleu", "chrf"):
        base = best_of(dict(spec, peer="sacrebleu", metric=metric), cfg["slow_reps"])
        res[metric] = base
        lab = f"{base.get('n_systems', '?')} {cfg['multisys_pair']} systems x 1 ref set, corpus {metric}"
        rep.add("multisys", lab, "sacrebleu 2.6.0 (references= cached, corpus_score loop)", base, base)
        r = best_of(dict(spec, peer="mtscore", metric=metric), cfg["reps"])
        verdict(rep, "multisys", metric, rep.add("multisys", lab, "mtscore.score({sys: hyps})", r, base),
                f"{lab}")
        r = best_of(dict(spec, peer="mtscore-loop", metric=metric), cfg["reps"])
        rep.add("multisys", lab, "mtscore (references= cached, corpus_score loop)", r, base)
        rep.add("multisys", lab, "sacrebleu-mojo (loop)", best_of(dict(spec, peer="sacrebleu-mojo", metric=metric), cfg["peer_reps"]), base)
    if all("error" not in v for v in res.values()):
        comb = dict(cpu=res["bleu"]["cpu"] + res["chrf"]["cpu"], wall=res["bleu"]["wall"] + res["chrf"]["wall"],
                    rss_mb=max(res["bleu"]["rss_mb"], res["chrf"]["rss_mb"]),
                    values={**res["bleu"].get("values", {}), **res["chrf"].get("values", {})},
                    note="sum of the two runs above")
        lab = f"{res['bleu'].get('n_systems')} {cfg['multisys_pair']} systems x 1 ref set, BLEU+chrF"
        rep.add("multisys", lab, "sacrebleu 2.6.0", comb, comb)
        r = best_of(dict(spec, peer="mtscore", metric="bleu+chrf"), cfg["reps"])
        verdict(rep, "multisys", "bleu+chrf", rep.add("multisys", lab, "mtscore.score(metrics=[bleu, chrf])", r, comb), lab)


def task_big(rep, cfg):
    lab = f"BLEU+chrF, {cfg['big_label']} from files"
    runs = []
    for peer, chunk, name in (("mtscore", None, "mtscore.score(read_lines, sentence_level=True)"),
                              ("mtscore", 16384, "mtscore.score(read_lines, sentence_level=True, chunk_size=16384)"),
                              ("mtscore-files", None, "mtscore.score_files(sentence_level=True) (streams the files)"),
                              ("mtscore-stream", None, "mtscore streamed (iter_text_chunks, corpus stats)")):
        spec = dict(task="big", peer=peer, data=cfg["big"])
        if chunk:
            spec["chunk_size"] = chunk
        r = best_of(spec, 1)
        rep.add("big", lab, name, r, None, note=r.get("note", ""))
        if "error" in r:
            continue
        rep.rows[-1]["parity"] = "n/a (sacrebleu not run)" if not runs else \
            ("same scores as mtscore.score" if r["values"] == runs[0][1]["values"] else "NO: differs from mtscore.score")
        runs.append((rep.rows[-1], r))
        rep.verdicts.append((f"{lab}: peak RSS < 1.5 GB ({name})", fmt_rss(r["rss_mb"]), r["rss_mb"] < 1536))
    # sacrebleu extrapolated from the corpus task's run (bleu + chrf); it is not run at this size
    sb = [x for x in rep.rows if x["task"] == "corpus" and x["peer"].startswith("sacrebleu 2") and x["cpu"] is not None
          and (x["what"].startswith("corpus bleu,") or x["what"].startswith("corpus chrf,"))]
    if len(sb) == 2:
        factor = cfg["big_n"] / cfg["corpus_n"]
        cpu = sum(x["cpu"] for x in sb) * factor
        wall = sum(x["wall"] for x in sb) * factor
        chrf_rss = next(x["rss"] for x in sb if "chrf" in x["what"])
        rep.rows.append(dict(task="big", what=lab, peer=f"sacrebleu 2.6.0 (EXTRAPOLATED x{factor:.0f} from the {cfg['corpus_label']} corpus_score bleu + chrf runs; not run)",
                             cpu=cpu, wall=wall, rss=None, ratio="", parity="n/a",
                             note=f"corpus chrF on the {cfg['corpus_label']} peaked at {fmt_rss(chrf_rss)}; it caches every reference's n-gram Counters, so ~x{factor:.0f} at this size"))
        for row, r in runs:
            row["ratio"] = f"{cpu / r['cpu']:.1f}x (vs extrapolated)"
    else:
        rep.notes.append("big: sacrebleu extrapolation needs the corpus task in the same run (--tasks corpus big)")


# VmHWM: the command's own peak RSS (ru_maxrss would count the bench process's RSS at fork)
_CLI_RSS = ("import runpy, sys\n"
            "sys.argv = ['mtscore', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('mtscore', run_name='__main__')\n"
            "except SystemExit as e:\n    code = e.code\n"
            "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM:')][0].split()[1]\n"
            "print('RSS_KB', hwm, file=sys.stderr)\n"
            "sys.exit(code)\n")


def task_bigcli(rep, cfg):
    """The command line on the big corpus (it streams its inputs in chunks; only the stats
    grow): peak RSS of the whole process, with and without a bootstrap CI, and from stdin."""
    base = cfg["big"]
    for label, args, stdin in (
            ("-m bleu chrf", ["-m", "bleu", "chrf"], False),
            ("-m bleu chrf --confidence", ["-m", "bleu", "chrf", "--confidence"], False),
            ("-m bleu chrf, hypotheses on stdin", ["-m", "bleu", "chrf"], True)):
        cmd = [sys.executable, "-c", _CLI_RSS, base + ".ref", "-f", "text", "-q", *args]
        if not stdin:
            cmd[4:4] = ["-i", base + ".hyp"]
        t0 = time.perf_counter()
        with open(base + ".hyp", "rb") as f:
            o = subprocess.run(cmd, stdin=f if stdin else subprocess.DEVNULL, capture_output=True)
        wall = time.perf_counter() - t0
        err = o.stderr.decode()
        rss = next((int(x.split()[1]) / 1024 for x in err.splitlines() if x.startswith("RSS_KB")), None)
        what = f"CLI {label}, {cfg['big_label']}"
        ok = o.returncode == 0 and rss is not None
        rep.rows.append(dict(task="bigcli", what=what, peer="mtscore (python -m mtscore REF -i HYP ...)",
                             cpu=None, wall=wall, rss=rss, ratio="", parity="n/a",
                             note="" if ok else f"rc={o.returncode}: {err.strip()[-200:]}"))
        rep.verdicts.append((f"{what}: peak RSS <= 700 MB", fmt_rss(rss) if rss else "failed",
                             bool(ok and rss <= 700)))


def machine_ceiling(mb: int = 96) -> float:
    """What two threads can gain on this machine right now: the wall time of one GIL-free,
    compute-bound job (sha256 of ``mb`` MB, hashlib releases the GIL) times 2, over the wall
    time of two such jobs on two threads (2.0 on two free cores; less when the host
    contends the second vCPU, which this shared VM does at times)."""
    import hashlib
    import threading
    data = bytes(mb << 20)

    def job():
        hashlib.sha256(data).digest()

    job()  # fault the pages in first
    t0 = time.perf_counter()
    job()
    one = time.perf_counter() - t0
    ts = [threading.Thread(target=job) for _ in range(2)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return 2 * one / (time.perf_counter() - t0)


def task_workers(rep, cfg):
    import statistics as st
    walls = {1: [], 2: []}
    res = {}
    ceilings = []
    # at least 7 interleaved rounds: one process's wall time moves by +-7 % on this VM; each
    # round also measures the machine's two-thread ceiling at that moment
    for _ in range(max(7, cfg["reps"])):
        ceilings.append(machine_ceiling())
        for w in (1, 2):
            r = measure(dict(task="workers", peer="mtscore", workers=w, data=cfg["corpus"]))
            if "error" in r:
                rep.add("workers", f"mtscore.score bleu+chrf workers={w}", "mtscore", r)
                return
            walls[w].append(r["wall"])
            res.setdefault(w, []).append(r)
        ceilings.append(machine_ceiling())
    for w in (1, 2):
        best = min(res[w], key=lambda r: r["wall"])
        rep.add("workers", f"mtscore.score bleu+chrf (sentence_level), {cfg['corpus_label']}, workers={w}",
                "mtscore", best, res[1][0] if w == 2 else best,
                note=f"walls {[round(x, 2) for x in walls[w]]}, loads {[r['load'] for r in res[w]]}")
        rep.rows[-1]["ratio"] = ""
    sp_min = min(walls[1]) / min(walls[2])
    paired = [a / b for a, b in zip(walls[1], walls[2])]
    sp_med = st.median(paired)
    rep.rows[-1]["ratio"] = f"{sp_min:.2f}x wall vs workers=1"
    rep.verdicts.append(("workers=2 vs 1 wall speed-up >= 1.7x",
                         f"{sp_min:.2f}x (min wall) / {sp_med:.2f}x (median of the per-round ratios "
                         f"{', '.join(f'{x:.2f}' for x in paired)}); machine ceiling (two sha256 "
                         f"threads) {min(ceilings):.2f}-{max(ceilings):.2f}x, median "
                         f"{st.median(ceilings):.2f}x; load avg {loadavg()}",
                         sp_min >= 1.7))


def task_cli(rep, cfg):
    ref = DATA / "references" / f"newstest2021.{cfg['cli_pair']}.ref.A.{cfg['cli_pair'].split('-')[1]}"
    hyp = DATA / "system-outputs" / f"newstest2021.{cfg['cli_pair']}.hyp.{cfg['cli_system']}.{cfg['cli_pair'].split('-')[1]}"
    py = sys.executable
    cmds = {"mtscore": [py, "-m", "mtscore", str(ref), "-i", str(hyp), "-m", "bleu", "chrf"],
            "sacrebleu 2.6.0": [py, "-m", "sacrebleu", str(ref), "-i", str(hyp), "-m", "bleu", "chrf"]}
    outs = {k: subprocess.run(v, capture_output=True, text=True, cwd=REPO) for k, v in cmds.items()}
    for k, o in outs.items():
        if o.returncode != 0:
            rep.add("cli", "CLI bleu+chrf, 1 file", k, {"error": f"rc={o.returncode}: {(o.stderr.strip().splitlines() or [''])[-1][:200]}"})
            return
    same = outs["mtscore"].stdout == outs["sacrebleu 2.6.0"].stdout and outs["mtscore"].returncode == 0
    with open(hyp, encoding="utf-8") as f:
        n_lines = sum(1 for _ in f)
    rep.notes.append(f"CLI command (`{cfg['cli_pair']}` {cfg['cli_system']}, {n_lines} lines): "
                     f"`python -m mtscore REF -i HYP -m bleu chrf` vs `python -m sacrebleu REF -i HYP -m bleu chrf`; "
                     f"stdout identical: {same}")
    runs = cfg["cli_runs"]
    med = {}
    if shutil.which("hyperfine"):
        js = OUT / "lexical_cli_hyperfine.json"
        la = loadavg()
        import shlex
        subprocess.run(["hyperfine", "-N", "--warmup", "2", "--runs", str(runs), "--export-json", str(js), "--style", "none",
                        "-n", "mtscore", shlex.join(cmds["mtscore"]), "-n", "sacrebleu", shlex.join(cmds["sacrebleu 2.6.0"])],
                       cwd=REPO, capture_output=True, text=True, check=True)
        data = json.loads(js.read_text())["results"]
        for d, k in zip(data, cmds):
            med[k] = d["median"]
            rep.rows.append(dict(task="cli", what=f"CLI bleu+chrf, 1 file, interpreter start included (hyperfine median of {runs})",
                                 peer=k, cpu=d["user"] + d["system"], wall=d["median"], rss=None, ratio="",
                                 parity="yes" if same else "NO (stdout differs)", load=la,
                                 note=f"mean {d['mean']:.3f} s +- {d['stddev']:.3f}; CPU = mean user+sys"))
        tool = "hyperfine"
    else:
        for k, c in cmds.items():
            ws = []
            for _ in range(runs):
                t = time.perf_counter()
                subprocess.run(c, capture_output=True, cwd=REPO, check=True)
                ws.append(time.perf_counter() - t)
            ws.sort()
            med[k] = ws[len(ws) // 2]
            rep.rows.append(dict(task="cli", what=f"CLI bleu+chrf, 1 file (median of {runs} subprocess runs)", peer=k,
                                 cpu=None, wall=med[k], rss=None, ratio="", parity="yes" if same else "NO", load=loadavg(), note=""))
        tool = "subprocess"
    r = med["mtscore"] / med["sacrebleu 2.6.0"]
    rep.rows[-2]["ratio"] = f"{1 / r:.1f}x wall"
    rep.verdicts.append(("CLI wall (one newstest2021 file) mtscore <= 0.5 x sacrebleu",
                         f"{med['mtscore']:.3f} s vs {med['sacrebleu 2.6.0']:.3f} s = {r:.2f}x ({tool})", r <= 0.5 and same))


def verdict(rep, task, metric, ratio, text):
    kind, tgt = TARGETS.get((task, metric), (None, None))
    if kind is None:
        return
    rep.verdicts.append((f"{text}: CPU ratio >= {tgt}x", f"{ratio:.1f}x" if ratio else "n/a", bool(ratio and ratio >= tgt)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small subset: 10k corpus, 2 newstest pairs, 100k 'big'")
    ap.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    ap.add_argument("--reps", type=int, default=3, help="fresh runs per mtscore measurement (min CPU)")
    ap.add_argument("--slow-reps", type=int, default=1, help="fresh runs per sacrebleu measurement")
    ap.add_argument("--fresh-baselines", action="store_true",
                    help="re-measure sacrebleu and the peers instead of reusing bench/out/lexical_baseline_cache.json")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    REUSE["on"] = not a.fresh_baselines

    need = [OUT / "corpus100k.hyp", OUT / "corpus1m.hyp"]
    if any(not p.exists() for p in need):
        print("building the corpus (bench/make_corpus.py) ...", file=sys.stderr)
        subprocess.run([sys.executable, str(REPO / "bench" / "make_corpus.py")], check=True)
    if a.quick:
        cfg = dict(corpus=str(OUT / "corpus100k") + ":10000", corpus_label="10k subset", corpus_n=10_000,
                   big=str(OUT / "corpus100k"), big_label="100k corpus", big_n=100_000,
                   testsets=["newstest2021"], pairs=["cs-en"], multisys_pair="en-de", multisys_n=5,
                   cli_runs=5, reps=1, slow_reps=1, peer_reps=1)
        out = a.out or OUT / "lexical_quick.md"
    else:
        cfg = dict(corpus=str(OUT / "corpus100k"), corpus_label="100k corpus", corpus_n=100_000,
                   big=str(OUT / "corpus1m"), big_label="1M corpus", big_n=1_000_000,
                   testsets=["newstest2021", "florestest2021"], pairs=None, multisys_pair="en-de", multisys_n=20,
                   cli_runs=10, reps=a.reps, slow_reps=a.slow_reps, peer_reps=1)
        out = a.out or REPO / "bench" / "results" / "lexical.md"
    cfg.update(cli_pair="en-de", cli_system="Facebook-AI")

    rep = Report()
    t0 = time.time()
    load0 = loadavg()
    for t in TASKS:
        if t in a.tasks:
            print(f"[{time.time() - t0:7.1f}s] {t} (load {loadavg()})", file=sys.stderr, flush=True)
            try:
                globals()[f"task_{t}"](rep, cfg)
            except Exception as e:  # keep the other tasks' results; say what failed
                rep.notes.append(f"task {t} FAILED: {type(e).__name__}: {str(e)[:300]}")
                print(f"task {t} failed: {e!r}", file=sys.stderr)
    elapsed = time.time() - t0
    cmd = "python bench/bench_lexical.py" + (" --quick" if a.quick else "") + \
        ("" if set(a.tasks) == set(TASKS) else " --tasks " + " ".join(a.tasks))
    stats = OUT / "corpus_stats.json"
    md = [f"# Lexical metrics benchmark: mtscore vs sacrebleu 2.6.0 and peers{' (QUICK subset)' if a.quick else ''}",
          "", f"Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} in {elapsed / 60:.1f} min by:", "",
          "```", "source .venv/bin/activate", "python bench/make_corpus.py   # once; bench/out/ is git-ignored", cmd, "```", "",
          "## Machine", "", machine(), f"- load average at the start: {load0}", "",
          "## Targets", "", "| target | measured | met |", "|---|---|---|"]
    md += [f"| {t} | {m} | {'yes' if ok else '**NO**'} |" for t, m, ok in rep.verdicts]
    md += ["", "## Results", "",
           "CPU s = `time.process_time()` of the measured call in a fresh subprocess (min over "
           f"{cfg['reps']} runs for mtscore, {cfg['slow_reps']} for sacrebleu, 1 for the other peers); wall s of that run; "
           "peak RSS = `ru_maxrss` of that subprocess (input strings included). Ratio = sacrebleu CPU / peer CPU "
           "on the same inputs. Parity = identical to sacrebleu bit for bit (corpus scores, BLEU counts/totals/"
           "lengths, every sentence score as float64 bits).", "", rep.table(), ""]
    md += ["## Data and notes", "",
           f"- WMT21 news systems: `{DATA}` (never copied into the repo); reference A is the single reference; "
           "BLEU uses sacrebleu's default tokenizer 13a for every language (no trg_lang), chrF/chrF++ defaults.",
           "- `wmt21` task: one subprocess per (peer, metric, test set) scoring every system in turn with a fresh metric "
           "object per system (as separate runs would; sacrebleu's lru_caches are keyed by tokenizer instance).",
           "- 100k / 1M corpora: `bench/make_corpus.py` (all 255 newstest2021+florestest2021 systems x their reference A, "
           "shuffled with a fixed seed, repeated to 1M; 100k = every 10th line). Sizes: "
           + (stats.read_text().replace("\n", " ") if stats.exists() else "n/a") + ". Only ~19k distinct references "
           "exist, so references repeat and sacrebleu's 13a tokenizer lru_cache (2^16 entries) gets hits: its BLEU "
           "times here are lower than on duplicate-free text, i.e. the BLEU ratios are conservative.",
           "- Peers installed with `pip install -e '.[bench]'` (bleuscore, fastchrf) and the sacrebleu-mojo wheel as in "
           "bench_lexical.py's docstring; a peer that is not installed is listed as not available and its rows fail with a note.",
           "- bleuscore: `compute(..., ref_len_method='closest')`, score x100; it has no 'exp' smoothing (sentence BLEU "
           "not comparable). fastchrf has no corpus-level chrF (pairwise = sentence chrF only). sacrebleu-mojo has "
           "corpus_bleu/corpus_chrf only (no sentence API, no reference caching). Rust peers: RAYON_NUM_THREADS=1.",
           "- Baselines (sacrebleu, bleuscore, fastchrf, sacrebleu-mojo) do not change while mtscore is optimised: "
           "their results are cached in bench/out/lexical_baseline_cache.json and rows that reuse them say so in the note "
           "(`--fresh-baselines` re-measures them). mtscore rows are always measured in this run.",
           "- workers task: wall time of `mtscore.score(..., workers=w)`; the 2 cores are shared with other jobs, "
           "so the speed-up is bounded by what the other core has free (see the load averages).",
           ] + [f"- {n}" for n in rep.notes]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(md) + "\n", encoding="utf-8")
    raw = OUT / ("lexical_raw_quick.json" if a.quick else "lexical_raw.json")
    raw.write_text(json.dumps(dict(rows=rep.rows, verdicts=rep.verdicts, cfg=cfg), indent=1, default=str))
    print("\n".join(md))
    print(f"\nwritten {out}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        run_worker(json.loads(sys.argv[2]))
    else:
        main()
