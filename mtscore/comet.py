"""``mtscore.comet``: COMET (Rei et al., 2020, 2022) without torch: :func:`load_comet` (a model
folder, checkpoint or Hub name -> :class:`CometScorer`, whose ``score(hypotheses, sources,
references)`` gives float64 ``[N]`` segment scores, unbabel-comet 2.2.7's within 1e-5 in fp32) and
the registry metric :class:`COMET` (``-m comet``, ``mtscore.score(..., metrics=["comet"])``: the
corpus score is the mean; several references by ``multi_ref="mean"|"max"``). This module only
re-exports them (:mod:`mtscore.engine.comet`)."""
from .engine.comet.metric import COMET, MULTI_REF, COMETScore, COMETSignature
from .engine.comet.scorer import CometInputError, CometReferencesIgnoredWarning, CometScorer, load_comet

__all__ = [
    "COMET",
    "MULTI_REF",
    "COMETScore",
    "COMETSignature",
    "CometInputError",
    "CometReferencesIgnoredWarning",
    "CometScorer",
    "load_comet",
]
