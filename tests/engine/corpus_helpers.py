"""Shared data and helpers of the corpus-ingestion tests (``test_corpus*.py``): a small corpus,
a table writer for every file format, and sacrebleu 2.6.0's CLI reading of files and stdin."""
import io
import json

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
from sacrebleu.utils import smart_open

HYPS = ["Das ist ein Test .", "", "  leading space", "tab\tinside", "é 漢字 🙂"]
REF0 = ["Dies ist ein Test .", "leer", "", "x", "y"]
REF1 = ["zweite", None, "z", None, ""]


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

