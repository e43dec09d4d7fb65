"""P13 "Trust II": the table and text readers give one clear line naming the file, the line and
the problem (no tracebacks) for columns named twice, byte-order marks, UTF-16/32 files,
unterminated CSV quotes, and they number rows as file lines and name the user's columns."""
from __future__ import annotations

import subprocess
import sys

import pytest

pa = pytest.importorskip("pyarrow")

from mtscore.engine.corpus import CorpusError, iter_batches, read_lines, read_table  # noqa: E402
from tests.cli_run import run_cli as _cli  # noqa: E402


def _one_error(argv, capsys):
    rc, out, err = _cli(argv, capsys)
    lines = err.strip().splitlines()
    assert rc == 1, err
    assert out == "", err
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def csv_file(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("hyp,ref,other\na b,a b,c\nc d,c e,f\n")
    return p


# ---------------------------------------------------------------- 1. a column named for two roles
@pytest.mark.parametrize(("argv", "msg"), [
    (["--ref-columns", "hyp"], "column 'hyp' is both the hypothesis column and a reference column; "
                               "pass --ref-columns another column"),
    (["--ref-columns", "ref", "ref"], "column 'ref' is named twice as a reference column; "
                                      "pass --ref-columns each column once"),
    (["--system-column", "hyp"], "column 'hyp' is both the hypothesis column and the system column; "
                                 "pass --system-column another column"),
    (["--system-column", "ref"], "column 'ref' is both a reference column and the system column; "
                                 "pass --system-column another column"),
    (["--hyp", "other", "--ref-columns", "ref", "other"],
     "column 'other' is both the hypothesis column and a reference column; "
     "pass --ref-columns another column"),
])
def test_score_table_column_used_twice(csv_file, capsys, argv, msg):
    line = _one_error(["score-table", str(csv_file), "-m", "bleu", *argv], capsys)
    assert line == f"mtscore score-table: error: {csv_file}: {msg}"


def test_score_table_column_used_twice_subprocess(csv_file):
    r = subprocess.run([sys.executable, "-m", "mtscore", "score-table", str(csv_file),
                        "--ref-columns", "hyp"], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stdout == ""
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        f"mtscore score-table: error: {csv_file}: column 'hyp' is both the hypothesis column and "
        "a reference column; pass --ref-columns another column"]


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet"])
def test_read_table_column_used_twice(tmp_path, fmt):
    import pyarrow.parquet as pq

    t = pa.table({"hyp": ["a"], "ref": ["b"], "doc": ["d"]})
    p = tmp_path / f"t.{fmt}"
    if fmt == "parquet":
        pq.write_table(t, p)
    elif fmt == "jsonl":
        p.write_text('{"hyp": "a", "ref": "b", "doc": "d"}\n')
    else:
        sep = "," if fmt == "csv" else "\t"
        p.write_text(sep.join(t.column_names) + "\n" + sep.join(["a", "b", "d"]) + "\n")
    with pytest.raises(CorpusError, match=r"column 'ref' is both a reference column and the doc "
                                          r"column; pass doc= another column$"):
        read_table(p, doc="ref")
    with pytest.raises(CorpusError, match=r"column 'hyp' is both the hypothesis column and a "
                                          r"reference column"):
        list(iter_batches(p, refs=["ref", "hyp"]))
    # a column taken by convention (system/doc/seg = None) never clashes: it is left out
    assert read_table(p, hyp="doc").columns == ["hyp", "ref_0"]


# ---------------------------------------------------------------- 2. UTF-8 byte-order mark
@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl"])
def test_utf8_bom_is_not_part_of_the_header(tmp_path, capsys, fmt):
    if fmt == "jsonl":
        text = '{"hyp": "a b c d", "ref": "a b c d"}\n{"hyp": "e f", "ref": "e g"}\n'
    else:
        sep = "," if fmt == "csv" else "\t"
        text = f"hyp{sep}ref\na b c d{sep}a b c d\ne f{sep}e g\n"
    plain, bom = tmp_path / f"plain.{fmt}", tmp_path / f"bom.{fmt}"
    plain.write_bytes(text.encode())
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert read_table(bom) == read_table(plain)
    assert read_table(bom, refs=["ref"]).hyps() == ["a b c d", "e f"]
    got = [b.to_pydict() for b in iter_batches(bom, batch_size=1)]
    assert got == [b.to_pydict() for b in iter_batches(plain, batch_size=1)]
    rc, out, err = _cli(["score-table", str(bom), "-m", "chrf", "--score-only"], capsys)
    assert rc == 0
    assert err == ""
    assert out == _cli(["score-table", str(plain), "-m", "chrf", "--score-only"], capsys)[1]


def test_plain_text_keeps_the_bom_like_sacrebleu(tmp_path):
    from sacrebleu.utils import smart_open

    p = tmp_path / "hyp.txt"
    p.write_bytes(b"\xef\xbb\xbfa b\nc\n")
    with smart_open(str(p)) as f:
        expected = [x.rstrip() for x in f]
    assert read_lines(p) == expected == ["\ufeffa b", "c"]


# ---------------------------------------------------------------- 3. UTF-16 / UTF-32 files
UTF16_HINT = "convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl"])
def test_utf16_table_is_named(tmp_path, capsys, fmt):
    p = tmp_path / f"t.{fmt}"
    sep = "," if fmt == "csv" else "\t"
    text = ('{"hyp": "a", "ref": "b"}\n' if fmt == "jsonl" else f"hyp{sep}ref\na{sep}b\n")
    p.write_text(text, encoding="utf-16")
    msg = (f"{p}:1: the file looks UTF-16 LE, not UTF-8 (it starts with a UTF-16 LE byte-order "
           f"mark); {UTF16_HINT} or read it with encoding='utf-16'")
    line = _one_error(["score-table", str(p)], capsys)
    assert line == f"mtscore score-table: error: {msg}"
    with pytest.raises(CorpusError) as e:
        list(iter_batches(p))
    assert str(e.value) == msg
    # read with the right encoding, it is the same table
    assert read_table(p, encoding="utf-16").hyps() == ["a"]
    assert read_table(p, encoding="utf-16").ref_streams() == [["b"]]


