"""The in-memory corpus and the one entry point that builds it from whatever the user has.

:class:`Corpus` is the one in-memory form: a pyarrow Table with columns ``hyp``,
``ref_0 .. ref_{K-1}`` (nullable strings: ``None`` = no reference for this segment, ``''`` is a
real empty reference) and optional ``system``, ``doc``, ``seg``, built lazily from Python lists
when it came from text. :func:`load_corpus` (and :func:`read_table` for table files) build one.

Reference layout is K streams x N segments (``refs[k][i]``), as in sacrebleu. Where sacrebleu
silently truncates (transposed N x K layout, line-count mismatch) mtscore raises
:class:`CorpusError` (a ``ValueError``) with one line naming the file/argument and the counts.

The work is done by one module per job, all below this one:

* :mod:`.coerce` in-memory inputs -> lists (``as_text_list``, ``as_ref_streams``; what metrics use)
* :mod:`.decoding` bytes -> text, locating invalid input
* :mod:`.textio` plain-text files and stdin (``read_lines``, ``iter_text_chunks``, ...)
* :mod:`.columns` which table columns are hyp/refs/system/doc/seg; the Corpus schema
* :mod:`.tables` table files, one reader per format (``iter_batches``, ``guess_format``, ...)
* :mod:`.corpus_error` :class:`CorpusError`

Compatibility: the public names those modules used to have here
(``mtscore.engine.corpus.read_lines``, ``as_text_list``, ``iter_batches``, ...) are re-exported
and listed in ``__all__``; new code imports them from their own module. Like them, this module imports only the standard library at
load time; pyarrow is imported inside the functions that need it.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Callable

from .coerce import as_ref_streams, as_text_list, is_missing, is_tabular, to_list
from .columns import normalise, resolve_columns
from .corpus_error import CorpusError
from .tables import TABLE_FORMATS, batch_lists, guess_format, iter_batches, read_located
from .textio import (
    PathLike,
    TextChunk,
    count_lines,
    count_mismatch,
    iter_aligned_lines,
    iter_text_chunks,
    read_lines,
    read_stdin_systems,
    read_tab_refs,
    source_name,
)

__all__ = [
    "TABLE_FORMATS",
    # defined here
    "Corpus",
    # re-exported from their own modules, for code written against the single corpus module
    "CorpusError",
    "TextChunk",
    "as_ref_streams",
    "as_text_list",
    "batch_lists",
    "count_lines",
    "guess_format",
    "iter_aligned_lines",
    "iter_batches",
    "iter_text_chunks",
    "load_corpus",
    "read_lines",
    "read_stdin_systems",
    "read_tab_refs",
    "read_table",
]


class Corpus:
    """N segments: hypotheses, K reference streams and optional ``system``/``doc``/``seg``.

    The canonical form is a pyarrow Table (:attr:`table`) with columns ``hyp`` (string, no
    nulls), ``ref_0 .. ref_{K-1}`` (string; null = no reference for this segment, ``''`` is an
    empty reference), optional ``system`` (string), ``doc`` (string), ``seg`` (any type).
    A corpus built from Python lists (text files, stdin, TSV) keeps those lists and builds the
    Arrow table only when :attr:`table` is first used, so text-file scoring never imports pyarrow;
    one built from Arrow extracts Python lists on first use and caches them.
    (A plain class rather than a dataclass: ``dataclasses`` costs ~30 ms of CLI start-up.)
    """

    __slots__ = ("_labels", "_lines", "_lists", "_names", "_table", "source")

    def __init__(self, table=None, *, source: str = "<memory>", _lists=None, _names=None):
        if table is None and _lists is None:
            raise TypeError("Corpus needs a table (use Corpus.from_lists / load_corpus)")
        self._table = table
        self._lists: dict[str, list] = dict(_lists or {})
        self._names: list[str] = list(_names if _names is not None else table.schema.names)
        self.source = source
        #: for errors about rows of a table file: the user's column names ({'ref_0': 'ref'}) and
        #: the file line of a 0-based row (None: name the row); set by read_table
        self._labels: dict[str, str] = {}
        self._lines: Callable[[int], int | None] | None = None
        if "hyp" not in self._names:
            raise CorpusError(f"{source}: a Corpus table needs a 'hyp' column")
        if len(self) == 0:
            raise CorpusError(f"{source}: empty input (no segments)")

    # ---- construction ----------------------------------------------------------------------
    @classmethod
    def from_lists(cls, hyps, refs=None, *, system=None, doc=None, seg=None,
                   hyp_source: str = "hyps", ref_sources: Sequence[str] | None = None,
                   source: str | None = None) -> Corpus:
        """From in-memory hypotheses (N) and K reference streams (``refs[k][i]``; None = K = 0).

        Any input :func:`as_text_list` / :func:`as_ref_streams` accept. ``ref_sources`` (file
        names) makes length errors name files ("line-count mismatch: hyp.txt has 100 lines but
        ref.txt has 99 lines"). ``system``/``doc``/``seg``: optional per-segment columns (N)."""
        h = as_text_list(hyps, hyp_source)
        n = len(h)
        if refs is None:
            streams: list[list[str | None]] = []
        elif ref_sources is not None:
            streams = [as_text_list(r, str(s), allow_none=True) for r, s in zip(refs, ref_sources)]
            for s, r in zip(ref_sources, streams):
                if len(r) != n:
                    raise count_mismatch(hyp_source, n, s, len(r))
        else:
            streams = [] if isinstance(refs, (list, tuple)) and len(refs) == 0 else as_ref_streams(refs, n, "refs")
        lists: dict[str, list] = {"hyp": h}
        for k, r in enumerate(streams):
            lists[f"ref_{k}"] = r
        for name, col in (("system", system), ("doc", doc), ("seg", seg)):
            if col is None:
                continue
            vals = to_list(col, name)
            if len(vals) != n:
                raise CorpusError(f"{name} has {len(vals)} values but there are {n} hypotheses")
            if name != "seg":
                vals = [None if is_missing(v) else v if type(v) is str else str(v)
                        for v in vals]
                if name == "system" and None in vals:
                    raise CorpusError(f"system has a missing value at row {vals.index(None) + 1};"
                                      " every row needs a system name")
            lists[name] = vals
        return cls(None, source=source or hyp_source, _lists=lists, _names=list(lists))

    @classmethod
    def from_files(cls, hyp_path: PathLike, ref_paths: PathLike | Sequence[PathLike] = (),
                   encoding: str = "utf-8", errors: str = "strict") -> Corpus:
        """From a hypothesis text file and K reference text files (:func:`read_lines` semantics)."""
        if isinstance(ref_paths, (str, os.PathLike)):
            ref_paths = [ref_paths]
        hyps = read_lines(hyp_path, encoding, errors)
        if not hyps:
            raise CorpusError(f"{source_name(hyp_path)}: empty input (no lines)")
        lists: dict[str, list] = {"hyp": hyps}
        for k, p in enumerate(ref_paths):  # lists of str already: no re-validation/copy
            ref = read_lines(p, encoding, errors)
            if len(ref) != len(hyps):
                raise count_mismatch(hyp_path, len(hyps), p, len(ref))
            lists[f"ref_{k}"] = ref
        return cls(None, source=source_name(hyp_path), _lists=lists, _names=list(lists))

    @classmethod
    def from_systems(cls, systems: dict[str, Sequence[str]], refs=None, **kw) -> Corpus:
        """A long table: the hypotheses of every system, one after the other, each with the
        same K reference streams (the inverse of :meth:`by_system`)."""
        if not systems:
            raise CorpusError("no systems given")
        hyps: list[str] = []
        names: list[str] = []
        streams = None
        n = None
        for name, h in systems.items():
            h = as_text_list(h, f"system {name!r}")
            if n is None:
                n = len(h)
                if refs is not None:
                    streams = as_ref_streams(refs, n, "refs")
            elif len(h) != n:
                first = next(iter(systems))
                raise CorpusError(
                    f"system {name!r} has {len(h)} segments but system {first!r} has {n}")
            hyps += h
            names += [str(name)] * len(h)
        long_refs = None if streams is None else [s * len(systems) for s in streams]
        return cls.from_lists(hyps, long_refs, system=names, **kw)

    @classmethod
    def from_table(cls, table, hyp: str = "hyp", refs: Sequence[str] | None = None, *,
                   system=None, doc=None, seg=None, source: str = "<table>") -> Corpus:
        """From a pyarrow Table/RecordBatch, a pandas or polars DataFrame, or anything with the
        Arrow PyCapsule stream interface; column arguments as in :func:`read_table`."""
        import pyarrow as pa

        if isinstance(table, pa.RecordBatch):
            table = pa.Table.from_batches([table])
        elif not isinstance(table, pa.Table):
            if hasattr(table, "iloc"):  # pandas
                table = pa.Table.from_pandas(table, preserve_index=False)
            elif hasattr(table, "to_arrow"):
                table = table.to_arrow()
            else:
                table = pa.table(table)
        spec = resolve_columns(table.schema.names, source, hyp, refs, system, doc, seg)
        return cls(normalise(table.select(spec.source_columns()), spec, source), source=source)

    # ---- access ------------------------------------------------------------------------------
    def __len__(self) -> int:
        if "hyp" in self._lists:
            return len(self._lists["hyp"])
        return self._table.num_rows

    @property
    def columns(self) -> list[str]:
        return list(self._names)

    @property
    def n_refs(self) -> int:
        """K, the number of reference streams."""
        return sum(1 for c in self._names if c.startswith("ref_"))

    def column(self, name: str) -> list:
        """One column as a Python list (cached)."""
        if name not in self._names:
            raise CorpusError(f"{self.source}: no column {name!r} (have {', '.join(self._names)})")
        if name not in self._lists:
            self._lists[name] = self._table.column(name).to_pylist()
        return self._lists[name]

    def hyps(self) -> list[str]:
        """The N hypotheses, a new list of ``str``."""
        return list(self.column("hyp"))

    def ref_streams(self) -> list[list[str | None]]:
        """K new lists of N ``str``-or-``None`` (``refs[k][i]``), what the metrics take."""
        return [list(self.column(f"ref_{k}")) for k in range(self.n_refs)]

    @property
    def table(self):
        """The pyarrow Table (built from the lists on first use)."""
        if self._table is None:
            import pyarrow as pa

            arrays = []
            for n in self._names:
                vals = self._lists[n]
                arrays.append(pa.array(vals) if n == "seg" else pa.array(vals, pa.string()))
            self._table = pa.Table.from_arrays(arrays, names=self._names)
        return self._table

    def to_pandas(self):
        return self.table.to_pandas()

    def systems(self) -> list[str]:
        """Distinct system names in order of first appearance ([] without a system column)."""
        if "system" not in self._names:
            return []
        return list(dict.fromkeys(self.column("system")))

    def by_system(self) -> tuple[dict[str, list[str]], list[list[str | None]]]:
        """Split a long multi-system table into ``({system: hyps}, refs)`` with ONE shared set of
        K reference streams. Every system must have the same segments in the same order: the
        same count, the same references and (where present) the same ``doc``/``seg`` keys;
        otherwise :class:`CorpusError` names the system, the segment and what differs.
        Without a system column: ``({'': hyps}, refs)``."""
        if "system" not in self._names:
            return {"": self.hyps()}, self.ref_streams()
        sys_col = self.column("system")
        rows: dict[str, list[int]] = {}
        for i, s in enumerate(sys_col):
            rows.setdefault(s, []).append(i)
        names = list(rows)
        hyp = self.column("hyp")
        keyed = [c for c in ("doc", "seg") if c in self._names] + \
                [f"ref_{k}" for k in range(self.n_refs)]
        cols = {c: self.column(c) for c in keyed}
        base = names[0]
        base_rows = rows[base]
        base_vals = {c: [cols[c][i] for i in base_rows] for c in keyed}
        out = {base: [hyp[i] for i in base_rows]}
        for name in names[1:]:
            r = rows[name]
            if len(r) != len(base_rows):
                raise CorpusError(
                    f"{self.source}: system {name!r} has {len(r)} segments but system {base!r} "
                    f"has {len(base_rows)}; every system must have the same segments")
            for c in keyed:
                vals = [cols[c][i] for i in r]
                if vals != base_vals[c]:
                    j = next(j for j, (a, b) in enumerate(zip(vals, base_vals[c])) if a != b)
                    line = None if self._lines is None else self._lines(r[j])
                    where = (f"{self.source}: system {name!r} differs from system {base!r} at its "
                             f"segment {j + 1} (row {r[j] + 1})" if line is None else
                             f"{self.source}:{line}: system {name!r} differs from system {base!r} "
                             f"at its segment {j + 1}")
                    raise CorpusError(
                        f"{where}: {self._labels.get(c, c)} {vals[j]!r} != {base_vals[c][j]!r}; "
                        "every system must have the same segments in the same order")
            out[name] = [hyp[i] for i in r]
        refs = [base_vals[f"ref_{k}"] for k in range(self.n_refs)]
        return out, refs

    def __eq__(self, other) -> bool:
        if not isinstance(other, Corpus):
            return NotImplemented
        return self._names == other._names and all(
            self.column(c) == other.column(c) for c in self._names)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Corpus(n={len(self)}, refs={self.n_refs}, columns={self._names}, "
                f"source={self.source!r})")


def read_table(path: PathLike, hyp: str = "hyp", refs: Sequence[str] | None = None,
               fmt: str | None = None, *, system=None, doc=None, seg=None,
               encoding: str = "utf-8", errors: str = "strict") -> Corpus:
    """A :class:`Corpus` from a table file with named columns.

    ``fmt``: ``tsv`` (header line; no quoting; fields must not contain tabs/newlines; a CRLF line
    ending is accepted; values are kept verbatim), ``csv`` (RFC 4180 quoting, via pyarrow.csv),
    ``jsonl`` (one JSON object per line; null = no reference), ``parquet`` (file or dataset
    directory), ``arrow`` (IPC file/Feather v2 or IPC stream); guessed from the extension when
    None (``.gz`` works for tsv/csv/jsonl). ``path='-'`` reads stdin (``fmt`` required).

    ``refs``: reference column names in stream order; None picks ``ref``/``ref_0``/``ref1``/...
    by convention (no such column: K = 0). ``system``/``doc``/``seg``: None = use a column of
    that name if present, a name = required column, False = ignore.
    Missing columns raise :class:`CorpusError` naming the file and listing the available columns.
    """
    cols, labels, lines = read_located(path, hyp, refs, fmt, system=system, doc=doc, seg=seg,
                                       encoding=encoding, errors=errors)
    source = source_name(path)
    if isinstance(cols, dict):  # TSV: Python lists (pyarrow not imported)
        corpus = Corpus(None, source=source, _lists=cols, _names=list(cols))
    else:
        corpus = Corpus.from_table(cols, source=source)
    corpus._labels, corpus._lines = labels, lines
    return corpus


def load_corpus(hyps, refs=None, *, hyp: str = "hyp", ref_columns: Sequence[str] | None = None,
                system=None, doc=None, seg=None, fmt: str | None = None,
                encoding: str = "utf-8", errors: str = "strict") -> Corpus:
    """A :class:`Corpus` from whatever the user has.

    * ``hyps`` a path (``str``/``PathLike``; ``-`` = stdin): a table file (format from ``fmt`` or
      the extension, columns ``hyp``/``ref_columns``/... as in :func:`read_table`) or a plain text
      file (one segment per line); then ``refs`` are K reference text files (a path or a list).
    * ``hyps`` a table (pyarrow Table/RecordBatch, pandas/polars DataFrame): named columns.
    * ``hyps`` a sequence (list, tuple, numpy, pandas Series, pyarrow Array): ``refs`` are K
      in-memory streams (``refs[k][i]``), or reference files given as ``PathLike`` objects.
    """
    if isinstance(hyps, (str, os.PathLike)):
        f = fmt or (guess_format(hyps) if hyps != "-" else "text")
        if f != "text":
            if refs is not None:
                raise CorpusError(
                    f"{source_name(hyps)} is a {f} table: name its reference columns with "
                    "ref_columns=[...] instead of passing refs")
            return read_table(hyps, hyp, ref_columns, f, system=system, doc=doc, seg=seg,
                              encoding=encoding, errors=errors)
        if refs is None:
            refs = []
        return Corpus.from_files(hyps, refs, encoding, errors)
    if is_tabular(hyps):
        if refs is not None:
            raise CorpusError("hyps is a table: name its reference columns with ref_columns=[...]")
        return Corpus.from_table(hyps, hyp, ref_columns, system=system, doc=doc, seg=seg)
    if isinstance(refs, os.PathLike) or (
            isinstance(refs, (list, tuple)) and refs
            and all(isinstance(r, os.PathLike) for r in refs)):
        paths = [refs] if isinstance(refs, os.PathLike) else list(refs)
        streams = [read_lines(p, encoding, errors) for p in paths]
        return Corpus.from_lists(hyps, streams, system=system, doc=doc, seg=seg,
                                 ref_sources=[source_name(p) for p in paths])
    return Corpus.from_lists(hyps, refs, system=system, doc=doc, seg=seg)
