"""The driver side of a run: fold the workers' payloads as they stream in (per (test set,
system): summed statistics, or the matrices kept for significance tests), write the sentence
scores, and check the groups against each other."""
from __future__ import annotations

import os
import pickle
import warnings
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np

from ...engine.corpus_error import CorpusError
from ...engine.metrics.base import Metric
from .cluster import user_error
from .digest import crc32_combine


class Group:
    """What the driver keeps of one (test set, system): sums, or statistics parts, and counts."""

    __slots__ = ("carry", "digest", "n", "parts", "ref_counts", "sums")

    def __init__(self, metric_names: Sequence[str]):
        self.n = 0
        self.ref_counts: set = set()
        self.sums: dict[str, list[int]] = {}
        self.carry: dict[str, list] = {}
        self.parts: dict[str, list[np.ndarray]] = {m: [] for m in metric_names}
        self.digest: list[list[int]] | None = None  # per reference column: CRC-32s and sizes

    def add(self, g: dict, metrics: dict[str, Metric], keep: bool) -> None:
        self.n += g["n"]
        if g["ref_counts"] is not None:
            self.ref_counts.update(g["ref_counts"])
        if "digest" in g:
            if self.digest is None:
                self.digest = [list(x) for x in g["digest"]]
            else:
                for acc, (cl, nl, cd, nd) in zip(self.digest, g["digest"]):
                    acc[0], acc[1] = crc32_combine(acc[0], cl, nl), acc[1] + nl
                    acc[2], acc[3] = crc32_combine(acc[2], cd, nd), acc[3] + nd
        for name, metric in metrics.items():
            kind, val = g[name]
            if kind == "sum":
                old = self.sums.get(name)
                self.sums[name] = list(val) if old is None else [a + b for a, b in zip(old, val)]
            elif keep:
                self.parts[name].append(val)
            elif len(val):
                # float statistics (TER): the metric's own sum_stats over the running sum row
                # followed by this batch's rows -- the left-to-right order sacrebleu adds in, so
                # the result equals sum_stats of the whole matrix bit for bit
                carry = self.carry.get(name)
                rows = val if carry is None else np.concatenate(
                    [np.asarray([carry], dtype=val.dtype), val])
                self.carry[name] = metric.sum_stats(rows)

    def sum_row(self, name: str, metric: Metric) -> list:
        """The summed statistics row, as ``metric.sum_stats`` gives it for the whole matrix."""
        if self.parts.get(name):
            return metric.sum_stats(self.stats(name))
        if name in self.sums:
            return self.sums[name]
        if name in self.carry:
            return self.carry[name]
        raise ValueError(f"no statistics for metric {name!r}")

    def stats(self, name: str) -> np.ndarray:
        parts = self.parts[name]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def dataset_payloads(mapped, ordered: bool, progress: bool | None) -> Generator[list[bytes], None, None]:
    """The payload lists of a mapped Ray Dataset as its batches arrive (in input order when
    ``ordered``)."""
    # a Dataset carries the DataContext of its creation (the caller's, for a Dataset passed
    # in): set the execution options there, and put them back afterwards
    ctx = mapped.context
    saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars)
    ctx.execution_options.preserve_order = ordered
    if progress is not None:
        ctx.enable_progress_bars = progress
    try:
        for batch in mapped.iter_batches(batch_size=None, batch_format="pyarrow"):
            yield batch.column("payload").to_pylist()
    finally:
        ctx.execution_options.preserve_order, ctx.enable_progress_bars = saved


#: ``{metric: {signature field: values the workers reported}}`` (see :func:`add_run_facts`)
RunFacts = dict[str, dict[str, set[str]]]


def add_run_facts(facts: RunFacts, payload: dict) -> None:
    """Fold a payload's ``facts`` (``{metric: {field: value}}``: what each worker ran, e.g.
    COMET's ``prec`` on its GPU) into ``facts``."""
    for name, fields in payload.get("facts", {}).items():
        for k, v in fields.items():
            facts.setdefault(name, {}).setdefault(k, set()).add(v)


