"""``mtscore.decoder``: metric calls for MT decoders (batched sentence scores, all-pairs MBR
matrices, MBR selection, n-best oracles and Moses n-best files). See
:mod:`mtscore.bindings.decoder` for the documentation; this module only re-exports it."""
from .bindings.decoder import (  # noqa: F401
    MBRResult,
    NBestEntry,
    NBestFormatError,
    NBestOracle,
    aggregate_chrf,
    expected_bleu,
    lower_is_better,
    mbr,
    nbest_oracle,
    pairwise,
    parse_moses_nbest,
    read_moses_nbest,
    resolve_metric,
    sentence_scores,
)

__all__ = ["MBRResult", "NBestEntry", "NBestFormatError", "NBestOracle", "aggregate_chrf",
           "expected_bleu", "lower_is_better", "mbr",
           "nbest_oracle", "pairwise", "parse_moses_nbest", "read_moses_nbest", "resolve_metric",
           "sentence_scores"]
