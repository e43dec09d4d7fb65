"""``mtscore reproduce tangled``: Mathur, Baldwin & Cohn (2020) "Tangled up in BLEU" rebuilt from the
WMT19 system-level scores the authors released (nitikam/tangled), every transcribed printed cell
compared at the printed precision, each figure's numbers, the output folder, the errors."""
from __future__ import annotations

import csv
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import require

from mtscore.analysis.correlation import pearson
from mtscore.analysis.data.released import load_sys_level
from mtscore.analysis.metaeval.outliers import mad_outliers
from mtscore.bindings.cli.main import main
from mtscore.bindings.reproduce import reproduce_tangled, required_files
from mtscore.bindings.reproduce.tangled import MAIN_METRICS
from mtscore.bindings.reproduce.tangled_printed import PRINTED
from tests.browser_support import chromium_executable, open_local_page

TABLE1_LPS = ["de-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en"]
TABLE2_LPS = ["en-de", "en-fi", "en-kk", "en-ru", "de-cs", "fr-de"]
TABLES = ["table1", "table2", "appendix-to-en", "appendix-en-xx", "appendix-non-en"]
FIGURES = ["fig1-topn", "fig1-rolling4", "fig1-rolling8", "fig2-subsets",
           "scatter-en-de", "scatter-en-kk", "scatter-gu-en", "scatter-zh-en"]


@pytest.fixture(scope="module")
def root(shared_data):
    require(shared_data / "tangled" / "wmt19_sys_scores")
    return shared_data


@pytest.fixture(scope="module")
def res(root):
    return reproduce_tangled(root)


@pytest.fixture(scope="module")
def out(root, tmp_path_factory):
    pytest.importorskip("matplotlib", reason="figures need matplotlib (the plot extra)")
    d = tmp_path_factory.mktemp("repro") / "tangled-out"
    assert main(["reproduce", "tangled", "--data", str(root), "--out", str(d)]) == 0
    return d


def _sys(root, lp):
    p = root / "tangled" / "wmt19_sys_scores" / f"DA-newstest2019-{lp.replace('-', '')}-sys-nohy-scores.csv"
    return load_sys_level(p, raw_col=None)


def test_every_printed_cell_reproduced_at_printed_precision(root, res):
    # 96 transcribed cells: Tables 1-2 (#sys of 12 pairs, 5 metrics x 6 pairs x All/-out), appendix BLEU
    assert len(PRINTED) == 96
    for (key, row, col), printed in PRINTED.items():
        c = res.table(key).cell(row, col)
        assert c.printed == printed
        assert c.source
        assert c.matches is True, (key, row, col, c.reproduced, printed)
        digits = len(printed.split(".")[1]) if "." in printed else 0
        assert abs(c.reproduced - float(printed)) <= 0.5 * 10 ** -digits + 1e-12
        # and independently of the package: Pearson r on the release, MAD outliers removed for -out
        lp, which = col.split(" ")
        sl = _sys(root, lp)
        keep = ~mad_outliers(sl.human) if which == "-out" else np.ones(len(sl.systems), bool)
        if row == "#sys":
            assert int(printed) == keep.sum()
            continue
        column = MAIN_METRICS[row] if key in ("table1", "table2") else row
        r = pearson(sl.human[keep], sl.scores[sl.metrics.index(column)][keep])
        assert f"{r:.3f}" == printed, (key, row, col, r)
    assert res.differing == []
    assert sum(len(t.compared) for t in res.tables) == 96


def test_table_layout_and_values(res):
    assert [t.key for t in res.tables] == TABLES
    t1, t2 = res.table("table1"), res.table("table2")
    assert t1.columns == [f"{lp} {w}" for lp in TABLE1_LPS for w in ("All", "-out")]
    assert t2.columns == [f"{lp} {w}" for lp in TABLE2_LPS for w in ("All", "-out")]
    assert t1.rows == t2.rows == ["#sys", "BLEU", "TER", "chrF", "ESIM", "YiSi-1", "YiSi-2"]
    # every cell of Tables 1-2 has a value; the untranscribed ones at the same precision
    for t in (t1, t2):
        assert all(c.reproduced is not None and c.reason is None for c in t.cells.values())
    assert t2.cell("#sys", "fr-de -out").reproduced_text == "7"
    assert t1.cell("chrF", "kk-en All").printed is None
    assert t1.cell("chrF", "kk-en All").reproduced_text == f"{t1.cell('chrF', 'kk-en All').reproduced:.3f}"
    # appendix: a -out column only where a pair has outliers (fi-en, en-cs, en-gu, ... have none)
    assert "fi-en -out" not in res.table("appendix-to-en").columns
    assert res.table("appendix-en-xx").columns[:3] == ["en-cs All", "en-de All", "en-de -out"]
    assert res.outliers["fr-de"] == ["online-X", "eTranslation", "MSRA.MADL"]
    assert res.outliers["en-de"] == ["en_de_task", "online-X"]


