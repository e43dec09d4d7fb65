"""The segments where two systems differ most by a sentence metric, with the token-level diff of
their outputs (for highlighting).

Sentence scores come from the registry's sentence-level form of a metric
(``make_sentence_metric``: sentence BLEU with effective order, chrF, ...), as
``scores_from_stats(corpus_stats(...))``, which equals ``sentence_score`` segment by segment.
The diff is :class:`difflib.SequenceMatcher` (no junk heuristic) over the two token lists.
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...engine.metrics.registry import make_sentence_metric
from ..errors import AnalysisInputError
from .tokens import Tokens, tokenize

__all__ = ["Opcode", "SegmentDifference", "largest_differences", "segment_differences",
           "sentence_scores", "token_diff"]

#: difflib opcode: (tag, a_start, a_end, b_start, b_end), tag in equal / replace / delete / insert
Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class SegmentDifference:
    """One segment where systems A and B differ: its 0-based ``index``, both sentence scores,
    ``delta`` = score_b - score_a, both outputs' tokens and the diff ``opcodes`` turning
    ``tokens_a`` into ``tokens_b``."""

    index: int
    score_a: float
    score_b: float
    delta: float
    tokens_a: tuple[str, ...]
    tokens_b: tuple[str, ...]
    opcodes: tuple[Opcode, ...]


def sentence_scores(metric_name: str, refs: Sequence[Sequence[str]], hyps: Sequence[str],
                    **metric_options) -> np.ndarray:
    """float64 (N,): the sentence score of each of N hypotheses against K reference streams
    ``refs`` by the registered metric ``metric_name`` in its sentence-level configuration."""
    return _scores(make_sentence_metric(metric_name, **metric_options), refs, hyps)


def _scores(m, refs: Sequence[Sequence[str]], hyps: Sequence[str]) -> np.ndarray:
    if len(hyps) == 0:
        raise AnalysisInputError("hyps is empty (no segments)")
    for k, r in enumerate(refs):
        if len(r) != len(hyps):
            raise AnalysisInputError(f"refs[{k}] has {len(r)} segments but hyps has {len(hyps)}")
    return np.asarray(m.scores_from_stats(m.corpus_stats(list(hyps), [list(r) for r in refs])),
                      dtype=np.float64)


def token_diff(a: Tokens, b: Tokens) -> tuple[Opcode, ...]:
    """difflib opcodes turning token list ``a`` into ``b`` (``autojunk=False``)."""
    sm = difflib.SequenceMatcher(None, list(a), list(b), autojunk=False)
    return tuple((t, i1, i2, j1, j2) for t, i1, i2, j1, j2 in sm.get_opcodes())


def largest_differences(scores_a: np.ndarray, scores_b: np.ndarray, top_k: int = 10
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``(a_better, b_better)``: int64 indices of the at most ``top_k`` segments where
    ``scores_a - scores_b`` is largest and positive, and where ``scores_b - scores_a`` is, each
    by the difference descending, ties by index (segments with equal scores are in neither)."""
    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise AnalysisInputError(f"scores_a and scores_b must be 1-D of one length, got shapes {a.shape} "
                                 f"and {b.shape}")
    if not (isinstance(top_k, int) and top_k >= 1):
        raise AnalysisInputError(f"top_k must be an integer >= 1, got {top_k!r}")
    d = a - b
    idx = np.arange(len(d))

    def pick(x: np.ndarray) -> np.ndarray:
        ok = x > 0  # NaN compares false: a segment without a score is never picked
        order = np.lexsort((idx[ok], -x[ok]))
        return idx[ok][order][:top_k].astype(np.int64)

    return pick(d), pick(-d)


def segment_differences(metric_name: str, refs: Sequence[Sequence[str]], sys_a: Sequence[str],
                        sys_b: Sequence[str], top_k: int = 10, tokenizer: str = "none",
                        **metric_options) -> tuple[list[SegmentDifference], list[SegmentDifference]]:
    """``(a_better, b_better)``: the ``top_k`` segments where system A's sentence score by
    ``metric_name`` is most better than B's (higher, or lower for an error rate such as TER),
    and vice versa, with the diff of the outputs tokenised by ``tokenizer`` ("none": whitespace,
    so the tokens are the displayed words)."""
    if len(sys_a) == 0 or len(sys_b) == 0:
        raise AnalysisInputError(f"sys_{'a' if len(sys_a) == 0 else 'b'} is empty (no segments)")
    if len(sys_a) != len(sys_b):
        raise AnalysisInputError(f"sys_a has {len(sys_a)} segments but sys_b has {len(sys_b)}")
    m = make_sentence_metric(metric_name, **metric_options)
    sa, sb = _scores(m, refs, sys_a), _scores(m, refs, sys_b)
    a_better, b_better = largest_differences(sa, sb, top_k)
    if m.lower_is_better:
        a_better, b_better = b_better, a_better

    def rows(ix: np.ndarray) -> list[SegmentDifference]:
        out = []
        for i in ix.tolist():
            ta, tb = tokenize([sys_a[i], sys_b[i]], tokenizer)
            out.append(SegmentDifference(i, float(sa[i]), float(sb[i]), float(sb[i] - sa[i]),
                                         tuple(ta), tuple(tb), token_diff(ta, tb)))
        return out

    return rows(a_better), rows(b_better)
