"""The metric contract's checks, run on any :class:`~.base.Metric` (scikit-learn's
``check_estimator`` for mtscore metrics); the public face is ``mtscore.testing.check_metric``.

Each check scores a small multilingual sample (or the caller's) on a shallow copy of the metric
and compares two paths that the contract says agree, bit for bit: per-segment statistics that
are additive and independent of the other segments, ``scores_from_stats`` and
``compute_score_from_stats``, ``sentence_score`` and a one-segment corpus, prepared slices, the
several-systems path, vectorised resampled scores, the ``missing_refs`` policy, deterministic
and thread-safe scoring, and inputs left unmodified. A failure raises
:class:`MetricContractError` naming the check and the metric."""
from __future__ import annotations

import copy
import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np

from .base import Metric, MissingReferenceError, MissingReferenceWarning

__all__ = ["CHECKS", "SAMPLE_HYPS", "SAMPLE_OTHER", "SAMPLE_REFS", "MetricContractError",
           "check_metric", "iter_checks"]

#: the built-in sample: N = 8 segments in several scripts, an empty hypothesis and reference, a
#: repeated word, digits and punctuation; ``SAMPLE_OTHER`` is a second system for the same
#: segments; ``SAMPLE_REFS`` has K = 2 streams, the second with None (every segment keeps one)
SAMPLE_HYPS = ("the cat sat on the mat", "Der Hund bellt heute sehr laut.", "",
               "猫がマットの上に座った。", "今天下雨了", "Привет, мир! Как дела?",
               "the the the", "القطة على الحصيرة 42 %")
SAMPLE_OTHER = ("the cat is on the mat", "Der Hund bellt.", "nothing", "猫が座った。", "",
                "Привет мир", "the", "القطة 42%")
SAMPLE_REFS = (("the cat is on the mat", "Der Hund bellte heute laut.", "",
                "猫はマットの上に座っていた。", "今天在下雨", "Привет, мир!", "the cat",
                "القطة على الحصيرة 42 %"),
               ("there is a cat on the mat", None, "nothing", None, "今天下雨", "Здравствуй, мир.",
                "the the", None))


class MetricContractError(AssertionError):
    """A metric broke the contract: ``check`` names the failed check, ``metric`` the class."""

    def __init__(self, check: str, metric: str, message: str):
        super().__init__(f"{metric} fails the metric contract check {check!r}: {message}")
        self.check = check
        self.metric = metric


class _Sample:
    """The checks' inputs: hypotheses (N,), a second system (N,), K reference streams (N,)."""

    def __init__(self, hyps: Sequence[str] | None, refs: Sequence[Sequence[str | None]] | None):
        if (hyps is None) != (refs is None):
            raise ValueError("check_metric: give both hyps and refs, or neither (the built-in sample)")
        other: Sequence[str]
        if hyps is None or refs is None:
            hyps, refs, other = SAMPLE_HYPS, SAMPLE_REFS, SAMPLE_OTHER
        else:
            if len(hyps) < 3:
                raise ValueError(f"check_metric: hyps needs at least 3 segments, got {len(hyps)}")
            if not refs or any(len(st) != len(hyps) for st in refs):
                raise ValueError(f"check_metric: refs must be K >= 1 streams of {len(hyps)} segments")
            if any(all(st[i] is None for st in refs) for i in range(len(hyps))):
                raise ValueError("check_metric: every segment needs a reference (the missing_refs "
                                 "check makes its own missing one)")
            other = (*hyps[1:], hyps[0])
        self._hyps = tuple(hyps)
        self._other = tuple(other)
        self._refs = tuple(tuple(st) for st in refs)
        self.n = len(self._hyps)

    # fresh lists on each access: a metric that modifies its input spoils no other check's data
    # (check_inputs_unmodified is the one that reports it)
    @property
    def hyps(self) -> list[str]:
        return list(self._hyps)

    @property
    def other(self) -> list[str]:
        return list(self._other)

    @property
    def refs(self) -> list[list[str | None]]:
        return [list(st) for st in self._refs]

    def seg_refs(self, i: int) -> list[str]:
        """Segment ``i``'s references, None left out."""
        return [r for r in (st[i] for st in self._refs) if r is not None]


