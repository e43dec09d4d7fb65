"""``mtscore -m comet`` end to end on the golden models of tests/golden/comet: the printed score
equals unbabel-comet 2.2.7's golden system score, the signature names model, checkpoint hash,
precision, references and multi-ref rule; several systems get a COMET column; the errors are one
line naming the option (--comet-model, --source, a folder without hparams.yaml) and references
given to a referenceless model are a one-line warning."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from cli_run import run_cli

import mtscore

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "comet"
ENCODER = GOLDEN / "encoder"
N = 30


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    g = GOLDEN / "golden.json"
    if not g.is_file() or not (ENCODER / "tokenizer.json").is_file():
        pytest.skip(f"{g}: absent (tests/oracles/comet_oracle.py writes it)")
    d = tmp_path_factory.mktemp("comet-cli")
    rows = [json.loads(line) for line in (GOLDEN / "inputs.jsonl").read_text(encoding="utf-8").splitlines()
            if line][:N]
    out = {"golden": json.loads(g.read_text(encoding="utf-8"))["models"], "dir": d}
    for k in ("src", "mt", "ref"):
        out[k] = d / f"{k}.txt"
        out[k].write_text("".join(r[k] + "\n" for r in rows), encoding="utf-8")
    return out


@pytest.fixture(autouse=True)
def _cache(files, monkeypatch):
    monkeypatch.setenv("MTSCORE_CACHE", str(files["dir"] / "cache"))


def _model(name: str) -> list[str]:
    return ["--comet-model", str(GOLDEN / "models" / name), "--comet-encoder", str(ENCODER)]


def test_score_and_signature_match_the_golden_model(files, capsys):
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), "-m", "comet", "--source",
                            str(files["src"]), "-w", "8", *_model("regression-sparsemax")], capsys)
    assert rc == 0, err
    d = json.loads(out)
    want = float(np.mean(files["golden"]["regression-sparsemax"]["scores"][:N]))
    assert d["name"] == "COMET"
    assert abs(d["score"] - want) < 1e-6
    from mtscore.engine.comet.scorer import load_comet

    scorer = load_comet(GOLDEN / "models" / "regression-sparsemax", encoder=ENCODER)
    sha, enc = scorer.checkpoint_sha256[:12], scorer.files.encoder_sha256()[:12]
    assert d["signature"] == (f"nrefs:1|model:regression-sparsemax|hash:{sha}|enc:{enc}|prec:fp32|multi:mean|"
                              f"version:mtscore-{mtscore.__version__}")
    rc, out, _ = run_cli([str(files["ref"]), "-i", str(files["mt"]), "-m", "comet", "-f", "text", "--source",
                          str(files["src"]), *_model("regression-sparsemax")], capsys)
    assert rc == 0
    assert out == f"COMET|{d['signature']} = {want:.4f}\n"


def test_encoder_option_is_in_the_signature(files, capsys, monkeypatch, tmp_path):
    """--comet-encoder DIR adds enc:<sha256[:12] of its tokenizer files and config.json>; without it
    (hparams.yaml's pretrained_model "encoder" found from the working directory) the signature is
    the one without an enc field, and another encoder folder (a changed tokenizer.json) gets
    another hash and other scores."""
    import hashlib
    import shutil

    monkeypatch.chdir(GOLDEN)  # hparams.yaml: pretrained_model: encoder
    base = [str(files["ref"]), "-i", str(files["mt"]), "-m", "comet", "--source", str(files["src"]), "-w", "8",
            "--comet-model", str(GOLDEN / "models" / "regression-sparsemax")]
    rc, out, err = run_cli(base, capsys)
    assert rc == 0, err
    plain = json.loads(out)
    assert "enc" not in plain
    assert "|enc:" not in plain["signature"]
    rc, out, err = run_cli([*base, "--comet-encoder", str(ENCODER)], capsys)
    assert rc == 0, err
    given = json.loads(out)
    lines = "".join(f"{f} {hashlib.sha256((ENCODER / f).read_bytes()).hexdigest()}\n"
                    for f in ("tokenizer.json", "special_tokens_map.json", "tokenizer_config.json", "config.json"))
    want = hashlib.sha256(lines.encode()).hexdigest()[:12]
    assert given["enc"] == want
    assert given["signature"] == plain["signature"].replace("|prec:", f"|enc:{want}|prec:")
    assert given["score"] == plain["score"]  # the same files as hparams.yaml's encoder
    rc, out, err = run_cli([*base, "--comet-encoder", str(ENCODER), "--short"], capsys)
    assert rc == 0, err
    assert f"|e:{want}|" in json.loads(out)["signature"]
    other = tmp_path / "encoder2"
    shutil.copytree(ENCODER, other)
    tok = json.loads((other / "tokenizer.json").read_text(encoding="utf-8"))
    tok["normalizer"] = {"type": "Lowercase"}  # another tokenizer: other ids, other scores
    (other / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")
    rc, out, err = run_cli([*base, "--comet-encoder", str(other)], capsys)
    assert rc == 0, err
    changed = json.loads(out)
    assert changed["enc"] not in ("", want)
    assert changed["score"] != given["score"]


def test_missing_onnxruntime_is_not_called_bertscore(files, capsys, monkeypatch):
    """The encoder runtime's errors under -m comet name --comet-model, not BERTScore's --model."""
    monkeypatch.setitem(__import__("sys").modules, "onnxruntime", None)  # import onnxruntime fails
    rc, _, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), "-m", "comet", "--source", str(files["src"]),
                          *_model("regression-sparsemax")], capsys)
    assert rc == 1
    assert len(err.strip().splitlines()) == 1, err
    assert f"--comet-model {GOLDEN / 'models' / 'regression-sparsemax'}: " in err
    assert "onnxruntime" in err
    assert "BERTScore" not in err
    assert "--model:" not in err


def test_two_references_max_and_several_systems(files, capsys):
    ref2 = files["dir"] / "ref2.txt"
    ref2.write_text(files["mt"].read_text(encoding="utf-8"), encoding="utf-8")  # the hypothesis itself
    base = [str(files["ref"]), str(ref2), "-m", "comet", "--source", str(files["src"]), "-w", "8",
            *_model("regression-sparsemax")]
    got = {}
    for how in ("mean", "max"):
        rc, out, err = run_cli([*base, "-i", str(files["mt"]), "--comet-multi-ref", how], capsys)
        assert rc == 0, err
        d = json.loads(out)
        assert d["nrefs"] == "2"
        assert d["multi"] == how
        got[how] = d["score"]
    single = []
    for ref in (files["ref"], ref2):
        rc, out, err = run_cli([str(ref), "-i", str(files["mt"]), "-m", "comet", "--source", str(files["src"]),
                                "-w", "8", *_model("regression-sparsemax")], capsys)
        single.append(json.loads(out)["score"])
    assert single[0] != single[1]
    assert abs(got["mean"] - (single[0] + single[1]) / 2) < 2e-8  # the mean of means (8 decimals printed)
    assert got["max"] >= max(single) - 1e-8
    assert got["max"] > got["mean"]
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), str(files["src"]), "-m", "bleu", "comet",
                            "--source", str(files["src"]), "-f", "text", "--progress",
                            *_model("regression-sparsemax")], capsys)
    assert rc == 0, err
    want = float(np.mean(files["golden"]["regression-sparsemax"]["scores"][:N]))
    assert f" {want:.4f} " in out  # the COMET column keeps 4 decimals (the table's -w 1 would print 0.1)
    assert "COMET 1/2" in err  # the progress bar, labelled per system as BERTScore's
    assert "COMET 2/2" in err
    assert "COMET" in out
    assert "BLEU" in out
    assert len(out.strip().splitlines()) >= 4


def test_systems_share_one_scorer_and_its_embeddings(files, capsys, monkeypatch):
    """``-i sysA sysB -m comet``: one COMET metric (one scorer) for both systems (COMETRunner), so
    the second system's sources and references come from the embedding memo: here system B is the
    source file, every text of which system A's call encoded."""
    from mtscore.engine.comet.scorer import CometScorer

    seen: list[int] = []
    real = CometScorer.embed_ids

    def embed_ids(self, ids, progress=None):
        seen.append(len(ids))
        return real(self, ids, progress)

    monkeypatch.setattr(CometScorer, "embed_ids", embed_ids)
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), str(files["src"]), "-m", "comet",
                            "--source", str(files["src"]), *_model("regression-sparsemax")], capsys)
    assert rc == 0, err
    texts = {k: set(files[k].read_text(encoding="utf-8").splitlines()) for k in ("mt", "src", "ref")}
    assert seen == [len(texts["mt"] | texts["src"] | texts["ref"])]  # system B encoded nothing
    rows = json.loads(out)
    assert [r["system"] for r in rows] == [str(files["mt"]), str(files["src"])]
    want = float(np.mean(files["golden"]["regression-sparsemax"]["scores"][:N]))
    assert abs(float(rows[0]["COMET"]) - want) < 5.1e-5  # printed with 4 decimals


