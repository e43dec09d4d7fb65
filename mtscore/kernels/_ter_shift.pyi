"""TER kernels, part 2 of 3: sacrebleu 2.6.0's translation_edit_rate (shift search + banded edit
distance) on int32 token ids (CSR inputs)."""
import numpy as np
import numpy.typing as npt

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]

def ter_stats_range(
    hyp_ids: _I32,
    hyp_offsets: _I64,
    ref_ids: _I32,
    ref_offsets: _I64,
    seg_refs: _I64,
    out: _F64,
    start: int,
    stop: int,
) -> None:
    """Fill out[start:stop] (float64 (N, 2)) with [edits, avg_ref_len]; GIL released."""

def ter_stats_shared(
    hyp_ids: _I32,
    hyp_offsets: _I64,
    ref_ids: _I32,
    ref_offsets: _I64,
    seg_refs: _I64,
    out: _F64,
    order: _I64,
    counter: _I64,
    grain: int = 4,
    check: bool = True,
) -> None:
    """Work-sharing ter_stats_range: claim `grain` segments of order (int64) at a time from counter (int64 (1,))."""

def ter_pair_ids(hyp: _I32, ref: _I32) -> tuple[int, int]:
    """(edits, len(ref)) of one int32 token-id pair (sacrebleu translation_edit_rate)."""

def ter_matrix(
    hyp_ids: _I32, hyp_offsets: _I64, ref_ids: _I32, ref_offsets: _I64, edits: _I64, part: _I64
) -> None:
    """Fill columns `part` of edits int64 (n, m) with the TER edits of hypothesis a against reference b; GIL released."""
