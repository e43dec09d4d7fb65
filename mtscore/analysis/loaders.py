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
* Combined system-level tables (``DA-newstest2020-deen-sys-scores.csv`` and the
  ``DA-newstest2019-deen-sys-nohy-scores.csv``): ``LP SYSTEM HUMAN <metric...>``.
* Significance matrices (``adwilcox-*.csv``, ``DA-*-sig*.csv``): square tables with row names.
* Correlation outputs (``DA-*-cor*.csv``, ``RR-*-cor.csv``).
"""
from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Union

import numpy as np
import pyarrow as pa

from ..engine.strict_numbers import NumberSyntaxError, parse_number, parse_numbers
from .errors import AnalysisInputError

PathLike = Union[str, Path]

__all__ = [
    "SEG_METRIC_LEVELS",
    "float_column",
    "metric_score_column",
    "read_combined_sys_scores",
    "read_combined_sys_scores_lines",
    "read_cor",
    "read_da_scores",
    "read_da_scores_lines",
    "read_darr_cor",
    "read_judge_groups",
    "read_judge_ratings",
    "read_matrix",
    "read_metric_scores",
    "read_outlier_dict",
    "read_ratings",
    "read_ratings_lines",
    "read_sys_ranking",
    "read_table",
    "read_table_lines",
    "read_text",
    "wmt20_paths",
]

SEG_METRIC_LEVELS = ("sys", "doc", "seg")


def _open_text(path: Path) -> io.TextIOBase:
    return io.StringIO(read_text(path))


def read_text(path: PathLike) -> str:
    """The whole file (``.gz`` decompressed) as text. Invalid UTF-8 or a NUL byte (a binary
    file) raises :class:`AnalysisInputError` naming the line and column; a missing path raises
    ``FileNotFoundError``, a folder ``IsADirectoryError`` (both name the path)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    if path.is_dir():
        raise IsADirectoryError(21, "is a folder, expected a file", str(path))
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as fh:
            data = fh.read()
    else:
        data = path.read_bytes()
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = _line_col(data, nul)
        raise AnalysisInputError(f"{path}:{line}:{col}: NUL byte: this looks like a binary file, "
                                 "expected a text table")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data, exc.start)
        raise AnalysisInputError(f"{path}:{line}:{col}: invalid UTF-8 (byte 0x{data[exc.start]:02x}); "
                                 "save the file as UTF-8") from None
    return text


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of byte ``offset`` in ``data``."""
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - start + 1


def read_table(path: PathLike, sep: str | None = None, header: bool = True,
               names: Sequence[str] | None = None, ragged: str = "error",
               string_columns: Iterable[str] = ()) -> pa.Table:
    """Read a delimited text file into a pyarrow Table.

    ``sep=None`` splits on runs of whitespace (the WMT ``.csv`` files are space separated
    and often end lines with a blank). ``ragged`` says what to do with a row whose cell count
    differs from the header: ``'error'`` (default), ``'pad'`` (missing trailing cells become
    NaN/empty) or ``'skip'``. Columns named in ``string_columns`` are kept as text.
    Parsing is done by pyarrow's C++ CSV reader (after normalising whitespace runs to tabs).
    Bad content raises :class:`AnalysisInputError` naming the file and line.
    """
    from pyarrow import csv as pacsv

    path = Path(path)
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
                    column_types={n: pa.string() for n in names if n in set(string_columns)},
                    null_values=list(NULL_VALUES), strings_can_be_null=False))
        except pa.ArrowInvalid as exc:
            raise AnalysisInputError(f"{path}: {exc}") from None
    return read_table_lines(path, sep, header, names, ragged, string_columns)[0]


NULL_VALUES = ("", "NA", "None", "nan", "NaN")  # cells read as missing (null) in numeric columns


def read_table_lines(path: PathLike, sep: str | None = None, header: bool = True,
                     names: Sequence[str] | None = None, ragged: str = "error",
                     string_columns: Iterable[str] = ()) -> tuple[pa.Table, list[int]]:
    """:func:`read_table` plus the 1-based file line number of every row (blank lines and the
    header are skipped, so row i is not line i + 2 in general), for error messages."""
    path = Path(path)
    rows, linenos = _split_lines(read_text(path), sep)
    if header:
        if not rows:
            raise AnalysisInputError(f"{path}: empty file (or only blank lines), expected a header line")
        hdr = [h.strip() for h in rows[0].split("\t")]
        rows, linenos = rows[1:], linenos[1:]
        if names is None:
            names = hdr
    if names is None:
        names = [f"c{i}" for i in range(len(rows[0].split("\t")) if rows else 0)]
    names = list(names)
    rows, linenos = _fix_ragged(path, rows, linenos, len(names), ragged, sep is None)
    uniq = _unique_names(names)
    if not rows:
        return pa.table([pa.array([], type=pa.string()) for _ in uniq], names=uniq), []
    return _parse_tsv(path, rows, uniq, names, set(string_columns)), linenos


def _split_lines(text: str, sep: str | None) -> tuple[list[str], list[int]]:
    """Non-blank lines with cells joined by tabs, and their 1-based line numbers."""
    import re

    lines = text.splitlines()
    if sep is None:
        lines = [re.sub(r"[ \t]+", "\t", ln.strip()) for ln in lines]
    else:
        lines = [ln.rstrip("\r") for ln in lines]
        lines = [ln[:-1] if ln.endswith(sep) and sep != " " else ln for ln in lines]
    keep = [i for i, ln in enumerate(lines) if ln.strip()]
    return [lines[i] for i in keep], [i + 1 for i in keep]


def _fix_ragged(path: Path, rows: list[str], linenos: list[int], ncol: int, ragged: str,
                whitespace: bool) -> tuple[list[str], list[int]]:
    counts = [ln.count("\t") + 1 for ln in rows]
    bad = [i for i, c in enumerate(counts) if c != ncol]
    if bad and ragged == "pad":
        rows = [ln + "\t" * (ncol - c) if c < ncol else ln for ln, c in zip(rows, counts)]
        bad = [i for i, c in enumerate(counts) if c > ncol]
    elif bad and ragged == "skip":
        drop = set(bad)
        keep = [i for i in range(len(rows)) if i not in drop]
        return [rows[i] for i in keep], [linenos[i] for i in keep]
    if bad:
        i = bad[0]
        hint = ("; cells are separated by runs of blanks, so write NA for an empty cell"
                if whitespace and counts[i] < ncol else "")
        raise AnalysisInputError(f"{path}:{linenos[i]}: expected {ncol} fields (as many as the header "
                                 f"has columns), found {counts[i]}{hint}")
    return rows, linenos


def _unique_names(names: Sequence[str]) -> list[str]:
    """Duplicated names (e.g. the Mathur et al. 2020 tables have a metric called "LP") get a suffix: LP, LP.1."""
    seen: dict[str, int] = {}
    uniq = []
    for n in names:
        if n in seen:
            seen[n] += 1
            uniq.append(f"{n}.{seen[n]}")
        else:
            seen[n] = 0
            uniq.append(n)
    return uniq


def _parse_tsv(path: Path, rows: list[str], uniq: list[str], names: list[str],
               string_columns: set) -> pa.Table:
    from pyarrow import csv as pacsv

    data = ("\n".join(rows) + "\n").encode("utf-8")
    ctypes = {n: pa.string() for n, orig in zip(uniq, names) if orig in string_columns}
    try:
        return pacsv.read_csv(
            io.BytesIO(data),
            # one block: column types are inferred from every row, not the first megabyte
            read_options=pacsv.ReadOptions(column_names=uniq, use_threads=False, block_size=len(data) + 1),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
            convert_options=pacsv.ConvertOptions(column_types=ctypes, null_values=list(NULL_VALUES),
                                                 strings_can_be_null=False))
    except pa.ArrowInvalid as exc:
        raise AnalysisInputError(f"{path}: {exc}") from None


def read_da_scores(path: PathLike) -> pa.Table:
    """WMT DA segment/document/system score file (``SYS SID RAW.SCR Z.SCR N`` and variants).

    System and segment-id columns are always text (``SYS``, ``SEGID``), numeric ones typed.
    """
    return read_table(path, string_columns=("SYS", "SEGID"))


def read_da_scores_lines(path: PathLike) -> tuple[pa.Table, list[int]]:
    """:func:`read_da_scores` plus each row's line number (for :func:`float_column`)."""
    return read_table_lines(path, string_columns=("SYS", "SEGID"))


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
    return read_ratings_lines(path)[0]


