"""Text kernels: sacrebleu-identical tokenizers over Unicode code points (token ids from a
``_text_vocab.Vocab``, re-exported here).

Output is CSR: ``values`` int32 (N tokens in all), ``offsets`` int64 of length N + 1.
"""
from typing import Final

import numpy as np
import numpy.typing as npt

from mtscore.kernels._text_vocab import Vocab as Vocab

MODE_NONE: Final = 0
MODE_13A: Final = 1
MODE_INTL: Final = 2
MODE_ZH: Final = 3
MODE_CHAR: Final = 4
MODE_CHARS: Final = 5
MODE_CHARS_WS: Final = 6
MODE_CHRF_WORDS: Final = 7
UNSEEN_ID: Final = 0x7FFFFFFF

def set_intl_table(table: npt.NDArray[np.uint8]) -> None:
    """Install the uint8 (0x110000,) class table for MODE_INTL (bit 1 P, 2 S, 4 N)."""

def has_intl_table() -> bool:
    """Whether set_intl_table has been called in this process."""

def encode(
    texts: list[str],
    mode: int,
    vocab: Vocab | None = None,
    rstrip: bool = False,
    lookup: bool = False,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Tokenize N strings: (values int32 token ids or code points, offsets int64 (N + 1,)).
    ``lookup``: tokens ``vocab`` lacks get ``UNSEEN_ID``, ``vocab`` unchanged."""

def tokenize_strings(texts: list[str], mode: int, rstrip: bool = False) -> list[str]:
    """Debug/test helper: each string's tokens joined by one space (chars modes: joined)."""