def test_referenceless_model_warns_about_references(files, capsys):
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), "-m", "comet", "--source",
                            str(files["src"]), "-w", "8", *_model("referenceless-cls")], capsys)
    assert rc == 0
    assert "mtscore: warning: references: ignored; referenceless-cls" in err
    want = float(np.mean(files["golden"]["referenceless-cls"]["scores"][:N]))
    assert abs(json.loads(out)["score"] - want) < 1e-6


@pytest.mark.parametrize(("argv", "message"), [
    ([], "-m comet: no model; give one with --comet-model"),
    (["--comet-model", str(GOLDEN / "models" / "regression-sparsemax"), "--comet-encoder", str(ENCODER)],
     "-m comet: no sources; give the source segments with --source FILE"),
    (["--comet-model", str(GOLDEN), "--source", "SRC"], "--comet-model"),
    # a source file with one line more than the references: refused, not shifted
    ([*_model("regression-sparsemax"), "--source", "SRC+1"],
     f"COMET: {N} reference segments but {N + 1} source segments (--source FILE"),
])
def test_errors_are_one_line_naming_the_option(files, capsys, argv, message):
    longer = files["dir"] / "src-plus-one.txt"
    longer.write_text("a header line\n" + files["src"].read_text(encoding="utf-8"), encoding="utf-8")
    argv = [str(files["src"]) if a == "SRC" else str(longer) if a == "SRC+1" else a for a in argv]
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), "-m", "comet", *argv], capsys)
    assert rc == 1
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mtscore: error: ")
    assert message in lines[0]


