"""BLEU and TER on token ids: every id is one token, no text involved. The metrics id mode
takes are the registry's entries with ``ids=True`` (BLEU, TER, and any registered metric whose
class gives ``stats_of_ids``: see :class:`~.metrics.spec.MetricSpec`).

The result equals sacrebleu 2.6.0 on the ids written as space-separated decimal numbers with
``tokenize="none"`` (BLEU) / any TER options (digit tokens are left alone by the Tercom
normaliser, punctuation removal, Asian support and lowercasing), because both metrics only
compare tokens for equality: the CSR arrays go straight into the BLEU n-gram kernels and the
TER shift-search kernel.

References: one batch of R sequences. By default R == N (reference i for hypothesis i);
``groups`` (int64 (N + 1,), CSR offsets into the references) gives hypothesis i the references
``groups[i]:groups[i + 1]`` (a variable number K_i; K_i == 0 is a segment without reference,
handled by the metric's ``missing_refs`` policy).
"""
from __future__ import annotations

import warnings
from typing import Union

import numpy as np

from ..kernels import _ngram
from .metrics.base import Metric, MissingReferenceError, MissingReferenceWarning
from .metrics.bleu import BLEU
from .metrics.registry import specs
from .metrics.ter import TER, ter_stats
from .parallel import chunk_bounds, resolve_workers, run_parallel
from .token_ids import TokenIds

__all__ = [
    "ID_MODE_TOKENIZERS",
    "IdMetric",
    "id_metric",
    "id_stats",
    "id_stats_and_scores",
    "reference_groups",
]

IdMetric = Union[BLEU, TER]

#: BLEU tokenizers that leave space-separated decimal ids unchanged (so sacrebleu with them
#: equals id mode); the others (char, zh, ja-mecab, ko-mecab, spm, flores*) split digits
ID_MODE_TOKENIZERS = ("none", "13a", "intl")


def _id_specs() -> list:
    """The registry's entries that score ids (``ids=True``), in registration order."""
    return [s for s in specs() if s.ids]


def _id_names() -> str:
    """Their class names as a sentence lists them: ``"BLEU or TER"``."""
    names = [s.cls for s in _id_specs()]
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 2 else names)


def id_metric(metric: str | Metric = "bleu", **options) -> Metric:
    """A registry name with ``ids=True`` (``"bleu"``: ``tokenize="none"`` unless given, the
    entry's ``id_defaults``; ``"ter"``; with ``options`` as constructor arguments), or an
    object of such a class, checked to be usable on ids."""
    if isinstance(metric, str):
        spec = next((s for s in _id_specs() if s.name == metric.lower()), None)
        if spec is None:
            raise ValueError(
                f"id mode scores {_id_names()} (each id is one token), got metric={metric!r}; chrF and "
                "chrF++ work on characters: decode the ids with a vocabulary (text mode)")
        return id_metric(spec.load()(**{**spec.fixed, **spec.id_defaults, **options}))
    if options:
        raise TypeError(f"metric options {sorted(options)} given with a metric object; set them "
                        "on the object")
    # BLEU and TER objects (the kernels' own, on every decoder call) first: the registry scan
    # imports each id spec's class, ~5 us a call
    if not isinstance(metric, (BLEU, TER)) and not any(isinstance(metric, s.load()) for s in _id_specs()):
        raise TypeError(f"id mode scores {_id_names()}; got {type(metric).__name__}")
    if isinstance(metric, BLEU):
        tok = metric.tokenizer.name
        if tok not in ID_MODE_TOKENIZERS:
            raise ValueError(
                f"id mode: BLEU(tokenize={tok!r}) would split the ids written as text, so sacrebleu "
                f"with it differs from one-token-per-id; use tokenize in {ID_MODE_TOKENIZERS}")
    elif not isinstance(metric, TER) and not callable(getattr(metric, "stats_of_ids", None)):
        raise TypeError(f"id mode: {type(metric).__name__} is registered with ids=True but has no "
                        "stats_of_ids(hyps, refs, groups) method (nor is it a BLEU or TER)")
    return metric


def reference_groups(n: int, n_refs: int, groups=None) -> np.ndarray:
    """Validated int64 (N + 1,) reference offsets: ``arange(N + 1)`` when ``groups`` is None
    (then R must equal N)."""
    if groups is None:
        if n_refs != n:
            raise ValueError(
                f"refs holds {n_refs} sequences but hyps holds {n}; with one reference per "
                "hypothesis they must match, or pass ref_groups= (int64 (N + 1,) offsets into "
                "refs) to give hypothesis i the references ref_groups[i]:ref_groups[i + 1]")
        return np.arange(n + 1, dtype=np.int64)
    g = np.asarray(groups)
    if g.ndim != 1 or (g.size and g.dtype.kind not in "iu"):
        raise TypeError(f"ref_groups must be a 1-D integer array (CSR offsets), got shape "
                        f"{g.shape} dtype {g.dtype}")
    if len(g) != n + 1:
        raise ValueError(f"ref_groups must hold N + 1 = {n + 1} offsets (one more than hyps), got {len(g)}")
    g = np.ascontiguousarray(g, dtype=np.int64)
    if g[0] != 0 or g[-1] != n_refs:
        raise ValueError(f"ref_groups must start at 0 and end at the number of references "
                         f"({n_refs}); got {int(g[0])} .. {int(g[-1])}")
    steps = np.diff(g)
    if len(steps) and steps.min() < 0:
        i = int(np.argmax(steps < 0))
        raise ValueError(f"ref_groups decreases at hypothesis {i} ({int(g[i])} > {int(g[i + 1])})")
    return g


