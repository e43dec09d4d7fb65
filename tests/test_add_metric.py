"""Adding a metric: a toy metric defined in this file, registered with one call
(``register_metric``), works through every face that reads the registry: ``mtscore.score``,
the CLI (``-m toy`` with its generated ``--toy-lowercase`` flag), ``score-table``, ``compare``
(paired bootstrap, Python and CLI), the decoder functions (``sentence_scores``, ``pairwise``)
and the metric contract checks. README "Add a metric" walks through the same steps."""
from __future__ import annotations

import json

import numpy as np
import pytest

import mtscore
from mtscore import decoder
from mtscore.engine.metrics.base import Metric, OwnSignature, Score
from mtscore.engine.metrics.registry import make_metric, unregister_metric
from tests.cli_run import run_cli as _cli


class PreparedToy:
    """The toy's prepared references: each segment's reference word sets."""

    def __init__(self, sets: list[list[set]], num_refs: int):
        self.sets = sets
        self.n = len(sets)
        self.num_refs = num_refs

    def slice(self, a: int, z: int) -> PreparedToy:
        return PreparedToy(self.sets[a:z], self.num_refs)

    def missing(self) -> np.ndarray | None:
        m = np.array([not s for s in self.sets], dtype=bool)
        return m if m.any() else None


class ToyMatch(Metric):
    """Toy metric: the share of hypothesis words found in a reference of the segment, in
    percent. Statistics per segment: ``[words found, hypothesis words]`` (int64, summed)."""

    def __init__(self, lowercase: bool = False, missing_refs: str = "error"):
        super().__init__(missing_refs)
        self.lowercase = lowercase

    def _words(self, text: str) -> list[str]:
        return (text.lower() if self.lowercase else text).split()

    def prepare(self, refs, rows=None) -> PreparedToy:
        streams = self._coerce_refs(refs)
        counts = {sum(r[i] is not None for r in streams) for i in range(len(streams[0]))}
        self.num_refs = counts.pop() if len(counts) == 1 else -1
        return PreparedToy([[set(self._words(r[i])) for r in streams if r[i] is not None]
                            for i in range(len(streams[0]))], self.num_refs)

    def stats(self, hyps, prepared: PreparedToy) -> np.ndarray:
        hyps = self._coerce_hyps(hyps)
        missing = prepared.missing()
        skip = None if missing is None else self._unreferenced(missing)
        out = np.zeros((len(hyps), 2), dtype=np.int64)
        for i, (h, sets) in enumerate(zip(hyps, prepared.sets)):
            words = self._words(h)
            out[i] = [sum(any(w in s for s in sets) for w in words), len(words)]
        if skip is not None:
            out[skip] = 0
        return out

    def compute_score_from_stats(self, stats) -> Score:
        found, total = stats[0], stats[1]
        return Score("ToyMatch", 100.0 * found / total if total else 0.0)

    def get_signature(self) -> OwnSignature:
        sig = OwnSignature({"num_refs": self.num_refs})
        sig.update("case", "lc" if self.lowercase else "mixed")
        return sig


HYPS = ["The cat sat on the mat", "a dog", "it is raining today", "x y z"]
OTHER = ["the cat is on the mat", "a dog barks", "it rains today", "x y"]
REFS = [["the cat is on the mat", "a dog barked", "it is raining", "x"]]


def expected(hyps, refs, lowercase=False) -> float:
    return ToyMatch(lowercase=lowercase).corpus_score(hyps, refs).score


@pytest.fixture
def toy():
    """The toy in the registry for one test (the one call a user makes), then out again."""
    spec = mtscore.register_metric(mtscore.MetricSpec(
        "toy", __name__, "ToyMatch", decoder=True,
        options=mtscore.OptionGroup("toy", [mtscore.Option(
            "--toy-lowercase", kwarg="lowercase", action="store_true", help="lowercase first")])))
    yield spec
    unregister_metric("toy")


@pytest.fixture
def files(tmp_path):
    ref, hyp, other = tmp_path / "ref.txt", tmp_path / "hyp.txt", tmp_path / "other.txt"
    ref.write_text("\n".join(REFS[0]) + "\n")
    hyp.write_text("\n".join(HYPS) + "\n")
    other.write_text("\n".join(OTHER) + "\n")
    return str(ref), str(hyp), str(other)


