"""The DA campaign server (issue P21, first slice): HITs from the HIT builder served over HTTP
(Starlette TestClient), ratings in a SQLite file, every bad request refused with its status and
nothing stored, the export read by ``read_mturk_batches`` and run through the DA quality control."""
from __future__ import annotations

import io
import re

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("sqlalchemy", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

from starlette.testclient import TestClient

from mtscore.analysis.crowd.batches import read_mturk_batches
from mtscore.analysis.crowd.hits import batch_input_csv, build_campaign
from mtscore.analysis.crowd.scores import da_pipeline
from mtscore.analysis.crowd.simulate import rater_pool, simulate
from mtscore.bindings.campaign_server.app import make_app
from mtscore.bindings.campaign_server.export import export_csv
from mtscore.bindings.campaign_server.security import (
    RateLimiter,
    check_password,
    completion_code,
    csrf_token,
    hash_password,
)
from mtscore.bindings.campaign_server.store import Conflict, open_store, token_hash

QUALITY = {"A": 80.0, "B": 70.0, "C": 60.0, "D": 50.0, "E": 40.0}
SECRET = "s" * 64
PASSWORD_HASH = hash_password("correct horse", salt=b"0123456789abcdef")
FIELD = re.compile(r'name="(position|csrf|nonce)" value="([^"]*)"')


def _campaign(n_seg: int = 14, seed: int = 5):
    outs = {s: [f"{s} says {i} " + " ".join(f"w{j}" for j in range(3 + i % 9)) for i in range(n_seg)] for s in QUALITY}
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 7)) for i in range(n_seg)]
    return build_campaign(outs, refs, seed=seed)


def _setup(tmp_path, n_seg=14, annotators=3, **kw):
    camp = _campaign(n_seg)
    hits = tmp_path / "hits.csv"
    hits.write_text(batch_input_csv(camp, "en", "de", texts=True), encoding="utf-8")
    store = open_store(tmp_path / "campaign.db")
    assert store.load_campaign(hits) == camp.n_hits
    tokens = [t for _, t in store.add_annotators(annotators)]
    kw.setdefault("rate", 1000.0)
    kw.setdefault("burst", 1000)
    client = TestClient(make_app(store, SECRET, PASSWORD_HASH, **kw), follow_redirects=False)
    return camp, store, tokens, client


def _form(client, token):
    r = client.get(f"/a/{token}")
    assert r.status_code == 200, r.text
    return dict(FIELD.findall(r.text)), r.text


def _rate(client, token, value, form=None):
    form = form or _form(client, token)[0]
    return client.post(f"/a/{token}/rate", data={**form, "score": str(value)})


def _count(store):
    return len(store.ratings())


def test_a_whole_hit_through_http(tmp_path):
    camp, store, tokens, client = _setup(tmp_path)
    tok = tokens[0]
    for k in range(100):
        form, page = _form(client, tok)
        assert f"Item {k + 1} of 100" in page
        assert form["position"] == str(k)
        assert 'type="range"' in page
        assert 'min="0" max="100"' in page
        assert form["csrf"] == csrf_token(SECRET, token_hash(tok), k)
        it = camp.hit(0)[k]
        assert f'id="candidate">{it.text}<' in page.replace("&#x27;", "'")
        r = _rate(client, tok, (7 * k) % 101, form)
        assert r.status_code == 303
        assert r.headers["location"] == f"/a/{tok}"
    r = client.get(f"/a/{tok}")
    assert r.status_code == 200
    assert completion_code(SECRET, token_hash(tok)) in r.text
    assert "rated all 100 items" in r.text
    rows = store.ratings()
    assert [x["position"] for x in rows] == list(range(100))
    assert [x["value"] for x in rows] == [(7 * k) % 101 for k in range(100)]
    assert [x["rid"] for x in rows] == [it.rid for it in camp.hit(0)]
    assert all(x["submitted_ms"] >= x["created_ms"] and x["screen_ms"] >= 0 for x in rows)
    # rating past the end is refused
    assert _rate(client, tok, 5, {"position": "100", "csrf": csrf_token(SECRET, token_hash(tok), 100),
                                  "nonce": "abcdefgh12"}).status_code == 409
    assert _count(store) == 100
    # security headers: the link token must not leak through a Referer
    assert r.headers["referrer-policy"] == "no-referrer"
    assert "default-src 'none'" in r.headers["content-security-policy"]


