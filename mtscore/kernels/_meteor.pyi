"""METEOR alignment kernel: staged greedy unigram matching (NLTK's order), chunks and score."""
import numpy as np
import numpy.typing as npt

def meteor_scores(
    hyp_keys: npt.NDArray[np.int32],
    hyp_offsets: npt.NDArray[np.int64],
    ref_keys: npt.NDArray[np.int32],
    ref_offsets: npt.NDArray[np.int64],
    ref_lo: npt.NDArray[np.int64],
    ref_hi: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64],
    syn_values: npt.NDArray[np.int32],
    syn_offsets: npt.NDArray[np.int64],
    syn_stage: int,
    n_keys: int,
    alpha: float,
    beta: float,
    gamma: float,
    out: npt.NDArray[np.float64],
    start: int = 0,
    stop: int = -1,
) -> None:
    """Fill out[start:stop] (float64 (N, 3)) with [score, matches, chunks] against each segment's best reference."""