@pytest.mark.parametrize(("data", "what", "why", "codec"), [
    ("a b\nc\n".encode("utf-16"), "UTF-16 LE", "it starts with a UTF-16 LE byte-order mark",
     "utf-16"),
    (b"\xfe\xff" + "a b\nc\n".encode("utf-16-be"), "UTF-16 BE",
     "it starts with a UTF-16 BE byte-order mark", "utf-16"),
    ("a b\nc\n".encode("utf-32"), "UTF-32 LE", "it starts with a UTF-32 LE byte-order mark",
     "utf-32"),
    ("a b\nc\n".encode("utf-16-le"), "UTF-16 LE", "its first characters alternate with NUL bytes",
     "utf-16-le"),
    ("a b\nc\n".encode("utf-16-be"), "UTF-16 BE", "its first characters alternate with NUL bytes",
     "utf-16-be"),
])
def test_utf16_text_file_is_named(tmp_path, data, what, why, codec):
    p = tmp_path / "hyp.txt"
    p.write_bytes(data)
    with pytest.raises(CorpusError) as e:
        read_lines(p)
    iconv = codec.upper().replace("-LE", "LE").replace("-BE", "BE")
    assert str(e.value) == (
        f"{p}:1: the file looks {what}, not UTF-8 ({why}); convert it to UTF-8 (iconv -f {iconv} "
        f"-t UTF-8) or pass --encoding {codec} (encoding='{codec}' in Python)")
    assert read_lines(p, encoding=codec if codec != "utf-16" or data[:2] == b"\xff\xfe"
                      else "utf-16") == ["a b", "c"]


def test_text_that_only_looks_odd_is_still_read(tmp_path):
    p = tmp_path / "hyp.txt"
    for data in (b"a\n", b"ab\x00c\n", "\xff\xfe x\n".encode("latin-1")):
        p.write_bytes(data)
        read_lines(p, encoding="latin-1")
    p.write_bytes(b"\x00\x00\x00\x00\n")
    assert read_lines(p) == ["\x00\x00\x00\x00"]


def test_decode_error_hint_for_a_utf16_head():
    from mtscore.engine.decoding import decode_error

    e = UnicodeDecodeError("utf-8", b"\xff\xfea", 0, 1, "invalid start byte")
    msg = str(decode_error("f.txt", e, 0, 1, 1, "utf-8", b"\xff\xfe"))
    assert msg.startswith("f.txt:1: invalid UTF-8 (byte 0xff at column 1, offset 0); the file "
                          "looks UTF-16 LE (it starts with a UTF-16 LE byte-order mark): convert "
                          "it to UTF-8 or pass --encoding utf-16")


def test_cli_utf16_text_file_is_named_not_a_line_count_mismatch(tmp_path, capsys):
    ref, hyp = tmp_path / "ref.txt", tmp_path / "hyp.txt"
    ref.write_text("a b c\nd e f\n")
    hyp.write_text("a b c\nd e f\n", encoding="utf-16")
    line = _one_error([str(ref), "-i", str(hyp)], capsys)
    assert line.startswith(f"mtscore: error: {hyp}:1: the file looks UTF-16 LE, not UTF-8")