def test_reload_and_second_tab_resume_without_double_counting(tmp_path):
    _, store, tokens, client = _setup(tmp_path)
    tok = tokens[0]
    for k in range(10):
        assert _rate(client, tok, 60 + k).status_code == 303
    first, _ = _form(client, tok)
    second, _ = _form(client, tok)  # a reload / a second tab: same item, a fresh nonce
    assert first["position"] == second["position"] == "10"
    assert first["nonce"] != second["nonce"]
    assert _rate(client, tok, 42, first).status_code == 303
    assert _rate(client, tok, 42, first).status_code == 303      # the same form again: no change
    assert _rate(client, tok, 42, second).status_code == 409     # the other tab's form for the stored item
    assert _form(client, tok)[0]["position"] == "11"
    rows = store.ratings()
    assert [x["value"] for x in rows] == [60 + k for k in range(10)] + [42]


def test_annotators_see_and_write_only_their_own_items(tmp_path):
    camp, store, tokens, client = _setup(tmp_path, n_seg=28, annotators=2)
    a, b = tokens
    assert store.annotator(a).hit == 0
    assert store.annotator(b).hit == 1
    _, page_b = _form(client, b)
    assert camp.hit(1)[0].text in page_b.replace("&#x27;", "'")
    form_b, _ = _form(client, b)
    assert _rate(client, a, 50, form_b).status_code == 403       # B's form posted to A's link
    nobody = client.get("/a/" + "x" * 43)
    other = client.get("/a/" + "y" * 43)
    assert nobody.status_code == other.status_code == 404
    assert nobody.text == other.text
    assert client.post("/a/" + "x" * 43 + "/rate", data={"score": "5"}).status_code == 404
    assert client.get("/a/short").status_code == 404
    assert _count(store) == 0


@pytest.mark.parametrize(("change", "status"), [
    ({"score": "101"}, 400), ({"score": "-1"}, 400), ({"score": "abc"}, 400), ({"score": "50.5"}, 400),
    ({"score": ""}, 400), ({"nonce": ""}, 400), ({"position": "x"}, 400),
    ({"position": "4"}, 403),                  # a forged position with the CSRF token of the current one
    ({"csrf": ""}, 403), ({"csrf": "0" * 64}, 403),
])
def test_bad_input_is_refused_and_nothing_stored(tmp_path, change, status):
    _, store, tokens, client = _setup(tmp_path)
    tok = tokens[0]
    for _k in range(3):
        assert _rate(client, tok, 80).status_code == 303
    form, _ = _form(client, tok)
    data = {**form, "score": "70", **change}
    data = {k: v for k, v in data.items() if not (k == "csrf" and v == "")}
    r = client.post(f"/a/{tok}/rate", data=data)
    assert r.status_code == status, r.text
    assert _count(store) == 3
    assert store.annotator(tok).next_position == 3


def test_a_replayed_form_with_another_value_is_refused(tmp_path):
    _, store, tokens, client = _setup(tmp_path)
    tok = tokens[0]
    form, _ = _form(client, tok)
    assert _rate(client, tok, 30, form).status_code == 303
    assert _rate(client, tok, 31, form).status_code == 409
    # a stored position with its own (valid) CSRF token and a new nonce: out of order
    assert _rate(client, tok, 30, {**form, "nonce": "freshnonce1"}).status_code == 409
    assert [x["value"] for x in store.ratings()] == [30]
    with pytest.raises(Conflict):
        store.record_rating(tok, 0, 31, form["nonce"])
    with pytest.raises(ValueError, match=r"expected an integer 0\.\.100"):
        store.record_rating(tok, 1, 101, "abcdefgh")


