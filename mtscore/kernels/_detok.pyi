"""Token ids -> text from a precomputed piece table (SentencePiece and Hugging Face decoders).

Per id two UTF-8 forms (where the id opens the text / elsewhere), flags and a byte value;
rows are assembled with the GIL released and decoded with ``errors="replace"``.
"""
from typing import Final

import numpy as np
import numpy.typing as npt

MODE_HF: Final = 0
MODE_SPM: Final = 1
FLAG_SKIP: Final = 1
FLAG_BYTE: Final = 2
FLAG_LITERAL: Final = 4
FLAG_LEADING_WS: Final = 8

def decode_rows(
    values: npt.NDArray[np.int32],
    offsets: npt.NDArray[np.int64],
    data: npt.NDArray[np.uint8],
    form_offsets: npt.NDArray[np.int64],
    flags: npt.NDArray[np.uint8],
    byte_values: npt.NDArray[np.uint8],
    mode: int,
    bos_strip: bool = False,
    bos_once: bool = False,
    strip_char: npt.NDArray[np.uint8] | None = None,
    strip_count: int = 0,
) -> list[str]:
    """CSR ids (values int32 (T,), offsets int64 (N + 1,)) -> N str with the piece table
    (data uint8, form_offsets int64 (2V + 1,), flags uint8 (V,), byte_values uint8 (V,)).
    ValueError for an id outside [0, V) or a malformed table / offsets."""