def read_ratings_lines(path: PathLike) -> tuple[pa.Table, list[int]]:
    """:func:`read_ratings` plus each row's line number (see :func:`read_table_lines`).

    A rating given twice is refused (:func:`check_repeated_ratings`): a file concatenated
    twice, or an export appended to itself, would otherwise double some workers' weight and
    change who passes quality control without a word."""
    t, linenos = read_table_lines(path, string_columns=("HITId", "WorkerId", "sys_id", "type",
                                                        "Input.src", "Input.trg", "Input.item"))
    check_repeated_ratings(path, t, linenos)
    return t, linenos


RATING_KEY = ("HITId", "WorkerId", "sys_id", "type", "sid")  # one judgement of one item in one HIT


def check_repeated_ratings(path: PathLike, t: pa.Table, linenos: Sequence[int]) -> None:
    """Refuse a ratings table in which one worker rates the same item twice in the same HIT.

    In the WMT / Appraise DA layout a judgement is identified by HITId, WorkerId, sys_id, type
    and sid (a planned repeat has its own type, REPEAT), so a second row with the same five
    cells is a duplicated row, never a second opinion; the WMT21 releases have none. Without a
    HITId column only rows identical in every cell are refused (a worker may meet the same
    item in two HITs). The error names both lines and how many rows repeat; de-duplicating
    silently (or with a warning) would hide a broken export."""
    if t.num_rows < 2:
        return
    if "HITId" in t.column_names:
        names = [c for c in RATING_KEY if c in t.column_names]
        what = "rates the same item again (same " + ", ".join(names) + ")"
    else:
        names = list(t.column_names)
        what = "repeats a row"
    cols = [t.column(c).to_pylist() for c in names]
    first: dict[tuple, int] = {}
    repeats = []
    for i, key in enumerate(zip(*cols)):
        j = first.setdefault(key, i)
        if j != i:
            repeats.append((i, j))
    if repeats:
        i, j = repeats[0]
        more = f"; {len(repeats)} repeated rows in all" if len(repeats) > 1 else ""
        raise AnalysisInputError(f"{path}:{linenos[i]}: this rating {what} as line {linenos[j]}{more}; "
                                 "remove the duplicated rows (was the file concatenated twice?)")


