"""Corpus ingestion: every input kind gives the same lists; sacrebleu's CLI reading semantics;
clear one-line errors; streaming with bounded memory; adversarial Unicode round trips."""
import functools
import gzip
import io
import json
import operator
import sys
import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
from conftest import require
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.utils import smart_open

from mtscore.engine import decoding, textio
from mtscore.engine.corpus import (
    Corpus,
    CorpusError,
    as_ref_streams,
    as_text_list,
    batch_lists,
    count_lines,
    guess_format,
    iter_batches,
    iter_text_chunks,
    load_corpus,
    read_lines,
    read_stdin_systems,
    read_tab_refs,
    read_table,
)

HYPS = ["Das ist ein Test .", "", "  leading space", "tab\tinside", "é 漢字 🙂"]
REF0 = ["Dies ist ein Test .", "leer", "", "x", "y"]
REF1 = ["zweite", None, "z", None, ""]


# ---------------------------------------------------------------- helpers
def write_table_file(path, table: pa.Table, fmt: str) -> None:
    """Write ``table`` in ``fmt`` (tsv writes verbatim; values must not contain tabs/newlines)."""
    if fmt == "parquet":
        pq.write_table(table, path)
    elif fmt == "feather":
        feather.write_feather(table, path)
    elif fmt == "arrows":
        with pa.OSFile(str(path), "wb") as f, pa.ipc.new_stream(f, table.schema) as w:
            w.write_table(table)
    elif fmt in ("jsonl", "jsonl-ascii"):
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for row in table.to_pylist():
                f.write(json.dumps(row, ensure_ascii=fmt == "jsonl-ascii") + "\n")
    elif fmt == "tsv":
        cols = table.column_names
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("\t".join(cols) + "\n")
            for row in table.to_pylist():
                f.write("\t".join("" if row[c] is None else str(row[c]) for c in cols) + "\n")
    else:  # pragma: no cover
        raise ValueError(fmt)


EXT = {"parquet": "parquet", "feather": "feather", "arrows": "arrows", "jsonl": "jsonl",
       "jsonl-ascii": "jsonl", "tsv": "tsv"}


def sacrebleu_file_lines(path):
    """How sacrebleu 2.6.0's CLI reads -i / reference files."""
    return [line.rstrip() for line in smart_open(str(path), encoding="utf-8")]


def sacrebleu_stdin_systems(data: bytes):
    """sacrebleu 2.6.0 CLI stdin reading (sacrebleu.py, 'Read from STDIN'); SystemExit on error."""
    inputfh = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    fields = inputfh.readline().rstrip().split("\t")
    num_sys = len(fields)
    full_systems = [[s] for s in fields]
    for line in inputfh:
        fields = line.rstrip().split("\t")
        if len(fields) != num_sys:
            raise SystemExit(17)
        for sys_idx, sent in enumerate(fields):
            full_systems[sys_idx].append(sent.rstrip())
    return full_systems


class FakeStdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


# ---------------------------------------------------------------- in-memory kinds
@pytest.mark.parametrize("kind", ["list", "tuple", "numpy_U", "numpy_obj", "series",
                                  "arrow", "chunked", "generator"])
def test_as_text_list_kinds(kind):
    conv = {
        "list": list, "tuple": tuple, "numpy_U": np.array,
        "numpy_obj": lambda x: np.array(x, dtype=object), "series": pd.Series,
        "arrow": pa.array, "chunked": lambda x: pa.chunked_array([x[:2], x[2:]]),
        "generator": lambda x: (s for s in x),
    }[kind]
    out = as_text_list(conv(HYPS), "hyps")
    assert out == HYPS
    assert all(type(s) is str for s in out)


def test_as_text_list_returns_fresh_list_and_plain_str():
    src = ["a", "b"]
    out = as_text_list(src, "hyps")
    assert out == src
    assert out is not src
    out = as_text_list(list(np.array(["a", "b"])), "hyps")  # numpy.str_ elements
    assert [type(s) for s in out] == [str, str]


