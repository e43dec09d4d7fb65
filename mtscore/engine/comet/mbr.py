"""COMET as a minimum-Bayes-risk utility: the ``n x n`` matrix of a group of samples that share one
source, from n + 1 encoder passes and the estimator head per pair.

Scoring the n^2 (hypothesis, pseudo-reference, source) triples one by one (what unbabel-comet's
``predict`` does when it is given them) encodes 3 n^2 sentences; here each distinct sample and the
source are encoded once (:meth:`~.scorer.CometScorer.embed`) and only the estimator runs per pair
(:func:`~.head.head_scores_pairs`, row blocks, the first layer factored). Entry ``(i, j)`` equals
``scorer.score([samples[i]], sources=[source], references=[samples[j]])[0]`` up to float32
summation order (~1e-7).

Only ``regression_metric`` models can be used: a ``referenceless_regression_metric`` reads no
reference (every pseudo-reference would give the same number) and a ``unified_metric`` (e.g.
wmt22-cometkiwi-da) encodes translation and source jointly, so its head has no reference embedding to
pair; both are refused by :func:`check_mbr_model`.

:func:`comet_aggregate_utilities` is reference aggregation for COMET (Vamvas & Sennrich, 2024, "Linear-time
Minimum Bayes Risk Decoding with Reference Aggregation"): each sample against the probability-weighted
mean of the samples' embeddings, O(n) head evaluations; a different utility from the mean of a row.

CPU only for now: the embeddings come back to the host and the head runs in numpy float32. On CUDA,
:func:`~.head.build_head_graph` ``(spec, pairs=True)`` could keep the embeddings on the device (the
pairs graph run through onnxruntime's IO binding) -- not wired here yet.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import UserError
from .head import PAIR_ROWS, head_scores_pairs
from .scorer import CometScorer

__all__ = ["CometMBRError", "check_mbr_model", "comet_aggregate_utilities", "comet_utility_matrix"]


class CometMBRError(UserError, ValueError):
    """The COMET model or the inputs cannot give MBR utilities; the message names the model class or
    the argument."""


def check_mbr_model(scorer: CometScorer) -> None:
    """Raise :class:`CometMBRError` unless ``scorer`` is a ``regression_metric`` (a model that reads a
    reference embedding of its own, which a pseudo-reference can stand in for)."""
    cid = scorer.class_identifier
    if cid == "regression_metric":
        return
    why = ("it encodes the translation and the source jointly (<s> mt </s></s> src </s>), so its head has no "
           "reference embedding to pair with each hypothesis"
           if cid == "unified_metric" else "it reads no reference, so every pseudo-reference would give the same "
           "number")
    raise CometMBRError(f"--comet-model {scorer.name}: a {cid} model cannot be an MBR utility: {why}; use a "
                        "regression_metric model with references (e.g. Unbabel/wmt22-comet-da)")


def _inputs(scorer: CometScorer, samples: Sequence[str], source: str | None) -> tuple[np.ndarray, np.ndarray,
                                                                                       np.ndarray]:
    """(embeddings of the distinct samples [u, H], the source's [1, H], inverse [n] int64: sample i is
    distinct sample inverse[i])."""
    check_mbr_model(scorer)
    if not isinstance(source, str):
        raise CometMBRError(f"source: {scorer.name} (regression_metric) needs the one source segment the samples "
                            f"translate, a str (got {type(source).__name__})")
    if isinstance(samples, (str, bytes)):
        raise CometMBRError("samples: expected a sequence of strings, got one string")
    first: dict[str, int] = {}
    inverse = np.empty(len(samples), dtype=np.int64)
    for i, s in enumerate(samples):
        if not isinstance(s, str):
            raise CometMBRError(f"samples[{i}]: expected a str, got {type(s).__name__}")
        inverse[i] = first.setdefault(s, len(first))
    emb = scorer.embed([*first, source])  # one call: the source's text, if also a sample, is encoded once
    return emb[:-1], emb[-1:], inverse


def comet_utility_matrix(scorer: CometScorer, samples: Sequence[str], source: str, *,
                         block_rows: int = PAIR_ROWS) -> np.ndarray:
    """The COMET MBR matrix of one group: float32 ``[n, n]`` (n = ``len(samples)``), row ``i`` the
    hypothesis ``samples[i]``, column ``j`` the pseudo-reference ``samples[j]``, every pair with the
    one ``source``; the diagonal (a sample against itself) is computed like any other entry. Distinct
    samples are encoded once and the head runs once per distinct pair (duplicates copy rows and
    columns); ``block_rows``: pairs per head block (memory bound, see
    :func:`~.head.head_scores_pairs`). Raises :class:`CometMBRError` for a model that is not a
    ``regression_metric`` and for bad inputs."""
    emb, src, inverse = _inputs(scorer, samples, source)
    if len(inverse) == 0:
        return np.empty((0, 0), dtype=np.float32)
    u = head_scores_pairs(scorer.spec, emb, emb, src, block_rows=block_rows)
    return u[np.ix_(inverse, inverse)]


def comet_aggregate_utilities(scorer: CometScorer, samples: Sequence[str], source: str,
                              probabilities: np.ndarray) -> np.ndarray:
    """Reference-aggregated COMET (Vamvas & Sennrich, 2024): float32 ``[n]``, entry ``i`` the head's
    score of ``samples[i]`` against the pseudo-reference embedding ``sum_j p[j] * e(samples[j])``
    (averaged in float64, then float32) with ``source``; ``probabilities``: float ``[n]``, summing to 1.
    O(n) head evaluations; a different utility from ``comet_utility_matrix(...) @ p``."""
    emb, src, inverse = _inputs(scorer, samples, source)
    p = np.asarray(probabilities, dtype=np.float64)
    if p.shape != inverse.shape:
        raise CometMBRError(f"probabilities: shape {list(p.shape)}, expected [{len(inverse)}] (one per sample)")
    if len(inverse) == 0:
        return np.empty(0, dtype=np.float32)
    w = np.zeros(len(emb), dtype=np.float64)
    np.add.at(w, inverse, p)
    mean = (w @ emb.astype(np.float64)).astype(np.float32)[None, :]
    return head_scores_pairs(scorer.spec, emb, mean, src)[:, 0][inverse]