# ---------------------------------------------------------------- 4. unterminated CSV quotes
@pytest.mark.parametrize(("text", "line"), [
    ('hyp,ref\na,b\nc,"d\ne,f\n', 3),          # pyarrow took "d\ne,f\n" as one field
    ('hyp,ref\na,b\nc,"d', 3),                 # no final newline
    ('hyp,ref\na,b\n"c,d\ne,f\n', 3),          # pyarrow: "Expected 2 columns, got 1" (3 lines)
    ('hyp,ref\n"a\nb",b\nc,"d ""x"" e\n', 4),  # after a multi-line field, with doubled quotes
    ('hyp,"ref\na,b\n', 1),                     # in the header: no column 'hyp' (was)
])
def test_unterminated_quote_names_its_line(tmp_path, capsys, text, line):
    p = tmp_path / "q.csv"
    p.write_text(text)
    msg = (f"{p}:{line}: a quoted field starts here and is never closed (it would take in the "
           "rest of the file); close it with '\"' (a '\"' inside a quoted field is written '\"\"')")
    with pytest.raises(CorpusError) as e:
        read_table(p)
    assert str(e.value) == msg
    with pytest.raises(CorpusError) as e:
        list(iter_batches(p, batch_size=1))
    assert str(e.value) == msg
    assert _one_error(["score-table", str(p)], capsys) == f"mtscore score-table: error: {msg}"


@pytest.mark.parametrize(("text", "hyps"), [
    ('hyp,ref\na 5" x,b\nc,d\n', ['a 5" x', "c"]),             # a quote inside an unquoted field
    ('hyp,ref\n"a\n",b\nc,"d"\n', ["a\n", "c"]),               # closing quote at a line start
    ('hyp,ref\n"a ""b"" c",x\n"",y\n', ['a "b" c', ""]),
])
def test_odd_or_unusual_quotes_that_are_closed_are_read(tmp_path, text, hyps):
    p = tmp_path / "q.csv"
    p.write_text(text)
    assert read_table(p).hyps() == hyps


def test_unterminated_quote_in_gz(tmp_path):
    import gzip

    p = tmp_path / "q.csv.gz"
    p.write_bytes(gzip.compress(b'hyp,ref\na,b\nc,"d\ne,f\n'))
    with pytest.raises(CorpusError, match=r"q.csv.gz:3: a quoted field starts here and is never "):
        read_table(p)


def test_unterminated_quote_across_read_blocks(tmp_path, monkeypatch):
    from mtscore.engine import textio

    monkeypatch.setattr(textio, "BLOCK_BYTES", 4)
    p = tmp_path / "q.csv"
    p.write_text('hyp,ref\n"a""""",b\nc,"""d\ne,f\n')
    with pytest.raises(CorpusError, match=r"q.csv:3: a quoted field starts here"):
        read_table(p)


def test_csv_field_count_error_is_one_line(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text('hyp,ref\n"a\nb",b\nc,d,e\n')
    with pytest.raises(CorpusError) as e:
        read_table(p)
    assert str(e.value) == (f"{p}:4: found 3 comma-separated fields, the header has 2 (quote a "
                            "field that holds a comma: \"a, b\")")


# ---------------------------------------------------------------- 5. rows as file lines, user names
def test_systems_that_differ_name_the_file_line_and_column(tmp_path, capsys):
    p = tmp_path / "s.csv"
    p.write_text('system,hyp,ref\nA,a b,x\nA,"c\nd",y\nB,a b,x\nB,c d,z\n')
    line = _one_error(["score-table", str(p), "-m", "bleu"], capsys)
    assert line == (f"mtscore score-table: error: {p}:6: system 'B' differs from system 'A' at its "
                    "segment 2: ref 'z' != 'y'; every system must have the same segments in the "
                    "same order")
    t = tmp_path / "s.tsv"
    t.write_text("system\thyp\treference\nA\ta\tx\nB\tb\tz\n")
    with pytest.raises(CorpusError, match=rf"^{t}:3: system 'B' differs from system 'A' at its "
                                          r"segment 1: reference 'z' != 'x'"):
        read_table(t).by_system()


def test_null_hypothesis_names_the_jsonl_line(tmp_path):
    j = tmp_path / "n.jsonl"
    j.write_text('{"hyp": "a", "ref": "b"}\n\n{"hyp": null, "ref": "b"}\n')
    with pytest.raises(CorpusError) as e:
        read_table(j)
    assert str(e.value) == (f"{j}:3: column 'hyp' has a missing value (null); hypotheses must be "
                            "strings (use '' for an empty one)")
    with pytest.raises(CorpusError, match=rf"^{j}:3: column 'hyp' has a missing value"):
        list(iter_batches(j, batch_size=1))