def _expect(condition: bool, message: str) -> None:
    """``assert condition, message`` that ``python -O`` keeps."""
    if not condition:
        raise AssertionError(message)


def _same(a: Any, b: Any) -> bool:
    """Bit-level equality of two scores or arrays, NaN equal to NaN."""
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        return False
    if x.dtype.kind == "f" or y.dtype.kind == "f":
        return bool(np.array_equal(x.astype(np.float64), y.astype(np.float64), equal_nan=True))
    return bool(np.array_equal(x, y))


def _fresh(metric: Metric) -> Metric:
    """A shallow copy with no cached references, so a check leaves ``metric`` as it was."""
    m = copy.copy(metric)
    m._ref_cache = None
    return m


class _QuietSentenceAdvice(logging.Filter):
    """Drops BLEU's advice to use effective order, which every sentence_score call logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "effective_order" not in record.getMessage()


def _sentence(m: Metric, hyp: Any, refs: Any) -> Any:
    log = logging.getLogger("mtscore")
    quiet = _QuietSentenceAdvice()
    log.addFilter(quiet)
    try:
        return m.sentence_score(hyp, refs)
    finally:
        log.removeFilter(quiet)


# ---- the checks: each takes the metric and the sample, asserts with a message -------------
def check_is_a_metric(metric: Metric, s: _Sample) -> None:
    """The object derives from the contract's abstract base (its hooks are implemented)."""
    _expect(isinstance(metric, Metric),
            f"{type(metric).__name__} does not derive from mtscore.engine.metrics.base.Metric")
    _expect(isinstance(metric.lower_is_better, bool), "lower_is_better must be a bool")


def check_stats_matrix(metric: Metric, s: _Sample) -> None:
    """``stats`` is an (N, k) matrix of numbers with the declared k; prepared.n is N."""
    m = _fresh(metric)
    prepared = m.prepare(s.refs)
    _expect(prepared.n == s.n, f"prepare(refs).n is {prepared.n}, expected {s.n} segments")
    _expect(prepared.missing() is None,
            "prepared.missing() must be None when every segment has a reference")
    st = m.stats(s.hyps, prepared)
    _expect(isinstance(st, np.ndarray),
            f"stats returned {type(st).__name__}, not a numpy array")
    _expect(st.ndim == 2, f"stats must be 2-D (N, k), got shape {st.shape}")
    _expect(st.shape[0] == s.n, f"stats has {st.shape[0]} rows for {s.n} hypotheses")
    _expect(st.dtype.kind in "iuf", f"stats dtype {st.dtype} is not numeric")
    k = m.stats_columns()
    _expect(k is None or st.shape[1] == k,
            f"stats has {st.shape[1]} columns, stats_columns() says {k}")
    m.check_stats(st)  # whole numbers where integer_stats
    try:
        m.check_stats(np.zeros((2, st.shape[1] + 1)) if k is not None else np.zeros(3))
    except (ValueError, TypeError):
        pass
    else:
        raise AssertionError("check_stats accepted a matrix of the wrong shape")


def check_deterministic(metric: Metric, s: _Sample) -> None:
    """Scoring the same input twice, or on another copy of the metric, gives the same numbers."""
    a, b = _fresh(metric), _fresh(metric)
    st = a.corpus_stats(s.hyps, s.refs)
    _expect(_same(st, a.corpus_stats(s.hyps, s.refs)),
            "corpus_stats differs between two calls")
    _expect(_same(st, b.corpus_stats(s.hyps, s.refs)),
            "corpus_stats differs between two copies")
    _expect(_same(a.corpus_score(s.hyps, s.refs).score, b.corpus_score(s.hyps, s.refs).score),
            "corpus_score differs between two calls")


