"""``mtscore reproduce wmt21``: the WMT21 DA system rankings, Wilcoxon matrices and significance
clusters rebuilt from the released ratings (wmt21-news-systems @f41750d, humaneval/) and compared
with the official ranking / adwilcox / clusters files (raw: from the released segment scores),
the output folder, the errors."""
from __future__ import annotations

import csv

import pytest
from conftest import require

from mtscore.bindings.cli.main import main
from mtscore.bindings.reproduce.wmt21 import DUPLICATED, FROM_RATINGS, FROM_SEGMENTS, reproduce_wmt21, required_files
from tests.reproduce_support import link_all_but, missing_file_fails

LPS = list(FROM_RATINGS) + list(FROM_SEGMENTS)
# systems per language pair in the official ranking files (rows of each table)
N_SYSTEMS = {"cs-en": 9, "de-en": 20, "ha-en": 14, "is-en": 10, "ja-en": 16, "ru-en": 11,
             "bn-hi": 9, "hi-bn": 9, "xh-zu": 6, "zu-xh": 5, "zh-en": 24}
# the only cells that differ: N.ALL where the official count includes duplicated judgements
# (same worker and score recorded twice) that the de-duplicated ratings file holds once
EXPECTED_DIFF = {("ranking-de-en", "UF.15", "N.ALL"): (1251, "1270"),
                 ("ranking-de-en", "Online-B.11", "N.ALL"): (1212, "1236"),
                 ("ranking-de-en", "P3AI.18", "N.ALL"): (1182, "1212"),
                 ("ranking-is-en", "Online-A.5", "N.ALL"): (1112, "1113")}
FIGURES = ["fig-pairs", "fig-pairwise-BLEU", "fig-pairwise-chrF", "fig-agreement"]


@pytest.fixture(scope="module")
def root(shared_data):
    require(shared_data / "wmt21-news-systems" / "humaneval" / "newstest2021-toen")
    require(shared_data / "wmt21-news-systems" / "humaneval" / "facebook-wikipedia-2021")
    return shared_data


@pytest.fixture(scope="module")
def res(root):
    return reproduce_wmt21(root)


@pytest.fixture(scope="module")
def out(root, tmp_path_factory):
    pytest.importorskip("matplotlib", reason="the pairwise-decision figure needs matplotlib (the plot extra)")
    d = tmp_path_factory.mktemp("repro") / "wmt21-out"
    assert main(["reproduce", "wmt21", "--data", str(root), "--out", str(d)]) == 0
    return d


def test_every_official_cell_reproduced(res):
    assert [t.key for t in res.tables] == [f"ranking-{lp}" for lp in LPS] + ["wilcoxon", "pairs", "pairs-lp",
                                                                             "agreement"]
    assert [f.key for f in res.figures] == FIGURES
    for lp in LPS:
        t = res.table(f"ranking-{lp}")
        assert len(t.rows) == N_SYSTEMS[lp]
        per_row = 6 if lp in FROM_SEGMENTS else 7  # zh-en: no N.ALL (ratings file not in the snapshot)
        assert len(t.compared) == per_row * N_SYSTEMS[lp], lp
        # the reproduced order is the official one: every rank cell equals its line in the file
        assert all(t.cell(s, "rank").matches for s in t.rows), lp
    diff = {(c.table, c.row, c.column): (c.reproduced, c.printed) for c in res.differing}
    assert diff == EXPECTED_DIFF
    # each difference is exactly the duplicated judgements the ratings file holds once
    for lp, n in DUPLICATED.items():
        assert sum(int(p) - v for (t, _, _), (v, p) in EXPECTED_DIFF.items() if t == f"ranking-{lp}") == n
    assert len(res.compared) == 940  # 929 + "all decisions equal" of the 11 pairs (the pairwise tables print none)


