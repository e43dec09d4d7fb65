"""CPU time of ``python -m mtscore --help`` in fresh processes, for one or more checkouts side by
side (alternating, so drift of a shared machine hits each alike).

    python bench/bench_cli_startup.py [--runs 20] [CHECKOUT ...]   # default: this checkout

Each CHECKOUT is a directory holding the ``mtscore`` package (a git worktree of another commit,
with its compiled kernels); it is put first on the path of the child process. Bytecode is written
and a warm-up run made first, as for an installed package. Prints the median and minimum CPU
(user + system) per checkout.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path


def cpu_of(cmd: list[str], cwd: str, env: dict) -> float:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="*", default=[str(Path(__file__).resolve().parents[1])])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["CI"] = "true"
    cmd = [sys.executable, "-m", "mtscore", "--help"]
    times: dict[str, list[float]] = {c: [] for c in args.checkouts}
    for c in args.checkouts:
        cpu_of(cmd, c, {**env, "PYTHONPATH": c})  # warm-up: bytecode written
    for _ in range(args.runs):
        for c in args.checkouts:
            times[c].append(cpu_of(cmd, c, {**env, "PYTHONPATH": c}))
    for c, t in times.items():
        print(f"{c}: median {1000 * statistics.median(t):.0f} ms, min {1000 * min(t):.0f} ms CPU "
              f"({args.runs} fresh processes)")


if __name__ == "__main__":
    main()
