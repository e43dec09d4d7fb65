"""Load on the DA campaign server (issue P21's target: 50 concurrent annotators, p99 response
under 100 ms): a real ``mtscore human serve`` (uvicorn, SQLite) in a subprocess on 127.0.0.1 and
50 simulated annotators posting for a fixed time, through the harness of
tests/bindings/test_campaign_load.py (tests/bindings/campaign_load.py). Prints p50/p95/p99 of
every response (GET item and POST rating) and of the POSTs alone, ratings/s, and the lost and
duplicated counts checked against the database.

    python bench/bench_campaign_load.py [--seconds 60] [--clients 50] [--think-ms 0] [--pin]

``--think-ms``: each annotator's mean pause between reading an item and posting its score, drawn
uniformly from 0.5x to 1.5x per item, and the clients start spread over one pause, as independent
people would (a fixed pause keeps 50 clients in step, and they arrive in bursts of 50); 0: every
client posts as fast as the server answers, a closed loop that measures throughput. People take
seconds per item. ``--pin`` (Linux): the server on CPU 0 and the clients on the other CPUs, so
that the clients' own CPU use (a Python client costs about as much per request as the server) does not
queue the server's answers: the nearest this one machine comes to clients on other machines.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.bindings.campaign_load import (  # noqa: E402
    check_db,
    free_port,
    kill,
    make_campaign,
    percentile,
    run_clients,
    start_server,
)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc; NaN elsewhere)."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return math.nan
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _pin(server_pid: int) -> None:
    """Every thread of the server on CPU 0 (threads it starts later inherit it); this process
    (the clients) on the other CPUs."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs 2 or more CPUs")
    for tid in os.listdir(f"/proc/{server_pid}/task"):
        os.sched_setaffinity(int(tid), {cpus[0]})
    os.sched_setaffinity(0, set(cpus[1:]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--think-ms", type=float, default=0.0)
    ap.add_argument("--pin", action="store_true", help="server on CPU 0, clients on the other CPUs (Linux)")
    args = ap.parse_args(argv)
    links_per_client = max(2, math.ceil(args.seconds * 20 / 100) + 1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "campaign"
        n = args.clients * links_per_client
        store, links = make_campaign(folder, n)
        port = free_port()
        proc = start_server(folder, port, n)
        if args.pin:
            _pin(proc.pid)
        cpu0 = _cpu_seconds(proc.pid)
        try:
            res = run_clients(port, links, args.clients, args.seconds, think=args.think_ms / 1000)
            cpu = _cpu_seconds(proc.pid) - cpu0
        finally:
            kill(proc)
        lost, dup, stored = check_db(store, res)
    ms = [x * 1000 for x in res.latency]
    if args.pin:
        print("pinned: server on CPU 0, clients on CPUs " + ",".join(map(str, sorted(os.sched_getaffinity(0)))))
    pms = [x * 1000 for x in res.post_latency]
    print(f"clients {args.clients}, think {args.think_ms:g} ms, {res.seconds:.1f} s, load average "
          f"{os.getloadavg()[0]:.1f}, cpus {os.cpu_count()}")
    print(f"requests {len(ms)}: p50 {percentile(ms, 50):.1f} ms, p95 {percentile(ms, 95):.1f} ms, "
          f"p99 {percentile(ms, 99):.1f} ms, max {max(ms):.1f} ms")
    print(f"POSTs {len(pms)}: p50 {percentile(pms, 50):.1f} ms, p95 {percentile(pms, 95):.1f} ms, "
          f"p99 {percentile(pms, 99):.1f} ms")
    print(f"server CPU {cpu:.1f} s = {1000 * cpu / max(1, len(res.acked)):.1f} ms per rating (GET + POST)")
    print(f"ratings acknowledged {len(res.acked)} ({len(res.acked) / res.seconds:.1f}/s), stored {stored}, "
          f"lost {lost}, duplicated {dup}, unexpected statuses {len(res.errors)}, clients out of links {res.exhausted}")
    return 1 if lost or dup or res.errors else 0


if __name__ == "__main__":
    sys.exit(main())
