"""Corpus ingestion: every input kind (in-memory, text and table files) gives the same lists,
read with sacrebleu's CLI semantics. Stdin systems and errors: ``test_corpus_stdin_errors.py``;
streaming with bounded memory and adversarial Unicode: ``test_corpus_streaming.py``."""
import functools
import gzip
import operator
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus_helpers import (
    EXT,
    HYPS,
    REF0,
    REF1,
    FakeStdin,
    sacrebleu_file_lines,
    write_table_file,
)
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
    read_table,
)


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