def test_as_text_list_missing_values():
    assert as_text_list(pd.Series(["a", None, np.nan]), "r", allow_none=True) == ["a", None, None]
    assert as_text_list(pa.array(["a", None]), "r", allow_none=True) == ["a", None]
    with pytest.raises(TypeError, match=r"hyps: element 1 is a missing value"):
        as_text_list(pd.Series(["a", np.nan]), "hyps")
    with pytest.raises(TypeError, match=r"element 0 is bytes; decode"):
        as_text_list([b"x"], "hyps")
    with pytest.raises(TypeError, match=r"element 1 is int, expected str"):
        as_text_list(["a", 3], "hyps")


def test_as_text_list_rejects_ambiguous_shapes():
    with pytest.raises(TypeError, match="not a single string"):
        as_text_list("abc", "hyps")
    with pytest.raises(TypeError, match="is a table"):
        as_text_list(pd.DataFrame({"hyp": ["a"]}), "hyps")
    with pytest.raises(TypeError, match="is a table"):
        as_text_list(pa.table({"hyp": ["a"]}), "hyps")
    with pytest.raises(TypeError, match=r"1-D; got an array of shape \(2, 1\)"):
        as_text_list(np.array([["a"], ["b"]]), "hyps")


@pytest.mark.parametrize("kind", ["lists", "tuples", "numpy2d", "dataframe", "arrow_table",
                                  "series_list"])
def test_as_ref_streams_kinds(kind):
    refs = [REF0, ["a", "b", "c", "d", "e"]]
    conv = {
        "lists": lambda r: r, "tuples": lambda r: tuple(tuple(s) for s in r),
        "numpy2d": np.array,
        "dataframe": lambda r: pd.DataFrame({f"r{k}": s for k, s in enumerate(r)}),
        "arrow_table": lambda r: pa.table({f"r{k}": s for k, s in enumerate(r)}),
        "series_list": lambda r: [pd.Series(s) for s in r],
    }[kind]
    assert as_ref_streams(conv(refs), 5, "refs") == refs


def test_as_ref_streams_none_refs_kept():
    assert as_ref_streams([REF0, REF1], 5, "refs") == [REF0, REF1]


def test_as_ref_streams_errors():
    with pytest.raises(ValueError, match=r"N x K \(segment-major\) layout.*refs\[k\]\[i\]"):
        as_ref_streams([["a", "b"], ["c", "d"], ["e", "f"]], 3, "BLEU: refs")
    with pytest.raises(ValueError, match=r"N x K"):  # ragged per-segment references
        as_ref_streams([["a", "b"], ["c"], ["e", "f"]], 3, "refs")
    with pytest.raises(ValueError, match=r"refs\[1\] has 2 segments but there are 3 hypotheses"):
        as_ref_streams([["a", "b", "c"], ["a", "b"]], 3, "refs")
    with pytest.raises(ValueError, match=r"different lengths \(refs\[0\] has 3, refs\[1\] has 2\)"):
        as_ref_streams([["a", "b", "c"], ["a", "b"]], None, "refs")
    with pytest.raises(TypeError, match="flat list of strings"):
        as_ref_streams(["a", "b"], 2, "refs")
    with pytest.raises(ValueError, match="no reference streams"):
        as_ref_streams([], 2, "refs")


# ---------------------------------------------------------------- every input kind -> same lists
@pytest.fixture
def table():
    return pa.table({"hyp": HYPS, "ref": REF0, "ref_1": REF1,
                     "system": ["s1"] * 5, "seg": [1, 2, 3, 4, 5]})


@pytest.mark.parametrize("fmt", ["parquet", "feather", "arrows", "jsonl", "jsonl-ascii"])
def test_table_files_round_trip(tmp_path, table, fmt):
    path = tmp_path / f"data.{EXT[fmt]}"
    write_table_file(path, table, fmt)
    for c in (read_table(path), load_corpus(str(path)), load_corpus(path)):
        assert c.hyps() == HYPS
        assert c.ref_streams() == [REF0, REF1]
        assert c.column("seg") == [1, 2, 3, 4, 5]
        assert c.systems() == ["s1"]
        assert c.table.schema.field("hyp").type == pa.string()
    batches = list(iter_batches(path, batch_size=2))
    assert [b.num_rows for b in batches] == [2, 2, 1]
    hyps = functools.reduce(operator.iadd, (batch_lists(b)[0] for b in batches), [])
    refs = [functools.reduce(operator.iadd, (batch_lists(b)[1][k] for b in batches), []) for k in range(2)]
    assert hyps == HYPS
    assert refs == [REF0, REF1]


