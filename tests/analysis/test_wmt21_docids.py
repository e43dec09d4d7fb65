"""``wmt21_seg_task`` joins the WMT21 DA file's SIDs to txt lines through document ids: SID k is
the k-th line once the lines are stably sorted by document id as strings. A synthetic release
in tmp_path (no shared data): three documents whose ids are not in sorted order."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.errors import AnalysisInputError
from mtscore.analysis.metaeval.wmt import wmt21_seg_task
from mtscore.bindings.cli.analysis import main

# txt order: text_34 (2 lines), text_205 (2 lines), a_doc (1 line); sorted ids: a_doc < text_205 < text_34
DOCIDS = ["text_34", "text_34", "text_205", "text_205", "a_doc"]
SID_LINE = {1: 4, 2: 2, 3: 3, 4: 0, 5: 1}          # SID -> 0-based txt line
REFS = ["the cat sat on the mat", "it was warm", "a dog barked", "then it slept", "one line alone"]


def _release(tmp_path: Path, sids=tuple(SID_LINE)) -> Path:
    root = tmp_path / "wmt21"
    da = root / "humaneval" / "newstest2021-toen" / "ad-seg-scores-de-en.csv"
    da.parent.mkdir(parents=True)
    # z score = 10 * system + the txt line the SID stands for, so a misjoin shows
    rows = [f"{s}.7 {sid} 50 {10 * k + SID_LINE.get(sid, 0)} 1" for k, s in enumerate(("SysA", "SysB"))
            for sid in sids]
    da.write_text("SYS SID RAW.SCR Z.SCR N\n" + "\n".join(rows) + "\n", encoding="utf-8")
    txt = root / "txt"
    (txt / "references").mkdir(parents=True)
    (txt / "references" / "newstest2021.de-en.ref.A.en").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    (txt / "system-outputs").mkdir()
    for s, hyps in (("SysA", REFS), ("SysB", [r.upper() for r in REFS])):
        (txt / "system-outputs" / f"newstest2021.de-en.hyp.{s}.en").write_text("\n".join(hyps) + "\n",
                                                                               encoding="utf-8")
    (root / "de-en.docid").write_text("\n".join(DOCIDS) + "\n", encoding="utf-8")
    return root


def test_sids_land_on_doc_id_order_lines(tmp_path):
    root = _release(tmp_path)
    t = wmt21_seg_task(root, "de-en", metrics=("chrF",), docids=root / "de-en.docid")
    assert t.systems == ["SysA", "SysB"]
    np.testing.assert_array_equal(t.human, [[0, 1, 2, 3, 4], [10, 11, 12, 13, 14]])
    assert t.metrics.shape == (1, 2, 5)
    assert (t.metrics[0, 0] == 100).all()                  # SysA's outputs are the references
    same = wmt21_seg_task(root, "de-en", metrics=("chrF",), docids=DOCIDS)   # a sequence of str
    np.testing.assert_array_equal(same.human, t.human)


def test_without_docids_says_why(tmp_path):
    root = _release(tmp_path)
    with pytest.raises(AnalysisInputError, match=r"ad-seg-scores-de-en\.csv: the DA file's SIDs count segments "
                                                 r"in document-id order.*--docids FILE.*"
                                                 r"sacrebleu -t wmt21 -l de-en --echo docid"):
        wmt21_seg_task(root, "de-en", metrics=("chrF",))


def test_docid_count_must_equal_reference_lines(tmp_path):
    root = _release(tmp_path)
    bad = root / "short.docid"
    bad.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(AnalysisInputError, match=r"short\.docid: 2 document ids for 5 lines of .*ref\.A\.en"):
        wmt21_seg_task(root, "de-en", metrics=("chrF",), docids=bad)
    with pytest.raises(AnalysisInputError, match=r"docids: .*nope\.docid: file not found"):
        wmt21_seg_task(root, "de-en", metrics=("chrF",), docids=root / "nope.docid")


@pytest.mark.parametrize("sid", [6, 0])
def test_sid_out_of_range_names_da_line(tmp_path, sid):
    root = _release(tmp_path, sids=(1, 2, sid, 3, 4, 5))
    with pytest.raises(AnalysisInputError, match=rf"ad-seg-scores-de-en\.csv:4: SID {sid} out of range: "
                                                 r"the test set has 5 segments"):
        wmt21_seg_task(root, "de-en", metrics=("chrF",), docids=DOCIDS)


def test_cli_docids(tmp_path, capsys):
    root = _release(tmp_path)
    argv = ["meta", "seg", "--data", str(root), "--release", "wmt21", "--lp", "de-en", "--metrics", "chrF",
            "--k", "0", "--format", "json"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("mtscore: error: ")
    assert "--docids FILE" in err
    assert err.count("\n") == 1
    assert main([*argv, "--docids", str(root / "de-en.docid")]) == 0
    assert '"systems": [\n  "SysA",\n  "SysB"\n ]' in capsys.readouterr().out
