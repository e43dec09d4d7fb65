"""Scoring on Ray Data: the same numbers as :func:`mtscore.score`, on as many machines as Ray has.

>>> from mtscore.bindings.ray import score_ray
>>> r = score_ray("s3://bucket/segments/", metrics=["bleu", "chrf", "ter"], address="auto")
>>> r.corpus["sysA"]["bleu"].score           # == mtscore.score(...).corpus["sysA"]["bleu"].score

How it works (only the metric contract is used, so every lexical metric works the same way):

* the input (a ``ray.data.Dataset``, or Parquet / JSONL / CSV paths read by Ray) is cut into
  Arrow batches; :class:`BatchScorer` turns a batch into per-segment statistics with the compiled
  kernels. By default it runs as plain Ray tasks fused with the read (no copy of the text
  between read and scoring), keeping its metric objects in a per-process cache, so a worker
  process builds them once; ``compute="actors"`` runs it on an actor pool instead. The
  references of a batch are prepared once for all its rows (repeated reference rows, as in a
  long multi-system table, are prepared once each);
* only statistics travel back to the driver: per (test set, system) the integer column sums
  of BLEU/chrF (exact in any order), the float rows of TER (whose mean reference length the
  driver adds in segment order, as sacrebleu does), the whole ``(N, k)`` matrices when they
  are kept for significance tests (``keep_stats=True``) and the sentence scores when they are
  written (``segments=PATH``). Never the text;
* corpus scores come from the summed statistics (``compute_score_from_stats``): bit-identical
  to the single-machine result, including after a worker was killed and its task retried (a
  batch's statistics depend only on its rows);
* bootstrap CIs and paired tests run on the gathered matrices with the same code as locally
  (:meth:`RayScoreResult.compare`, :meth:`RayScoreResult.confidence`), so they equal the local
  results for the same seed.

Ray is an optional dependency: ``pip install "mtscore[ray]"``.
"""
from __future__ import annotations

import os
import pickle
import warnings
import zlib
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..engine.columns import ColumnSpec, normalise, resolve_columns
from ..engine.corpus_error import CorpusError
from ..engine.metrics.base import Metric, Score, present_mask
from ..engine.missing_extra import MissingExtraError

__all__ = ["score_ray", "connect", "text_dataset", "RayScoreResult", "BatchScorer", "require_ray"]

PIP_HINT = 'pip install "mtscore[ray]"'

#: rows scored at once (an actor's batch; the slices of a block that a task takes whole, as
#: read): large enough that per-batch costs (metric lookup, reference preparation set-up,
#: pickling the payload, and for repeated references the reference work) vanish, small
#: enough to bound a worker's memory (~50 MB of Python strings for WMT-length segments)
DEFAULT_BATCH = 65536

#: group key of the rows of a dataset without test-set / system columns
_NO_GROUP = ("", "")


def require_ray():
    """The ``ray`` module (with Ray Data), or :class:`MissingExtraError` naming the extra."""
    try:
        import ray
        import ray.data  # noqa: F401  (Ray Data is the part of ray[data] mtscore uses)
    except ImportError as e:
        raise MissingExtraError(
            f"mtscore.bindings.ray needs Ray Data ({e}); install it with: {PIP_HINT}") from None
    return ray


# ---- connecting ---------------------------------------------------------------------------
def connect(address: Optional[str] = None, num_cpus: Optional[int] = None, **init_kwargs):
    """Start or join a Ray cluster. ``address``: ``None`` (an already initialised Ray, else
    ``RAY_ADDRESS``, else a local instance), ``"local"`` (a new single-machine instance with
    ``num_cpus``), ``"auto"`` (the cluster this machine belongs to) or ``"HOST:PORT"`` /
    ``"ray://HOST:PORT"``. An unreachable address raises :class:`ConnectionError` naming it."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    kwargs: Dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
    kwargs.update(init_kwargs)
    if address in (None, "local"):
        if address == "local":
            kwargs["address"] = "local"
        if num_cpus is not None:
            kwargs["num_cpus"] = num_cpus
    else:
        if address != "auto":
            _check_reachable(address)
        kwargs["address"] = address
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = "no running Ray cluster found on this machine" if address == "auto" else \
            f"cannot connect to the Ray cluster at {address!r}"
        raise ConnectionError(f"{where}: {str(e).splitlines()[0] if str(e) else type(e).__name__}; "
                              "start one with `ray start --head` (see README, 'Many machines')") from None
    return ray


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast (ray.init retries for a minute) when nothing listens at ``HOST:PORT``."""
    import socket

    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise ConnectionError(f"Ray address {address!r} is not HOST:PORT, 'auto' or 'local'")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise ConnectionError(f"cannot connect to the Ray cluster at {address!r}: {e}; start one "
                              "with `ray start --head` (see README, 'Many machines')") from None


