"""``mtscore.testing.check_metric`` catches broken metrics: each toy below breaks one rule of
the metric contract, and check_metric must report exactly that check, with a message naming it
and the metric. A correct toy passes; every registered metric passes (test_metric_contract.py)."""
from __future__ import annotations

import time

import numpy as np
import pytest

import mtscore
from mtscore.engine.metrics.base import Metric, Score
from mtscore.engine.metrics.contract import CHECKS
from mtscore.testing import MetricContractError, check_metric, iter_checks
from tests.toy_metric import PreparedWords, WordRecall


class NotAdditive(WordRecall):
    """The corpus score is the mean of the sentence scores, not the score of the summed stats."""

    def corpus_score(self, hyps, refs=None, n_bootstrap: int = 1) -> Score:
        return Score("WordRecall", float(np.mean(self.scores_from_stats(self.corpus_stats(hyps, refs)))))


class DependsOnTheCorpus(WordRecall):
    """A row is normalised by the corpus size: it depends on the other segments."""

    def stats(self, hyps, prepared: PreparedWords) -> np.ndarray:
        out = super().stats(hyps, prepared)
        out[:, 1] *= len(out)
        return out


class NotDeterministic(WordRecall):
    """Each call counts one more word found."""

    calls = 0

    def stats(self, hyps, prepared: PreparedWords) -> np.ndarray:
        type(self).calls += 1
        out = super().stats(hyps, prepared)
        out[:, 0] += type(self).calls % 2
        return out


class SentenceDisagrees(WordRecall):
    """A 'fast' sentence path that rounds (the corpus path does not)."""

    def _sentence_score_kernel(self, hyp, refs):
        return Score("WordRecall", round(self.corpus_score([hyp], [[r] for r in refs]).score))


class RoundedRowScores(WordRecall):
    """scores_from_stats rounds; compute_score_from_stats does not."""

    def _scores_of_checked(self, stats: np.ndarray) -> np.ndarray:
        return np.round(super()._scores_of_checked(stats))


class WrongColumns(WordRecall):
    """Declares 3 statistics columns and returns 2."""

    def stats_columns(self) -> int:
        return 3


class ModifiesItsInput(WordRecall):
    """Reverses the caller's hypothesis list after scoring it."""

    def corpus_stats(self, hyps, refs=None):
        out = super().corpus_stats(hyps, refs)
        if isinstance(hyps, list):
            hyps.reverse()
        return out


class IgnoresMissingReferences(WordRecall):
    """Scores a segment without references as if its reference were empty (no policy)."""

    def stats(self, hyps, prepared: PreparedWords) -> np.ndarray:
        hyps = self._coerce_hyps(hyps)
        return np.array([self._row(h, sets) for h, sets in zip(hyps, prepared.sets)],
                        dtype=np.int64).reshape(len(hyps), 2)


class NotThreadSafe(WordRecall):
    """Claims a slot in shared state and sleeps: a concurrent call shifts its counts."""

    def __init__(self) -> None:
        super().__init__()
        self._claimed = 0

    def stats(self, hyps, prepared: PreparedWords) -> np.ndarray:
        start = self._claimed
        self._claimed = start + 1
        time.sleep(0.02)
        out = super().stats(hyps, prepared)
        out[:, 0] += self._claimed - start - 1  # 0 unless another call claimed meanwhile
        return out


class ScoresAnEmptyCorpus(WordRecall):
    """Returns 0 for an empty corpus instead of refusing it."""

    def corpus_score(self, hyps, refs=None, n_bootstrap: int = 1) -> Score:
        if len(hyps) == 0:
            return Score("WordRecall", 0.0)
        return super().corpus_score(hyps, refs, n_bootstrap)


BROKEN = {
    NotAdditive: ("additive", "summed statistics"),
    DependsOnTheCorpus: ("additive", "must not depend on the other segments"),
    NotDeterministic: ("deterministic", "differs between two"),
    SentenceDisagrees: ("sentence_score", "sentence_score .* != corpus_score of the one segment"),
    RoundedRowScores: ("scores_from_stats", "scores_from_stats .* != per-row scores"),
    WrongColumns: ("stats_matrix", "stats_columns\\(\\) says 3"),
    ModifiesItsInput: ("inputs_unmodified", "hypotheses were modified"),
    IgnoresMissingReferences: ("missing_references", "did not raise MissingReferenceError"),
    NotThreadSafe: ("thread_safe", "4 threads"),
    ScoresAnEmptyCorpus: ("empty_corpus", "empty corpus did not raise"),
}


def test_a_correct_metric_passes():
    assert check_metric(WordRecall()) is None
    assert check_metric(WordRecall(), hyps=["a b", "c d e", ""], refs=[["a", "c d", "x"], [None, "e", None]]) is None


@pytest.mark.parametrize("klass", list(BROKEN), ids=lambda k: k.__name__)
def test_each_broken_metric_fails_its_check(klass):
    check, message = BROKEN[klass]
    with pytest.raises(MetricContractError, match=message) as e:
        check_metric(klass())
    assert e.value.check == check
    assert e.value.metric == klass.__name__
    assert f"{klass.__name__} fails the metric contract check {check!r}" in str(e.value)
    assert isinstance(e.value, AssertionError)


def test_an_object_that_is_not_a_metric_fails_the_first_check():
    with pytest.raises(MetricContractError, match="does not derive from") as e:
        check_metric(object())  # type: ignore[arg-type]
    assert e.value.check == "is_a_metric"


def test_the_contract_hooks_are_abstract():
    class NoScore(Metric):
        def prepare(self, refs, rows=None):
            return None

        def stats(self, hyps, prepared):
            return np.zeros((0, 1))

    with pytest.raises(TypeError, match="compute_score_from_stats"):
        NoScore()  # type: ignore[abstract]


def test_check_metric_leaves_the_metric_as_it_was():
    m = mtscore.BLEU(missing_refs="error")
    before = dict(m.__dict__)
    check_metric(m)
    assert m.__dict__ == before


def test_iter_checks_lists_every_check_and_runs_one():
    checks = list(iter_checks(WordRecall()))
    assert [name for name, _ in checks] == [name for name, _ in CHECKS]
    dict(checks)["additive"]()
    with pytest.raises(MetricContractError, match="'additive'"):
        dict(iter_checks(NotAdditive()))["additive"]()


@pytest.mark.parametrize(("hyps", "refs", "message"), [
    (["a", "b", "c"], None, "both hyps and refs"),
    (["a", "b"], [["a", "b"]], "at least 3 segments"),
    (["a", "b", "c"], [["a", "b"]], "K >= 1 streams of 3"),
    (["a", "b", "c"], [["a", None, "c"]], "every segment needs a reference"),
])
def test_a_bad_sample_is_refused(hyps, refs, message):
    with pytest.raises(ValueError, match=message):
        check_metric(WordRecall(), hyps=hyps, refs=refs)
