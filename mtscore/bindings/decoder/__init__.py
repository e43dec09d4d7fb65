"""The decoder API (``mtscore.decoder``): metric calls from inside an MT decoder, in batches.
Its parts, one job per module:

* :mod:`.sentences` - :func:`sentence_scores`: one score per (hypothesis, its references) pair,
  float64 (n,);
* :mod:`.pairwise` - :func:`pairwise`: all-pairs matrices in the spirit of
  ``rapidfuzz.process.cdist``, one group or many (MBR, consensus);
* :mod:`.mbr` - :func:`mbr`: minimum-Bayes-risk selection from a pairwise matrix, uniform or
  weighted, and the reference-aggregated utilities :func:`aggregate_chrf` and
  :func:`expected_bleu`;
* :mod:`.nbest` and :mod:`.moses` - :func:`nbest_oracle` and :func:`read_moses_nbest`: oracle
  selection / reranking of n-best lists, Moses n-best files;
* :mod:`.token_scores` - scores of token-id batches (id mode and text mode);
* :mod:`.rewards` - :func:`reward_fn`, RL reward functions;
* :mod:`.arguments` - the metric from a name or an object (:func:`resolve_metric`), its
  direction, the checks of the arguments every entry point shares.

Every number equals the metric's ``sentence_score(hyp, refs).score`` bit for bit (sacrebleu
2.6.0's), because each goes through the metric contract: :func:`sentence_scores` through
``prepare`` + ``stats_and_scores`` (the batch path), :func:`pairwise` through
``Metric.pairwise_scores`` (all-pairs kernels for BLEU, chrF/chrF++ and TER; the batch path for
other metrics). ``metric`` is a name (``"bleu"``, ``"chrf"``, ``"chrf++"``, ``"ter"``) with
constructor ``**options``, or a metric object (then ``options`` must be empty).

TER is an error rate (lower is better): :func:`mbr` and :func:`nbest_oracle` pick the lowest
expected / actual TER for it, the highest score for every other metric.
"""
from .arguments import lower_is_better, resolve_metric
from .mbr import MBRResult, aggregate_chrf, expected_bleu, mbr
from .moses import NBestEntry, NBestFormatError, parse_moses_nbest, read_moses_nbest
from .nbest import NBestOracle, nbest_oracle
from .pairwise import pairwise
from .rewards import reward_fn
from .sentences import sentence_scores
from .token_scores import (
    decode_ids,
    id_corpus_score,
    id_sentence_scores,
    text_corpus_score,
    text_sentence_scores,
)

__all__ = ["MBRResult", "NBestEntry", "NBestFormatError", "NBestOracle", "aggregate_chrf",
           "decode_ids", "expected_bleu", "id_corpus_score", "id_sentence_scores",
           "lower_is_better", "mbr", "nbest_oracle", "pairwise", "parse_moses_nbest",
           "read_moses_nbest", "resolve_metric", "reward_fn", "sentence_scores",
           "text_corpus_score", "text_sentence_scores"]