JUDGE_COLUMNS = ("judge", "judge_id", "judgeid", "worker", "workerid", "worker_id", "rater", "annotator")
ITEM_COLUMNS = ("item", "item_id", "segment", "segment_id", "seg", "sid", "id")
RATING_COLUMNS = ("rating", "score")


def _sep_of(header: str) -> str | None:
    for sep in (";", ",", "\t"):
        if sep in header:
            return sep
    return None  # runs of blanks


def _rating(path: PathLike, lineno: int, col: int, name: str, cell: str,
            levels: Sequence[float] | None) -> float:
    """One rating cell: empty / NA / NaN / None is missing (NaN); text, inf and (with
    ``levels``) a value off the scale raise :class:`AnalysisInputError` naming line and column."""
    cell = cell.strip()
    if cell in NULL_VALUES:
        return np.nan
    where = f"{path}:{lineno}: column {col} ({name})"
    try:
        v = parse_number(cell)
    except NumberSyntaxError as exc:
        raise AnalysisInputError(f"{where}: {exc}; write NA for a missing rating") from None
    if levels is not None and v not in levels:
        scale = ", ".join(f"{x:g}" for x in levels)
        raise AnalysisInputError(f"{where}: rating {cell} is outside the scale ({scale}) given by --levels")
    return v


