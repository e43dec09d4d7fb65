"""The entry point :func:`score_ray`: read the input, map :class:`~.worker.BatchScorer` over
it on Ray, gather the statistics on the driver and score them."""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ...engine.columns import ColumnSpec, resolve_columns
from ...engine.corpus_error import CorpusError
from ...engine.metrics.base import Metric, MissingReferenceError, MissingReferenceWarning
from ...engine.metrics.registry import METRICS, get_spec
from ..metric_options import merge_metric_options, options_for
from .cluster import connect, user_error
from .gather import RunFacts, check_ref_counts, check_same_segments, dataset_payloads, gather
from .locate import PATH_COLUMN, first_unreferenced, located_error
from .parquet_tasks import ParquetFiles, local_parquet_files, run_units
from .result import RayScoreResult
from .sources import read_dataset, source_label
from .worker import DEFAULT_BATCH, BatchScorer, build_metrics, score_batch


def score_ray(source, hyp: str = "hyp", refs: Sequence[str] | None = None, *, system=None,
              test_set=None, metrics: Sequence[str] = ("bleu", "chrf"),
              metric_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
              bleu_kwargs: dict | None = None, chrf_kwargs: dict | None = None,
              ter_kwargs: dict | None = None, missing_refs: str | None = None,
              keep_stats: bool = False, segments: str | None = None,
              batch_size: int | None = None, compute: str = "tasks",
              concurrency: int | None = None, address: str | None = None,
              fmt: str | None = None, progress: bool | None = None,
              varying_refs: str = "error", bertscore_kwargs: dict | None = None,
              num_gpus: float | None = None, src: str | None = None) -> RayScoreResult:
    """Score a table on Ray: corpus scores per (test set, system), equal to ``mtscore.score``.

    source      : a ``ray.data.Dataset``, or Parquet (file or directory) / JSONL / CSV path(s);
                  local Parquet files (not hive-partitioned; a directory's in sorted name order)
                  are read by the scoring tasks themselves (``parquet_tasks``), the rest by Ray
                  Data
    hyp, refs   : the hypothesis column and the reference columns (default ``ref``/``ref_0``...)
    system      : None (a ``system`` column if there is one), a column name, or False
    test_set    : None (a ``test_set`` column if there is one), a column name, or False; each
                  test set is scored on its own (its own ``num_refs``)
    metrics     : registered metric names (``mtscore.engine.metrics.registry.METRICS`` whose
                  ``ray`` is set: bleu, chrf, chrf++, ter, wer, per, cer, eed, meteor,
                  bertscore, comet, and any :func:`~mtscore.register_metric` added); BERTScore
                  and COMET run on an actor pool (the ONNX encoder loaded once per actor);
                  BERTScore's sentence score is 100 x F1 and its statistics are P, R, F, 1;
                  COMET's are its segment score and 1 (float64)
    src         : the source column, read only when a metric reads sources (COMET; the
                  registry's ``sources``); default ``src``
    metric_kwargs : ``{metric name: constructor arguments}`` for any registered metric, e.g.
                  ``{"wer": {"lowercase": True}, "eed": {"language": "ja"}}``; each metric is
                  made by the registry (``make_metric(name, **options)``) on the driver and
                  on every worker. A metric takes the options under its own name, else those
                  under its family's (chrf++ takes ``"chrf"``'s, as before); options of a
                  registered metric not in ``metrics`` are ignored; an unregistered name is
                  a ValueError listing the registered ones
    bleu_kwargs, chrf_kwargs, ter_kwargs, bertscore_kwargs : the older spelling of
                  ``metric_kwargs={"bleu": ...}`` etc., merged into it; the same metric given
                  both ways is a ValueError
    num_gpus    : GPUs per scoring actor for BERTScore (default: 1 when the cluster has GPUs,
                  with ``device="cuda"`` unless its options set a device; else 0)
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
    missing_refs : "error" (the metrics' default: a row with no reference at all stops the run
                  with a MissingReferenceError naming its 0-based row in dataset order, and its
                  file and row there when the input was paths) or "skip" (such rows get zero
                  statistics and NaN sentence scores; one MissingReferenceWarning with the total)
    batch_size  : rows per batch; None (the default for tasks): Ray's blocks as read, so the
                  scoring runs fused with the read (no copy of the text between tasks), scored
                  in slices of 65536 rows (local Parquet files: read in such slices)
    """
    _check_arguments(varying_refs, compute, batch_size)
    options = merge_metric_options(metric_kwargs, caller="score_ray", bleu=bleu_kwargs, chrf=chrf_kwargs,
                                   ter=ter_kwargs, bertscore=bertscore_kwargs)
    specs = _metric_specs(metrics, options, missing_refs)  # before connecting: no Ray for a typo
    ray = connect(address)
    specs, gpus, compute = _place_actor_metrics(ray, specs, num_gpus, compute)
    # local Parquet files on plain tasks reading their own row groups (parquet_tasks.py)
    files = local_parquet_files(source, fmt) if compute == "tasks" and not concurrency else None
    src_col = (src or "src") if any(METRICS[n].sources for n, _ in specs) else None
    ds, source_name, cols, ts_col = _open_source(source, fmt, hyp, refs, system, test_set, files, src_col)
    driver_metrics = _driver_metrics(specs, missing_refs)
    spec = {"metrics": specs, "missing_refs": missing_refs, "columns": cols,
            "test_set": ts_col, "source": source_name, "keep_stats": keep_stats,
            "sentence": segments is not None, "digest": cols.system is not None,
            "slice_rows": batch_size or DEFAULT_BATCH, "src": src_col}
    wanted = cols.source_columns() + [c for c in (ts_col, src_col) if c and c not in cols.source_columns()]
    if isinstance(ds, ParquetFiles):
        payloads = run_units(ray, ds, wanted, spec, progress)
    else:
        mapped = _map_scorer(ray, ds.select_columns(wanted), spec, compute, batch_size, concurrency, gpus)
        payloads = dataset_payloads(mapped, _in_order(spec, driver_metrics), progress)
    facts: RunFacts = {}  # what the workers ran (COMET's precision on its GPU), for the signatures
    try:
        groups, skipped = gather(payloads, driver_metrics, keep_stats, segments, ts_col is not None,
                                 cols.system is not None, facts)
    except MissingReferenceError as e:
        # the worker's row number is relative to its slice: the dataset's row (and file) instead
        raise _locate(e, ray, source, fmt, ds, cols, source_name) from None
    if skipped:
        _warn_skipped(skipped, groups, driver_metrics, source_name)
    _check_groups(groups, source_name, cols.system is not None, varying_refs)
    return RayScoreResult(groups, driver_metrics, ts_col is not None, cols.system is not None,
                          keep_stats, segments, run_facts=facts)


