"""Bad input to ``mtscore meta`` / ``mtscore human`` (the errors contract): one line
``mtscore: error: <file:line / option and what to do>`` on stderr and exit status 1 (usage
errors from argparse: one line, status 2), never a traceback, never a half-written output.
Bugs still raise. The files are generated here, so these tests need no shared data."""
from __future__ import annotations

import random
import warnings
from collections.abc import Sequence
from pathlib import Path

import pytest

from mtscore.analysis import output
from mtscore.analysis.metaeval import report
from mtscore.bindings.cli import analysis as cli
from mtscore.bindings.cli.analysis import main

HEADER = "LP SYSTEM HUMAN BLEU chrF TER"
RATINGS_HEADER = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"


def sys_rows(n: int = 8, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    return [f"en-de sys{i} {rnd.gauss(0, 1):.3f} {rnd.uniform(10, 40):.2f} {rnd.uniform(30, 60):.2f} "
            f"{-rnd.uniform(30, 60):.2f}" for i in range(n)]


def write(tmp_path: Path, name: str, lines: Sequence[str]) -> str:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def set_cell(row: str, col: int, value: str) -> str:
    cells = row.split()
    cells[col] = value
    return " ".join(cells)


def run_out(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit status, stderr and stdout of ``mtscore <argv>`` (argparse exits become a status)."""
    capsys.readouterr()
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse usage errors
        rc = e.code
    got = capsys.readouterr()
    return rc, got.err, got.out


def run(capsys, *argv: str) -> tuple[int, str]:
    return run_out(capsys, *argv)[:2]


def assert_one_line(err: str, *fragments: str, prefix: str = "mtscore: error: ") -> None:
    assert "Traceback" not in err, err
    assert "Warning" not in err, err
    assert err.count("\n") == 1, err
    assert err.startswith(prefix), err
    for f in fragments:
        assert f in err, (f, err)


def meta_sys(capsys, path: str, *extra: str) -> tuple[int, str]:
    return run(capsys, "meta", "sys", "--scores", path, "--bootstrap", "20", *extra)


# --- system-level tables -----------------------------------------------------------------------

@pytest.mark.parametrize("cell", ["NaN", "NA", "nan", "abc", "inf"])
def test_bad_human_cell_names_line_and_column(tmp_path, capsys, cell):
    rows = sys_rows()
    rows[2] = set_cell(rows[2], 2, cell)
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "t.txt:4:", "column 3 (HUMAN)")


def test_text_in_metric_column_is_an_error(tmp_path, capsys):
    rows = sys_rows()
    rows[3] = set_cell(rows[3], 4, "xyz")
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "t.txt:5:", "column 5 (chrF)", "'xyz' is not a number")


def test_infinite_metric_is_an_error(tmp_path, capsys):
    rows = sys_rows()
    rows[3] = set_cell(rows[3], 3, "inf")
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "t.txt:5:", "column 4 (BLEU)", "NA")


def test_missing_metric_cell_leaves_the_metric_out(tmp_path, capsys):
    rows = sys_rows()
    rows[3] = set_cell(rows[3], 4, "NA")
    rc, err, out = run_out(capsys, "meta", "sys", "--scores", write(tmp_path, "t.txt", [HEADER, *rows]),
                           "--bootstrap", "20", "--format", "csv")
    assert rc == 0
    assert_one_line(err, "chrF", prefix="mtscore: warning: ")
    assert "chrF" not in out
    assert "BLEU" in out


def test_line_numbers_count_blank_lines(tmp_path, capsys):
    rows = sys_rows()
    rows[5] = set_cell(rows[5], 2, "oops")
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, "", *rows[:3], "", "", *rows[3:]]))
    assert rc == 1
    assert_one_line(err, "t.txt:10:")


def test_no_human_column(tmp_path, capsys):
    lines = [" ".join(row.split()[:2] + row.split()[3:]) for row in [HEADER, *sys_rows()]]
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", lines))
    assert rc == 1
    assert_one_line(err, "t.txt:1:", "no HUMAN column", "LP SYSTEM HUMAN")


def test_comma_separated_table(tmp_path, capsys):
    lines = [",".join(row.split()) for row in [HEADER, *sys_rows()]]
    rc, err = meta_sys(capsys, write(tmp_path, "t.csv", lines))
    assert rc == 1
    assert_one_line(err, "t.csv", "looks comma-separated", "whitespace")


def test_header_only(tmp_path, capsys):
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER]))
    assert rc == 1
    assert_one_line(err, "t.txt", "no system rows")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_too_few_systems(tmp_path, capsys, n):
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *sys_rows(n)]))
    assert rc == 1
    assert_one_line(err, "t.txt", f"{n} MT system", "at least 4", "Williams")


def test_four_systems_are_enough(tmp_path, capsys):
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *sys_rows(4)]))
    assert rc == 0
    assert err == ""


def test_human_rows_do_not_count_as_systems(tmp_path, capsys):
    rows = [*sys_rows(3), "en-de Human-A.0 0.5 30 40 -40", "en-de Human-B.0 0.6 31 41 -41"]
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "3 MT system", "Human")


def test_constant_human_scores(tmp_path, capsys):
    rows = [set_cell(r, 2, "0.25") for r in sys_rows()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "t.txt", "HUMAN scores are equal", "undefined")


def test_constant_metric_is_never_a_winner_and_numpy_stays_quiet(tmp_path, capsys):
    rows = [set_cell(r, 4, "42") for r in sys_rows()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a raw numpy RuntimeWarning fails the test
        rc, err, text = run_out(capsys, "meta", "sys", "--scores", write(tmp_path, "t.txt", [HEADER, *rows]),
                                "--bootstrap", "20", "--format", "csv")
    assert rc == 0
    assert_one_line(err, "chrF", "same score", prefix="mtscore: warning: ")
    out = text.splitlines()
    chrf = dict(zip(out[0].split(","), next(line for line in out if line.startswith("chrF")).split(",")))
    assert chrf["winner_all"] == "False"


def test_constant_human_after_outliers_is_a_note(tmp_path, capsys):
    rows = [set_cell(r, 2, "0.5") for r in sys_rows(6)]
    rows[0] = set_cell(rows[0], 2, "1.5")
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *rows]), "--outliers", "mad")
    assert rc == 0
    assert_one_line(err, "without the outliers", prefix="mtscore: warning: ")


def test_duplicate_system_names_both_lines(tmp_path, capsys):
    rows = sys_rows()
    rows[4] = set_cell(rows[4], 1, "sys1")
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "t.txt:6:", "'sys1'", "line 3")


def test_unknown_outlier_names(tmp_path, capsys):
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *sys_rows()]), "--outliers", "FOO,sys1,BAR")
    assert rc == 1
    assert_one_line(err, "--outliers", "FOO, BAR", "sys0, sys1")
    assert "sys1," not in err.split("systems:")[0]


@pytest.mark.parametrize("spec", [",", " , "])
def test_empty_metrics_list(tmp_path, capsys, spec):
    rc, err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *sys_rows()]), "--metrics", spec)
    assert rc == 1
    assert_one_line(err, "--metrics")


# --- numeric options (argparse: one line naming the option, exit 2) ----------------------------

@pytest.mark.parametrize(("argv", "option"), [
    (["meta", "sys", "--scores", "x", "--bootstrap", "-1"], "--bootstrap"),
    (["meta", "sys", "--scores", "x", "--bootstrap", "0"], "--bootstrap"),
    (["meta", "sys", "--scores", "x", "--bootstrap", "1.5"], "--bootstrap"),
    (["meta", "sys", "--scores", "x", "--seed", "-3"], "--seed"),
    (["meta", "wmt20", "--data", "x", "--lp", "de-en", "--bootstrap", "-5"], "--bootstrap"),
    (["human", "ratings", "--ratings", "x", "--alpha", "2"], "--alpha"),
    (["human", "ratings", "--ratings", "x", "--alpha", "nan"], "--alpha"),
    (["human", "ratings", "--ratings", "x", "--alpha", "0"], "--alpha"),
    (["human", "rater-model", "--ratings", "x", "--shape", "0"], "--shape"),
    (["human", "rater-model", "--ratings", "x", "--scale", "-1"], "--scale"),
    (["human", "rater-model", "--ratings", "x", "--scale", "inf"], "--scale"),
    (["human", "rater-model", "--ratings", "x", "--keep", "0"], "--keep"),
])
def test_bad_numeric_options(capsys, argv, option):
    rc, err = run(capsys, *argv)
    assert rc == 2
    assert_one_line(err, f"argument {option}:", prefix="mtscore ")


# --- files: missing, folders, encodings, outputs -------------------------------------------------

def test_missing_file(tmp_path, capsys):
    rc, err = meta_sys(capsys, str(tmp_path / "nope.txt"))
    assert rc == 1
    assert_one_line(err, "nope.txt", "not found")


def test_folder_instead_of_file(tmp_path, capsys):
    rc, err = meta_sys(capsys, str(tmp_path))
    assert rc == 1
    assert_one_line(err, str(tmp_path), "folder")
    rc, err = run(capsys, "human", "ratings", "--ratings", str(tmp_path))
    assert rc == 1
    assert_one_line(err, str(tmp_path), "folder")


def test_empty_file(tmp_path, capsys):
    p = tmp_path / "e.txt"
    p.write_text("\n\n")
    rc, err = meta_sys(capsys, str(p))
    assert rc == 1
    assert_one_line(err, "e.txt", "empty")


def test_invalid_utf8_names_line_and_column(tmp_path, capsys):
    lines = [HEADER, *sys_rows()]
    data = ("\n".join(lines) + "\n").encode().replace(b"sys4", b"sys\xff4")
    p = tmp_path / "u.txt"
    p.write_bytes(data)
    rc, err = meta_sys(capsys, str(p))
    assert rc == 1
    assert_one_line(err, "u.txt:6:10:", "UTF-8", "0xff")


def test_binary_file(tmp_path, capsys):
    p = tmp_path / "b.bin"
    p.write_bytes(bytes(range(256)) * 4)
    rc, err = meta_sys(capsys, str(p))
    assert rc == 1
    assert_one_line(err, "b.bin:1:1:", "binary")


@pytest.mark.parametrize("option", ["-o", "--html"])
def test_output_in_missing_folder_names_the_path(tmp_path, capsys, option):
    f = write(tmp_path, "t.txt", [HEADER, *sys_rows()])
    target = str(tmp_path / "no" / "such" / "out.txt")
    rc, err = meta_sys(capsys, f, option, target)
    assert rc == 1
    assert_one_line(err, target, "does not exist")
    assert ".tmp" not in err


def test_output_is_a_folder(tmp_path, capsys):
    f = write(tmp_path, "t.txt", [HEADER, *sys_rows()])
    rc, err = meta_sys(capsys, f, "-o", str(tmp_path))
    assert rc == 1
    assert_one_line(err, "--output", str(tmp_path), "folder")


def test_figdir_is_a_file(tmp_path, capsys):
    f = write(tmp_path, "t.txt", [HEADER, *sys_rows()])
    rc, err = meta_sys(capsys, f, "--figdir", f)
    assert rc == 1
    assert_one_line(err, "--figdir", "not a folder")


def test_bad_input_writes_no_output(tmp_path, capsys):
    rows = sys_rows()
    rows[1] = set_cell(rows[1], 2, "x")
    out = tmp_path / "r.json"
    rc, _err = meta_sys(capsys, write(tmp_path, "t.txt", [HEADER, *rows]), "-o", str(out))
    assert rc == 1
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]  # no temp files left


def test_write_failure_names_the_requested_path(tmp_path, capsys, monkeypatch):
    """A failure while writing (after the up-front checks) names -o's path, not the temp file."""
    f = write(tmp_path, "t.txt", [HEADER, *sys_rows()])
    target = tmp_path / "out.txt"

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", src, dst)

    import mtscore.engine.atomic as atomic  # the one atomic-write helper report uses

    monkeypatch.setattr(atomic.os, "replace", refuse)
    rc, err = meta_sys(capsys, f, "-o", str(target))
    assert rc == 1
    assert_one_line(err, f"--output {target}", "Permission denied")
    assert ".tmp" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


def test_write_atomic_error_names_the_target(tmp_path):
    target = str(tmp_path / "missing" / "x.txt")
    with pytest.raises(OSError, match="its folder does not exist") as e:
        output.write_atomic(target, "text")
    assert e.value.filename == target


def test_programming_errors_keep_their_traceback(tmp_path, capsys, monkeypatch):
    """Only user-input errors become one line: a bug is not swallowed."""
    f = write(tmp_path, "t.txt", [HEADER, *sys_rows()])

    def bug(*a, **k):
        raise KeyError("a bug")

    monkeypatch.setattr(report, "meta_evaluate", bug)
    with pytest.raises(KeyError):
        main(["meta", "sys", "--scores", f])


# --- human ratings ---------------------------------------------------------------------------

def ratings_rows(n_workers: int = 4, n_systems: int = 4, n_seg: int = 6, seed: int = 3) -> list[str]:
    rnd = random.Random(seed)
    rows = []
    for w in range(n_workers):
        for s in range(n_systems):
            for g in range(n_seg):
                for typ in ("SYSTEM", "REPEAT") if g == 0 else ("SYSTEM",):
                    rows.append("\t".join([f"HIT{w}", f"W{w}", "cs", "en", "ad", "1", f"sys{s}.{s}", str(g),
                                           typ, str(g), f"{rnd.gauss(s * 0.2, 1):.4f}", "100.0"]))
    return rows


def human(capsys, cmd: str, path: str, *extra: str) -> tuple[int, str]:
    return run(capsys, "human", cmd, "--ratings", path, *extra)


@pytest.mark.parametrize("cmd", ["ratings", "rater-model"])
def test_short_ratings_row(tmp_path, capsys, cmd):
    rows = ratings_rows()
    rows[9] = "\t".join(rows[9].split("\t")[:8])
    rc, err = human(capsys, cmd, write(tmp_path, "r.csv", [RATINGS_HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "r.csv:11:", "expected 12 fields", "found 8")


@pytest.mark.parametrize("cmd", ["ratings", "rater-model"])
def test_ratings_header_only(tmp_path, capsys, cmd):
    rc, err = human(capsys, cmd, write(tmp_path, "r.csv", [RATINGS_HEADER]))
    assert rc == 1
    assert_one_line(err, "r.csv", "no ratings")


def test_ratings_missing_column(tmp_path, capsys):
    lines = [RATINGS_HEADER.replace(" score", "")] + [
        "\t".join(c for i, c in enumerate(r.split("\t")) if i != 10) for r in ratings_rows()]
    rc, err = human(capsys, "ratings", write(tmp_path, "r.csv", lines))
    assert rc == 1
    assert_one_line(err, "r.csv:1:", "missing column(s) score")


def test_ratings_comma_separated(tmp_path, capsys):
    lines = [RATINGS_HEADER.replace(" ", ",")] + [r.replace("\t", ",") for r in ratings_rows()]
    rc, err = human(capsys, "rater-model", write(tmp_path, "r.csv", lines))
    assert rc == 1
    assert_one_line(err, "r.csv:1:", "comma-separated")


@pytest.mark.parametrize(("cell", "says"), [("abc", "'abc' is not a number"), ("NaN", "missing"), ("-inf", "finite")])
def test_ratings_bad_score(tmp_path, capsys, cell, says):
    rows = ratings_rows()
    cells = rows[20].split("\t")
    cells[10] = cell
    rows[20] = "\t".join(cells)
    rc, err = human(capsys, "ratings", write(tmp_path, "r.csv", [RATINGS_HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "r.csv:22:", "column 11 (score)", says)


def test_ratings_text_score_after_the_first_megabyte(tmp_path, capsys):
    """Column types are inferred from every row: a late bad cell is still a one-line error."""
    rows = ratings_rows(n_workers=40, n_systems=10, n_seg=60)
    cells = rows[-1].split("\t")
    cells[10] = "oops"
    rows[-1] = "\t".join(cells)
    path = write(tmp_path, "r.csv", [RATINGS_HEADER, *rows])
    assert Path(path).stat().st_size > 1 << 20
    rc, err = human(capsys, "ratings", path)
    assert rc == 1
    assert_one_line(err, f"r.csv:{len(rows) + 1}:", "'oops'")


def test_ratings_without_system_items(tmp_path, capsys):
    rows = [r.replace("\tSYSTEM\t", "\tREF\t").replace("\tREPEAT\t", "\tBAD_REF\t") for r in ratings_rows()]
    rc, err = human(capsys, "ratings", write(tmp_path, "r.csv", [RATINGS_HEADER, *rows]))
    assert rc == 1
    assert_one_line(err, "SYSTEM or REPEAT")


def test_keep_more_workers_than_the_file_has(tmp_path, capsys):
    f = write(tmp_path, "r.csv", [RATINGS_HEADER, *ratings_rows()])
    rc, err = human(capsys, "rater-model", f, "--keep", "50")
    assert rc == 1
    assert_one_line(err, "--keep 50", "4 workers")
    rc, err = human(capsys, "rater-model", f, "--keep", "2")
    assert rc == 0
    assert err == ""


# --- help --------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["meta"], ["meta", "sys"], ["meta", "wmt20"], ["human"],
                                  ["human", "ratings"], ["human", "rater-model"], []])
def test_help_has_no_doubled_percent(capsys, argv):
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    out = capsys.readouterr().out
    assert "%%" not in out
    if argv == ["meta"]:
        assert "95% bootstrap" in out


def test_parser_is_built_with_the_one_line_error_parser():
    from mtscore.bindings.cli.parser import OneLineErrorParser

    assert isinstance(cli.build_parser(), OneLineErrorParser)
