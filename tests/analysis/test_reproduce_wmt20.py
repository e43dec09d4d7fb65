"""``mtscore reproduce wmt20``: the WMT20 metrics task's official system- and segment-level results
(wmt20-metrics @3e434fc, results/output/) rebuilt from the DA and metric scores of the release,
every cell compared with the official file; the output folder, the errors.

One CLI run (about 20 s of CPU) feeds every test: the cells are read back from the CSVs it writes."""
from __future__ import annotations

import csv
from collections import Counter

import numpy as np
import pytest
from conftest import require

from mtscore.analysis.correlation import pearson
from mtscore.analysis.data import read_cor
from mtscore.analysis.data.released import wmt20_outliers, wmt20_sys_level
from mtscore.bindings.cli.main import main
from mtscore.bindings.reproduce.wmt20 import SEG_LPS, SEG_METRICS, SEG_SUBMISSIONS, SYS_KEYS, required_files
from mtscore.bindings.reproduce.wmt20_doc import DOC_LPS, doc_pairs
from tests.reproduce_support import link_all_but, missing_file_fails

TABLES = ["sys-pearson-all", "sys-pearson-excl", "sys-kendall-all", "sys-winners", "sys-williams", "seg-darr", "seg-darr-ci", "doc-darr"]


@pytest.fixture(scope="module")
def root(shared_data):
    require(shared_data / "wmt20-metrics" / "results" / "output")
    return shared_data


@pytest.fixture(scope="module")
def out(root, tmp_path_factory):
    d = tmp_path_factory.mktemp("repro") / "wmt20-out"
    assert main(["reproduce", "wmt20", "--data", str(root), "--out", str(d)]) == 0
    return d


@pytest.fixture(scope="module")
def cells(out):
    res = {}
    for t in TABLES:
        with open(out / f"{t}.csv", newline="", encoding="utf-8") as fh:
            res[t] = {(r["row"], r["column"]): r for r in csv.DictReader(fh)}
    return res


def test_every_official_cell_reproduced(cells):
    compared = {t: [r for r in c.values() if r["matches"]] for t, c in cells.items()}
    # every metric of every one of the 30 LP / reference-set keys (the existing golden test's 872)
    # sys-pearson-all: the 552 values of the findings' LaTeX tables (19 newstest2020 keys, 3 decimals)
    assert {t: len(v) for t, v in compared.items()} == {
        "sys-pearson-all": 552, "sys-pearson-excl": 872, "sys-kendall-all": 872, "sys-winners": 872, "sys-williams": 98, "seg-darr": 208, "seg-darr-ci": 0, "doc-darr": 808}
    assert len(SYS_KEYS) == 30
    # DARR: chrF and TER on all 18 pairs, 10 submissions on the pairs they cover, all / without outliers
    assert len(compared["seg-darr"]) == len(SEG_LPS) * len(SEG_METRICS) * 2 + 136
    assert {k[0] for k, r in cells["seg-darr"].items() if r["matches"]} == set(SEG_METRICS + SEG_SUBMISSIONS)
    differing = sorted((t, r["row"], r["column"]) for t, v in compared.items() for r in v if r["matches"] != "true")
    # twin metrics (identical scores) make the Williams statistic 0/0: the official R code printed NaN
    # (neither twin wins) everywhere except esim / paresim-1 on eniu_full, where rounding noise gave
    # a non-significant p (0.12) and both stayed winners; the reproduction treats all twins alike
    # document level: every cell, en-cs included (its N = 1 document score takes part in no pair)
    assert differing == [("sys-winners", "esim", "eniu_full"), ("sys-winners", "paresim-1", "eniu_full")]
    for _, row, col in differing:
        assert (cells["sys-winners"][(row, col)]["reproduced_rounded"], cells["sys-winners"][(row, col)]["printed"]) \
            == ("0", "1")


def test_printed_values_are_the_release(root, cells):
    """The 'printed' column is the official file's value (12 decimals), not a transcription."""
    base = root / "wmt20-metrics" / "results" / "output" / "system-level"
    for key in ("ende", "zhen_B", "eniu_news"):
        ref = read_cor(base / f"DA-{key}-cor-excloutl.csv")
        for m, v in zip(ref.column("metric").to_pylist(), ref.column("Pearson").to_pylist()):
            assert cells["sys-pearson-excl"][(m, key)]["printed"] == f"{v:.12f}"


