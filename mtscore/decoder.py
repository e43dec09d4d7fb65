"""``mtscore.decoder``: metric calls for MT decoders: batched sentence scores, all-pairs MBR
matrices, MBR selection (pairwise or reference-aggregated utilities), n-best oracles and Moses
n-best files; token-id input, id mode and text mode (:mod:`mtscore.bindings.decoder.token_scores`,
:mod:`mtscore.engine.token_ids`); RL reward functions (:mod:`mtscore.bindings.decoder.rewards`):
the package :mod:`mtscore.bindings.decoder`. This module only re-exports them."""
from .bindings.decoder import (
    MBRResult,
    NBestEntry,
    NBestFormatError,
    NBestOracle,
    aggregate_chrf,
    decode_ids,
    expected_bleu,
    id_corpus_score,
    id_sentence_scores,
    lower_is_better,
    mbr,
    nbest_oracle,
    pairwise,
    parse_moses_nbest,
    read_moses_nbest,
    resolve_metric,
    reward_fn,
    sentence_scores,
    text_corpus_score,
    text_sentence_scores,
)
from .engine.token_ids import TokenIds, as_token_ids

__all__ = ["MBRResult", "NBestEntry", "NBestFormatError", "NBestOracle", "TokenIds",
           "aggregate_chrf", "as_token_ids", "decode_ids", "expected_bleu", "id_corpus_score",
           "id_sentence_scores", "lower_is_better", "mbr", "nbest_oracle", "pairwise",
           "parse_moses_nbest", "read_moses_nbest", "resolve_metric", "reward_fn",
           "sentence_scores", "text_corpus_score", "text_sentence_scores"]
