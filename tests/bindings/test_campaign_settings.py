"""The campaign server's DA settings (issue P21 (#37) scope 1): reference-based (monolingual), source-based
(bilingual) and fluency; each screen shows the right texts and question over HTTP (Starlette
TestClient) and stores ratings; the setting is chosen once, refused later if it differs, and
``src`` is refused without source texts; a database made before the ``src`` column still opens."""
from __future__ import annotations

import re
import sqlite3

import pytest

pytest.importorskip("starlette", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("sqlalchemy", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

from starlette.testclient import TestClient

from mtscore.analysis.crowd.batches import read_mturk_batches
from mtscore.analysis.crowd.hits import batch_input_csv, build_campaign
from mtscore.analysis.errors import AnalysisInputError
from mtscore.bindings.campaign_server.app import make_app
from mtscore.bindings.campaign_server.export import export_csv
from mtscore.bindings.campaign_server.security import hash_password
from mtscore.bindings.campaign_server.store import open_store

SECRET = "s" * 64
PASSWORD_HASH = hash_password("correct horse", salt=b"0123456789abcdef")
FIELD = re.compile(r'name="(position|csrf|nonce)" value="([^"]*)"')
BOX = re.compile(r'<div class="box" id="(\w+)">([^<]*)</div>')
N_SEG = 14


def _texts():
    outs = {s: [f"{s} says {i} " + " ".join(f"w{j}" for j in range(3 + i % 9)) for i in range(N_SEG)]
            for s in "ABCDE"}
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 7)) for i in range(N_SEG)]
    srcs = [f"Quelle {i} " + " ".join(f"q{j}" for j in range(2 + i % 5)) for i in range(N_SEG)]
    return outs, refs, srcs


def _hits(tmp_path, sources=True, trg="de"):
    outs, refs, srcs = _texts()
    camp = build_campaign(outs, refs, seed=5)
    path = tmp_path / "hits.csv"
    path.write_text(batch_input_csv(camp, "en", trg, texts=True, sources=srcs if sources else None), encoding="utf-8")
    return camp, path


def _client(tmp_path, setting, trg="de"):
    camp, path = _hits(tmp_path, trg=trg)
    store = open_store(tmp_path / "campaign.db")
    assert store.load_campaign(path, setting) == camp.n_hits
    tokens = [t for _, t in store.add_annotators(1)]
    client = TestClient(make_app(store, SECRET, PASSWORD_HASH, rate=1000.0, burst=1000), follow_redirects=False)
    return camp, store, tokens[0], client


def _screen(client, tok):
    r = client.get(f"/a/{tok}")
    assert r.status_code == 200, r.text
    page = r.text.replace("&#x27;", "'")
    h1 = re.search(r'<h1 id="question">([^<]*)</h1>', page)
    assert h1 is not None
    return dict(FIELD.findall(page)), h1.group(1), dict(BOX.findall(page)), page


@pytest.mark.parametrize(("setting", "question", "shown"), [
    ("ref", "How well does the text below express the meaning of the reference?", "reference"),
    ("src", "How accurately does the text convey the meaning of the source?", "source"),
    ("fluency", "How much do you agree that the text below is fluent German?", None),
])
def test_each_setting_shows_its_texts_and_question_and_stores_ratings(tmp_path, setting, question, shown):
    camp, store, tok, client = _client(tmp_path, setting)
    _, refs, srcs = _texts()
    assert store.setting() == setting
    seen_ref_item = False
    for k in range(100):
        form, q, boxes, page = _screen(client, tok)
        it = camp.hit(0)[k]
        assert q == question
        want = {"candidate": it.text}
        if shown == "reference":
            want["reference"] = refs[it.segment - 1]
        elif shown == "source":  # a REF item: the reference rated as a translation of the source
            want["source"] = srcs[it.segment - 1]
        assert boxes == want
        if setting == "fluency":
            assert "0 (strongly disagree) to 100 (strongly agree)" in page
        seen_ref_item |= it.type == "REF"
        r = client.post(f"/a/{tok}/rate", data={**form, "score": str((3 * k) % 101)})
        assert r.status_code == 303
    assert seen_ref_item
    assert [x["value"] for x in store.ratings()] == [(3 * k) % 101 for k in range(100)]
    # the export keeps the batch layout: da-batches reads it as before
    text, n, _ = export_csv(store)
    assert n == 1
    (tmp_path / "out.csv").write_text(text, encoding="utf-8")
    r = read_mturk_batches(tmp_path / "out.csv")
    assert r.score.tolist() == [float((3 * k) % 101) for k in range(100)]
    assert r.item_type.tolist() == [it.type for it in camp.hit(0)]


