"""The input of :func:`~mtscore.bindings.ray.score_ray` as a ``ray.data.Dataset``: a Dataset
as given, Parquet / JSONL / CSV paths, or plain text files."""
from __future__ import annotations

import os
from collections.abc import Sequence

from ...engine.corpus_error import CorpusError
from .cluster import require_ray


def read_dataset(source, fmt: str | None = None, include_paths: bool = False):
    """``(dataset, source name)``: a ``ray.data.Dataset`` from a Dataset, or Parquet / JSONL /
    CSV path(s) (a directory is Parquet); ``fmt`` overrides the guess from the extension;
    ``include_paths``: read paths with Ray's ``path`` column (each row's file)."""
    ray = require_ray()
    if isinstance(source, ray.data.Dataset):
        return source, "<dataset>"
    paths = [os.fspath(source)] if isinstance(source, (str, os.PathLike)) else [os.fspath(p) for p in source]
    if not paths:
        raise CorpusError("score_ray: no input paths")
    for p in paths:
        if "://" not in p and not os.path.exists(p):
            raise CorpusError(f"{p}: no such file or directory")
    name = source_label(source)
    f = fmt or _guess(paths[0])
    if f == "parquet":
        return ray.data.read_parquet(paths, include_paths=include_paths), name
    if f == "jsonl":
        return ray.data.read_json(paths, lines=True, include_paths=include_paths), name
    if f == "csv":
        return ray.data.read_csv(paths, include_paths=include_paths), name
    raise CorpusError(f"{name}: score_ray reads Parquet, JSONL or CSV (got {f!r}); for plain text "
                      "files pass text_dataset(hyp_path, ref_paths)")


def source_label(source) -> str:
    """How errors name path input: the path, or the first one and how many more."""
    paths = [os.fspath(source)] if isinstance(source, (str, os.PathLike)) else [os.fspath(p) for p in source]
    return paths[0] if len(paths) == 1 else f"{paths[0]} (+{len(paths) - 1} more)"


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
