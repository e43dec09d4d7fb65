"""EED, the extended edit distance of Stanchev, Wang & Ney (WMT 2019), equal to torchmetrics'
``extended_edit_distance`` (the maintained implementation; its float64 sentence scores bit for
bit, see ``mtscore.kernels._edit_distance.eed_scores``).

A character-level CDER alignment of the hypothesis against the reference with deletion
(``deletion``, 0.2), insertion / substitution (``insertion``, 1.0) costs, a long jump (``alpha``,
2.0) allowed after every reference blank, and a coverage penalty (``rho``, 0.3) for characters
visited more than once; the sentence score ``min(1, (errors + coverage) / (|ref| + coverage))``,
the lowest over a segment's references; the corpus score the mean of the sentence scores.

Text is preprocessed first as torchmetrics (after the authors' ``util.py``) does: ``en`` puts a
space before ``. ! ? ,``, collapses whitespace, rejoins decimal numbers and a few
abbreviations, and pads with a space on each side; ``ja`` takes NFKC. ``score`` is 100 x the
mean; ``eed`` the 0..1 mean.

Known differences of the authors' own C++ ``EED.cpp`` (not followed, as torchmetrics does not):
float32 arithmetic, ``rho`` 0.2 and deletion 0.3 swapped, and coverage counted as the visits of
positions visited more than once (over ``|ref| + coverage`` without ``rho``).

Statistics are ``[sentence score, 1]`` per segment (``(N, 2)`` float64; ``[0, 0]`` for a segment
without a reference under ``missing_refs="skip"``), so the corpus mean is a sum like the others.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from ...kernels import _edit_csr, _edit_distance
from ..parallel import chunk_bounds, run_parallel
from .base import OwnSignature, Score
from .mean_score import MeanSentenceMetric
from .symbols import PreparedSymbols, flatten_refs

__all__ = ["EED", "EEDScore", "EEDSignature", "preprocess_en", "preprocess_ja"]

_SPACES = re.compile(r"\s+")
_DECIMAL = re.compile(r"(\d) ([.,]) (\d)")
# "." is any character here, as in the original rules (so "Mrs Smith" -> "Mrs.mith")
_TITLES = re.compile(r"(Dr|Jr|Prof|Rev|Gen|Mr|Mt|Mrs|Ms) .")


def preprocess_en(sentence: str) -> str:
    """EED's English preprocessing (the rules of torchmetrics' ``_preprocess_en``)."""
    s = sentence.rstrip()
    for p in ".!?,":
        s = s.replace(p, " " + p)
    s = _SPACES.sub(" ", s)
    s = _DECIMAL.sub(r"\1\2\3", s)
    s = _TITLES.sub(r"\1.", s)
    for spaced, joined in (("e . g .", "e.g."), ("i . e .", "i.e."), ("U . S .", "U.S.")):
        s = s.replace(spaced, joined)
    return " " + s + " "


def preprocess_ja(sentence: str) -> str:
    """EED's Japanese preprocessing: ``rstrip`` and NFKC (no padding)."""
    return unicodedata.normalize("NFKC", sentence.rstrip())


_PREPROCESS = {"en": preprocess_en, "ja": preprocess_ja}

#: segments per thread task when ``workers`` > 1 (a segment takes ~20-50 us)
_MIN_PER_THREAD = 64


class EEDSignature(OwnSignature):
    """e.g. ``nrefs:1|lang:en|alpha:2.0|rho:0.3|del:0.2|ins:1.0|version:mtscore-0.1.0``."""

    def __init__(self, args: dict):
        super().__init__(args)
        self._abbr.update({"lang": "l", "alpha": "a", "rho": "r", "deletion": "d", "insertion": "i"})
        self.info.update({"lang": args["language"], "alpha": args["alpha"], "rho": args["rho"],
                          "deletion": args["deletion"], "insertion": args["insertion"]})


class EEDScore(Score):
    """``score`` = 100 x ``eed`` (the mean sentence EED, 0..1); ``count``: segments averaged."""

    def __init__(self, eed: float, count: float):
        super().__init__("EED", 100 * eed)
        self.eed = eed
        self.count = int(count)


class EED(MeanSentenceMetric):
    """Extended edit distance (torchmetrics' ``ExtendedEditDistance``), compiled.

    :param language: ``"en"`` or ``"ja"`` preprocessing.
    :param alpha, rho, deletion, insertion: jump, coverage, deletion and insertion costs
        (non-negative floats; torchmetrics' defaults).
    :param workers: threads (results do not depend on them).
    """

    _SIGNATURE_TYPE = EEDSignature
    _SCORE_TYPE = EEDScore
    _NAME = "EED"
    cheap_references = True
    dedupes_outputs = True
    lower_is_better = True

    def __init__(self, language: str = "en", alpha: float = 2.0, rho: float = 0.3,
                 deletion: float = 0.2, insertion: float = 1.0,
                 references: Sequence[Sequence[str]] | None = None, workers: int = 1,
                 missing_refs: str = "error"):
        super().__init__(missing_refs)
        if language not in _PREPROCESS:
            raise ValueError(f"EED: language must be 'en' or 'ja', got {language!r}")
        for name, v in (("alpha", alpha), ("rho", rho), ("deletion", deletion), ("insertion", insertion)):
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 0:
                raise ValueError(f"EED: {name} must be a non-negative number, got {v!r}")
        self.language = language
        self.alpha, self.rho = float(alpha), float(rho)
        self.deletion, self.insertion = float(deletion), float(insertion)
        self.workers = workers
        if references is not None:
            self._ref_cache = self.prepare(references)

    def tokenize(self, texts: list[str]):
        """Preprocessed code points: ``(values int32, offsets int64 (N + 1))``."""
        pre = _PREPROCESS[self.language]
        return _edit_csr.code_points([pre(t) for t in texts], False)

    def prepare(self, refs, rows=None) -> PreparedSymbols:
        streams = self._coerce_refs(refs)
        flat, seg_refs, num_refs = flatten_refs(streams)
        self.num_refs = num_refs
        ids, offsets = self.tokenize(flat)
        return PreparedSymbols(len(streams[0]), ids, offsets, seg_refs, num_refs)

    def sentence_values(self, hyps: list[str], prepared: PreparedSymbols) -> np.ndarray:
        """float64 ``(N,)`` sentence EED (0..1; the lowest over references), NaN without one."""
        ids, offsets = self.tokenize(hyps)
        return self._scores(ids, offsets, prepared)

    def _scores(self, ids: np.ndarray, offsets: np.ndarray, prepared: PreparedSymbols) -> np.ndarray:
        params = (self.alpha, self.rho, self.deletion, self.insertion)
        n = len(offsets) - 1
        parts = min(max(1, int(self.workers)), n // _MIN_PER_THREAD)
        if parts <= 1:
            return _edit_distance.eed_scores(ids, offsets, prepared.ref_ids, prepared.ref_offsets,
                                    prepared.seg_refs, *params)

        def part(bounds):
            a, z = bounds
            p = prepared.slice(a, z)
            lo = int(offsets[a])
            return _edit_distance.eed_scores(ids[lo:int(offsets[z])], offsets[a:z + 1] - lo, p.ref_ids,
                                    p.ref_offsets, p.seg_refs, *params)

        return np.concatenate(run_parallel(part, chunk_bounds(n, parts), parts))
