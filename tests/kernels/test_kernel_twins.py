"""Every compiled kernel function against its plain-Python twin in ``mtscore/kernels/reference``
(same module name without the underscore, same function name and signature), on the same inputs:

* ``wmt``: real newstest/florestest 2021 segments (system outputs with their references, many
  scripts) from ``$MTSCORE_DATA``; skipped, saying why, when the data is absent;
* ``unicode``: hypothesis-generated adversarial Unicode (every character the tokenizers' rules
  look at, whitespace oddities, astral characters, lone surrogates, entity and ``<skipped>``
  fragments) and adversarial arrays for the numeric kernels.

Results must be equal: same arrays (dtype and values; floats bit for bit except the BERTScore
matcher, whose twin sums with math.fsum), same errors. Kernels that take statistics or
embeddings get them derived from the drawn text (the stats kernels' output on it) or drawn
directly. The checks are split by kernel family: this file (``_text``, ``_text_vocab``,
``_lists``), ``test_kernel_twins_ngram.py``, ``_ter.py`` and ``_edit.py``, on the shared harness
``twins_harness.py``; ``test_kernel_twins_spec.py`` holds the coverage test and the twins' own
anchors to their specification (sacrebleu, numpy, regex), which keep a twin honest where
kernel == twin alone could not.
"""
from __future__ import annotations

import unicodedata

import numpy as np
import pytest
import twins_harness as th
from hypothesis import strategies as st

from mtscore.kernels import (
    _text,
    _text_vocab,
)
from mtscore.kernels.reference import (
    text,
    text_vocab,
)

CASES: dict[str, tuple] = {}  # kernel function -> (check, examples)
case = th.case_registry(CASES)


@case("_text.set_intl_table", 20)
def _(data, source):
    table = th.load_intl()
    th.both("_text.set_intl_table", np.zeros(5, np.uint8))  # the size check
    th.both("_text.set_intl_table", table)
    assert th.both("_text.has_intl_table") is True
    # the installed classes are regex's \p{P}, \p{S}, \p{N} on the drawn characters
    import regex
    for c in set("".join(th.texts(data, source))):
        bits = (bool(regex.match(r"\p{P}", c)) | bool(regex.match(r"\p{S}", c)) << 1
                | bool(regex.match(r"\p{N}", c)) << 2)
        assert table[ord(c)] == bits, (c, unicodedata.category(c))


@case("_text.has_intl_table", 1)
def _(data, source):
    th.load_intl()
    _text.set_intl_table(th.load_intl())
    assert th.both("_text.has_intl_table") is True


@case("_text_vocab.Vocab")
def _(data, source):
    toks = [w for t in th.texts(data, source) for w in t.split()] + ["", "\ud800", "a" * 40]
    ops = data.draw(st.lists(st.tuples(st.sampled_from(["intern", "lookup"]),
                                       st.sampled_from(toks)), max_size=60), label="ops")
    vk, vt = _text_vocab.Vocab(), text_vocab.Vocab()
    for op, tok in ops:
        assert getattr(vk, op)(tok) == getattr(vt, op)(tok)
    assert len(vk) == len(vt)
    assert [vk.token(i) for i in range(len(vk))] == [vt.token(i) for i in range(len(vt))]
    for i in (-1, len(vk)):
        assert th.outcome(vk.token, i) == th.outcome(vt.token, i) == ("raised", IndexError)