# ---- the worker side ----------------------------------------------------------------------
#: metric objects by scorer spec, per worker process (tasks reuse their process)
_METRIC_CACHE: Dict[bytes, Dict[str, Metric]] = {}


def _build_metrics(metric_specs: Sequence[Tuple[str, dict]], missing_refs: Optional[str]) -> Dict[str, Metric]:
    from ..engine.metrics.base import check_missing_refs_policy
    from ..engine.metrics.registry import make_metric

    out: Dict[str, Metric] = {}
    for name, kwargs in metric_specs:
        if name == "bertscore":
            from ..engine.bertscore import BERTScore

            # one encoder per actor; intra-op threads = the actor's CPUs unless given
            m: Metric = BERTScore(**{"threads": 1, **kwargs})
        else:
            m = make_metric(name, **kwargs)
        m.workers = 1  # one Ray worker = one core; Ray provides the parallelism
        if missing_refs is not None:
            m.missing_refs = check_missing_refs_policy(missing_refs, "score_ray")
        out[name] = m
    return out


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
            metrics = _METRIC_CACHE[key] = _build_metrics(spec["metrics"], spec["missing_refs"])
        self.metrics = metrics

    def __call__(self, batch):
        import pyarrow as pa

        blobs = []
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
                break
        return pa.table({"payload": pa.array(blobs, pa.binary())})

    def _payload(self, batch) -> dict:
        spec = self.spec
        cols: ColumnSpec = spec["columns"]
        names = batch.schema.names
        lacking = [c for c in cols.source_columns() + ([spec["test_set"]] if spec["test_set"] else [])
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
        payload: Dict[str, Any] = {"n": n, "groups": {}}
        per_metric = {}
        for name, metric in self.metrics.items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                prepared = metric.prepare(streams)  # once for every system of the batch
                per_metric[name] = metric.stats_and_scores(hyps, prepared, spec["sentence"])
            payload.setdefault("warnings", []).extend(
                f"{w.category.__name__}: {w.message}" for w in caught)
        counts = present_mask(streams).sum(axis=0) if streams else np.zeros(n, dtype=np.int64)
        for key, idx in groups.items():
            g: Dict[str, Any] = {"n": n if idx is None else len(idx)}
            c = counts if idx is None else counts[idx]
            have = c[c > 0]
            g["ref_counts"] = (int(have.min()), int(have.max())) if have.size else None
            if spec["digest"]:
                g["digest"] = _ref_crcs(table, len(streams), idx)
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

    def _groups(self, batch, table, n: int) -> Dict[Tuple[str, str], Optional[np.ndarray]]:
        """``{(test set, system): row indices}`` in order of first appearance (None = all rows);
        vectorised (dictionary codes), since a batch of a long table is usually one system."""
        ts_col = self.spec["test_set"]
        cols: List[Any] = []
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
        values: List[List[str]] = []
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

        def key(c: int) -> Tuple[str, str]:
            return values[0][c // width], values[1][c % width]

        if len(uniq) == 1:
            return {key(int(uniq[0])): None}
        order = np.argsort(combined, kind="stable")
        starts = np.asarray(np.searchsorted(combined[order], uniq), dtype=np.int64)
        cuts: List[int] = starts.tolist() + [n]
        return {key(int(uniq[k])): order[cuts[k]:cuts[k + 1]]
                for k in np.argsort(first, kind="stable").tolist()}


def _ref_crcs(table, k: int, idx: Optional[np.ndarray]) -> List[Tuple[int, int, int, int]]:
    """Per reference column of one group's rows: ``(crc, bytes)`` of the row lengths (int32
    little-endian, -1 for null) and of the text bytes, straight from the Arrow buffers (no
    Python strings). CRC-32s of consecutive pieces combine (:func:`_crc32_combine`), so the
    driver gets the CRCs of the whole columns whatever the batches were."""
    import pyarrow as pa

    out = []
    for j in range(k):
        col = table.column(f"ref_{j}")
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        if idx is not None:
            col = col.take(pa.array(idx))
        large = pa.types.is_large_string(col.type)
        bufs = col.buffers()
        offsets = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32)[col.offset:col.offset + len(col) + 1]
        lengths = np.diff(offsets).astype("<i4")
        if col.null_count:
            lengths[np.asarray(col.is_null())] = -1
        data = memoryview(bufs[2])[int(offsets[0]):int(offsets[-1])] if bufs[2] is not None else b""
        lb = lengths.tobytes()
        out.append((zlib.crc32(lb), len(lb), zlib.crc32(data), int(offsets[-1] - offsets[0])))
    return out


def _multmodp(a: int, b: int) -> int:
    """a(x) b(x) modulo the CRC-32 polynomial (reflected), as zlib's ``multmodp``."""
    m = 1 << 31
    p = 0
    while True:
        if a & m:
            p ^= b
            if (a & (m - 1)) == 0:
                break
        m >>= 1
        b = (b >> 1) ^ 0xEDB88320 if b & 1 else b >> 1
    return p


def _x2n_table() -> List[int]:
    table, p = [], 1 << 30  # x^1
    for _ in range(32):
        table.append(p)
        p = _multmodp(p, p)
    return table


_X2N = _x2n_table()


def _crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """CRC-32 of ``A + B`` from ``crc32(A)``, ``crc32(B)`` and ``len(B)`` (zlib's
    ``crc32_combine``, which Python's zlib module does not expose)."""
    p, n, k = 1 << 31, len2, 3
    while n:
        if n & 1:
            p = _multmodp(_X2N[k & 31], p)
        n >>= 1
        k += 1
    return _multmodp(p, crc1) ^ crc2


# ---- the driver side ----------------------------------------------------------------------
class _Group:
    """What the driver keeps of one (test set, system): sums, or statistics parts, and counts."""

    __slots__ = ("n", "ref_counts", "sums", "carry", "parts", "digest")

    def __init__(self, metric_names: Sequence[str]):
        self.n = 0
        self.ref_counts: set = set()
        self.sums: Dict[str, List[int]] = {}
        self.carry: Dict[str, list] = {}
        self.parts: Dict[str, List[np.ndarray]] = {m: [] for m in metric_names}
        self.digest: Optional[List[List[int]]] = None  # per reference column: CRC-32s and sizes

    def add(self, g: dict, metrics: Dict[str, Metric], keep: bool) -> None:
        self.n += g["n"]
        if g["ref_counts"] is not None:
            self.ref_counts.update(g["ref_counts"])
        if "digest" in g:
            if self.digest is None:
                self.digest = [list(x) for x in g["digest"]]
            else:
                for acc, (cl, nl, cd, nd) in zip(self.digest, g["digest"]):
                    acc[0], acc[1] = _crc32_combine(acc[0], cl, nl), acc[1] + nl
                    acc[2], acc[3] = _crc32_combine(acc[2], cd, nd), acc[3] + nd
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


class RayScoreResult:
    """Result of :func:`score_ray`.

    corpus      : ``{metric: Score}`` (one system, no test-set column), ``{system: {metric: Score}}``
                  (a ``system`` column), and with a test-set column ``{test_set: <one of those>}``
                  -- the layout of ``mtscore.score_table``'s ``corpus`` per test set
    stats       : with ``keep_stats=True``: ``{system: {metric: (N, k) ndarray}}`` (per test set
                  ``{test_set: {...}}``), equal to ``mtscore.score(...).stats``
    signatures  : ``{metric: str}``
    segments    : the Parquet path of the sentence scores (``segments=``), or None
    n           : ``{(test_set, system): number of segments}``
    metrics     : ``{name: metric object}`` (the driver's copies; they score resamples)
    """

    def __init__(self, groups: Dict[Tuple[str, str], _Group], metrics: Dict[str, Metric],
                 has_test_set: bool, has_system: bool, keep_stats: bool, segments: Optional[str]):
        self._groups = groups
        self.metrics = metrics
        self._has_test_set = has_test_set
        self._has_system = has_system
        self._keep = keep_stats
        self.segments = segments
        self.n = {k: g.n for k, g in groups.items()}
        self.corpus: Dict[str, Any] = {}
        self.stats: Dict[str, Any] = {}
        self.signatures: Dict[str, str] = {}
        self._scores: Dict[Tuple[str, str], Dict[str, Score]] = {}
        for ts in self.test_sets():
            num_refs = _num_refs([g.ref_counts for (t, _), g in groups.items() if t == ts])
            for (t, sy), g in groups.items():
                if t != ts:
                    continue
                row = {}
                for name, metric in metrics.items():
                    metric.num_refs = num_refs
                    row[name] = metric.compute_score_from_stats(g.sum_row(name, metric))
                self._scores[(t, sy)] = row
            for name, metric in metrics.items():
                metric.num_refs = num_refs
                self.signatures[name] = str(metric.get_signature())
        for (t, sy), row in self._scores.items():
            inner = self.corpus.setdefault(t, {}) if has_test_set else self.corpus
            if has_system:
                inner[sy] = row
            else:
                inner.update(row)
            if keep_stats:
                sinner = self.stats.setdefault(t, {}) if has_test_set else self.stats
                sinner[sy if has_system else "hyp"] = {m: groups[(t, sy)].stats(m) for m in metrics}

    def test_sets(self) -> List[str]:
        return list(dict.fromkeys(t for t, _ in self._groups))

    def systems(self, test_set: str = "") -> List[str]:
        return [s for t, s in self._groups if t == test_set]

    def group_stats(self, test_set: str = "", system: str = "") -> Dict[str, np.ndarray]:
        """``{metric: (N, k)}`` of one (test set, system); needs ``keep_stats=True``."""
        if not self._keep:
            raise ValueError("score_ray(..., keep_stats=True) keeps the statistics matrices that "
                             "significance tests need; this run kept only their sums")
        g = self._groups[(test_set, system)]
        return {m: g.stats(m) for m in self.metrics}

    def corpus_row(self, test_set: str, system: str, metric: str) -> list:
        """The summed statistics row of one (test set, system) and metric (what the corpus
        score was computed from)."""
        return self._groups[(test_set, system)].sum_row(metric, self.metrics[metric])

    def compare(self, test: str = "bs", n: Optional[int] = None, seed=None, test_set: str = "",
                baseline: Optional[str] = None, all_pairs: bool = False, n_ar_confidence: int = -1):
        """Paired bootstrap (``bs``) / approximate randomisation (``ar``) of the systems of
        ``test_set`` on the gathered statistics: :func:`mtscore.compare_stats`, so the result
        equals the local ``mtscore.compare`` for the same seed. The first system (or
        ``baseline``) is the baseline."""
        from ..engine.significance import compare_stats

        names = self.systems(test_set)
        if baseline is not None:
            if baseline not in names:
                raise ValueError(f"compare: baseline {baseline!r} is not one of the systems {names}")
            names.insert(0, names.pop(names.index(baseline)))
        metrics = list(self.metrics.values())
        stats = [[self.group_stats(test_set, s)[m] for m in self.metrics] for s in names]
        self._set_num_refs(test_set)
        return compare_stats(names, metrics, stats, test=test, n=n, seed=seed, all_pairs=all_pairs,
                             n_ar_confidence=n_ar_confidence)

    def confidence(self, n: int = 1000, seed=None, test_set: str = "", system: str = "") -> Dict[str, Score]:
        """Single-system bootstrap 95% CIs (sacrebleu's ``--confidence``) of every metric:
        ``{metric: Score}`` with ``_mean`` / ``_ci`` set, equal to the local result."""
        from ..engine.significance import bootstrap_ci

        self._set_num_refs(test_set)
        out = {}
        for name, st in self.group_stats(test_set, system).items():
            m = self.metrics[name]
            sc = m.compute_score_from_stats(m.sum_stats(st))
            out[name] = bootstrap_ci(m, st, sc, n, seed=seed)
        return out

    def _set_num_refs(self, test_set: str) -> None:
        num_refs = _num_refs([g.ref_counts for (t, _), g in self._groups.items() if t == test_set])
        for m in self.metrics.values():
            m.num_refs = num_refs

    def __repr__(self) -> str:
        return f"RayScoreResult({len(self._groups)} group(s), {sum(self.n.values())} segments)"


def _num_refs(counts: Sequence[set]) -> int:
    seen = set().union(*counts) if counts else set()
    return next(iter(seen)) if len(seen) == 1 else -1


# ---- the entry point ----------------------------------------------------------------------
def read_dataset(source, fmt: Optional[str] = None):
    """A ``ray.data.Dataset`` from a Dataset, or Parquet / JSONL / CSV path(s) (a directory is
    Parquet); ``fmt`` overrides the guess from the extension."""
    ray = require_ray()
    if isinstance(source, ray.data.Dataset):
        return source, "<dataset>"
    paths = [os.fspath(source)] if isinstance(source, (str, os.PathLike)) else [os.fspath(p) for p in source]
    if not paths:
        raise CorpusError("score_ray: no input paths")
    for p in paths:
        if "://" not in p and not os.path.exists(p):
            raise CorpusError(f"{p}: no such file or directory")
    name = paths[0] if len(paths) == 1 else f"{paths[0]} (+{len(paths) - 1} more)"
    f = fmt or _guess(paths[0])
    if f == "parquet":
        return ray.data.read_parquet(paths), name
    if f == "jsonl":
        return ray.data.read_json(paths, lines=True), name
    if f == "csv":
        return ray.data.read_csv(paths), name
    raise CorpusError(f"{name}: score_ray reads Parquet, JSONL or CSV (got {f!r}); for plain text "
                      "files pass text_dataset(hyp_path, ref_paths)")


def text_dataset(hyp_path, ref_paths: Sequence = ()):
    """A ``ray.data.Dataset`` with columns ``hyp``, ``ref_0 ..`` from plain text files (one
    segment per line, read by Ray, each line ``rstrip()``'d as sacrebleu reads files), for
    :func:`score_ray`. Files of different line counts raise :class:`CorpusError` naming them
    (each file is counted first: one extra pass over the text)."""
    ray = require_ray()
    import pyarrow as pa

    paths = [os.fspath(hyp_path)] + [os.fspath(p) for p in ref_paths]
    names = ["hyp"] + [f"ref_{k}" for k in range(len(paths) - 1)]

    def rstripped(name):
        def fn(batch):
            return pa.table({name: pa.array([x.rstrip() for x in batch.column("text").to_pylist()],
                                            pa.string())})
        return fn

    parts = []
    for p, name in zip(paths, names):
        if "://" not in p and not os.path.exists(p):
            raise CorpusError(f"{p}: no such file")
        parts.append(ray.data.read_text(p, drop_empty_lines=False)
                     .map_batches(rstripped(name), batch_format="pyarrow"))
    counts = [d.count() for d in parts]
    for p, c in zip(paths[1:], counts[1:]):
        if c != counts[0]:
            raise CorpusError(f"line-count mismatch: {paths[0]} has {counts[0]} lines but {p} has {c}")
    return parts[0].zip(*parts[1:]) if len(parts) > 1 else parts[0]


def _guess(path: str) -> str:
    p = path.lower().rstrip("/")
    if "://" not in p and os.path.isdir(path):
        return "parquet"
    for ext, f in ((".parquet", "parquet"), (".pq", "parquet"), (".jsonl", "jsonl"),
                   (".json", "jsonl"), (".jsonl.gz", "jsonl"), (".csv", "csv"), (".csv.gz", "csv")):
        if p.endswith(ext):
            return f
    return "unknown"


def score_ray(source, hyp: str = "hyp", refs: Optional[Sequence[str]] = None, *, system=None,
              test_set=None, metrics: Sequence[str] = ("bleu", "chrf"),
              bleu_kwargs: Optional[dict] = None, chrf_kwargs: Optional[dict] = None,
              ter_kwargs: Optional[dict] = None, missing_refs: Optional[str] = None,
              keep_stats: bool = False, segments: Optional[str] = None,
              batch_size: Optional[int] = None, compute: str = "tasks",
              concurrency: Optional[int] = None, address: Optional[str] = None,
              fmt: Optional[str] = None, progress: Optional[bool] = None,
              varying_refs: str = "error", bertscore_kwargs: Optional[dict] = None,
              num_gpus: Optional[float] = None) -> RayScoreResult:
    """Score a table on Ray: corpus scores per (test set, system), equal to ``mtscore.score``.

    source      : a ``ray.data.Dataset``, or Parquet (file or directory) / JSONL / CSV path(s)
    hyp, refs   : the hypothesis column and the reference columns (default ``ref``/``ref_0``...)
    system      : None (a ``system`` column if there is one), a column name, or False
    test_set    : None (a ``test_set`` column if there is one), a column name, or False; each
                  test set is scored on its own (its own ``num_refs``)
    metrics     : "bleu", "chrf", "chrf++", "ter", "bertscore" (constructor arguments in
                  ``*_kwargs``); BERTScore runs on an actor pool (the ONNX encoder loaded once
                  per actor), its sentence score is 100 x F1 and its statistics are P, R, F, 1
    num_gpus    : GPUs per scoring actor for BERTScore (default: 1 when the cluster has GPUs,
                  with ``device="cuda"`` unless bertscore_kwargs sets a device; else 0)
    keep_stats  : gather the (N, k) statistics matrices (8-80 bytes per segment) for
                  :meth:`RayScoreResult.compare` / :meth:`~RayScoreResult.confidence`; otherwise
                  only their column sums reach the driver (TER: its float rows, added in order)
    segments    : write the sentence scores (columns ``test_set``, ``system``, ``seg``, one per
                  metric) to this Parquet file (atomically: a failed run leaves no file)
    compute     : "tasks" (fused with the read; metric objects cached per worker process) or
                  "actors" (an actor pool of ``concurrency`` actors, default one per CPU)
    address     : see :func:`connect` (None: the running Ray, else a local one)
    varying_refs : "error" (default): a test set whose segments do not all have the same number
                  of references (null in a reference column; typically files written with
                  different reference columns, which Ray fills with nulls) is refused with the
                  counts; "allow": score it with sacrebleu's variable count (``nrefs:var``), as
                  ``mtscore.score`` does
    batch_size  : rows per batch; None (the default for tasks): Ray's blocks as read, so the
                  scoring runs fused with the read (no copy of the text between tasks)
    """
    if varying_refs not in ("error", "allow"):
        raise ValueError(f"score_ray: varying_refs must be 'error' or 'allow', got {varying_refs!r}")
    if compute not in ("tasks", "actors"):
        raise ValueError(f"score_ray: compute must be 'tasks' or 'actors', got {compute!r}")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"score_ray: batch_size must be >= 1, got {batch_size}")
    ray = connect(address)
    from ..engine.metrics.base import check_missing_refs_policy

    if missing_refs is not None:
        check_missing_refs_policy(missing_refs, "score_ray")
    metric_specs = _metric_specs(metrics, bleu_kwargs, chrf_kwargs, ter_kwargs, bertscore_kwargs)
    gpus = 0.0
    if any(n == "bertscore" for n, _ in metric_specs):
        compute = "actors"  # the encoder is loaded once per actor
        have = float(ray.cluster_resources().get("GPU", 0))
        gpus = float(num_gpus) if num_gpus is not None else (1.0 if have else 0.0)
        if gpus:
            metric_specs = [(n, {"device": "cuda", **kw} if n == "bertscore" else kw)
                            for n, kw in metric_specs]
    ds, source_name = read_dataset(source, fmt)
    names = _schema_names(ds, source_name)
    cols = resolve_columns(names, source_name, hyp, refs, system, False, False)
    ts_col = _optional_column(names, test_set, "test_set", source_name)
    # the driver's copies score the summed statistics and give the signatures (a BERTScore
    # copy runs on the CPU: it encodes nothing but the probe below)
    driver_metrics = _build_metrics([(n, {**kw, "device": "cpu"} if n == "bertscore" else kw)
                                     for n, kw in metric_specs], missing_refs)
    # float statistics (TER's mean reference length) are added in segment order
    float_stats = any(m.corpus_stats(["a"], [["a"]]).dtype.kind == "f" for m in driver_metrics.values())
    spec = {"metrics": metric_specs, "missing_refs": missing_refs, "columns": cols,
            "test_set": ts_col, "source": source_name, "keep_stats": keep_stats,
            "sentence": segments is not None, "digest": cols.system is not None,
            "slice_rows": batch_size or DEFAULT_BATCH}
    ordered = keep_stats or segments is not None or spec["digest"] or float_stats
    projected = ds.select_columns(cols.source_columns() + ([ts_col] if ts_col else []))
    kw: Dict[str, Any] = {"batch_format": "pyarrow", "batch_size": batch_size,
                          "fn_constructor_args": (spec,)}
    if compute == "actors":
        kw["batch_size"] = batch_size or DEFAULT_BATCH
        res = ray.cluster_resources()
        size = concurrency or (max(1, int(res.get("GPU", 0) / gpus)) if gpus else
                               max(1, int(res.get("CPU", 1))))
        kw["compute"] = ray.data.ActorPoolStrategy(min_size=1, max_size=size)
        if gpus:
            kw["num_gpus"] = gpus
        mapped = projected.map_batches(BatchScorer, **kw)
    else:
        kw.pop("fn_constructor_args")
        if concurrency:
            kw["compute"] = ray.data.TaskPoolStrategy(size=concurrency)
        mapped = projected.map_batches(_score_batch, fn_kwargs={"spec": spec}, **kw)
    groups = _gather(ray, mapped, driver_metrics, keep_stats, segments, ts_col is not None,
                     cols.system is not None, ordered, progress)
    if not groups:
        raise CorpusError(f"{source_name}: empty input (no segments)")
    if cols.system is not None:
        _check_same_segments(groups, source_name)
    if varying_refs == "error":
        _check_ref_counts(groups, source_name)
    return RayScoreResult(groups, driver_metrics, ts_col is not None, cols.system is not None,
                          keep_stats, segments)


