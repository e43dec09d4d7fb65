"""The paper-independent writer of ``mtscore reproduce`` on a hand-made reproduction: a figure
without a drawing is a CSV and an HTML table, the title must mark the page as a reproduction,
cells compare at the printed precision."""
from __future__ import annotations

import pytest

from mtscore.bindings.reproduce import Cell, Extra, Figure, Reproduction, Table, write_reproduction


def _res() -> Reproduction:
    cells = {("a", "x"): Cell("t", "a", "x", 0.1234, "0.12", "Paper, Table 9"),
             ("b", "x"): Cell("t", "b", "x", 0.1264, "0.12", "Paper, Table 9"),
             ("c", "x"): Cell("t", "c", "x", 7.0, None, None, None, 0),
             ("d", "x"): Cell("t", "d", "x", None, "3", reason="not in the data")}
    fig = Figure("f", "Figure 9", {}, "numbers only", ["k", "v"], [["p", 0.5], ["q", 0.25]])
    return Reproduction([Table("t", "Table 9", ["a", "b", "c", "d"], ["x"], cells, "n")], [fig],
                        [("Table 10", "no data")], "Paper (2000)", "its data",
                        [Extra("e", "More", ["h"], [["<v>"]])])


def test_cells_and_files(tmp_path):
    res = _res()
    t = res.table("t")
    assert [c.matches for c in (t.cell("a", "x"), t.cell("b", "x"), t.cell("c", "x"), t.cell("d", "x"))] == \
        [True, False, None, None]
    assert t.cell("b", "x").reproduced_text == "0.13"
    assert t.cell("c", "x").reproduced_text == "7"
    assert t.cell("d", "x").digits == 0
    assert [c.row for c in res.differing] == ["b"]
    out = write_reproduction(res, tmp_path / "o", "Paper: reproduction")
    assert sorted(p.name for p in out.iterdir()) == ["f.csv", "index.html", "t.csv", "t.md"]
    assert (out / "f.csv").read_text() == "k,v\np,0.5\nq,0.25\n"
    html = (out / "index.html").read_text()
    assert '<table class="plain" id="fig-f">' in html  # the figure's numbers, no <img>
    assert "<img" not in html
    assert '<td data-v="0.25">0.2500</td>' in html
    assert "&lt;v&gt;" in html
    assert html.count('class="same"') == 1
    assert html.count('class="diff"') == 1
    assert "1 differ" in (out / "t.md").read_text()
    # an earlier reproduction (any paper's) is replaced
    write_reproduction(res, out, "Other: reproduction")
    with pytest.raises(ValueError, match="must end in"):
        write_reproduction(res, tmp_path / "p", "Paper")
    assert not (tmp_path / "p").exists()
