"""Campaign round trip: build HITs, simulate raters with known quality, write Mechanical Turk
batch results, read them back with :func:`mtscore.analysis.crowd.read_mturk_batches`, run the
DA pipeline (:func:`mtscore.analysis.crowd.scores.da_pipeline`: red flags, worker QC,
z-scores, segment and system scores) and recover the simulated quality."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm, pearsonr

from mtscore.analysis import human
from mtscore.analysis.crowd.batches import read_mturk_batches
from mtscore.analysis.crowd.hits import build_campaign, hit_problems, read_batch_input
from mtscore.analysis.crowd.scores import da_pipeline
from mtscore.analysis.crowd.simulate import (
    Rater,
    batch_results_csv,
    rater_pool,
    simulate,
    write_batch_results,
)
from mtscore.analysis.errors import AnalysisInputError
from mtscore.bindings.cli.analysis import main
from tests.conftest import require

QUALITY = {"A": 76.0, "B": 71.0, "C": 64.0, "D": 57.0, "E": 45.0}


def _campaign(n_seg: int = 140, seed: int = 3):
    outs = {s: [f"{s} output {i} " + " ".join(f"w{j}" for j in range(3 + i % 25)) for i in range(n_seg)]
            for s in QUALITY}
    refs = [f"the reference line {i} " + " ".join(f"r{j}" for j in range(2 + i % 12)) for i in range(n_seg)]
    return build_campaign(outs, refs, seed=seed)


@pytest.fixture(scope="module")
def roundtrip(tmp_path_factory):
    camp = _campaign()
    raters = rater_pool(good=12, random=4, constant=1, seed=3)
    sim = simulate(camp, QUALITY, raters, assignments=5, seed=3)
    folder = tmp_path_factory.mktemp("batches")
    # two batch files, as a campaign published in two rounds
    half = len(sim.assignments) // 2
    for k, part in enumerate((sim.assignments[:half], sim.assignments[half:])):
        sub = type(sim)(part, sim.raters, sim.truth, sim.system_truth)
        write_batch_results(camp, sub, folder / f"Batch_{k + 1}_batch_results.csv", "en", "es", batch_id=k + 1, seed=k)
    return camp, sim, read_mturk_batches(folder)


def test_everything_comes_back_exactly(roundtrip):
    camp, sim, r = roundtrip
    assert len(r) == camp.n_hits * 5 * 100 == 5000
    assert r.skipped == ()
    assert np.array_equal(r.score, np.concatenate([a.scores for a in sim.assignments]).astype(float))
    assert r.worker.tolist() == [a.worker for a in sim.assignments for _ in range(100)]
    assert r.hit_index.tolist() == [a.hit for a in sim.assignments for _ in range(100)]
    items = [it for a in sim.assignments for it in camp.hit(a.hit)]
    assert r.item_type.tolist() == [it.type for it in items]
    assert r.segment.tolist() == [str(it.segment) for it in items]
    assert r.position.tolist() == [it.position for it in items]
    assert r.time.tolist() == [float(a.seconds) for a in sim.assignments for _ in range(100)]
    assert set(r.src_lang.tolist()) == {"en"}
    assert set(r.task.tolist()) == {"ad"}


def test_awkward_system_names_survive_the_files(tmp_path):
    names = {"uedin_nmt": 70.0, "sys.3": 60.0, "Ünïcode-ß": 50.0, "a__b": 40.0, "x_1_SYSTEM": 30.0}
    outs = {s: [f"{s} output {i} w w w" for i in range(30)] for s in names}
    camp = build_campaign(outs, [f"the ref {i} r r" for i in range(30)], seed=2)
    sim = simulate(camp, names, rater_pool(2, seed=2), assignments=1, seed=2)
    write_batch_results(camp, sim, tmp_path / "Batch_1.csv", "en", "de")
    r = read_mturk_batches(tmp_path / "Batch_1.csv")
    items = [it for a in sim.assignments for it in camp.hit(a.hit)]
    assert r.system.tolist() == [it.system for it in items]
    assert set(r.system.tolist()) == set(names)
    assert r.item_type.tolist() == [it.type for it in items]


@pytest.fixture(scope="module")
def da(roundtrip):
    return da_pipeline(roundtrip[2])  # red flags, worker QC, z-scores, segment and system scores


def test_bad_workers_are_flagged(roundtrip, da):
    _, sim, r = roundtrip
    kind = {x.worker: x.kind for x in sim.raters if x.worker in set(r.worker.tolist())}
    good = {w for w in kind if kind[w] == "good"}
    qc = da.qc
    assert set(qc.worker.tolist()) == set(kind)
    assert len(good) >= 10
    assert len(kind) - len(good) >= 4
    passed = {w for w, ok in zip(qc.worker.tolist(), qc.passed.tolist()) if ok}
    p = dict(zip(qc.worker.tolist(), qc.p.tolist()))
    assert good <= passed
    assert max(p[w] for w in good) < 1e-2
    # a random worker passes the 5% test by chance 1 time in 20: here one of five does (p 0.026)
    assert passed - good == {"W0013"}
    assert kind["W0013"] == "random"
    assert 0.02 < p["W0013"] < 0.03
    # the same p-values from the other implementation of the WMT test (human.qc_paired_ttest)
    key = np.char.add(np.char.add(r.hit, "|"), np.char.add(np.char.add(r.system, "|"), r.segment))
    other = human.qc_paired_ttest(r.worker, r.item_type, key, r.score)
    assert np.allclose([p[w] for w in other["worker"].tolist()], other["p"], rtol=1e-12)
    # A4.3 red flags: the fast and the constant workers, nobody else
    ws = da.workers
    flag = {k: {w for w, f in zip(ws.worker.tolist(), getattr(ws, k).tolist()) if f}
            for k in ("flag_time", "flag_seq", "flag_scores", "flag_rej")}
    assert flag["flag_time"] == set(kind) - good                    # so the lucky random worker is caught too
    assert flag["flag_seq"] == {w for w in kind if kind[w] == "constant"}
    assert flag["flag_scores"] >= set(kind) - good
    assert flag["flag_rej"] == set()
    # a good worker can only trip the adequacy rule mean(REF) < 90 (a harsh or compressed
    # scale); the order BAD_REF < SYSTEM < REF always holds for them
    for j, w in enumerate(ws.worker.tolist()):
        if w in good:
            assert ws.mean_bad_ref[j] + 15 < ws.mean_system[j] < ws.mean_ref[j] - 10
            assert not ws.flag_scores[j] or ws.mean_ref[j] < 90
    assert (da.hits.concurrent == 1).all()                          # one HIT at a time per worker


def test_system_quality_is_recovered(roundtrip, da):
    _, sim, r = roundtrip
    sy = da.systems
    truth = np.array([sim.system_truth[s] for s in sy["system"].tolist()])
    assert (np.diff(truth) < 0).all()                               # sorted by z: the true ranking, exactly
    for field in ("z", "z_seg"):
        assert pearsonr(sy[field], truth)[0] > 0.99, field
    # raw means: the mean over the used ratings of what each worker is expected to answer,
    # E clip(N(50 + bias + scale * (true - 50), noise), 0, 100) for a good worker, to within 1 point
    rater = {x.worker: x for x in sim.raters}
    m = da.used & np.isin(r.item_type, ["SYSTEM", "REPEAT"])
    mu = np.array([50 + rater[w].bias + rater[w].scale * (sim.truth[(s, int(g))] - 50)
                   for w, s, g in zip(r.worker[m].tolist(), r.system[m].tolist(), r.segment[m].tolist())])
    sd = np.array([rater[w].noise for w in r.worker[m].tolist()])
    a, b = (0 - mu) / sd, (100 - mu) / sd
    expect = mu * (norm.cdf(b) - norm.cdf(a)) + sd * (norm.pdf(a) - norm.pdf(b)) + 100 * norm.sf(b)
    expect[r.worker[m] == "W0013"] = 50.0                           # the random worker who passed QC
    for s, raw in zip(sy["system"].tolist(), sy["raw"].tolist()):
        assert abs(raw - expect[r.system[m] == s].mean()) < 1.0, s
    # one z unit is about the good workers' spread of raw scores (about 20 points here)
    slope = np.polyfit(truth, sy["z"], 1)[0]
    assert 1 / 30 < slope < 1 / 12
    assert sy["n"].sum() == int((da.used & np.isin(r.item_type, ["SYSTEM", "REPEAT"])).sum())
    # segment level: each output's mean z tracks its true quality
    seg = da.segments
    t = np.array([sim.truth[(s, int(g))] for s, g in zip(seg.system.tolist(), seg.segment.tolist())])
    assert seg.system.size == len(sim.truth)
    assert pearsonr(seg.z, t)[0] > 0.8
    # degraded items sit below, references above, the MT outputs (QC-passing workers)
    good = r.score[da.used]
    m = {k: good[r.item_type[da.used] == k].mean() for k in ("BAD_REF", "SYSTEM", "REF")}
    assert m["BAD_REF"] + 20 < m["SYSTEM"] < m["REF"] - 20


def test_layout_equals_the_docqe_release(shared_data: Path):
    real = require(shared_data / "docqe-eacl2017" / "batched-hits" / "runA" / "Batch_2604723_batch_results.csv")
    real_rows = list(csv.reader(io.StringIO(real.read_text(encoding="utf-8"), newline="")))
    camp = _campaign(n_seg=14)
    sim = simulate(camp, QUALITY, rater_pool(3, seed=1), assignments=2, seed=1)
    text = batch_results_csv(camp, sim, "en", "es")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == real_rows[0]                                  # the same 435 header columns
    assert {len(x) for x in rows[1:]} == {len(x) for x in real_rows[1:]} == {433}  # rows stop before Approve
    raw = real.read_bytes().split(b"\r\n")[1]
    assert text.split("\r\n")[1][:1] == raw[:1].decode() == '"'     # every field double-quoted
    for j, name in enumerate(rows[0][:433]):                        # same shape of value column by column
        mine, theirs = rows[1][j], real_rows[1][j]
        if name.startswith("Input.") and name != "Input.hit":
            assert mine[0] == mine[-1] == theirs[0] == theirs[-1] == "'", name
        if name in ("AcceptTime", "SubmitTime", "CreationTime"):
            assert mine.split()[4] == theirs.split()[4] == "PST"
            assert len(mine.split()) == 6
    answer = rows[1][rows[0].index("Answer.Q1")].split("|")
    assert len(answer) == 100
    assert answer[0].rsplit("__", 1)[0].endswith("_0")


def test_shuffled_display_like_the_release(shared_data: Path, tmp_path):
    camp = _campaign()
    raters = rater_pool(good=10, random=2, seed=5)
    sim = simulate(camp, QUALITY, raters, assignments=4, seed=5, display="shuffled")
    path = tmp_path / "Batch_9_batch_results.csv"
    write_batch_results(camp, sim, path, "en", "es")
    r = read_mturk_batches(path)
    items = [camp.hit(a.hit)[k] for a in sim.assignments for k in a.order.tolist()]
    assert r.item_type.tolist() == [it.type for it in items]           # answers in display order
    assert r.segment.tolist() == [str(it.segment) for it in items]
    assert r.position.tolist() == list(range(100)) * len(sim.assignments)
    assert all(sorted(a.order.tolist()) == list(range(100)) and a.order.tolist() != list(range(100))
               for a in sim.assignments)
    # the Input.* columns keep the built HIT, which still follows the rules
    assert hit_problems(read_batch_input(path)) == []
    # in display order QC pairs come close, as in the release: min distance < 41 in every assignment
    def min_gap(rr, a):
        m = rr.assignment == a
        pos: dict = {}
        for sy, sg, p in zip(rr.system[m].tolist(), rr.segment[m].tolist(), rr.position[m].tolist()):
            pos.setdefault((sy, sg), []).append(p)
        return min(abs(v[0] - v[1]) for v in pos.values() if len(v) == 2)
    assert max(min_gap(r, a) for a in np.unique(r.assignment)) < 41
    real = read_mturk_batches(require(shared_data / "docqe-eacl2017" / "batched-hits" / "runA"))
    assert max(min_gap(real, a) for a in np.unique(real.assignment)) < 41
    # and the pipeline still recovers the ranking
    sy = da_pipeline(r).systems
    assert sy["system"].tolist() == sorted(QUALITY, key=lambda s: -sim.system_truth[s])


def test_simulation_is_deterministic_and_rejects_bad_settings():
    camp = _campaign(n_seg=14)
    raters = rater_pool(3, 1, seed=1)
    a = batch_results_csv(camp, simulate(camp, QUALITY, raters, assignments=2, seed=9), "en", "es", seed=9)
    b = batch_results_csv(camp, simulate(camp, QUALITY, raters, assignments=2, seed=9), "en", "es", seed=9)
    assert a == b
    with pytest.raises(AnalysisInputError, match=r"no quality given for system.*E"):
        simulate(camp, {k: v for k, v in QUALITY.items() if k != "E"}, raters)
    with pytest.raises(AnalysisInputError, match="between 1 and the 4 raters, got 5"):
        simulate(camp, QUALITY, raters, assignments=5)
    with pytest.raises(AnalysisInputError, match="unknown rater kind"):
        simulate(camp, QUALITY, [Rater("x", "lazy")], assignments=1)
    with pytest.raises(AnalysisInputError, match="rater counts"):
        rater_pool(0)
    with pytest.raises(AnalysisInputError, match="display 'random'"):
        simulate(camp, QUALITY, raters, display="random")


# ---- CLI --------------------------------------------------------------------------------------------

def _run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(["human", *argv])
    got = capsys.readouterr()
    return rc, got.err, got.out


def test_cli_build_then_simulate_reads_back(tmp_path, capsys):
    outs = {"A": [f"a says {i} " + "x " * (i % 9) for i in range(60)],
            "B": [f"b says {i} " + "y " * (i % 7) for i in range(60)]}
    args = []
    for s, lines in outs.items():
        (tmp_path / s).write_text("\n".join(lines) + "\n", encoding="utf-8")
        args += ["--system", f"{s}={tmp_path / s}"]
    (tmp_path / "ref").write_text("\n".join(f"the ref of line {i} r r" for i in range(60)) + "\n", encoding="utf-8")
    hits, items = tmp_path / "hits.csv", tmp_path / "items.tsv"
    rc, err, _ = _run(capsys, "build-hits", *args, "--reference", str(tmp_path / "ref"), "--src", "en",
                      "--trg", "de", "--seed", "4", "-o", str(hits), "--items", str(items))
    assert rc == 0
    assert "2 HITs of 100 items from 2 systems x 60 segments" in err
    # 70 outputs of 1 system: one HIT, said in the singular
    (tmp_path / "A70").write_text("".join(f"a says {i} x\n" for i in range(70)), encoding="utf-8")
    (tmp_path / "ref70").write_text("\n".join(f"the ref of line {i} r r" for i in range(70)) + "\n", encoding="utf-8")
    rc, err, _ = _run(capsys, "build-hits", "--system", f"A={tmp_path / 'A70'}", "--reference", str(tmp_path / "ref70"),
                      "--src", "en", "--trg", "de", "--seed", "4", "-o", str(tmp_path / "one-hit.csv"))
    assert rc == 0, err
    assert "mtscore: 1 HIT of 100 items from 1 system x 70 segments" in err
    first = hits.read_bytes()
    rc, _, _ = _run(capsys, "build-hits", *args, "--reference", str(tmp_path / "ref"), "--src", "en",
                    "--trg", "de", "--seed", "4", "-o", str(hits))
    assert rc == 0
    assert hits.read_bytes() == first
    assert items.read_text(encoding="utf-8").count("\tBAD_REF\t") == 20
    res = tmp_path / "Batch_7_batch_results.csv"
    rc, err, out = _run(capsys, "simulate-batches", "--hits", str(hits), "--quality", "A=80,B=50", "--good", "4",
                        "--random", "1", "--assignments", "3", "-o", str(res), "--truth", str(tmp_path / "t.tsv"))
    assert rc == 0
    assert out == ""
    r = read_mturk_batches(res)
    assert len(r) == 600
    assert set(r.trg_lang.tolist()) == {"de"}
    sc = np.isin(r.item_type, ["SYSTEM", "REPEAT"])
    good = ~np.isin(r.worker, ["W0005"])                          # the random worker
    assert r.score[sc & good & (r.system == "A")].mean() > r.score[sc & good & (r.system == "B")].mean() + 15
    assert (tmp_path / "t.tsv").read_text().count("\n") == 121


def test_cli_check_hits(tmp_path, capsys, shared_data):
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(f"ref line {i} with words" for i in range(80)) + "\n", encoding="utf-8")
    hits = tmp_path / "hits.csv"
    assert main(["human", "build-hits", "--system", f"A={ref}", "--reference", str(ref), "--src", "en",
                 "--trg", "de", "--degrade", "duplicate", "-o", str(hits)]) == 0
    rc, _, out = _run(capsys, "check-hits", str(hits))
    assert rc == 0
    assert out == f"{hits}: 2 HITs, all follow the rules\n"
    text = hits.read_bytes().decode("utf-8").split("\r\n")
    cells = text[1].split(",")
    j = next(k for k in range(6, 404, 4) if cells[k] != "'SYSTEM'")   # a QC item's type -> SYSTEM
    cells[j] = "'SYSTEM'"
    text[1] = ",".join(cells)
    hits.write_bytes("\r\n".join(text).encode("utf-8"))
    rc, _, out = _run(capsys, "check-hits", str(hits))
    assert rc == 1
    assert "2 HITs, " in out
    assert "item types" in out
    assert "expected 7 SYSTEM + 1 of each QC type" in out
    real = require(shared_data / "docqe-eacl2017" / "batched-hits" / "runA" / "Batch_2607652_batch_results.csv")
    rc, _, out = _run(capsys, "check-hits", str(real))
    assert rc == 0
    assert "all follow the rules" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["build-hits", "--reference", "REF", "--src", "en", "--trg", "de"], "--system: give at least one NAME=PATH"),
    (["build-hits", "--system", "A", "--reference", "REF", "--src", "en", "--trg", "de"], "expected NAME=PATH"),
    (["build-hits", "--system", "A=MISSING", "--reference", "REF", "--src", "en", "--trg", "de"], "file not found"),
    (["build-hits", "--system", "A=SHORT", "--reference", "REF", "--src", "en", "--trg", "de"],
     "system A has 3 lines, the references 80"),
    (["build-hits", "--system", "A=REF", "--system", "A=REF", "--reference", "REF", "--src", "en", "--trg", "de"],
     "--system A: given twice"),
    (["build-hits", "--system", "A=REF", "--reference", "REF", "--src", "en", "--trg", "de", "-o", "DIR"],
     "is a folder"),
    (["simulate-batches", "--hits", "REF", "--quality", "A=50"], "missing column"),
    (["simulate-batches", "--hits", "HITS", "--quality", "A=150"], "--quality 'A=150'"),
    (["simulate-batches", "--hits", "HITS", "--quality", "B=50"], "no quality given for system"),
    (["simulate-batches", "--hits", "HITS", "--quality", "A=50", "--good", "0"], "rater counts"),
])
def test_cli_bad_input_is_one_line(tmp_path, capsys, argv, message):
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(f"ref line {i} with words" for i in range(80)) + "\n", encoding="utf-8")
    (tmp_path / "short.txt").write_text("a b\nc d\ne f\n", encoding="utf-8")
    hits = tmp_path / "hits.csv"
    assert main(["human", "build-hits", "--system", f"A={ref}", "--reference", str(ref), "--src", "en",
                 "--trg", "de", "-o", str(hits)]) == 0
    subst = {"REF": str(ref), "SHORT": str(tmp_path / "short.txt"), "HITS": str(hits),
             "MISSING": str(tmp_path / "nope"), "DIR": str(tmp_path)}
    def fill(a: str) -> str:  # placeholders -> real paths, also inside NAME=PATH
        name, eq, rest = a.rpartition("=")
        return name + eq + subst.get(rest, rest)

    argv = [fill(a) for a in argv]
    rc, err, _ = _run(capsys, *argv)
    assert rc == 1
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_cli_build_hits_workers_per_hit(tmp_path, capsys):
    """--workers-per-hit 3: every HIT three times, copies in different orders, all pass check-hits."""
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(f"ref line {i} with words" for i in range(80)) + "\n", encoding="utf-8")
    one, three = tmp_path / "one.csv", tmp_path / "three.csv"
    base = ["build-hits", "--system", f"A={ref}", "--reference", str(ref), "--src", "en", "--trg", "de",
            "--seed", "3"]
    assert _run(capsys, *base, "-o", str(one))[0] == 0
    assert _run(capsys, *base, "--workers-per-hit", "3", "-o", str(three))[0] == 0
    rows1 = one.read_bytes().decode("utf-8").strip().split("\r\n")[1:]
    rows3 = three.read_bytes().decode("utf-8").strip().split("\r\n")[1:]
    assert len(rows3) == 3 * len(rows1) == 6
    assert len(set(rows3)) == 6  # three different orders of each HIT
    rc, _, out = _run(capsys, "check-hits", str(three))
    assert rc == 0
    assert out == f"{three}: 6 HITs, all follow the rules\n"
    with pytest.raises(SystemExit) as e:
        _run(capsys, *base, "--workers-per-hit", "0", "-o", str(three))
    assert e.value.code == 2
    assert "--workers-per-hit: must be 1 or more, got 0" in capsys.readouterr().err