def test_paired_bootstrap_between_two_systems(files, capsys):
    """-m comet --paired-bs: the paired bootstrap of the mean segment score (compare_segment_scores
    with the same seed gives the same numbers); COMET with other metrics is refused."""
    model = _model("regression-sparsemax")
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), str(files["src"]), "-m", "comet",
                            "--paired-bs", "--paired-bs-n", "200", "--source", str(files["src"]), *model], capsys)
    assert rc == 0, err
    rows = json.loads(out)
    assert [r["system"] for r in rows] == [f"Baseline: {files['mt']}", str(files["src"])]
    want = float(np.mean(files["golden"]["regression-sparsemax"]["scores"][:N]))
    assert abs(rows[0]["COMET"]["score"] - want) < 1e-6
    from mtscore.engine.comet.metric import COMET
    from mtscore.engine.comet.scorer import load_comet

    src = files["src"].read_text(encoding="utf-8").splitlines()
    ref = files["ref"].read_text(encoding="utf-8").splitlines()
    m = COMET(scorer=load_comet(GOLDEN / "models" / "regression-sparsemax", encoder=ENCODER), sources=src)
    seg = {k: m.scores_from_stats(m.corpus_stats(files[k].read_text(encoding="utf-8").splitlines(), [ref]))
           for k in ("mt", "src")}
    res = mtscore.compare_segment_scores(seg, test="bs", n=200, seed=None, name="COMET")
    assert rows[1]["COMET"]["p_value"] == pytest.approx(res.results["COMET"][1].p_value, abs=1e-12)
    assert rows[1]["COMET"]["ci"] == pytest.approx(float(res.results["COMET"][1].ci), abs=1e-9)
    for extra, message in ((["--paired-bs", "-m", "comet", "bleu"], "-m comet"),
                           (["--paired-ar", "-m", "comet", "bleu"], "-m comet")):
        rc, _, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), str(files["src"]), "-m", "comet", *extra,
                              "--source", str(files["src"]), *model], capsys)
        assert rc == 1
        assert "compare_segment_scores" in err
        assert message in err