def gather(payloads: Generator[list[bytes], None, None], metrics: dict[str, Metric], keep: bool, segments: str | None,
           has_ts: bool, has_sys: bool, facts: RunFacts | None = None) -> tuple[dict[tuple[str, str], Group], int]:
    """Run the job and fold the payloads as they stream in (``payloads``: lists of pickled
    payloads, in input order when the statistics kept, the sentence scores or the float sums
    need it): ``(groups, segments skipped for want of a reference)`` (``missing_refs="skip"``);
    the workers' run facts are added to ``facts`` when given."""
    metric_names = list(metrics)
    groups: dict[tuple[str, str], Group] = {}
    writer = _SegmentWriter(segments, metric_names, has_ts, has_sys) if segments else None
    logged: set = set()
    skipped = 0
    try:
        for blobs in payloads:
            for blob in blobs:
                payload = pickle.loads(blob)
                if "error" in payload:
                    raise payload["error"]
                skipped += payload.get("skipped", 0)
                if facts is not None:
                    add_run_facts(facts, payload)
                for w in payload.get("warnings", ()):
                    if w not in logged:
                        logged.add(w)
                        warnings.warn(w, stacklevel=3)
                for key, g in payload["groups"].items():
                    grp = groups.get(key)
                    if grp is None:
                        grp = groups[key] = Group(metric_names)
                    if writer is not None:
                        writer.add(key, grp.n, g)
                    grp.add(g, metrics, keep)
    except (ValueError, TypeError):  # the workers' input errors, as raised there
        if writer is not None:
            writer.abort()
        raise
    except Exception as e:
        if writer is not None:
            writer.abort()
        raise user_error(e, "score_ray") from None
    finally:
        payloads.close()  # the generator's clean-up (options restored, tasks cancelled) now
    if writer is not None:
        writer.close()
    return groups, skipped


def check_same_segments(groups: dict[tuple[str, str], Group], source: str) -> None:
    """Every system of a test set has the same number of segments and the same references in
    the same order (``Corpus.by_system``'s rule), checked on CRC-32s of their reference columns (lengths and bytes)."""
    first: dict[str, tuple[str, Group]] = {}
    for (ts, sy), g in groups.items():
        if ts not in first:
            first[ts] = (sy, g)
            continue
        base, bg = first[ts]
        where = f" of test set {ts!r}" if ts else ""
        if g.n != bg.n:
            raise CorpusError(f"{source}: system {sy!r}{where} has {g.n} segments but system {base!r} "
                              f"has {bg.n}; every system must have the same segments")
        if g.digest != bg.digest:
            raise CorpusError(f"{source}: system {sy!r}{where} has different references (or a different "
                              f"segment order) than system {base!r}; every system must have the same "
                              "segments in the same order")


def check_ref_counts(groups: dict[tuple[str, str], Group], source: str) -> None:
    for (ts, _sy), g in groups.items():
        if len(g.ref_counts) > 1:
            where = f" (test set {ts!r})" if ts else ""
            raise CorpusError(
                f"{source}{where}: the reference count varies between segments ({min(g.ref_counts)} to "
                f"{max(g.ref_counts)} non-null reference columns): were files written with different "
                "reference columns? Pass varying_refs='allow' to score with sacrebleu's variable "
                "count (nrefs:var), as mtscore.score does")


class _SegmentWriter:
    """Sentence scores to a Parquet file, batch by batch in input order; written to a temporary
    file renamed at the end, so a failed job leaves nothing (and a retried task, whose output
    Ray delivers once, is written once)."""

    def __init__(self, path: str, metric_names: list[str], has_ts: bool, has_sys: bool):
        import tempfile

        import pyarrow as pa
        import pyarrow.parquet as pq

        self.path = path
        self.metric_names = metric_names
        self.has_ts, self.has_sys = has_ts, has_sys
        fields = ([pa.field("test_set", pa.string())] if has_ts else []) + \
                 ([pa.field("system", pa.string())] if has_sys else []) + \
                 [pa.field("seg", pa.int64())] + [pa.field(m, pa.float64()) for m in metric_names]
        self.schema = pa.schema(fields)
        from ...engine.atomic import is_stream, register_temporary

        # a device or FIFO is written to at the end (copied from a temporary file); a symbolic
        # link's target is replaced, the link stays
        self.stream = is_stream(path)
        self.target = os.path.realpath(path) if os.path.islink(path) else path
        d = None if self.stream else os.path.dirname(os.path.abspath(self.target))
        fd, self.tmp = tempfile.mkstemp(prefix=".mtscore-", suffix=".parquet.tmp", dir=d)
        os.close(fd)
        self.cleanup = register_temporary(self.tmp).__enter__()  # removed on SIGTERM too
        self.writer = pq.ParquetWriter(self.tmp, self.schema)

    def add(self, key: tuple[str, str], start: int, g: dict) -> None:
        import pyarrow as pa

        n = g["n"]
        cols: list[Any] = []
        if self.has_ts:
            cols.append(pa.array([key[0]] * n, pa.string()))
        if self.has_sys:
            cols.append(pa.array([key[1]] * n, pa.string()))
        cols.append(pa.array(np.arange(start, start + n, dtype=np.int64)))
        cols += [pa.array(np.asarray(g[m + "\0scores"], dtype=np.float64)) for m in self.metric_names]
        self.writer.write_table(pa.Table.from_arrays(cols, schema=self.schema))

    def close(self) -> None:
        self.writer.close()
        if self.stream:
            import shutil

            with open(self.tmp, "rb") as src, open(self.path, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.unlink(self.tmp)
        else:
            os.replace(self.tmp, self.target)
        self.cleanup.__exit__(None, None, None)

    def abort(self) -> None:
        try:
            self.writer.close()
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)
            self.cleanup.__exit__(None, None, None)
