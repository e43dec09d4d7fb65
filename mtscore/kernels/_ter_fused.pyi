"""TER kernels, part 3 of 3: from strings to TER statistics in one call (normaliser and shift
search fused)."""
from collections.abc import Sequence

def ter_sentence(
    hyp: str,
    refs: Sequence[str],
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
) -> tuple[int, float] | None:
    """(edits, avg_ref_len) of one rstripped/lowercased hypothesis against its references;
    None when a reference is not a str."""

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
