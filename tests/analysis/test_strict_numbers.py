"""P13 "Trust II" part 5: strict numbers, repeated rows, mixed language pairs and scale-safe
Pearson in the readers and statistics of ``mtscore meta`` / ``mtscore human``.

Each test reproduces a finding of the hostile-user probe (it failed before the fix: Python's
``float()`` read ``1_000`` and ``'１２'`` as numbers, a file with every rating twice was scored,
a table mixing language pairs was reported as one pair, and human scores times 1e300 gave
r = 0 for every metric) and checks the exact error or the real values. The files are
generated here: no shared data needed."""
from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis import correlation
from mtscore.analysis import data as loaders
from mtscore.analysis.errors import AnalysisInputError
from mtscore.bindings.cli.analysis import main
from mtscore.engine.strict_numbers import NumberSyntaxError, parse_number, parse_numbers
from tests.analysis.test_analysis_cli_errors import ratings_rows  # the same synthetic DA ratings

HEADER = "LP SYSTEM HUMAN BLEU chrF TER"
RATINGS_HEADER = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"


def sys_rows(n: int = 8, seed: int = 1, lp: str = "en-de") -> list[str]:
    rnd = random.Random(seed)
    return [f"{lp} sys{i} {rnd.gauss(0, 1):.3f} {rnd.uniform(10, 40):.2f} {rnd.uniform(30, 60):.2f} "
            f"{-rnd.uniform(30, 60):.2f}" for i in range(n)]


def write(tmp_path: Path, name: str, lines: Sequence[str]) -> str:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def set_cell(row: str, col: int, value: str, sep: str = " ") -> str:
    cells = row.split(sep)
    cells[col] = value
    return sep.join(cells)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    got = capsys.readouterr()
    return rc, got.err, got.out


def one_line_error(err: str) -> str:
    """The message of a one-line ``mtscore: error: ...`` (no traceback, nothing else)."""
    assert "Traceback" not in err, err
    assert err.count("\n") == 1, err
    assert err.startswith("mtscore: error: "), err
    return err[len("mtscore: error: "):-1]


# --- the parser --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [("12", 12.0), ("-1.5", -1.5), ("+3", 3.0), ("1e5", 1e5), ("1E-3", 1e-3),
                                         ("1.", 1.0), (".5", 0.5), (" 7\t", 7.0), ("-0", 0.0),
                                         ("84.5966801256169", 84.5966801256169)])
def test_plain_decimals_are_read_as_python_does(text, value):
    assert parse_number(text) == value == float(text)


@pytest.mark.parametrize(("text", "message"), [
    ("1_000", "'1_000' is not a number in plain decimal notation (digit separator '_'; write it without)"),
    ("１２", "'１２' is not a number in plain decimal notation (non-ASCII digit '１', U+FF11; "
            "only ASCII 0-9 . + - e E are allowed)"),
    ("٣", "'٣' is not a number in plain decimal notation (non-ASCII digit '٣', U+0663; "
          "only ASCII 0-9 . + - e E are allowed)"),
    ("12\u3000", "'12\\u3000' is not a number in plain decimal notation (non-ASCII character '\\u3000', U+3000; "
                 "only ASCII 0-9 . + - e E are allowed)"),
    ("inf", "'inf' is not a finite number (infinite values are not scores)"),
    ("-Infinity", "'-Infinity' is not a finite number (infinite values are not scores)"),
    ("nan", "'nan' is not a number (NaN values are not scores)"),
    ("1e400", "'1e400' is not a finite number (too large for a 64-bit float)"),
    ("0x10", "'0x10' is not a number"),
    ("1,5", "'1,5' is not a number"),
    ("", "'' is not a number (empty cell)"),
])
def test_what_float_accepts_but_a_score_file_must_not(text, message):
    with pytest.raises(NumberSyntaxError) as exc:
        parse_number(text)
    assert str(exc.value) == message
    assert exc.value.text == text
    assert isinstance(exc.value, ValueError)


def test_float_itself_accepts_the_probe_inputs():
    """The finding: Python's float() (used by the readers before) takes all of these."""
    assert float("1_000") == 1000.0
    assert float("１２") == 12.0
    assert float("12\u3000") == 12.0


def test_parse_numbers_missing_words_and_index_of_the_bad_cell():
    got = parse_numbers(["1", None, "NA", " 2.5 ", ""], missing=("", "NA"))
    np.testing.assert_array_equal(got, [1.0, np.nan, np.nan, 2.5, np.nan])
    with pytest.raises(NumberSyntaxError) as exc:
        parse_numbers(["1", "2", "３", "4"])
    assert exc.value.index == 2
    assert exc.value.text == "３"


