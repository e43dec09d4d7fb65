"""Document-level DA on the campaign server (issue P21): a document HIT file (build-hits --docs)
loaded, HITs of their own lengths, each segment shown under its document's earlier segments, the
whole-document item with the document question, a whole HIT rated over HTTP (Starlette
TestClient), the live status per HIT length, and old databases given the new columns."""
from __future__ import annotations

import re
import sqlite3
from html import escape

import pytest

pytest.importorskip("starlette", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("sqlalchemy", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

from starlette.testclient import TestClient

from mtscore.analysis.crowd.doc_hits import build_doc_campaign, doc_hits_jsonl
from mtscore.analysis.errors import AnalysisInputError
from mtscore.bindings.campaign_server.app import make_app
from mtscore.bindings.campaign_server.export import export_csv
from mtscore.bindings.campaign_server.security import hash_password
from mtscore.bindings.campaign_server.status import campaign_status, status_json
from mtscore.bindings.campaign_server.store import open_store

SECRET = "s" * 64
PASSWORD_HASH = hash_password("correct horse", salt=b"0123456789abcdef")
FIELD = re.compile(r'name="(position|csrf|nonce)" value="([^"]*)"')
SYSTEMS = ("A", "B", "C")


def _doc_campaign(seg: int = 30, seed: int = 2, sources: bool = True):
    docs = [f"doc{i // 5}" for i in range(seg)]              # six documents of five segments
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 6)) for i in range(seg)]
    outs = {s: [f"{s} says <{i}> " + " ".join(f"w{j}" for j in range(3 + i % 7)) for i in range(seg)]
            for s in SYSTEMS}
    srcs = [f"source {i} & more" for i in range(seg)] if sources else None
    return build_doc_campaign(outs, refs, docs, srcs, seed=seed)


def _setup(tmp_path, setting="ref", annotators=2, sources=True):
    camp = _doc_campaign(sources=sources)
    hits = tmp_path / "hits.jsonl"
    hits.write_text(doc_hits_jsonl(camp, "en", "de"), encoding="utf-8")
    store = open_store(tmp_path / "campaign.db")
    assert store.load_campaign(hits, setting) == camp.n_hits
    tokens = [t for _, t in store.add_annotators(annotators)]
    client = TestClient(make_app(store, SECRET, PASSWORD_HASH, rate=1000.0, burst=1000), follow_redirects=False)
    return camp, store, tokens, client


def _box(page: str, box_id: str) -> str | None:
    m = re.search(rf'<div class="box" id="{box_id}">(.*?)</div>(?=<p>|<form)', page, re.S)
    return None if m is None else m.group(1)


def test_a_whole_document_hit_rated_over_http(tmp_path):
    camp, store, tokens, client = _setup(tmp_path)
    items = camp.hit(0)
    size = len(items)
    assert size != 100
    assert size == store.hit_size(0)
    assert [store.hit_size(h) for h in range(camp.n_hits)] == camp.hit_sizes()
    tok = tokens[0]
    unit_start = 0
    for k, it in enumerate(items):
        page = client.get(f"/a/{tok}").text
        assert f"Item {k + 1} of {size}" in page
        form = dict(FIELD.findall(page))
        assert form["position"] == str(k)
        if it.is_document:
            assert ('<h1 id="question">How accurately does the whole document convey the meaning of the reference '
                    "document?</h1>") in page
            assert "<p>Reference document:</p>" in page
            assert "<p>Document to rate:</p>" in page
            assert _box(page, "reference") == escape(it.ref)
            assert it.ref.count("\n") == 4
            assert _box(page, "candidate") == escape(it.text)
            assert _box(page, "context") is None
        else:
            assert '<h1 id="question">How well does the text below express the meaning of the reference?</h1>' in page
            assert _box(page, "candidate") == escape(it.text)
            assert _box(page, "reference") == escape(it.ref)
            earlier = items[unit_start:k]
            ctx = _box(page, "context")
            if not earlier:
                assert ctx is None
            else:   # the document's earlier segments, oldest first, each with its reference
                shown = re.findall(r'<div class="ctx-side">(.*?)</div><div class="ctx-text">(.*?)</div>', ctx)
                assert shown == [(escape(e.ref), escape(e.text)) for e in earlier]
        value = 20 if it.type == "BAD_REF" else 60 + (k % 30)
        r = client.post(f"/a/{tok}/rate", data={**form, "score": str(value)})
        assert r.status_code == 303, r.text
        if it.is_document:
            unit_start = k + 1
    done = client.get(f"/a/{tok}")
    assert f"You have rated all {size} items." in done.text
    assert len(store.ratings()) == size
    late = client.post(f"/a/{tok}/rate", data={**form, "position": str(size), "score": "50", "nonce": "n" * 12})
    assert late.status_code in (403, 409)
    assert len(store.ratings()) == size

    st = campaign_status(store)
    a = st.annotators[0]
    assert (a.rated, a.total, st.finished) == (size, size, 1)
    bad_segments = sum(1 for it in items if it.type == "BAD_REF" and not it.is_document)
    rep_segments = sum(1 for it in items if it.type == "REPEAT" and not it.is_document)
    assert (a.bad_pairs, a.repeat_pairs, a.qc) == (bad_segments, rep_segments, "pass")
    j = status_json(st)
    assert j["per_annotator"][0]["items"] == size
    assert j["per_annotator"][1]["items"] == store.hit_size(1)
    assert st.items_per_hit == max(camp.hit_sizes())
    admin = client.get("/admin", auth=("admin", "correct horse")).text
    cells = [re.findall(r"<td>([^<]*)</td>", tr) for tr in re.findall(r"<tr>(<td>.*?)</tr>", admin)]
    assert [c[2] for c in cells] == [f"{size} / {size}", f"0 / {store.hit_size(1)}"]
    assert "2 annotators, 1 finished," in admin
    with pytest.raises(AnalysisInputError, match="Appraise's document layout"):
        export_csv(store)


