"""Ray Data scoring vs the in-process path on the same Parquet corpus (issue P9).

    python bench/bench_ray.py make --segments 10000000      # -> bench/out/ray_corpus/*.parquet
    python bench/bench_ray.py run --metrics bleu chrf        # in-process, then Ray (all cores)

The corpus: the 1M WMT21 (hypothesis, reference A) pairs of ``bench/make_corpus.py`` (built from
``$MTSCORE_DATA``; run that first), cycled (each cycle rotated by a different offset) into
``--segments`` rows, written as Parquet files of 1M rows (row groups of 64k) with a ``system``
column (``cycle-<i>``). Cycles have different references (rotated), so each file is scored as a
test set of its own (``score_ray(test_set="system", system=False)``; in-process: file by file).

Measured, in one run on one machine:

* in-process: ``pyarrow.parquet`` batches -> ``mtscore.score_stream`` (one thread, the same
  kernels), the local path a user without Ray would take on the same files;
* Ray: ``mtscore.bindings.ray.score_ray`` on a local Ray instance with every core
  (``ray.init(num_cpus=cores)``, a fresh one per run; Ray start-up is reported separately and
  not counted), given (``--via``) the directory (``files``: local Parquet files, scored by
  plain tasks that read their own row groups) and/or ``ray.data.read_parquet`` of it
  (``dataset``: Ray Data's reader fused with ``map_batches``, the path of every Dataset and of
  remote paths; the only path before session 8). CPU seconds are also broken down per process
  (``cpu_seconds_by_process``);
* throughput per core = segments / seconds / cores used, Ray's overhead = 1 - (Ray per-core
  throughput / in-process per-core throughput), by wall time and by CPU time (the machine may
  be shared: CPU seconds of this process, or of every Ray process plus the driver, do not
  count other users' load); peak RSS of every Ray worker process (sampled
  from /proc every 0.2 s) and of the driver; corpus scores of both paths must be equal (exit 1
  otherwise). Results go to ``bench/out/ray.json``
(recorded by hand in bench/RESULTS.md).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"
CORPUS = OUT / "ray_corpus"
ROWS_PER_FILE = 1_000_000


def read_lines(path: Path) -> list:
    with open(path, encoding="utf-8", newline="\n") as f:
        text = f.read()
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def make(segments: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    src_h, src_r = OUT / "corpus1m.hyp", OUT / "corpus1m.ref"
    if not src_h.exists():
        sys.exit(f"{src_h} missing: run `python bench/make_corpus.py` first (needs MTSCORE_DATA)")
    hyps, refs = read_lines(src_h), read_lines(src_r)
    n0 = len(hyps)
    CORPUS.mkdir(parents=True, exist_ok=True)
    for old in CORPUS.glob("*.parquet"):
        old.unlink()
    done, i = 0, 0
    while done < segments:
        n = min(ROWS_PER_FILE, segments - done)
        off = (i * 100_003) % n0
        idx = [(off + j) % n0 for j in range(n)]
        table = pa.table({"hyp": [hyps[j] for j in idx], "ref": [refs[j] for j in idx],
                          "system": [f"cycle-{i}"] * n})
        pq.write_table(table, CORPUS / f"part-{i:04d}.parquet", row_group_size=65536)
        done += n
        i += 1
        print(f"wrote {done} segments", file=sys.stderr)


class RssSampler:
    """Peak RSS of every Ray worker process (``ray::`` in its command line) and the CPU time of
    every process below this one (the local Ray instance it started: workers, raylet, GCS,
    monitors), sampled from /proc; CPU time is counted from the first sample, so it is this
    job's. Other users' processes (another Ray, a pytest with "ray" in its arguments) are not
    counted."""

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.peak: dict = {}
        self.cpu_first: dict = {}
        self.cpu_last: dict = {}
        self.names: dict = {}
        self.own_cpu = 0.0  # CPU seconds of the sampling itself (in the driver: not Ray's)
        self._tick = os.sysconf("SC_CLK_TCK")
        self._stop = threading.Event()
        self._baseline = True
        self._sample()
        self._baseline = False
        self._t = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self._sample()

    def cpu_seconds(self) -> float:
        return sum(v - self.cpu_first.get(pid, 0.0) for pid, v in self.cpu_last.items())

    def cpu_by_process(self) -> list:
        """``[(process, CPU seconds)]`` of this job, largest first (one entry per process;
        a worker's name is its latest task's)."""
        out = [(self.names.get(pid, "?"), round(v - self.cpu_first.get(pid, 0.0), 2))
               for pid, v in self.cpu_last.items()]
        return sorted((x for x in out if x[1] > 0), key=lambda x: -x[1])

    def _run(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self):
        t0 = time.thread_time()
        try:
            self._sample_once()
        finally:
            self.own_cpu += time.thread_time() - t0

    def _sample_once(self):
        me = os.getpid()
        stats = {}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        stats[int(pid)] = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
        for p in _descendants(me, {pid: int(f[1]) for pid, f in stats.items()}):
            fields = stats[p]
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
                cpu = (int(fields[11]) + int(fields[12])) / self._tick
                # processes alive at the start count from there; later ones from zero
                self.cpu_first.setdefault(p, cpu if self._baseline else 0.0)
                self.cpu_last[p] = cpu
                self.names[p] = _short(cmd)
                if not cmd.startswith("ray::"):
                    continue
                with open(f"/proc/{p}/status") as f:
                    rss = next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:"))
            except (OSError, StopIteration, ValueError, IndexError):
                continue
            key = (p, cmd.split()[0])
            self.peak[key] = max(self.peak.get(key, 0), rss)


def _descendants(root: int, parent: dict) -> list:
    """The processes below ``root`` (``parent``: pid -> parent pid): the Ray instance this
    process started (GCS, raylet, workers), never another user's Ray or pytest."""
    children: dict = {}
    for pid, pp in parent.items():
        children.setdefault(pp, []).append(pid)
    out, todo = [], list(children.get(root, ()))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, ()))
    return out


