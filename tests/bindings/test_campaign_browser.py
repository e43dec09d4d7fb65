"""The DA campaign server (issue P21) driven by a real browser: headless Chromium through Playwright
against uvicorn serving the app on a free 127.0.0.1 port (a thread of this process).

A whole 100-item HIT is rated by moving the slider with the keyboard (Home/End/arrows/Page Up) and
with a mouse drag, and submitted with Enter or the Next button; a reload and a second tab mid-HIT
resume at the same item and nothing is counted twice (checked in the database through the store);
a second annotator's context never sees the first's items and cannot write them; no console
error; the admin page shows the annotator's QC and closes the campaign (after a confirmation
box), and the other link then says so; screenshots of the rating screen and of the admin page are kept under
``$MTSCORE_TEST_ARTEFACTS`` (default ``test-artefacts/``) as ``campaign-rating.png`` and
``campaign-admin.png``; the source-based (bilingual) screen as ``campaign-rating-src.png``.

Chromium is the Debian ``chromium`` package (``.ci/run`` installs it), or ``$MTSCORE_CHROMIUM``;
without it the tests skip, saying so, except under ``CI=true`` where they fail.
"""
from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import pytest

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
pytest.importorskip("starlette", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("sqlalchemy", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("uvicorn", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")

import uvicorn
from playwright import sync_api

from mtscore.analysis.crowd.hits import batch_input_csv, build_campaign
from mtscore.bindings.campaign_server.app import make_app
from mtscore.bindings.campaign_server.security import completion_code, hash_password
from mtscore.bindings.campaign_server.store import open_store, token_hash
from tests.browser_support import artefacts_dir, chromium_executable

SECRET = "b" * 64
PASSWORD = "browser horse"
QUALITY = ("A", "B", "C", "D", "E")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def browser():
    exe = chromium_executable()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe)
        yield b
        b.close()


@pytest.fixture
def server(tmp_path):
    """(base URL, store, the campaign, [token A0001 (HIT 0), token A0002 (HIT 1)]) of a campaign
    served by uvicorn in a thread."""
    with _serving(tmp_path) as s:
        yield s


@contextmanager
def _serving(tmp_path, setting: str = "ref"):
    outs = {s: [f"{s} output {i} " + " ".join(f"w{j}" for j in range(3 + i % 9)) for i in range(28)] for s in QUALITY}
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 7)) for i in range(28)]
    srcs = [f"Quelle {i} " + " ".join(f"q{j}" for j in range(2 + i % 5)) for i in range(28)]
    camp = build_campaign(outs, refs, seed=3)
    hits = tmp_path / "hits.csv"
    hits.write_text(batch_input_csv(camp, "en", "de", texts=True, sources=srcs), encoding="utf-8")
    store = open_store(tmp_path / "campaign.db")
    assert store.load_campaign(hits, setting) == 2
    tokens = [t for _, t in store.add_annotators(2)]
    app = make_app(store, SECRET, hash_password(PASSWORD, salt=b"fedcba9876543210"), rate=1000.0, burst=1000)
    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert th.is_alive(), "uvicorn stopped"
        assert time.monotonic() < deadline, "uvicorn did not start within 30 s"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", store, camp, tokens
    finally:
        srv.should_exit = True
        th.join(timeout=10)


def _context(browser, log: list[str], **kw):
    ctx = browser.new_context(viewport={"width": 1000, "height": 800}, **kw)
    ctx.on("console", lambda m: m.type == "error" and log.append(m.text))
    ctx.on("weberror", lambda e: log.append(str(e.error)))
    return ctx


def _keys(kind: str, k: int) -> tuple[list[str], int]:
    """Keys that move the slider (from its start at 50) and the value they give: degraded items
    low (0..2), everything else high (80..100), so the annotator passes the rater test."""
    if kind == "BAD_REF":
        return ["Home"] + ["ArrowRight"] * (k % 3), k % 3
    if k % 3 == 0:
        return ["End"] + ["ArrowLeft"] * (k % 3), 100 - k % 3
    if k % 3 == 1:
        return ["PageUp", "PageUp", "PageUp"], 80
    return ["End", "PageDown", "ArrowRight"], 91


