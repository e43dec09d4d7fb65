"""Raw crowd-platform batches of Direct Assessment into one ratings table.

:func:`read_mturk_batches` reads Mechanical Turk "batch results" CSV files in the layout of
the DA HIT templates (Graham et al.; the ``docqe-eacl2017`` release): one row per assignment,
the judgements of a 100-item HIT packed in ``Answer.Q1`` as ``sys_sid_TYPE_pos__score``
items joined by ``|``. :func:`read_appraise_export` reads Appraise-style score exports (one
judgement per row). Both return a :class:`Ratings` table: parallel numpy arrays, one entry
per judgement, in file order (the order the platform wrote assignments, then presentation
order inside a HIT), which is the order the downstream sequence statistics rely on.

Item types are ``SYSTEM`` (an MT output), ``REPEAT`` (a verbatim repeat of a SYSTEM item in
the same HIT), ``REF`` (the reference shown as the candidate) and ``BAD_REF`` (a degraded copy
of a SYSTEM item of the same HIT); a QC item is linked to its original by (worker, HIT,
system, segment).
"""
from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any, Union

import numpy as np

from ...engine.strict_numbers import NumberSyntaxError, parse_number
from ..data.tables import read_text
from ..errors import AnalysisInputError

PathLike = Union[str, Path]

__all__ = ["ITEM_TYPES", "Ratings", "concat_ratings", "read_appraise_documents", "read_appraise_export",
           "read_mturk_batches"]

ITEM_TYPES = ("SYSTEM", "REPEAT", "REF", "BAD_REF")

