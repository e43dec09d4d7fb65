"""One hypothesis against its references in one call (sentence BLEU, chrF/chrF++): tokenize,
count and score without numpy; see the module docstring of _sentence.pyx."""
from collections.abc import Sequence

def bleu_sentence(
    hyp: str,
    refs: Sequence[str],
    mode: int,
    rstrip: bool = True,
    max_order: int = 4,
    smooth: int = 3,
    smooth_value: float = 0.0,
    effective_order: bool = False,
    neumaier: bool = False,
) -> tuple[int, int, list[int], list[int], list[float], float, float] | None:
    """(sys_len, ref_len, counts, totals, precisions, bp, score) as sacrebleu's sentence BLEU;
    None when a reference is not a str."""

def chrf_sentence(
    hyp: str,
    refs: Sequence[str],
    char_order: int = 6,
    word_order: int = 0,
    factor: float = 4.0,
    eps_smoothing: bool = False,
    whitespace: bool = False,
) -> tuple[list[int], float] | None:
    """(stats of the best reference, score) as sacrebleu's sentence chrF; None when a
    reference is not a str."""