def test_latex_headers_permuted(out, cells):
    """The all-systems LaTeX tables' headers do not match their data: the printed 'pl-en' column
    holds ja-en's 10 systems (assigned by system count and every value); 4 of 19 headers are right."""
    html = (out / "index.html").read_text(encoding="utf-8")
    row = ('<td class="t">tbl-DA-Pearson-MTall-exclhuman-toen.tex</td><td class="t">pl-en</td>'
           '<td class="t">10</td><td class="t">ja-en</td><td class="t">NO</td>')
    assert row in html
    assert html.count('<td class="t">yes</td>') == 4
    assert html.count('<td class="t">NO</td>') == 15
    c = cells["sys-pearson-all"][("chrF", "jaen")]
    assert c["source"] == "tbl-DA-Pearson-MTall-exclhuman-toen.tex column 'pl-en'"
    assert c["printed"] == c["reproduced_rounded"] == "0.968"


def test_known_values(root, cells):
    pe = cells["sys-pearson-excl"]
    # mt-metrics-eval's data_test expectations for WMT20 en-de (outliers excluded)
    assert f'{float(pe[("BLEU", "ende")]["reproduced"]):.3f}' == "0.825"
    assert f'{float(pe[("COMET", "ende")]["reproduced"]):.3f}' == "0.863"
    # independent recomputation of one cell
    w = root / "wmt20-metrics"
    sl = wmt20_sys_level(w, "de-en").without(wmt20_outliers(w, "de-en"))
    r = pearson(sl.human, sl.scores[sl.metrics.index("chrF")])
    assert float(pe[("chrF", "deen")]["reproduced"]) == pytest.approx(r, abs=1e-15)
    darr = cells["seg-darr"]
    # de-en chrF: 0.4379 over 16,584 pairs, 0.01762 once pairs with an outlier system are dropped
    assert (darr[("chrF", "de-en all")]["printed"], darr[("chrF", "de-en all")]["reproduced_rounded"]) \
        == ("0.4379", "0.4379")
    assert (darr[("chrF", "de-en -out")]["printed"], darr[("chrF", "de-en -out")]["reproduced_rounded"]) \
        == ("0.01762", "0.01762")
    # Williams: 30 keys without outliers + the 19 with an all-systems file, every p-value equal;
    # 6,123 significant pairs in all (the non-sentinel entries of the 49 DA-*-sig*.csv files)
    wl = cells["sys-williams"]
    assert sum(int(r["printed"]) for k, r in wl.items() if k[1].endswith("significant") and r["printed"]) == 6123
    assert all(r["reproduced_rounded"] == "1" for k, r in wl.items() if k[1].endswith("p equal") and r["printed"])
    assert wl[("deen_B", "all significant")]["reason"] == "no DA-deen_B-sig.csv in the release"
    assert (darr[("parbleu", "de-en all")]["printed"], darr[("parbleu", "de-en all")]["reproduced_rounded"]) \
        == ("0.415", "0.415")
    assert darr[("BAQ_dyn", "de-en all")]["reason"] == "BAQ_dyn has no de-en segment scores"
    # document level: en-de keeps its Human-P translation in the pairs, as the task's script does
    dd = cells["doc-darr"]
    assert (dd[("chrF", "en-de all")]["printed"], dd[("chrF", "en-de all")]["reproduced_rounded"]) \
        == ("0.5967", "0.5967")
    assert (dd[("chrF", "de-en -out")]["printed"], dd[("chrF", "de-en -out")]["reproduced_rounded"]) \
        == ("0.00202", "0.00202")
    # en-cs over the official 1442 / 572 document pairs (Online-B.1589's N = 1 document left out)
    assert (dd[("chrF", "en-cs all")]["printed"], dd[("chrF", "en-cs all")]["reproduced_rounded"]) \
        == ("0.6879", "0.6879")
    assert (dd[("chrF", "en-cs -out")]["printed"], dd[("chrF", "en-cs -out")]["reproduced_rounded"]) \
        == ("0.2902", "0.2902")
    wi = cells["sys-winners"]
    assert wi[("HUMAN_RAW", "deen")]["reproduced_rounded"] == "1"
    assert sum(r["reproduced_rounded"] == "1" for r in wi.values()) > 100
    # a metric without scores for a key: no value, a reason
    assert any(r["reproduced"] == "" and r["reason"].startswith("no ") for r in pe.values())


