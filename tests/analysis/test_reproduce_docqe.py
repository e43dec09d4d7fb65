"""``mtscore reproduce docqe``: Graham et al. (2017, EACL) document-level DA rebuilt from the raw
MTurk batches of both runs: Table 1, the 0.901 self-replication r, Figure 2 and the files written."""
from __future__ import annotations

import csv
import re
import shutil

import numpy as np
import pytest
from conftest import require

from mtscore.bindings.cli.main import main
from mtscore.bindings.reproduce import reproduce_docqe
from mtscore.bindings.reproduce.docqe import required_files
from mtscore.bindings.reproduce.docqe_printed import RUN_A, RUN_B


@pytest.fixture(scope="module")
def root(shared_data):
    require(shared_data / "docqe-eacl2017" / "batched-hits")
    return shared_data


@pytest.fixture(scope="module")
def res(root):
    return reproduce_docqe(root)


@pytest.fixture(scope="module")
def out(root, tmp_path_factory):
    pytest.importorskip("matplotlib", reason="figures need matplotlib (the plot extra)")
    d = tmp_path_factory.mktemp("repro") / "docqe-out"
    assert main(["reproduce", "docqe", "--data", str(root), "--out", str(d)]) == 0
    return d


def test_table1(res):
    """The paper's Run A (release runB): 14,600 judgements, 6,640 SYSTEM+REPEAT after QC, 107 per
    document, all exact; its Run B (release runA) 10,050 / 7,700 / 124 are not the release's
    10,500 / 6,160 (7,700 counting every item type) / 99.4: marked as differing."""
    t = res.table("table1")
    got = {(c.row, c.column): (c.reproduced_text, c.matches) for c in t.cells.values()}
    assert got == {
        (RUN_A, "judgements"): ("14600", True), (RUN_A, "after QC"): ("6640", True),
        (RUN_A, "after QC, all item types"): ("8300", None), (RUN_A, "per document"): ("107", True),
        (RUN_B, "judgements"): ("10500", False), (RUN_B, "after QC"): ("6160", False),
        (RUN_B, "after QC, all item types"): ("7700", None), (RUN_B, "per document"): ("99", False)}
    assert t.cell(RUN_A, "per document").reproduced == pytest.approx(6640 / 62)
    assert round(t.cell(RUN_B, "per document").reproduced, 1) == 99.4


def test_self_replication(res):
    t = res.table("reliability")
    r = t.cell("r, run A vs run B document scores", "value")
    assert (r.reproduced_text, r.printed, r.matches) == ("0.901", "0.901", True)
    assert round(r.reproduced, 4) == 0.9013
    assert t.cell("r, run A vs run B raw document means", "value").reproduced_text == "0.863"
    assert t.cell("documents", "value").reproduced == 62
    assert t.cell("fewest repeat assessments of a document's sentences", "value").matches is True
    assert t.cell("mean sentence assessments per document", "value").matches is True
    # 7 printed cells equal, 3 (Table 1, Run B) differ
    assert len(res.compared) == 9
    assert sorted((c.row, c.column) for c in res.differing) == [
        (RUN_B, "after QC"), (RUN_B, "judgements"), (RUN_B, "per document")]
    assert [a.split(",")[0] for a, _ in res.unsupported] == ["Table 1", "Evaluation of the WMT-16 document-level QE systems against the new gold standard"]


def test_figure2(res):
    """Rows of the release's n/cor.csv: (min repeats, mean per document, r)."""
    d = res.figure("fig2-downsampling").data
    assert len(d["r"]) == 83
    golden = {0: (1, 2.10526315789474, 0.478848799917178), 13: (3, 18.0645161290323, 0.826223380634285),
              30: (9, 40.0, 0.817244687834766), 82: (27, 107.09677419354839, 0.90129167)}
    for k, (mn, mean, r) in golden.items():
        assert d["min_n"][k] == mn
        assert abs(d["mean_n"][k] - mean) < 1e-9
        assert abs(d["r"][k] - r) < 1e-8
    assert np.all(np.diff(d["hits"]) == 1)
    assert res.figure("fig2-downsampling").points[-1][1] == 27


def test_output_files(out):
    assert sorted(p.name for p in out.iterdir()) == [
        "fig2-downsampling.csv", "fig2-downsampling.png", "index.html", "reliability.csv", "reliability.md",
        "table1.csv", "table1.md"]
    assert (out / "fig2-downsampling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out / "table1.csv", newline="", encoding="utf-8") as fh:
        rows = {(r["row"], r["column"]): r for r in csv.DictReader(fh)}
    assert (rows[(RUN_B, "judgements")]["reproduced_rounded"], rows[(RUN_B, "judgements")]["printed"],
            rows[(RUN_B, "judgements")]["matches"]) == ("10500", "10050", "false")
    with open(out / "fig2-downsampling.csv", newline="", encoding="utf-8") as fh:
        fig = list(csv.reader(fh))
    assert fig[0] == ["hits", "min_n", "mean_n", "n_docs", "r"]
    assert len(fig) == 84
    assert round(float(fig[-1][4]), 3) == 0.901
    assert "**0.901**" in (out / "reliability.md").read_text(encoding="utf-8")
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "<title>Document-level DA (Graham et al. 2017, EACL): reproduction</title>" in html
    assert html.count('class="same"') == 6
    assert html.count('class="diff"') == 3
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)


def test_missing_file_exit_1(root, tmp_path, capsys):
    src = root / "docqe-eacl2017"
    assert required_files(root) == required_files(src) == [
        src / "seg-key-enes", src / "batched-hits" / "runA", src / "batched-hits" / "runB"]
    d = tmp_path / "data" / "docqe-eacl2017"
    (d / "batched-hits").mkdir(parents=True)
    shutil.copy(src / "seg-key-enes", d / "seg-key-enes")
    (d / "batched-hits" / "runA").symlink_to(src / "batched-hits" / "runA")
    dest = tmp_path / "o" / "out"
    assert main(["reproduce", "docqe", "--data", str(tmp_path / "data"), "--out", str(dest)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("mtscore reproduce: error: missing data file ")
    assert str(d / "batched-hits" / "runB") in err
    assert not (tmp_path / "o").exists()