def test_cells_the_data_cannot_support(root, res):
    assert [a.split(" (")[0] for a, _ in res.unsupported] == [
        "Figure 3", "Section 5 Type I / Type II error counts over the 1,362 WMT19 system pairs"]
    assert all("segment-level" in why for _, why in res.unsupported)
    # appendix cells without data: exactly the (metric, pair) the release has no column for
    for key in TABLES[2:]:
        t = res.table(key)
        empty = {(c.row, c.column) for c in t.cells.values() if c.reproduced is None}
        want = set()
        for col in t.columns:
            metrics = set(_sys(root, col.split(" ")[0]).metrics)
            want |= {(r, col) for r in t.rows if r != "#sys" and ("LP.1" if r == "LP" else r) not in metrics}
        assert empty == want, key
        assert all("not submitted" in t.cell(*k).reason for k in empty)
    en_xx = res.table("appendix-en-xx")
    assert en_xx.cell("ESIM", "en-cs All").reproduced is None
    assert en_xx.cell("ESIM", "en-gu All").reproduced is None
    assert en_xx.cell("ESIM", "en-de All").reproduced == pytest.approx(0.991, abs=5e-4)


def test_figure1_numbers(res):
    top = res.figure("fig1-topn").data
    assert top["metrics"] == ["BLEU", "TER", "chrF", "YiSi-1", "ESIM"]
    assert top["n"].tolist() == list(range(16, 3, -1))
    t1 = res.table("table1")
    for j, m in enumerate(top["metrics"]):  # N = all systems is Table 1's de-en "All"
        assert top["r"][0, j] == pytest.approx(t1.cell(m, "de-en All").reproduced, abs=1e-12)
    # top 4 de-en systems: BLEU and chrF anti-correlate, ESIM does not (Tangled §4.1)
    np.testing.assert_allclose(top["r"][-1], [-0.823, -0.798, -0.610, 0.045, 0.895], atol=6e-4)
    for w in (4, 8):
        roll = res.figure(f"fig1-rolling{w}").data
        assert roll["start"].tolist() == list(range(16 - w + 1))
        assert roll["window"] == w
        # the last window is the top w systems
        np.testing.assert_allclose(roll["r"][-1], top["r"][top["n"].tolist().index(w)], atol=1e-12)
    assert top["systems_by_da"][0] == "Facebook_FAIR"
    # 95% bootstrap intervals (1000 resamples of the systems, Mathur 2021 Fig. 6.7): ordered, and at
    # N = 16 tight around r for chrF
    for f in ("fig1-topn", "fig1-rolling4", "fig1-rolling8"):
        d = res.figure(f).data
        assert d["low"].shape == d["high"].shape == d["r"].shape
        assert (d["low"] <= d["high"] + 1e-12).all()
    j = top["metrics"].index("chrF")
    assert top["low"][0, j] < top["r"][0, j] < top["high"][0, j]
    assert top["high"][0, j] - top["low"][0, j] < 0.3


def test_figure2_numbers(res):
    f = res.figure("fig2-subsets").data
    assert f["subsets"] == math.comb(22, 10)
    assert f["exhaustive"]
    assert dict(zip(f["groups"], f["count"].tolist())) == {
        "none": math.comb(20, 10), "en_de_task": math.comb(20, 9), "online-X": math.comb(20, 9),
        "en_de_task+online-X": math.comb(20, 8)}
    np.testing.assert_allclose(f["mean"][:, 0], [0.810, 0.988, 0.924, 0.981], atol=6e-4)  # BLEU per group
    assert (f["mean"][3] > f["mean"][0] + 0.05).all()


