"""Readers for the WMT human-evaluation and metric-score file layouts, into pyarrow tables.

Every reader returns a :class:`pyarrow.Table` whose columns keep the file's own names (a
column named ``RAW.SCR`` stays ``RAW.SCR``); numeric columns become ``int64`` / ``float64``,
everything else ``string``. Errors name the file and line.

Layouts handled (see ``../shared/data``):

* WMT DA segment / document / system scores (``ad-seg-scores-*.csv``, ``metrics-ad-*-scores-*.csv``,
  ``ad-sys-scores-*.csv``): whitespace separated with a header, trailing blanks allowed.
* WMT21 ranking files (``ad-sys-ranking-*-z.csv``): whitespace separated, no header.
* WMT21 individual standardised ratings (``ad-xxen-good-stnd.csv``): tab separated.
* WMT20 metric score files (``*.{sys,doc,seg}.score[.gz]``): tab separated, no header.
* Combined system-level tables (``DA-newstest2020-deen-sys-scores.csv`` and the Tangled
  ``DA-newstest2019-deen-sys-nohy-scores.csv``): ``LP SYSTEM HUMAN <metric...>``.
* Significance matrices (``adwilcox-*.csv``, ``DA-*-sig*.csv``): square tables with row names.
* Correlation outputs (``DA-*-cor*.csv``, ``RR-*-cor.csv``).
"""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

PathLike = Union[str, Path]

__all__ = [
    "read_table",
    "read_da_scores",
    "read_sys_ranking",
    "read_ratings",
    "read_metric_scores",
    "read_combined_sys_scores",
    "read_matrix",
    "read_outlier_dict",
    "read_cor",
    "read_darr_cor",
    "wmt20_paths",
    "SEG_METRIC_LEVELS",
]

SEG_METRIC_LEVELS = ("sys", "doc", "seg")


def _open_text(path: Path) -> io.TextIOBase:
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")


