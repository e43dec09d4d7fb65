"""The pyarrow columnar table formats: Parquet (one file, or a directory read as a dataset) and
Arrow IPC (file format / Feather v2, memory-mapped; or stream format)."""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from .columns import normalise
from .corpus_error import CorpusError
from .table_format import TableFormat, TableRequest, arrow_source, rebatch

__all__ = ["ArrowFormat", "ParquetFormat"]


# ---- Parquet (one file, or a directory read as a dataset) ---------------------------------------

class _ParquetFile:
    """One Parquet file; ``pre_buffer=False`` when streaming (pre-buffering caches whole
    columns)."""

    def __init__(self, src, source: str, **kw):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            self.file = pq.ParquetFile(src, **kw)
        except (pa.ArrowInvalid, OSError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise CorpusError(f"{source}: not a Parquet file ({e})") from None
        self.names = self.file.schema_arrow.names

    def read(self, columns: list[str]) -> Any:
        return self.file.read(columns=columns)

    def iter_batches(self, columns: list[str], batch_size: int) -> Iterator[Any]:
        return self.file.iter_batches(batch_size=batch_size, columns=columns)


class _ParquetDataset:
    """A directory of Parquet files (pyarrow.dataset)."""

    def __init__(self, path: str):
        import pyarrow.dataset as ds

        self.dataset = ds.dataset(path, format="parquet")
        self.names = self.dataset.schema.names

    def read(self, columns: list[str]) -> Any:
        return self.dataset.to_table(columns=columns)

    def iter_batches(self, columns: list[str], batch_size: int) -> Iterator[Any]:
        import pyarrow.dataset as ds

        # no pre-buffering / little read-ahead: memory stays at about one row group
        return self.dataset.to_batches(
            columns=columns, batch_size=batch_size, batch_readahead=1, fragment_readahead=1,
            fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=False))


class ParquetFormat(TableFormat):
    name, aliases, extensions, compressible = "parquet", ("pq",), (".parquet", ".pq"), False

    def read(self, req: TableRequest) -> Any:
        pf = self._open(req)
        spec = req.resolve(pf.names)
        return normalise(pf.read(spec.source_columns()), spec, req.source)

    def iter_batches(self, req: TableRequest, batch_size: int) -> Iterator[Any]:
        pf = self._open(req, pre_buffer=False)
        spec = req.resolve(pf.names)
        yield from rebatch(pf.iter_batches(spec.source_columns(), batch_size), spec, req.source,
                            batch_size)

    @staticmethod
    def _open(req: TableRequest, **file_kw) -> _ParquetFile | _ParquetDataset:
        src = arrow_source(req.path)
        if isinstance(src, str) and os.path.isdir(src):
            return _ParquetDataset(src)
        return _ParquetFile(src, req.source, **file_kw)


# ---- Arrow IPC (file format / Feather v2, memory-mapped; or stream format) ----------------------

class ArrowFormat(TableFormat):
    name, aliases, compressible = "arrow", ("ipc", "feather"), False
    extensions = (".arrow", ".feather", ".ipc", ".arrows")

    def read(self, req: TableRequest) -> Any:
        reader = self._reader(req)
        spec = req.resolve(reader.schema.names)
        return normalise(reader.read_all().select(spec.source_columns()), spec, req.source)

    def iter_batches(self, req: TableRequest, batch_size: int) -> Iterator[Any]:
        reader = self._reader(req)
        spec = req.resolve(reader.schema.names)
        if hasattr(reader, "num_record_batches"):
            batches = (reader.get_batch(i).select(spec.source_columns())
                       for i in range(reader.num_record_batches))
        else:
            batches = (b.select(spec.source_columns()) for b in reader)
        yield from rebatch(batches, spec, req.source, batch_size)

    @staticmethod
    def _reader(req: TableRequest):
        import pyarrow as pa

        src = arrow_source(req.path)
        try:
            if isinstance(src, str):
                return pa.ipc.open_file(pa.memory_map(src, "r"))
            return pa.ipc.open_file(src)
        except pa.ArrowInvalid:
            if not isinstance(src, str):
                src.seek(0)
            try:
                return pa.ipc.open_stream(pa.OSFile(src) if isinstance(src, str) else src)
            except pa.ArrowInvalid as e:
                raise CorpusError(f"{req.source}: not an Arrow IPC/Feather file ({e})") from None