# --- meta sys ------------------------------------------------------------------------------------

def test_meta_sys_full_width_human_score_is_refused(tmp_path, capsys):
    """Before: '１２' read as 12, the system jumped to rank 1 and the correlations collapsed."""
    rows = sys_rows()
    rows[2] = set_cell(rows[2], 2, "１２")
    rc, err, out = run(capsys, "meta", "sys", "--scores", write(tmp_path, "t.txt", [HEADER, *rows]),
                       "--bootstrap", "20")
    assert rc == 1
    assert out == ""
    assert one_line_error(err) == (
        f"{tmp_path / 't.txt'}:4: column 3 (HUMAN): '１２' is not a number in plain decimal notation "
        "(non-ASCII digit '１', U+FF11; only ASCII 0-9 . + - e E are allowed)")


def test_meta_sys_digit_separator_in_metric_is_refused(tmp_path, capsys):
    rows = sys_rows()
    rows[5] = set_cell(rows[5], 3, "1_000")
    rc, err, _ = run(capsys, "meta", "sys", "--scores", write(tmp_path, "t.txt", [HEADER, *rows]),
                     "--bootstrap", "20")
    assert rc == 1
    assert one_line_error(err) == (
        f"{tmp_path / 't.txt'}:7: column 4 (BLEU): '1_000' is not a number in plain decimal notation "
        "(digit separator '_'; write it without)")


@pytest.mark.parametrize(("column", "line", "says"), [
    (["false"] * 8, 2, "column 4 (BLEU): 'false' is not a number"),
    (["1.5", "NAN"] + ["1.5"] * 6, 3, "column 4 (BLEU) is nan, not a finite number"),
])
def test_meta_sys_what_the_csv_reader_infers_is_not_a_score(tmp_path, capsys, column, line, says):
    """pyarrow reads a column of true/false as booleans (then 1.0/0.0) and NAN as a NaN float."""
    rows = [set_cell(r, 3, c) for r, c in zip(sys_rows(), column)]
    rc, err, _ = run(capsys, "meta", "sys", "--scores", write(tmp_path, "t.txt", [HEADER, *rows]),
                     "--bootstrap", "20")
    assert rc == 1
    assert one_line_error(err).startswith(f"{tmp_path / 't.txt'}:{line}: {says}"), err


def test_meta_sys_mixed_language_pairs_are_refused(tmp_path, capsys):
    """Before: reported as one pair (the first row's) with correlations over both pairs' systems."""
    rows = sys_rows(6) + [r.replace("sys", "other") for r in sys_rows(4, seed=2, lp="de-en")]
    rc, err, out = run(capsys, "meta", "sys", "--scores", write(tmp_path, "t.txt", [HEADER, *rows]),
                       "--bootstrap", "20")
    assert rc == 1
    assert out == ""
    assert one_line_error(err) == (
        f"{tmp_path / 't.txt'}:8: language pair 'de-en' in column LP, but line 2 has 'en-de'; "
        "a system-level table holds one language pair: split it into one file per pair")


def test_meta_sys_one_language_pair_still_reads(tmp_path, capsys):
    rows = [r.replace("en-de", "en-iu_news", 1) for r in sys_rows()]
    rc, err, out = run(capsys, "meta", "sys", "--scores", write(tmp_path, "t.txt", [HEADER, *rows]),
                       "--bootstrap", "20", "--format", "json")
    assert rc == 0, err
    assert '"lp": "en-iu"' in out


def _meta_json(capsys, path: str) -> dict:
    import json

    rc, err, out = run(capsys, "meta", "sys", "--scores", path, "--bootstrap", "200", "--format", "json",
                       "--outliers", "none")
    assert rc == 0, err
    return json.loads(out)