def test_source_setting_shows_the_source_document(tmp_path):
    camp, _store, tokens, client = _setup(tmp_path, setting="src")
    items = camp.hit(0)
    for k, it in enumerate(items):
        page = client.get(f"/a/{tokens[0]}").text
        if it.is_document:
            assert "How accurately does the whole document convey the meaning of the source document?" in page
            assert "<p>Source document:</p>" in page
            assert _box(page, "source") == escape(it.src)
            assert "&amp; more" in _box(page, "source")
            break
        if k:
            ctx = _box(page, "context")
            assert re.findall(r'<div class="ctx-side">(.*?)</div>', ctx) == [escape(e.src) for e in items[:k]]
        assert client.post(f"/a/{tokens[0]}/rate", data={**dict(FIELD.findall(page)), "score": "70"}).status_code == 303
    else:
        pytest.fail("no document item in HIT 0")


def test_source_setting_needs_sources_and_fluency_asks_about_the_document(tmp_path):
    camp = _doc_campaign(sources=False)
    hits = tmp_path / "hits.jsonl"
    hits.write_text(doc_hits_jsonl(camp, "en", "de"), encoding="utf-8")
    store = open_store(tmp_path / "a.db")
    with pytest.raises(AnalysisInputError, match=r"hits.jsonl: --setting src needs the source texts"):
        store.load_campaign(hits, "src")
    assert store.n_hits() == 0
    assert store.load_campaign(hits, "fluency") == camp.n_hits
    tok = store.add_annotators(1)[0][1]
    client = TestClient(make_app(store, SECRET, PASSWORD_HASH, rate=1000.0, burst=1000), follow_redirects=False)
    first_doc = next(k for k, it in enumerate(camp.hit(0)) if it.is_document)
    for k in range(first_doc):
        page = client.get(f"/a/{tok}").text
        assert 'class="ctx-side"' not in page        # fluency: the earlier texts alone
        assert page.count('class="ctx-text"') == k
        assert client.post(f"/a/{tok}/rate", data={**dict(FIELD.findall(page)), "score": "70"}).status_code == 303
    page = client.get(f"/a/{tok}").text
    assert "How much do you agree that the whole document below is fluent German?" in page
    assert 'id="reference"' not in page


def test_an_old_database_gets_the_document_columns(tmp_path):
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE items (hit INTEGER NOT NULL, position INTEGER NOT NULL, rid INTEGER NOT NULL UNIQUE, "
                "system TEXT NOT NULL, segment INTEGER NOT NULL, type VARCHAR(16) NOT NULL, text TEXT NOT NULL, "
                "ref TEXT NOT NULL, PRIMARY KEY (hit, position))")
    con.execute("INSERT INTO items VALUES (0, 0, 1000000, 'A', 1, 'SYSTEM', 'a text', 'a ref')")
    con.commit()
    con.close()
    store = open_store(db)
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute("PRAGMA table_info(items)")]
    con.close()
    assert cols[-3:] == ["src", "document", "is_document"]
    it = store.all_items()[0]
    assert (it.text, it.document, it.is_document) == ("a text", "", False)
    assert store.hit_size(0) == 1
    assert store.n_hits() == 1
