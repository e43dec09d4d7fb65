"""TER kernels: the Tercom normaliser (code points -> interned token ids) and sacrebleu 2.6.0's
translation_edit_rate on int32 token ids (CSR inputs)."""
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]

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

def ter_sentence(
    hyp: str,
    refs: Sequence[str],
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
) -> tuple[int, float] | None:
    """(edits, avg_ref_len) of one rstripped/lowercased hypothesis against its references;
    None when a reference is not a str."""

def ter_matrix(
    hyp_ids: _I32, hyp_offsets: _I64, ref_ids: _I32, ref_offsets: _I64, edits: _I64, part: _I64
) -> None:
    """Fill columns `part` of edits int64 (n, m) with the TER edits of hypothesis a against reference b; GIL released."""

def ter_corpus_plain(
    hyps: list[str],
    refs: list[str | None],
    no_punct: bool = False,
    asian_support: bool = False,
    lowercase: bool = True,
) -> tuple[int, float] | None:
    """(sum of edits, sum of reference lengths) of hyps[i] against refs[i] (one reference each,
    normalized=False), each pair interned in a vocabulary of its own; pairs whose reference
    has < 25 tokens and whose distance already equals the bag-of-words bound skip the shift
    search (bit-parallel distance); None when an element is not a str."""
