"""Ray fault injection (split from test_ray.py): a scoring worker process killed mid-job (tasks,
actors, local Parquet files), a node removed from a multi-node ``ray.cluster_utils.Cluster`` on
this machine, and a small object store that spills to disk; the results stay equal to
``mtscore.score``. Marked ``slow`` but kept small enough for CI."""
import os
import signal
import threading
import time

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install \"mtscore[ray]\")")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install \"mtscore[ray]\")")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import mtscore  # noqa: E402
from mtscore.bindings.ray import score_ray  # noqa: E402
from tests.bindings import ray_support  # noqa: E402
from tests.bindings.ray_support import check_equal as _check_equal  # noqa: E402
from tests.bindings.ray_support import worker_env as _worker_env  # noqa: E402

tables = ray_support.tables  # the fixtures, shared with test_ray.py
local_ray = ray_support.local_ray


# ---- failures ------------------------------------------------------------------------------
def _our_raylets():
    """PIDs of this process's Ray node(s), so that a test never kills a worker of another
    test process's Ray (pytest-xdist); None if Ray's internals do not say (no filter)."""
    try:
        node = ray._private.worker._global_node
        return {p.process.pid for p in node.all_processes["raylet"]}
    except (AttributeError, KeyError, TypeError):
        return None


def _parent(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(ln.split()[1]) for ln in f if ln.startswith("PPid:"))
    except (OSError, StopIteration, ValueError):
        return -1


def _scoring_pids(raylets=None, marker=b"MapBatches"):
    """Processes that Ray titles ``ray::...MapBatches...`` (``marker``): workers scoring a batch
    (or the scoring actors; ``b"score_unit"``: a task scoring local Parquet files), children
    of ``raylets`` when given."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if (cmd.startswith(b"ray::") and marker in cmd.split(b"\0")[0]
                and (raylets is None or _parent(pid) in raylets)):
            out.append(int(pid))
    return out


def _kill_one_scoring_worker(done: threading.Event, killed: list, after: float = 0.3,
                             marker=b"MapBatches"):
    """SIGKILL one scoring worker, once, after ``after`` seconds."""
    raylets = _our_raylets()
    time.sleep(after)
    while not done.is_set() and not killed:
        for pid in _scoring_pids(raylets, marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
            killed.append(pid)
            return
        time.sleep(0.02)


def _slow_table(tables, copies: int):
    """The multi-system table repeated (as more systems), so a job lasts a few seconds."""
    t = pq.read_table(tables["multi"])
    parts = [t.set_column(3, "system", pa.array([f"{s}#{c}" for s in t.column("system").to_pylist()]))
             for c in range(copies)]
    return pa.concat_tables(parts)


@pytest.mark.slow
@pytest.mark.parametrize("compute", ["tasks", "actors"])
def test_worker_killed_mid_job(local_ray, tables, tmp_path, compute):
    big = _slow_table(tables, 12)
    loc = mtscore.score_table(big, metrics=["chrf", "ter"])
    ds = ray.data.from_arrow(big).repartition(24)
    done, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_one_scoring_worker, args=(done, killed))
    killer.start()
    seg_path = tmp_path / "seg.parquet"
    try:
        r = score_ray(ds, metrics=["chrf", "ter"], keep_stats=True, batch_size=40, segments=str(seg_path),
                      compute=compute, concurrency=2 if compute == "actors" else None)
    finally:
        done.set()
        killer.join()
    assert killed, "no scoring worker was found to kill (the job ended first)"
    _check_equal(r, loc, list(loc.corpus), metrics=["chrf", "ter"])
    seg = pq.read_table(seg_path)
    assert seg.num_rows == big.num_rows  # written once, retried task or not
    assert seg.to_pydict() == loc.segments.to_pydict()
    assert [p for p in os.listdir(tmp_path) if p != "seg.parquet"] == []  # no temporary left


@pytest.mark.slow
def test_worker_killed_mid_job_parquet_files(local_ray, tables, tmp_path):
    """Local Parquet files on plain tasks: a killed task is retried, results and sentence
    scores exact, written once."""
    big = _slow_table(tables, 12)
    loc = mtscore.score_table(big, metrics=["chrf", "ter"])
    d = tmp_path / "parts"
    d.mkdir()
    step = big.num_rows // 6
    for i in range(6):
        pq.write_table(big.slice(i * step, step), d / f"part-{i}.parquet", row_group_size=100)
    done, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_one_scoring_worker, args=(done, killed, 0.05, b"score_unit"))
    killer.start()
    seg_path = tmp_path / "seg.parquet"
    try:
        r = score_ray(str(d), metrics=["chrf", "ter"], keep_stats=True, batch_size=40, segments=str(seg_path))
    finally:
        done.set()
        killer.join()
    assert killed, "no scoring worker was found to kill (the job ended first)"
    _check_equal(r, loc, list(loc.corpus), metrics=["chrf", "ter"])
    assert pq.read_table(seg_path).to_pydict() == loc.segments.to_pydict()  # written once


@pytest.fixture
def cluster():
    """Three nodes on this machine: a head with no CPU (the driver) and two 1-CPU workers."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    workers = [c.add_node(num_cpus=1) for _ in range(2)]
    c.wait_for_nodes()
    ray.init(address=c.address, runtime_env=_worker_env())
    yield c, workers
    ray.shutdown()
    c.shutdown()


