"""CRC-32 digests of reference columns: computed per batch on the workers from the Arrow
buffers, combined on the driver into the CRCs of the whole columns (whatever the batches
were), to check that every system of a test set has the same references in the same order."""
from __future__ import annotations

import zlib

import numpy as np


def ref_crcs(table, k: int, idx: np.ndarray | None) -> list[tuple[int, int, int, int]]:
    """Per reference column of one group's rows: ``(crc, bytes)`` of the row lengths (int32
    little-endian, -1 for null) and of the text bytes, straight from the Arrow buffers (no
    Python strings). CRC-32s of consecutive pieces combine (:func:`crc32_combine`), so the
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


def _x2n_table() -> list[int]:
    table, p = [], 1 << 30  # x^1
    for _ in range(32):
        table.append(p)
        p = _multmodp(p, p)
    return table


_X2N = _x2n_table()


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """CRC-32 of ``A + B`` from ``crc32(A)``, ``crc32(B)`` and ``len(B)`` (zlib's
    ``crc32_combine``, which Python's zlib module does not expose)."""
    p, n, k = 1 << 31, len2, 3
    while n:
        if n & 1:
            p = _multmodp(_X2N[k & 31], p)
        n >>= 1
        k += 1
    return _multmodp(p, crc1) ^ crc2