def test_admin_page_needs_the_password(tmp_path):
    _, _store, tokens, client = _setup(tmp_path)
    for _ in range(3):
        _rate(client, tokens[1], 50)
    assert client.get("/admin").status_code == 401
    assert client.get("/admin", auth=("admin", "wrong")).status_code == 401
    assert client.get("/admin", headers={"Authorization": "Basic !!!"}).status_code == 401
    r = client.get("/admin", auth=("admin", "correct horse"))
    assert r.status_code == 200
    assert re.search(r"<td>A0002</td><td>0</td><td>3 / 100</td>", r.text)
    assert "3 annotators, 0 finished, 3 ratings stored" in r.text
    assert check_password("correct horse", PASSWORD_HASH)
    assert not check_password("correct horsE", PASSWORD_HASH)
    assert not check_password("x", "garbage")


def test_rate_limit(tmp_path):
    _, store, tokens, client = _setup(tmp_path, rate=0.001, burst=2)
    tok = tokens[0]
    assert [_rate(client, tok, 50).status_code for _ in range(3)] == [303, 303, 429]
    assert _count(store) == 2
    t = [0.0]
    lim = RateLimiter(rate=2.0, burst=1, clock=lambda: t[0])
    assert lim.allow("k")
    assert not lim.allow("k")
    assert lim.allow("other")
    t[0] = 0.5
    assert lim.allow("k")
    assert not lim.allow("k")


def _answers(camp, raters, seed):
    """Simulated answers (every rater rates every HIT, in HIT order): (hit, worker) -> 100 ints."""
    sim = simulate(camp, QUALITY, raters, assignments=len(raters), seed=seed)
    return {(a.hit, a.worker): a.scores.tolist() for a in sim.assignments}


def test_export_reads_back_and_qc_fails_the_random_annotators(tmp_path):
    camp, store, tokens, client = _setup(tmp_path, n_seg=28, annotators=8)
    # a random annotator passes the one-sided 5% test by chance 1 time in 20 (10 pairs per HIT):
    # with seed 5 neither does (p 0.66 and 0.60), with seed 4 one would (p 0.049)
    raters = rater_pool(good=6, random=2, seed=5)
    answers = _answers(camp, raters, seed=5)
    for k, tok in enumerate(tokens):
        hit = store.annotator(tok).hit
        for v in answers[(hit, raters[k].worker)]:
            assert _rate(client, tok, v).status_code == 303
    # a ninth annotator who stopped half way is left out of the export
    tok9 = store.add_annotators(1)[0][1]
    for _ in range(50):
        _rate(client, tok9, 50)
    text, n, incomplete = export_csv(store)
    assert (n, incomplete) == (8, 1)
    path = tmp_path / "Batch_1_batch_results.csv"
    path.write_text(text, encoding="utf-8", newline="")
    r = read_mturk_batches(path)
    assert len(r) == 800
    assert r.skipped == ()
    names = [f"A{k + 1:04d}" for k in range(8)]
    assert r.worker.tolist() == [w for w in names for _ in range(100)]
    want = [v for k in range(8) for v in answers[(k % 2, raters[k].worker)]]
    assert r.score.tolist() == [float(v) for v in want]
    items = [it for k in range(8) for it in camp.hit(k % 2)]
    assert r.item_type.tolist() == [it.type for it in items]
    assert r.system.tolist() == [it.system for it in items]
    assert r.segment.tolist() == [str(it.segment) for it in items]
    assert set(r.src_lang.tolist()) == {"en"}
    assert set(r.trg_lang.tolist()) == {"de"}
    qc = da_pipeline(r).qc
    passed = {w for w, ok in zip(qc.worker.tolist(), qc.passed.tolist()) if ok}
    assert passed == set(names[:6])                               # the six good ones pass, the random ones fail
    p = dict(zip(qc.worker.tolist(), qc.p.tolist()))
    assert min(p["A0007"], p["A0008"]) > 0.5
    assert max(p[w] for w in names[:6]) < 0.001
    assert io.StringIO(text).readline().startswith('"HITId","HITTypeId"')
    assert np.all(r.time >= 0)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args, tmp_path):
    import subprocess
    import sys
    import time

    import httpx

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mtscore", "human", "serve", *args, "--port", str(port),
                             "--rate", "1000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            httpx.get(f"http://127.0.0.1:{port}/admin", timeout=1)
            return proc, port
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    pytest.fail("the server did not answer within 60 s")


