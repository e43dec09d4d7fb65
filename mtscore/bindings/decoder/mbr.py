"""Minimum-Bayes-risk selection (:func:`mbr`) from a pairwise matrix, uniform or weighted
(weights or log-probabilities), and the reference-aggregated utilities :func:`aggregate_chrf`
and :func:`expected_bleu` (O(n) instead of O(n^2)). TER and the other error rates pick the
lowest expected value, every other metric the highest."""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...engine.metrics.base import Metric
from .arguments import lower_is_better, resolve_metric, texts
from .pairwise import pairwise

if TYPE_CHECKING:
    from ...engine.comet.scorer import CometScorer

__all__ = ["MBRResult", "aggregate_chrf", "expected_bleu", "mbr"]


@dataclass(frozen=True)
class MBRResult:
    """``index``: the selected sample; ``expected_utility`` float64 (n,): ``matrix @ p`` (the
    expected metric value of each sample as hypothesis against all samples as
    pseudo-references, weighted by the normalised probabilities p); ``matrix`` float64 (n, n):
    the pairwise matrix (row = hypothesis, column = pseudo-reference); ``probabilities``
    float64 (n,); ``sample``: ``samples[index]``. ``matrix`` is None for ``utility="aggregate"``."""

    index: int
    expected_utility: np.ndarray
    matrix: np.ndarray | None
    probabilities: np.ndarray
    sample: str


def _as_float_vector(x, name: str, n: int, fn: str = "mbr") -> np.ndarray:
    """``weights`` / ``log_probs`` as a float64 (n,) array. numpy arrays, sequences and tensors
    of any dtype, device and grad state are converted, not rejected: a torch tensor is
    detached, moved to the CPU and widened to float64 (bf16/fp16 exactly) first."""
    if hasattr(x, "detach") and hasattr(x, "cpu") and hasattr(x, "double"):  # torch.Tensor
        x = x.detach().cpu()
        x = (x.double() if not x.is_complex() else x).numpy()
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{fn}: {name} must be a 1-D array of numbers, one per sample "
                        f"(got {type(x).__name__}: {e})") from None
    if arr.ndim != 1:
        raise ValueError(f"{fn}: {name} must be 1-D, one value per sample ({n}), got shape "
                         f"{arr.shape}")
    if len(arr) != n:
        raise ValueError(f"{fn}: {name} has {len(arr)} values for {n} samples")
    return arr


def _probabilities(n: int, weights, log_probs, fn: str = "mbr") -> np.ndarray:
    if weights is not None and log_probs is not None:
        raise ValueError(f"{fn}: give weights or log_probs, not both")
    if weights is None and log_probs is None:
        return np.full(n, 1.0 / n)
    name = "weights" if weights is not None else "log_probs"
    x = _as_float_vector(weights if weights is not None else log_probs, name, n, fn)
    bad = np.flatnonzero(np.isnan(x) | (np.isinf(x) if weights is not None else np.isposinf(x)))
    if len(bad):
        raise ValueError(f"{fn}: {name}[{int(bad[0])}] is {float(x[bad[0]])!r} (not a finite number)")
    if weights is not None:
        neg = np.flatnonzero(x < 0)
        if len(neg):
            raise ValueError(f"{fn}: weights[{int(neg[0])}] = {float(x[neg[0]])!r} is negative")
        try:
            total = math.fsum(x.tolist())
        except OverflowError:  # an intermediate partial sum beyond float64 (weights near 1e308)
            total = math.inf
        if total <= 0:
            raise ValueError(f"{fn}: weights sum to 0 (at least one must be positive)")
        if not math.isfinite(total):  # scale to max 1 first: the sum of n values <= 1 is finite
            x = x / x.max()
            total = math.fsum(x.tolist())
        return x / total
    if np.isneginf(x).all():
        raise ValueError(f"{fn}: every log_probs value is -inf")
    p = np.exp(x - x.max())  # softmax
    return p / math.fsum(p.tolist())