@case("_text.encode", 60)
def _(data, source):
    th.load_intl()
    lines = th.texts(data, source)
    rstrip = data.draw(st.booleans(), label="rstrip")
    for mode in range(8):
        vk, vt = _text.Vocab(), text.Vocab()
        for chunk in (lines, lines[::-1]):  # a second call shares the vocabulary
            a = _text.encode(chunk, mode, vk, rstrip)
            b = text.encode(chunk, mode, vt, rstrip)
            th.assert_same(a, b)  # ids too: both intern in first-seen order
        assert [vk.token(i) for i in range(len(vk))] == [vt.token(i) for i in range(len(vt))]
    th.assert_same(_text.encode(lines, 5), text.encode(lines, 5))
    # lookup: tokens of the second half the first half's vocabulary lacks get UNSEEN_ID, and
    # the vocabulary is left as it was (twice: the kernel's word cache must not keep UNSEEN)
    half = len(lines) // 2
    for mode in (0, 1, 2, 3, 4, 7):
        vk, vt = _text.Vocab(), text.Vocab()
        _text.encode(lines[:half], mode, vk, rstrip)
        text.encode(lines[:half], mode, vt, rstrip)
        n = len(vk)
        for _ in range(2):
            a = _text.encode(lines[half:], mode, vk, rstrip, True)
            b = text.encode(lines[half:], mode, vt, rstrip, True)
            th.assert_same(a, b)
            assert len(vk) == len(vt) == n
        # a token added afterwards gets its own id, also inside a word met before
        _text.encode(lines[half:], mode, vk, rstrip)
        text.encode(lines[half:], mode, vt, rstrip)
        th.assert_same(_text.encode(lines[half:], mode, vk, rstrip, True),
                    text.encode(lines[half:], mode, vt, rstrip, True))
    assert th.outcome(_text.encode, lines, 1) == th.outcome(text.encode, lines, 1) == ("raised", ValueError)
    assert th.outcome(_text.encode, [1], 0, _text.Vocab()) == th.outcome(text.encode, [1], 0, text.Vocab())


@case("_text.tokenize_strings", 60)
def _(data, source):
    th.load_intl()
    lines = th.texts(data, source)
    for mode in range(8):
        th.both("_text.tokenize_strings", lines, mode, data.draw(st.booleans(), label="rstrip"))


@case("_lists.first_non_str")
def _(data, source):
    class S(str):
        pass
    items = th.texts(data, source) + data.draw(st.lists(st.sampled_from([None, 1, b"x", S("s")]),
                                                     max_size=3), label="odd")
    items = data.draw(st.permutations(items), label="order")
    for allow_none in (False, True):
        th.both("_lists.first_non_str", items, allow_none)


@case("_lists.present_row")
def _(data, source):
    _, refs = th.corpus(data, source)
    for r in refs:
        th.both("_lists.present_row", r)


@case("_lists.dedupe_index")
def _(data, source):
    _, refs = th.corpus(data, source)
    rows = list(zip(*refs))
    rows = rows + data.draw(st.lists(st.sampled_from(rows), max_size=8), label="repeats")
    rows = data.draw(st.permutations(rows), label="order")
    th.both("_lists.dedupe_index", rows)
    th.both("_lists.dedupe_index", rows, data.draw(st.integers(0, len(rows) + 1), label="max_distinct"))


@case("_lists.dedupe_columns")
def _(data, source):
    hyps, refs = th.corpus(data, source, none_refs=False)
    pool = [hyps, *refs]
    s = data.draw(st.sampled_from([1, 3, 33, 40]), label="S")  # pairwise (<= 32) and dict paths
    cols = [list(data.draw(st.sampled_from(pool), label="col")) for _ in range(s)]
    th.both("_lists.dedupe_columns", cols)
    th.both("_lists.dedupe_columns", [*cols, cols[0][:-1]])  # ValueError
    th.both("_lists.dedupe_columns", [*cols, [None] * len(cols[0])])  # TypeError


@case("_lists.take")
def _(data, source):
    items = th.texts(data, source)
    idx = np.array(data.draw(st.lists(st.integers(-1, len(items)), max_size=20), label="idx"),
                   dtype=np.int64)
    th.both("_lists.take", items, idx)
    th.both("_lists.take", items, idx[(idx >= 0) & (idx < len(items))])


@case("_lists.count_ending_with_space_period")
def _(data, source):
    th.both("_lists.count_ending_with_space_period", th.texts(data, source))


# ---- the one parametrised test -------------------------------------------------------------
@pytest.mark.parametrize("source", ["wmt", "unicode"])
@pytest.mark.parametrize("func", sorted(CASES))
def test_kernel_equals_twin(func, source):
    th.run_case(CASES, func, source)
