"""METEOR (Banerjee & Lavie 2005; Lavie & Agarwal 2007) with NLTK's alignment: equal to
``nltk.translate.meteor_score.meteor_score`` on the same tokens and stemmer (bit for bit; see
``tests/engine/test_meteor_nltk.py``).

Per segment and reference, unigrams are aligned by *modules* applied in turn to the words the
previous ones left unmatched: ``exact`` (equal lowercased words), ``stem`` (equal stems) and
``synonym`` (only with a WordNet-like object: a hypothesis word matches a reference word among
its WordNet lemma names). Within a module, hypothesis words are taken from right to left, each
matching the highest still-free reference position (NLTK's greedy order). Then, with ``m``
matches whose module weights sum to ``w`` and ``chunks`` runs of matches adjacent in both
strings::

    P = w / |hyp|, R = w / |ref|, Fmean = P R / (alpha P + (1 - alpha) R)
    METEOR = (1 - gamma (chunks / m) ** beta) Fmean          (0 without a match)

defaults ``alpha`` 0.9, ``beta`` 3, ``gamma`` 0.5 and unit weights (NLTK's). Several
references: the best sentence score over them (NLTK). The corpus score is the mean of the
sentence scores (summed in segment order, as ``sum(scores) / len(scores)``); ``score`` is 100 x
that mean, ``meteor`` the 0..1 mean.

Words: the text is tokenized by a sacrebleu tokenizer (``tokenize``, default ``13a``, so
punctuation is split off; ``none`` is ``str.split()``), each token lowercased with
``str.lower`` (NLTK's ``preprocess``; ``lowercase=False`` keeps case), stemmed by the Snowball
stemmer of ``language`` from PyStemmer (the ``meteor`` extra) or any ``stemmer``
callable ``str -> str``. NLTK's own default is its ``PorterStemmer``; pass
``stemmer=nltk.stem.PorterStemmer().stem`` to reproduce NLTK's numbers.

Synonyms (``wordnet=``, e.g. ``nltk.corpus.wordnet``): NLTK looks up the synonyms of the
hypothesis word's *stem* and compares them with the reference words' *stems* (its synonym stage
receives the stem stage's leftovers); ``synonym_source="stem"`` (default) reproduces that,
``"word"`` looks up the lowercased word and compares with reference words, as the original
METEOR does.

Differences from the original Java METEOR (1.0-1.5), none of them followed here, as NLTK does
not follow them either:

* alignment: Java searches (beam) the alignment with the most matches, then the fewest chunks,
  then the smallest distance, over all modules at once; here (NLTK) each module is greedy and
  fixed before the next one;
* parameters: Java 1.3+ uses per-language tuned values (English: alpha 0.85, beta 0.20, gamma
  0.60, delta 0.75, module weights 1.0 / 0.6 / 0.8 / 0.6) and weights content and function
  words differently (``delta``); here alpha 0.9, beta 3, gamma 0.5 (Banerjee & Lavie 2005),
  unit module weights (``weights=`` sets them), no function-word weighting;
* penalty: Java sets the fragmentation to 0 when hypothesis and reference match entirely in
  one chunk (identical sentences score 1); here they score ``1 - gamma / m ** beta``;
* no paraphrase module; Java's synonym module looks up the surface words (see above);
* text: Java tokenizes and normalises with its own rules (``-norm``), here a sacrebleu
  tokenizer; Java is case-sensitive unless ``-lower``/``-norm``;
* corpus score: Java sums the statistics (matches, lengths, chunks) over the corpus and scores
  once; here the mean of sentence scores, as NLTK users compute it.

Prepared references belong to the METEOR object that prepared them (its word keys).

Statistics are ``[sentence score, 1]`` per segment (``(N, 2)`` float64; ``[0, 0]`` for a
segment without a reference under ``missing_refs="skip"``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from ...kernels import _meteor
from ..parallel import chunk_bounds, get_pool
from ..tokenizers import Tokenizer
from .base import OwnSignature, Score
from .mean_score import MeanSentenceMetric
from .meteor_lexicon import MeteorLexicon, UserStems, snowball_stemmer
from .symbols import PreparedSymbols, flatten_refs

__all__ = ["METEOR", "MODULES", "METEORScore", "METEORSignature"]

#: the matching modules, in the order they act
MODULES = ("exact", "stem", "synonym")

#: segments per thread task when ``workers`` > 1
_MIN_PER_THREAD = 256


class METEORSignature(OwnSignature):
    """e.g. ``nrefs:1|tok:13a|case:lc|mod:exact+stem|stem:snowball-english|alpha:0.9|beta:3.0|
    gamma:0.5|w:1.0+1.0|version:mtscore-0.1.0``."""

    def __init__(self, args: dict):
        super().__init__(args)
        self._abbr.update({"tok": "t", "case": "c", "mod": "m", "stem": "st", "alpha": "a",
                           "beta": "b", "gamma": "g", "w": "w"})
        self.info.update({
            "tok": args["tokenize"],
            "case": "lc" if args["lowercase"] else "mixed",
            "mod": "+".join(args["_stage_names"]),
            "stem": args["_stemmer_name"],
            "alpha": args["alpha"], "beta": args["beta"], "gamma": args["gamma"],
            "w": "+".join(str(w) for w in args["_stage_weights"]),
        })


class METEORScore(Score):
    """``score`` = 100 x ``meteor`` (the mean sentence METEOR, 0..1); ``count``: segments averaged."""

    def __init__(self, meteor: float, count: float):
        super().__init__("METEOR", 100 * meteor)
        self.meteor = meteor
        self.count = int(count)


def _number(name: str, v: Any, lo: float, hi: float) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not (lo <= v <= hi):
        raise ValueError(f"METEOR: {name} must be a number in [{lo}, {hi}], got {v!r}")
    return float(v)


class METEOR(MeanSentenceMetric):
    """METEOR with NLTK's alignment (see the module docstring), compiled.

    :param alpha: precision/recall weight in [0, 1] (0.9).
    :param beta: fragmentation penalty exponent >= 0 (3).
    :param gamma: fragmentation penalty weight in [0, 1] (0.5).
    :param modules: which of ``"exact"``, ``"stem"``, ``"synonym"`` act (exact first; the
        synonym module acts only with ``wordnet``).
    :param weights: weight of a match of each module in P and R, ``(exact, stem, synonym)``,
        each in [0, 1] (unit weights: NLTK).
    :param language: Snowball stemmer (code such as ``"en"``, ``"de"``, or algorithm name).
    :param stemmer: a callable ``str -> str`` used instead of Snowball (e.g. NLTK's
        ``PorterStemmer().stem``); called once per distinct word; must be deterministic.
    :param wordnet: a WordNet-like object (``nltk.corpus.wordnet``) for the synonym module.
    :param synonym_source: ``"stem"`` (NLTK) or ``"word"`` (the original METEOR).
    :param lowercase: ``str.lower`` each token (NLTK's default preprocess).
    :param tokenize: a sacrebleu tokenizer name (``13a``; ``none`` = ``str.split()``).
    :param workers: threads (results do not depend on them).
    """

    _SIGNATURE_TYPE = METEORSignature
    _SCORE_TYPE = METEORScore
    _NAME = "METEOR"
    cheap_references = True
    dedupes_outputs = True

    def __init__(self, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5,
                 modules: Sequence[str] = MODULES, weights: Sequence[float] = (1.0, 1.0, 1.0),
                 language: str = "en", stemmer: Callable[[str], str] | None = None,
                 wordnet: Any = None, synonym_source: str = "stem", lowercase: bool = True,
                 tokenize: str = "13a", references: Sequence[Sequence[str]] | None = None,
                 workers: int = 1, missing_refs: str = "error"):
        super().__init__(missing_refs)
        self.alpha = _number("alpha", alpha, 0.0, 1.0)
        self.beta = _number("beta", beta, 0.0, math.inf)
        self.gamma = _number("gamma", gamma, 0.0, 1.0)
        if not isinstance(modules, (list, tuple)) or any(m not in MODULES for m in modules) \
                or "exact" not in modules:
            raise ValueError(f"METEOR: modules must be a sequence of {', '.join(MODULES)} including "
                             f"'exact', got {modules!r}")
        if not isinstance(weights, (list, tuple)) or len(weights) != len(MODULES):
            raise ValueError(f"METEOR: weights must be 3 numbers (exact, stem, synonym), got {weights!r}")
        all_weights = [_number("weights", w, 0.0, 1.0) for w in weights]
        if synonym_source not in ("stem", "word"):
            raise ValueError(f"METEOR: synonym_source must be 'stem' or 'word', got {synonym_source!r}")
        if wordnet is not None and not callable(getattr(wordnet, "synsets", None)):
            raise TypeError("METEOR: wordnet must be a WordNet-like object with a synsets(word) method "
                            f"(such as nltk.corpus.wordnet), got {type(wordnet).__name__}")
        stages = [m for m in MODULES if m in modules and (m != "synonym" or wordnet is not None)]
        if "synonym" in stages and synonym_source == "stem" and "stem" not in stages:
            raise ValueError("METEOR: synonym_source='stem' looks up the synonyms of stems (NLTK) and "
                             "needs the stem module; add 'stem' to modules or use synonym_source='word'")
        self._stage_names = stages
        self._stage_weights = [all_weights[MODULES.index(m)] for m in stages]
        self.synonym_source = synonym_source
        self.lowercase = bool(lowercase)
        self.language = language
        self.wordnet = wordnet
        self._tokenizer = Tokenizer(tokenize)
        self.tokenize = self._tokenizer.signature()
        stem_many = None
        self._stemmer_name = "none"
        if "stem" in stages:
            if stemmer is None:
                stem_many, self._stemmer_name = snowball_stemmer(language)
            else:
                stem_many, self._stemmer_name = UserStems(stemmer), "user"
        self._lexicon = MeteorLexicon(self._tokenizer.encode, self.lowercase, stem_many, wordnet)
        self.workers = workers
        if references is not None:
            self._ref_cache = self.prepare(references)

    # ---- keys per stage ----------------------------------------------------------------------
    def _stage_keys(self, texts: list[str], hypotheses: bool) -> tuple[np.ndarray, np.ndarray, tuple | None]:
        """``(keys int32 (T, S), offsets int64 (N + 1), synonym table (values, offsets) or
        None)`` of N texts (the table only for hypotheses, with the synonym module)."""
        word, stem, offsets = self._lexicon.encode(texts)
        columns: list[np.ndarray] = []
        table: tuple | None = None
        for name in self._stage_names:
            if name == "exact":
                columns.append(word)
            elif name == "stem":
                columns.append(stem)
            else:
                source = stem if self.synonym_source == "stem" else word
                if hypotheses:
                    row, values, syn_offsets = self._lexicon.synonym_table(source)
                    columns.append(row)
                    table = (values, syn_offsets)
                else:
                    columns.append(source)
        keys = np.ascontiguousarray(np.stack(columns, axis=1), dtype=np.int32)
        return keys, offsets, table

    def words(self, text: str) -> list[str]:
        """The keys of one text's tokens (lowercased words), for inspection and tests."""
        word, _, _ = self._lexicon.encode([text])
        return [self._lexicon.keys.token(int(k)) for k in word]

    # ---- Metric hooks ------------------------------------------------------------------------
    def prepare(self, refs, rows=None) -> PreparedSymbols:
        streams = self._coerce_refs(refs)
        flat, seg_refs, num_refs = flatten_refs(streams)
        self.num_refs = num_refs
        keys, offsets, _ = self._stage_keys(flat, hypotheses=False)
        return PreparedSymbols(len(streams[0]), keys, offsets, seg_refs, num_refs)

    def alignment_stats(self, hyps: list[str], prepared: PreparedSymbols) -> np.ndarray:
        """``(N, 3)`` float64 ``[sentence METEOR, matches, chunks]`` against each segment's best
        reference (``[NaN, 0, 0]`` without a reference)."""
        keys, offsets, table = self._stage_keys(hyps, hypotheses=True)
        values, syn_offsets = table if table is not None else (np.zeros(0, np.int32), np.zeros(1, np.int64))
        syn_stage = self._stage_names.index("synonym") if table is not None else -1
        seg = prepared.seg_refs
        out = np.zeros((len(hyps), 3), dtype=np.float64)
        args = (keys, offsets, prepared.ref_ids, prepared.ref_offsets,
                np.ascontiguousarray(seg[:-1]), np.ascontiguousarray(seg[1:]),
                np.asarray(self._stage_weights, dtype=np.float64), values, syn_offsets, syn_stage,
                self._lexicon.n_keys, self.alpha, self.beta, self.gamma, out)
        parts = min(max(1, int(self.workers)), len(hyps) // _MIN_PER_THREAD)
        bounds = chunk_bounds(len(hyps), parts)
        futures = [get_pool(parts - 1).submit(_meteor.meteor_scores, *args, a, z) for a, z in bounds[1:]]
        try:
            _meteor.meteor_scores(*args, *bounds[0])
        finally:
            for f in futures:
                f.result()
        return out

    def sentence_values(self, hyps: list[str], prepared: PreparedSymbols) -> np.ndarray:
        """float64 ``(N,)`` sentence METEOR (0..1; the best over references), NaN without one."""
        return self.alignment_stats(hyps, prepared)[:, 0]