def _warn_skipped(skipped: int, groups: dict, metrics: dict[str, Metric], source_name: str) -> None:
    """One warning for the whole run (the workers' per-slice warnings are dropped)."""
    names = ", ".join(n for n, m in metrics.items() if m.missing_refs == "skip")
    warnings.warn(MissingReferenceWarning(
        f"{source_name}: {skipped} of {sum(g.n for g in groups.values())} segment(s) have no "
        f"reference and were skipped by {names} (missing_refs='skip': zero statistics, NaN "
        "sentence scores)"), stacklevel=3)


def _check_arguments(varying_refs: str, compute: str, batch_size: int | None) -> None:
    if varying_refs not in ("error", "allow"):
        raise ValueError(f"score_ray: varying_refs must be 'error' or 'allow', got {varying_refs!r}")
    if compute not in ("tasks", "actors"):
        raise ValueError(f"score_ray: compute must be 'tasks' or 'actors', got {compute!r}")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"score_ray: batch_size must be >= 1, got {batch_size}")


def _on_actors(name: str) -> bool:
    """Whether the registry runs metric ``name`` on actors (``MetricSpec.ray_actors``: BERTScore)."""
    spec = METRICS.get(name)
    return spec is not None and spec.ray_actors


def _place_actor_metrics(ray, metric_specs: list[tuple[str, dict]], num_gpus: float | None,
                         compute: str) -> tuple[list[tuple[str, dict]], float, str]:
    """``(metric specs, GPUs per actor, compute)``: a metric the registry runs on actors
    (BERTScore: the encoder is loaded once per actor) makes every scorer an actor, on a GPU
    each when the cluster has GPUs (or ``num_gpus`` says)."""
    if not any(_on_actors(n) for n, _ in metric_specs):
        return metric_specs, 0.0, compute
    have = float(ray.cluster_resources().get("GPU", 0))
    gpus = float(num_gpus) if num_gpus is not None else (1.0 if have else 0.0)
    if gpus:
        metric_specs = [(n, {"device": "cuda", **kw} if _on_actors(n) else kw)
                        for n, kw in metric_specs]
    return metric_specs, gpus, "actors"