def test_score_table_takes_the_source_column(files, capsys):
    """score-table -m comet: the sources from the table's src column (--src-column), each test set
    against its own rows; system A's scores are the golden means of its rows."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    src = files["src"].read_text(encoding="utf-8").splitlines()
    mt = files["mt"].read_text(encoding="utf-8").splitlines()
    ref = files["ref"].read_text(encoding="utf-8").splitlines()
    cut = 12
    table = pa.table({"system": ["A"] * N + ["B"] * N, "source": src * 2, "hyp": mt + src, "ref": ref * 2,
                      "test_set": (["t1"] * cut + ["t2"] * (N - cut)) * 2})
    path = files["dir"] / "table.parquet"
    pq.write_table(table, path)
    model = _model("regression-sparsemax")
    rc, out, err = run_cli(["score-table", str(path), "-m", "comet", "--src-column", "source", "-f", "json",
                            "-w", "8", *model], capsys)
    assert rc == 0, err
    d = json.loads(out)
    g = files["golden"]["regression-sparsemax"]["scores"]
    assert abs(float(d["t1"][0]["COMET"]) - float(np.mean(g[:cut]))) < 2e-8
    assert abs(float(d["t2"][0]["COMET"]) - float(np.mean(g[cut:N]))) < 2e-8
    assert d["t1"][1]["COMET"] != d["t1"][0]["COMET"]
    rc, out, err = run_cli(["score-table", str(path), "-m", "comet", *model], capsys)
    assert rc == 1
    assert len(err.strip().splitlines()) == 1
    assert "--src-column" in err


def test_ray_without_a_model_is_refused_before_ray_starts(files, capsys):
    """score-table --ray -m comet (COMET on Ray: tests/bindings/test_ray_comet.py) names the
    missing --comet-model before any cluster starts."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = files["dir"] / "small.parquet"
    pq.write_table(pa.table({"src": ["a"], "hyp": ["b"], "ref": ["c"]}), path)
    rc, _, err = run_cli(["score-table", str(path), "-m", "comet", "--ray", "local"], capsys)
    assert rc == 1
    assert "-m comet: no model; give one with --comet-model" in err
    assert len(err.strip().splitlines()) == 1


def test_confidence_is_the_bootstrap_of_the_segment_scores(files, capsys):
    """-m comet --confidence: the mean and 95% CI of compare_segment_scores' bootstrap of the
    system's segment scores (same resamples and seed), the test fields in the signature."""
    model = _model("regression-sparsemax")
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), "-m", "comet", "--confidence",
                            "--confidence-n", "300", "--seed", "7", "-w", "8", "--source", str(files["src"]),
                            *model], capsys)
    assert rc == 0, err
    d = json.loads(out)
    seg = files["golden"]["regression-sparsemax"]["scores"][:N]
    res = mtscore.compare_segment_scores({"s": seg}, test="bs", n=300, seed=7, name="COMET")
    r = res.results["COMET"][0]
    assert abs(d["confidence_mean"] - r.mean) < 1e-6
    assert abs(d["confidence_var"] - r.ci) < 1e-6
    assert r.ci > 0
    assert d["signature"].endswith("|test:bs|n:300|seed:7")
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), "-m", "comet", "--confidence",
                            "-f", "text", "--source", str(files["src"]), *model], capsys)
    assert rc == 0, err
    assert out.startswith("COMET|nrefs:1|model:regression-sparsemax|")
    assert "|test:bs|n:1000|seed:12345 = " in out
    assert " (μ = " in out


