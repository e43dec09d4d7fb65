"""mtscore.report / mtscore report beyond the draft (issue P19): metrics whose corpus score is
the mean of segment scores (registry ``resamples=False``, as BERTScore), the length buckets'
``buckets=`` / ``--buckets``, ``--frequencies`` and ``score-table --report``."""
from __future__ import annotations

import numpy as np
import pytest

import mtscore
from mtscore.engine.metrics.base import Metric, OwnSignature, Score
from mtscore.engine.metrics.registry import unregister_metric
from tests.bindings.test_report_html import N_BS, REFS, SRC, SYSTEMS, Doc


class ToyMean(Metric):
    """Toy mean-of-segments metric: per segment 100 x the share of hypothesis words found in
    the first reference (float); statistics ``[score, 1]``, corpus score = their mean."""

    def prepare(self, refs, rows=None):
        streams = self._coerce_refs(refs)
        self.num_refs = len(streams)
        return [set(r.split()) for r in streams[0]]

    def stats(self, hyps, prepared) -> np.ndarray:
        hyps = self._coerce_hyps(hyps)
        out = np.ones((len(hyps), 2), dtype=np.float64)
        for i, (h, ref) in enumerate(zip(hyps, prepared)):
            w = h.split()
            out[i, 0] = 100.0 * sum(x in ref for x in w) / len(w) if w else 0.0
        return out

    def compute_score_from_stats(self, stats) -> Score:
        return Score("ToyMean", float(stats[0]) / float(stats[1]) if stats[1] else 0.0)

    def get_signature(self) -> OwnSignature:
        return OwnSignature({"num_refs": self.num_refs})


@pytest.fixture
def toymean():
    spec = mtscore.register_metric(mtscore.MetricSpec("toymean", __name__, "ToyMean", aggregate="mean",
                                                       resamples=False, cli=False))
    yield spec
    unregister_metric("toymean")


def _sentence(name: str) -> dict[str, np.ndarray]:
    res = mtscore.score(SYSTEMS, [REFS], metrics=[name])
    n = len(REFS)
    return {s: res.sentence_scores[name].reshape(len(SYSTEMS), n)[i] for i, s in enumerate(SYSTEMS)}


def _check_mean_metric(text: str, name: str, col: int) -> None:
    """Score table, CIs and the p-value matrix of metric ``name`` (column ``col`` of the score
    table) equal mean / compare_segment_scores of its sentence scores."""
    seg = _sentence(name)
    cmp = mtscore.compare_segment_scores(seg, test="bs", n=N_BS, seed=12345, all_pairs=True, name=name)
    doc = Doc(text)
    (tab,) = doc.table(id="score-table")
    for s, r in enumerate(tab["rows"]):
        assert float(r[1 + 3 * col][1]["data-v"]) == pytest.approx(float(np.mean(seg[r[0][2]])), abs=1e-9)
        assert float(r[1 + 3 * col + 1][1]["data-v"]) == float(cmp.results[name][s].ci)
    mat = [t for t in doc.table(**{"class": "sigmatrix"})][col]
    for a, r in enumerate(mat["rows"]):
        for b, c in enumerate(r[1:]):
            if a != b:
                assert float(c[1]["data-v"]) == cmp.p_values[name][a, b]


def test_mean_of_segments_metric(toymean):
    text = mtscore.report(REFS, SYSTEMS, src=SRC, metrics=("bleu", "toymean"), n_bootstrap=N_BS)
    _check_mean_metric(text, "toymean", 1)
    assert "toymean: corpus score = mean of the sentence scores" in text
    assert "toymean: the mean of the bucket" in text
    assert "toymean by source length" in text
    # the resampled metric's numbers did not move
    assert text.count("sigmatrix") >= 2
    one = mtscore.report(REFS, {"A": SYSTEMS["A"]}, metrics=("toymean",), n_bootstrap=N_BS)
    (tab,) = Doc(one).table(id="score-table")
    assert np.isfinite(float(tab["rows"][0][2][1]["data-v"]))


def test_mean_bucket_scores(toymean):
    from mtscore.analysis.compare.buckets import length_buckets
    from mtscore.analysis.compare.tokens import tokenize
    from mtscore.bindings.report.lengths import mean_bucket_scores

    seg = _sentence("toymean")
    sentence = np.stack(list(seg.values()))
    buckets, labels = length_buckets(tokenize(REFS), (3, 7))
    b = mean_bucket_scores(sentence, buckets, labels, N_BS, 12345)
    for j in range(len(labels)):
        rows = np.flatnonzero(buckets == j)
        if len(rows) == 0:
            assert np.isnan(b.scores[:, j]).all()
            continue
        np.testing.assert_allclose(b.scores[:, j], sentence[:, rows].mean(axis=1))
        cmp = mtscore.compare_segment_scores({k: v[rows] for k, v in seg.items()}, test="bs", n=N_BS,
                                             seed=12345)
        np.testing.assert_array_equal(b.ci[:, j], [float(r.ci) for r in cmp.results["score"]])


def test_report_bertscore(model_dir):
    text = mtscore.report(REFS, SYSTEMS, metrics=("chrf", "bertscore"), n_bootstrap=N_BS)
    _check_mean_metric(text, "bertscore", 1)


# ---- buckets= / --buckets ---------------------------------------------------------------------
def _write(tmp_path, name: str, lines) -> str:
    p = tmp_path / name
    p.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return str(p)


