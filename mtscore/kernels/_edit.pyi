"""Edit-distance kernels: jiwer-compatible word splitting, code points, bit-parallel
Levenshtein (WER/CER), position-independent errors (PER) and EED, on CSR int32 symbols."""
from typing import Final

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from mtscore.kernels._text import Vocab

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]

MULTI_CLOSEST: Final = 0
MULTI_AVERAGE: Final = 1
MULTI_BEST: Final = 2
MEASURE_LEVENSHTEIN: Final = 0
MEASURE_PER: Final = 1

def jiwer_words(texts: list[str], vocab: Vocab) -> tuple[_I32, _I64]:
    """jiwer's default WER transform on N strings, words interned: (ids int32, offsets int64 (N + 1,))."""

def code_points(texts: list[str], strip: bool = False) -> tuple[_I32, _I64]:
    """Code points of N strings (str.strip()-ed first when strip): (values int32, offsets int64 (N + 1,))."""

def edit_stats_range(
    hyp: _I32,
    hyp_offsets: _I64,
    ref: _I32,
    ref_offsets: _I64,
    seg_refs: _I64,
    out: _F64,
    measure: int = 0,
    multi_ref: int = 0,
    start: int = 0,
    stop: int = -1,
) -> None:
    """Fill out[start:stop] (float64 (N, 2)) with [errors, reference length] (Levenshtein or PER errors)."""

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

def levenshtein(a: _I32, b: _I32) -> int:
    """Levenshtein distance (unit costs) of two int32 symbol sequences."""

def eed_scores(
    hyp: _I32,
    hyp_offsets: _I64,
    ref: _I32,
    ref_offsets: _I64,
    seg_refs: _I64,
    alpha: float = 2.0,
    rho: float = 0.3,
    deletion: float = 0.2,
    insertion: float = 1.0,
) -> _F64:
    """EED per segment, float64 (N,): the lowest over its references (NaN without references)."""
