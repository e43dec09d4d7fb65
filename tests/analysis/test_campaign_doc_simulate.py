"""``simulate-batches`` on document HITs (issue P21 leftovers): simulated raters over the HITs of
``build-hits --docs``, written as Appraise's document-layout export and read back by ``da-batches
--input-format appraise``: good raters pass QC, random ones fail, z ranks the systems as --quality,
and the whole-document ratings are scored."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from mtscore.analysis.crowd.doc_hits import build_doc_campaign
from mtscore.analysis.crowd.simulate import Rater, appraise_results_csv, simulate
from mtscore.bindings.cli.analysis import main

QUALITY = {"A": 75, "B": 60, "C": 45}
SEG = 200


def _files(tmp_path):
    docs = [f"doc{i // 5}" for i in range(SEG)]
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 6)) for i in range(SEG)]
    outs = {s: [f"{s} says {i} " + " ".join(f"w{j}" for j in range(3 + i % 7)) for i in range(SEG)] for s in QUALITY}
    for name, lines in [("docs", docs), ("ref", refs), *outs.items()]:
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    hits = tmp_path / "doc-hits"   # no extension: told by content
    assert main(["human", "build-hits", *(a for s in outs for a in ("--system", f"{s}={tmp_path / s}")),
                 "--reference", str(tmp_path / "ref"), "--docs", str(tmp_path / "docs"), "--src", "en", "--trg", "de",
                 "-o", str(hits)]) == 0
    return hits, outs, refs, docs


def test_simulated_document_hits_through_da_batches(tmp_path, capsys):
    hits, *_ = _files(tmp_path)
    export = tmp_path / "export.csv"
    assert main(["human", "simulate-batches", "--hits", str(hits), "--quality", "A=75,B=60,C=45", "--good", "8",
                 "--random", "3", "--assignments", "5", "--seed", "0", "-o", str(export)]) == 0
    rows = list(csv.reader(io.StringIO(export.read_text(encoding="utf-8"))))
    assert {len(r) for r in rows} == {13}
    assert {r[3] for r in rows} == {"TGT", "CHK", "BAD"}
    assert {(r[4], r[5]) for r in rows} == {("en", "de")}
    whole = [r for r in rows if r[8] == "True"]
    assert len(whole) == len(rows) // 6   # documents of 5 lines: 5 segment rows and 1 document row each
    assert all(float(r[9]) < float(r[10]) for r in rows)
    capsys.readouterr()
    out = tmp_path / "da.json"
    assert main(["human", "da-batches", str(export), "--input-format", "appraise", "--format", "json",
                 "-o", str(out)]) == 0
    assert f"{export}: {len(whole)} whole-document ratings scored apart from the segments" in capsys.readouterr().err
    run = json.loads(out.read_text(encoding="utf-8"))["run_a"]
    assert run["ratings"] == len(rows) - len(whole)
    qc = dict(zip(run["qc"]["worker"], run["qc"]["status"]))
    assert qc == {**{f"W{k:04d}": "good" for k in range(1, 9)}, **{f"W{k:04d}": "bad" for k in range(9, 12)}}
    systems = run["systems"]
    assert systems["system"] == ["A", "B", "C"]                         # the order of --quality,
    assert systems["z"][0] > systems["z"][1] > systems["z"][2]           # strictly
    assert systems["raw"] == pytest.approx([75, 60, 45], abs=4)
    w = run["whole_documents"]
    assert w["ratings"] == len(whole)
    assert sorted(set(zip(w["system"], w["document"]))) == sorted((s, f"doc{d}") for s in QUALITY for d in range(40))
    mean_z = {s: np.mean([z for x, z in zip(w["system"], w["z"]) if x == s]) for s in QUALITY}
    assert mean_z["A"] > mean_z["B"] > mean_z["C"]


def test_a_document_item_is_rated_as_the_mean_of_its_segments(tmp_path):
    _, outs, refs, docs = _files(tmp_path)
    camp = build_doc_campaign(outs, refs, docs, seed=3)
    exact = Rater("W0001", "good", bias=0.0, scale=1.0, noise=0.0)   # answers the true quality, rounded
    sim = simulate(camp, QUALITY, [exact], assignments=1, seed=3)
    assert len(sim.assignments) == camp.n_hits
    for a in sim.assignments:
        items = camp.hit(a.hit)
        assert a.order.tolist() == list(range(len(items)))
        for it, score in zip(items, a.scores.tolist()):
            lines = [g for g in range(1, SEG + 1) if docs[g - 1] == it.document] if it.is_document else [it.segment]
            true = np.mean([sim.truth[(it.system, g)] for g in lines]) - (30 if it.type == "BAD_REF" else 0)
            assert score == int(np.clip(np.rint(true), 0, 100))
    text = appraise_results_csv(camp, sim, "en", "de")
    first = next(csv.reader(io.StringIO(text)))
    it = camp.hit(0)[0]
    assert first[:9] + first[11:] == ["W0001", it.system, str(it.segment), "TGT", "en", "de",
                                      str(sim.assignments[0].scores[0]), it.document, "False", "0", str(it.rid)]


@pytest.mark.parametrize(("option", "name"), [(["--batch-id", "2"], "--batch-id"),
                                              (["--display", "shuffled"], "--display shuffled")])
def test_options_without_meaning_for_documents_are_refused(tmp_path, capsys, option, name):
    hits, *_ = _files(tmp_path)
    assert main(["human", "simulate-batches", "--hits", str(hits), "--quality", "A=75,B=60,C=45", *option,
                 "-o", str(tmp_path / "x.csv")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"mtscore: error: {name}: not available with a document HIT file ({hits}); its ratings are "
                       "written as an Appraise export, batchNo = the HIT, in document order")
    assert not (tmp_path / "x.csv").exists()