def test_fluency_names_an_unlisted_target_language_by_its_code(tmp_path):
    _, _, tok, client = _client(tmp_path, "fluency", trg="gu")
    assert _screen(client, tok)[1] == "How much do you agree that the text below is fluent gu (the target language)?"


def test_src_refused_without_source_texts_and_nothing_loaded(tmp_path):
    _, path = _hits(tmp_path, sources=False)
    store = open_store(tmp_path / "c.db")
    with pytest.raises(AnalysisInputError, match=r"--setting src needs the source texts \(srctext_i columns\)"):
        store.load_campaign(path, "src")
    assert store.n_hits() == 0
    with pytest.raises(AnalysisInputError, match="setting 'bilingual': choose one of ref, src, fluency"):
        store.load_campaign(path, "bilingual")
    assert store.load_campaign(path) == 1
    assert store.setting() == "ref"


def test_source_lines_must_match_the_references():
    outs, refs, srcs = _texts()
    camp = build_campaign(outs, refs, seed=5)
    with pytest.raises(AnalysisInputError, match="sources: 13 lines need texts=True and one line per reference"):
        batch_input_csv(camp, "en", "de", texts=True, sources=srcs[:-1])
    with pytest.raises(AnalysisInputError, match="sources: 14 lines need texts=True"):
        batch_input_csv(camp, "en", "de", sources=srcs)
    head = batch_input_csv(camp, "en", "de", texts=True, sources=srcs).split("\r\n")[0].split(",")
    assert head[4:11] == ["sys_0", "sid_0", "tst_0", "rid_0", "text_0", "ref_0", "srctext_0"]


def test_a_database_made_before_the_src_column_opens_as_ref(tmp_path):
    camp, path = _hits(tmp_path, sources=False)
    db = tmp_path / "old.db"
    store = open_store(db)
    store.load_campaign(path)
    tok = store.add_annotators(1)[0][1]
    store.engine.dispose()
    with sqlite3.connect(db) as con:  # what a campaign of the first slice holds: no src, no setting
        con.execute("ALTER TABLE items DROP COLUMN src")
        con.execute("DELETE FROM meta WHERE key = 'setting'")
    assert "src" not in [r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(items)")]
    store = open_store(db)
    assert store.setting() == "ref"
    item = store.next_item(tok)
    assert (item.text, item.src) == (camp.hit(0)[0].text, None)


def test_cli_build_hits_source_and_serve_setting(tmp_path, monkeypatch, capsys):
    """build-hits --source writes srctext_i; serve --setting is stored on the first run, refused
    later if it differs, and src is refused (one line) for HITs without source texts."""
    import uvicorn

    from mtscore.bindings.cli.analysis import main

    outs, refs, srcs = _texts()
    for name, lines in (*outs.items(), ("ref", refs), ("src", srcs), ("short", srcs[:3])):
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = ["human", "build-hits", *[a for s in outs for a in ("--system", f"{s}={tmp_path / s}.txt")],
            "--reference", str(tmp_path / "ref.txt"), "--src", "de", "--trg", "en"]
    assert main([*base, "--texts", "--source", str(tmp_path / "src.txt"), "-o", str(tmp_path / "h.csv")]) == 0
    assert main([*base, "--texts", "-o", str(tmp_path / "plain.csv")]) == 0
    assert main([*base, "--source", str(tmp_path / "src.txt")]) == 1
    assert "--source: needs --texts" in capsys.readouterr().err
    assert main([*base, "--texts", "--source", str(tmp_path / "short.txt")]) == 1
    assert "3 lines, the reference 14: they must match" in capsys.readouterr().err
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    camp_dir = tmp_path / "camp"
    assert main(["human", "serve", str(camp_dir), "--hits", str(tmp_path / "h.csv"), "--setting", "src",
                 "--annotators", "1"]) == 0
    assert "setting src" in capsys.readouterr().err
    assert open_store(camp_dir / "campaign.db").setting() == "src"
    assert main(["human", "serve", str(camp_dir), "--annotators", "1"]) == 0  # no --setting: kept
    capsys.readouterr()
    assert main(["human", "serve", str(camp_dir), "--setting", "fluency"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "was created with setting src" in err
    assert main(["human", "serve", str(tmp_path / "plain"), "--hits", str(tmp_path / "plain.csv"),
                 "--setting", "src"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "build-hits --texts --source FILE" in err
    assert open_store(tmp_path / "plain" / "campaign.db").n_hits() == 0