def test_cli_serve_survives_sigkill_and_exports(tmp_path):
    """Ratings acknowledged by a real uvicorn server (a subprocess) are all in the database after
    SIGKILL, none twice; a replayed form after the restart changes nothing; campaign-export."""
    import os
    import signal

    import httpx

    from mtscore.bindings.cli.analysis import main

    camp = _campaign()
    hits = tmp_path / "hits.csv"
    hits.write_text(batch_input_csv(camp, "en", "de", texts=True), encoding="utf-8")
    folder = tmp_path / "campaign"
    proc, port = _start([str(folder), "--hits", str(hits), "--annotators", "2"], tmp_path)
    acked: list[tuple[str, int, int]] = []
    try:
        links = (folder / "links.txt").read_text(encoding="utf-8").split("\n")[:2]
        tokens = [ln.split("\t")[1].rsplit("/", 1)[1] for ln in links]
        assert [ln.split("\t")[0] for ln in links] == ["A0001", "A0002"]
        assert oct((folder / "admin-password.txt").stat().st_mode & 0o777) == "0o600"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", follow_redirects=False, timeout=10) as c:
            last_form = {}
            for name, tok, n in (("A0001", tokens[0], 100), ("A0002", tokens[1], 23)):
                for k in range(n):
                    form = dict(FIELD.findall(c.get(f"/a/{tok}").text))
                    r = c.post(f"/a/{tok}/rate", data={**form, "score": str((11 * k + 3) % 101)})
                    assert r.status_code == 303
                    acked.append((name, k, (11 * k + 3) % 101))
                    last_form = {**form, "score": str((11 * k + 3) % 101)}
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    store = open_store(folder / "campaign.db")
    assert [(x["name"], x["position"], x["value"]) for x in store.ratings()] == acked
    # restarted: the last acknowledged form posted again is answered 303 and stored once
    proc, port = _start([str(folder), "--annotators", "2"], tmp_path)
    try:
        r = httpx.post(f"http://127.0.0.1:{port}/a/{tokens[1]}/rate", data=last_form, timeout=10)
        assert r.status_code == 303
        assert "Item 24 of 100" in httpx.get(f"http://127.0.0.1:{port}/a/{tokens[1]}", timeout=10).text
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert len(open_store(folder / "campaign.db").ratings()) == 123
    out = tmp_path / "Batch_1_batch_results.csv"
    assert main(["human", "campaign-export", str(folder), "-o", str(out)]) == 0
    r = read_mturk_batches(out)
    assert r.worker.tolist() == ["A0001"] * 100
    assert r.score.tolist() == [float(v) for _, _, v in acked[:100]]
    assert r.item_type.tolist() == [it.type for it in camp.hit(0)]