def test_paired_ar_between_two_systems(files, capsys):
    """-m comet --paired-ar: approximate randomisation of the mean segment score, the p-value of
    compare_stats' AR on COMET's own [segment score, 1] statistics (same trials and seed)."""
    model = _model("regression-sparsemax")
    rc, out, err = run_cli([str(files["ref"]), "-i", str(files["mt"]), str(files["src"]), "-m", "comet",
                            "--paired-ar", "--paired-ar-n", "300", "--seed", "3", "--source", str(files["src"]),
                            *model], capsys)
    assert rc == 0, err
    rows = json.loads(out)
    from mtscore.engine.comet.metric import COMET
    from mtscore.engine.comet.scorer import load_comet

    src = files["src"].read_text(encoding="utf-8").splitlines()
    ref = files["ref"].read_text(encoding="utf-8").splitlines()
    m = COMET(scorer=load_comet(GOLDEN / "models" / "regression-sparsemax", encoder=ENCODER), sources=src)
    stats = [[m.corpus_stats(files[k].read_text(encoding="utf-8").splitlines(), [ref])] for k in ("mt", "src")]
    res = mtscore.compare_stats(["mt", "src"], [m], stats, test="ar", n=300, seed=3)
    (want,) = res.results.values()
    assert rows[1]["COMET"]["p_value"] == pytest.approx(want[1].p_value, abs=1e-12)
    seg = {k: m.scores_from_stats(st[0]) for k, st in zip(("mt", "src"), stats)}
    cs = mtscore.compare_segment_scores(seg, test="ar", n=300, seed=3, name="COMET")
    assert cs.results["COMET"][1].p_value == want[1].p_value  # one AR: compare_stats' on [score, 1]
    assert rows[1]["COMET"]["p_value"] == cs.results["COMET"][1].p_value
    assert 0 < rows[1]["COMET"]["p_value"] <= 1
    assert rows[0]["COMET"]["p_value"] is None
    assert abs(rows[1]["COMET"]["score"] - float(m.scores_from_stats(stats[1][0]).mean())) < 1e-6


def _table(files, path, hyp_b=None, src_b=None):
    """A two-system table over the first N segments: A = the golden translations, B = ``hyp_b``
    (default: the sources as a poor translation), B's sources ``src_b`` (default: the same)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    src = files["src"].read_text(encoding="utf-8").splitlines()
    mt = files["mt"].read_text(encoding="utf-8").splitlines()
    ref = files["ref"].read_text(encoding="utf-8").splitlines()
    pq.write_table(pa.table({"system": ["A"] * N + ["B"] * N, "src": src + (src_b or src),
                             "hyp": mt + (hyp_b or src), "ref": ref * 2}), path)
    return src, mt, ref


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_score_table_paired_tests_on_the_segment_scores(files, capsys, test):
    """score-table -m comet --paired-bs / --paired-ar: the p-value (and bootstrap mean / CI) of
    compare_segment_scores on the two systems' segment scores, the same seed and resamples."""
    path = files["dir"] / f"paired-{test}.parquet"
    src, mt, ref = _table(files, path)
    flag, nflag, n = ("--paired-bs", "--paired-bs-n", 200) if test == "bs" else ("--paired-ar", "--paired-ar-n", 300)
    rc, out, err = run_cli(["score-table", str(path), "-m", "comet", flag, nflag, str(n), "--seed", "5",
                            *_model("regression-sparsemax")], capsys)
    assert rc == 0, err
    rows = json.loads(out)
    assert [r["system"] for r in rows] == ["Baseline: A", "B"]
    from mtscore.engine.comet.metric import COMET
    from mtscore.engine.comet.scorer import load_comet
    from mtscore.engine.significance import compare_segment_scores

    m = COMET(scorer=load_comet(GOLDEN / "models" / "regression-sparsemax", encoder=ENCODER), sources=src)
    seg = {k: m.scores_from_stats(m.corpus_stats(h, [ref])) for k, h in (("A", mt), ("B", src))}
    want = compare_segment_scores(seg, test=test, n=n, seed=5, name="COMET").results["COMET"]
    g = files["golden"]["regression-sparsemax"]["scores"][:N]
    assert abs(rows[0]["COMET"]["score"] - float(np.mean(g))) < 1e-6
    for row, w in zip(rows, want):
        assert row["COMET"]["score"] == pytest.approx(w.score, abs=1e-12)
        if test == "bs":
            assert row["COMET"]["mean"] == pytest.approx(float(w.mean), abs=1e-12)
            assert row["COMET"]["ci"] == pytest.approx(float(w.ci), abs=1e-12)
            assert w.ci > 0
    assert rows[0]["COMET"]["p_value"] is None
    assert rows[1]["COMET"]["p_value"] == pytest.approx(want[1].p_value, abs=1e-12)
    assert 0 < rows[1]["COMET"]["p_value"] < 1


