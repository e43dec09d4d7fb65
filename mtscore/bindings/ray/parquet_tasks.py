"""Local Parquet files scored by plain Ray tasks, each reading its own row groups with pyarrow
(one thread) and scoring them in slices: the light path of :func:`~.score.score_ray` for
Parquet paths on a filesystem every node sees.

Why not Ray Data's ``read_parquet`` here: on this path it costs about as much CPU as the
scoring itself (Ray 2.60 sizes each read task's Arrow pools to 32 CPU / 128 I/O threads, reads
ahead 8 batches, concatenates the batches into ~128 MB blocks, and runs a listing task, footer
reader actors, a stats actor, an autoscaling coordinator and the streaming executor's polling
in the driver). A task per group of row groups reads exactly what it scores, so the text is
read once, in slices, and never copied between processes; only the payloads (statistics, no
text) come back. The results are the same payloads :class:`~.worker.BatchScorer` makes on the
Ray Data path, folded by the same driver code, so the scores are identical.

Eligible inputs (anything else goes through Ray Data): local Parquet files, or directories
holding only ``*.parquet`` files (names starting with ``.`` or ``_`` ignored, as Ray does; no
subdirectories, so no hive partitions). A directory's files are taken in sorted name order.
Files with different columns are read as Ray reads them: the union of the columns, nulls where
a file lacks one."""
from __future__ import annotations

import math
import os
from collections.abc import Generator, Sequence
from typing import Any

from ...engine.corpus_error import CorpusError
from .worker import DEFAULT_BATCH, BatchScorer

#: rows per task at most: a lost task (a killed worker, a removed node) costs at most this
#: much scoring again, and the progress bar moves
MAX_UNIT_ROWS = 2_000_000


def local_parquet_files(source, fmt: str | None) -> list[str] | None:
    """The Parquet files of ``source`` in dataset order when it is eligible for this path
    (see the module's doc), else None (read through Ray Data)."""
    if fmt not in (None, "parquet") or not isinstance(source, (str, os.PathLike, list, tuple)):
        return None
    paths = [os.fspath(source)] if isinstance(source, (str, os.PathLike)) else list(source)
    if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        return None
    files: list[str] = []
    for p in map(os.fspath, paths):
        if "://" in p:
            return None
        if os.path.isfile(p):
            if fmt is None and not p.lower().endswith((".parquet", ".pq")):
                return None
            files.append(p)
        elif os.path.isdir(p):
            found = _directory_files(p)
            if found is None:
                return None
            files += found
        else:
            return None
    return files or None


def _directory_files(d: str) -> list[str] | None:
    names = sorted(n for n in os.listdir(d) if not n.startswith((".", "_")))
    out = [os.path.join(d, n) for n in names]
    if not out or not all(n.lower().endswith(".parquet") and os.path.isfile(f) for n, f in zip(names, out)):
        return None
    return out


class ParquetFiles:
    """The footers of local Parquet files: their union schema and row groups, cut into task
    units of whole row groups."""

    def __init__(self, files: Sequence[str], label: str):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.files = list(files)
        self.label = label
        self.row_groups: list[list[int]] = []
        fields: dict = {}
        for f in self.files:
            try:
                md = pq.ParquetFile(f).metadata
            except (OSError, pa.ArrowException) as e:
                raise CorpusError(f"{f}: not a readable Parquet file ({e})") from None
            self.row_groups.append([md.row_group(i).num_rows for i in range(md.num_row_groups)])
            for field in md.schema.to_arrow_schema():
                fields.setdefault(field.name, field.type)
        self.types = fields

    @property
    def names(self) -> list[str]:
        return list(self.types)

    def units(self, cpus: int) -> list[tuple[str, int, int]]:
        """``[(file, first row group, end row group)]`` in dataset order: consecutive row groups
        of one file, about ``total / (4 x cpus)`` rows each (so every CPU gets several tasks),
        between one slice and :data:`MAX_UNIT_ROWS`."""
        total = sum(sum(g) for g in self.row_groups)
        target = min(MAX_UNIT_ROWS, max(DEFAULT_BATCH, math.ceil(total / (4 * max(1, cpus)))))
        out = []
        for f, groups in zip(self.files, self.row_groups):
            start, rows = 0, 0
            for i, n in enumerate(groups):
                rows += n
                if rows >= target:
                    out.append((f, start, i + 1))
                    start, rows = i + 1, 0
            if start < len(groups):
                out.append((f, start, len(groups)))
        return out


def score_unit(unit: tuple[str, int, int], columns: list[tuple[str, Any]], spec: dict) -> list[bytes]:
    """Ray task body: the pickled payloads of one unit's rows, scored in slices of
    ``spec["slice_rows"]`` (``columns``: ``(name, Arrow type)`` to read; those the file lacks
    are nulls). Input errors come back as a payload (see :class:`BatchScorer`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path, first, end = unit
    scorer = BatchScorer(spec)
    pf = pq.ParquetFile(path)
    have = set(pf.schema_arrow.names)
    present = [name for name, _ in columns if name in have]
    blobs: list[bytes] = []
    for rb in pf.iter_batches(batch_size=spec.get("slice_rows") or DEFAULT_BATCH,
                              row_groups=range(first, end), columns=present, use_threads=False):
        arrays = [rb.column(name) if name in have else pa.nulls(rb.num_rows, typ)
                  for name, typ in columns]
        out = scorer.payloads(pa.Table.from_arrays(arrays, names=[n for n, _ in columns]))
        blobs += out
        if scorer.failed:
            break
    return blobs


def run_units(ray, parts: ParquetFiles, columns: list[str], spec: dict,
              progress: bool | None) -> Generator[list[bytes], None, None]:
    """The payload lists of every unit, in dataset order, as the tasks finish (all submitted
    at once; Ray retries a task whose worker or node dies, and a retried task's payloads
    reach the driver once)."""
    from ...engine.progress import progress_bar

    cpus = int(ray.cluster_resources().get("CPU", 1))
    units = parts.units(cpus)
    typed = [(c, parts.types[c]) for c in columns]
    task = ray.remote(max_retries=3)(score_unit).options(name="mtscore.score_unit")
    spec_ref = ray.put(spec)
    refs = [task.remote(u, typed, spec_ref) for u in units]
    done = 0
    try:
        with progress_bar(len(refs), "score_ray", progress, unit="task") as bar:
            for ref in refs:
                blobs = ray.get(ref)
                done += 1
                bar.update(1)
                yield blobs
    finally:
        for ref in refs[done:]:  # a failed or abandoned run: stop what is still queued
            ray.cancel(ref)