def test_cli_errors_are_one_line(tmp_path, monkeypatch, capsys):
    from mtscore.bindings.cli.analysis import main

    assert main(["human", "campaign-export", str(tmp_path / "nowhere")]) == 1
    assert f"CAMPAIGN_DIR {tmp_path / 'nowhere'}: no such folder" in capsys.readouterr().err
    assert main(["human", "campaign-export", str(tmp_path)]) == 1
    assert "no campaign.db" in capsys.readouterr().err
    assert main(["human", "serve", str(tmp_path / "new")]) == 1
    assert "a new campaign needs --hits" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    monkeypatch.setitem(__import__("sys").modules, "mtscore.bindings.campaign_server.store", None)
    assert main(["human", "campaign-export", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install \"starlette>=0.37\"" in err  # the extra's own requirements (install_hint)
    assert "(the mtscore[campaign] extra)" in err


def test_concurrent_posts_of_one_item_store_one_rating(tmp_path):
    """Two tabs (threads) posting the same item at once: one rating stored, the others refused."""
    from concurrent.futures import ThreadPoolExecutor

    _, store, tokens, _ = _setup(tmp_path)
    tok = tokens[0]

    def post(k):
        try:
            return store.record_rating(tok, 0, 10 + k, f"nonce-{k:04d}")
        except Conflict:
            return None

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(post, range(16)))
    stored = [g for g in got if g is not None]
    assert len(stored) == 1
    assert stored[0][1] is True
    assert [x["value"] for x in store.ratings()] == [stored[0][0]]
    assert store.annotator(tok).next_position == 1


def test_hit_rows_in_any_order_keep_their_texts(tmp_path):
    camp = _campaign(n_seg=28)
    text = batch_input_csv(camp, "en", "de", texts=True)
    head, first, second = text.rstrip("\r\n").split("\r\n")
    path = tmp_path / "hits.csv"
    path.write_text("\r\n".join([head, second, first]) + "\r\n", encoding="utf-8")
    store = open_store(tmp_path / "c.db")
    assert store.load_campaign(path) == 2
    for h in range(2):
        assert [it.text for it in store.hit_items(h)] == [it.text for it in camp.hit(h)]


def test_screen_time_runs_from_the_first_display_and_a_reload_does_not_reset_it(tmp_path):
    """An item's screen time runs from its first display: the first item's from its GET, every
    later item's from the commit of the rating before it (the redirect that answers that POST
    shows it); a reload in between changes nothing. Lower bounds only: sleeps set them."""
    import time

    _, store, tokens, client = _setup(tmp_path)
    tok = tokens[0]
    form, _ = _form(client, tok)              # item 0 shown
    time.sleep(0.15)
    assert _rate(client, tok, 10, form).status_code == 303
    time.sleep(0.1)
    _form(client, tok)                       # item 1 shown (the redirect's GET), then a reload
    time.sleep(0.1)
    form, _ = _form(client, tok)
    assert _rate(client, tok, 20, form).status_code == 303
    assert _rate(client, tok, 30).status_code == 303  # item 2 at once
    rows = store.ratings()
    assert [x["position"] for x in rows] == [0, 1, 2]
    assert rows[0]["screen_ms"] >= 150
    assert rows[1]["screen_ms"] >= 200       # not reset by the reload at 100 ms
    assert rows[1]["created_ms"] == rows[0]["submitted_ms"]
    assert rows[2]["created_ms"] == rows[1]["submitted_ms"]
    assert rows[2]["screen_ms"] < rows[1]["screen_ms"]


def test_checkpoints_run_in_the_background_not_in_a_rating(tmp_path):
    """The store copies the write-ahead log into the database on request (every page of it, with no
    reader in the way), and the app does so by itself while it runs (its lifespan), so that no
    rating's commit pays for SQLite's automatic checkpoint."""
    import time

    _, store, tokens, _client = _setup(tmp_path)
    app = make_app(store, SECRET, PASSWORD_HASH, rate=1000.0, burst=1000, checkpoint_every=0.02)
    calls = []
    real = store.checkpoint

    def counting():
        calls.append(real())
        return calls[-1]

    store.checkpoint = counting
    with TestClient(app, follow_redirects=False) as client:
        for k in range(5):
            assert _rate(client, tokens[0], 10 + k).status_code == 303
        deadline = time.monotonic() + 30
        while len(calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
    n = len(calls)                            # the exit waited for a checkpoint in flight...
    assert n >= 3
    time.sleep(0.05)
    assert len(calls) == n                    # ...and none starts after it
    assert all(copied == pages for pages, copied in calls)
    assert _count(store) == 5
    pages, copied = real()
    assert copied == pages


def test_all_items_in_one_read_equal_each_hit(tmp_path):
    camp, store, _, _ = _setup(tmp_path)
    items = store.all_items()
    assert len(items) == camp.n_hits * 100
    assert items == [it for h in range(camp.n_hits) for it in store.hit_items(h)]
    assert store.all_items() == items        # kept, and a copy each time
    assert store.all_items() is not store.all_items()