def read_table(path: PathLike, sep: Optional[str] = None, header: bool = True,
               names: Optional[Sequence[str]] = None, ragged: str = "error",
               string_columns: Iterable[str] = ()) -> pa.Table:
    """Read a delimited text file into a pyarrow Table.

    ``sep=None`` splits on runs of whitespace (the WMT ``.csv`` files are space separated
    and often end lines with a blank). ``ragged`` says what to do with a row whose cell count
    differs from the header: ``'error'`` (default), ``'pad'`` (missing trailing cells become
    NaN/empty) or ``'skip'``. Columns named in ``string_columns`` are kept as text.
    Parsing is done by pyarrow's C++ CSV reader (after normalising whitespace runs to tabs).
    """
    import re

    from pyarrow import csv as pacsv

    path = Path(path)
    string_columns = set(string_columns)
    if sep == "\t" and not header and names is not None and ragged == "error":
        # fast path: hand the (possibly gzipped) file straight to the C++ reader
        if not path.exists():
            raise FileNotFoundError(f"{path}: file not found")
        try:
            return pacsv.read_csv(
                str(path),
                read_options=pacsv.ReadOptions(column_names=list(names), use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
                convert_options=pacsv.ConvertOptions(
                    column_types={n: pa.string() for n in names if n in string_columns},
                    null_values=["", "NA", "None", "nan", "NaN"], strings_can_be_null=False))
        except pa.ArrowInvalid as exc:
            raise ValueError(f"{path}: {exc}") from None
    with _open_text(path) as fh:
        text = fh.read()
    lines = text.splitlines()
    if sep is None:
        lines = [re.sub(r"[ \t]+", "\t", ln.strip()) for ln in lines]
    else:
        lines = [ln.rstrip("\r") for ln in lines]
        lines = [ln[:-1] if ln.endswith(sep) and sep != " " else ln for ln in lines]
    lines = [ln for ln in lines if ln.strip()]
    if header:
        if not lines:
            raise ValueError(f"{path}: empty file, expected a header line")
        hdr = [h.strip() for h in lines[0].split("\t")]
        lines = lines[1:]
        if names is None:
            names = hdr
    if names is None:
        names = [f"c{i}" for i in range(len(lines[0].split("\t")) if lines else 0)]
    names = list(names)
    ncol = len(names)
    counts = [ln.count("\t") + 1 for ln in lines]
    bad = [i for i, c in enumerate(counts) if c != ncol]
    if bad:
        if ragged == "pad":
            lines = [ln + "\t" * (ncol - c) if c < ncol else ln for ln, c in zip(lines, counts)]
            bad = [i for i, c in enumerate(counts) if c > ncol]
        elif ragged == "skip":
            drop = set(bad)
            lines = [ln for i, ln in enumerate(lines) if i not in drop]
            bad = []
        if bad:
            i = bad[0]
            raise ValueError(f"{path}:{i + 1 + int(header)}: expected {ncol} fields, found {counts[i]}")
    # duplicated names (e.g. Tangled has a metric called "LP") get a suffix
    seen: Dict[str, int] = {}
    uniq = []
    for n in names:
        if n in seen:
            seen[n] += 1
            uniq.append(f"{n}.{seen[n]}")
        else:
            seen[n] = 0
            uniq.append(n)
    if not lines:
        return pa.table([pa.array([], type=pa.string()) for _ in uniq], names=uniq)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    ctypes = {n: pa.string() for n, orig in zip(uniq, names) if orig in string_columns}
    return pacsv.read_csv(
        io.BytesIO(data),
        read_options=pacsv.ReadOptions(column_names=uniq, use_threads=False),
        parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
        convert_options=pacsv.ConvertOptions(column_types=ctypes,
                                             null_values=["", "NA", "None", "nan", "NaN"],
                                             strings_can_be_null=False))


def read_da_scores(path: PathLike) -> pa.Table:
    """WMT DA segment/document/system score file (``SYS SID RAW.SCR Z.SCR N`` and variants).

    System and segment-id columns are always text (``SYS``, ``SEGID``), numeric ones typed.
    """
    return read_table(path, string_columns=("SYS", "SEGID"))


def read_sys_ranking(path: PathLike) -> pa.Table:
    """WMT21 ``ad-sys-ranking-<lp>-{z,raw}.csv`` (no header): RAW Z N N.ALL SYS [NAME]."""
    t = read_table(path, header=False)
    names = ["RAW.SCR", "Z.SCR", "N", "N.ALL", "SYS", "NAME"][: t.num_columns]
    return t.rename_columns(names)


def read_ratings(path: PathLike) -> pa.Table:
    """WMT21 individual ratings (``ad-<xxen>-good-stnd.csv``, tab separated).

    Columns: HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time.
    ``type`` is one of SYSTEM, REPEAT, REF, BAD_REF.
    """
    return read_table(path, string_columns=("HITId", "WorkerId", "sys_id", "type",
                                                      "Input.src", "Input.trg", "Input.item"))


def read_metric_scores(path: PathLike, level: Optional[str] = None) -> pa.Table:
    """WMT20 metric score file ``<METRIC>.<level>.score[.gz]`` (tab separated, no header).

    sys level: metric lp testset refset system score;
    doc level: metric lp testset refset system doc score;
    seg level: metric lp testset refset system doc seg score (seg = 1-based index in the doc).
    """
    path = Path(path)
    if level is None:
        parts = path.name.split(".")
        level = next((p for p in parts if p in SEG_METRIC_LEVELS), None)
        if level is None:
            raise ValueError(f"{path}: cannot tell the level (sys/doc/seg) from the name; pass level=")
    names = {"sys": ["metric", "lp", "testset", "refset", "system", "score"],
             "doc": ["metric", "lp", "testset", "refset", "system", "doc", "score"],
             "seg": ["metric", "lp", "testset", "refset", "system", "doc", "seg", "score"]}[level]
    return read_table(path, sep="\t", header=False, names=names,
                      string_columns=("metric", "lp", "testset", "refset", "system", "doc"))


def read_combined_sys_scores(path: PathLike) -> pa.Table:
    """``LP SYSTEM HUMAN <metric...>`` system-level tables (WMT20 results, Tangled WMT19).

    Rows with fewer cells than the header are padded with NaN (Tangled en-cs lacks ESIM).
    """
    return read_table(path, ragged="pad", string_columns=("LP", "SYSTEM"))


def read_matrix(path: PathLike, sep: Optional[str] = None) -> Tuple[List[str], List[str], np.ndarray]:
    """Square/rectangular matrix with a header of column names and row names in column 0
    (``adwilcox-*.csv``: space separated; ``DA-*-sig.csv``: tab separated). Returns
    (row_names, col_names, values float64 (r, c)); non-numeric cells become NaN."""
    path = Path(path)
    with _open_text(path) as fh:
        lines = [ln for ln in fh.read().splitlines() if ln.strip()]
    if sep is None and "\t" in lines[0]:
        sep = "\t"
    cols = [c for c in (lines[0].split(sep) if sep else lines[0].split()) if c.strip()]
    rows, vals = [], []
    for i, ln in enumerate(lines[1:], start=2):
        cells = ln.split(sep) if sep else ln.split()
        cells = [c.strip() for c in cells]
        while len(cells) > len(cols) + 1 and cells[-1] == "":
            cells.pop()
        if len(cells) != len(cols) + 1:
            raise ValueError(f"{path}:{i}: expected {len(cols) + 1} fields, found {len(cells)}")
        rows.append(cells[0])
        out = []
        for c in cells[1:]:
            try:
                out.append(float(c))
            except ValueError:
                out.append(np.nan)
        vals.append(out)
    return rows, cols, np.asarray(vals, dtype=np.float64).reshape(len(rows), len(cols))


def read_outlier_dict(path: PathLike) -> Dict[str, List[str]]:
    """WMT20 curated outlier list (``manual-evaluation/outlier-systems-dict.json``)."""
    with open(path, encoding="utf-8") as fh:
        return {k: list(v) for k, v in json.load(fh).items()}


def read_cor(path: PathLike) -> pa.Table:
    """WMT20 ``DA-<lp>-cor[-excloutl].csv`` (tab separated; first column = metric)."""
    t = read_table(path, sep="\t", string_columns=("",))
    return t.rename_columns(["metric"] + t.column_names[1:])


def _undash(name: str) -> str:
    return name.replace("_DASH_", "-").replace("_PLUS_", "+").replace("_DOT_", ".")


def read_darr_cor(path: PathLike) -> pa.Table:
    """WMT20 ``RR-*-cor.csv``: ``metric tau n_pairs`` (names use ``_DASH_`` for ``-``)."""
    t = read_table(path, header=False, names=["metric", "tau", "n"], string_columns=("metric",))
    names = [_undash(m) for m in t.column("metric").to_pylist()]
    return t.set_column(0, "metric", pa.array(names, type=pa.string()))


def wmt20_paths(root: PathLike, lp: str) -> Dict[str, Path]:
    """Paths of the WMT20 metrics-task files for one language pair (``de-en``; en-iu is
    ``en-iu_full`` / ``en-iu_news`` for the system-level tables)."""
    root = Path(root)
    base = lp.split("_")[0]
    compact = lp.replace("-", "")
    da = root / "manual-evaluation" / "DA"
    sl = root / "results" / "output" / "system-level"
    return {
        "seg_da": da / f"metrics-ad-seg-scores-{base}.csv",
        "doc_da": da / f"metrics-ad-doc-scores-{base}.csv",
        "sys_da": da / f"metrics-ad-sys-scores-{base}.csv",
        "wilcox": da / f"adwilcox-{base.replace('-', '')}.csv",
        "outliers": root / "manual-evaluation" / "outlier-systems-dict.json",
        "sys_scores": sl / f"DA-newstest2020-{compact}-sys-scores.csv",
        "cor": sl / f"DA-{compact}-cor.csv",
        "cor_excloutl": sl / f"DA-{compact}-cor-excloutl.csv",
        "sig": sl / f"DA-{compact}-sig.csv",
        "sig_excloutl": sl / f"DA-{compact}-sig-excloutl.csv",
        "darr_cor": root / "results" / "output" / "seglevel_allsys" /
        f"RR-newstest2020-{base.replace('-', '')}-seg-nohy-cor.csv",
        "darr_cor_excloutl": root / "results" / "output" / "seglevel_excloutl" /
        f"RR-newstest2020-{base.replace('-', '')}-seg-nohy-cor.csv",
        "seg_metric_dirs": root / "final-metric-scores",
    }


def table_to_numpy(table: pa.Table, column: str) -> np.ndarray:
    """Column as a numpy array (strings -> object array)."""
    col = table.column(column)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return np.asarray(col.to_pylist(), dtype=object)
    return col.to_numpy()
