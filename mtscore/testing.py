"""Testing helpers for metric authors: :func:`check_metric` runs the metric contract's checks
on any metric, in the spirit of scikit-learn's ``check_estimator``.

Imports nothing until called (``import mtscore.testing`` stays cheap)."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from .engine.metrics.base import Metric

#: and MetricContractError (an AssertionError naming the failed check), imported when first used
__all__ = ["check_metric", "iter_checks"]


def check_metric(metric: Metric, *, hyps: Sequence[str] | None = None,
                 refs: Sequence[Sequence[str | None]] | None = None) -> None:
    """Check that ``metric`` keeps the metric contract of ``mtscore.engine.metrics.base.Metric``;
    None on success, else :class:`MetricContractError` (an AssertionError) naming the failed
    check and the metric.

    The checks (``mtscore.engine.metrics.contract.CHECKS``) score a small multilingual sample
    (Latin, Cyrillic, Arabic, CJK, empty strings; K = 2 reference streams with None in one)
    or ``hyps`` (N >= 3 str) with ``refs`` (K streams of N str-or-None, every segment with a
    reference), each on a shallow copy of ``metric``, and require, bit for bit:

    * ``prepare``/``stats``: an ``(N, k)`` numeric matrix, k as ``stats_columns()`` declares;
    * deterministic statistics; the corpus score is the score of the summed statistics; a
      segment's row does not depend on the other segments (additivity);
    * ``scores_from_stats`` = ``compute_score_from_stats`` row by row = ``stats_and_scores``;
    * ``sentence_score(hyp, refs)`` = a one-segment corpus = the segment's row score, and
      TypeErrors for a non-str hypothesis or a str of references;
    * ``pairwise_scores``, ``prepared.slice``, ``systems_stats`` and ``resampled_scores`` agree
      with the plain paths;
    * the ``missing_refs`` policy: MissingReferenceError naming the segment ("error"), a
      MissingReferenceWarning with the count and a zero row ("skip");
    * an empty corpus is a ValueError; scoring from 4 threads gives the serial numbers; inputs
      are not modified; ``get_signature()`` formats after scoring.

    Example::

        >>> import mtscore
        >>> from mtscore.testing import check_metric
        >>> check_metric(mtscore.CHRF())            # passes: returns None
        >>> check_metric(mtscore.BLEU(), hyps=["a b c", "d e", "f"],
        ...              refs=[["a b c", "d", "f g"]])
    """
    from .engine.metrics.contract import check_metric as run

    run(metric, hyps=hyps, refs=refs)


def iter_checks(metric: Metric, *, hyps: Sequence[str] | None = None,
                refs: Sequence[Sequence[str | None]] | None = None) -> Iterator[tuple[str, Callable[[], None]]]:
    """The checks of :func:`check_metric` without running them: ``(name, callable)`` pairs
    (scikit-learn's ``generate_only``), e.g. to parametrize a test suite over them."""
    from .engine.metrics.contract import iter_checks as checks

    return checks(metric, hyps=hyps, refs=refs)


def __getattr__(name: str) -> Any:
    if name == "MetricContractError":
        from .engine.metrics.contract import MetricContractError

        return MetricContractError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