def test_tsv_round_trip(tmp_path):
    refs = [r if r is not None else "" for r in REF1]
    hyps = [h.replace("\t", " ") for h in HYPS]
    path = tmp_path / "data.tsv"
    path.write_text("id\thyp\tref1\tref0\r\n" + "".join(
        f"{i}\t{h}\t{r1}\t{r0}\r\n" for i, (h, r0, r1) in enumerate(zip(hyps, REF0, refs))),
        encoding="utf-8", newline="")
    c = read_table(path, refs=["ref0", "ref1"])
    assert c.hyps() == hyps
    assert c.ref_streams() == [REF0, refs]
    auto = read_table(path)  # 'ref0', 'ref1' found by convention, in numeric order
    assert auto.ref_streams() == [REF0, refs]
    batches = list(iter_batches(path, refs=["ref0", "ref1"], batch_size=3))
    assert [b.num_rows for b in batches] == [3, 2]
    assert functools.reduce(operator.iadd, (batch_lists(b)[0] for b in batches), []) == hyps


def test_tsv_keeps_bare_cr_and_gz(tmp_path):
    path = tmp_path / "data.tsv.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"hyp\tref\na\rb\tc \nd\t\n")
    c = read_table(path)
    assert c.hyps() == ["a\rb", "d"]
    assert c.ref_streams() == [["c ", ""]]
    assert [batch_lists(b) for b in iter_batches(path)] == [(["a\rb", "d"], [["c ", ""]])]


def test_csv_quoted(tmp_path):
    path = tmp_path / "data.csv"
    pd.DataFrame({"hyp": ['"quoted", with comma', "two\nlines"], "ref": ["1", "2"]}).to_csv(
        path, index=False)
    c = read_table(path)
    assert c.hyps() == ['"quoted", with comma', "two\nlines"]
    assert c.ref_streams() == [["1", "2"]]
    assert [batch_lists(b) for b in iter_batches(path)] == [(c.hyps(), [["1", "2"]])]


def test_parquet_dataset_directory(tmp_path, table):
    d = tmp_path / "ds"
    d.mkdir()
    pq.write_table(table.slice(0, 3), d / "part-0.parquet")
    pq.write_table(table.slice(3), d / "part-1.parquet")
    assert guess_format(d) == "parquet"
    assert read_table(d).hyps() == HYPS
    assert functools.reduce(operator.iadd, (batch_lists(b)[0] for b in iter_batches(d, batch_size=2)), []) == HYPS


@pytest.mark.parametrize("kind", ["arrow", "pandas", "record_batch"])
def test_in_memory_tables(table, kind):
    obj = {"arrow": table, "pandas": table.to_pandas(),
           "record_batch": table.to_batches()[0]}[kind]
    c = load_corpus(obj)
    assert c.hyps() == HYPS
    assert c.ref_streams() == [REF0, REF1]
    assert c.systems() == ["s1"]
    c2 = Corpus.from_table(obj, hyp="hyp", refs=["ref_1"], system=False, seg=False)
    assert c2.columns == ["hyp", "ref_0"]
    assert c2.ref_streams() == [REF1]


@pytest.mark.parametrize("conv", [list, tuple, np.array, pd.Series, pa.array])
def test_load_corpus_sequences(conv):
    c = load_corpus(conv(HYPS), [conv(REF0), REF1])
    assert c.hyps() == HYPS
    assert c.ref_streams() == [REF0, REF1]
    assert c.table.column("ref_1").null_count == 2
    assert Corpus.from_table(c.table) == c