def _short(cmd: str) -> str:
    """A Ray process's name: the task / actor for workers, else the program and its role."""
    if cmd.startswith("ray::"):
        return cmd.split()[0]
    words = cmd.split()
    prog = os.path.basename(words[0]) if words else "?"
    for w in words[1:3]:
        if w.endswith(".py"):
            return f"{prog} {os.path.basename(w)}"
    return prog


def run_local(files, metrics):
    import mtscore

    # score_stream needs the same systems in every chunk: score file by file (one system each)
    t0 = time.perf_counter()
    c0 = time.process_time()
    corpus = {}
    n = 0
    for path in files:
        res = mtscore.score_stream(chunks_of(path), metrics, workers=1, sentence_level=False)
        for sname, row in res.corpus.items():
            corpus[sname] = {m: row[m].score for m in row}
            n += res.stats[sname][metrics[0]].shape[0]
    return n, time.perf_counter() - t0, time.process_time() - c0, corpus


def chunks_of(path):
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    for b in pf.iter_batches(batch_size=65536, columns=["hyp", "ref", "system"]):
        name = b.column(2)[0].as_py()
        yield [b.column(1).to_pylist()], {name: b.column(0).to_pylist()}


def run_ray(metrics, cores: int, batch_size: int, via: str):
    """``via``: "files" (the corpus directory: local Parquet files, read by the scoring tasks
    themselves) or "dataset" (``ray.data.read_parquet`` of it: Ray Data's reader fused with
    ``map_batches``, the path of any Dataset and of remote paths)."""
    import ray

    from mtscore.bindings.ray import score_ray

    t0 = time.perf_counter()
    ray.init(num_cpus=cores, include_dashboard=False)
    startup = time.perf_counter() - t0
    c0 = time.process_time()
    with RssSampler() as rss:
        t0 = time.perf_counter()
        source = str(CORPUS) if via == "files" else ray.data.read_parquet(str(CORPUS))
        r = score_ray(source, metrics=list(metrics), batch_size=batch_size, progress=False,
                      system=False, test_set="system")
        wall = time.perf_counter() - t0
    driver = time.process_time() - c0 - rss.own_cpu  # the /proc sampling is the bench's, not Ray's
    cpu = rss.cpu_seconds() + driver  # Ray's processes + this driver
    by_process = [("driver (this process, less the sampling)", round(driver, 2)), ("(not counted: the bench's /proc sampling)", round(rss.own_cpu, 2)), *rss.cpu_by_process()]
    corpus = {ts: {m: sc.score for m, sc in row.items()} for ts, row in r.corpus.items()}
    ray.shutdown()
    return sum(r.n.values()), wall, cpu, startup, corpus, rss.peak, by_process


