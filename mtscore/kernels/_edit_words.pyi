"""Edit-distance kernels, part 3 of 3: WER / PER statistics on jiwer's words straight from the
strings (references split per call, or prepared once in WordSets)."""
import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]

def word_stats_texts(
    hyps: list[str],
    refs: list[str],
    ref_lo: _I64,
    ref_hi: _I64,
    out: _F64,
    measure: int = 0,
    multi_ref: int = 0,
    start: int = 0,
    stop: int = -1,
) -> None:
    """Fill out[start:stop] (float64 (N, 2)) with [errors, reference length] of hyps[i] against refs[ref_lo[i]:ref_hi[i]], both split into jiwer's words."""

@disjoint_base  # a cdef class: its C layout cannot be combined with another base
class WordSets:
    """R reference strings prepared once for word_stats_sets (each one's jiwer words in a hash set, strings of <= 64 words)."""

    def __init__(self, refs: list[str]) -> None: ...
    def __len__(self) -> int: ...

def word_stats_sets(
    hyps: list[str],
    sets: WordSets,
    ref_lo: _I64,
    ref_hi: _I64,
    out: _F64,
    multi_ref: int = 0,
    start: int = 0,
    stop: int = -1,
) -> None:
    """word_stats_texts for Levenshtein (measure 0) against the strings of sets, references indexed into them."""