def _bleu_stats(metric: BLEU, hyps: TokenIds, refs: TokenIds, groups: np.ndarray) -> np.ndarray:
    """One fused kernel pass per chunk (``bleu_pair_stats``: each segment's reference table is
    built and walked by its hypothesis at once; ragged reference groups need no padding)."""
    n = len(hyps)
    w = resolve_workers(metric.workers)
    order = metric.max_ngram_order
    # a chunk per worker only pays on larger batches
    bounds = chunk_bounds(n, w if n >= 64 * w else 1)
    parts = run_parallel(lambda b: _ngram.bleu_pair_stats(
        hyps.values, hyps.offsets[b[0]:b[1] + 1], refs.values, refs.offsets,
        groups[b[0]:b[1] + 1], order), bounds, w)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _ter_stats(metric: TER, hyps: TokenIds, refs: TokenIds, groups: np.ndarray) -> np.ndarray:
    return ter_stats(hyps.values, hyps.offsets, refs.values, refs.offsets, groups,
                     workers=resolve_workers(metric.workers))


def _missing_policy(metric: Metric, missing: np.ndarray) -> None:
    name = type(metric).__name__
    if metric.missing_refs != "skip":
        first = int(np.argmax(missing))
        raise MissingReferenceError(
            f"{name}: hypothesis {first} (0-based) has no reference (ref_groups gives it none), "
            f"{int(missing.sum())} in all. Give each hypothesis a reference, or pass "
            "missing_refs='skip' to leave them out of the scores.")
    warnings.warn(MissingReferenceWarning(
        f"{name}: {int(missing.sum())} of {len(missing)} hypothesis(es) have no reference and were "
        "skipped (missing_refs='skip': zero statistics, NaN sentence scores)"), stacklevel=4)


def _num_refs(counts: np.ndarray) -> int:
    """sacrebleu's num_refs: the per-segment count, or -1 when it varies (0s not counted)."""
    c = counts[counts > 0]
    if c.size == 0:
        return 0
    lo, hi = int(c.min()), int(c.max())
    return lo if lo == hi else -1


def id_stats(metric: Metric, hyps: TokenIds, refs: TokenIds,
             groups: np.ndarray | None = None) -> np.ndarray:
    """Per-segment statistics of id sequences: BLEU int64 ``(N, 2 + 2 * order)``, TER float64
    ``(N, 2)`` (the layouts of the text path), another id metric its ``stats_of_ids``. Segments without a reference follow
    ``metric.missing_refs`` (error, or zero rows under "skip")."""
    return id_stats_and_scores(metric, hyps, refs, groups, sentence_level=False)[0]


def id_stats_and_scores(metric: Metric, hyps: TokenIds, refs: TokenIds,
                        groups: np.ndarray | None = None,
                        sentence_level: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """``(stats, sentence scores float64 (N,) or None)``; each score is bit-identical to
    sacrebleu's ``sentence_score`` of the space-joined ids (NaN for skipped segments)."""
    g = reference_groups(len(hyps), len(refs), groups)
    counts = np.diff(g)
    metric.num_refs = _num_refs(counts)
    missing = counts == 0
    skip = None
    if missing.any():
        _missing_policy(metric, missing)
        skip = missing
    if isinstance(metric, TER):
        if skip is None:
            stats = _ter_stats(metric, hyps, refs, g)
        else:  # the kernel needs a reference per segment: score the others
            keep = np.flatnonzero(~skip)
            stats = np.zeros((len(hyps), 2), dtype=np.float64)
            kept_groups = np.zeros(len(keep) + 1, dtype=np.int64)
            np.cumsum(counts[keep], out=kept_groups[1:])
            if len(keep):
                stats[keep] = _ter_stats(metric, hyps.take(keep), refs, kept_groups)
    else:
        if isinstance(metric, BLEU):
            stats = _bleu_stats(metric, hyps, refs, g)
        else:  # a registered id metric's own (id_metric checked it has one)
            stats = np.array(metric.stats_of_ids(hyps, refs, g))  # type: ignore[attr-defined]
        if skip is not None:
            stats[skip] = 0
    scores = None
    if sentence_level or skip is not None:
        scores = metric.scores_from_stats(stats)
        if skip is not None:
            scores[skip] = np.nan
    return stats, scores
