"""COMET on Ray (an actor pool, the model loaded once per actor, as BERTScore): per-segment
scores within 1e-6 of COMET in-process on the golden tiny model of tests/golden/comet, the
source column carried to the actors (``src=``, ``--src-column``), and ``score-table --ray -m
comet`` printing the local command's scores."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
ray = pytest.importorskip("ray", reason="ray is not installed (pip install \"mtscore[ray]\")")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install \"mtscore[ray]\")")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from mtscore.bindings.ray import score_ray  # noqa: E402
from mtscore.engine.corpus_error import CorpusError  # noqa: E402
from tests.bindings import ray_support  # noqa: E402

local_ray = ray_support.local_ray

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "comet"
ENCODER = GOLDEN / "encoder"
MODEL = GOLDEN / "models" / "regression-sparsemax"
N = 30


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict:
    """Two systems (the golden hypotheses, and the sources as hypotheses) x N segments, the
    sources in a column named ``source``."""
    g = GOLDEN / "golden.json"
    if not g.is_file() or not (ENCODER / "tokenizer.json").is_file():
        pytest.skip(f"{g}: absent (tests/oracles/comet_oracle.py writes it)")
    rows = [json.loads(line) for line in (GOLDEN / "inputs.jsonl").read_text(encoding="utf-8").splitlines()
            if line][:N]
    src, mt, ref = ([r[k] for r in rows] for k in ("src", "mt", "ref"))
    table = pa.table({"system": ["A"] * N + ["B"] * N, "source": src * 2, "hyp": mt + src, "ref": ref * 2})
    path = tmp_path_factory.mktemp("ray-comet") / "two.parquet"
    pq.write_table(table, path, row_group_size=11)  # several blocks, cut inside a system
    golden = json.loads(g.read_text(encoding="utf-8"))["models"]["regression-sparsemax"]["scores"][:N]
    return {"table": table, "path": path, "src": src, "mt": mt, "ref": ref, "golden": golden}


def _local_scores(src: list[str], hyps: list[str], ref: list[str]) -> np.ndarray:
    from mtscore.engine.comet.metric import COMET

    m = COMET(MODEL, sources=src, encoder=ENCODER, threads=1)
    return m.scores_from_stats(m.corpus_stats(hyps, [ref]))


def test_comet_on_an_actor_pool_equals_in_process(local_ray, data):
    r = score_ray(ray.data.from_arrow(data["table"]), metrics=["comet", "bleu"], keep_stats=True,
                  batch_size=7, concurrency=1, src="source",
                  metric_kwargs={"comet": {"model": str(MODEL), "encoder": str(ENCODER)}})
    for system, hyps in (("A", data["mt"]), ("B", data["src"])):
        want = _local_scores(data["src"], hyps, data["ref"])
        st = r.stats[system]["comet"]
        assert st.shape == (N, 2)
        np.testing.assert_allclose(st[:, 0], want, atol=1e-6, rtol=0)
        np.testing.assert_array_equal(st[:, 1], np.ones(N))
        assert abs(r.corpus[system]["comet"].score - float(np.mean(want))) < 1e-6
    # system A is the golden run: unbabel-comet's segment scores
    np.testing.assert_allclose(r.stats["A"]["comet"][:, 0], data["golden"], atol=1e-5, rtol=0)
    assert r.corpus["A"]["comet"].score != r.corpus["B"]["comet"].score
    assert r.signatures["comet"].startswith("nrefs:1|model:regression-sparsemax|hash:")
    assert "|prec:fp32|multi:mean|" in r.signatures["comet"]


def test_local_parquet_tasks_read_the_default_src_column(local_ray, data, tmp_path):
    """Parquet files read by the scoring tasks' own path: the default ``src`` column; a table
    without it is refused naming the column and ``src=``, before any scoring."""
    path = tmp_path / "src.parquet"
    pq.write_table(data["table"].rename_columns(["system", "src", "hyp", "ref"]), path, row_group_size=13)
    r = score_ray(str(path), metrics=["comet"], keep_stats=True,
                  metric_kwargs={"comet": {"model": str(MODEL), "encoder": str(ENCODER)}})
    np.testing.assert_allclose(r.stats["A"]["comet"][:, 0], _local_scores(data["src"], data["mt"], data["ref"]),
                               atol=1e-6, rtol=0)
    with pytest.raises(CorpusError, match=r"no column 'src' .*pass src= "):
        score_ray(str(data["path"]), metrics=["comet"],
                  metric_kwargs={"comet": {"model": str(MODEL), "encoder": str(ENCODER)}})


def test_cli_comet_on_ray_prints_the_local_scores(local_ray, data, capsys):
    from cli_run import run_cli

    model = ["--comet-model", str(MODEL), "--comet-encoder", str(ENCODER)]
    argv = ["score-table", str(data["path"]), "-m", "comet", "--src-column", "source", "-f", "json",
            "-w", "8", "-q", *model]
    rc, local, err = run_cli(argv, capsys)
    assert rc == 0, err
    rc, on_ray, err = run_cli([*argv, "--ray"], capsys)
    assert rc == 0, err
    want, got = json.loads(local), json.loads(on_ray)
    assert [row["system"] for row in got] == ["A", "B"]
    for w, g in zip(want, got):
        assert abs(float(g["COMET"]) - float(w["COMET"])) < 2e-6
    assert abs(float(got[0]["COMET"]) - float(np.mean(data["golden"]))) < 1e-5
    rc, _, err = run_cli(["score-table", str(data["path"]), "-m", "comet", "--ray", *model], capsys)
    assert rc == 1
    assert "no column 'src'" in err
    assert "--src-column" in err


def _payload(system: str, stats: np.ndarray, facts: dict | None) -> bytes:
    """A scoring actor's pickled payload for one system's rows (as BatchScorer writes it)."""
    import pickle

    p = {"n": len(stats), "groups": {("", system): {"n": len(stats), "ref_counts": (1, 1),
                                                   "comet": ("stats", stats)}}}
    if facts is not None:
        p["facts"] = facts
    return pickle.dumps(p)


def test_signature_precision_is_what_the_actors_ran(data):
    """The driver's copy of COMET runs on the CPU (tf32 runs as fp32 there); the signature's prec
    is what the actors report (a GPU actor's tf32; fake payloads, no GPU needed), and actors that
    differ are all named. score-table's runner prints that signature."""
    from types import SimpleNamespace

    from mtscore.bindings.cli.comet import COMETRunner
    from mtscore.bindings.ray.gather import gather
    from mtscore.bindings.ray.result import RayScoreResult
    from mtscore.bindings.ray.worker import build_metrics, run_facts

    driver = build_metrics([("comet", {"model": str(MODEL), "encoder": str(ENCODER), "device": "cpu",
                                       "precision": "tf32"})], None)
    assert driver["comet"].precision == "fp32"  # what the CPU runs
    assert run_facts(driver["comet"]) == {"prec": "fp32"}
    assert run_facts(build_metrics([("bleu", {})], None)["bleu"]) == {}
    st = np.column_stack([np.asarray(data["golden"]), np.ones(N)])
    for reported, want in (([{"prec": "tf32"}], "tf32"), ([{"prec": "tf32"}, {"prec": "fp32"}], "fp32+tf32"),
                           ([None], "fp32")):
        metrics = build_metrics([("comet", {"model": str(MODEL), "encoder": str(ENCODER), "device": "cpu",
                                            "precision": "tf32"})], None)
        facts: dict = {}
        halves = np.array_split(st, len(reported))
        payloads = (blobs for blobs in [[_payload("A", h, None if f is None else {"comet": f})
                                         for h, f in zip(halves, reported)]])
        groups, _ = gather(payloads, metrics, True, None, False, True, facts)
        r = RayScoreResult(groups, metrics, False, True, True, None, run_facts=facts)
        assert f"|prec:{want}|multi:mean|" in r.signatures["comet"]
        assert abs(r.corpus["A"]["comet"].score - float(np.mean(data["golden"]))) < 1e-12
        args = SimpleNamespace(comet_model=str(MODEL), short=False)
        out = COMETRunner.from_ray(args, r, "").result("A", None)
        assert f"|prec:{want}|" in out["signature"]
    assert r.run_facts == {}


def test_actor_payload_reports_its_precision(data):
    """BatchScorer (an actor's scoring, run here in-process) puts each metric's run facts in its
    payload: COMET's precision as its session ran it."""
    import pickle

    from mtscore.bindings.ray.worker import BatchScorer
    from mtscore.engine.columns import resolve_columns

    table = data["table"].slice(0, 4)
    spec = {"metrics": [("comet", {"model": str(MODEL), "encoder": str(ENCODER), "device": "cpu", "threads": 1}),
                        ("bleu", {})],
            "missing_refs": None, "test_set": None, "source": "t", "keep_stats": True, "sentence": False,
            "digest": False, "slice_rows": 100, "src": "source",
            "columns": resolve_columns(table.schema.names, "t", "hyp", None, "system", False, False)}
    (blob,) = BatchScorer(spec).payloads(table)
    payload = pickle.loads(blob)
    assert "error" not in payload, payload.get("error")
    assert payload["facts"] == {"comet": {"prec": "fp32"}}
