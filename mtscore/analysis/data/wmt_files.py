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

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from ...engine.strict_numbers import NumberSyntaxError, parse_number
from ..errors import AnalysisInputError
from .tables import PathLike, float_column, open_text, read_table, read_table_lines

__all__ = [
    "SEG_METRIC_LEVELS",
    "metric_score_column",
    "read_combined_sys_scores",
    "read_combined_sys_scores_lines",
    "read_cor",
    "read_da_scores",
    "read_da_scores_lines",
    "read_darr_cor",
    "read_matrix",
    "read_metric_scores",
    "read_outlier_dict",
    "read_ratings",
    "read_ratings_lines",
    "read_sys_ranking",
    "wmt20_paths",
]

SEG_METRIC_LEVELS = ("sys", "doc", "seg")


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
    with open_text(path) as fh:
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
