"""A reference writer for the external-data layout of mtscore's encoder cache, independent of
mtscore's code: what ``save_model`` wrote before the exports streamed their weights while building
(``onnx.external_data_helper.set_external_data`` on each initializer of at least 1 kB with
``raw_data``, in graph order, at 4096-aligned offsets, zero padding between; the graph after). The
export tests compare the cache's bytes with it."""
from __future__ import annotations

from pathlib import Path


def total_initializer_bytes(model) -> int:
    """The serialised size of ``model``'s initializers (the cache's external-data criterion)."""
    return sum(t.ByteSize() for t in model.graph.initializer)


def reference_files(model, threshold: int, min_bytes: int = 1024) -> dict[str, bytes]:
    """``{file name: bytes}`` of ``model`` (built in memory, every initializer with ``raw_data``)
    saved as ``model.onnx`` (+ ``model.onnx.data`` when its initializers exceed ``threshold``:
    those of at least ``min_bytes``)."""
    from onnx import TensorProto
    from onnx.external_data_helper import set_external_data

    if total_initializer_bytes(model) <= threshold:
        return {"model.onnx": model.SerializeToString()}
    data = bytearray()
    for t in model.graph.initializer:
        if not t.HasField("raw_data") or len(t.raw_data) < min_bytes:
            continue
        data += b"\0" * (-len(data) % 4096)
        offset = len(data)
        data += t.raw_data
        set_external_data(t, location="model.onnx.data", offset=offset, length=len(t.raw_data))
        t.data_location = TensorProto.EXTERNAL
        t.ClearField("raw_data")
    return {"model.onnx": model.SerializeToString(), "model.onnx.data": bytes(data)}


def folder_files(folder: Path) -> dict[str, bytes]:
    """The export's files in ``folder`` (the manifest left out)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "manifest.json"}