def test_output_files(out, res):
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"{t}.{e}" for t in TABLES for e in ("csv", "md")]
                           + [f"{f}.{e}" for f in FIGURES for e in ("csv", "png")] + ["index.html"])
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left
    with open(out / "table2.csv", newline="", encoding="utf-8") as fh:
        rows = {(r["row"], r["column"]): r for r in csv.DictReader(fh)}
    assert rows[("BLEU", "en-de -out")]["printed"] == "0.806"
    assert rows[("BLEU", "en-de -out")]["reproduced_rounded"] == "0.806"
    assert rows[("BLEU", "en-de -out")]["matches"] == "true"
    assert rows[("YiSi-2", "en-de All")]["printed"] == ""
    md = (out / "table1.md").read_text(encoding="utf-8")
    assert "| BLEU | **0.813** | **0.794** |" in md
    assert "0 differ" in md
    for f in FIGURES:
        assert (out / f"{f}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out / "fig1-topn.csv", newline="", encoding="utf-8") as fh:
        top = list(csv.reader(fh))
    assert top[0][:6] == ["n", "BLEU", "TER", "chrF", "YiSi-1", "ESIM"]
    assert top[0][6] == "BLEU low"
    assert len(top[0]) == 16
    assert top[-1][0] == "4"
    assert float(top[-1][1]) == pytest.approx(res.figure("fig1-topn").data["r"][-1, 0], abs=1e-12)
    html = (out / "index.html").read_text(encoding="utf-8")
    for t in TABLES:
        assert f'id="tab-{t}"' in html
    for f in FIGURES:
        assert f'id="fig-{f}"' in html
    assert html.count('class="same"') == 96
    assert 'class="diff"' not in html
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)


def test_rerun_replaces_and_foreign_folder_refused(root, out, tmp_path, capsys):
    (out / "stale.txt").write_text("x")
    assert main(["reproduce", "tangled", "--data", str(root), "--out", str(out)]) == 0
    assert not (out / "stale.txt").exists()
    assert (out / "index.html").is_file()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    (foreign / "index.html").write_text("<!DOCTYPE html><title>my page</title>")  # not ours: kept
    capsys.readouterr()
    assert main(["reproduce", "tangled", "--data", str(root), "--out", str(foreign)]) == 1
    err = capsys.readouterr().err
    assert "neither empty nor an earlier reproduction" in err
    assert err.count("\n") == 1
    assert sorted(p.name for p in foreign.iterdir()) == ["index.html", "notes.txt"]


def test_missing_file_exit_1_nothing_written(root, tmp_path, capsys):
    data = tmp_path / "data" / "tangled" / "wmt19_sys_scores"
    data.mkdir(parents=True)
    files = required_files(root)
    assert len(files) == 18
    # --data may name the shared data folder, its tangled/ folder or the files' folder itself
    assert required_files(root / "tangled") == files
    assert required_files(root / "tangled" / "wmt19_sys_scores") == files
    assert all(f.is_file() for f in files)
    for f in files:
        if "enkk" not in f.name:
            os.symlink(f, data / f.name)
    dest = tmp_path / "o" / "out"
    assert main(["reproduce", "tangled", "--data", str(tmp_path / "data"), "--out", str(dest)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("mtscore reproduce: error: missing data file ")
    assert str(data / "DA-newstest2019-enkk-sys-nohy-scores.csv") in err
    assert not (tmp_path / "o").exists()


def test_without_matplotlib_nothing_written(res, tmp_path, monkeypatch):
    from mtscore.analysis import plots
    from mtscore.bindings.reproduce import write_tangled
    from mtscore.engine.missing_extra import MissingExtraError, install_hint

    def refuse():
        raise MissingExtraError(f"plotting needs matplotlib: {install_hint('plot')}")

    monkeypatch.setattr(plots, "require_matplotlib", refuse)
    with pytest.raises(MissingExtraError, match="pip install"):
        write_tangled(res, tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


def test_help_says_which_files(capsys):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert "wmt19_sys_scores" in text
    assert "--data DIR" in text
    assert "index.html" in text


def test_index_html_in_chromium(out):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
    exe = chromium_executable()
    path = Path(out / "index.html")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe)
        try:
            _, page, log = open_local_page(b, path)
            for t in TABLES:
                assert page.locator(f"table#tab-{t}").is_visible(), t
            for f in FIGURES:
                img = page.locator(f"figure#fig-{f} img")
                assert img.is_visible(), f
                assert img.evaluate("i => i.complete && i.naturalWidth") > 300, f
            assert page.locator("section#unsupported").is_visible()
            assert page.locator("td.same").count() == 96
            assert page.locator("td.diff").count() == 0
            assert log["errors"] == []
            assert log["requests"] == [path.as_uri()]
        finally:
            b.close()
