"""The worker side: :class:`BatchScorer` turns one Arrow batch into per-segment statistics,
grouped by (test set, system); only statistics (no text) go back to the driver."""
from __future__ import annotations

import pickle
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...engine.columns import ColumnSpec, normalise
from ...engine.corpus_error import CorpusError
from ...engine.metrics.base import Metric, MissingReferenceWarning, present_mask
from .digest import ref_crcs

#: rows scored at once (an actor's batch; the slices of a block that a task takes whole, as
#: read): large enough that per-batch costs (metric lookup, reference preparation set-up,
#: pickling the payload, and for repeated references the reference work) vanish, small
#: enough to bound a worker's memory (~50 MB of Python strings for WMT-length segments)
DEFAULT_BATCH = 65536

#: group key of the rows of a dataset without test-set / system columns
_NO_GROUP = ("", "")


#: metric objects by scorer spec, per worker process (tasks reuse their process)
_METRIC_CACHE: dict[bytes, dict[str, Metric]] = {}


def build_metrics(metric_specs: Sequence[tuple[str, dict]], missing_refs: str | None) -> dict[str, Metric]:
    from ...engine.metrics.base import check_missing_refs_policy
    from ...engine.metrics.registry import METRICS, make_metric

    out: dict[str, Metric] = {}
    for name, kwargs in metric_specs:
        spec = METRICS.get(name)
        # the registry's worker defaults (BERTScore: one encoder per actor, intra-op
        # threads = the actor's CPUs unless given)
        m: Metric = make_metric(name, **{**(spec.ray_defaults if spec else {}), **kwargs})
        m.workers = 1  # one Ray worker = one core; Ray provides the parallelism
        if missing_refs is not None:
            m.missing_refs = check_missing_refs_policy(missing_refs, "score_ray")
        out[name] = m
    return out


def run_facts(metric: Metric) -> dict[str, str]:
    """The signature fields that describe how this process ran ``metric`` (COMET: ``prec``, the
    precision its session runs in on this actor's device), which the driver's copy, built on the
    CPU, cannot know; ``{}`` for a metric without any (no ``run_facts`` hook)."""
    fn = getattr(metric, "run_facts", None)
    return {str(k): str(v) for k, v in fn().items()} if fn is not None else {}