def _score_batch(batch, spec: dict):
    """Ray task body: the scorer with metric objects from this process's cache."""
    return BatchScorer(spec)(batch)


def _metric_specs(metrics, bleu_kwargs, chrf_kwargs, ter_kwargs, bertscore_kwargs=None) -> List[Tuple[str, dict]]:
    by_name = {"bleu": bleu_kwargs or {}, "chrf": chrf_kwargs or {}, "ter": ter_kwargs or {},
               "bertscore": bertscore_kwargs or {}}
    out = []
    for m in metrics:
        if not isinstance(m, str):
            raise TypeError("score_ray: give metrics by name ('bleu', 'chrf', 'chrf++', 'ter') and "
                            "their options in bleu_kwargs / chrf_kwargs / ter_kwargs")
        name = m.lower()
        out.append((name, dict(by_name.get("chrf" if name == "chrf++" else name, {}))))
    if any(n == "bertscore" for n, _ in out):
        kw = by_name["bertscore"]
        if kw.get("idf") is True or kw.get("idf_sents") is not None:
            raise ValueError("score_ray: BERTScore idf over the references needs the whole corpus "
                             "first; compute it once (BERTScore().idf_weights(refs)) and pass "
                             "bertscore_kwargs={'idf': weights}")
    return out


def _schema_names(ds, source: str) -> List[str]:
    try:
        schema = ds.schema()
    except Exception as e:  # noqa: BLE001 - Ray wraps read errors in its own types
        raise _user_error(e, source) from None
    if schema is None:
        raise CorpusError(f"{source}: empty input (no rows, no schema)")
    return list(schema.names)


