"""Edit-distance kernels, part 2 of 3: bit-parallel Levenshtein (WER/CER), position-independent
errors (PER) and EED on CSR int32 symbols."""
from typing import Final

import numpy as np
import numpy.typing as npt

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]

MULTI_CLOSEST: Final = 0
MULTI_AVERAGE: Final = 1
MULTI_BEST: Final = 2
MEASURE_LEVENSHTEIN: Final = 0
MEASURE_PER: Final = 1

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