_SCREEN = """() => [document.title, document.querySelector('input[name=position]').value,
  document.getElementById('candidate').textContent, document.getElementById('score').value]"""
_VALUE = "() => [document.getElementById('score').value, document.getElementById('readout').textContent]"


def test_a_whole_hit_in_the_browser(browser, server):
    base, store, camp, (tok, tok_b) = server
    errors: list[str] = []
    ctx = _context(browser, errors)
    page = ctx.new_page()
    url = f"{base}/a/{tok}"
    page.goto(url)
    want: list[int] = []
    try:
        for k, item in enumerate(camp.hit(0)):
            # one round trip: the title, the form's position, the text, the slider
            assert page.evaluate(_SCREEN) == [f"Item {k + 1} of 100", str(k), item.text, "50"]
            slider = page.locator("#score")
            if k in (10, 55) and item.type == "SYSTEM":  # a real drag of the thumb with the mouse
                box = slider.bounding_box()
                assert box is not None
                y = box["y"] + box["height"] / 2
                page.mouse.move(box["x"] + box["width"] / 2, y)
                page.mouse.down()
                page.mouse.move(box["x"] + box["width"] * 0.85, y, steps=8)
                page.mouse.up()
                value = int(slider.input_value())
                assert 78 <= value <= 92
            else:
                keys, value = _keys(item.type, k)
                slider.press(keys[0])  # focuses the slider, then the key
                for key in keys[1:]:
                    page.keyboard.press(key)
            # the slider's value and the script's read-out
            assert page.evaluate(_VALUE) == [str(value)] * 2
            if k == 3:
                shot = artefacts_dir() / "campaign-rating.png"
                page.screenshot(path=str(shot), full_page=True)
                assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            if k == 40:
                # a reload before submitting: the same item again, the slider back at 50, nothing stored
                page.reload()
                assert page.title() == "Item 41 of 100"
                assert page.locator("#score").input_value() == "50"
                assert len(store.ratings()) == 40
                # a second tab shows the same item; its form goes stale once the first tab submits
                tab_ctx = _context(browser, [])  # its 409 below may log an error of its own
                tab = tab_ctx.new_page()
                tab.goto(url)
                assert tab.title() == "Item 41 of 100"
                page.locator("#score").focus()
                for key in keys:
                    page.keyboard.press(key)
            with page.expect_navigation():
                if k % 10:
                    page.keyboard.press("Enter")  # the page's script submits the form
                else:
                    page.click("#next")
            want.append(value)
            if k == 40:
                with tab.expect_navigation():
                    tab.click("#next")
                assert tab.title() == "Error 409"
                assert "Not stored" in tab.locator("#message").text_content()
                tab_ctx.close()
                assert len(store.ratings()) == 41
        assert page.title() == "Thank you"
        assert page.locator("#code").text_content() == completion_code(SECRET, token_hash(tok))
        page.reload()  # the end page again: nothing more stored
        assert page.title() == "Thank you"
    finally:
        ctx.close()
    rows = store.ratings()
    assert [r["position"] for r in rows] == list(range(100))     # each item once
    assert [r["value"] for r in rows] == want
    assert [r["rid"] for r in rows] == [it.rid for it in camp.hit(0)]
    assert store.annotator(tok).next_position == 100
    assert errors == []

    # the admin page: this annotator finished and passes the rater test
    admin_errors: list[str] = []
    actx = _context(browser, admin_errors, http_credentials={"username": "admin", "password": PASSWORD})
    try:
        page = actx.new_page()
        page.goto(f"{base}/admin")
        assert page.title() == "Campaign progress"
        cells = page.evaluate("() => Array.from(document.querySelectorAll('#progress tr')).map("
                              "r => Array.from(r.cells).map(c => c.textContent))")
        head, a1, a2 = cells
        row = dict(zip(head, a1))
        assert row["annotator"] == "A0001"
        assert row["rated"] == "100 / 100"
        assert row["BAD_REF pairs"] == "10"
        assert row["QC"] == "pass"
        assert row["repeat pairs"] == "10"
        assert dict(zip(head, a2))["QC"] == "waiting"
        assert "2 annotators, 1 finished, 100 ratings stored; campaign open" in page.locator("#headline").text_content()
        shot = artefacts_dir() / "campaign-admin.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        # closing: the button does nothing until the confirmation box is ticked
        page.click("#close-button")
        assert page.url == f"{base}/admin"
        assert "campaign open" in page.locator("#headline").text_content()
        page.check("#confirm")
        with page.expect_navigation():
            page.click("#close-button")
        assert "; campaign closed 20" in page.locator("#headline").text_content()
        assert page.locator("#close-button").count() == 0
        assert admin_errors == []
    finally:
        actx.close()
    # the second annotator's link now says the campaign is closed
    bctx = _context(browser, [])  # its 410 may log an error of its own
    try:
        page = bctx.new_page()
        page.goto(f"{base}/a/{tok_b}")
        assert page.title() == "Campaign closed"
        assert page.locator("#score").count() == 0
    finally:
        bctx.close()
    assert len(store.ratings()) == 100


