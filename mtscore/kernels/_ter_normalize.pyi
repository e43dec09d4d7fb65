"""TER kernels, part 1 of 3: the Tercom normaliser (code points -> interned token ids)."""
import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]

@disjoint_base  # a cdef class: its C layout cannot be combined with another base
class TercomVocab:
    """Exact interning of token strings to dense int32 ids, in first-seen order."""

    def __len__(self) -> int: ...
    def token(self, i: int) -> str:
        """The string of token id ``i`` (IndexError outside [0, len))."""

def tercom_normalize_texts(
    texts: list[str],
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    rstrip: bool = False,
    lowercase: bool = False,
) -> list[str]:
    """sacrebleu's TercomTokenizer on each string (rstrip()/lower() first on request): tokens joined by one space."""

def tercom_tokenize(
    texts: list[str],
    vocab: TercomVocab,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    rstrip: bool = False,
    lowercase: bool = False,
) -> tuple[_I32, _I64]:
    """Tercom-normalise and intern N strings: (ids int32, offsets int64 (N + 1,))."""
