"""References of the edit-distance metrics (WER, CER, PER, EED) prepared once: their symbols
(code points) as CSR arrays or, for the word metrics, the strings themselves, and which
references each segment has."""
from __future__ import annotations

import numpy as np

from ...kernels._lists import first_non_str

__all__ = ["PreparedSymbols", "PreparedWords", "flatten_refs"]


class PreparedSymbols:
    """References tokenised once: CSR symbols (``ref_ids`` int32, ``ref_offsets`` int64 (R + 1))
    and ``seg_refs`` int64 (n + 1): segment i uses references ``seg_refs[i]:seg_refs[i+1]``."""

    __slots__ = ("n", "num_refs", "ref_ids", "ref_offsets", "seg_refs")

    def __init__(self, n, ref_ids, ref_offsets, seg_refs, num_refs):
        self.n = n
        self.ref_ids = ref_ids
        self.ref_offsets = ref_offsets
        self.seg_refs = seg_refs
        self.num_refs = num_refs

    def slice(self, a: int, z: int) -> PreparedSymbols:
        """Segments ``a:z`` (``seg_refs`` rebased; the reference arrays shared)."""
        first, last = int(self.seg_refs[a]), int(self.seg_refs[z])
        lo, hi = int(self.ref_offsets[first]), int(self.ref_offsets[last])
        return PreparedSymbols(z - a, self.ref_ids[lo:hi], self.ref_offsets[first:last + 1] - lo,
                               self.seg_refs[a:z + 1] - first, self.num_refs)

    def missing(self) -> np.ndarray | None:
        missing = np.diff(self.seg_refs) == 0
        return missing if missing.any() else None

    def gather(self, rows: np.ndarray) -> PreparedSymbols:
        """Segment ``rows[j]``'s references as entry j (rows may repeat)."""
        nrefs = np.diff(self.seg_refs)[rows]
        seg_refs = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(nrefs, out=seg_refs[1:])
        ref_idx = (np.repeat(self.seg_refs[rows] - seg_refs[:-1], nrefs)
                   + np.arange(seg_refs[-1], dtype=np.int64))
        starts = self.ref_offsets[ref_idx]
        lens = self.ref_offsets[ref_idx + 1] - starts
        ref_offsets = np.zeros(len(ref_idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=ref_offsets[1:])
        tokens = np.repeat(starts - ref_offsets[:-1], lens) + np.arange(ref_offsets[-1], dtype=np.int64)
        return PreparedSymbols(len(rows), np.ascontiguousarray(self.ref_ids[tokens]), ref_offsets,
                               seg_refs, self.num_refs)


class PreparedWords:
    """References of the word metrics kept as their (normalised) strings: ``refs`` (R str,
    split into words by ``mtscore.kernels._edit_words`` on every comparison, which costs less than
    storing the words), ``seg_refs`` int64 (n + 1) holding absolute indices of each segment's
    references (into ``refs``) and, for WER, ``sets``: ``_edit_words.WordSets(refs)`` (each
    reference's words in a hash set, built once) or None."""

    __slots__ = ("n", "num_refs", "refs", "seg_refs", "sets")

    def __init__(self, n, refs, seg_refs, num_refs, sets=None):
        self.n = n
        self.refs = refs
        self.seg_refs = seg_refs
        self.num_refs = num_refs
        self.sets = sets

    def slice(self, a: int, z: int) -> PreparedWords:
        """Segments ``a:z`` (the same strings and sets; ``seg_refs`` stays absolute)."""
        return PreparedWords(z - a, self.refs, self.seg_refs[a:z + 1], self.num_refs, self.sets)

    def missing(self) -> np.ndarray | None:
        missing = np.diff(self.seg_refs) == 0
        return missing if missing.any() else None


def flatten_refs(streams) -> tuple:
    """``(flat non-None references in segment order, seg_refs int64 (n + 1), num_refs)`` of K
    reference streams (``num_refs`` -1 when the count varies; segments without any do not count)."""
    n = len(streams[0])
    if len(streams) == 1 and first_non_str(streams[0]) < 0:  # one stream, no None: one C loop
        return list(streams[0]), np.arange(n + 1, dtype=np.int64), 1
    flat: list[str] = []
    seg_refs = np.zeros(n + 1, dtype=np.int64)
    counts = set()
    for i, seg in enumerate(zip(*streams)):
        lines = [x for x in seg if x is not None]
        counts.add(len(lines))
        flat.extend(lines)
        seg_refs[i + 1] = seg_refs[i] + len(lines)
    if len(counts) > 1:
        counts.discard(0)
    return flat, seg_refs, next(iter(counts)) if len(counts) == 1 else -1