def read_judge_ratings(path: PathLike, levels: Sequence[float] | None = None
                       ) -> tuple[list[str], list[str], np.ndarray]:
    """Ratings of several judges on the same items: (judges, items, (J, I) float64 matrix),
    NaN where a judge did not rate an item.

    Two layouts, cells separated by ``;``, ``,``, tabs or runs of blanks (read off the header):

    * wide (the refbias ``ratings_all``): a header of judge names, one row per item, an
      optional first column named ``item`` / ``segment_id`` / ``sid`` / ``id`` with item ids;
    * long (the refbias ``data/ratings.csv``): columns judge (``judge``, ``judge_id``,
      ``WorkerId``, ...), item (``item``, ``segment_id``, ``sid``, ...) and ``rating``/``score``,
      one row per rating; a judge rating an item twice is an error.

    Empty / NA / NaN cells are missing ratings. With ``levels`` every rating must be one of
    them. Errors name the file, line and column."""
    header, rows = _judge_table(path)
    low = [h.lower() for h in header]
    jcol = next((i for i, h in enumerate(low) if h in JUDGE_COLUMNS), None)
    if jcol is not None:
        return _long_judge_ratings(path, header, rows, jcol, levels)
    return _wide_judge_ratings(path, header, rows, levels)


def _judge_table(path: PathLike) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """``(header cells, [(line number, cells)])`` of a ratings table, the separator read off
    the header; every row has as many cells as the header."""
    text = read_text(path)
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines:
        raise AnalysisInputError(f"{path}: empty file (or only blank lines), expected a header line")
    sep = _sep_of(lines[0][1])

    def cells(ln: str) -> list[str]:
        return [c.strip() for c in (ln.split(sep) if sep else ln.split())]

    header = cells(lines[0][1])
    rows = [(lineno, cells(ln)) for lineno, ln in lines[1:]]
    if not rows:
        raise AnalysisInputError(f"{path}: only a header, no ratings")
    for lineno, c in rows:
        if len(c) != len(header):
            raise AnalysisInputError(f"{path}:{lineno}: expected {len(header)} fields (as many as the header "
                                     f"has columns), found {len(c)}")
    return header, rows


def _long_judge_ratings(path: PathLike, header: list[str], rows: list[tuple[int, list[str]]], jcol: int,
                        levels: Sequence[float] | None) -> tuple[list[str], list[str], np.ndarray]:
    """The long layout: one row per rating, columns judge, item and rating."""
    low = [h.lower() for h in header]
    icol = next((i for i, h in enumerate(low) if h in ITEM_COLUMNS and i != jcol), None)
    rcol = next((i for i, h in enumerate(low) if h in RATING_COLUMNS), None)
    missing = [what for what, c in (("item (item, segment_id, sid)", icol), ("rating (rating, score)", rcol))
               if c is None]
    if missing or icol is None or rcol is None:
        raise AnalysisInputError(f"{path}:1: missing column(s) {', '.join(missing)}; a table with a judge "
                                 f"column ({header[jcol]}) needs judge, item and rating columns")
    judges: dict[str, int] = {}
    items: dict[str, int] = {}
    seen: dict[tuple[int, int], int] = {}
    trip = []
    for lineno, c in rows:
        j = judges.setdefault(c[jcol], len(judges))
        it = items.setdefault(c[icol], len(items))
        if (j, it) in seen:
            raise AnalysisInputError(f"{path}:{lineno}: judge {c[jcol]!r} rates item {c[icol]!r} again "
                                     f"(first on line {seen[(j, it)]}); give one rating per judge and item")
        seen[(j, it)] = lineno
        trip.append((j, it, _rating(path, lineno, rcol + 1, header[rcol], c[rcol], levels)))
    R = np.full((len(judges), len(items)), np.nan)
    for j, it, v in trip:
        R[j, it] = v
    return list(judges), list(items), R


def _wide_judge_ratings(path: PathLike, header: list[str], rows: list[tuple[int, list[str]]],
                        levels: Sequence[float] | None) -> tuple[list[str], list[str], np.ndarray]:
    """The wide layout: one column per judge, one row per item (an optional item-id column first)."""
    first = 1 if header[0].lower() in ITEM_COLUMNS else 0
    judges_w = header[first:]
    if len(judges_w) < 2:
        raise AnalysisInputError(f"{path}:1: {len(judges_w)} judge column(s) in the header ({' '.join(header)}); "
                                 "expected one column per judge (at least 2) and one row per item, or the "
                                 "columns judge, item, rating")
    dup = sorted({h for h in judges_w if judges_w.count(h) > 1})
    if dup:
        raise AnalysisInputError(f"{path}:1: judge column(s) {', '.join(dup)} appear twice in the header")
    R = np.full((len(judges_w), len(rows)), np.nan)
    item_ids = []
    for r, (lineno, c) in enumerate(rows):
        item_ids.append(c[0] if first else str(r + 1))
        for j, cell in enumerate(c[first:]):
            R[j, r] = _rating(path, lineno, j + first + 1, judges_w[j], cell, levels)
    return judges_w, item_ids, R