class BatchScorer:
    """Per-segment statistics of one Arrow batch, grouped by (test set, system).

    Called by Ray Data (``map_batches``) as a function (the class is instantiated per call and
    takes its metric objects from a per-process cache) or as an actor (built once per actor).
    Returns a one-row Arrow table whose ``payload`` column holds the pickled statistics: no text.
    """

    def __init__(self, spec: dict):
        self.spec = spec
        key = pickle.dumps((spec["metrics"], spec["missing_refs"]))
        metrics = _METRIC_CACHE.get(key)
        if metrics is None:
            metrics = _METRIC_CACHE[key] = build_metrics(spec["metrics"], spec["missing_refs"])
        self.metrics = metrics
        self.failed = False

    def __call__(self, batch):
        import pyarrow as pa

        return pa.table({"payload": pa.array(self.payloads(batch), pa.binary())})

    def payloads(self, batch) -> list[bytes]:
        """The pickled payloads of ``batch`` (an Arrow table), one per slice of
        ``spec["slice_rows"]`` rows; after an input error the last one carries it and
        :attr:`failed` is set."""
        blobs = []
        self.failed = False
        # a block read whole (tasks fused with the read) may hold a file's worth of rows:
        # score it in slices, so the Python strings and kernel buffers stay bounded
        step = self.spec.get("slice_rows") or DEFAULT_BATCH
        for start in range(0, max(1, batch.num_rows), step):
            try:
                payload = self._payload(batch.slice(start, step))
            except (ValueError, TypeError) as e:
                # bad input (CorpusError, MissingReferenceError, ...): carried to the driver as
                # the exception itself, raised there as the user's error (Ray would retry it)
                payload = {"error": e}
            blobs.append(pickle.dumps(payload, protocol=5))
            if "error" in payload:
                self.failed = True
                break
        return blobs

    def _payload(self, batch) -> dict:
        spec = self.spec
        cols: ColumnSpec = spec["columns"]
        names = batch.schema.names
        lacking = [c for c in cols.source_columns() + [c for c in (spec["test_set"], spec.get("src")) if c]
                   if c not in names]
        if lacking:
            raise CorpusError(
                f"{spec['source']}: a part of the dataset has no column(s) {', '.join(map(repr, lacking))} "
                f"(it has {', '.join(map(repr, names))}); every file must have the same hypothesis and "
                f"reference columns (the reference count varies: {len(cols.refs)} in the dataset's schema)")
        table = normalise(batch, cols, spec["source"])
        n = table.num_rows
        hyps = table.column("hyp").to_pylist()
        streams = [table.column(f"ref_{k}").to_pylist() for k in range(len(cols.refs))]
        groups = self._groups(batch, table, n)
        if spec.get("src"):
            self._set_sources(batch, spec["src"])
        payload: dict[str, Any] = {"n": n, "groups": {}}
        facts = {name: f for name, m in self.metrics.items() if (f := run_facts(m))}
        if facts:  # the driver's signatures say what ran here (gather.add_run_facts)
            payload["facts"] = facts
        per_metric = {}
        counts = present_mask(streams).sum(axis=0) if streams else np.zeros(n, dtype=np.int64)
        if any(m.missing_refs == "skip" for m in self.metrics.values()):
            # the driver warns once with the total (not once per slice and metric)
            payload["skipped"] = int((counts == 0).sum())
        for name, metric in self.metrics.items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                prepared = metric.prepare(streams)  # once for every system of the batch
                per_metric[name] = metric.stats_and_scores(hyps, prepared, spec["sentence"])
            payload.setdefault("warnings", []).extend(
                f"{w.category.__name__}: {w.message}" for w in caught
                if not issubclass(w.category, MissingReferenceWarning))
        for key, idx in groups.items():
            g: dict[str, Any] = {"n": n if idx is None else len(idx)}
            c = counts if idx is None else counts[idx]
            have = c[c > 0]
            g["ref_counts"] = (int(have.min()), int(have.max())) if have.size else None
            if spec["digest"]:
                g["digest"] = ref_crcs(table, len(streams), idx)
            for name, (st, sc) in per_metric.items():
                st = st if idx is None else st[idx]
                if spec["keep_stats"] or st.dtype.kind == "f":
                    g[name] = ("stats", np.ascontiguousarray(st))
                else:
                    g[name] = ("sum", [x.item() for x in st.sum(axis=0)])
                if spec["sentence"]:
                    g[name + "\0scores"] = sc if idx is None else sc[idx]
            payload["groups"][key] = g
        return payload

    def _set_sources(self, batch, col: str) -> None:
        """The batch's source segments (column ``col``) on each metric that reads them (COMET:
        ``metric.sources``, N strings aligned with the batch's rows) before it is prepared."""
        from ...engine.metrics.registry import METRICS

        arr = batch.column(col).cast("string")
        if arr.null_count:
            raise CorpusError(f"{self.spec['source']}: column {col!r} (the sources) has a missing "
                              "value (null); COMET needs the source of every segment")
        sources = arr.to_pylist()
        for name, metric in self.metrics.items():
            spec = METRICS.get(name)
            if spec is not None and spec.sources:
                metric.sources = sources  # type: ignore[attr-defined]

    def _groups(self, batch, table, n: int) -> dict[tuple[str, str], np.ndarray | None]:
        """``{(test set, system): row indices}`` in order of first appearance (None = all rows);
        vectorised (dictionary codes), since a batch of a long table is usually one system."""
        ts_col = self.spec["test_set"]
        cols: list[Any] = []
        if ts_col:
            col = batch.column(ts_col).cast("string")
            if col.null_count:
                raise CorpusError(f"{self.spec['source']}: column {ts_col!r} has a missing value "
                                  "(null); every row needs a test set name")
            cols.append(col)
        else:
            cols.append(None)
        cols.append(table.column("system") if "system" in table.schema.names else None)
        if cols[0] is None and cols[1] is None:
            return {_NO_GROUP: None}
        values: list[list[str]] = []
        codes = []
        for col in cols:
            if col is None:
                values.append([""])
                codes.append(np.zeros(n, dtype=np.int64))
                continue
            enc = col.dictionary_encode()
            if hasattr(enc, "combine_chunks"):
                enc = enc.combine_chunks()
            values.append(enc.dictionary.to_pylist())
            codes.append(np.asarray(enc.indices, dtype=np.int64))
        width = len(values[1])
        combined = codes[0] * width + codes[1]
        uniq, first = np.unique(combined, return_index=True)

        def key(c: int) -> tuple[str, str]:
            return values[0][c // width], values[1][c % width]

        if len(uniq) == 1:
            return {key(int(uniq[0])): None}
        order = np.argsort(combined, kind="stable")
        starts = np.asarray(np.searchsorted(combined[order], uniq), dtype=np.int64)
        cuts: list[int] = [*starts.tolist(), n]
        return {key(int(uniq[k])): order[cuts[k]:cuts[k + 1]]
                for k in np.argsort(first, kind="stable").tolist()}


def score_batch(batch, spec: dict):
    """Ray task body: the scorer with metric objects from this process's cache."""
    return BatchScorer(spec)(batch)