def check_additive(metric: Metric, s: _Sample) -> None:
    """The corpus score is the score of the summed statistics, and each segment's row does not
    depend on the other segments (scored alone or in part of the corpus, it is the same)."""
    m = _fresh(metric)
    st = m.corpus_stats(s.hyps, s.refs)
    whole = m.compute_score_from_stats(m.sum_stats(st)).score
    corpus = m.corpus_score(s.hyps, s.refs).score
    _expect(_same(corpus, whole),
            f"corpus_score {corpus!r} != compute_score_from_stats(sum_stats(stats)) {whole!r}: the "
            "corpus score must follow from the summed statistics")
    half = s.n // 2
    parts = [m.corpus_stats(s.hyps[a:z], [st_[a:z] for st_ in s.refs]) for a, z in ((0, half), (half, s.n))]
    joined = np.concatenate(parts)
    _expect(_same(joined, st),
            "statistics of the two halves of the corpus differ from the whole corpus' rows: a "
            "segment's statistics must not depend on the other segments")
    for i in range(s.n):
        one = m.corpus_stats([s.hyps[i]], [[st_[i]] for st_ in s.refs])
        _expect(_same(one[0], st[i]),
                f"segment {i} scored alone has statistics {one[0].tolist()}, in the corpus {st[i].tolist()}")


def check_scores_from_stats(metric: Metric, s: _Sample) -> None:
    """``scores_from_stats`` equals ``compute_score_from_stats`` row by row."""
    m = _fresh(metric)
    st = m.stats(s.hyps, m.prepare(s.refs))
    want = [m.compute_score_from_stats([x.item() for x in row]).score for row in st]
    got = m.scores_from_stats(st)
    _expect(isinstance(got, np.ndarray) and got.shape == (s.n,),
            "scores_from_stats must be (N,) float64")
    _expect(_same(got, want), f"scores_from_stats {got.tolist()} != per-row scores {want}")


def check_stats_and_scores(metric: Metric, s: _Sample) -> None:
    """``stats_and_scores`` is ``stats`` plus ``scores_from_stats`` in one pass."""
    m = _fresh(metric)
    prepared = m.prepare(s.refs)
    st, sc = m.stats_and_scores(s.hyps, prepared)
    _expect(_same(st, m.stats(s.hyps, prepared)),
            "stats_and_scores' statistics differ from stats")
    _expect(_same(sc, m.scores_from_stats(st)),
            "stats_and_scores' scores differ from scores_from_stats")
    st2, _ = m.stats_and_scores(s.hyps, prepared, sentence_level=False)
    _expect(_same(st2, st), "stats_and_scores(sentence_level=False) changes the statistics")


def check_sentence_score(metric: Metric, s: _Sample) -> None:
    """``sentence_score(hyp, refs)`` equals a one-segment corpus and the segment's row score."""
    m = _fresh(metric)
    rows = m.scores_from_stats(m.corpus_stats(s.hyps, s.refs))
    for i in range(s.n):
        refs = s.seg_refs(i)
        got = _sentence(m, s.hyps[i], refs).score
        one = m.corpus_score([s.hyps[i]], [[r] for r in refs]).score
        _expect(_same(got, one),
                f"segment {i}: sentence_score {got!r} != corpus_score of the one segment {one!r}")
        _expect(_same(got, rows[i]),
                f"segment {i}: sentence_score {got!r} != scores_from_stats of its corpus row {rows[i]!r}")
        as_tuple = _sentence(m, s.hyps[i], tuple(refs)).score
        _expect(_same(as_tuple, got),
                f"segment {i}: sentence_score of a tuple of references differs")
    for bad in ((1, ["a"]), ("a", "a")):
        try:
            _sentence(m, *bad)
        except TypeError:
            continue
        raise AssertionError(f"sentence_score{bad!r} did not raise TypeError")