def test_meta_sys_human_scores_times_1e300_give_the_same_correlations(tmp_path, capsys):
    """Before: the sums of squares overflowed, every Pearson r was 0 and every metric a winner."""
    rnd = random.Random(4)
    rows = []
    for i in range(10):
        h = rnd.gauss(0, 1)
        rows.append(f"en-de sys{i} {h:.4f} {20 + 5 * h + rnd.gauss(0, 0.5):.3f} {40 + 2 * h + rnd.gauss(0, 3):.3f} "
                    f"{-50 + rnd.gauss(0, 3):.3f}")
    big = [set_cell(r, 2, repr(float(r.split()[2]) * 1e300)) for r in rows]
    a = _meta_json(capsys, write(tmp_path, "a.txt", [HEADER, *rows]))["rows"]
    b = _meta_json(capsys, write(tmp_path, "b.txt", [HEADER, *big]))["rows"]
    assert [x["metric"] for x in a] == [x["metric"] for x in b]
    assert sorted(x["metric"] for x in a) == ["BLEU", "TER", "chrF"]
    ra, rb = [x["pearson_all"] for x in a], [x["pearson_all"] for x in b]
    assert np.all(np.abs(ra) > 0.05), ra
    np.testing.assert_allclose(rb, ra, rtol=0, atol=1e-12)
    for key in ("ci_low_all", "ci_high_all"):
        np.testing.assert_allclose([x[key] for x in b], [x[key] for x in a], rtol=0, atol=1e-12)
    assert [x["winner_all"] for x in b] == [x["winner_all"] for x in a]
    assert not all(x["winner_all"] for x in a)


# --- human ratings -------------------------------------------------------------------------------

def test_human_ratings_digit_separator_is_refused(tmp_path, capsys):
    rows = ratings_rows()
    rows[20] = set_cell(rows[20], 10, "1_000", "\t")
    rc, err, _ = run(capsys, "human", "ratings", "--ratings", write(tmp_path, "r.csv", [RATINGS_HEADER, *rows]))
    assert rc == 1
    assert one_line_error(err) == (
        f"{tmp_path / 'r.csv'}:22: column 11 (score): '1_000' is not a number in plain decimal notation "
        "(digit separator '_'; write it without)")


def test_human_ratings_full_width_score_is_refused(tmp_path, capsys):
    rows = ratings_rows()
    rows[7] = set_cell(rows[7], 10, "９９", "\t")
    rc, err, _ = run(capsys, "human", "ratings", "--ratings", write(tmp_path, "r.csv", [RATINGS_HEADER, *rows]))
    assert rc == 1
    assert one_line_error(err).startswith(f"{tmp_path / 'r.csv'}:9: column 11 (score): '９９' is not a number")


@pytest.mark.parametrize("cmd", ["ratings", "rater-model"])
def test_human_ratings_every_row_twice_is_refused(tmp_path, capsys, cmd):
    """Before: scored without a word, and the QC verdicts changed (the paired t-test saw each
    worker's REPEAT/degraded pairs twice)."""
    rows = ratings_rows()
    n = len(rows)
    rc, err, out = run(capsys, "human", cmd, "--ratings", write(tmp_path, "r.csv", [RATINGS_HEADER, *rows, *rows]))
    assert rc == 1
    assert out == ""
    assert one_line_error(err) == (
        f"{tmp_path / 'r.csv'}:{n + 2}: this rating rates the same item again (same HITId, WorkerId, sys_id, "
        f"type, sid) as line 2; {n} repeated rows in all; remove the duplicated rows "
        "(was the file concatenated twice?)")


def test_human_ratings_one_repeated_judgement_with_another_score_is_refused(tmp_path, capsys):
    rows = ratings_rows()
    extra = set_cell(rows[3], 10, "0.5", "\t")
    rc, err, _ = run(capsys, "human", "ratings", "--ratings",
                     write(tmp_path, "r.csv", [RATINGS_HEADER, *rows[:10], extra, *rows[10:]]))
    assert rc == 1
    assert one_line_error(err) == (
        f"{tmp_path / 'r.csv'}:12: this rating rates the same item again (same HITId, WorkerId, sys_id, "
        "type, sid) as line 5; remove the duplicated rows (was the file concatenated twice?)")


def test_ratings_without_hitid_refuse_only_identical_rows(tmp_path):
    hdr = "WorkerId sys_id type sid score"
    rows = ["W1\tA\tSYSTEM\t1\t50", "W1\tA\tSYSTEM\t1\t60", "W1\tA\tSYSTEM\t1\t50"]
    t, _ = loaders.read_ratings_lines(write(tmp_path, "ok.tsv", [hdr, *rows[:2]]))
    assert t.num_rows == 2  # the same item in two HITs (no HITId to tell them apart): allowed
    with pytest.raises(AnalysisInputError, match=r"bad.tsv:4: this rating repeats a row as line 2; remove"):
        loaders.read_ratings_lines(write(tmp_path, "bad.tsv", [hdr, *rows]))


