"""TER ``corpus_score`` with references in the call: the one-kernel path
(``_ter_fused.ter_corpus_plain``, each pair interned on its own) against sacrebleu 2.6.0 and against
the general path (``corpus_stats`` + ``sum_stats``), for every option set it serves and the
cases it hands back to the general path (None references, several streams, bootstrap,
``normalized``)."""
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER as SacreTER

from mtscore.engine.metrics.ter import TER

OPTION_SETS = [
    {},
    {"no_punct": True},
    {"asian_support": True},
    {"no_punct": True, "asian_support": True},
    {"case_sensitive": True},
    {"no_punct": True, "asian_support": True, "case_sensitive": True},
    {"normalized": True},  # general path
]

# capital sigma (final-sigma rule: Python's lower()), dotted I (two code points), astral,
# CJK, full-width and ASCII punctuation, NBSP / ideographic space, Latin-1 capitals
_WORDS = ["ΟΔΟΣ", "Σ", "İstanbul", "𝐀b", "漢字", "，", "Ab.", "a,b", "ÉTÉ", "x\u00a0y", "\u3000",
          "the", "The", "cat", "sat", "on", "mat", "!", "'s", "Ǆ", "ß", "ﬁ"]
_SEG = st.lists(st.sampled_from(_WORDS), max_size=9).map(" ".join)


def _general(metric, hyps, refs):
    return metric.compute_score_from_stats(metric.sum_stats(metric.corpus_stats(hyps, refs)))


def _same(ours, theirs):
    assert (ours.score, ours.num_edits, ours.ref_length) == \
        (theirs.score, theirs.num_edits, theirs.ref_length)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_SEG, _SEG), min_size=1, max_size=6), st.sampled_from(OPTION_SETS))
def test_one_kernel_corpus_score_equals_sacrebleu_and_general_path(pairs, opts):
    hyps, refs = [h for h, _ in pairs], [[r for _, r in pairs]]
    ours, theirs = TER(**opts), SacreTER(**opts)
    got = ours.corpus_score(hyps, refs)
    _same(got, theirs.corpus_score(hyps, refs))
    _same(got, _general(TER(**opts), hyps, refs))
    assert str(ours.get_signature()) == str(theirs.get_signature())


def test_cases_left_to_the_general_path_still_equal_sacrebleu():
    hyps = ["the cat sat on the mat", "ΟΔΟΣ ΣΑΣ", "a b c d"]
    two = [["cat the sat on mat", "οδος σας", "d c b a"], ["the mat", "x", "a b"]]
    _same(TER().corpus_score(hyps, two), SacreTER().corpus_score(hyps, two))
    _same(TER(workers=2).corpus_score(hyps, two[:1]), SacreTER().corpus_score(hyps, two[:1]))
    with_none = [["cat the sat", None, "d c b a"], ["x", "y", None]]
    _same(TER().corpus_score(hyps, with_none), SacreTER().corpus_score(hyps, with_none))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skipped = TER(missing_refs="skip").corpus_score(hyps, [["cat the", None, "d c"]])
    _same(skipped, SacreTER().corpus_score([hyps[0], hyps[2]], [["cat the", "d c"]]))
    boot = TER().corpus_score(hyps, two[:1], n_bootstrap=20)
    _same(boot, SacreTER().corpus_score(hyps, two[:1]))


def test_one_kernel_path_reports_bad_input_like_the_general_path():
    with pytest.raises(ValueError, match="empty corpus"):
        TER().corpus_score([], [[]])
    with pytest.raises(TypeError, match="element 1 is int"):
        TER().corpus_score(["a", 3], [["a", "b"]])
    with pytest.raises(ValueError, match="line-count mismatch"):
        TER().corpus_score(["a", "b"], [["a"]])


def test_lists_are_scored_without_copies_but_still_checked():
    """Lists of one reference stream go to the kernel as they are (no coercing copies); an
    element that is not exactly a str (a str subclass, None) sends the call through the
    coercing path, with the same result."""
    import numpy as np

    hyps, refs = ["the cat sat", "a b c d", "ΟΔΟΣ ΣΑΣ"], ["cat the sat", "d c b a", "οδος σας"]
    expected = SacreTER().corpus_score(hyps, [refs])
    _same(TER().corpus_score(hyps, [refs]), expected)
    _same(TER().corpus_score(hyps, (refs,)), expected)
    _same(TER().corpus_score([np.str_(h) for h in hyps], [refs]), expected)
    _same(TER().corpus_score(hyps, [[np.str_(r) for r in refs]]), expected)
    _same(TER().corpus_score(tuple(hyps), [tuple(refs)]), expected)