def test_text_files_and_gz(tmp_path):
    hyp = tmp_path / "hyp.txt"
    ref = tmp_path / "ref.de.gz"
    hyp.write_bytes(b"a b  \r\nc\rd\n\xef\xbb\xbfbom\n\x0cff\x0c\nlast no newline \t")
    with gzip.open(ref, "wb") as f:
        f.write("r1\nr2\n\nr4\u3000\nr5\n".encode())
    expect = sacrebleu_file_lines(hyp)
    assert expect == ["a b", "c\rd", "\ufeffbom", "\x0cff", "last no newline"]
    assert read_lines(hyp) == expect
    assert read_lines(ref) == sacrebleu_file_lines(ref) == ["r1", "r2", "", "r4", "r5"]
    for c in (Corpus.from_files(hyp, [ref]), load_corpus(str(hyp), str(ref)),
              load_corpus(HYPS, [ref])):
        assert c.ref_streams() == [["r1", "r2", "", "r4", "r5"]]
    assert Corpus.from_files(hyp, ref).hyps() == expect
    assert count_lines(hyp) == 5
    assert count_lines(ref) == 5


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16", "utf-8-sig", "cp1252"])
def test_other_encodings_match_sacrebleu(tmp_path, encoding, monkeypatch):
    monkeypatch.setattr(decoding, "DECODE_BLOCK", 7)  # block-wise decoding cut after newlines
    text = "\ufeffstart \nä ö ü\r\nmid\rdle\n\n" + "Straße  \n" * 5 + "end"
    p = tmp_path / "x.txt"
    p.write_bytes(text.encode(encoding, "ignore"))
    expect = [line.rstrip() for line in smart_open(str(p), encoding=encoding)]
    assert read_lines(p, encoding=encoding) == expect
    got = [s for ch in iter_text_chunks(p, batch_size=2, encoding=encoding) for s in ch.hyps]
    assert got == expect


def test_undecodable_without_position(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes("no bom".encode("utf-16-le"))
    with pytest.raises(CorpusError, match=r"x.txt: cannot decode as utf-16 \(UTF-16 stream does "
                                          r"not start with BOM\)"):
        read_lines(p, encoding="utf-16")
    with pytest.raises(CorpusError, match="unknown encoding 'nope'"):
        read_lines(p, encoding="nope")
    with pytest.raises(CorpusError, match="unknown encoding error handler 'nah'"):
        read_lines(p, errors="nah")


def test_stdin_dash(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"x \ny\r\n"))
    assert read_lines("-") == ["x", "y"]
    monkeypatch.setattr(sys, "stdin", FakeStdin(b'{"hyp": "a", "ref": "b"}\n'))
    assert read_table("-", fmt="jsonl").ref_streams() == [["b"]]
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"hyp\tref\na\tb\n"))
    assert [batch_lists(b) for b in iter_batches("-", fmt="tsv")] == [(["a"], [["b"]])]
    with pytest.raises(CorpusError, match="needs fmt="):
        read_table("-")


