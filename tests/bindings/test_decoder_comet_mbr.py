"""MBR with COMET as the utility (``decoder.mbr(metric="comet")``, ``mtscore mbr -m comet``) on the golden
tiny models of tests/golden/comet: the utility matrix equals :meth:`CometScorer.score` run on every
(hypothesis, pseudo-reference, source) triple; the pick is the argmax of ``matrix @ p`` computed by hand
(uniform, log-probabilities, ties to the first); reference aggregation equals the head on the mean
embedding; the command line end to end; the errors for referenceless and unified (kiwi) models."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from mtscore import decoder
from mtscore.engine.comet.head import comet_features, head_scores
from mtscore.engine.comet.mbr import CometMBRError, comet_utility_matrix
from mtscore.engine.comet.scorer import CometScorer, load_comet
from tests.cli_run import run_cli

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "comet"
ENCODER = GOLDEN / "encoder"
_SCORERS: dict[str, CometScorer] = {}


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    if not (ENCODER / "tokenizer.json").is_file():
        pytest.skip(f"{ENCODER}: absent (tests/oracles/comet_oracle.py writes it)")
    return tmp_path_factory.mktemp("comet-cache")


def _scorer(name: str, cache: Path) -> CometScorer:
    if name not in _SCORERS:
        _SCORERS[name] = load_comet(GOLDEN / "models" / name, encoder=ENCODER, cache_dir=cache, threads=1)
    return _SCORERS[name]


def _rows() -> list[dict[str, str]]:
    return [json.loads(x) for x in (GOLDEN / "inputs.jsonl").read_text(encoding="utf-8").splitlines()[:12] if x]


def _group(k: int = 0) -> tuple[list[str], str]:
    """Six samples for the source of row k: its translation and reference, four other rows' translations,
    and a duplicate."""
    rows = _rows()
    samples = [rows[k]["mt"], rows[k]["ref"], *(rows[(k + d) % len(rows)]["mt"] for d in (1, 2, 3)), rows[k]["mt"]]
    return samples, rows[k]["src"]


def _explicit(scorer: CometScorer, samples: list[str], source: str) -> np.ndarray:
    n = len(samples)
    return np.array([[scorer.score([samples[i]], sources=[source], references=[samples[j]])[0] for j in range(n)]
                     for i in range(n)])


@pytest.mark.parametrize("model", ["regression-sparsemax", "regression-softmax-norm"])
def test_matrix_equals_score_on_every_triple(model, cache):
    sc = _scorer(model, cache)
    samples, src = _group(0)
    want = _explicit(sc, samples, src)
    res = decoder.mbr(samples, metric="comet", comet_model=sc, source=src)
    assert res.matrix is not None
    assert res.matrix.dtype == np.float64
    assert res.matrix.shape == (6, 6)
    np.testing.assert_allclose(res.matrix, want, rtol=0, atol=1e-6)
    assert np.ptp(want) > 1e-3  # the pairs differ: a matrix of one value could not tell them apart
    np.testing.assert_array_equal(res.matrix[5], res.matrix[0])  # the duplicate: same row and column
    np.testing.assert_array_equal(res.matrix[:, 5], res.matrix[:, 0])
    # the engine function, smaller blocks than one row: the same numbers
    np.testing.assert_allclose(comet_utility_matrix(sc, samples, src, block_rows=1), want, rtol=0, atol=1e-6)


def test_pick_is_argmax_by_hand_uniform_logprobs_and_ties(cache):
    sc = _scorer("regression-sparsemax", cache)
    samples, src = _group(1)
    u = _explicit(sc, samples, src)
    res = decoder.mbr(samples, metric="comet", comet_model=sc, source=src)
    eu = u.mean(axis=1)  # uniform p, diagonal included
    np.testing.assert_allclose(res.expected_utility, eu, rtol=0, atol=1e-6)
    assert res.index == int(np.argmax(eu))
    assert res.sample == samples[res.index]
    lp = np.array([-0.5, -3.0, -1.0, -0.2, -4.0, -2.0])
    p = np.exp(lp) / np.exp(lp).sum()
    res = decoder.mbr(samples, metric="comet", comet_model=sc, source=src, log_probs=lp)
    np.testing.assert_allclose(res.probabilities, p, rtol=1e-12)
    np.testing.assert_allclose(res.expected_utility, u @ p, rtol=0, atol=1e-6)
    assert res.index == int(np.argmax(u @ p))
    # ties go to the first: the best sample twice, behind a worse one
    best, worst = samples[int(np.argmax(eu))], samples[int(np.argmin(eu))]
    tied = decoder.mbr([worst, best, best], metric=sc, source=src)
    assert tied.expected_utility[1] == tied.expected_utility[2]
    assert tied.index == 1


def test_aggregate_is_the_head_on_the_mean_embedding(cache):
    sc = _scorer("regression-sparsemax", cache)
    samples, src = _group(2)
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 0.5])
    p = w / w.sum()
    res = decoder.mbr(samples, metric="comet", comet_model=sc, source=src, weights=w, utility="aggregate")
    emb = sc.embed(samples)
    mean = (p @ emb.astype(np.float64)).astype(np.float32)
    s = sc.embed([src])
    feats = comet_features(sc.spec, emb, np.repeat(s, len(samples), axis=0), np.repeat(mean[None], len(samples), 0))
    want = head_scores(sc.spec, feats).astype(np.float64)
    assert res.matrix is None
    np.testing.assert_allclose(res.expected_utility, want, rtol=0, atol=1e-6)
    assert res.index == int(np.argmax(want))
    pairwise_pick = decoder.mbr(samples, metric=sc, source=src, weights=w)
    assert not np.allclose(pairwise_pick.expected_utility, res.expected_utility, atol=1e-6)  # another utility


@pytest.mark.parametrize(("model", "cid"), [("unified-kiwi", "unified_metric"),
                                            ("referenceless-cls", "referenceless_regression_metric")])
def test_referenceless_and_unified_models_are_refused(model, cid, cache):
    sc = _scorer(model, cache)
    samples, src = _group(0)
    with pytest.raises(CometMBRError, match=f"{model}: a {cid} model cannot be an MBR utility"):
        decoder.mbr(samples, metric="comet", comet_model=sc, source=src)
    with pytest.raises(ValueError, match=f"a {cid} model cannot be an MBR utility"):
        decoder.mbr(samples, metric=sc, source=src, utility="aggregate")


def test_argument_errors(cache):
    sc = _scorer("regression-sparsemax", cache)
    samples, src = _group(0)
    with pytest.raises(ValueError, match="needs source="):
        decoder.mbr(samples, metric="comet", comet_model=sc)
    with pytest.raises(ValueError, match="metric='comet' needs comet_model"):
        decoder.mbr(samples, metric="comet", source=src)
    with pytest.raises(ValueError, match="comet_model is only read by metric='comet'"):
        decoder.mbr(samples, metric="chrf", comet_model=sc)
    with pytest.raises(ValueError, match="source is only read by metric='comet'"):
        decoder.mbr(samples, metric="chrf", source=src)
    with pytest.raises(ValueError, match="already loaded"):
        decoder.mbr(samples, metric="comet", comet_model=sc, source=src, precision="fp16")
    # a path is loaded here, with the load options
    res = decoder.mbr(samples[:3], metric="comet", comet_model=GOLDEN / "models" / "regression-sparsemax",
                      source=src, encoder=ENCODER, cache_dir=cache)
    np.testing.assert_allclose(res.matrix, _explicit(sc, samples[:3], src), rtol=0, atol=1e-6)


def test_cli_end_to_end(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.setenv("MTSCORE_CACHE", str(cache))
    sc = _scorer("regression-sparsemax", cache)
    (s0, src0), (s1, src1) = _group(0), _group(3)
    lp1 = [-1.0, -0.5, -2.0, -0.1, -3.0, -1.5]
    (tmp_path / "g.jsonl").write_text(json.dumps(s0) + "\n" + json.dumps({"samples": s1, "log_probs": lp1}) + "\n",
                                      encoding="utf-8")
    (tmp_path / "src.txt").write_text(src0 + "\n" + src1 + "\n", encoding="utf-8")
    base = ["mbr", str(tmp_path / "g.jsonl"), "-m", "comet", "--comet-model", str(GOLDEN / "models" / "regression-sparsemax"),
            "--comet-encoder", str(ENCODER), "--source", str(tmp_path / "src.txt")]
    rc, out, err = run_cli([*base, "-f", "jsonl"], capsys)
    assert (rc, err) == (0, "")
    rows = [json.loads(x) for x in out.splitlines()]
    for row, (samples, src, lp) in zip(rows, [(s0, src0, None), (s1, src1, lp1)]):
        want = _explicit(sc, samples, src)
        p = np.full(6, 1 / 6) if lp is None else np.exp(lp) / np.exp(lp).sum()
        np.testing.assert_allclose(row["expected_utility"], want @ p, rtol=0, atol=1e-6)
        assert row["index"] == int(np.argmax(want @ p))
        assert row["sample"] == samples[row["index"]]
    rc, out, _ = run_cli([*base, "--utility", "aggregate", "-f", "jsonl"], capsys)
    agg = [json.loads(x) for x in out.splitlines()]
    assert rc == 0
    for row, (samples, src, lp) in zip(agg, [(s0, src0, None), (s1, src1, lp1)]):
        want = decoder.mbr(samples, metric=sc, source=src, log_probs=lp, utility="aggregate")
        assert row["expected_utility"] == want.expected_utility.tolist()
        assert row["index"] == want.index
    rc, out, _ = run_cli(base, capsys)
    assert rc == 0
    assert out.splitlines() == [r["sample"] for r in rows]


def test_cli_errors(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.setenv("MTSCORE_CACHE", str(cache))
    samples, src = _group(0)
    (tmp_path / "g.jsonl").write_text(json.dumps(samples) + "\n", encoding="utf-8")
    (tmp_path / "src.txt").write_text(src + "\n", encoding="utf-8")
    (tmp_path / "src2.txt").write_text(src + "\n" + src + "\n", encoding="utf-8")
    inp = str(tmp_path / "g.jsonl")
    model = ["--comet-model", str(GOLDEN / "models" / "unified-kiwi"), "--comet-encoder", str(ENCODER)]
    cases = [
        ([*model, "--source", str(tmp_path / "src.txt")],
         "--comet-model unified-kiwi: a unified_metric model cannot be an MBR utility"),
        (model, "-m comet: --source FILE is required"),
        (["--source", str(tmp_path / "src.txt")], "-m comet: --comet-model NAME|DIR is required"),
        ([*model, "--source", str(tmp_path / "src2.txt")], f"src2.txt: 2 lines, but {inp} has 1 groups"),
        ([*model, "--source", str(tmp_path / "src.txt"), "-O", "colour=1"],
         "-O colour: not a COMET load option (one of precision, batch_tokens"),
        # the model's own errors name the option that chose it, as -m comet does
        (["--comet-model", str(tmp_path), "--source", str(tmp_path / "src.txt")],
         f"--comet-model {tmp_path}: {tmp_path}"),
    ]
    for extra, msg in cases:
        rc, out, err = run_cli(["mbr", inp, "-m", "comet", *extra], capsys)
        assert (rc, out) == (1, ""), extra
        assert msg in err, (extra, err)
        assert err.count("\n") == 1
    rc, _, err = run_cli(["mbr", inp, "-m", "chrf", "--source", str(tmp_path / "src.txt")], capsys)
    assert rc == 1
    assert "--source: only read with -m comet, not -m chrf" in err
