"""Plain-Python twin of ``mtscore.kernels._ter_fused`` (used by tests only): the kernel's
functions with the same names and signatures (``ter_sentence``, ``ter_corpus_plain``), the
Tercom steps of the ``ter_normalize`` twin followed by the shift search of the ``ter_shift``
twin.
"""
from __future__ import annotations

from collections.abc import Sequence

from .ter_normalize import tercom_steps
from .ter_shift import segment_stats, translation_edit_rate


def ter_sentence(hyp: str, refs: Sequence[str], normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False) -> tuple[int, float] | None:
    """``(edits, avg_ref_len)`` of one hypothesis against its references (all already rstripped
    and lowercased as the metric needs); references normalised twice under ``normalized``
    (sacrebleu's reference caching); None when a reference is not a str."""
    if not isinstance(hyp, str):
        raise TypeError(f"ter_sentence: hyp is {type(hyp).__name__}, expected str")
    if len(refs) == 0:
        raise ValueError("ter_sentence: no references")
    if type(hyp) is not str or any(type(r) is not str for r in refs):
        return None
    steps = (normalized, no_punct, asian_support)
    h = tercom_steps(hyp, *steps).split()
    rs = [tercom_steps(tercom_steps(r, *steps), *steps) if normalized else tercom_steps(r, *steps)
          for r in refs]
    best, avg = segment_stats(h, [r.split() for r in rs])
    return int(best), float(avg)


def ter_corpus_plain(hyps: list[str], refs: list[str | None], no_punct: bool = False,
                     asian_support: bool = False,
                     lowercase: bool = True) -> tuple[int, float] | None:
    """Twin of ``_ter_fused.ter_corpus_plain``: summed edits and reference lengths of ``hyps[i]``
    against ``refs[i]`` (``normalized=False``); None when an element is not a str."""
    if len(refs) != len(hyps):
        raise ValueError(f"ter_corpus_plain: {len(hyps)} hypotheses but {len(refs)} references")
    edits, ref_len = 0, 0.0
    for h, r in zip(hyps, refs):
        if type(h) is not str or type(r) is not str:
            return None
        hw, rw = ([tercom_steps(s.rstrip().lower() if lowercase else s.rstrip(), False, no_punct,
                                 asian_support).split() for s in (h, r)])
        e, _ = translation_edit_rate(hw, rw)
        edits += e
        ref_len += float(len(rw))
    return edits, ref_len