def test_score_by_name_and_object(toy):
    r = mtscore.score(HYPS, REFS, metrics=["toy", "bleu"])
    assert r.corpus["toy"].score == expected(HYPS, REFS)
    assert r.segments.column_names == ["seg", "toy", "bleu"]
    r = mtscore.score(HYPS, REFS, metrics=[ToyMatch(lowercase=True)])  # the registry names it
    assert r.corpus["toy"].score == expected(HYPS, REFS, lowercase=True)
    assert make_metric("TOY", lowercase=True).lowercase


def test_cli_flag_and_score(toy, files, capsys):
    ref, hyp, _ = files
    with pytest.raises(SystemExit) as exit_:
        _cli(["--help"], capsys)
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--toy-lowercase" in out
    assert "lowercase first" in out
    for extra, lc in (([], False), (["--toy-lowercase"], True)):
        rc, out, err = _cli([ref, "-i", hyp, "-m", "toy", "bleu", *extra], capsys)
        assert rc == 0, err
        scores = {d["name"]: d["score"] for d in json.loads(out)}
        assert scores["ToyMatch"] == round(expected(HYPS, REFS, lc), 1)


def test_cli_paired_bootstrap(toy, files, capsys):
    ref, hyp, other = files
    rc, out, err = _cli([ref, "-i", hyp, other, "-m", "toy", "-pbs", "-pbsn", "50", "-f", "text"], capsys)
    assert rc == 0, err
    assert "ToyMatch" in out