def read_judge_groups(path: PathLike, judges: Sequence[str]) -> dict[str, list[str]]:
    """Judge groups, one per line: ``NAME: judge judge ...`` (judges separated by blanks, commas
    or semicolons; ``NAME = [a, b]`` works too; ``#`` starts a comment). Every judge of
    ``judges`` must be in exactly one group; errors name the file and line."""
    import re

    known = set(judges)
    groups: dict[str, list[str]] = {}
    where: dict[str, int] = {}  # judge -> line
    group_line: dict[str, int] = {}
    for lineno, ln in enumerate(read_text(path).splitlines(), 1):
        ln = ln.split("#", 1)[0].strip()
        if not ln:
            continue
        m = re.match(r"^([^:=]+?)\s*[:=]\s*(.*)$", ln)
        if not m:
            raise AnalysisInputError(f"{path}:{lineno}: expected 'GROUP: judge judge ...', got {ln!r}")
        name, members = m.group(1).strip(), [t for t in re.split(r"[\s,;\[\]]+", m.group(2)) if t]
        if name in groups:
            raise AnalysisInputError(f"{path}:{lineno}: group {name!r} again (first on line {group_line[name]})")
        if not members:
            raise AnalysisInputError(f"{path}:{lineno}: group {name!r} has no judges")
        for j in members:
            if j not in known:
                raise AnalysisInputError(f"{path}:{lineno}: judge {j!r} of group {name!r} is not a judge of the "
                                         f"ratings ({', '.join(judges[:6])}{', ...' if len(judges) > 6 else ''})")
            if j in where:
                raise AnalysisInputError(f"{path}:{lineno}: judge {j!r} is already in a group (line {where[j]}); "
                                         "each judge belongs to one group")
            where[j] = lineno
        groups[name] = members
        group_line[name] = lineno
    if not groups:
        raise AnalysisInputError(f"{path}: no groups; expected lines 'GROUP: judge judge ...'")
    missing = [j for j in judges if j not in where]
    if missing:
        raise AnalysisInputError(f"{path}: judge(s) {', '.join(missing)} are in no group; every judge needs one")
    return groups


def read_metric_scores(path: PathLike, level: str | None = None) -> pa.Table:
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


def metric_score_column(path: PathLike, t: pa.Table) -> np.ndarray:
    """The ``score`` column of a table from :func:`read_metric_scores` as float64, checked like
    :func:`float_column` (NA cells become NaN). The fast reader keeps no line numbers, so a
    column it could not read as numbers is read again line by line to name the bad line."""
    col = t.column("score")
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type):
        return float_column(t, "score", range(1, t.num_rows + 1), path, missing_ok=True)
    names = t.column_names
    t2, linenos = read_table_lines(path, sep="\t", header=False, names=names,
                                   string_columns=[c for c in names if c not in ("seg", "score")])
    return float_column(t2, "score", linenos, path, missing_ok=True)


def read_combined_sys_scores(path: PathLike) -> pa.Table:
    """``LP SYSTEM HUMAN <metric...>`` system-level tables (WMT20 results, the WMT19 tables of Mathur et al. 2020).

    Rows with fewer cells than the header are padded with NaN (Mathur et al. 2020 en-cs lacks ESIM).
    """
    return read_combined_sys_scores_lines(path)[0]


def read_combined_sys_scores_lines(path: PathLike) -> tuple[pa.Table, list[int]]:
    """:func:`read_combined_sys_scores` plus each row's line number."""
    return read_table_lines(path, ragged="pad", string_columns=("LP", "SYSTEM"))


