"""Where in the dataset a row without any reference is: a worker sees only its own slice (Ray
gives a batch no row offset), so when one reports a :class:`MissingReferenceError`, the driver
finds the first such row of the whole dataset with one ordered pass over its columns (an error
path only: a run that succeeds never pays for it)."""
from __future__ import annotations

from ...engine.columns import ColumnSpec, normalise
from ...engine.metrics.base import MissingReferenceError, present_mask

#: the column Ray adds with ``include_paths=True``
PATH_COLUMN = "path"


def first_unreferenced(ds, cols: ColumnSpec, source: str, with_path: bool
                       ) -> tuple[int, int, str | None, int] | None:
    """``(row, rows without reference in all, file or None, row in that file)`` of the first
    row (0-based, dataset order) whose reference columns are all null; None if there is none.
    ``with_path``: ``ds`` has Ray's ``path`` column (read with ``include_paths=True``)."""
    import numpy as np

    ctx = ds.context
    saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars)
    ctx.execution_options.preserve_order, ctx.enable_progress_bars = True, False
    wanted = cols.source_columns() + ([PATH_COLUMN] if with_path else [])
    first: tuple[int, str | None, int] | None = None
    total = offset = 0
    per_file: dict[str, int] = {}
    try:
        for batch in ds.select_columns(wanted).iter_batches(batch_size=None, batch_format="pyarrow"):
            table = normalise(batch, cols, source)
            streams = [table.column(f"ref_{k}").to_pylist() for k in range(len(cols.refs))]
            missing = present_mask(streams).sum(axis=0) == 0
            paths = batch.column(PATH_COLUMN).to_pylist() if with_path else None
            if first is None and missing.any():
                i = int(np.argmax(missing))
                if paths is None:
                    first = (offset + i, None, offset + i)
                else:
                    before = sum(1 for p in paths[:i] if p == paths[i])
                    first = (offset + i, paths[i], per_file.get(paths[i], 0) + before)
            total += int(missing.sum())
            offset += batch.num_rows
            if paths is not None:
                for p in paths:
                    per_file[p] = per_file.get(p, 0) + 1
    finally:
        ctx.execution_options.preserve_order, ctx.enable_progress_bars = saved
    return None if first is None else (first[0], total, first[1], first[2])


def located_error(found: tuple[int, int, str | None, int], source: str,
                  cols: ColumnSpec) -> MissingReferenceError:
    """The user's error for :func:`first_unreferenced`'s answer: the dataset row, and the file
    and its row when the input was paths."""
    row, total, path, file_row = found
    where = f" (file {path}, row {file_row})" if path is not None else ""
    return MissingReferenceError(
        f"{source}: row {row} (0-based, in dataset order){where} has no reference: every reference "
        f"column ({', '.join(cols.refs)}) is null there, {total} row(s) in all; sacrebleu cannot "
        "score such segments either. Give each row a reference, or pass missing_refs='skip' to "
        "leave them out of the scores.")
