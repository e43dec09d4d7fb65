"""TER kernel shortcuts for short references, against sacrebleu 2.6.0:

* ``shift_free_cost``: a pair whose reference has fewer than BEAM_WIDTH (25) tokens (every DP
  row full) and whose distance equals the bag-of-words bound ``max(n, m) - |bag(h) & bag(r)|``
  skips the shift search; the distances of such pairs (and of their shift candidates) are
  computed bit-parallel;
* the pair-local vocabulary of ``_ter_fused.ter_corpus_plain`` (a rotate-xor token hash: colliding
  tokens must stay distinct).

Each test checks pairs that meet the shortcut's condition and pairs that miss it (classified
here with sacrebleu's own ``BeamEditDistance``), so both sides of it are compared."""
import random
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER as SacreTER
from sacrebleu.metrics.lib_ter import BeamEditDistance
from sacrebleu.metrics.lib_ter import translation_edit_rate as sacre_ter_pair

from mtscore.engine.metrics.ter import TER
from mtscore.kernels import _ter_shift


def _bound_met(h, r):
    """True when sacrebleu's distance of h to r equals max(n, m) - |bag(h) & bag(r)|."""
    if not h or not r:
        return False
    common = sum((Counter(h) & Counter(r)).values())
    return BeamEditDistance(r)(h)[0] == max(len(h), len(r)) - common


def _kernel(h, r):
    return _ter_shift.ter_pair_ids(np.asarray(h, np.int32), np.asarray(r, np.int32))


def _sacre(h, r):
    return sacre_ter_pair([str(x) for x in h], [str(x) for x in r])


def test_bound_met_means_no_shift_in_sacrebleu_and_kernel_agrees():
    """Seeded sweep over short pairs with few distinct tokens: both classes occur often, and
    for every pair the kernel equals sacrebleu; where the bound is met, sacrebleu's edits are
    the plain distance (the reason the search may be skipped)."""
    rng = random.Random(16)
    met = missed = shifted = 0
    for _ in range(1500):
        k = rng.randint(1, 8)
        h = [rng.randrange(k) for _ in range(rng.randint(0, 14))]
        r = [rng.randrange(k) for _ in range(rng.randint(0, 26))]
        expected = _sacre(h, r)
        assert _kernel(h, r) == expected, (h, r)
        if _bound_met(h, r):
            met += 1
            assert expected[0] == BeamEditDistance([str(x) for x in r])([str(x) for x in h])[0]
        elif h and r:
            missed += 1
            # a shift taken (the kernel stops its rounds once the bound is met)
            shifted += expected[0] < BeamEditDistance([str(x) for x in r])([str(x) for x in h])[0]
    assert met > 300, (met, missed, shifted)
    assert missed > 300, (met, missed, shifted)
    assert shifted > 50, (met, missed, shifted)


def test_edges_of_the_short_reference_case():
    """24 reference tokens (full rows) against 25 (banded); hypotheses longer than 64 words
    (the masks hold reference positions, not hypothesis words); one word; no shared word;
    a shift that gains (bound missed) next to one that cannot (bound met)."""
    rng = random.Random(5)
    cases = [
        ([1, 2, 3], [1, 2, 4]),                       # met: one substitution
        ([1, 2, 3], [4, 5]),                          # met: nothing shared
        ([2, 3, 1], [1, 2, 3]),                       # missed: one shift gains
        ([1], [1]), ([1], [2]), ([1], [2, 1, 2]),
        ([3, 1, 2, 3], [1, 2, 3, 3]),
    ]
    for m in (23, 24, 25, 26):
        r = [rng.randrange(6) for _ in range(m)]
        cases.append((list(reversed(r)), r))
        cases.append((r[m // 2:] + r[:m // 2], r))   # a block move
        cases.append(([rng.randrange(6) for _ in range(100)], r))
        cases.append(([rng.randrange(40) for _ in range(3)], r))
        cases.append(([*r[:-1], 99], r))
    kinds = set()
    for h, r in cases:
        assert _kernel(h, r) == _sacre(h, r), (h, r)
        kinds.add(_bound_met(h, r))
    assert kinds == {True, False}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 4), max_size=12), st.lists(st.integers(0, 4), max_size=24))
def test_short_pairs_equal_sacrebleu(h, r):
    assert _kernel(h, r) == _sacre(h, r)


def test_corpus_call_on_short_segments_equals_sacrebleu():
    """The one-kernel corpus path (pair-local vocabulary + shortcuts) on pairs of both
    classes, for every option set it serves."""
    rng = random.Random(9)
    words = ["the", "The", "cat", "sat", "on", "a", "mat", "dog", ".", ",", "ΟΔΟΣ", "ß", "猫"]
    hyps, refs = [], []
    for _ in range(300):
        r = [rng.choice(words) for _ in range(rng.randint(1, 12))]
        h = r[:]
        if rng.random() < 0.3:
            rng.shuffle(h)
        h = [w if rng.random() < 0.8 else rng.choice(words) for w in h][:rng.randint(1, 13)]
        hyps.append(" ".join(h))
        refs.append(" ".join(r))
    classes = {_bound_met(h.lower().split(), r.lower().split()) for h, r in zip(hyps, refs)}
    assert classes == {True, False}
    for opts in ({}, {"no_punct": True}, {"case_sensitive": True},
                 {"no_punct": True, "asian_support": True}):
        ours, theirs = TER(**opts).corpus_score(hyps, [refs]), SacreTER(**opts).corpus_score(hyps, [refs])
        assert (ours.score, ours.num_edits, ours.ref_length) == \
            (theirs.score, theirs.num_edits, theirs.ref_length), opts


def test_pair_vocabulary_keeps_colliding_tokens_apart():
    """The pair-local token hash is a rotate-xor of the code points: "aa" and "c!" hash alike
    ((0x61 << 5) ^ 0x61 == (0x63 << 5) ^ 0x21), as do "`a" (lowercased "`A"); they are still
    different tokens. Also a pair of 400 distinct tokens (the table grows mid-pair)."""
    hyps = ["aa c! `A aa", "c! aa", "aa aa aa", "`a c! aa c! `a"]
    refs = ["c! aa `a", "aa c!", "c! c! c!", "aa aa c! `a `A"]
    many = [f"w{i}" for i in range(400)]
    hyps.append(" ".join(many))
    refs.append(" ".join(w if i % 40 else f"x{i}" for i, w in enumerate(many)))  # quick in sacrebleu
    for opts in ({}, {"case_sensitive": True}):
        ours, theirs = TER(**opts).corpus_score(hyps, [refs]), SacreTER(**opts).corpus_score(hyps, [refs])
        assert (ours.score, ours.num_edits, ours.ref_length) == \
            (theirs.score, theirs.num_edits, theirs.ref_length), opts
        assert ours.num_edits > 0
