"""Tokenisation and input checks shared by the comparison analyses.

:func:`tokenize` splits lines with one of the BLEU tokenizers of :mod:`mtscore.engine.tokenizers`
(sacrebleu's ``13a`` by default), so the words counted by the analyses are the words BLEU counts.
:func:`check_corpus` validates K reference streams and S system streams of N segments each;
:func:`token_ids` turns T streams into one array of integer word ids (the counting analyses'
input).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...engine.tokenizers import Tokenizer
from ..errors import AnalysisInputError

__all__ = ["TokenIds", "Tokens", "check_corpus", "token_ids", "tokenize"]

#: one segment's tokens
Tokens = Sequence[str]


def tokenize(lines: Sequence[str], tokenizer: str = "13a") -> list[list[str]]:
    """``lines`` (N strings) -> N token lists, each line tokenised exactly as sacrebleu's BLEU
    tokenizer ``tokenizer`` does ("13a", "intl", "zh", "char", "none", ...) and split on spaces
    (an empty line gives ``[]``)."""
    if isinstance(lines, str):
        raise AnalysisInputError("tokenize: lines must be a sequence of strings, not one string")
    tok = Tokenizer(tokenizer)
    return [t.split() for t in tok.tokenize([str(x) for x in lines])]


def _check_stream(stream, what: str) -> int:
    if isinstance(stream, str) or not isinstance(stream, Sequence):
        raise AnalysisInputError(f"{what} must be a sequence of token lists (one per segment), got "
                                 f"{type(stream).__name__}")
    for i, seg in enumerate(stream):
        if isinstance(seg, str) or not isinstance(seg, Sequence):
            raise AnalysisInputError(f"{what}[{i}] must be a list of tokens (str), got "
                                     f"{type(seg).__name__}; tokenise lines with tokens.tokenize")
    return len(stream)


def check_corpus(refs: Sequence[Sequence[Tokens]], systems: Sequence[Sequence[Tokens]],
                 min_systems: int = 1) -> int:
    """Check K >= 1 reference streams and S >= ``min_systems`` system streams, all of the same
    N >= 1 segments of token lists; returns N. An empty stream, a length mismatch or a string
    where token lists belong is an :class:`AnalysisInputError` naming the stream
    (``refs[k]`` / ``systems[s]``)."""
    if isinstance(refs, str) or not isinstance(refs, Sequence) or len(refs) == 0:
        raise AnalysisInputError("refs must be a non-empty list of reference streams (K >= 1)")
    if isinstance(systems, str) or not isinstance(systems, Sequence) or len(systems) < min_systems:
        raise AnalysisInputError(f"systems must be a list of at least {min_systems} system "
                                 f"stream(s), got {0 if isinstance(systems, str) else len(systems)}")
    n = _check_stream(refs[0], "refs[0]")
    if n == 0:
        raise AnalysisInputError("refs[0] is empty (no segments): there is nothing to analyse")
    for k, r in enumerate(refs):
        m = _check_stream(r, f"refs[{k}]")
        if m != n:
            raise AnalysisInputError(f"refs[{k}] has {m} segments but refs[0] has {n}")
    for s, h in enumerate(systems):
        m = _check_stream(h, f"systems[{s}]")
        if m == 0:
            raise AnalysisInputError(f"systems[{s}] is empty (no segments); the references have {n}")
        if m != n:
            raise AnalysisInputError(f"systems[{s}] has {m} segments but the references have {n}")
    return n


@dataclass(frozen=True)
class TokenIds:
    """T streams of N segments as integer word ids, stream-major.

    ``words`` every token in order (stream 0's segments, then stream 1's, ...); ``vocab`` word ->
    id, ids numbered by first occurrence; ``ids`` int64 (len(words),) the id of each token;
    ``lens`` int64 (T * N,) tokens per segment, in the same order."""

    words: list[str]
    vocab: dict[str, int]
    ids: np.ndarray
    lens: np.ndarray


def token_ids(streams: Sequence[Sequence[Tokens]]) -> TokenIds:
    """One vocabulary over every segment of every stream and each token's id (see :class:`TokenIds`)."""
    words: list[str] = []
    lens: list[int] = []
    for stream in streams:
        for seg in stream:
            words.extend(seg)
            lens.append(len(seg))
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    ids = np.fromiter(map(vocab.__getitem__, words), dtype=np.int64, count=len(words))
    return TokenIds(words, vocab, ids, np.array(lens, dtype=np.int64))