def read_matrix(path: PathLike, sep: str | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """Square/rectangular matrix with a header of column names and row names in column 0
    (``adwilcox-*.csv``: space separated; ``DA-*-sig.csv``: tab separated). Returns
    (row_names, col_names, values float64 (r, c)); cells that are not plain decimal numbers
    (:func:`~mtscore.engine.strict_numbers.parse_number`: the ``-`` of a diagonal, but also
    ``1_0`` or full-width digits) become NaN."""
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
                out.append(parse_number(c))
            except NumberSyntaxError:
                out.append(np.nan)
        vals.append(out)
    return rows, cols, np.asarray(vals, dtype=np.float64).reshape(len(rows), len(cols))


def read_outlier_dict(path: PathLike) -> dict[str, list[str]]:
    """WMT20 curated outlier list (``manual-evaluation/outlier-systems-dict.json``)."""
    with open(path, encoding="utf-8") as fh:
        return {k: list(v) for k, v in json.load(fh).items()}


def read_cor(path: PathLike) -> pa.Table:
    """WMT20 ``DA-<lp>-cor[-excloutl].csv`` (tab separated; first column = metric)."""
    t = read_table(path, sep="\t", string_columns=("",))
    return t.rename_columns(["metric", *t.column_names[1:]])


def _undash(name: str) -> str:
    return name.replace("_DASH_", "-").replace("_PLUS_", "+").replace("_DOT_", ".")


def read_darr_cor(path: PathLike) -> pa.Table:
    """WMT20 ``RR-*-cor.csv``: ``metric tau n_pairs`` (names use ``_DASH_`` for ``-``)."""
    t = read_table(path, header=False, names=["metric", "tau", "n"], string_columns=("metric",))
    names = [_undash(m) for m in t.column("metric").to_pylist()]
    return t.set_column(0, "metric", pa.array(names, type=pa.string()))


def wmt20_paths(root: PathLike, lp: str) -> dict[str, Path]:
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


def float_column(table: pa.Table, column: str, linenos: Sequence[int], path: PathLike,
                 missing_ok: bool = False) -> np.ndarray:
    """Column ``column`` as float64 (n,), checked: a cell that is not a plain ASCII decimal
    number (:func:`mtscore.engine.strict_numbers.parse_number`: no ``1_000``, no full-width
    digits, no ``inf``), or (unless ``missing_ok``) a missing cell (empty / NA / NaN, read as
    null) raises :class:`AnalysisInputError` naming ``path``, the line (from ``linenos``, one
    per row), the column number and name, and the offending text. With ``missing_ok`` missing
    cells become NaN."""
    col = table.column(column)
    where = f"column {table.column_names.index(column) + 1} ({column})"
    typ = col.type
    if not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_null(typ)):
        # text (anything the CSV reader could not read as a number), but also what it reads as
        # true/false or a date: none of it is a score unless it is a plain decimal number
        cells = col.to_pylist() if pa.types.is_string(typ) or pa.types.is_large_string(typ) else \
            [None if v is None else str(v) for v in col.cast(pa.string()).to_pylist()]
        try:
            values = parse_numbers(cells, missing=NULL_VALUES)
        except NumberSyntaxError as exc:
            raise AnalysisInputError(f"{path}:{linenos[exc.index]}: {where}: {exc}") from None
    else:
        # the CSV reader's own number syntax is ASCII-only; what it reads beyond plain decimals
        # (inf, and NaN spellings such as NAN or -nan, which are not null) is refused below
        nulls = np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        values = np.array(col.to_numpy(zero_copy_only=False), dtype=np.float64)  # a writable copy
        odd = np.flatnonzero(~np.isfinite(values) & ~nulls)
        if odd.size:
            i = int(odd[0])
            raise AnalysisInputError(f"{path}:{linenos[i]}: {where} is {values[i]}, not a finite number "
                                     "(infinite and NaN values are not scores); write NA for a missing score")
        values[nulls] = np.nan
    nan = np.isnan(values)
    if nan.any() and not missing_ok:
        i = int(np.flatnonzero(nan)[0])
        raise AnalysisInputError(f"{path}:{linenos[i]}: {where} is missing (empty, NA or NaN); every row needs one")
    return values
