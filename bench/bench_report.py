"""Speed of ``mtscore report`` (issue P19): wall time of one report over S systems x N segments
of WMT21 newstest2021 en-de (reference A, the source, the first S systems by name), the time of
each section's builder call and the size of the page written.

    python bench/bench_report.py [--systems 20] [--segments 1000] [-m bleu chrf ter]
                                 [--bootstrap 1000] [--out bench/out/report.html]

Run it as a fresh process (one report per run: caches of the first call count); like the
command, numpy gets one BLAS thread unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS is set. Per-section
times are measured inside the real :func:`mtscore.report` call by wrapping the section
functions its builder calls (``context`` = scoring, CIs, paired tests and tokenising).
"""
import argparse
import functools
import os
import sys
import time
from pathlib import Path

# as the `mtscore report` command starts numpy: one BLAS thread unless the caller set a number
if not any(v in os.environ for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DATA = Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")) / "wmt21-news-systems" / "txt"
PAIR = "newstest2021.en-de"


def _read(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def load(n_sys: int, n_seg: int) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """(reference A, {system: outputs}, source), each cut to the first ``n_seg`` segments."""
    ref_file = DATA / "references" / f"{PAIR}.ref.A.de"
    if not ref_file.is_file():
        sys.exit(f"bench_report: {ref_file} not found (set MTSCORE_DATA)")
    files = sorted((DATA / "system-outputs").glob(f"{PAIR}.hyp.*.de"))[:n_sys]
    if len(files) < n_sys:
        sys.exit(f"bench_report: only {len(files)} {PAIR} systems under {DATA}, asked for {n_sys}")
    systems = {p.name[len(PAIR) + 5:-3]: _read(p)[:n_seg] for p in files}
    return _read(ref_file)[:n_seg], systems, _read(DATA / "sources" / f"{PAIR}.src.en")[:n_seg]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("-m", "--metrics", nargs="+", default=["bleu", "chrf", "ter"])
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "report.html"))
    ap.add_argument("--sections-out", default=None, metavar="DIR",
                    help="also write each section's HTML to DIR/<section>.html (to compare runs)")
    a = ap.parse_args()

    t0 = time.perf_counter()
    from mtscore.bindings.report import builder
    t_import = time.perf_counter() - t0
    ref, systems, src = load(a.systems, a.segments)
    load0 = f"{os.getloadavg()[0]:.2f}"

    times: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def timed(name, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kw):
            t, c = time.perf_counter(), time.process_time()
            try:
                res = fn(*args, **kw)
            finally:
                times[name] = times.get(name, 0.0) + time.perf_counter() - t
                cpu[name] = cpu.get(name, 0.0) + time.process_time() - c
            if a.sections_out and isinstance(res, str):
                Path(a.sections_out).mkdir(parents=True, exist_ok=True)
                (Path(a.sections_out) / f"{name}.html").write_text(res, encoding="utf-8")
            return res
        return wrapper

    for name in ("build_context", "score_table_section", "significance_section", "distributions_section",
                 "length_buckets_section", "words_section", "ngrams_section", "examples_section",
                 "agreement_section", "page"):
        setattr(builder, name, timed(name.replace("_section", ""), getattr(builder, name)))

    t, c = time.perf_counter(), time.process_time()
    text = builder.report([ref], systems, src=src, metrics=a.metrics, n_bootstrap=a.bootstrap)
    data = text.encode("utf-8")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    t_report, c_report = time.perf_counter() - t, time.process_time() - c

    print(f"report: {len(systems)} systems x {len(ref)} segments, {PAIR} ref A + src, metrics "
          f"{' '.join(a.metrics)}, {a.bootstrap} resamples")
    print(f"{'section':<16}{'wall s':>8}{'CPU s':>8}")
    for k, v in times.items():
        print(f"{k:<16}{v:8.2f}{cpu[k]:8.2f}")
    print(f"{'other':<16}{t_report - sum(times.values()):8.2f}{c_report - sum(cpu.values()):8.2f}")
    print(f"{'total (report)':<16}{t_report:8.2f}{c_report:8.2f}   (+ import {t_import:.2f} s wall)")
    print(f"load average before / after: {load0} / {os.getloadavg()[0]:.2f}")
    print(f"file: {out} {len(data) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