def test_score_table_refuses_systems_with_other_sources(files, capsys):
    """score-table -m comet: a system whose src column differs from the first system's is refused
    in one line naming the system and the first table row that differs (1-based)."""
    path = files["dir"] / "other-sources.parquet"
    src = files["src"].read_text(encoding="utf-8").splitlines()
    other = list(src)
    other[7] = "a different source sentence"
    other[9] = "another one"
    _table(files, path, src_b=other)
    rc, _, err = run_cli(["score-table", str(path), "-m", "comet", *_model("regression-sparsemax")], capsys)
    assert rc == 1
    assert len(err.strip().splitlines()) == 1, err
    assert "--src-column" in err
    assert f"system 'B' has another source than system 'A' at row {N + 8} " in err
    assert "'a different source sentence'" in err


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_paired_leaves_out_segments_without_a_score(test, monkeypatch):
    """--paired-bs / --paired-ar on segment scores with NaN rows (segments whose references were
    all missing, --missing-refs skip; the Ray runner gives them): the test runs on the scored
    segments only, as compare_segment_scores on those rows; with none scored, one CLI error."""
    import argparse

    from mtscore.bindings.cli.comet import COMETRunner
    from mtscore.bindings.cli.inputs import CLIError
    from mtscore.engine.significance import compare_segment_scores

    rng = np.random.default_rng(3)
    seg = {"A": rng.random(40), "B": rng.random(40) * 0.9}
    for v in seg.values():
        v[[4, 17, 39]] = np.nan
    args = argparse.Namespace(paired_ar=test == "ar", paired_ar_n=300, paired_bs_n=200, seed=5, format="json",
                              width=1, short=False, no_color=True, comet_model="unused: result is replaced")
    runner = COMETRunner(args)
    monkeypatch.setattr(runner, "result", lambda hyps, refs: {"signature": "sig", "segments": seg[hyps]})
    rows = json.loads(runner.paired({"A": "A", "B": "B"}, []))
    keep = np.ones(40, bool)
    keep[[4, 17, 39]] = False
    want = compare_segment_scores({k: v[keep] for k, v in seg.items()}, test=test, n=200 if test == "bs" else 300,
                                  seed=5, name="COMET").results["COMET"]
    assert [r["COMET"]["score"] for r in rows] == pytest.approx([w.score for w in want], abs=1e-12)
    assert rows[1]["COMET"]["p_value"] == pytest.approx(want[1].p_value, abs=1e-12)
    assert 0 < rows[1]["COMET"]["p_value"] <= 1
    nan = {k: np.full(5, np.nan) for k in seg}
    monkeypatch.setattr(runner, "result", lambda hyps, refs: {"signature": "sig", "segments": nan[hyps]})
    with pytest.raises(CLIError, match=f"--paired-{test}: no segment has a COMET score"):
        runner.paired({"A": "A", "B": "B"}, [])


def test_score_table_missing_refs(files, capsys):
    """score-table -m comet with a null reference: an error naming --missing-refs skip; with it,
    the segment is left out and the score is the mean of the others' golden scores."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    src = files["src"].read_text(encoding="utf-8").splitlines()[:12]
    mt = files["mt"].read_text(encoding="utf-8").splitlines()[:12]
    ref: list[str | None] = list(files["ref"].read_text(encoding="utf-8").splitlines()[:12])
    ref[3] = None
    path = files["dir"] / "missing-ref.parquet"
    pq.write_table(pa.table({"system": ["A"] * 12, "src": src, "hyp": mt, "ref": ref}), path)
    argv = ["score-table", str(path), "-m", "comet", *_model("regression-sparsemax")]
    rc, out, err = run_cli(argv, capsys)
    assert (rc, out) == (1, "")
    assert "segment 3 (0-based) has no reference" in err
    assert "pass --missing-refs skip" in err
    assert err.count("\n") == 1
    rc, out, err = run_cli([*argv, "--missing-refs", "skip", "-w", "8"], capsys)
    assert rc == 0, err
    g = files["golden"]["regression-sparsemax"]["scores"][:12]
    want = float(np.mean([x for i, x in enumerate(g) if i != 3]))
    assert json.loads(out)["score"] == pytest.approx(want, abs=1e-7)