def _optional_column(names: Sequence[str], col, default: str, source: str) -> Optional[str]:
    if col is False:
        return None
    if col is None:
        return default if default in names else None
    if col not in names:
        raise CorpusError(f"{source}: no column {col!r} (available: {', '.join(map(repr, names))}); "
                          f"pass {default}= to name it")
    return col


def _gather(ray, mapped, metrics: Dict[str, Metric], keep: bool, segments: Optional[str],
            has_ts: bool, has_sys: bool, ordered: bool, progress: Optional[bool]) -> Dict[Tuple[str, str], _Group]:
    """Run the job and fold the payloads as they stream in (in input order when ``ordered``)."""
    metric_names = list(metrics)
    # a Dataset carries the DataContext of its creation (the caller's, for a Dataset passed
    # in): set the execution options there, and put them back afterwards
    ctx = mapped.context
    saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars)
    ctx.execution_options.preserve_order = ordered
    if progress is not None:
        ctx.enable_progress_bars = progress
    groups: Dict[Tuple[str, str], _Group] = {}
    writer = _SegmentWriter(segments, metric_names, has_ts, has_sys) if segments else None
    logged: set = set()
    try:
        for batch in mapped.iter_batches(batch_size=None, batch_format="pyarrow"):
            for blob in batch.column("payload").to_pylist():
                payload = pickle.loads(blob)
                if "error" in payload:
                    raise payload["error"]
                for w in payload.get("warnings", ()):
                    if w not in logged:
                        logged.add(w)
                        warnings.warn(w, stacklevel=3)
                for key, g in payload["groups"].items():
                    grp = groups.get(key)
                    if grp is None:
                        grp = groups[key] = _Group(metric_names)
                    if writer is not None:
                        writer.add(key, grp.n, g)
                    grp.add(g, metrics, keep)
    except (ValueError, TypeError):  # the workers' input errors, as raised there
        if writer is not None:
            writer.abort()
        raise
    except Exception as e:  # noqa: BLE001 - Ray's own failures (a job that cannot finish)
        if writer is not None:
            writer.abort()
        raise _user_error(e, "score_ray") from None
    finally:
        ctx.execution_options.preserve_order, ctx.enable_progress_bars = saved
    if writer is not None:
        writer.close()
    return groups


