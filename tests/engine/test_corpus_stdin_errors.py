"""Corpus ingestion: sacrebleu's CLI reading of stdin systems and tab-separated references;
clear one-line errors (file, line, column); systems."""
import gzip
import io
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus_helpers import (
    HYPS,
    REF0,
    REF1,
    FakeStdin,
    sacrebleu_stdin_systems,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.utils import smart_open

from mtscore.engine import textio
from mtscore.engine.corpus import (
    Corpus,
    CorpusError,
    guess_format,
    iter_batches,
    iter_text_chunks,
    load_corpus,
    read_lines,
    read_stdin_systems,
    read_tab_refs,
    read_table,
)


@pytest.fixture
def table():
    return pa.table({"hyp": HYPS, "ref": REF0, "ref_1": REF1,
                     "system": ["s1"] * 5, "seg": [1, 2, 3, 4, 5]})


# ---------------------------------------------------------------- stdin systems (sacrebleu CLI)
def test_read_stdin_systems_basic():
    # explicit values: first-line fields are not stripped (sacrebleu), later ones are;
    # a bare \r ends a line (universal newlines on stdin)
    data = b"a1 \tb1\nsecond\t b2 \r\nthird\tx\ry\tz\n"
    expect = [["a1 ", "second", "third", "y"], ["b1", " b2", "x", "z"]]
    assert read_stdin_systems(io.BytesIO(data)) == sacrebleu_stdin_systems(data) == expect
    assert read_stdin_systems(io.StringIO("u\tv\n")) == [["u"], ["v"]]


def test_read_stdin_systems_errors(monkeypatch):
    with pytest.raises(CorpusError, match=r"<stdin>:3: found 1 tab-separated fields but the "
                                          r"first line has 2"):
        read_stdin_systems(io.BytesIO(b"a\tb\nc\td\ne\n"))
    with pytest.raises(CorpusError, match="<stdin>: empty input"):
        read_stdin_systems(io.BytesIO(b""))
    with pytest.raises(CorpusError, match=r"<stdin>:2: invalid UTF-8 \(byte 0xff at column 2"):
        read_stdin_systems(io.BytesIO(b"ok\nx\xff\n"))
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"p\tq\n"))
    assert read_stdin_systems() == [["p"], ["q"]]


STDIN_ALPHABET = st.sampled_from(list("ab \t\r\n\x0b\x0c\x1c\x85\u2028\u3000é"))


@settings(max_examples=300, deadline=None)
@given(st.text(STDIN_ALPHABET, min_size=1, max_size=40))
def test_read_stdin_systems_matches_sacrebleu(text):
    data = text.encode("utf-8")
    try:
        expect = sacrebleu_stdin_systems(data)
    except SystemExit:
        with pytest.raises(CorpusError):
            read_stdin_systems(io.BytesIO(data))
        return
    assert read_stdin_systems(io.BytesIO(data)) == expect


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(STDIN_ALPHABET, max_size=12), min_size=1, max_size=8),
       st.integers(1, 3))
def test_read_tab_refs_matches_sacrebleu(tmp_path_factory, lines, num_refs):
    path = tmp_path_factory.mktemp("tab") / "refs.txt"
    path.write_bytes("\n".join(s.replace("\n", " ") for s in lines).encode())
    expect, ok = [[] for _ in range(num_refs)], True
    for line in smart_open(str(path)):  # sacrebleu.py 'Read references', --num-refs
        refs = line.rstrip().split(sep="\t", maxsplit=num_refs - 1)
        if len(refs) != num_refs:
            ok = False
            break
        for k, r in enumerate(refs):
            expect[k].append(r)
    if ok:
        assert read_tab_refs(path, num_refs) == expect
    else:
        with pytest.raises(CorpusError, match="tab-separated references"):
            read_tab_refs(path, num_refs)


# ---------------------------------------------------------------- errors
def test_invalid_utf8_names_line(tmp_path):
    p = tmp_path / "hyp.txt"
    p.write_bytes(b"fine\nalso fine\n" * 8 + b"abcd\xffx\n")
    msg = (r"hyp.txt:17: invalid UTF-8 \(byte 0xff at column 5, offset 124\); "
           r"use --encoding-errors replace")
    with pytest.raises(CorpusError, match=msg) as ei:
        read_lines(p)
    assert "\n" not in str(ei.value)
    assert isinstance(ei.value, ValueError)
    with pytest.raises(CorpusError, match=msg):
        list(iter_text_chunks(p, [p], batch_size=3))
    assert read_lines(p, errors="replace")[-1] == "abcd\ufffdx"
    with pytest.raises(CorpusError, match=r"hyp.txt:17: invalid"):
        Corpus.from_files(p, [p])