def mbr(samples: Sequence[str], weights=None, metric: str | Metric | CometScorer = "chrf",
        workers: int = 1, log_probs=None, utility: str = "pairwise", *, source: str | None = None,
        comet_model: str | os.PathLike[str] | CometScorer | None = None, **options) -> MBRResult:
    """Minimum-Bayes-risk selection: the sample with the highest expected utility against all
    samples as pseudo-references (lowest expected TER for TER).

    ``weights``: the samples' probabilities (any non-negative finite scale, normalised here,
    even when their sum overflows float64) or ``log_probs`` (natural-log probabilities,
    softmax-normalised); neither: uniform. Either is a 1-D array-like of one value per sample:
    numpy, a list, or a torch tensor of any dtype (bf16 included), device and grad state
    (detached and converted to float64 here). A wrong shape, NaN, a negative weight or an
    all-zero weight vector is a ValueError naming ``weights`` / ``log_probs``. The
    pseudo-reference j of every hypothesis i is weighted by ``p[j]``, the diagonal (a sample
    against itself) included, as in mbrs / Eikema & Aziz. Ties go to the first sample.

    ``utility``: ``"pairwise"`` (default: the expected metric, ``pairwise(...) @ p``, O(n^2)
    metric cells) or ``"aggregate"``: reference aggregation, O(n): the metric of each sample
    against the p-weighted average n-gram statistics of all samples (chrF/chrF++:
    :func:`aggregate_chrf`; BLEU: :func:`expected_bleu`). A different utility, not an
    approximation of the same number; ``matrix`` is then None.

    COMET (``metric="comet"`` with ``comet_model``: a model folder / Hub name, loaded here with
    ``options`` as :func:`~mtscore.engine.comet.scorer.load_comet`'s keywords and ``workers`` as its
    threads (0: all cores), or an already loaded ``CometScorer``, also accepted as ``metric``):
    ``source`` is the one source segment all samples translate; ``matrix[i, j]`` is the COMET score
    of hypothesis i with pseudo-reference j and the source (float32 widened), each distinct sample
    and the source encoded once, only the estimator head run per pair
    (:func:`~mtscore.engine.comet.mbr.comet_utility_matrix`). Same semantics as above: diagonal
    included, weights on the pseudo-references, highest expected score, ties to the first sample.
    ``utility="aggregate"``: each sample against the p-weighted mean of the samples' embeddings
    (Vamvas & Sennrich 2024). Only ``regression_metric`` models: referenceless and unified
    (cometkiwi) models are a ValueError naming the model class. Load the model once
    (``load_comet``) when calling this for many groups.
    """
    samples = texts(samples, "samples")
    if not samples:
        raise ValueError("mbr: samples is empty")
    if utility not in ("pairwise", "aggregate"):
        raise ValueError(f"mbr: utility must be 'pairwise' or 'aggregate', got {utility!r}")
    p = _probabilities(len(samples), weights, log_probs)
    scorer = _comet_scorer(metric, comet_model, workers, options)
    if scorer is not None:
        return _comet_mbr(scorer, samples, source, p, utility)
    if source is not None:
        raise ValueError(f"mbr: source is only read by metric='comet', not {metric!r}")
    m = resolve_metric(metric, options)  # type: ignore[arg-type]  # a CometScorer was handled above
    mat: np.ndarray | None = None
    if utility == "aggregate":
        eu = _aggregate_utility(m, samples, samples, p)
    else:
        mat = pairwise(samples, metric=m, workers=workers)
        eu = mat @ p
    idx = int(np.argmin(eu) if lower_is_better(m) else np.argmax(eu))
    return MBRResult(idx, eu, mat, p, samples[idx])


def _comet_scorer(metric, comet_model, workers: int, options: dict) -> CometScorer | None:
    """The COMET scorer ``mbr`` should use, or None for a lexical metric."""
    is_name = isinstance(metric, str) and metric.lower() == "comet"
    if not is_name and (isinstance(metric, (str, Metric)) or metric is None):
        if comet_model is not None:
            raise ValueError(f"mbr: comet_model is only read by metric='comet', not {metric!r}")
        return None
    from ...engine.comet.scorer import CometScorer, load_comet

    if not is_name:
        if not isinstance(metric, CometScorer):
            return None  # resolve_metric names the bad type
        if comet_model is not None:
            raise ValueError("mbr: give the COMET model as metric or as comet_model, not both")
        comet_model = metric
    if isinstance(comet_model, CometScorer):
        if options:
            raise ValueError(f"mbr: options {sorted(options)} are load_comet's; comet_model is already loaded")
        return comet_model
    if comet_model is None:
        raise ValueError("mbr: metric='comet' needs comet_model (a COMET model folder, Hub name or a loaded "
                         "CometScorer; the --comet-model option of the command line)")
    options.setdefault("threads", None if workers == 0 else workers)
    return load_comet(comet_model, **options)