def check_pairwise(metric: Metric, s: _Sample) -> None:
    """Cell (i, j) of ``pairwise_scores`` is the score of ``rows[i]`` against ``cols[j]`` as a
    one-segment corpus (which the sentence_score check ties to ``sentence_score``)."""
    m = _fresh(metric)
    rows, cols = s.hyps[:4], [r for r in s.refs[0][:3] if r is not None]
    got = m.pairwise_scores(rows, cols)
    _expect(got.shape == (len(rows), len(cols)), f"pairwise_scores shape {got.shape}")
    for i, h in enumerate(rows):
        for j, r in enumerate(cols):
            want = m.scores_from_stats(m.corpus_stats([h], [[r]]))[0]
            _expect(_same(got[i, j], want),
                    f"pairwise_scores[{i}, {j}] {got[i, j]!r} != the one-segment score {want!r}")


def check_prepared_slice(metric: Metric, s: _Sample) -> None:
    """``prepared.slice(a, z)`` scores like rows a:z of the whole."""
    m = _fresh(metric)
    prepared = m.prepare(s.refs)
    whole = m.stats(s.hyps, prepared)
    a, z = 1, min(s.n, 4)
    part = prepared.slice(a, z)
    _expect(part.n == z - a, f"prepared.slice({a}, {z}).n is {part.n}")
    _expect(_same(m.stats(s.hyps[a:z], part), whole[a:z]),
            f"stats of prepared.slice({a}, {z}) differ")


def check_systems(metric: Metric, s: _Sample) -> None:
    """Several systems against one prepared reference set score like each system alone."""
    m = _fresh(metric)
    alone = [m.corpus_stats(s.hyps, s.refs), m.corpus_stats(s.other, s.refs)]
    m.prepare_references(s.refs)
    for got, want in zip(m.systems_stats([s.hyps, s.other]), alone):
        _expect(_same(got, want), "systems_stats (cached references) differs from corpus_stats")
    for got, want in zip(_fresh(metric).systems_stats([s.hyps, s.other], s.refs), alone):
        _expect(_same(got, want), "systems_stats (references given) differs from corpus_stats")


def check_resampled_scores(metric: Metric, s: _Sample) -> None:
    """Vectorised ``resampled_scores`` (where a metric has them) match the scalar path."""
    m = _fresh(metric)
    st = m.stats(s.hyps, m.prepare(s.refs))
    h = s.n // 2
    sums = np.stack([st[:h].sum(0), st[h:].sum(0), st.sum(0), st[[0, 0, s.n - 1]].sum(0)])
    res = m.resampled_scores(sums)
    if res is None:  # no vectorised formula: the significance tests score row by row
        return
    got = [float(x) for x in res.scalars()]
    want = [m.compute_score_from_stats(row.copy()).score for row in sums]
    _expect(_same(got, want), f"resampled_scores {got} != compute_score_from_stats {want}")


def check_missing_references(metric: Metric, s: _Sample) -> None:
    """A segment without references raises under ``missing_refs="error"``; under "skip" it
    warns with the count and gets a zero row."""
    refs = [[None if i == 1 else r for i, r in enumerate(st)] for st in s.refs]
    m = _fresh(metric)
    m.missing_refs = "error"
    try:
        m.corpus_stats(s.hyps, refs)
    except MissingReferenceError as e:
        _expect("segment 1 " in str(e), f"the error does not name segment 1: {e}")
    else:
        raise AssertionError("missing_refs='error': a segment without references did not raise "
                             "MissingReferenceError")
    try:
        _sentence(m, s.hyps[1], [None])
    except MissingReferenceError:
        pass
    else:
        raise AssertionError("missing_refs='error': sentence_score(hyp, [None]) did not raise "
                             "MissingReferenceError")
    m.missing_refs = "skip"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        st = m.corpus_stats(s.hyps, refs)
    said = [str(w.message) for w in caught if issubclass(w.category, MissingReferenceWarning)]
    _expect(any(f"1 of {s.n}" in w for w in said),
            f"missing_refs='skip': no MissingReferenceWarning saying '1 of {s.n}' (got {said})")
    _expect(not st[1].any(),
            f"missing_refs='skip': the skipped segment's row is {st[1].tolist()}, not zeros")