def test_real_wmt21_ratings_have_no_repeats():
    import os

    root = Path(os.environ.get("MTSCORE_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
    f = root / "wmt21-news-systems" / "humaneval" / "newstest2021-toen" / "ad-haen-good-stnd.csv"
    if not f.exists():
        pytest.skip(f"{f} not present (set MTSCORE_DATA)")
    t, linenos = loaders.read_ratings_lines(f)
    assert t.num_rows == len(linenos) > 1000


# --- the other readers -----------------------------------------------------------------------------

def test_judge_ratings_full_width_is_refused(tmp_path):
    p = write(tmp_path, "r.csv", ["j1;j2", "1;2", "1;２"])
    with pytest.raises(AnalysisInputError) as exc:
        loaders.read_judge_ratings(p)
    assert str(exc.value) == (f"{p}:3: column 2 (j2): '２' is not a number in plain decimal notation "
                              "(non-ASCII digit '２', U+FF12; only ASCII 0-9 . + - e E are allowed); "
                              "write NA for a missing rating")


def test_mt_metrics_eval_score_file_is_strict(tmp_path):
    from mtscore.analysis.metaeval.ratings import read_score_file

    p = write(tmp_path, "m.seg.score", ["A\t0.5", "A\tNone", "B\t0.25", "B\tnan"])
    with pytest.raises(AnalysisInputError) as exc:
        read_score_file(p, ["A", "B"], 2)
    assert str(exc.value) == (f"{p}:4: column 2 (score): 'nan' is not a number (NaN values are not scores); "
                              "write None for a missing score")
    p = write(tmp_path, "m2.seg.score", ["A\t0.5", "A\tNone", "B\t0.25", "B\t1"])
    np.testing.assert_array_equal(read_score_file(p, ["A", "B"], 2), [[0.5, np.nan], [0.25, 1.0]])


def test_appraise_export_full_width_score_is_refused(tmp_path):
    from mtscore.analysis.crowd.batches import read_appraise_export

    row = ["u1", "sysA", "1", "TGT", "ces", "eng", "75", "1600000000.0", "1600000060.0"]
    p = write(tmp_path, "export.csv", [",".join(row), ",".join([*row[:6], "７５", *row[7:]])])
    with pytest.raises(AnalysisInputError) as exc:
        read_appraise_export(p)
    assert str(exc.value).startswith(f"{p}:2: cell 7 (score): '７５' is not a number in plain decimal notation")


def test_metric_score_column_names_the_line_of_a_bad_cell(tmp_path):
    lines = [f"M\tde-en\tnewstest2020\tnewstest2020\tsysA\td1\t{i}\t0.{i}" for i in range(1, 6)]
    lines[3] = lines[3].rsplit("\t", 1)[0] + "\t1_0"
    p = write(tmp_path, "M.seg.score", lines)
    t = loaders.read_metric_scores(p, "seg")
    with pytest.raises(AnalysisInputError, match=r"M.seg.score:4: column 8 \(score\): '1_0' is not a number"):
        loaders.metric_score_column(p, t)


# --- scale-safe Pearson ------------------------------------------------------------------------------

def _naive_pearson(h: np.ndarray, M: np.ndarray) -> np.ndarray:
    """The formula as it was before (no normalisation)."""
    hc = h - h.mean()
    Mc = M - M.mean(axis=1, keepdims=True)
    return np.clip((Mc @ hc) / np.sqrt((Mc * Mc).sum(axis=1) * (hc @ hc)), -1, 1)


def _data(n: int = 12, m: int = 4, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    h = rng.normal(size=n)
    return h, h[None, :] * rng.uniform(0.2, 1.0, size=(m, 1)) + rng.normal(size=(m, n))


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0 ** 1000, 1.0])
def test_pearson_is_scale_safe(scale):
    h, M = _data()
    want = _naive_pearson(h, M)
    if scale != 1.0:  # the finding: the unnormalised formula gives 0 (overflow) or NaN (underflow)
        with np.errstate(all="ignore"):
            assert not np.allclose(_naive_pearson(h * scale, M), want)
    np.testing.assert_allclose(correlation.pearson(h * scale, M), want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(correlation.pearson(h, M * scale), want, rtol=0, atol=1e-12)


def test_pearson_unchanged_bit_for_bit_on_ordinary_data():
    """The normalisation multiplies by powers of two only: results are identical, not just close."""
    for seed in range(20):
        h, M = _data(seed=seed)
        M = M * 37.3 + 11.0
        np.testing.assert_array_equal(correlation.pearson(h, M), _naive_pearson(h, M))


def test_bootstrap_ci_is_scale_safe():
    h, M = _data()
    a = correlation.bootstrap_ci(h, M, "pearson", n_resamples=300, seed=7)
    b = correlation.bootstrap_ci(h * 1e300, M, "pearson", n_resamples=300, seed=7)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, rtol=0, atol=1e-12)
    assert np.all(np.abs(a[0]) > 0.1)


def test_williams_matrix_is_scale_safe():
    from mtscore.analysis.metaeval.williams import williams_matrix

    h, M = _data()
    r, p = williams_matrix(h, M)
    r2, p2 = williams_matrix(h * 1e300, M)
    np.testing.assert_allclose(r2, r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p2, p, rtol=0, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(r, _naive_pearson(h, M), rtol=0, atol=1e-12)


def test_subset_correlations_are_scale_safe():
    from mtscore.analysis.metaeval.subsets import subset_correlations

    h, M = _data(n=8)
    a = subset_correlations(h, M, k=5, return_all=True)
    b = subset_correlations(h * 1e300, M, k=5, return_all=True)
    np.testing.assert_allclose(b["mean"], a["mean"], rtol=0, atol=1e-12)
    assert np.all(np.isfinite(a["mean"]))


def test_permutation_test_pearson_is_scale_safe():
    from mtscore.analysis.metaeval.significance import permutation_test

    rng = np.random.default_rng(3)
    h = rng.normal(size=(5, 30))
    m1, m2 = h + rng.normal(size=h.shape), h + 2 * rng.normal(size=h.shape)
    a = permutation_test(h, m1, m2, "pearson", average_by="none", k=200, seed=1)
    b = permutation_test(h * 1e300, m1, m2, "pearson", average_by="none", k=200, seed=1)
    assert abs(a.delta) > 0.01
    assert abs(b.delta - a.delta) < 1e-12
    assert b.p_value == a.p_value


# --- options and matrices use the same parser ----------------------------------------------------

def test_scale_options_refuse_what_float_accepts():
    import argparse

    from mtscore.bindings.cli.crowd import _scale
    from mtscore.bindings.cli.human import _levels

    assert _levels("1-5") == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert _levels("0,0.5,1") == [0.0, 0.5, 1.0]
    assert _scale("0,100") == (0.0, 100.0)
    for bad in ("１-５", "1_0,2", "１,２"):
        with pytest.raises(argparse.ArgumentTypeError):
            _levels(bad)
    with pytest.raises(argparse.ArgumentTypeError):
        _scale("0,１００")


def test_matrix_cells_that_are_not_plain_numbers_are_nan(tmp_path):
    p = write(tmp_path, "sig.csv", ["a b", "a - 0.01", "b １ 1_0"])
    rows, cols, v = loaders.read_matrix(p)
    assert rows == ["a", "b"]
    assert cols == ["a", "b"]
    np.testing.assert_array_equal(v, [[np.nan, 0.01], [np.nan, np.nan]])


# --- crowd readers: repeated assignments / judgements ---------------------------------------------

def test_mturk_batch_given_twice_is_refused(tmp_path):
    import csv

    from mtscore.analysis.crowd.batches import read_mturk_batches

    header = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime", "SubmitTime",
              "WorkTimeInSeconds", "Answer.Q1"]
    p = tmp_path / "Batch_1.csv"
    with p.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(header)
        for k in range(2):
            w.writerow([f"H{k}", f"A{k}", "W1", "Submitted", "Wed Nov 23 10:00:00 PST 2016",
                        "Wed Nov 23 10:30:00 PST 2016", "1800", "s1_1_SYSTEM_0__50|s2_1_SYSTEM_1__60"])
    assert len(read_mturk_batches([p], items_per_hit=2)) == 4
    with pytest.raises(AnalysisInputError) as exc:
        read_mturk_batches([p, p], items_per_hit=2)
    assert str(exc.value) == (f"{p}:2: assignment A0 of worker W1 again (first at {p}:2); each assignment is "
                              "read once: is a batch file given twice or a row duplicated?")


def test_appraise_export_appended_to_itself_is_refused(tmp_path):
    from mtscore.analysis.crowd.batches import read_appraise_export

    rows = [",".join(["u1", "sysA", str(i), "TGT", "ces", "eng", "75", f"16000000{i}0.0", f"16000000{i}5.0"])
            for i in range(3)]
    assert len(read_appraise_export(write(tmp_path, "ok.csv", rows))) == 3
    p = write(tmp_path, "export.csv", rows + rows)
    with pytest.raises(AnalysisInputError) as exc:
        read_appraise_export(p)
    assert str(exc.value) == (f"{p}:4: the same judgement as {p}:1 (every cell equal); an export given twice "
                              "or appended to itself? remove the repeated rows")
