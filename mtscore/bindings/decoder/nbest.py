"""Oracle selection and metric ranking of n-best lists (:func:`nbest_oracle`,
:class:`NBestOracle`): every candidate of every source scored in one batch, block by block of
whole lists, the references of a source prepared once."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain

import numpy as np

from ...engine.metrics.base import Metric
from ...kernels._lists import first_non_str
from .arguments import lower_is_better, resolve_metric, texts
from .sentences import ref_streams, sentence_scores

__all__ = ["NBestOracle", "nbest_oracle"]


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
        prepared = m.prepare(ref_streams(references, len(lists), "per_hyp"))
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
    return [texts(c, f"nbest[{s}]") for s, c in enumerate(lists)]  # raises the precise error


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