def test_invalid_utf8_streaming_late_block(tmp_path, monkeypatch):
    monkeypatch.setattr(textio, "BLOCK_BYTES", 64)
    p = tmp_path / "big.txt"
    p.write_bytes("ü line\n".encode() * 100 + b"\xc3(\n")  # truncated 2-byte sequence
    with pytest.raises(CorpusError, match=r"big.txt:101: invalid UTF-8 \(byte 0xc3 at column 1, "
                                          r"offset 800\)"):
        list(iter_text_chunks(p, batch_size=7))


def test_invalid_utf8_gz_and_hint(tmp_path):
    p = tmp_path / "x.txt.gz"
    with gzip.open(p, "wb") as f:
        f.write(b"ok\n\x80\n")
    with pytest.raises(CorpusError, match=r"x.txt.gz:2: invalid UTF-8 \(byte 0x80 at column 1"):
        read_lines(p)
    q = tmp_path / "x.txt"
    q.write_bytes(p.read_bytes())
    with pytest.raises(CorpusError, match="looks gzip-compressed"):
        read_lines(q)


def test_invalid_utf8_in_table_files(tmp_path):
    t = tmp_path / "a.tsv"
    t.write_bytes(b"hyp\tref\na\tb\nc\xfe\td\n")
    with pytest.raises(CorpusError, match=r"a.tsv:3: invalid UTF-8 \(byte 0xfe at column 2"):
        read_table(t)
    with pytest.raises(CorpusError, match=r"a.tsv:3: invalid UTF-8"):
        list(iter_batches(t))
    j = tmp_path / "a.jsonl"
    j.write_bytes(b'{"hyp": "a"}\n{"hyp": "b\xff"}\n')
    with pytest.raises(CorpusError, match=r"a.jsonl:2: invalid UTF-8 \(byte 0xff"):
        read_table(j)


def test_line_count_mismatch(tmp_path):
    h, r = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    h.write_text("a\nb\nc\n")
    r.write_text("a\nb\n")
    msg = r"line-count mismatch: .*hyp.txt has 3 lines but .*ref.txt has 2 lines"
    with pytest.raises(CorpusError, match=msg):
        Corpus.from_files(h, [h, r])
    with pytest.raises(CorpusError, match=msg):
        list(iter_text_chunks(h, [r]))
    with pytest.raises(CorpusError, match=msg):  # detected while streaming, too
        list(iter_text_chunks(h, [r], batch_size=1, precount=False))
    with pytest.raises(CorpusError, match=r"ref.txt has 2 lines but .*hyp.txt has 3"):
        list(iter_text_chunks(r, [h], batch_size=1, precount=False))
    with pytest.raises(CorpusError, match=r"refs\[0\] has 2 segments but there are 3 hyp"):
        load_corpus(["a", "b", "c"], [["a", "b"]])
    with pytest.raises(CorpusError, match=r"N x K"):
        load_corpus(["a", "b"], [["r1", "r2", "r3"], ["r1", "r2", "r3"]])


def test_empty_inputs(tmp_path):
    e = tmp_path / "empty.txt"
    e.write_bytes(b"")
    assert read_lines(e) == []
    with pytest.raises(CorpusError, match=r"empty.txt: empty input"):
        Corpus.from_files(e, [e])
    with pytest.raises(CorpusError, match=r"empty.txt: empty input"):
        list(iter_text_chunks(e, [e]))
    with pytest.raises(CorpusError, match="empty input"):
        load_corpus([], [[]])
    t = tmp_path / "empty.tsv"
    t.write_text("hyp\tref\n")
    with pytest.raises(CorpusError, match=r"empty.tsv: empty input"):
        read_table(t)
    t.write_text("")
    with pytest.raises(CorpusError, match=r"empty.tsv: empty file \(no header line\)"):
        read_table(t)