def _open_source(source, fmt: str | None, hyp: str, refs: Sequence[str] | None, system,
                 test_set, files: list[str] | None,
                 src_col: str | None = None) -> tuple[Any, str, ColumnSpec, str | None]:
    """``(dataset, or the local Parquet files to read on tasks; source name; columns; test-set
    column or None)``; ``src_col``: the source column a metric reads (COMET), checked here."""
    if files:
        parts = ParquetFiles(files, source_label(source))
        ds, source_name, names = parts, parts.label, parts.names
    else:
        ds, source_name = read_dataset(source, fmt)
        names = _schema_names(ds, source_name)
    cols = resolve_columns(names, source_name, hyp, refs, system, False, False)
    ts_col = _optional_column(names, test_set, "test_set", source_name)
    if src_col is not None and src_col not in names:
        raise CorpusError(f"{source_name}: no column {src_col!r} (available: {', '.join(map(repr, names))}); "
                          "COMET reads the source segments: pass src= to name their column")
    return ds, source_name, cols, ts_col


def _locate(err: MissingReferenceError, ray, source, fmt: str | None, ds, cols: ColumnSpec,
            source_name: str) -> MissingReferenceError:
    """The error to raise for a worker's :class:`MissingReferenceError` ``err``:
    :func:`located_error` of :func:`first_unreferenced` over the input (paths re-read with
    their ``path`` column; local Parquet files in the order they were scored), or that error
    itself if the pass finds no such row."""
    try:
        if isinstance(ds, ParquetFiles):
            with_paths, _ = read_dataset(ds.files, "parquet", include_paths=True)
            found = first_unreferenced(with_paths, cols, source_name, True)
        elif not isinstance(source, ray.data.Dataset) and PATH_COLUMN not in _schema_names(ds, source_name):
            with_paths, _ = read_dataset(source, fmt, include_paths=True)
            found = first_unreferenced(with_paths, cols, source_name, True)
        else:
            found = first_unreferenced(ds, cols, source_name, False)
    except Exception:
        return err
    return err if found is None else located_error(found, source_name, cols)


def _driver_metrics(metric_specs: list[tuple[str, dict]], missing_refs: str | None) -> dict[str, Metric]:
    """The driver's copies of the metrics: they score the summed statistics and give the
    signatures (a BERTScore copy runs on the CPU: it encodes nothing but a probe)."""
    return build_metrics([(n, {**kw, "device": "cpu"} if _on_actors(n) else kw)
                          for n, kw in metric_specs], missing_refs)


def _in_order(spec: dict, driver_metrics: dict[str, Metric]) -> bool:
    """Whether the payloads must reach the driver in input order: for kept matrices, sentence
    scores, reference digests, and float statistics (TER's mean reference length, added in
    segment order)."""
    float_stats = any(_float_stats(name, m) for name, m in driver_metrics.items())
    return bool(spec["keep_stats"] or spec["sentence"] or spec["digest"] or float_stats)