def check_empty_corpus(metric: Metric, s: _Sample) -> None:
    """An empty corpus is a ValueError, not a score."""
    try:
        _fresh(metric).corpus_score([], [[] for _ in s.refs])
    except ValueError:
        return
    raise AssertionError("corpus_score of an empty corpus did not raise ValueError")


def check_thread_safe(metric: Metric, s: _Sample) -> None:
    """One metric object scoring from several threads at once gives the serial numbers."""
    m = _fresh(metric)
    want = m.corpus_stats(s.hyps, s.refs)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: m.corpus_stats(s.hyps, s.refs), range(8)))
    _expect(all(_same(g, want) for g in got),
            "corpus_stats from 4 threads differs from the serial result")


def check_inputs_unmodified(metric: Metric, s: _Sample) -> None:
    """Scoring does not modify the caller's hypothesis and reference lists."""
    hyps, other, refs = list(s.hyps), list(s.other), [list(st) for st in s.refs]
    m = _fresh(metric)
    m.corpus_score(hyps, refs)
    m.systems_stats([hyps, other], refs)
    m.prepare_references(refs)
    m.corpus_stats(hyps)
    one = list(s.seg_refs(0))
    _sentence(m, hyps[0], one)
    _expect(hyps == s.hyps and other == s.other, "the hypotheses were modified")
    _expect(refs == s.refs, "the references were modified")
    _expect(one == s.seg_refs(0), "sentence_score modified its references")


def check_signature(metric: Metric, s: _Sample) -> None:
    """After scoring, ``get_signature()`` formats with ``nrefs``; ``option_fields`` are strings."""
    m = _fresh(metric)
    m.corpus_score(s.hyps, s.refs)
    text = m.get_signature().format()
    _expect(isinstance(text, str) and "nrefs:" in text,
            f"get_signature().format() is {text!r}")
    fields = m.option_fields()
    _expect(all(isinstance(k, str) and isinstance(v, str) for k, v in fields.items()),
            f"option_fields() must map str to str, got {fields!r}")


#: (name, check) in the order :func:`check_metric` runs them
CHECKS: tuple[tuple[str, Callable[[Metric, _Sample], None]], ...] = (
    ("is_a_metric", check_is_a_metric),
    ("stats_matrix", check_stats_matrix),
    ("deterministic", check_deterministic),
    ("additive", check_additive),
    ("scores_from_stats", check_scores_from_stats),
    ("stats_and_scores", check_stats_and_scores),
    ("sentence_score", check_sentence_score),
    ("pairwise", check_pairwise),
    ("prepared_slice", check_prepared_slice),
    ("systems", check_systems),
    ("resampled_scores", check_resampled_scores),
    ("missing_references", check_missing_references),
    ("empty_corpus", check_empty_corpus),
    ("thread_safe", check_thread_safe),
    ("inputs_unmodified", check_inputs_unmodified),
    ("signature", check_signature),
)


def _run(name: str, check: Callable[[Metric, _Sample], None], metric: Metric, s: _Sample) -> None:
    owner = type(metric).__name__
    try:
        check(metric, s)
    except MetricContractError:
        raise
    except AssertionError as e:
        raise MetricContractError(name, owner, str(e) or "assertion failed") from e
    except Exception as e:
        raise MetricContractError(name, owner, f"raised {type(e).__name__}: {e}") from e


def iter_checks(metric: Metric, *, hyps: Sequence[str] | None = None,
                refs: Sequence[Sequence[str | None]] | None = None) -> Iterator[tuple[str, Callable[[], None]]]:
    """``(check name, callable)`` for each check of :data:`CHECKS` on ``metric``; calling one
    runs it (raising :class:`MetricContractError`), so a test suite can parametrize over them."""
    sample = _Sample(hyps, refs)
    for name, check in CHECKS:
        yield name, partial(_run, name, check, metric, sample)


def check_metric(metric: Metric, *, hyps: Sequence[str] | None = None,
                 refs: Sequence[Sequence[str | None]] | None = None) -> None:
    """Run every check of the metric contract on ``metric`` (see ``mtscore.testing``)."""
    for _, run in iter_checks(metric, hyps=hyps, refs=refs):
        run()
