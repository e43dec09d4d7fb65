"""Edit-distance kernels, part 1 of 3: text -> CSR int32 symbols (jiwer-compatible word
splitting, code points)."""
import numpy as np
import numpy.typing as npt

from mtscore.kernels._text_vocab import Vocab

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]

def jiwer_words(texts: list[str], vocab: Vocab) -> tuple[_I32, _I64]:
    """jiwer's default WER transform on N strings, words interned: (ids int32, offsets int64 (N + 1,))."""

def code_points(texts: list[str], strip: bool = False) -> tuple[_I32, _I64]:
    """Code points of N strings (str.strip()-ed first when strip): (values int32, offsets int64 (N + 1,))."""
