"""A rated document-level campaign (issue P21) exported in Appraise's document layout by
``campaign-export`` and read back by ``da-batches --input-format appraise``, the whole-document
ratings included: per (system, document) raw mean and z from each rater's segment mean and SD."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

pytest.importorskip("sqlalchemy", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")

from mtscore.analysis.crowd.batches import read_appraise_documents, read_appraise_export
from mtscore.analysis.crowd.doc_hits import build_doc_campaign, doc_hits_jsonl
from mtscore.analysis.crowd.scores import whole_document_scores
from mtscore.analysis.errors import AnalysisInputError
from mtscore.bindings.campaign_server.store import open_store
from mtscore.bindings.cli.analysis import main

QUALITY = {"A": 80, "B": 60, "C": 40}


def _rated(tmp_path, annotators=4, partial=1):
    seg = 30
    docs = [f"doc{i // 5}" for i in range(seg)]
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 6)) for i in range(seg)]
    outs = {s: [f"{s} says {i} " + " ".join(f"w{j}" for j in range(3 + i % 7)) for i in range(seg)] for s in QUALITY}
    camp = build_doc_campaign(outs, refs, docs, seed=2)
    hits = tmp_path / "hits.jsonl"
    hits.write_text(doc_hits_jsonl(camp, "en", "de"), encoding="utf-8")
    store = open_store(tmp_path / "campaign.db")
    store.load_campaign(hits)
    tokens = [t for _, t in store.add_annotators(annotators + partial)]
    rng = np.random.default_rng(0)
    given: dict[str, list[tuple]] = {}
    for a, tok in enumerate(tokens):
        name = f"A{a + 1:04d}"
        items = camp.hit(store.annotator(tok).hit)
        for k, it in enumerate(items if a < annotators else items[:10]):
            v = QUALITY[it.system] + rng.normal(0, 8) - (35 if it.type == "BAD_REF" else 0)
            v = int(np.clip(round(v), 0, 100))
            store.record_rating(tok, k, v, f"nonce{k:04d}")
            given.setdefault(name, []).append((it, v))
    return camp, store, given


def test_export_reads_back_through_da_batches_with_the_document_ratings(tmp_path, capsys):
    _, store, given = _rated(tmp_path)
    out = tmp_path / "export.csv"
    assert main(["human", "campaign-export", str(tmp_path), "-o", str(out)]) == 0   # auto: Appraise layout
    assert "mtscore: 4 annotator(s) with a complete HIT written; 1 annotator(s) still rating left out" \
        in capsys.readouterr().err
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    complete = {n: v for n, v in given.items() if n != "A0005"}
    assert len(rows) == sum(len(v) for v in complete.values())
    assert {len(r) for r in rows} == {13}
    want = [[n, it.system, str(it.segment), {"SYSTEM": "TGT", "REPEAT": "CHK", "BAD_REF": "BAD"}[it.type], "en", "de",
             str(v), it.document, str(it.is_document), str(it.hit), str(it.rid)]
            for n in sorted(complete) for it, v in complete[n]]
    assert [r[:9] + r[11:] for r in rows] == want
    # start and end: the server's first display and stored times of each rating (epoch s, ms)
    stored = {(x["name"], x["position"]): x for x in store.ratings()}
    times = [(f"{stored[(n, it.position)]['created_ms'] / 1000:.3f}", f"{stored[(n, it.position)]['submitted_ms'] / 1000:.3f}")
             for n in sorted(complete) for it, _ in complete[n]]
    assert [(r[9], r[10]) for r in rows] == times
    assert all(float(a) <= float(b) for a, b in times)

    seg = read_appraise_export(out)
    doc = read_appraise_documents(out)
    n_doc = sum(it.is_document for v in complete.values() for it, _ in v)
    assert (len(seg), len(doc)) == (len(rows) - n_doc, n_doc)
    assert seg.skipped == (f"{out}: {n_doc} whole-document ratings left out",)
    assert doc.skipped == (f"{out}: {len(rows) - n_doc} segment ratings left out",)
    for name, pairs in complete.items():   # each rater's ratings in presentation order, both tables
        assert seg.score[seg.worker == name].tolist() == [v for it, v in pairs if not it.is_document]
        assert doc.score[doc.worker == name].tolist() == [v for it, v in pairs if it.is_document]
        assert doc.document[doc.worker == name].tolist() == [it.document for it, _ in pairs if it.is_document]
        assert seg.document[seg.worker == name].tolist() == [it.document for it, _ in pairs if not it.is_document]

    res_json = tmp_path / "res.json"
    assert main(["human", "da-batches", str(out), "--input-format", "appraise", "--no-r-quirks", "--format", "json",
                 "-o", str(res_json)]) == 0
    run = json.loads(res_json.read_text(encoding="utf-8"))["run_a"]
    assert run["workers_passed"] == 4
    w = run["whole_documents"]
    assert w["ratings"] == n_doc
    # expected, computed here: z = (score - mean) / sd (n - 1) of the rater's segment ratings (every type)
    stats = {}
    for name, pairs in complete.items():
        segs = np.array([v for it, v in pairs if not it.is_document], float)
        stats[name] = (segs.mean(), segs.std(ddof=1))
    cells: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for name, pairs in complete.items():
        for it, v in pairs:
            if it.is_document and it.type in ("SYSTEM", "REPEAT"):
                m, sd = stats[name]
                cells.setdefault((it.system, it.document), []).append((v, (v - m) / sd))
    keys = sorted(cells)
    assert list(zip(w["system"], w["document"])) == keys
    assert w["raw"] == pytest.approx([np.mean([r for r, _ in cells[k]]) for k in keys], rel=1e-12)
    assert w["z"] == pytest.approx([np.mean([z for _, z in cells[k]]) for k in keys], rel=1e-9)
    assert w["n"] == [len(cells[k]) for k in keys]
    assert sum(w["n"]) < n_doc                                  # the BAD_REF documents are not scored
    best = {s: np.mean([z for (sy, _), z in zip(keys, w["z"]) if sy == s]) for s in QUALITY}
    assert best["A"] > best["B"] > best["C"]

    capsys.readouterr()
    assert main(["human", "da-batches", str(out), "--input-format", "appraise"]) == 0
    captured = capsys.readouterr()
    text = captured.out
    # the whole-document ratings are scored, not lost: a note, not a warning that they were left out
    assert f"mtscore: {out}: {n_doc} whole-document ratings scored apart from the segments" in captured.err
    assert "left out" not in captured.err
    assert "warning" not in captured.err
    assert f"whole-document ratings: {n_doc} read, {sum(w['n'])} used" in text
    first = f"{keys[0][0]:<24} {keys[0][1]:<24} "
    assert any(line.startswith(first) for line in text.splitlines())


def test_segment_campaign_export_flag_and_whole_document_errors(tmp_path, capsys):
    _rated(tmp_path, annotators=1, partial=0)
    # Appraise's document layout has no BatchId column: the option is refused, not ignored
    for fmt in ("auto", "appraise"):
        assert main(["human", "campaign-export", str(tmp_path), "--format", fmt, "--batch-id", "3"]) == 1
        assert "--batch-id: not used by the Appraise document layout" in capsys.readouterr().err
    assert main(["human", "campaign-export", str(tmp_path), "--format", "mturk"]) == 1
    assert "export it in Appraise's document layout" in capsys.readouterr().err
    out = tmp_path / "e.csv"
    assert main(["human", "campaign-export", str(tmp_path), "--format", "appraise", "-o", str(out)]) == 0
    docs = read_appraise_documents(out)
    segs = read_appraise_export(out)
    with pytest.raises(AnalysisInputError, match="worker A0001 has whole-document ratings but no segment ratings"):
        whole_document_scores(docs, segs.select(segs.worker != "A0001"), ["A0001"])
    none = whole_document_scores(docs, segs, [])
    assert (len(none.system), none.n.dtype) == (0, np.int64)