def test_text_and_tsv_paths_import_nothing_heavy(tmp_path):
    """CLI cold start: reading text/TSV into lists must not import pyarrow or pandas."""
    import subprocess

    (tmp_path / "h.txt").write_text("a\nb\n")
    (tmp_path / "t.tsv").write_text("hyp\tref\na\tb\n")
    code = (
        "import sys\n"
        "from mtscore.engine.corpus import Corpus, read_lines, read_table, iter_text_chunks\n"
        f"c = Corpus.from_files({str(tmp_path / 'h.txt')!r}, [{str(tmp_path / 'h.txt')!r}])\n"
        "c.hyps(); c.ref_streams()\n"
        f"read_table({str(tmp_path / 't.tsv')!r}).ref_streams()\n"
        f"list(iter_text_chunks({str(tmp_path / 'h.txt')!r}))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'pandas')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_metric_path_loads_only_coercion(tmp_path):
    """Metrics coerce their inputs through engine.coerce: scoring lists loads neither the file
    readers, the table formats nor pyarrow."""
    import subprocess

    code = (
        "import sys\n"
        "from mtscore.engine.metrics.bleu import BLEU\n"
        "BLEU().corpus_score(['a b c'], [['a b c']])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyarrow' or m in (\n"
        "    'mtscore.engine.corpus', 'mtscore.engine.tables', 'mtscore.engine.columns',\n"
        "    'mtscore.engine.textio', 'mtscore.engine.decoding')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_corpus_module_keeps_the_old_public_names():
    """mtscore.engine.corpus re-exports what moved to its own module (the same objects)."""
    from mtscore.engine import coerce, corpus, corpus_error, tables

    for name in corpus.__all__:
        assert hasattr(corpus, name), name
    assert corpus.CorpusError is corpus_error.CorpusError
    assert corpus.as_text_list is coerce.as_text_list
    assert corpus.as_ref_streams is coerce.as_ref_streams
    for name in ("read_lines", "count_lines", "read_tab_refs", "read_stdin_systems",
                 "iter_text_chunks", "iter_aligned_lines", "TextChunk"):
        assert getattr(corpus, name) is getattr(textio, name)
    for name in ("guess_format", "iter_batches", "batch_lists", "TABLE_FORMATS"):
        assert getattr(corpus, name) is getattr(tables, name)
    assert corpus.TABLE_FORMATS == ("tsv", "csv", "jsonl", "parquet", "arrow")


def test_csv_invalid_utf8_and_jsonl_blank_lines(tmp_path):
    p = tmp_path / "a.csv"
    p.write_bytes(b'hyp,ref\na,b\n"c\xff",d\n')
    with pytest.raises(CorpusError, match=r"a.csv:3: invalid UTF-8 \(byte 0xff at column 3"):
        read_table(p)
    j = tmp_path / "a.jsonl"
    j.write_bytes(b'\n{"hyp": "a"}\n\n  \n{"hyp": 2}\n')
    with pytest.raises(CorpusError, match=r"a.jsonl:5: field 'hyp' is int"):
        read_table(j)
    j.write_bytes(b'{"hyp": "a"}\n\n  \n{"hyp": "b"}\n')
    assert read_table(j).hyps() == ["a", "b"]


def test_lazy_arrow_for_text(tmp_path):
    """Text files -> lists without pyarrow; the table appears on demand with the schema."""
    hyp = tmp_path / "h.txt"
    hyp.write_text("a\nb\n")
    c = Corpus.from_files(hyp, [hyp])
    assert c._table is None
    t = c.table
    assert t.schema.names == ["hyp", "ref_0"]
    assert t.column("hyp").to_pylist() == ["a", "b"]


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


# ---------------------------------------------------------------- streaming, bounded memory
def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_streaming_text_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(textio, "BLOCK_BYTES", 1 << 17)
    rng = np.random.default_rng(0)
    words = ["Hausaufgaben", "Straßenbahn", "der", "ä", "漢字", "🙂", "x\ry", "  "]
    idx = rng.integers(0, len(words), size=(30000, 30)).tolist()
    lens = rng.integers(0, 31, size=30000).tolist()
    lines = [" ".join(words[j] for j in row[:k]) for row, k in zip(idx, lens)]
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt.gz"
    hyp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with gzip.open(ref, "wt", encoding="utf-8") as f:
        f.write("\n".join(reversed(lines)))
    assert hyp.stat().st_size > 2_000_000
    full_h, full_r = read_lines(hyp), read_lines(ref)
    assert full_h == sacrebleu_file_lines(hyp)
    assert full_r == sacrebleu_file_lines(ref)
    got_h, got_r, starts = [], [], []
    for ch in iter_text_chunks(hyp, [ref], batch_size=2000):
        assert 0 < len(ch.hyps) <= 2000
        assert len(ch.refs[0]) == len(ch.hyps)
        starts.append(ch.start)
        got_h += ch.hyps
        got_r += ch.refs[0]
    assert got_h == full_h
    assert got_r == full_r
    assert starts == list(range(0, 30000, 2000))

    def stream():
        for _ in iter_text_chunks(hyp, [ref], batch_size=2000):
            pass

    peak_stream = _peak(stream)
    peak_full = _peak(lambda: (read_lines(hyp), read_lines(ref)))
    assert peak_stream < peak_full / 4, (peak_stream, peak_full)


def test_streaming_tables_bounded(tmp_path):
    n = 100_000
    hyps = [f"hypothesis number {i} " + "x" * (i % 50) for i in range(n)]
    t = pa.table({"hyp": hyps, "ref": hyps[::-1]})
    pq.write_table(t, tmp_path / "big.parquet", row_group_size=5000)
    feather.write_feather(t, tmp_path / "big.feather", chunksize=5000)
    write_table_file(tmp_path / "big.tsv", t, "tsv")
    for name in ("big.parquet", "big.feather", "big.tsv"):
        base = pa.total_allocated_bytes()
        peak, rows, first = 0, 0, []
        for b in iter_batches(tmp_path / name, batch_size=4096):
            assert b.num_rows <= 4096
            peak = max(peak, pa.total_allocated_bytes() - base)
            if rows == 0:
                first = batch_lists(b)[0]
            rows += b.num_rows
        assert rows == n
        assert first == hyps[:len(first)]
        assert peak < t.nbytes / 4, (name, peak, t.nbytes)


# ---------------------------------------------------------------- adversarial Unicode
ADVERSARIAL = [*list("\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u3000\ufeff\x00 \t"), "́", "é", "👩\u200d💻", "\u202e", "�", "\U0010ffff", "ß", "İ", "ﬃ", "漢", "𠀀"]
TEXT = st.lists(st.one_of(st.sampled_from(ADVERSARIAL),
                          st.characters(exclude_categories=("Cs",))), max_size=20).map("".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT.map(lambda s: s.replace("\n", "")), min_size=1, max_size=12),
       st.sampled_from([1 << 22, 5]))
def test_text_files_match_sacrebleu(tmp_path_factory, lines, block):
    d = tmp_path_factory.mktemp("txt")
    data = "\n".join(lines).encode("utf-8")
    for name, write in (("h.txt", lambda p: p.write_bytes(data)),
                        ("h.txt.gz", lambda p: p.write_bytes(gzip.compress(data)))):
        p = d / name
        write(p)
        expect = sacrebleu_file_lines(p)
        assert read_lines(p) == expect
        old = textio.BLOCK_BYTES
        textio.BLOCK_BYTES = block  # tiny blocks split multi-byte characters
        try:
            got = [s for ch in iter_text_chunks(p, [p], batch_size=3, precount=block > 5)
                   for s in ch.hyps] if expect else []
        finally:
            textio.BLOCK_BYTES = old
        assert got == expect


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(TEXT, st.one_of(st.none(), TEXT)), min_size=1, max_size=8),
       st.sampled_from(["parquet", "feather", "arrows", "jsonl", "jsonl-ascii"]))
