"""``mtscore.bertscore``: BERTScore as bert_score users know it: ``score(cands, refs, lang="en")``
with bert_score's arguments, models, layers and baselines (:mod:`mtscore.bindings.api.bertscore`),
the :class:`BERTScore` metric (:mod:`mtscore.engine.bertscore`) and rescale-baseline files. This
module only re-exports them."""
from .bindings.api.bertscore import BERT_SCORE_VERSION, bert_score_hash, score
from .engine.bertscore import (
    INVARIANCE_TOL,
    BERTScore,
    BERTScoreResult,
    BERTScoreTruncationWarning,
    read_baseline,
    write_baseline,
)
from .engine.bertscore_baseline import baseline_pairs, compute_baseline
from .engine.bertscore_files import packaged_baseline
from .engine.encoder.bert_score_defaults import LANG_MODELS, MODEL_LAYERS, model_for_lang

__all__ = [
    "BERT_SCORE_VERSION",
    "INVARIANCE_TOL",
    "LANG_MODELS",
    "MODEL_LAYERS",
    "BERTScore",
    "BERTScoreResult",
    "BERTScoreTruncationWarning",
    "baseline_pairs",
    "bert_score_hash",
    "compute_baseline",
    "model_for_lang",
    "packaged_baseline",
    "read_baseline",
    "score",
    "write_baseline",
]