def _comet_mbr(scorer: CometScorer, samples: list[str], source: str | None, p: np.ndarray,
               utility: str) -> MBRResult:
    from ...engine.comet.mbr import comet_aggregate_utilities, comet_utility_matrix

    if source is None:
        raise ValueError(f"mbr: COMET ({scorer.name}) needs source=, the one source segment the samples "
                         "translate (the --source file of the command line)")
    mat: np.ndarray | None = None
    if utility == "aggregate":
        eu = comet_aggregate_utilities(scorer, samples, source, p).astype(np.float64)
    else:
        mat = comet_utility_matrix(scorer, samples, source).astype(np.float64)
        eu = mat @ p
    idx = int(np.argmax(eu))
    return MBRResult(idx, eu, mat, p, samples[idx])


def _aggregate_utility(m: Metric, hyps: list[str], refs: list[str], p: np.ndarray) -> np.ndarray:
    from ...engine.metrics import aggregate
    from ...engine.metrics.bleu import BLEU
    from ...engine.metrics.chrf import CHRF

    if isinstance(m, CHRF):
        return aggregate.aggregate_chrf_scores(m, hyps, refs, p)
    if isinstance(m, BLEU):
        return aggregate.expected_bleu_scores(m, hyps, refs, p)
    raise ValueError(f"utility='aggregate' needs chrF/chrF++ or BLEU, not {type(m).__name__}")


def _aggregate_args(fn: str, hyps, references, weights) -> tuple[list[str], list[str], np.ndarray]:
    hyps = texts(hyps, "hyps")
    refs = hyps if references is None else texts(references, "references")
    if not hyps or not refs:
        raise ValueError(f"{fn}: {'hyps' if not hyps else 'references'} is empty")
    return hyps, refs, _probabilities(len(refs), weights, None, fn)


def aggregate_chrf(hyps: Sequence[str], references: Sequence[str] | None = None,
                   weights=None, metric: str | Metric = "chrf", **options) -> np.ndarray:
    """Reference-aggregated chrF (Vamvas & Sennrich 2024; fastChrF's ``aggregate_chrf``):
    float64 (n,), each hypothesis' chrF against the ``weights``-averaged n-gram counts of
    ``references`` (None: the hypotheses themselves, for MBR). O(n + m) instead of O(n * m);
    a different utility from the mean of :func:`pairwise` rows. ``metric``: "chrf", "chrf++" or
    a CHRF object (every option applies)."""
    hyps, refs, p = _aggregate_args("aggregate_chrf", hyps, references, weights)
    m = resolve_metric(metric, options)
    from ...engine.metrics.chrf import CHRF

    if not isinstance(m, CHRF):
        raise ValueError(f"aggregate_chrf: metric must be chrF/chrF++, got {type(m).__name__}")
    return _aggregate_utility(m, hyps, refs, p)


def expected_bleu(hyps: Sequence[str], references: Sequence[str] | None = None,
                  weights=None, metric: str | Metric = "bleu", **options) -> np.ndarray:
    """Sentence BLEU against expected n-gram counts (DeNero et al. 2009, consensus decoding):
    float64 (n,), each hypothesis' BLEU against the ``weights``-averaged n-gram counts and
    length of ``references`` (None: the hypotheses themselves). O(n + m); a different utility
    from the mean of :func:`pairwise` rows. ``metric``: "bleu" or a BLEU object (tokenizer,
    smoothing, effective order apply; default ``effective_order=True`` as for sentence BLEU)."""
    hyps, refs, p = _aggregate_args("expected_bleu", hyps, references, weights)
    if isinstance(metric, str):
        options.setdefault("effective_order", True)
    m = resolve_metric(metric, options)
    from ...engine.metrics.bleu import BLEU

    if not isinstance(m, BLEU):
        raise ValueError(f"expected_bleu: metric must be BLEU, got {type(m).__name__}")
    return _aggregate_utility(m, hyps, refs, p)