# one answer item: sys _ sid _ TYPE _ position _ _ score (the HIT's JavaScript joins with "_";
# the system name may itself contain "_", so the type anchors the split)
_ANSWER = re.compile(r"^(?P<sys>.*?)_(?P<sid>[^_]+)_(?P<type>BAD_REF|SYSTEM|REPEAT|REF)_(?P<pos>[0-9]+)__(?P<score>[^_|]*)$")
_MTURK_TIME = "%a %b %d %H:%M:%S %Y"
MTURK_REQUIRED = ("HITId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "AcceptTime", "SubmitTime")


@dataclass(frozen=True)
class Ratings:
    """One row per judgement; every field is a numpy array of length N.

    worker, hit, assignment: str ids (``WorkerId``, ``HITId``, ``AssignmentId``).
    item_type: str in :data:`ITEM_TYPES`. system, segment: str (the HIT's ``sys`` and ``sid``).
    document: str document id ("" until :meth:`with_documents` attaches a key).
    position: int64, 0-based presentation order inside the HIT.
    score: float64, the raw slider value (0-100 by default).
    time: float64, the assignment's work seconds (``WorkTimeInSeconds``), repeated per judgement.
    accept, submit: datetime64[s] of the assignment (time zone dropped, as the DA scripts do).
    status: str assignment status (Submitted / Approved / Rejected).
    src_lang, trg_lang, task: str (``Input.src``, ``Input.trg``, ``Input.item``, quotes removed).
    hit_index: int64, the campaign's HIT number (``Input.hit``; -1 when absent).
    origin: str "file:line" of the record, for messages.
    skipped: "file:line: reason" of every assignment left out (incomplete HIT, bad image).
    """

    worker: np.ndarray
    hit: np.ndarray
    assignment: np.ndarray
    item_type: np.ndarray
    system: np.ndarray
    segment: np.ndarray
    document: np.ndarray
    position: np.ndarray
    score: np.ndarray
    time: np.ndarray
    accept: np.ndarray
    submit: np.ndarray
    status: np.ndarray
    src_lang: np.ndarray
    trg_lang: np.ndarray
    task: np.ndarray
    hit_index: np.ndarray
    origin: np.ndarray
    skipped: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return int(self.score.shape[0])

    @classmethod
    def array_fields(cls) -> list[str]:
        return [f.name for f in fields(cls) if f.name != "skipped"]

    def select(self, mask) -> Ratings:
        """The rows where ``mask`` (bool (N,) or integer indices) selects."""
        kw = {n: getattr(self, n)[mask] for n in self.array_fields()}
        return Ratings(skipped=self.skipped, **kw)

    def with_documents(self, segment_to_document: dict[str, str]) -> Ratings:
        """A copy with ``document`` filled from a segment -> document map (every segment of
        the table must be in it; the first missing one is named)."""
        seg = self.segment
        missing = [s for s in np.unique(seg) if s not in segment_to_document]
        if missing:
            raise AnalysisInputError(f"segment {missing[0]!r} ({len(missing)} segments in all) has no "
                                     "document in the key; pass a key covering every rated segment")
        doc = np.array([segment_to_document[s] for s in seg.tolist()], dtype=str) if len(seg) else seg
        kw = {n: getattr(self, n) for n in self.array_fields()}
        kw["document"] = doc
        return Ratings(skipped=self.skipped, **kw)

    def to_arrow(self):
        """The table as a :class:`pyarrow.Table` (same column names)."""
        import pyarrow as pa

        return pa.table({n: getattr(self, n) for n in self.array_fields()})


def concat_ratings(parts: Sequence[Ratings]) -> Ratings:
    """Rows of several tables one after another."""
    if not parts:
        return _build([], ())
    kw = {n: np.concatenate([getattr(p, n) for p in parts]) for n in Ratings.array_fields()}
    return Ratings(skipped=tuple(s for p in parts for s in p.skipped), **kw)


def _build(rows: list[tuple], skipped: Iterable[str]) -> Ratings:
    names = Ratings.array_fields()
    cols = list(zip(*rows)) if rows else [()] * len(names)
    kinds: dict[str, Any] = {"position": np.int64, "hit_index": np.int64, "score": np.float64, "time": np.float64,
             "accept": "datetime64[s]", "submit": "datetime64[s]"}
    kw = {}
    for n, c in zip(names, cols):
        kw[n] = np.array(c, dtype=kinds.get(n, str))
    return Ratings(skipped=tuple(skipped), **kw)


def _strip_quotes(v: str) -> str:
    return v.strip().strip("'").strip('"')


def _mturk_time(v: str, where: str, col: str) -> np.datetime64:
    v = v.strip()
    if not v:
        return np.datetime64("NaT")
    # "Wed Nov 23 10:34:52 PST 2016": the zone name is dropped (as the DA scripts do)
    parts = v.split()
    if len(parts) == 6:
        parts = parts[:4] + parts[5:]
    try:
        return np.datetime64(datetime.strptime(" ".join(parts), _MTURK_TIME), "s")
    except ValueError:
        raise AnalysisInputError(f"{where}: column {col}: cannot read the time {v!r}; expected the "
                                 "Mechanical Turk form 'Wed Nov 23 10:34:52 PST 2016'") from None


def _records(path: Path, text: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and (line, cells) records. A comment typed with Enter and saved without its
    closing quote glues the next record onto the comment cell (the DA scripts read physical
    lines and so never noticed): such a record is split at the line break again."""
    reader = csv.reader(text.splitlines(keepends=True))
    try:
        header = next(reader)
    except StopIteration:
        raise AnalysisInputError(f"{path}: empty file, expected a Mechanical Turk batch results header") from None
    out: list[tuple[int, list[str]]] = []
    line = reader.line_num + 1
    for cells in reader:
        out.extend(_unglue(line, cells, len(header)))
        line = reader.line_num + 1
    return header, [r for r in out if any(c.strip() for c in r[1])]


def _unglue(line: int, cells: list[str], ncol: int) -> list[tuple[int, list[str]]]:
    if len(cells) <= ncol:
        return [(line, cells)]
    for i, c in enumerate(cells):
        cut = max(c.rfind("\n"), c.rfind("\r"))
        if cut >= 0 and cut < len(c) - 1 and i + 1 < len(cells):
            first = [*cells[:i], c[:cut + 1].rstrip("\r\n")]
            rest = [c[cut + 1:].rstrip('"'), *cells[i + 1:]]
            nl = line + c[:cut + 1].count("\n")
            return [(line, first), *_unglue(nl, rest, ncol)]
    return [(line, cells)]


def read_mturk_batches(paths: PathLike | Sequence[PathLike], answer_column: str = "Answer.Q1",
                       items_per_hit: int | None = 100, scale: tuple[float, float] = (0.0, 100.0)
                       ) -> Ratings:
    """Read Mechanical Turk batch result files (``Batch_*_batch_results.csv``) into one table.

    ``paths``: files, or folders whose ``Batch_*.csv`` files are read in name order (as the DA
    scripts do). Assignments whose answer holds other than ``items_per_hit`` items (``None``:
    any number) or an ``undefined`` item (an image that failed to load) are left out and listed
    in ``Ratings.skipped``. A missing column, an unreadable answer item or a score outside
    ``scale`` raises :class:`AnalysisInputError` naming the file, line and column. An
    assignment read twice (the same AssignmentId, HITId and WorkerId: a batch file given twice,
    or a row copied) is refused, naming both places: counted twice it would change which
    workers pass quality control, and MTurk never issues one assignment id twice.
    """
    files = _batch_files(paths)
    rows: list[tuple] = []
    skipped: list[str] = []
    seen: dict[tuple[str, str, str], str] = {}
    for path in files:
        text = read_text(path)
        header, records = _records(path, text)
        need = [*list(MTURK_REQUIRED), answer_column]
        missing = [c for c in need if c not in header]
        if missing:
            raise AnalysisInputError(f"{path}:1: missing column(s) {', '.join(missing)}; a Mechanical Turk batch "
                                     f"results file has {', '.join(need)} (set answer_column / --answer-column "
                                     "if the answers live elsewhere)")
        col = {c: i for i, c in reversed(list(enumerate(header)))}
        for line, cells in records:
            where = f"{path}:{line}"
            cells = cells + [""] * (len(header) - len(cells))
            rec = {c: cells[i] for c, i in col.items()}
            key = (rec.get("AssignmentId", "").strip(), rec["HITId"].strip(), rec["WorkerId"].strip())
            if key[0] and key in seen:
                raise AnalysisInputError(f"{where}: assignment {key[0]} of worker {key[2]} again (first at "
                                         f"{seen[key]}); each assignment is read once: is a batch file given "
                                         "twice or a row duplicated?")
            seen.setdefault(key, where)
            out, why = _assignment(rec, where, answer_column, items_per_hit, scale)
            if why:
                skipped.append(f"{where}: {why}")
            rows.extend(out)
    return _build(rows, skipped)


def _batch_files(paths: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.name.startswith("Batch_") and q.suffix.lower() == ".csv")
            if not found:
                raise AnalysisInputError(f"{p}: no Batch_*.csv files in this folder; pass the batch result files")
            files.extend(found)
        elif not p.exists():
            raise FileNotFoundError(f"{p}: file not found")
        else:
            files.append(p)
    if not files:
        raise AnalysisInputError("no batch files given")
    return files


def _assignment(rec: dict[str, str], where: str, answer_column: str, items_per_hit: int | None,
                scale: tuple[float, float]) -> tuple[list[tuple], str]:
    ans = rec[answer_column].strip()
    items = [a for a in ans.split("|")] if ans else []
    # JavaScript's undefined as an item, or as an item's score: an image that failed to load (a
    # system or segment that is merely named 'undefined' is an ordinary item)
    if any(a.strip() == "undefined" or a.strip().endswith("__undefined") for a in items):
        return [], "an answer item is 'undefined' (an image failed to load); assignment left out"
    if items_per_hit is not None and len(items) != items_per_hit:
        return [], f"incomplete HIT: {len(items)} answers instead of {items_per_hit}; assignment left out"
    try:
        secs = parse_number(rec["WorkTimeInSeconds"]) if rec["WorkTimeInSeconds"].strip() else np.nan
    except NumberSyntaxError as exc:
        raise AnalysisInputError(f"{where}: column WorkTimeInSeconds: {exc} of seconds") from None
    accept = _mturk_time(rec["AcceptTime"], where, "AcceptTime")
    submit = _mturk_time(rec["SubmitTime"], where, "SubmitTime")
    hidx = _strip_quotes(rec.get("Input.hit", ""))
    try:
        hit_index = int(hidx) if hidx else -1
    except ValueError:
        raise AnalysisInputError(f"{where}: column Input.hit: {hidx!r} is not a HIT number") from None
    common = (rec["WorkerId"].strip(), rec["HITId"].strip(), rec.get("AssignmentId", "").strip())
    langs = tuple(_strip_quotes(rec.get(c, "")) for c in ("Input.src", "Input.trg", "Input.item"))
    out = []
    lo, hi = scale
    for k, item in enumerate(items):
        m = _ANSWER.match(item.strip())
        if m is None:
            raise AnalysisInputError(f"{where}: column {answer_column}, item {k + 1}: cannot read {item[:60]!r}; "
                                     "expected 'system_segment_TYPE_position__score' with TYPE one of "
                                     + ", ".join(ITEM_TYPES))
        try:
            score = parse_number(m["score"])
        except NumberSyntaxError as exc:
            raise AnalysisInputError(f"{where}: column {answer_column}, item {k + 1} ({item[:60]!r}): score "
                                     f"{exc}") from None
        if not (lo <= score <= hi):
            raise AnalysisInputError(f"{where}: column {answer_column}, item {k + 1} ({item[:60]!r}): score "
                                     f"{m['score']!r} is outside the scale [{lo:g}, {hi:g}]; fix the file or "
                                     "pass the scale the HIT used (scale= / --scale)")
        out.append((*common, m["type"], m["sys"], m["sid"], "", int(m["pos"]), score, secs, accept, submit, rec["AssignmentStatus"].strip(), *langs, hit_index, where))
    return out, ""


#: the end of the ``skipped`` entry of :func:`read_appraise_export` that counts a file's whole-document
#: ratings (read by :func:`read_appraise_documents` instead)
WHOLE_DOCUMENTS_LEFT_OUT = "whole-document ratings left out"
APPRAISE_TYPES = {"TGT": "SYSTEM", "CHK": "REPEAT", "BAD": "BAD_REF", "REF": "REF"}


def read_appraise_export(paths: PathLike | Sequence[PathLike], layout: str = "auto",
                         scale: tuple[float, float] = (0.0, 100.0)) -> Ratings:
    """Read Appraise score exports (``manage.py ExportSystemScoresToCSV``; no header, one
    judgement per row) into a :class:`Ratings` table.

    Layouts: ``segment`` = user, system, item, type, src, tgt, score, start, end [, batchNo,
    item_id] (9 or 11 cells); ``document`` = user, system, item, type, src, tgt, score,
    documentID, isCompleteDocument, start, end [, batchNo, item_id] (11 or 13 cells);
    ``auto`` tells them apart by the cell count and the True/False cell. Types TGT, CHK, BAD,
    REF become SYSTEM, REPEAT, BAD_REF, REF. The HIT is the task's batch number when exported
    (``--batch-info``), otherwise one HIT per user; a HIT's time is its last end minus its
    first start; rows are put in presentation order (user, HIT, start time). Whole-document
    ratings (isCompleteDocument True) are left out and counted in ``skipped``
    (:func:`read_appraise_documents` reads them). A row identical
    to an earlier one (same user, item, score and start/end times: an export given twice or
    appended to itself) is refused, naming both lines.
    """
    return _read_appraise(paths, layout, scale, whole=False)


def read_appraise_documents(paths: PathLike | Sequence[PathLike], layout: str = "auto",
                            scale: tuple[float, float] = (0.0, 100.0)) -> Ratings:
    """The whole-document ratings (isCompleteDocument True) of Appraise document-layout exports,
    as a :class:`Ratings` table read as :func:`read_appraise_export` reads the segment rows
    (same checks and messages): ``document`` the documentID, ``segment`` the row's item id,
    ``position`` the order among the rater's document ratings of the HIT, ``time`` the span of
    those ratings. The segment rows are left out and counted in ``skipped``."""
    return _read_appraise(paths, layout, scale, whole=True)


def _read_appraise(paths: PathLike | Sequence[PathLike], layout: str, scale: tuple[float, float],
                   whole: bool) -> Ratings:
    if layout not in ("auto", "segment", "document"):
        raise AnalysisInputError(f"layout must be 'auto', 'segment' or 'document', not {layout!r}")
    rows: list[tuple] = []
    skipped: list[str] = []
    seen: dict[tuple[str, ...], str] = {}
    for path in _batch_files_any(paths):
        text = read_text(path)
        whole_docs = 0
        for line, cells in enumerate(csv.reader(text.splitlines()), start=1):
            if not any(c.strip() for c in cells):
                continue
            if line == 1 and cells[0].strip().lower() in ("username", "user", "userid"):
                continue                       # a header some exports add
            where = f"{path}:{line}"
            row_key = tuple(c.strip() for c in cells)
            if row_key in seen:
                raise AnalysisInputError(f"{where}: the same judgement as {seen[row_key]} (every cell equal); an "
                                         "export given twice or appended to itself? remove the repeated rows")
            seen[row_key] = where
            rec = _appraise_row(cells, where, layout, scale, whole)
            if rec is None:
                whole_docs += 1
                continue
            rows.append(rec)
        if whole_docs:
            skipped.append(f"{path}: {whole_docs} {'segment ratings left out' if whole else WHOLE_DOCUMENTS_LEFT_OUT}")
    return _build(_appraise_hits(rows), skipped)


def _batch_files_any(paths: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = [Path(p) for p in paths]
    for p in files:
        if not p.exists():
            raise FileNotFoundError(f"{p}: file not found")
    if not files:
        raise AnalysisInputError("no export files given")
    return files


def _appraise_row(cells: list[str], where: str, layout: str, scale: tuple[float, float],
                  whole: bool = False) -> tuple | None:
    n = len(cells)
    doc = layout == "document" or (layout == "auto" and (n == 13 or (n == 11 and cells[8].strip() in ("True", "False"))))
    if n not in ((11, 13) if doc else (9, 11)):
        raise AnalysisInputError(f"{where}: {n} cells; an Appraise {'document' if doc else 'segment'} export row "
                                 f"has {'11 or 13' if doc else '9 or 11'} (user, system, item, type, src, tgt, score, "
                                 f"{'documentID, isCompleteDocument, ' if doc else ''}start, end[, batchNo, item_id])")
    user, system, item, typ, src, tgt, score = (c.strip() for c in cells[:7])
    if (doc and cells[8].strip() == "True") != whole:
        return None
    k = 9 if doc else 7
    if typ not in APPRAISE_TYPES:
        raise AnalysisInputError(f"{where}: item type {typ!r}; Appraise types are " + ", ".join(APPRAISE_TYPES))
    nums = []
    for col, name in ((6, "score"), (k, "start time"), (k + 1, "end time")):
        try:
            nums.append(parse_number(cells[col]))
        except NumberSyntaxError as exc:
            raise AnalysisInputError(f"{where}: cell {col + 1} ({name}): {exc}") from None
    s, start, end = nums
    lo, hi = scale
    if not lo <= s <= hi:
        raise AnalysisInputError(f"{where}: score {score!r} is outside the scale [{lo:g}, {hi:g}]; fix the file "
                                 "or pass the scale used (scale= / --scale)")
    batch = cells[k + 2].strip() if n > k + 2 else ""
    return (user, batch, APPRAISE_TYPES[typ], system, item, cells[7].strip() if doc else "", s, start, end,
            src, tgt, where)


def _appraise_hits(rows: list[tuple]) -> list[tuple]:
    """Order by (user, HIT, start) and fill per-HIT times and positions."""
    rows = sorted(rows, key=lambda x: (x[0], x[1], x[7]))
    span: dict[tuple[str, str], list[float]] = {}
    for x in rows:
        lo_hi = span.setdefault((x[0], x[1]), [x[7], x[8]])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], x[7]), max(lo_hi[1], x[8])
    out = []
    pos: dict[tuple[str, str], int] = {}
    for x in rows:
        user, batch = x[0], x[1]
        k = pos.get((user, batch), 0)
        pos[(user, batch)] = k + 1
        a, b = span[(user, batch)]
        hit = batch or "-"
        out.append((user, hit, f"{user}/{hit}", x[2], x[3], x[4], x[5], k, x[6], b - a,
                    np.datetime64(int(a), "s"), np.datetime64(int(b), "s"), "Submitted", x[9], x[10], "ad",
                    int(batch) if batch.isdigit() else -1, x[11]))
    return out