def test_buckets_option():
    both = mtscore.report(REFS, SYSTEMS, src=SRC, metrics=("bleu",), n_bootstrap=N_BS)
    assert both == mtscore.report(REFS, SYSTEMS, src=SRC, metrics=("bleu",), n_bootstrap=N_BS,
                                  buckets=("ref", "src"))
    ref_only = mtscore.report(REFS, SYSTEMS, src=SRC, metrics=("bleu",), n_bootstrap=N_BS, buckets=["ref"])
    assert "By reference length" in ref_only
    assert "By source length" not in ref_only
    src_only = mtscore.report(REFS, SYSTEMS, src=SRC, metrics=("bleu",), n_bootstrap=N_BS, buckets=["src"])
    assert "By reference length" not in src_only
    assert "By source length" in src_only
    with pytest.raises(ValueError, match=r"^report: source-length buckets need the source \(src= / --src\)$"):
        mtscore.report(REFS, SYSTEMS, metrics=("bleu",), n_bootstrap=N_BS, buckets=("ref", "src"))
    with pytest.raises(ValueError, match="buckets must name one or more of ref, src"):
        mtscore.report(REFS, SYSTEMS, metrics=("bleu",), n_bootstrap=N_BS, buckets=("tgt",))


def test_cli_buckets(tmp_path, capsys):
    from mtscore.bindings.cli.main import main

    ref = _write(tmp_path, "ref.txt", REFS)
    src = _write(tmp_path, "src.txt", SRC)
    sys_a = _write(tmp_path, "a.txt", SYSTEMS["A"])
    out = tmp_path / "report.html"
    assert main(["report", ref, "-i", sys_a, "-m", "bleu", "--bootstrap", str(N_BS), "--buckets", "ref,src",
                 "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0
    assert "source-length buckets need the source (src= / --src)" in err
    assert not out.exists()
    assert main(["report", ref, "-i", sys_a, "-m", "bleu", "--bootstrap", str(N_BS), "--src", src,
                 "--buckets", "src", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == mtscore.report(
        REFS, {sys_a: SYSTEMS["A"]}, src=SRC, metrics=("bleu",), n_bootstrap=N_BS, buckets=["src"])


# ---- --frequencies FILE -----------------------------------------------------------------------
def test_cli_frequencies(tmp_path, capsys):
    from mtscore.analysis.compare.tokens import tokenize
    from mtscore.analysis.compare.word_accuracy import word_frequencies
    from mtscore.bindings.cli.main import main

    train = ["The cat sat on the mat.", "A dog, a cat & a bird.", "it rained all day long"] * 3
    ref = _write(tmp_path, "ref.txt", REFS)
    sys_a = _write(tmp_path, "a.txt", SYSTEMS["A"])
    freq = _write(tmp_path, "train.txt", train)
    out = tmp_path / "report.html"
    assert main(["report", ref, "-i", sys_a, "-m", "bleu", "--bootstrap", str(N_BS), "--frequencies", freq,
                 "-o", str(out)]) == 0
    expected = mtscore.report(REFS, {sys_a: SYSTEMS["A"]}, metrics=("bleu",), n_bootstrap=N_BS,
                              frequencies=word_frequencies(tokenize(train)))
    assert out.read_text(encoding="utf-8") == expected
    assert "the given frequency table" in expected
    out.unlink()
    missing = str(tmp_path / "no-such-train.txt")
    assert main(["report", ref, "-i", sys_a, "-m", "bleu", "--bootstrap", str(N_BS), "--frequencies",
                 missing, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0
    assert "no-such-train.txt" in err
    assert not out.exists()


# ---- mtscore score-table ... --report FILE ----------------------------------------------------
def _table_file(tmp_path) -> str:
    import json

    p = tmp_path / "scores.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for name, hyps in SYSTEMS.items():
            for h, r in zip(hyps, REFS):
                f.write(json.dumps({"system": name, "hyp": h, "ref": r}) + "\n")
    return str(p)


def test_score_table_report(tmp_path, capsys):
    import json

    from tests.cli_run import run_cli

    table = _table_file(tmp_path)
    out = tmp_path / "report.html"
    rc, stdout, err = run_cli(["score-table", table, "-m", "bleu", "chrf", "ter", "-w", "6", "--paired-bs-n",
                               str(N_BS), "--report", str(out)], capsys)
    assert rc == 0, err
    rows = json.loads(stdout)
    (tab,) = Doc(out.read_text(encoding="utf-8")).table(id="score-table")
    assert [r[0][2] for r in tab["rows"]] == [row["system"] for row in rows] == list(SYSTEMS)
    for r, row in zip(tab["rows"], rows):
        got = [float(c[1]["data-v"]) for c in r if "score" in (c[1].get("class") or "").split()]
        assert [f"{v:.6f}" for v in got] == [row["BLEU"], row["chrF2"], row["TER"]]
    assert out.read_text(encoding="utf-8") == mtscore.report(REFS, SYSTEMS, metrics=("bleu", "chrf", "ter"),
                                                             n_bootstrap=N_BS)


def test_score_table_report_bad_path(tmp_path, capsys, monkeypatch):
    from mtscore.bindings.cli import table as table_cli
    from tests.cli_run import run_cli

    def no_scoring(*a, **k):
        raise AssertionError("scored before checking --report")

    monkeypatch.setattr(table_cli, "_table_locally", no_scoring)
    table = _table_file(tmp_path)
    for bad, why in ((tmp_path / "missing" / "r.html", "its folder does not exist"),
                     (tmp_path, "is a folder")):
        rc, stdout, err = run_cli(["score-table", table, "-m", "bleu", "--report", str(bad)], capsys)
        assert rc == 1
        assert stdout == ""
        assert err.count("\n") == 1
        assert f"--report {bad}: {why}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.jsonl"]
