"""BERTScore's result, signature and truncation warning (what a scoring call hands back)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .metrics.base import Signature

__all__ = ["BERTScoreResult", "BERTScoreSignature", "BERTScoreTruncationWarning", "warn_truncated"]


class BERTScoreTruncationWarning(UserWarning):
    """Some segments were longer than the model's maximum length and were cut (as bert_score
    does); one per scoring call, with the counts."""


def _truncation_message(n_cands: int, n_refs: int, max_length: int) -> str:
    return (f"BERTScore: {n_cands} candidate(s) and {n_refs} reference(s) longer than the model's "
            f"{max_length} tokens were truncated (bert_score does the same); their scores ignore the "
            "text beyond that point; pass long_inputs=\"window\" to score them whole with a sliding "
            "window, or split long segments (e.g. into sentences)")


def warn_truncated(n_cands: int, n_refs: int, max_length: int, stacklevel: int = 4) -> None:
    """One :class:`BERTScoreTruncationWarning` for a scoring call, if anything was cut;
    ``stacklevel`` 4 points at the caller of ``BERTScore.score``."""
    if n_cands or n_refs:
        warnings.warn(_truncation_message(n_cands, n_refs, max_length), BERTScoreTruncationWarning,
                      stacklevel=stacklevel)


@dataclass
class BERTScoreResult:
    """Per-segment BERTScore. ``precision``/``recall``/``f1``: float64 ``[N]`` in bert_score's scale
    (0..1 before rescaling). Means are the corpus scores (NaN for N = 0).

    ``truncated_candidates`` / ``truncated_references``: how many candidate segments / reference
    entries (over all K streams) were longer than ``max_length`` tokens and cut before encoding;
    ``n_truncated`` is their sum. A nonzero count also raised one :class:`BERTScoreTruncationWarning`."""

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    signature: str = ""
    hash: str = field(default="", repr=False)
    truncated_candidates: int = 0
    truncated_references: int = 0
    max_length: int = 0

    @property
    def n_truncated(self) -> int:
        return self.truncated_candidates + self.truncated_references

    @property
    def P(self) -> np.ndarray:
        return self.precision

    @property
    def R(self) -> np.ndarray:
        return self.recall

    @property
    def F(self) -> np.ndarray:
        return self.f1

    @property
    def mean_precision(self) -> float:
        return float(np.mean(self.precision)) if len(self.precision) else float("nan")

    @property
    def mean_recall(self) -> float:
        return float(np.mean(self.recall)) if len(self.recall) else float("nan")

    @property
    def mean_f1(self) -> float:
        return float(np.mean(self.f1)) if len(self.f1) else float("nan")

    def as_dict(self) -> dict:
        return {"precision": self.mean_precision, "recall": self.mean_recall, "f1": self.mean_f1,
                "n": len(self.f1), "signature": self.signature}

    def __iter__(self):  # P, R, F = result
        return iter((self.precision, self.recall, self.f1))

    def __getitem__(self, i):  # result[2] is F, as in bert_score's (P, R, F) tuple
        return (self.precision, self.recall, self.f1)[i]


class BERTScoreSignature(Signature):
    """BERTScore's signature (its own keys: nrefs, model, layer, idf, rescale, long and prec
    when not the default, version); a :class:`Signature`, so ``update()`` works on it as the
    paired tests use it."""

    def __init__(self, info: dict):  # not Signature's sacrebleu keys
        self.info = info

    def format(self, short: bool = False) -> str:
        abbr = {"nrefs": "#", "model": "m", "layer": "L", "idf": "idf", "rescale": "rs", "long": "lg",
                "prec": "pr", "version": "v"}
        return "|".join(f"{abbr[k] if short else k}:{v}" for k, v in self.info.items())

    def __str__(self) -> str:
        return self.format()

    __repr__ = __str__