def test_a_second_annotator_cannot_read_or_write_the_first_ones_items(browser, server):
    base, store, camp, (a, b) = server
    assert camp.hit(0)[0].text != camp.hit(1)[0].text
    errors: list[str] = []
    ctx_a, ctx_b = _context(browser, errors), _context(browser, errors)
    seen_b: list[str] = []
    ctx_b.on("request", lambda r: seen_b.append(r.url))
    try:
        page_a, page_b = ctx_a.new_page(), ctx_b.new_page()
        page_a.goto(f"{base}/a/{a}")
        page_b.goto(f"{base}/a/{b}")
        form_a = {n: page_a.locator(f"input[name={n}]").get_attribute("value") for n in ("position", "csrf", "nonce")}
        form_b = {n: page_b.locator(f"input[name={n}]").get_attribute("value") for n in ("position", "csrf", "nonce")}
        assert page_b.locator("#candidate").text_content() == camp.hit(1)[0].text
        # A's form fields posted to B's link, and B's to A's link, from B's browser: refused
        r = page_b.request.post(f"{base}/a/{b}/rate", form={**form_a, "score": "7"}, max_redirects=0)
        assert r.status == 403
        r = page_b.request.post(f"{base}/a/{a}/rate", form={**form_b, "score": "7"}, max_redirects=0)
        assert r.status == 403
        assert store.ratings() == []
        # B rates their own first item: stored for B's HIT only
        page_b.locator("#score").focus()
        page_b.keyboard.press("End")
        with page_b.expect_navigation():
            page_b.keyboard.press("Enter")
        assert page_b.title() == "Item 2 of 100"
        assert page_b.locator("#candidate").text_content() == camp.hit(1)[1].text
        rows = store.ratings()
        assert [(r["name"], r["hit"], r["position"], r["value"]) for r in rows] == [("A0002", 1, 0, 100)]
        assert store.annotator(a).next_position == 0
        page_a.reload()
        assert page_a.title() == "Item 1 of 100"
        # nothing of A's ever reached B's browser
        assert a not in page_b.content()
        assert seen_b
        assert all(a not in u for u in seen_b), seen_b
        assert errors == []
    finally:
        ctx_a.close()
        ctx_b.close()


def test_the_source_based_screen(browser, tmp_path):
    """The src setting: the source above the text, the bilingual question; screenshot
    ``campaign-rating-src.png``; a rating stored through the form."""
    with _serving(tmp_path, "src") as (base, store, camp, tokens):
        log: list[str] = []
        ctx = _context(browser, log)
        page = ctx.new_page()
        page.goto(f"{base}/a/{tokens[0]}")
        assert page.locator("#question").text_content() == "How accurately does the text convey the meaning of the source?"
        it = camp.hit(0)[0]
        assert page.locator("#source").text_content().startswith(f"Quelle {it.segment - 1} ")
        assert page.locator("#candidate").text_content() == it.text
        assert page.locator("#reference").count() == 0
        page.screenshot(path=str(artefacts_dir() / "campaign-rating-src.png"), full_page=True)
        page.focus("#score")
        page.keyboard.press("End")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{base}/a/{tokens[0]}")
        page.wait_for_function("() => document.querySelector('input[name=position]').value === '1'")
        assert [x["value"] for x in store.ratings()] == [100]
        assert log == []
        ctx.close()