def test_doc_pairs_are_the_official_pairs(root):
    """Every language pair's document pairs equal, as a multiset of (document, better, worse), the
    official ``doclevel_*/RR-newstest2020-<lp>-seg-nohy-agree.csv`` rows; en-cs only because its one
    document score over a single rated segment (Online-B.1589, thesun.co.uk.27377, N = 1 of 26) is
    left out, as the task's DA2RR/seglevel-ken-rr.py skips 'nannot < 2' rows (1449 -> 1442 pairs)."""
    w = root / "wmt20-metrics"
    require(w / "results" / "output" / "doclevel_allsys" / "RR-newstest2020-encs-seg-nohy-agree.csv")
    for lp in DOC_LPS:
        with open(w / "manual-evaluation" / "DA" / f"metrics-ad-doc-scores-{lp}.csv", encoding="utf-8") as fh:
            rows = [ln.split() for ln in fh][1:]
        sy, doc = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
        raw, n = np.array([float(r[2]) for r in rows]), np.array([float(r[4]) for r in rows])
        for sub, excl in (("allsys", []), ("excloutl", wmt20_outliers(w, lp))):
            b, wo = doc_pairs(sy, doc, raw, n, excl)
            ours = Counter(zip(doc[b].tolist(), sy[b].tolist(), sy[wo].tolist()))
            agree = w / "results" / "output" / f"doclevel_{sub}" / f"RR-newstest2020-{lp.replace('-', '')}-seg-nohy-agree.csv"
            with open(agree, encoding="utf-8") as fh:
                official = Counter(tuple(ln.split()[:3]) for ln in list(fh)[1:])
            assert ours == official, (lp, sub)
            if lp == "en-cs":
                assert len(b) == {"allsys": 1442, "excloutl": 572}[sub]
                # without the N >= 2 rule: 7 more pairs (6 without outliers), all with that row
                b2, _ = doc_pairs(sy, doc, raw, np.full(n.shape, 26.0), excl)
                assert len(b2) - len(b) == {"allsys": 7, "excloutl": 6}[sub]


def test_output_files(out):
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"{t}.{e}" for t in TABLES for e in ("csv", "md")] + ["index.html"])
    assert "2 differ" in (out / "sys-winners.md").read_text(encoding="utf-8")
    assert "0 differ" in (out / "seg-darr.md").read_text(encoding="utf-8")
    html = (out / "index.html").read_text(encoding="utf-8")
    assert html.count('class="diff"') == 2
    assert html.count('class="same"') == 552 + 3 * 872 + 98 + 208 + 808 - 2
    assert "0 differ" in (out / "doc-darr.md").read_text(encoding="utf-8")
    assert "outlier-systems-dict.json" in html
    assert "Twin metrics" in html


def test_missing_file_exit_1_nothing_written(root, tmp_path, capsys):
    files = required_files(root)
    assert len(files) == 1 + 4 * 30 + 3 * 18 + 2 + 10 + 2 + 3 * 15
    assert required_files(root / "wmt20-metrics") == files
    assert all(f.is_file() for f in files)
    base = root / "wmt20-metrics"
    gone = base / "results" / "output" / "seglevel_excloutl" / "RR-newstest2020-kmen-seg-nohy-cor.csv"
    missing = link_all_but(files, base, tmp_path / "data", gone)
    missing_file_fails(capsys, "wmt20", tmp_path / "data", missing, tmp_path / "o")


def test_help_lists_wmt20(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = capsys.readouterr().out
    assert "wmt20:" in text
    assert "wmt20-metrics" in text


def test_segment_intervals_are_ours_and_hold_the_tau(out, cells):
    """seg-darr-ci: a 95% pair-bootstrap interval for every reproduced DARR tau, compared with nothing
    (the paper prints none); its tau is the seg-darr cell, the interval holds it and has the
    closed-form binomial width 2 * 1.96 * 2 sqrt(c (1 - c) / P), c the concordant share."""
    ci, darr = cells["seg-darr-ci"], cells["seg-darr"]
    rows = sorted({k[0] for k in ci})
    reproduced = sorted(f"{m} {col}" for (m, col), r in darr.items() if r["reproduced"])
    assert rows == reproduced
    assert len(rows) == 208
    assert all(r["printed"] == "" and r["matches"] == "" and r["reason"] == "ours; the paper prints none"
               for r in ci.values())
    for row in rows:
        m, lp, tag = row.split(" ")
        tau, lo, hi, n = (float(ci[(row, c)]["reproduced"]) for c in ("tau", "low", "high", "pairs"))
        assert tau == float(darr[(m, f"{lp} {tag}")]["reproduced"]), row
        assert lo < tau < hi, row
        c = (tau + 1) / 2
        assert (hi - lo) / 2 == pytest.approx(1.96 * 2 * (c * (1 - c) / n) ** 0.5, rel=0.12), row
    assert [ci[(f"chrF de-en {t}", "pairs")]["reproduced_rounded"] for t in ("all", "-out")] == ["16584", "6185"]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert ("95% bootstrap interval of the DARR tau over resampled pairs, narrower than over resampled segments "
            "(ours; the paper prints none)") in html