def machine() -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
        with open("/proc/meminfo") as f:
            info["mem_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, StopIteration):
        pass
    import ray

    import mtscore

    info["ray"] = ray.__version__
    info["mtscore"] = mtscore.__version__
    return info


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make")
    mk.add_argument("--segments", type=int, default=10_000_000)
    rn = sub.add_parser("run")
    rn.add_argument("--metrics", nargs="+", default=["bleu"])
    rn.add_argument("--cores", type=int, default=os.cpu_count())
    rn.add_argument("--batch-size", type=int, default=None,
                    help="rows per batch (default: Ray's blocks, so scoring is fused with the read)")
    rn.add_argument("--skip-local", action="store_true")
    rn.add_argument("--via", nargs="+", choices=["files", "dataset"], default=["files", "dataset"],
                    help="Ray runs, each on a fresh local Ray: files (score_ray of the directory: "
                         "tasks read their own row groups) and/or dataset (score_ray of "
                         "ray.data.read_parquet of it: Ray Data's reader + map_batches)")
    args = p.parse_args(argv)
    if args.cmd == "make":
        make(args.segments)
        return 0
    files = sorted(CORPUS.glob("*.parquet"))
    if not files:
        sys.exit(f"no corpus in {CORPUS}: run `python bench/bench_ray.py make` first")
    res: dict = {"command": " ".join([Path(sys.argv[0]).name] + (argv or sys.argv[1:])),
                 "machine": machine(), "metrics": args.metrics, "cores": args.cores,
                 "batch_size": args.batch_size}
    local = None
    if not args.skip_local:
        n, wall, cpu, local = run_local(files, args.metrics)
        res["local"] = {"segments": n, "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "cores": 1,
                        "seg_per_s_per_core": round(n / wall), "seg_per_cpu_s": round(n / cpu),
                        "driver_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
        print(json.dumps(res["local"]), file=sys.stderr)
    ok = True
    for via in args.via:
        n, wall, cpu, startup, corpus, peaks, by_process = run_ray(args.metrics, args.cores, args.batch_size, via)
        workers = sorted(((name, kib) for (pid, name), kib in peaks.items()), key=lambda x: -x[1])
        key = "ray" if via == "files" else "ray_dataset"
        res[key] = {"via": via, "segments": n, "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                    "startup_seconds": round(startup, 2), "cores": args.cores,
                    "seg_per_s_per_core": round(n / wall / args.cores), "seg_per_cpu_s": round(n / cpu),
                    "cpu_seconds_by_process": by_process,
                    "worker_peak_rss_mib": [(name, round(kib / 1024)) for name, kib in workers[:8]],
                    "driver_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
        print(json.dumps(res[key]), file=sys.stderr)
        if local is not None:
            res[key]["overhead_wall"] = round(1 - res[key]["seg_per_s_per_core"] / res["local"]["seg_per_s_per_core"], 3)
            res[key]["overhead_cpu"] = round(1 - res[key]["seg_per_cpu_s"] / res["local"]["seg_per_cpu_s"], 3)
            res[key]["equal_scores"] = local == corpus
            ok = ok and local == corpus
        res["load_average_" + via] = os.getloadavg()
    res["corpus"] = corpus
    with open(OUT / "ray.json", "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: v for k, v in res.items() if k != "corpus"}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
