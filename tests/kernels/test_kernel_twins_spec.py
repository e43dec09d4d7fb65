"""Kernel-twin coverage (every public kernel function has a check in one of the
``test_kernel_twins*.py`` files) and the twins' own anchors to their specification (sacrebleu,
numpy), which keep a twin honest where kernel == twin alone could not.
"""
from __future__ import annotations

import numpy as np
import pytest
import test_kernel_twins
import test_kernel_twins_edit
import test_kernel_twins_ngram
import test_kernel_twins_ter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins_harness import CHARS, kernel_functions

from mtscore.kernels.reference import resample, ter_normalize, ter_shift, text

#: the checks of all kernel-twin test files
CASES = {**test_kernel_twins.CASES, **test_kernel_twins_edit.CASES, **test_kernel_twins_ngram.CASES,
         **test_kernel_twins_ter.CASES}


def test_every_kernel_function_has_a_twin_case():
    assert sorted(CASES) == kernel_functions()


# ---- the twins against their specification -------------------------------------------------
def test_twin_zh_ranges_equal_sacrebleu_on_every_code_point():
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    is_zh = TokenizerZh._is_chinese_char
    assert ([cp for cp in range(0x110000) if is_zh(chr(cp))]
            == [cp for cp in range(0x110000) if text.is_zh_char(chr(cp))])


def test_twin_ter_banded_case_gives_100_not_80():
    ref = [f"r{i}" for i in range(100)]
    hyp = [f"junk{i}" for i in range(40)] + ref[:60]
    assert ter_shift.translation_edit_rate(hyp, ref) == (100, 100)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 6), max_size=15), st.lists(st.integers(0, 6), max_size=15))
def test_twin_ter_equals_sacrebleu_on_random_token_ids(h, r):
    from sacrebleu.metrics.lib_ter import translation_edit_rate as sacre_ter_pair

    assert ter_shift.translation_edit_rate(h, r) == sacre_ter_pair([str(x) for x in h], [str(x) for x in r])


_TER_OPTIONS = [{}, {"normalized": True}, {"no_punct": True}, {"normalized": True, "asian_support": True},
                {"no_punct": True, "asian_support": True},
                {"normalized": True, "no_punct": True, "asian_support": True}, {"case_sensitive": True},
                {"normalized": True, "no_punct": True, "asian_support": True, "case_sensitive": True}]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CHARS), max_size=40).map("".join))
def test_twin_tercom_normalizer_equals_sacrebleu(s):
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    for opts in _TER_OPTIONS:
        sacre = TercomTokenizer(**opts)
        assert ter_normalize.tercom_normalize(s, **opts) == sacre(s.rstrip())
        # references: sacrebleu preprocesses them twice
        assert ter_normalize.tercom_normalize_reference(s, **opts) == sacre(sacre(s.rstrip()).rstrip())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_twin_resampling_equals_numpy(dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5000, size=(400, 7)).astype(dtype)
    if dtype != np.int64:
        x = x + rng.random(x.shape).astype(dtype)  # non-integers: the summation order matters
    idx = rng.integers(0, len(x), size=(2, 300))
    out = np.empty((2, 7), dtype=dtype)
    resample.resample_sums(x, idx, out)
    assert np.array_equal(out, np.stack([x[i].sum(0) for i in idx]))  # sacrebleu's operation
    counts = np.full((2, len(x)), 7.0, np.float32)
    resample.draw_counts(idx, counts)
    assert np.array_equal(counts, np.stack([np.bincount(i, minlength=len(x)) for i in idx]))
    xi = rng.integers(0, 1 << 40, size=(257, 6), dtype=np.int64)
    mask = rng.integers(2, size=(9, 257), dtype=bool)
    out2 = np.empty((9, 6), np.int64)
    resample.masked_sums(xi, mask.view(np.uint8), out2)
    assert np.array_equal(out2, mask.astype(np.int64) @ xi)

