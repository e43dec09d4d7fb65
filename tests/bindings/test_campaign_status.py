"""The live summary of a DA campaign (issue P21): each annotator's rater test (BAD_REF vs original,
one-sided paired t-test), repeat consistency and median time per item as the ratings come in, on
the admin page and from ``mtscore human campaign-status``; closing a campaign."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("sqlalchemy", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")
pytest.importorskip("scipy")

from scipy import stats as scipy_stats
from starlette.testclient import TestClient

from mtscore.analysis.crowd.hits import batch_input_csv, build_campaign
from mtscore.bindings.campaign_server.app import make_app
from mtscore.bindings.campaign_server.security import admin_csrf_token, completion_code, hash_password
from mtscore.bindings.campaign_server.status import campaign_status, close_campaign, closed_ms, status_json
from mtscore.bindings.campaign_server.store import open_store, token_hash

SECRET = "q" * 64
PASSWORD = "status horse"
ADMIN = ("admin", PASSWORD)
FIELD = re.compile(r'name="(position|csrf|nonce)" value="([^"]*)"')


def _setup(tmp_path, annotators=4):
    outs = {s: [f"{s} out {i} " + " ".join(f"w{j}" for j in range(3 + i % 9)) for i in range(28)] for s in "ABCDE"}
    refs = [f"ref {i} " + " ".join(f"r{j}" for j in range(3 + i % 7)) for i in range(28)]
    camp = build_campaign(outs, refs, seed=11)
    hits = tmp_path / "hits.csv"
    hits.write_text(batch_input_csv(camp, "en", "de", texts=True), encoding="utf-8")
    store = open_store(tmp_path / "campaign.db")
    store.load_campaign(hits)
    tokens = [t for _, t in store.add_annotators(annotators)]
    app = make_app(store, SECRET, hash_password(PASSWORD, salt=b"0011223344556677"), rate=1000.0, burst=1000,
                   admin_rate=1000.0, admin_burst=1000)
    return camp, store, tokens, TestClient(app, follow_redirects=False)


def _rate(client, token, value):
    form = dict(FIELD.findall(client.get(f"/a/{token}").text))
    return client.post(f"/a/{token}/rate", data={**form, "score": str(value)})


def _values(camp, hit, kind, rng):
    """100 answers to ``hit``: 'good' (originals 60..95, degraded 25 lower +- 10, repeats +- 5),
    'random' (uniform 0..100) or 'lazy' (always 50)."""
    items = camp.hit(hit)
    if kind == "random":
        return rng.integers(0, 101, 100).tolist()
    if kind == "lazy":
        return [50] * 100
    base = {(it.system, it.segment): int(rng.integers(60, 96)) for it in items if it.type == "SYSTEM"}
    out = []
    for it in items:
        b = base.get((it.system, it.segment), int(rng.integers(60, 96)))
        shift = {"BAD_REF": -25 + int(rng.integers(-10, 11)), "REPEAT": int(rng.integers(-5, 6))}.get(it.type, 0)
        out.append(int(np.clip(b + shift, 0, 100)))
    return out


def _expected(camp, hit, values, typ):
    """(control, original) scores of the complete pairs of type ``typ`` among the rated ``values``
    (computed here from the HIT layout, independently of the server)."""
    items = camp.hit(hit)[:len(values)]
    orig = {(it.system, it.segment): v for it, v in zip(items, values) if it.type == "SYSTEM"}
    pairs = [(v, orig[(it.system, it.segment)]) for it, v in zip(items, values)
             if it.type == typ and (it.system, it.segment) in orig]
    return np.array([a for a, _ in pairs], float), np.array([b for _, b in pairs], float)


def test_live_qc_as_ratings_come_in(tmp_path):
    camp, store, tokens, client = _setup(tmp_path)
    rng = np.random.default_rng(2)
    kinds = ["good", "random", "lazy", "good"]
    answers = [_values(camp, k % 2, kind, rng) for k, kind in enumerate(kinds)]
    # before any rating: everyone waiting
    assert [a.qc for a in campaign_status(store).annotators] == ["waiting"] * 4
    for k in range(3):
        for v in answers[k]:
            assert _rate(client, tokens[k], v).status_code == 303
    n_part = 70                                           # the fourth stops after 70 items
    for v in answers[3][:n_part]:
        assert _rate(client, tokens[3], v).status_code == 303
    st = campaign_status(store)
    assert (len(st.annotators), st.finished, st.ratings) == (4, 3, 300 + n_part)
    rows = store.ratings()
    for k, a in enumerate(st.annotators):
        assert a.name == f"A{k + 1:04d}"
        vals = answers[k] if k < 3 else answers[3][:n_part]
        bad, orig = _expected(camp, k % 2, vals, "BAD_REF")
        assert a.bad_pairs == bad.size
        rep, rorig = _expected(camp, k % 2, vals, "REPEAT")
        assert a.repeat_pairs == rep.size
        if rep.size:
            assert a.repeat_mad == pytest.approx(np.mean(np.abs(rep - rorig)), abs=1e-12)
        mine = [r["screen_ms"] for r in rows if r["name"] == a.name]
        assert a.median_seconds == pytest.approx(np.median(mine) / 1000, abs=1e-12)
        if kinds[k] == "lazy":
            assert a.qc == "fail"          # all differences 0: t = 0/0, p NaN, as R's t.test (da-batches: bad)
            assert math.isnan(a.p)
            continue
        if bad.size < 2:
            assert a.qc == "waiting"
            continue
        want = scipy_stats.ttest_rel(bad, orig, alternative="less")
        assert a.t == pytest.approx(want.statistic, rel=1e-9)
        assert a.p == pytest.approx(want.pvalue, rel=1e-6, abs=1e-300)
        assert a.qc == ("pass" if want.pvalue <= 0.05 else "fail")
    assert [a.qc for a in st.annotators[:3]] == ["pass", "fail", "fail"]
    assert st.annotators[0].repeat_pairs == 10
    assert st.annotators[0].repeat_mad <= 5
    assert st.annotators[3].bad_pairs == 4                 # a partial HIT: the pairs rated so far
    assert st.annotators[3].qc == "pass"

    # the admin page shows the same numbers
    page = client.get("/admin", auth=ADMIN).text
    cells = [re.findall(r"<td>([^<]*)</td>", tr) for tr in re.findall(r"<tr>(<td>.*?)</tr>", page)]
    assert [c[0] for c in cells] == ["A0001", "A0002", "A0003", "A0004"]
    a1 = st.annotators[0]
    assert cells[0][1:3] == ["0", "100 / 100"]
    assert cells[0][5:] == ["10", f"{a1.t:.3f}", f"{a1.p:.4g}", "pass", "10", f"{a1.repeat_mad:.1f}",
                            f"{a1.median_seconds:.1f}"]
    assert cells[2][5:9] == ["10", "-", "-", "fail"]
    assert cells[3][2] == f"{n_part} / 100"
    assert "4 annotators, 3 finished, 370 ratings stored; campaign open" in page
    j = status_json(st)
    assert j["per_annotator"][2]["p"] is None
    assert j["per_annotator"][0]["qc"] == "pass"
    assert json.loads(json.dumps(j, allow_nan=False)) == j


def test_close_campaign(tmp_path):
    _, store, tokens, client = _setup(tmp_path, annotators=3)
    for _ in range(100):
        assert _rate(client, tokens[0], 70).status_code == 303
    for _ in range(5):
        assert _rate(client, tokens[1], 70).status_code == 303
    stale = dict(FIELD.findall(client.get(f"/a/{tokens[1]}").text))
    page = client.get("/admin", auth=ADMIN).text
    csrf = re.search(r'action="/admin/close".*?name="csrf" value="([0-9a-f]{64})"', page).group(1)
    assert csrf == admin_csrf_token(SECRET)
    # refused: no password, a wrong one, no CSRF token, a wrong one, a GET, no confirmation
    assert client.post("/admin/close", data={"csrf": csrf}).status_code == 401
    assert client.post("/admin/close", data={"csrf": csrf}, auth=("admin", "wrong")).status_code == 401
    assert client.post("/admin/close", auth=ADMIN).status_code == 403
    assert client.post("/admin/close", data={"csrf": "0" * 64}, auth=ADMIN).status_code == 403
    assert client.get("/admin/close", auth=ADMIN).status_code == 405
    r = client.post("/admin/close", data={"csrf": csrf}, auth=ADMIN)      # the confirmation box not ticked
    assert r.status_code == 400
    assert "Not closed: tick the box" in r.text
    assert client.post("/admin/close", data={"csrf": csrf, "confirm": "no"}, auth=ADMIN).status_code == 400
    assert closed_ms(store) is None
    assert len(store.ratings()) == 105
    r = client.post("/admin/close", data={"csrf": csrf, "confirm": "yes"}, auth=ADMIN)
    assert r.status_code == 303
    assert r.headers["location"] == "/admin"
    when = closed_ms(store)
    assert when is not None
    assert close_campaign(store) == when                    # closing again keeps the first time
    assert client.post("/admin/close", data={"csrf": csrf, "confirm": "yes"}, auth=ADMIN).status_code == 303
    assert closed_ms(store) == when
    # annotators: POSTs refused with 410, nothing stored; pages say the campaign is closed
    r = client.post(f"/a/{tokens[1]}/rate", data={**stale, "score": "40"})
    assert r.status_code == 410
    assert "This campaign is closed: no more ratings are accepted." in r.text
    r = client.get(f"/a/{tokens[1]}")
    assert r.status_code == 410
    assert "Campaign closed" in r.text
    assert 'name="score"' not in r.text
    assert client.get(f"/a/{tokens[2]}").status_code == 410
    done = client.get(f"/a/{tokens[0]}")                    # who finished still sees their code
    assert done.status_code == 200
    assert completion_code(SECRET, token_hash(tokens[0])) in done.text
    assert len(store.ratings()) == 105
    assert store.annotator(tokens[1]).next_position == 5
    page = client.get("/admin", auth=ADMIN).text
    assert "3 annotators, 1 finished, 105 ratings stored; campaign closed 20" in page
    assert 'action="/admin/close"' not in page
    assert status_json(campaign_status(store))["closed"] is True


def test_closed_is_checked_inside_the_rating_transaction(tmp_path):
    """A rating whose transaction starts after the close commits is refused by the store itself
    (the app has no separate, racy check): Closed, a Conflict, and nothing stored."""
    from mtscore.bindings.campaign_server.store import Closed, Conflict

    _, store, tokens, _client = _setup(tmp_path, annotators=2)
    item = store.next_item(tokens[0])
    assert store.record_rating(tokens[0], item.position, 60, "n0") == (60, True)
    close_campaign(store)
    with pytest.raises(Closed, match="the campaign is closed"):
        store.record_rating(tokens[0], item.position + 1, 61, "n1")
    assert issubclass(Closed, Conflict)
    assert len(store.ratings()) == 1
    assert store.annotator(tokens[0]).next_position == item.position + 1


def test_cli_campaign_status_prints_the_admin_summary(tmp_path, capsys):
    from mtscore.bindings.cli.analysis import main

    camp, store, tokens, client = _setup(tmp_path, annotators=2)
    rng = np.random.default_rng(4)
    for v in _values(camp, 0, "good", rng):
        assert _rate(client, tokens[0], v).status_code == 303
    for v in _values(camp, 1, "random", rng)[:80]:
        assert _rate(client, tokens[1], v).status_code == 303
    page = client.get("/admin", auth=ADMIN).text
    admin_rows = [re.findall(r"<td>([^<]*)</td>", tr) for tr in re.findall(r"<tr>(<td>.*?)</tr>", page)]
    headline = re.search(r'<p id="headline">([^<]*)\.</p>', page).group(1)

    assert main(["human", "campaign-status", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == headline == "2 annotators, 1 finished, 180 ratings stored; campaign open"
    assert re.split(r"\s{2,}", out[1]) == ["annotator", "HIT", "rated", "first", "last", "BAD_REF pairs", "t", "p",
                                           "QC", "repeat pairs", "repeat mean |diff|", "median s/item"]
    assert [re.split(r"\s{2,}", ln.strip()) for ln in out[2:4]] == admin_rows   # the admin page's cells
    assert admin_rows[0][8] == "pass"
    assert admin_rows[1][2] == "80 / 100"
    assert out[4].startswith("QC: one-sided paired t-test BAD_REF < original, pass at p <= 0.05")

    js = tmp_path / "status.json"
    assert main(["human", "campaign-status", str(tmp_path), "--format", "json", "-o", str(js)]) == 0
    j = json.loads(js.read_text(encoding="utf-8"))
    assert (j["annotators"], j["finished"], j["ratings"], j["closed"]) == (2, 1, 180, False)
    a1, a2 = j["per_annotator"]
    assert (a1["name"], a1["rated"], a1["bad_ref_pairs"], a1["qc"], a1["repeat_pairs"]) == ("A0001", 100, 10, "pass", 10)
    assert f"{a1['p']:.4g}" == admin_rows[0][7]
    assert f"{a2['median_seconds']:.1f}" == admin_rows[1][11]
    bad, orig = _expected(camp, 1, [r["value"] for r in store.ratings() if r["name"] == "A0002"], "BAD_REF")
    assert a2["bad_ref_pairs"] == bad.size
    assert a2["t"] == pytest.approx(scipy_stats.ttest_rel(bad, orig).statistic, rel=1e-9)

    close_campaign(store)
    assert main(["human", "campaign-status", str(tmp_path)]) == 0
    assert "; campaign closed 20" in capsys.readouterr().out.splitlines()[0]
    assert main(["human", "campaign-status", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"CAMPAIGN_DIR {tmp_path / 'nowhere'}: no such folder" in err
