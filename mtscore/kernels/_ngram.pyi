"""N-gram sufficient statistics for BLEU and chrF/chrF++ on CSR int32 symbol arrays."""
import numpy as np
import numpy.typing as npt

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]
_U8 = npt.NDArray[np.uint8]
_Stream = tuple[npt.ArrayLike, npt.ArrayLike]

def bleu_prepare_refs(
    streams: list[_Stream], present: _U8, max_order: int
) -> tuple[_I64, _I64, _I32, _I32]:
    """K (values int32, offsets int64 (N+1,)) + present uint8 (K, N) -> (seg_offsets int64 (N+1,), keys int64 (E,), maxcounts int32 (E,), ref_lens int32 (N, K))."""

def bleu_stats(
    hyp_values: _I32,
    hyp_offsets: _I64,
    seg_offsets: _I64,
    keys: _I64,
    maxcounts: _I32,
    ref_lens: _I32,
    max_order: int,
    start: int = 0,
    stop: int = -1,
    seg_map: _I64 | None = None,
) -> _I64:
    """int64 (n, 2 + 2 * max_order): [hyp_len, closest_ref_len, correct_1..N, total_1..N] per hypothesis."""

def bleu_pair_stats(
    hyp_values: _I32,
    hyp_offsets: _I64,
    ref_values: _I32,
    ref_offsets: _I64,
    ref_groups: _I64,
    max_order: int,
) -> _I64:
    """int64 (N, 2 + 2 * max_order) of hypothesis i against references ref_groups[i]:ref_groups[i+1] (CSR), one fused pass."""

def bleu_sentence_scores(
    stats: _I64,
    max_order: int,
    smooth: int,
    smooth_value: float,
    effective_order: bool,
    neumaier: bool,
) -> _F64:
    """sacrebleu's compute_bleu of every row of stats int64 (N, 2 + 2 * max_order) -> float64 (N,)."""

def chrf_prepare_refs(
    char_streams: list[_Stream],
    word_streams: list[_Stream],
    present: _U8,
    char_order: int,
    word_order: int,
) -> tuple[_I64, _I64, _I32, _I32, _I32]:
    """-> (pair_offsets int64 (N*K+1,), keys int64 (E,), counts int32 (E,), char_lens int32 (N, K), word_lens int32 (N, K))."""

def chrf_f_scores(stats: _I64, factor: float, eps_smoothing: bool) -> _F64:
    """sacrebleu's chrF of every row of stats int64 (N, 3 * order) -> float64 (N,)."""

def chrf_stats(
    hyp_chars: _I32,
    hyp_char_offsets: _I64,
    hyp_words: _I32,
    hyp_word_offsets: _I64,
    pair_offsets: _I64,
    keys: _I64,
    counts: _I32,
    char_lens: _I32,
    word_lens: _I32,
    char_order: int,
    word_order: int,
    factor: float,
    eps_smoothing: bool,
    start: int = 0,
    stop: int = -1,
    seg_map: _I64 | None = None,
) -> tuple[_I64, _F64]:
    """(stats int64 (n, 3 * (char_order + word_order)), sentence scores float64 (n,)), best reference per segment."""

def order_by_row(rows: _I64, n_rows: int) -> _I64:
    """int64 (n,): positions ordered by rows[i] in [0, n_rows), ties in position order (stable argsort)."""