def _float_stats(name: str, metric: Metric) -> bool:
    """Whether ``metric``'s statistics are floats: a metric reading sources (COMET) has float64
    rows (and no sources on the driver to probe with); the others are probed with one segment."""
    spec = METRICS.get(name)
    if spec is not None and spec.sources:
        return True
    return metric.corpus_stats(["a"], [["a"]]).dtype.kind == "f"


def _map_scorer(ray, projected, spec: dict, compute: str, batch_size: int | None,
                concurrency: int | None, gpus: float):
    """The lazy Dataset of payloads: :class:`BatchScorer` as tasks fused with the read, or on
    an actor pool."""
    kw: dict[str, Any] = {"batch_format": "pyarrow", "batch_size": batch_size}
    if compute == "actors":
        kw["batch_size"] = batch_size or DEFAULT_BATCH
        res = ray.cluster_resources()
        size = concurrency or (max(1, int(res.get("GPU", 0) / gpus)) if gpus else
                               max(1, int(res.get("CPU", 1))))
        kw["compute"] = ray.data.ActorPoolStrategy(min_size=1, max_size=size)
        if gpus:
            kw["num_gpus"] = gpus
        return projected.map_batches(BatchScorer, fn_constructor_args=(spec,), **kw)
    if concurrency:
        kw["compute"] = ray.data.TaskPoolStrategy(size=concurrency)
    return projected.map_batches(score_batch, fn_kwargs={"spec": spec}, **kw)


def _check_groups(groups: dict, source_name: str, has_system: bool, varying_refs: str) -> None:
    if not groups:
        raise CorpusError(f"{source_name}: empty input (no segments)")
    if has_system:
        check_same_segments(groups, source_name)
    if varying_refs == "error":
        check_ref_counts(groups, source_name)


def _metric_specs(metrics, options: Mapping[str, dict],
                  missing_refs: str | None = None) -> list[tuple[str, dict]]:
    """``[(registry name, constructor arguments)]`` of ``metrics``: each metric's options under
    its own name, else under its family's (:func:`..metric_options.options_for`); the workers
    and the driver make each one with the registry's ``make_metric``
    (:func:`.worker.build_metrics`)."""
    from ...engine.metrics.base import check_missing_refs_policy

    if missing_refs is not None:
        check_missing_refs_policy(missing_refs, "score_ray")
    out: list[tuple[str, dict]] = []
    for m in metrics:
        if not isinstance(m, str):
            raise TypeError("score_ray: give metrics by name ('bleu', 'chrf', 'wer', ...) and "
                            "their options in metric_kwargs={name: {option: value}}")
        name = m.lower()
        if any(n == name for n, _ in out):  # one key per metric: the same one twice would merge
            raise ValueError(f"score_ray: metric {m!r} given twice")
        spec = get_spec(name)  # an unknown name: make_metric's error, before Ray starts
        if not spec.ray:
            raise ValueError(f"score_ray: metric {m!r} does not run on Ray")
        out.append((name, options_for(name, options)))
    for name, kw in out:  # options the registry says Ray cannot run (BERTScore idf)
        check = METRICS[name].ray_check
        if check is not None:
            check(kw)
    return out


def _schema_names(ds, source: str) -> list[str]:
    try:
        schema = ds.schema()
    except Exception as e:
        raise user_error(e, source) from None
    if schema is None:
        raise CorpusError(f"{source}: empty input (no rows, no schema)")
    return list(schema.names)


def _optional_column(names: Sequence[str], col, default: str, source: str) -> str | None:
    if col is False:
        return None
    if col is None:
        return default if default in names else None
    if col not in names:
        raise CorpusError(f"{source}: no column {col!r} (available: {', '.join(map(repr, names))}); "
                          f"pass {default}= to name it")
    return col
