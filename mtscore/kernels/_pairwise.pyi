"""All-pairs chrF/chrF++ and sentence-BLEU matrices of a group of samples (MBR, n-best)."""
import numpy as np
import numpy.typing as npt

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]
_Stream = tuple[npt.ArrayLike, npt.ArrayLike]

def group_ngrams(streams: list[_Stream], orders: list[int]) -> tuple[_I32, _I32, _I64, _I64, int]:
    """K (values int32, offsets int64 (S+1,)) + K orders -> (ids int32 (E,), counts int32 (E,), offsets int64 (S*O+1,), totals int64 (S, O), n_ids)."""

def chrf_matrix(
    ids: _I32,
    counts: _I32,
    offsets: _I64,
    totals: _I64,
    n_ids: int,
    rows: _I64,
    cols: _I64,
    symmetric: bool,
    factor: float,
    eps_smoothing: bool,
    out: _F64,
    part: _I64,
) -> None:
    """Fill columns `part` of out float64 (len(rows), len(cols)) with chrF(rows[a] | cols[b]); GIL released."""

def bleu_matrix(
    ids: _I32,
    counts: _I32,
    offsets: _I64,
    totals: _I64,
    n_ids: int,
    rows: _I64,
    cols: _I64,
    symmetric: bool,
    smooth: int,
    smooth_value: float,
    effective_order: bool,
    neumaier: bool,
    out: _F64,
    part: _I64,
) -> None:
    """Fill columns `part` of out float64 (len(rows), len(cols)) with sentence BLEU(rows[a] | cols[b]); GIL released."""
