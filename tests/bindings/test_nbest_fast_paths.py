"""n-best oracle fast paths (issue 17): lists of strings checked in one pass over the joined
candidates, and candidates of every PEP 393 storage kind (1-byte ASCII / Latin-1, 2-byte,
4-byte) mixed in one list, with punctuation attached to words (the 13a fast path that splits
one leading / trailing mark off a plain body) and without, scored bit-identically to
sacrebleu 2.6.0's ``sentence_score`` for every tokenizer and smoothing option."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtscore import decoder

sacrebleu = pytest.importorskip("sacrebleu")

# words of each storage kind, with and without 13a pattern characters at either end or inside
WORDS = ["the", "cat", "sat", "mat.", "(on", "a)", "3,5", "1-2", "U.S.", "x,y", "\"quoted\"",
         "Straße", "Haus,", "über.", "«café»", "naïve", "\u201eHallo\u201c", "Ελλάδα.", "日本語",
         "東京,", "emoji\U0001F600", "(\U0001F600)", "a&b", "<tag>", "-", ".", "e.g.", "end-"]
TOKENIZERS = ["13a", "intl", "zh", "char", "none"]


def _kind(s: str) -> int:
    m = max(map(ord, s), default=0)
    return 1 if m < 256 else 2 if m < 65536 else 4


def _sentence(rng, words, n):
    return " ".join(rng.choice(words, size=n))


def _check(lists, refs, **opts):
    res = decoder.nbest_oracle(lists, refs, metric="bleu", **opts)
    sb = sacrebleu.metrics.BLEU(**{"effective_order": True, **opts})  # the sentence default
    for s, cands in enumerate(lists):
        want = np.array([sb.sentence_score(h, [refs[s]]).score for h in cands])
        got = res.scores[s]
        assert got.dtype == np.float64, (opts, s, got, want)
        assert np.array_equal(got.view(np.int64), want.view(np.int64)), (opts, s, got, want)
        assert list(res.ranking[s]) == list(np.argsort(-want, kind="stable"))


@pytest.mark.parametrize("tokenize", TOKENIZERS)
def test_mixed_storage_kinds_in_one_list_equal_sacrebleu(tokenize):
    rng = np.random.default_rng(17)
    lists, refs = [], []
    for _ in range(12):
        ref = _sentence(rng, WORDS, 9)
        cands = [_sentence(rng, WORDS, int(rng.integers(0, 12))) for _ in range(9)]
        cands += [ref, ref.upper(), "the cat sat", "Straße über.", "\u201eHallo\u201c the cat"]
        lists.append(cands)
        refs.append(ref)
    kinds = {_kind(c) for cands in lists for c in cands}
    assert kinds == {1, 2, 4}   # every storage kind is exercised, within the same lists
    _check(lists, refs, tokenize=tokenize, effective_order=True)


@pytest.mark.parametrize("smooth", ["exp", "floor", "add-k", "none"])
def test_smoothing_and_lowercase_equal_sacrebleu(smooth):
    rng = np.random.default_rng(3)
    lists = [[_sentence(rng, WORDS, int(rng.integers(1, 10))) for _ in range(6)] for _ in range(8)]
    refs = [_sentence(rng, WORDS, 8) for _ in range(8)]
    _check(lists, refs, smooth_method=smooth, lowercase=True)
    _check(lists, refs, smooth_method=smooth, effective_order=True)


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=24)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.one_of(_TEXT, st.sampled_from(WORDS)).map(str), min_size=1,
                         max_size=5), min_size=1, max_size=4),
       st.lists(st.one_of(_TEXT, st.sampled_from(WORDS)), min_size=4, max_size=4))
def test_adversarial_unicode_equal_sacrebleu(lists, refs):
    _check(lists, refs[:len(lists)], effective_order=True)


def test_nbest_type_errors_name_the_list_and_item():
    with pytest.raises(TypeError, match=r"nbest\[1\]\[2\] must be a str, got int"):
        decoder.nbest_oracle([["a"], ["b", "c", 3]], ["a", "b"])
    with pytest.raises(TypeError, match=r"nbest\[0\]\[0\] must be a str, got bytes"):
        decoder.nbest_oracle([(b"a",)], ["a"])                    # a tuple: the list-by-list path
    with pytest.raises(TypeError, match=r"nbest\[1\] must be a sequence of strings"):
        decoder.nbest_oracle([["a"], "b c"], ["a", "b"])
    with pytest.raises(TypeError, match="not a single string"):
        decoder.nbest_oracle("a b", ["a"])


def test_tuples_and_lists_score_alike():
    lists = [["the cat sat", "a cat."], ["Straße über.", "\u201eHallo\u201c"]]
    refs = ["the cat sat on the mat.", "Straße über \u201eHallo\u201c."]
    a = decoder.nbest_oracle(lists, refs, effective_order=True)
    b = decoder.nbest_oracle(tuple(tuple(c) for c in lists), refs, effective_order=True)
    for s in range(2):
        assert np.array_equal(a.scores[s], b.scores[s])


@pytest.mark.parametrize("block", [1, 5, 7, 10_000])
def test_blocks_of_whole_lists_equal_sacrebleu(monkeypatch, block):
    """nbest_oracle scores the candidates block by block (whole lists per block): ragged lists,
    a list longer than a block and one-candidate lists give sacrebleu's scores whatever the
    block size, and a bad candidate in a later block is still named by list and item."""
    from mtscore.bindings.decoder import nbest as impl

    monkeypatch.setattr(impl, "_NBEST_BLOCK", block)
    rng = np.random.default_rng(29)
    sizes = [1, 9, 3, 1, 12, 2, 6]
    lists = [[_sentence(rng, WORDS, int(rng.integers(0, 10))) for _ in range(k)] for k in sizes]
    refs = [_sentence(rng, WORDS, 8) for _ in sizes]
    _check(lists, refs, effective_order=True)
    bad = [list(c) for c in lists]
    bad[5][1] = 7
    with pytest.raises(TypeError, match=r"nbest\[5\]\[1\] must be a str, got int"):
        decoder.nbest_oracle(bad, refs)


def test_blocks_cover_every_list_once():
    from mtscore.bindings.decoder.nbest import _blocks

    assert _blocks([3, 3, 3], 4) == [(0, 2), (2, 3)]
    assert _blocks([5, 1, 1], 2) == [(0, 1), (1, 3)]
    assert _blocks([2, 2], 100) == [(0, 2)]
    assert _blocks([4], 4) == [(0, 1)]
    assert _blocks([], 4) == []
