"""All-pairs sentence scores (:func:`pairwise`): matrices in the spirit of
``rapidfuzz.process.cdist``, one group or many (MBR, consensus), through
``Metric.pairwise_scores`` (all-pairs kernels for BLEU, chrF/chrF++ and TER; the batch path for
other metrics)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...engine.metrics.base import Metric
from .arguments import check_workers, resolve_metric, texts

__all__ = ["pairwise"]


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
    check_workers(workers)
    m = resolve_metric(metric, options)
    if groups is None:
        if candidates is None:
            raise ValueError("pairwise: give candidates (and optionally references) or groups=")
        cand = texts(candidates, "candidates")
        refs = None if references is None else texts(references, "references")
        return m.pairwise_scores(cand, refs, workers=workers)
    if candidates is not None or references is not None:
        raise ValueError("pairwise: give either candidates/references or groups=, not both")
    jobs: list[tuple] = []
    for g, grp in enumerate(groups):
        if isinstance(grp, tuple):
            if len(grp) != 2:
                raise ValueError(f"groups[{g}]: a tuple group must be (candidates, references)")
            jobs.append((texts(grp[0], f"groups[{g}][0]"), texts(grp[1], f"groups[{g}][1]")))
        else:
            jobs.append((texts(grp, f"groups[{g}]"), None))
        if not jobs[-1][0] or (jobs[-1][1] is not None and not jobs[-1][1]):
            raise ValueError(f"groups[{g}] is empty: every group needs at least one sample")
    from ...engine.parallel import resolve_workers, run_parallel

    w = resolve_workers(workers)
    if w > 1 and len(jobs) >= w:  # whole groups per thread
        mats = run_parallel(lambda j: m.pairwise_scores(j[0], j[1], workers=1), jobs, w)
    else:
        mats = [m.pairwise_scores(c, r, workers=w) for c, r in jobs]
    if mats and all(x.shape == mats[0].shape for x in mats):
        return np.stack(mats)
    return mats