def test_table_formats_round_trip_unicode(tmp_path_factory, rows, fmt):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    t = pa.table({"hyp": pa.array(hyps, pa.string()), "ref": pa.array(refs, pa.string())})
    p = tmp_path_factory.mktemp("tbl") / f"u.{EXT[fmt]}"
    write_table_file(p, t, fmt)
    c = read_table(p)
    assert c.hyps() == hyps
    assert c.ref_streams() == [refs]
    assert [batch_lists(b) for b in iter_batches(p, batch_size=len(rows))] == [(hyps, [refs])]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=8))
def test_tsv_round_trip_unicode(tmp_path_factory, rows):
    rows = [(h.translate({9: 32, 10: 32}), r.translate({9: 32, 10: 32})) for h, r in rows]
    t = pa.table({"hyp": [h for h, _ in rows], "ref": [r for _, r in rows],
                  "id": [str(i) for i in range(len(rows))]})  # last column never ends in \r
    p = tmp_path_factory.mktemp("tsv") / "u.tsv"
    write_table_file(p, t, "tsv")
    c = read_table(p)
    assert c.hyps() == [h for h, _ in rows]
    assert c.ref_streams() == [[r for _, r in rows]]
    assert [batch_lists(b) for b in iter_batches(p)] == [(c.hyps(), c.ref_streams())]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(TEXT, st.one_of(st.none(), TEXT)), min_size=1, max_size=8))
def test_in_memory_kinds_agree_unicode(rows):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    for conv in (list, pd.Series, lambda x: pa.array(x, pa.string()),
                 lambda x: np.array(x, dtype=object)):
        c = load_corpus(conv(hyps), [conv(refs)])
        assert c.hyps() == hyps
        assert c.ref_streams() == [refs]
        assert Corpus.from_table(c.table) == c


# ---------------------------------------------------------------- real data
def test_real_wmt17_files(shared_data):
    d = shared_data / "wmt17-en-de-systems"
    ref = require(d / "reference.txt")
    sys_file = require(d / "newstest2017.uedin-nmt.4722.en-de.txt")
    assert read_lines(ref) == sacrebleu_file_lines(ref)
    c = Corpus.from_files(sys_file, [ref])
    assert c.hyps() == sacrebleu_file_lines(sys_file)
    assert len(c) == count_lines(ref) == 3004
    chunks = list(iter_text_chunks(sys_file, [ref], batch_size=1000))
    assert [len(ch.hyps) for ch in chunks] == [1000, 1000, 1000, 4]
    assert functools.reduce(operator.iadd, (ch.refs[0] for ch in chunks), []) == c.ref_streams()[0]