def test_missing_column_and_bad_values(tmp_path, table):
    p = tmp_path / "a.parquet"
    pq.write_table(table, p)
    with pytest.raises(CorpusError, match=r"a.parquet: no column 'hypothesis' \(available: 'hyp', "
                                          r"'ref', 'ref_1', 'system', 'seg'\); pass hyp="):
        read_table(p, hyp="hypothesis")
    with pytest.raises(CorpusError, match=r"no column 'r9'"):
        list(iter_batches(p, refs=["r9"]))
    with pytest.raises(CorpusError, match=r"no column 'doc'"):
        read_table(p, doc="doc")
    pq.write_table(pa.table({"hyp": ["a", None], "ref": ["b", "c"]}), p)
    with pytest.raises(CorpusError, match=r"column 'hyp' has a missing value \(null\) at row 2"):
        read_table(p)
    pq.write_table(pa.table({"hyp": [1, 2]}), p)
    with pytest.raises(CorpusError, match=r"column 'hyp' has type int64; expected strings"):
        read_table(p)
    j = tmp_path / "a.jsonl"
    j.write_text('{"hyp": "a", "ref": "b"}\n{"hyp": 3, "ref": "b"}\n')
    with pytest.raises(CorpusError, match=r"a.jsonl:2: field 'hyp' is int, expected a string"):
        read_table(j)
    j.write_text('{"hyp": "a"}\n{"hyp": "b"\n')
    with pytest.raises(CorpusError, match=r"a.jsonl:2: invalid JSON"):
        read_table(j)
    t = tmp_path / "a.tsv"
    t.write_text("hyp\tref\na\tb\nc\td\te\n")
    with pytest.raises(CorpusError, match=r"a.tsv:3: found 3 tab-separated fields, the header "
                                          r"has 2"):
        read_table(t)


def test_unknown_format(tmp_path):
    with pytest.raises(CorpusError, match=r"unknown table format 'xml'; known: tsv, csv, jsonl"):
        read_table(tmp_path / "a.xml", fmt="xml")
    with pytest.raises(CorpusError, match=r"a.txt: cannot tell the table format"):
        read_table(tmp_path / "a.txt")
    with pytest.raises(CorpusError, match=r"parquet files cannot be .gz-compressed"):
        guess_format("x.parquet.gz")
    assert [guess_format(f) for f in ("a.tsv.gz", "b.JSONL", "c.feather", "d.arrow", "e.de")] == \
        ["tsv", "jsonl", "arrow", "arrow", "text"]
    p = tmp_path / "junk.parquet"
    p.write_bytes(b"not parquet at all")
    with pytest.raises(CorpusError, match=r"junk.parquet: not a Parquet file"):
        read_table(p)


# ---------------------------------------------------------------- systems
def test_systems_round_trip():
    refs = [["r1", "r2", "r3"], ["q1", None, "q3"]]
    systems = {"A": ["a1", "a2", "a3"], "B": ["b1", "b2", "b3"], "C": ["", "c", "cc"]}
    c = Corpus.from_systems(systems, refs)
    assert len(c) == 9
    assert c.systems() == ["A", "B", "C"]
    got, shared = c.by_system()
    assert got == systems
    assert shared == refs
    # through an Arrow table with interleaved rows
    t = c.table.take([0, 3, 6, 1, 4, 7, 2, 5, 8])
    got, shared = Corpus.from_table(t).by_system()
    assert got == systems
    assert shared == refs


def test_systems_that_differ():
    c = Corpus.from_lists(["a", "b", "c", "d"], [["r1", "r2", "r1", "X"]],
                          system=["A", "A", "B", "B"])
    with pytest.raises(CorpusError, match=r"system 'B' differs from system 'A' at its segment 2 "
                                          r"\(row 4\): ref_0 'X' != 'r2'"):
        c.by_system()
    c = Corpus.from_lists(["a", "b", "c"], [["r1", "r2", "r1"]], system=["A", "A", "B"])
    with pytest.raises(CorpusError, match=r"system 'B' has 1 segments but system 'A' has 2"):
        c.by_system()
    c = Corpus.from_lists(["a", "b", "c", "d"], [["r"] * 4], system=["A", "A", "B", "B"],
                          seg=[1, 2, 2, 1])
    with pytest.raises(CorpusError, match=r"system 'B' differs .* segment 1 \(row 3\): seg 2 != 1"):
        c.by_system()
    with pytest.raises(CorpusError, match="system 'B' has 1 segments but system 'A' has 2"):
        Corpus.from_systems({"A": ["a", "b"], "B": ["c"]})
