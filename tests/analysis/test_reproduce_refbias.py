"""``mtscore reproduce refbias``: Ma et al. (2017) "Further Investigation into Reference Bias" rebuilt
from the released Fomicheva & Specia ratings: Table 2 at the printed precision, the text's numbers,
Figures 1 (e)-(f), 2, 3, 4 and the files written."""
from __future__ import annotations

import csv
import re

import numpy as np
import pytest
from conftest import require

from mtscore.analysis.data.judge_ratings import read_judge_ratings
from mtscore.bindings.cli.main import main
from mtscore.bindings.reproduce import reproduce_refbias
from mtscore.bindings.reproduce.refbias import GROUPS, required_files
from mtscore.bindings.reproduce.refbias_printed import PRINTED

FIGURES = ["fig1-bootstrap", "fig2-kappas", "fig3-ranges", "fig4-diff", "fig4-same", "fig4-source-ref",
           "fig4-source"]


@pytest.fixture(scope="module")
def root(shared_data):
    require(shared_data / "refbias" / "ratings_all")
    return shared_data


@pytest.fixture(scope="module")
def res(root):
    return reproduce_refbias(root)


@pytest.fixture(scope="module")
def out(root, tmp_path_factory):
    pytest.importorskip("matplotlib", reason="figures need matplotlib (the plot extra)")
    d = tmp_path_factory.mktemp("repro") / "refbias-out"
    assert main(["reproduce", "refbias", "--data", str(root), "--out", str(d)]) == 0
    return d


def test_table2_every_printed_cell(res):
    """Table 2: 47% (45), 29% (400), 27% (1,500), 12% (780), 13% (6,000), 12% (11,175)."""
    want = {("SOURCE", "SOURCE"): (47, 45), ("SOURCE", "SAME"): (29, 400), ("SOURCE", "DIFF"): (27, 1500),
            ("SAME", "SAME"): (12, 780), ("SAME", "DIFF"): (13, 6000), ("DIFF", "DIFF"): (12, 11175)}
    t, n = res.table("table2"), res.table("table2-pairs")
    for (a, b), (pct, pairs) in want.items():
        assert t.cell(a, b).reproduced_text == str(pct)
        assert t.cell(a, b).matches is True
        assert n.cell(a, b).reproduced == pairs
        assert n.cell(a, b).matches is True
    assert len(t.compared) == len(n.compared) == 6
    # the lower triangle is empty, with a reason
    assert t.cell("DIFF", "SAME").reproduced is None
    assert "upper" in t.cell("DIFF", "SAME").reason
    # the unrounded share: 21 of 45 SOURCE pairs of pairs do not overlap
    assert t.cell("SOURCE", "SOURCE").reproduced == pytest.approx(100 * 21 / 45)


def test_text_numbers(res):
    """Fig. 3's ranges 0.76 and 0.97 reproduce; the SAME - DIFF gap of the mean kappas is 0.032
    on the release (means 0.197 and 0.164; the paper prints 0.034) and is marked as differing."""
    t = res.table("text")
    ok = {c.row for c in t.compared if c.matches}
    assert ok == {"range of the reference groups' (G2-G5) average ratings",
                  "widest range of judges' average ratings within one group (G5)"}
    gap = t.cell("mean kappa SAME - DIFF", "value")
    assert (gap.reproduced_text, gap.printed, gap.matches) == ("0.032", "0.034", False)
    assert [(c.row, c.printed) for c in res.differing] == [("mean kappa SAME - DIFF", "0.034")]
    assert {s: t.cell(f"mean kappa {s}", "value").reproduced_text for s in ("SOURCE", "SAME", "DIFF")} == \
        {"SOURCE": "0.247", "SAME": "0.197", "DIFF": "0.164"}
    assert len([k for k in PRINTED if k[0] == "text"]) == 3


