"""``mtscore report`` opened in a real browser (headless Chromium through Playwright, issue P19).

The page made by the command line is rendered with scripts on and off. With scripts on: a
full-page screenshot (kept under ``$MTSCORE_TEST_ARTEFACTS``, default ``test-artefacts/``), every
section in the rendered DOM, the score table's numbers equal to ``mtscore ... --format json`` for
the same files, an S x S significance matrix per metric, no console message of level error, no
uncaught exception, no request other than the page itself; sorting, the pair picker and the
example filter work. With scripts off: every table, pair and segment is still shown.

Chromium is the Debian ``chromium`` package (``.ci/run`` installs it), or ``$MTSCORE_CHROMIUM``;
without it the tests skip, saying so, except under ``CI=true`` where they fail.
"""
from __future__ import annotations

import json

import pytest

from mtscore.bindings.report import SECTIONS
from tests.browser_support import artefacts_dir, chromium_executable, open_local_page

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")

REFS = ["the cat sat on the mat .", "a dog barked loudly at night .", "we went home early",
        "this is a <test> & more", "it rained all day long", "she reads a book every week .",
        "the committee approved the new budget on tuesday after a long debate .",
        "heavy rain caused flooding in several villages along the river ."]
SRC = ["die Katze sass auf der Matte .", "ein Hund bellte laut in der Nacht .", "wir gingen frueh heim",
       "das ist ein <Test> & mehr", "es regnete den ganzen Tag", "sie liest jede Woche ein Buch .",
       "der Ausschuss billigte am Dienstag nach langer Debatte den neuen Haushalt .",
       "starker Regen verursachte Ueberschwemmungen in mehreren Doerfern am Fluss ."]
