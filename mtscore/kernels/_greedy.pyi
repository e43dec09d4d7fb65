"""BERTScore greedy cosine matching (bert_score greedy_cos_idf semantics)."""
import numpy as np
import numpy.typing as npt

def greedy_prf(
    hemb: npt.NDArray[np.float32],
    hoff: npt.NDArray[np.int64],
    hw: npt.NDArray[np.float64],
    remb: npt.NDArray[np.float32],
    roff: npt.NDArray[np.int64],
    rw_: npt.NDArray[np.float64],
    hyp: npt.NDArray[np.int64],
    ref: npt.NDArray[np.int64],
    clamp_p: npt.NDArray[np.uint8],
    clamp_r: npt.NDArray[np.uint8],
    out: npt.NDArray[np.float64] | None = None,
    start: int = 0,
    stop: int | None = None,
) -> npt.NDArray[np.float64]:
    """float64 (n_pairs, 3) (P, R, F) for pairs (hyp[p], ref[p]); embeddings float32 (T, D), offsets int64, weights float64 (T,); with out/start/stop only pairs start:stop, written into out (float64 (n_pairs, 3)), which is returned."""