def test_figures_numbers(root, res):
    f1 = {(p[0], p[2]): p[3:] for p in res.figure("fig1-bootstrap").points}
    assert set(f1) == {("e", "SAME"), ("e", "DIFF"), ("f", "SAME"), ("f", "DIFF")}
    # (f), the corrected bootstrap: SAME ~[0.165, 0.230], DIFF ~[0.147, 0.179]; they overlap
    for s, (lo, hi) in {"SAME": (0.165, 0.230), "DIFF": (0.147, 0.179)}.items():
        assert abs(f1[("f", s)][1] - lo) < 0.004
        assert abs(f1[("f", s)][2] - hi) < 0.004
    assert f1[("f", "SAME")][1] < f1[("f", "DIFF")][2]
    d = res.figure("fig2-kappas").data["distributions"]
    assert {s: len(v) for s, v in d.items()} == {"SOURCE": 10, "SAME": 40, "DIFF": 150, "SOURCE-REF": 100}
    assert len(res.figure("fig2-kappas").points) == 300
    rr = res.figure("fig3-ranges").data["ranges"]
    assert rr.reference_groups == ["G2", "G3", "G4", "G5"]
    assert {g: round(v, 2) for g, v in rr.within_range.items()} == \
        {"G1": 0.41, "G2": 0.55, "G3": 0.66, "G4": 0.91, "G5": 0.97}
    # independently: judge j9 (G5) averages 2.51 over the 100 items
    judges, _, R = read_judge_ratings(root / "refbias" / "ratings_all")
    assert R[judges.index("j9")].mean() == pytest.approx(2.51)
    assert dict(p[:2] for p in res.figure("fig3-ranges").points)["j3"] == "G1"
    same = res.figure("fig4-same").data
    assert same["counts"].sum() == 2 * 40 * 100
    assert np.allclose(np.asarray(same["row_percent"]).sum(axis=1), 100)
    src = np.isin(np.arange(25), [i - 1 for i in GROUPS["G1"]])
    want = [(R[src] == v).sum() * 20 for v in (1, 2, 3, 4, 5)]
    assert res.figure("fig4-source-ref").data["counts"].sum(axis=1).tolist() == want


def test_unsupported(res):
    assert [a.split(" (")[0] for a, _ in res.unsupported] == [
        "Figure 1", "The GEN-REF vs POST-EDIT DA experiment"]


def test_output_files(out, res):
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["index.html", *(f"{t}.{e}" for t in ("table2", "table2-pairs", "text") for e in ("csv", "md")),
                            *(f"{f}.csv" for f in FIGURES), *(f"{f}.png" for f in FIGURES)])
    for f in FIGURES:
        assert (out / f"{f}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out / "table2.csv", newline="", encoding="utf-8") as fh:
        rows = {(r["row"], r["column"]): r for r in csv.DictReader(fh)}
    assert (rows[("SAME", "DIFF")]["reproduced_rounded"], rows[("SAME", "DIFF")]["printed"],
            rows[("SAME", "DIFF")]["matches"]) == ("13", "13", "true")
    with open(out / "fig1-bootstrap.csv", newline="", encoding="utf-8") as fh:
        f1 = list(csv.reader(fh))
    assert f1[0] == ["panel", "what", "setting", "mean", "low", "high"]
    assert len(f1) == 5
    assert "| SOURCE | **47** | **29** | **27** |" in (out / "table2.md").read_text(encoding="utf-8")
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "<title>Reference bias (Ma et al. 2017): reproduction</title>" in html
    assert html.count('class="same"') == 14
    assert html.count('class="diff"') == 1
    for f in FIGURES:
        assert f'id="fig-{f}"' in html
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)


def test_missing_file_exit_1(root, tmp_path, capsys):
    assert required_files(root) == [root / "refbias" / "ratings_all"]
    assert required_files(root / "refbias") == [root / "refbias" / "ratings_all"]
    dest = tmp_path / "o" / "out"
    assert main(["reproduce", "refbias", "--data", str(tmp_path), "--out", str(dest)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("mtscore reproduce: error: missing data file ")
    assert str(tmp_path / "refbias" / "ratings_all") in err
    assert not (tmp_path / "o").exists()
