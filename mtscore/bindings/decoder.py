"""The decoder API (``mtscore.decoder``): metric calls from inside an MT decoder, in batches.

* :func:`sentence_scores`: one score per (hypothesis, its references) pair, float64 (n,);
* :func:`pairwise`: all-pairs matrices in the spirit of ``rapidfuzz.process.cdist``, one group
  or many (MBR, consensus);
* :func:`mbr`: minimum-Bayes-risk selection from a pairwise matrix, uniform or weighted;
* :func:`nbest_oracle` and :func:`read_moses_nbest`: oracle selection / reranking of n-best
  lists.

Every number equals the metric's ``sentence_score(hyp, refs).score`` bit for bit (sacrebleu
2.6.0's), because each goes through the metric contract: :func:`sentence_scores` through
``prepare`` + ``stats_and_scores`` (the batch path), :func:`pairwise` through
``Metric.pairwise_scores`` (all-pairs kernels for BLEU, chrF/chrF++ and TER; the batch path for
other metrics). ``metric`` is a name (``"bleu"``, ``"chrf"``, ``"chrf++"``, ``"ter"``) with
constructor ``**options``, or a metric object (then ``options`` must be empty).

TER is an error rate (lower is better): :func:`mbr` and :func:`nbest_oracle` pick the lowest
expected / actual TER for it, the highest score for every other metric.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..engine.metrics.base import Metric
from ..engine.metrics.registry import make_sentence_metric
from ..errors import UserError
from ..kernels._lists import first_non_str

__all__ = ["MBRResult", "NBestEntry", "NBestFormatError", "NBestOracle", "aggregate_chrf",
           "expected_bleu", "lower_is_better", "mbr",
           "nbest_oracle", "pairwise", "parse_moses_nbest", "read_moses_nbest", "resolve_metric",
           "sentence_scores"]


# ---- metric ---------------------------------------------------------------------------------
#: set once the sentence-BLEU-without-effective-order warning was given (once per process)
_WARNED: list[bool] = []


def resolve_metric(metric: str | Metric, options: dict, workers: int | None = None) -> Metric:
    """A metric object from a name + constructor options, or the given object (no options).
    By name, sentence-level defaults apply (``registry.SENTENCE_DEFAULTS``: BLEU with
    ``effective_order=True`` unless ``options`` say otherwise, as sacrebleu's sentence mode)."""
    if isinstance(metric, str):
        m = make_sentence_metric(metric, **options)
    else:
        if options:
            raise ValueError(f"metric options {sorted(options)} given with a metric object; pass "
                             "a metric name, or set the options on the object")
        if not hasattr(metric, "pairwise_scores") or not hasattr(metric, "stats_and_scores"):
            raise TypeError(f"metric must be a name or an mtscore metric, got {type(metric).__name__}")
        m = metric
    if workers is not None:
        _check_workers(workers)
        m.workers = workers
    if getattr(m, "effective_order", None) is False and not _WARNED:  # BLEU without it: say so once
        import warnings

        _WARNED.append(True)
        warnings.warn("sentence-level BLEU without effective_order: a sentence with no match of "
                      "some n-gram order scores 0 (sacrebleu recommends effective_order=True, "
                      "the default here)", UserWarning, stacklevel=3)
    return m


def _check_workers(workers) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError(f"workers must be an int >= 0 (0: all cores), got {workers!r}")


def lower_is_better(metric: Metric) -> bool:
    """Whether lower scores are better (the metric says so: TER, WER, PER, CER, EED are error rates)."""
    return bool(metric.lower_is_better)


def _texts(items, what: str) -> list[str]:
    if isinstance(items, str):
        raise TypeError(f"{what} must be a sequence of strings, not a single string")
    out = items if type(items) is list else list(items)
    i = first_non_str(out)  # a C loop over the items
    if i >= 0 and not all(isinstance(x, str) for x in out):  # str subclasses are fine
        i = next(j for j, x in enumerate(out) if not isinstance(x, str))
        raise TypeError(f"{what}[{i}] must be a str, got {type(out[i]).__name__}")
    return out


def _is_seq(r) -> bool:
    """A non-string sequence (lists and tuples without the slow ABC check)."""
    return type(r) in (list, tuple) or (not isinstance(r, str) and isinstance(r, Sequence))


# ---- sentence scores ------------------------------------------------------------------------
def _ref_streams(refs, n: int, layout: str) -> list[list[str | None]]:
    """K reference streams of n segments (None where a hypothesis has fewer references)."""
    if isinstance(refs, str):
        raise TypeError("refs must be a sequence (per hypothesis, or K streams), not a string")
    refs = list(refs)
    if layout not in ("auto", "per_hyp", "streams"):
        raise ValueError(f"layout must be 'auto', 'per_hyp' or 'streams', got {layout!r}")
    seqs = [_is_seq(r) for r in refs]
    per_hyp_ok = len(refs) == n and all(isinstance(r, str) or s for r, s in zip(refs, seqs))
    streams_ok = bool(refs) and all(seqs) and all(len(r) == n for r in refs)
    if layout == "auto":
        if per_hyp_ok and streams_ok and n > 1:  # n lists of n strings: either reading fits
            raise ValueError(
                f"refs is ambiguous: {n} lists of {n} strings could be per-hypothesis "
                "references or reference streams; pass layout='per_hyp' or layout='streams'")
        layout = "per_hyp" if per_hyp_ok else "streams"
    if layout == "streams":
        if not refs:
            raise ValueError("refs: no reference streams")
        for k, r in enumerate(refs):
            if not _is_seq(r):
                raise ValueError(f"refs[{k}]: a reference stream must be a list of strings")
            if len(r) != n:
                raise ValueError(f"refs[{k}] has {len(r)} references for {n} hypotheses")
        streams = [list(r) for r in refs]
        for i in range(n):
            if all(st[i] is None for st in streams):
                raise ValueError(f"refs: hypothesis {i} has no reference (None in every stream)")
        return streams
    if len(refs) != n:
        raise ValueError(f"refs has {len(refs)} entries for {n} hypotheses (one list of references "
                         "per hypothesis)")
    per = [[r] if isinstance(r, str) else list(r) for r in refs]
    for i, rs in enumerate(per):
        if not rs:
            raise ValueError(f"refs[{i}] is empty: hypothesis {i} needs at least one reference")
        for j, x in enumerate(rs):
            if not isinstance(x, str):
                raise TypeError(f"refs[{i}][{j}] must be a str, got {type(x).__name__}")
    k = max((len(rs) for rs in per), default=1)
    return [[rs[j] if j < len(rs) else None for rs in per] for j in range(k)]


def sentence_scores(hyps: Sequence[str], refs, metric: str | Metric = "chrf",
                    workers: int = 1, layout: str = "auto", **options) -> np.ndarray:
    """Sentence scores of n hypotheses, float64 (n,): ``out[i] ==
    metric.sentence_score(hyps[i], refs_i).score`` bit for bit.

    ``refs``: per hypothesis a string or a list of strings (ragged: K may differ per
    hypothesis), or sacrebleu-style K streams of n strings (``None`` = no such reference for
    that hypothesis). ``layout``: "per_hyp", "streams" or "auto" (decided from the shapes; K
    streams of n when ``K == n`` is ambiguous and raises). Computed on the batch path: the
    references are prepared once (repeated reference rows, as in n-best lists, once per distinct
    row), then statistics and scores for all hypotheses in compiled kernels (GIL released,
    ``workers`` threads).
    """
    _check_workers(workers)
    hyps = _texts(hyps, "hyps")
    m = resolve_metric(metric, options, workers)
    if not hyps:
        return np.zeros(0, dtype=np.float64)
    streams = _ref_streams(refs, len(hyps), layout)
    _, scores = m.stats_and_scores(hyps, m.prepare(streams), sentence_level=True)
    return np.asarray(scores, dtype=np.float64)


# ---- pairwise -------------------------------------------------------------------------------
def pairwise(candidates: Sequence[str] | None = None, references: Sequence[str] | None = None,
             metric: str | Metric = "chrf", workers: int = 1, groups=None, **options):
    """All-pairs sentence scores, like ``rapidfuzz.process.cdist``: float64 ``(n, m)`` with
    ``out[i, j] == metric.sentence_score(candidates[i], [references[j]]).score`` bit for bit.

    ``references`` None: candidates against themselves (``(n, n)``, MBR's pseudo-references).
    ``groups``: many independent groups in one call (``candidates`` and ``references`` must then
    be None): a list of sample lists (each scored against itself) or of ``(candidates,
    references)`` pairs; returns a stacked ``(G, n, m)`` array when all matrices have one shape,
    else a list of matrices. Each distinct sample's n-grams / token ids are built once per
    group. ``workers`` threads fill the columns of a matrix (one group) or take whole groups
    (many groups; 0 = all cores).
    """
    _check_workers(workers)
    m = resolve_metric(metric, options)
    if groups is None:
        if candidates is None:
            raise ValueError("pairwise: give candidates (and optionally references) or groups=")
        cand = _texts(candidates, "candidates")
        refs = None if references is None else _texts(references, "references")
        return m.pairwise_scores(cand, refs, workers=workers)
    if candidates is not None or references is not None:
        raise ValueError("pairwise: give either candidates/references or groups=, not both")
    jobs: list[tuple] = []
    for g, grp in enumerate(groups):
        if isinstance(grp, tuple):
            if len(grp) != 2:
                raise ValueError(f"groups[{g}]: a tuple group must be (candidates, references)")
            jobs.append((_texts(grp[0], f"groups[{g}][0]"), _texts(grp[1], f"groups[{g}][1]")))
        else:
            jobs.append((_texts(grp, f"groups[{g}]"), None))
        if not jobs[-1][0] or (jobs[-1][1] is not None and not jobs[-1][1]):
            raise ValueError(f"groups[{g}] is empty: every group needs at least one sample")
    from ..engine.parallel import resolve_workers, run_parallel

    w = resolve_workers(workers)
    if w > 1 and len(jobs) >= w:  # whole groups per thread
        mats = run_parallel(lambda j: m.pairwise_scores(j[0], j[1], workers=1), jobs, w)
    else:
        mats = [m.pairwise_scores(c, r, workers=w) for c, r in jobs]
    if mats and all(x.shape == mats[0].shape for x in mats):
        return np.stack(mats)
    return mats


# ---- MBR ------------------------------------------------------------------------------------
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


def mbr(samples: Sequence[str], weights=None, metric: str | Metric = "chrf",
        workers: int = 1, log_probs=None, utility: str = "pairwise", **options) -> MBRResult:
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
    """
    samples = _texts(samples, "samples")
    if not samples:
        raise ValueError("mbr: samples is empty")
    if utility not in ("pairwise", "aggregate"):
        raise ValueError(f"mbr: utility must be 'pairwise' or 'aggregate', got {utility!r}")
    p = _probabilities(len(samples), weights, log_probs)
    m = resolve_metric(metric, options)
    mat: np.ndarray | None = None
    if utility == "aggregate":
        eu = _aggregate_utility(m, samples, samples, p)
    else:
        mat = pairwise(samples, metric=m, workers=workers)
        eu = mat @ p
    idx = int(np.argmin(eu) if lower_is_better(m) else np.argmax(eu))
    return MBRResult(idx, eu, mat, p, samples[idx])


def _aggregate_utility(m: Metric, hyps: list[str], refs: list[str], p: np.ndarray) -> np.ndarray:
    from ..engine.metrics import aggregate
    from ..engine.metrics.bleu import BLEU
    from ..engine.metrics.chrf import CHRF

    if isinstance(m, CHRF):
        return aggregate.aggregate_chrf_scores(m, hyps, refs, p)
    if isinstance(m, BLEU):
        return aggregate.expected_bleu_scores(m, hyps, refs, p)
    raise ValueError(f"utility='aggregate' needs chrF/chrF++ or BLEU, not {type(m).__name__}")


def _aggregate_args(fn: str, hyps, references, weights) -> tuple[list[str], list[str], np.ndarray]:
    hyps = _texts(hyps, "hyps")
    refs = hyps if references is None else _texts(references, "references")
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
    from ..engine.metrics.chrf import CHRF

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
    from ..engine.metrics.bleu import BLEU

    if not isinstance(m, BLEU):
        raise ValueError(f"expected_bleu: metric must be BLEU, got {type(m).__name__}")
    return _aggregate_utility(m, hyps, refs, p)


# ---- n-best ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class NBestOracle:
    """Per source: ``index`` int64 (S,) the oracle candidate (the first best one), ``score``
    float64 (S,) its score, ``scores`` the scores of every candidate (list of float64 arrays),
    ``ranking`` candidate indices best first (list of int64 arrays; ties keep list order;
    sorted on first use, not by :func:`nbest_oracle`). ``lower_is_better``: the metric's
    direction (TER, WER: True)."""

    index: np.ndarray
    score: np.ndarray
    scores: list[np.ndarray]
    lower_is_better: bool = False

    @cached_property
    def ranking(self) -> list[np.ndarray]:
        return _rankings(self.scores, self.lower_is_better)


def _rankings(scores: list[np.ndarray], low: bool) -> list[np.ndarray]:
    """Candidate indices best first per list (int64; stable: ties keep list order, NaN last);
    lists of one length in one 2-D argsort."""
    if scores and len({len(x) for x in scores}) == 1:
        mat = np.stack(scores)
        order = np.argsort(mat if low else -mat, axis=1, kind="stable")
        return list(order.astype(np.int64, copy=False))
    return [np.argsort(x if low else -x, kind="stable").astype(np.int64) for x in scores]


#: candidates per block in :func:`nbest_oracle` (whole lists; a list longer than this is a block)
_NBEST_BLOCK = 4096


def nbest_oracle(nbest: Sequence[Sequence[str]], references, metric: str | Metric = "bleu",
                 workers: int = 1, **options) -> NBestOracle:
    """Oracle selection and metric ranking of n-best lists: ``nbest[s]`` are the candidates of
    source s, ``references[s]`` its reference(s) (a string or a list of strings). Each
    candidate's score equals ``metric.sentence_score(candidate, references[s]).score``; all
    candidates of all sources are scored in one batch (:func:`sentence_scores`), the references
    of a source prepared once."""
    m = resolve_metric(metric, options, workers)
    # the batch path checks each block's candidates itself (one pass less over 100,000 cold
    # string objects); a bad candidate is then named by the precise check below
    lists = _nbest_lists(nbest, check=not m.dedupes_outputs)
    if isinstance(references, str):
        raise TypeError("references must be one entry per source, not a single string")
    references = list(references)
    if len(references) != len(lists):
        raise ValueError(f"references has {len(references)} entries for {len(lists)} n-best lists")
    for s, c in enumerate(lists):
        if not c:
            raise ValueError(f"nbest[{s}] is empty: source {s} has no candidates")
    sizes = [len(c) for c in lists]
    if m.dedupes_outputs:  # the S reference sets prepared once, candidates scored against rows
        prepared = m.prepare(_ref_streams(references, len(lists), "per_hyp"))
        flat = np.empty(sum(sizes), dtype=np.float64)
        a = 0
        for s0, s1 in _blocks(sizes, _NBEST_BLOCK):
            hyps = []
            for c in lists[s0:s1]:
                hyps.extend(c)   # list.extend copies a list's items at once (chain: one by one)
            z = a + len(hyps)
            rows = np.repeat(np.arange(s0, s1, dtype=np.int64), sizes[s0:s1])
            try:
                stats, scores = m.rows_stats_and_scores(hyps, rows, prepared, True)
            except TypeError:
                _nbest_lists(nbest)  # raises the error that names nbest[s][i]
                raise
            flat[a:z] = m.scores_from_stats(stats) if scores is None else scores
            a = z
    else:
        refs = [references[s] for s, c in enumerate(lists) for _ in c]
        flat = sentence_scores(list(chain.from_iterable(lists)), refs, metric=m,
                               workers=workers, layout="per_hyp")
    return _oracle(flat, sizes, lower_is_better(m))


def _blocks(sizes: list[int], target: int) -> list[tuple[int, int]]:
    """Ranges ``(s0, s1)`` of whole lists (``sizes`` candidates each) holding about ``target``
    candidates each: one block's token ids and statistics stay in cache between tokenizing and
    matching, and their buffers are reused instead of faulting in fresh pages for the whole
    batch (page faults were ~10 % of a first call on 100,000 candidates)."""
    out: list[tuple[int, int]] = []
    s0 = count = 0
    for s, n in enumerate(sizes):
        count += n
        if count >= target:
            out.append((s0, s + 1))
            s0, count = s + 1, 0
    if s0 < len(sizes):
        out.append((s0, len(sizes)))
    return out


def _nbest_lists(nbest, check: bool = True) -> list[list[str]]:
    """The n-best lists, each a list of str. Lists of strings (the common input) are checked in
    one C pass over the joined candidates instead of list by list (each pass over 100,000 cold
    string objects costs milliseconds), or not at all when ``check`` is False (the caller's
    metric checks them)."""
    if isinstance(nbest, str):
        raise TypeError("nbest must be a sequence of n-best lists, not a single string")
    lists = nbest if type(nbest) is list else list(nbest)
    if all(type(c) is list for c in lists) and (not check or first_non_str(list(chain.from_iterable(lists))) < 0):
        return lists
    return [_texts(c, f"nbest[{s}]") for s, c in enumerate(lists)]  # raises the precise error


def _oracle(flat: np.ndarray, sizes: list[int], low: bool) -> NBestOracle:
    """Oracles of the candidates' scores ``flat`` (float64, the lists' candidates one after
    another; ``sizes`` candidates per list): the first best candidate of each list, as the
    first entry of its stable ranking (NaN, as in a sort, last)."""
    scores = _split(flat, sizes)
    if flat.size and np.isnan(flat).any():   # argmax/argmin would pick a NaN
        index = np.array([r[0] for r in _rankings(scores, low)], dtype=np.int64)
    elif len(set(sizes)) == 1:
        mat = flat.reshape(len(sizes), sizes[0])
        index = (mat.argmin(axis=1) if low else mat.argmax(axis=1)).astype(np.int64, copy=False)
    else:
        index = np.array([int(x.argmin() if low else x.argmax()) for x in scores], dtype=np.int64)
    starts = np.cumsum([0, *sizes], dtype=np.int64)[:-1]
    return NBestOracle(index, flat[starts + index], scores, low)


def _split(flat: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    """``flat`` cut into consecutive views of ``sizes`` entries."""
    if len(set(sizes)) == 1:
        return list(flat.reshape(len(sizes), sizes[0]))
    cuts = np.cumsum([0, *sizes])
    return [flat[a:b] for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist())]


class NBestEntry(NamedTuple):
    """One line of a Moses n-best list: ``id ||| hypothesis ||| features ||| score``."""

    id: int
    hypothesis: str
    features: str
    score: float
    line: int


class NBestFormatError(UserError, ValueError):
    """A malformed line of a Moses n-best file (the message names file:line)."""


def parse_moses_nbest(lines: Iterable[str], name: str = "<n-best>") -> list[list[NBestEntry]]:
    """Moses n-best lines -> one list of entries per source id (0 .. max id; a source with no
    line gets an empty list). Lines of one id must be contiguous, ids ascending."""
    out: list[list[NBestEntry]] = []
    last = -1
    for no, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split(" ||| ")
        if len(fields) < 4:
            raise NBestFormatError(
                f"{name}:{no}: expected 'id ||| hypothesis ||| features ||| score' "
                f"(fields separated by ' ||| '), found {len(fields)} field(s)")
        sid, hyp, feats, score = fields[0].strip(), fields[1], fields[2].strip(), fields[3].strip()
        try:
            i = int(sid)
        except ValueError:
            raise NBestFormatError(f"{name}:{no}: sentence id {sid!r} is not an integer") from None
        if i < 0:
            raise NBestFormatError(f"{name}:{no}: sentence id {i} is negative")
        try:
            sc = float(score)
        except ValueError:
            raise NBestFormatError(f"{name}:{no}: total score {score!r} is not a number") from None
        if i < last:
            raise NBestFormatError(f"{name}:{no}: sentence id {i} after id {last}: the entries of "
                                   "a sentence must be contiguous, ids ascending")
        while len(out) <= i:
            out.append([])
        out[i].append(NBestEntry(i, hyp.strip(), feats, sc, no))
        last = i
    return out


def read_moses_nbest(path: str | Path, encoding: str = "utf-8") -> list[list[NBestEntry]]:
    """Read a Moses n-best file (``id ||| hypothesis ||| features ||| score``; .gz ok): one list
    of :class:`NBestEntry` per source. Malformed lines raise :class:`NBestFormatError` (a
    ValueError) naming ``file:line``; invalid UTF-8 likewise."""
    import gzip

    p = Path(path)
    opener: Any = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rb") as f:
        data = f.read()
    lines = []
    for no, raw in enumerate(data.split(b"\n"), 1):  # decoded per line: errors name their line
        try:
            lines.append(raw.decode(encoding))
        except UnicodeDecodeError as e:
            raise NBestFormatError(f"{p}:{no}: invalid {encoding}: {e.reason}") from None
    return parse_moses_nbest(lines, str(p))