def test_score_table(toy, tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": HYPS, "ref": REFS[0]}), path)
    rc, out, err = _cli(["score-table", str(path), "-m", "toy", "--toy-lowercase"], capsys)
    assert rc == 0, err
    got = json.loads(out)  # one metric: one JSON object
    assert got["name"] == "ToyMatch"
    assert got["score"] == round(expected(HYPS, REFS, True), 1)
    assert got["signature"].startswith("nrefs:1|case:lc|")


def test_compare_paired_bootstrap(toy):
    res = mtscore.compare({"A": HYPS, "B": OTHER}, REFS, metrics=["toy"], n=100)
    assert res.results["ToyMatch"][0].score == expected(HYPS, REFS)
    assert res.results["ToyMatch"][1].p_value is not None


def test_decoder_sentence_scores_and_pairwise(toy):
    got = decoder.sentence_scores(HYPS, REFS[0], metric="toy")
    want = [ToyMatch().corpus_score([h], [[r]]).score for h, r in zip(HYPS, REFS[0])]
    np.testing.assert_array_equal(got, want)
    m = decoder.pairwise(HYPS, OTHER, metric="toy", lowercase=True)
    assert m.shape == (len(HYPS), len(OTHER))
    assert m[0, 0] == ToyMatch(lowercase=True).corpus_score([HYPS[0]], [[OTHER[0]]]).score


def test_check_metric(toy):
    from mtscore.testing import check_metric

    check_metric(make_metric("toy"))
    check_metric(make_metric("toy", lowercase=True))


def test_register_metric_refusals(toy):
    with pytest.raises(ValueError, match="'toy' is already registered"):
        mtscore.register_metric(mtscore.MetricSpec("toy", __name__, "ToyMatch"))
    with pytest.raises(ValueError, match=r"flag\(s\) --toy-lowercase already belong to metric 'toy'"):
        mtscore.register_metric(mtscore.MetricSpec("toy2", __name__, "ToyMatch", options=mtscore.OptionGroup(
            "toy2", [mtscore.Option("--toy-lowercase", kwarg="lowercase", action="store_true")])))
    with pytest.raises(TypeError, match="expected a MetricSpec"):
        mtscore.register_metric("toy3")
    with pytest.raises(ValueError, match=r"unknown metric 'toy4'; choose from bleu, .*, toy$"):
        make_metric("toy4")


# ---- id mode and the CLI's own runner: the registry's ``ids`` and ``report_runner`` --------
class ToyIds(ToyMatch):
    """The toy on token ids (each id one word): its ``stats_of_ids`` gives the statistics its
    ``corpus_stats`` gives of the ids written as text."""

    def stats_of_ids(self, hyps, refs, groups) -> np.ndarray:
        out = np.zeros((len(hyps), 2), dtype=np.int64)
        for i in range(len(hyps)):
            h = hyps.values[hyps.offsets[i]:hyps.offsets[i + 1]]
            found = set()
            for k in range(groups[i], groups[i + 1]):
                found.update(refs.values[refs.offsets[k]:refs.offsets[k + 1]].tolist())
            out[i] = [sum(int(x) in found for x in h), len(h)]
        return out


class ToyRunner:
    """A report runner (``MetricSpec.report_runner``): scored apart, on the collected text."""

    def __init__(self, args, n_systems=None):
        self.args = args
        self.n_systems = n_systems

    def result(self, hyps, refs) -> dict:
        return {"name": "ToyRun", "score": expected(hyps, refs), "signature": "toyrun"}

    def format(self, hyps, refs) -> str:
        return f"ToyRun|toyrun = {self.result(hyps, refs)['score']:.{self.args.width}f} of {self.n_systems}"


ID_HYPS = [[1, 2, 3], [4, 5], [6]]
ID_REFS = [[1, 3, 9], [5], [7, 8]]


def _as_text(ids):
    return [" ".join(map(str, s)) for s in ids]


def test_id_mode_takes_registered_id_metrics():
    spec = mtscore.register_metric(mtscore.MetricSpec("toyids", __name__, "ToyIds", ids=True))
    try:
        got = decoder.id_corpus_score(ID_HYPS, ID_REFS, metric="toyids")
        assert got.score == expected(_as_text(ID_HYPS), [_as_text(ID_REFS)])
        got = decoder.id_corpus_score(ID_HYPS, ID_REFS, metric=ToyIds(lowercase=True))
        assert got.score == expected(_as_text(ID_HYPS), [_as_text(ID_REFS)])
        scores = decoder.id_sentence_scores(ID_HYPS, ID_REFS, metric="toyids")
        np.testing.assert_array_equal(scores, [200 / 3, 50.0, 0.0])
        from mtscore.engine.id_scoring import id_metric

        with pytest.raises(ValueError, match=r"^id mode scores BLEU, TER or ToyIds \(each id is one token\), "
                                             r"got metric='chrf'; chrF and chrF\+\+ work on characters"):
            id_metric("chrf")
        with pytest.raises(TypeError, match=r"^id mode scores BLEU, TER or ToyIds; got ToyMatch$"):
            id_metric(ToyMatch())  # its class's entry (toy) has no ids=True
    finally:
        unregister_metric(spec.name)


def test_id_mode_refuses_metrics_without_ids(toy):
    from mtscore.engine.id_scoring import id_metric

    with pytest.raises(ValueError, match=r"^id mode scores BLEU or TER \(each id is one token\), got metric='toy'"):
        id_metric("toy")  # registered, without ids=True
    spec = mtscore.register_metric(mtscore.MetricSpec("toynoids", __name__, "ToyMatch", ids=True))
    try:  # ids=True but a class with neither a kernel nor stats_of_ids
        with pytest.raises(TypeError, match="ToyMatch is registered with ids=True but has no stats_of_ids"):
            id_metric("toynoids")
    finally:
        unregister_metric(spec.name)


def test_cli_report_runner(files, capsys):
    ref, hyp, other = files
    spec = mtscore.register_metric(mtscore.MetricSpec("toyrun", __name__, "ToyMatch",
                                                      report_runner=f"{__name__}:ToyRunner"))
    try:
        assert spec.separate_runner
        assert spec.load_runner() is ToyRunner
        rc, out, err = _cli([ref, "-i", hyp, "-m", "bleu", "toyrun", "-f", "text", "-w", "2"], capsys)
        assert rc == 0, err
        lines = out.splitlines()
        assert lines[0].startswith("BLEU|")
        assert lines[1].strip() == f"ToyRun|toyrun = {expected(HYPS, REFS):.2f} of 1"  # aligned
        rc, out, err = _cli([ref, "-i", hyp, other, "-m", "toyrun", "-f", "text"], capsys)
        assert rc == 0, err
        assert "ToyRun" in out
        assert f"{expected(OTHER, REFS):.1f}" in out
    finally:
        unregister_metric(spec.name)
    spec = mtscore.register_metric(mtscore.MetricSpec("toyrun", __name__, "ToyMatch",
                                                      report_runner="no_such_module_here:Runner"))
    try:  # its module cannot be imported: one line naming -m (and the extra's install hint, if any)
        rc, out, err = _cli([ref, "-i", hyp, "-m", "toyrun"], capsys)
        assert rc == 1
        assert err == "mtscore: error: -m toyrun: No module named 'no_such_module_here'\n"
    finally:
        unregister_metric(spec.name)
    with pytest.raises(ValueError, match="report_runner must be 'module:Class'"):
        mtscore.MetricSpec("toyrun", __name__, "ToyMatch", report_runner="a.b.Runner")