def test_known_values(res):
    de = res.table("ranking-de-en")
    assert de.rows[:3] == ["Borderline.4", "Online-A.12", "Online-W.3"]
    c = de.cell("Borderline.4", "z")
    assert (c.printed, c.reproduced_text) == ("0.126", "0.126")
    assert de.cell("Borderline.4", "N").reproduced == 944
    assert (de.cell("Borderline.4", "raw").printed, de.cell("Borderline.4", "raw").reproduced_text) == ("71.9", "71.9")
    assert de.cell("UF.15", "wins").reproduced == 16
    assert de.cell("UF.15", "cluster").reproduced == 1
    bh = res.table("ranking-bn-hi")  # Facebook Wikipedia pair, quoted system names in the ratings file
    assert bh.rows[:2] == ["GTCOM.0", "Online-B.5"]
    assert bh.cell("GTCOM.0", "z").reproduced_text == "0.202"
    assert bh.cell("TRANSSION.3", "cluster").reproduced == 3
    zh = res.table("ranking-zh-en")
    assert zh.cell(zh.rows[0], "N.ALL").reproduced is None
    assert "segment scores" in (zh.cell(zh.rows[0], "N.ALL").reason or "")
    w = res.table("wilcoxon")
    assert all(w.cell(lp, "all p equal").reproduced == 1.0 for lp in LPS)
    assert all(w.cell(lp, "all decisions equal").reproduced == 1.0 for lp in LPS)
    # the pairwise decisions (tests/analysis/test_wmt21_pairs.py rebuilds ru-en's independently)
    lpt = res.table("pairs-lp")
    assert lpt.rows == ["cs-en", "de-en", "ha-en", "is-en", "ja-en", "ru-en", "zh-en"]
    assert [lpt.cell("ru-en", c).reproduced for c in lpt.columns] == [45, 29, 18, 4, 17, 3]
    pt = res.table("pairs")
    assert [pt.cell("BLEU all", c).reproduced_text for c in pt.columns] == ["753", "382", "280", "91", "0.493"]
    assert [pt.cell("chrF all", c).reproduced_text for c in pt.columns] == ["753", "388", "278", "87", "0.485"]
    assert sum(pt.cell(r, "pairs").reproduced or 0 for r in pt.rows if r.startswith("BLEU ") and r != "BLEU all") == 753
    assert sum(lpt.cell(lp, "pairs").reproduced or 0 for lp in lpt.rows) == 753
    assert w.cell("de-en", "significant pairs").printed == w.cell("de-en", "significant pairs").reproduced_text
    assert int(w.cell("de-en", "significant pairs").printed or 0) > 100


def test_output_files(out):
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"ranking-{lp}.{e}" for lp in LPS for e in ("csv", "md")]
                           + [f"{k}.{e}" for k in ("wilcoxon", "pairs", "pairs-lp", "agreement") for e in ("csv", "md")]
                           + [f"{f}.{e}" for f in FIGURES for e in ("csv", "png")] + ["index.html"])
    with open(out / "ranking-de-en.csv", newline="", encoding="utf-8") as fh:
        rows = {(r["row"], r["column"]): r for r in csv.DictReader(fh)}
    assert rows[("Borderline.4", "z")]["printed"] == "0.126"
    assert rows[("Borderline.4", "z")]["matches"] == "true"
    assert rows[("UF.15", "N.ALL")]["matches"] == "false"
    md = (out / "ranking-de-en.md").read_text(encoding="utf-8")
    assert "3 differ" in md
    html = (out / "index.html").read_text(encoding="utf-8")
    assert html.count('class="diff"') == 4
    assert html.count('class="same"') == 936
    assert "(ours on WMT21 data; Tangled" in html
    assert "Fig. 3 used WMT19)" in html
    assert "duplicated judgement" in html


def test_agreement_matrix_rebuilt_from_the_decision_rows(res):
    """Cell (A, B) = pairs where A errs and B is right, counted from the per-pair CSV rows of the two
    scatter figures; diagonal = A's Type I + Type II of the pooled ``pairs`` table."""
    errs = {}
    for m in ("BLEU", "chrF"):
        f = res.figure(f"fig-pairwise-{m}")
        assert f.head == ["lp", "sys_a", "sys_b", "metric_delta", "human_delta", "human", "metric_sig", "error"]
        assert len(f.points) == 753
        errs[m] = {(row[0], *sorted(row[1:3])): row[-1] != "" for row in f.points}
        assert len(errs[m]) == 753  # no pair twice once keyed by language pair
        assert {row[-1] for row in f.points} == {"", "I", "II"}
        assert all((row[-1] == "II") == (row[6] == "false" and row[5] != 0) for row in f.points)
    assert errs["BLEU"].keys() == errs["chrF"].keys()
    table, pairs = res.table("agreement"), res.table("pairs")
    for a in ("BLEU", "chrF"):
        for b in ("BLEU", "chrF"):
            want = (sum(errs[a].values()) if a == b else
                    sum(e and not errs[b][k] for k, e in errs[a].items()))
            assert table.cell(a, b).reproduced == want, (a, b)
        total = pairs.cell(f"{a} all", "Type I").reproduced + pairs.cell(f"{a} all", "Type II").reproduced
        assert table.cell(a, a).reproduced == total
    assert [[table.cell(a, b).reproduced for b in ("BLEU", "chrF")] for a in ("BLEU", "chrF")] == [[371, 60],
                                                                                                  [54, 365]]
    assert res.figure("fig-agreement").points == [["BLEU", 371, 60], ["chrF", 54, 365]]


def test_missing_file_exit_1_nothing_written(root, tmp_path, capsys):
    files = required_files(root)
    assert len(files) == 63  # 45 + the 11 ad-DA-diff-wilcoxon-rs matrices + the 7 to-English references
    assert required_files(root / "wmt21-news-systems" / "humaneval") == files
    assert all(f.is_file() for f in files)
    base = root / "wmt21-news-systems"
    gone = base / "humaneval" / "newstest2021-toen" / "adwilcox-jaen.csv"
    missing = link_all_but(files, base, tmp_path / "data", gone)
    missing_file_fails(capsys, "wmt21", tmp_path / "data", missing, tmp_path / "o")


def test_help_lists_wmt21(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = capsys.readouterr().out
    assert "wmt21:" in text
    assert "wmt21-news-systems/humaneval" in text