SYSTEMS = {
    "A": ["the cat sat on a mat .", "a dog barked at night .", "we went home", "this is a test",
          "it rained all day", "she reads a book each week .",
          "the committee approved the new budget on tuesday after a long debate .",
          "heavy rains caused floods in several villages along the river ."],
    "<b>B</b>": ["cat on the mat", "the dog barks loudly at night .", "we went home early",
                 "this is <script>alert(1)</script> & more", "it was raining all day long",
                 "she reads books .", "committee has approved new budget tuesday after long discussion .",
                 "strong rain made flood in some villages at the river ."],
    "C": ["the cat is on the mat .", "dog barked", "went home early .", "this a test & more",
          "rain all the day", "every week she reads a book .",
          "the committee approved the budget after a debate on tuesday .",
          "heavy rain flooded several villages by the river ."],
}
METRICS = ["bleu", "chrf", "ter"]
N_BS = 200


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The report written by ``mtscore report`` and the JSON of ``mtscore ... --format json``."""
    from mtscore.bindings.cli.main import main

    d = tmp_path_factory.mktemp("report")

    def write(name, lines):
        (d / name).write_text("".join(x + "\n" for x in lines), encoding="utf-8")
        return str(d / name)

    ref, src = write("ref.txt", REFS), write("src.txt", SRC)
    hyps = [write(f"sys{i}.txt", h) for i, h in enumerate(SYSTEMS.values())]
    out = d / "report.html"
    assert main(["report", ref, "-i", *hyps, "--names", *SYSTEMS, "--src", src, "-m", *METRICS,
                 "--bootstrap", str(N_BS), "--seed", "7", "-o", str(out)]) == 0
    json_out = d / "scores.json"
    assert main([ref, "-i", *hyps, "-m", *METRICS, "--format", "json", "--paired-bs",
                 "--paired-bs-n", str(N_BS), "--seed", "7", "--output", str(json_out)]) in (0, None)
    return out, json.loads(json_out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def browser():
    exe = chromium_executable()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe)
        yield b
        b.close()


_SCORE_ROWS = """() => Array.from(document.querySelectorAll('#score-table tbody tr')).map(r =>
  Array.from(r.cells).map(c => [c.textContent.trim(), c.getAttribute('data-v')]))"""


def test_rendered_page(browser, files):
    path, scores = files
    ctx, page, log = open_local_page(browser, path, scripts=True)
    try:
        shot = artefacts_dir() / "report-browser.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot.stat().st_size > 20_000

        # every section, rendered and visible
        for ident in SECTIONS:
            assert page.locator(f"section#{ident}").is_visible(), ident
            assert page.locator(f"nav a[href='#{ident}']").count() == 1, ident

        # the score table equals `mtscore ... --format json` (score and CI of every system)
        rows = page.evaluate(_SCORE_ROWS)
        assert [r[0][0] for r in rows] == list(SYSTEMS)  # names rendered as text, not markup
        keys = {"bleu": "BLEU", "chrf": "chrF2", "ter": "TER"}
        for s, row in enumerate(rows):
            want = scores[s]
            for m, metric in enumerate(METRICS):
                text, value = row[1 + 3 * m]
                ci_text, ci_value = row[2 + 3 * m]
                assert float(value) == pytest.approx(want[keys[metric]]["score"], rel=0, abs=1e-9)
                assert text == f"{want[keys[metric]]['score']:.2f}"
                assert float(ci_value) == pytest.approx(want[keys[metric]]["ci"], rel=1e-6, abs=1e-9)
                assert ci_text == f"\u00b1 {want[keys[metric]]['ci']:.2f}"

        # one S x S matrix of p-values per metric; the first row equals the JSON's p-values
        S = len(SYSTEMS)
        mats = page.locator("table.sigmatrix")
        assert mats.count() == len(METRICS)
        for m, metric in enumerate(METRICS):
            cells = mats.nth(m).locator("td.pcell")
            assert cells.count() == S * S
            for s in range(1, S):
                got = cells.nth(s).get_attribute("data-v")
                assert float(got) == pytest.approx(scores[s][keys[metric]]["p_value"], abs=1e-12)

        assert page.locator("svg").count() > 0
        assert log["errors"] == []
        assert log["requests"] == [path.as_uri()]  # nothing else was requested
    finally:
        ctx.close()


def test_scripts_sort_pick_and_filter(browser, files):
    path, _ = files
    ctx, page, log = open_local_page(browser, path, scripts=True)
    try:
        # a click on the bleu header sorts the score table by the exact value
        head = page.locator("#score-table thead th").nth(1)
        col = "() => Array.from(document.querySelectorAll('#score-table tbody tr')).map(r => parseFloat(r.cells[1].getAttribute('data-v')))"
        head.click()
        asc = page.evaluate(col)
        assert asc == sorted(asc)
        head.click()
        assert page.evaluate(col) == sorted(asc, reverse=True)

        # the picker shows one pair of systems at a time
        assert page.locator("#pair-picker").is_visible()
        visible = "() => Array.from(document.querySelectorAll('#examples .pair')).filter(d => !d.hidden).map(d => d.dataset.pair)"
        assert page.evaluate(visible) == ["0-1"]
        page.select_option("#pair-select", "1-2")
        assert page.evaluate(visible) == ["1-2"]

        # the example filter: reference length and text
        shown = "() => Array.from(document.querySelectorAll('#examples .pair:not([hidden]) dl.seg')).filter(d => !d.hidden).map(d => [parseInt(d.dataset.len), d.textContent])"
        every = page.evaluate(shown)
        assert every
        page.fill("#filter-min", "8")
        long = page.evaluate(shown)
        assert long
        assert all(n >= 8 for n, _ in long)
        assert len(long) < len(every)
        assert page.locator("#filter-count").text_content() == f"{len(long)} shown"
        page.fill("#filter-min", "")
        page.fill("#filter-text", "MAT")
        mat = page.evaluate(shown)
        assert mat
        assert all("mat" in t.lower() for _, t in mat)
        assert len(mat) < len(every)
        assert log["errors"] == []
    finally:
        ctx.close()


def test_everything_shown_without_scripts(browser, files):
    path, _ = files
    ctx_js, page_js, _ = open_local_page(browser, path, scripts=True)
    ctx, page, log = open_local_page(browser, path, scripts=False)
    try:
        n_tables = page_js.locator("table").count()
        assert n_tables > 10
        assert page.locator("table").count() == n_tables
        hidden = page.evaluate("() => Array.from(document.querySelectorAll('table')).filter(t => !t.checkVisibility()).length")
        assert hidden == 0
        pairs = page.locator("#examples .pair")
        assert pairs.count() == 3
        assert all(pairs.nth(i).is_visible() for i in range(3))
        assert page.locator("dl.seg").count() == page_js.locator("dl.seg").count()
        assert page.evaluate("() => Array.from(document.querySelectorAll('dl.seg')).every(d => d.checkVisibility())")
        assert not page.locator("#pair-picker").is_visible()  # the controls need the script
        assert not page.locator("#example-filter").is_visible()
        page.screenshot(path=str(artefacts_dir() / "report-browser-noscript.png"), full_page=True)
        assert log["requests"] == [path.as_uri()]
    finally:
        ctx.close()
        ctx_js.close()