@pytest.mark.slow
def test_multi_node_and_node_removed_mid_job(cluster, tables):
    c, workers = cluster
    big = _slow_table(tables, 8)
    loc = mtscore.score_table(big, metrics=["bleu", "chrf"])
    r = score_ray(ray.data.from_arrow(big).repartition(8), metrics=["bleu", "chrf"], batch_size=200)
    _check_equal(r, loc, list(loc.corpus), metrics=["bleu", "chrf"], stats=False)
    # remove a node while the job runs; a fresh node keeps the cluster able to finish
    result = {}

    def job():
        result["r"] = score_ray(ray.data.from_arrow(big).repartition(48), metrics=["bleu", "chrf"],
                                keep_stats=True, batch_size=20)

    t = threading.Thread(target=job)
    t.start()
    deadline = time.time() + 60
    while not _scoring_pids() and time.time() < deadline:  # the job is scoring: remove a node
        time.sleep(0.02)
    c.remove_node(workers[1])
    assert t.is_alive(), "the job ended before the node was removed"
    c.add_node(num_cpus=1)
    t.join(timeout=240)
    assert not t.is_alive()
    _check_equal(result["r"], loc, list(loc.corpus), metrics=["bleu", "chrf"])


@pytest.mark.slow
def test_small_object_store_spills(tables, tmp_path):
    """A 75 MiB object store and ~150 MB of input blocks: Ray spills to disk, the job succeeds."""
    if ray.is_initialized():
        ray.shutdown()
    spill = tmp_path / "spill"
    ray.init(address="local", num_cpus=2, object_store_memory=75 * 2**20, include_dashboard=False, runtime_env=_worker_env(),
             _system_config={"object_spilling_config": f'{{"type": "filesystem", "params": {{"directory_path": "{spill}"}}}}'})
    try:
        t = pq.read_table(tables["multi"])
        pad = "x" * 2000  # a wide extra column the scorer never reads: blocks take ~2 KB a row
        parts = []
        for c in range(100):
            part = t.set_column(3, "system", pa.array([f"s{c % 4}"] * len(t)))
            parts.append(part.append_column("pad", pa.array([pad] * len(t))))
        blocks = [ray.put(p) for p in parts]  # ~150 MB in a 75 MiB store
        ds = ray.data.from_arrow_refs(blocks)
        r = score_ray(ds, metrics=["bleu"], batch_size=1000, system=False)
        whole = pa.concat_tables([p.drop(["pad", "system"]) for p in parts])
        loc = mtscore.score_table(whole, metrics=["bleu"], system=False)
        assert r.corpus["bleu"].score == loc.corpus["bleu"].score
        assert any(spill.rglob("*")), "nothing was spilled"
    finally:
        ray.shutdown()