def _user_error(e: BaseException, where: str) -> BaseException:
    """A one-line RuntimeError for a Ray failure (a job that cannot finish: tasks out of
    retries, a lost cluster): Ray's message ends with the worker's exception line."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    return RuntimeError(f"{where}: the Ray job failed ({type(e).__name__}): {lines[-1] if lines else ''}")


def _check_same_segments(groups: Dict[Tuple[str, str], _Group], source: str) -> None:
    """Every system of a test set has the same number of segments and the same references in
    the same order (``Corpus.by_system``'s rule), checked on CRC-32s of their reference columns (lengths and bytes)."""
    first: Dict[str, Tuple[str, _Group]] = {}
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


def _check_ref_counts(groups: Dict[Tuple[str, str], _Group], source: str) -> None:
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

    def __init__(self, path: str, metric_names: List[str], has_ts: bool, has_sys: bool):
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
        d = os.path.dirname(os.path.abspath(path))
        fd, self.tmp = tempfile.mkstemp(prefix=".mtscore-", suffix=".parquet.tmp", dir=d)
        os.close(fd)
        self.writer = pq.ParquetWriter(self.tmp, self.schema)

    def add(self, key: Tuple[str, str], start: int, g: dict) -> None:
        import pyarrow as pa

        n = g["n"]
        cols: List[Any] = []
        if self.has_ts:
            cols.append(pa.array([key[0]] * n, pa.string()))
        if self.has_sys:
            cols.append(pa.array([key[1]] * n, pa.string()))
        cols.append(pa.array(np.arange(start, start + n, dtype=np.int64)))
        cols += [pa.array(np.asarray(g[m + "\0scores"], dtype=np.float64)) for m in self.metric_names]
        self.writer.write_table(pa.Table.from_arrays(cols, schema=self.schema))

    def close(self) -> None:
        self.writer.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        try:
            self.writer.close()
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)

