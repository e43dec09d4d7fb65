"""mtscore.analysis.kendall_tau: the one Kendall implementation behind correlation.kendall and
metaeval.kendall_variant (pair-outcome counts -> tau by one formula)."""
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from mtscore.analysis import correlation
from mtscore.analysis import kendall_tau as K


def _vectors(seed, n, levels=5):
    rng = np.random.default_rng(seed)
    h = rng.integers(0, levels, n).astype(float)
    M = np.stack([h + rng.integers(0, levels, n), rng.integers(0, levels, n), np.round(rng.normal(size=n), 1)])
    return h, M.astype(float)


@pytest.mark.parametrize("seed", range(20))
def test_sorted_counts_equal_all_pairs(seed):
    n = [0, 1, 2, 3, 7, 40, 333][seed % 7]
    h, M = _vectors(seed, n, levels=2 + seed % 6)
    want = K.pair_counts(h, M)
    for row, w in zip(M, want):
        assert K.pair_counts_sorted(h, row).tolist() == w.tolist()
    assert (want.sum(axis=1) == n * (n - 1) // 2).all()


def test_counts_by_outcome():
    # h = [1, 2, 1], x = [1, 3, 1]: pairs (0, 1) and (1, 2) concordant, (0, 2) tied in both
    assert K.pair_counts(np.array([1.0, 2, 1]), np.array([[1.0, 3, 1]])).tolist() == [[2, 0, 0, 0, 1]]
    # epsilon: |3 - 2.5| <= 0.5 is a metric tie
    c = K.pair_counts(np.array([1.0, 2, 3]), np.array([[1.0, 3, 2.5]]), epsilon=0.5)
    assert c.tolist() == [[2, 0, 0, 1, 0]]


def test_correlation_kendall_is_the_formula_on_the_counts():
    h, M = _vectors(3, 60)
    counts = K.pair_counts(h, M)
    for variant, code in (("b", K.B_ONE_ROOT), ("23", 1), ("acc23", 2)):
        want = [K.variant_value(c, code, c[2] + c[4]) for c in counts]
        assert correlation.kendall(h, M, variant).tolist() == pytest.approx(want, abs=0, rel=0)
    classes = [min(len(np.unique(h)), len(np.unique(r))) for r in M]
    assert correlation.kendall(h, M, "c").tolist() == [K.tau_c(c, 60, k) for c, k in zip(counts, classes)]


def test_long_vectors_keep_scipy_numbers():
    # n > LONG: counted in O(n log n); tau-b and tau-c as scipy.stats.kendalltau(human, metric)
    h, M = _vectors(4, K.LONG + 500, levels=40)
    for variant in ("b", "c"):
        got = correlation.kendall(h, M, variant)
        assert got.tolist() == [stats.kendalltau(h, r, variant=variant).statistic for r in M]
    short = K.pair_counts(h[:K.LONG], M[:, :K.LONG])
    assert correlation.kendall(h[:K.LONG], M[:, :K.LONG], "23").tolist() == [
        K.variant_value(c, 1, c[2] + c[4]) for c in short]


def test_variant_codes_and_errors():
    assert K.VARIANT_CODES == {"b": 0, "23": 1, "acc23": 2, "c": 3}
    with pytest.raises(ValueError, match="unknown Kendall variant 'd'"):
        K.kendall_rows(np.arange(3.0), np.arange(3.0)[None], "d")
    with pytest.raises(ValueError, match="'c' does not support epsilon"):
        K.kendall_rows(np.arange(3.0), np.arange(3.0)[None], "c", 0.5)


def test_kendall_variant_is_the_same_formula_compiled():
    pytest.importorskip("numba")
    from mtscore.analysis.metaeval import kendall_variant
    from mtscore.analysis.metaeval._kern_pairs import variant_value as compiled

    rng = np.random.default_rng(7)
    for _ in range(300):
        c = rng.integers(0, 50, 5)
        for code in (0, 1, 2, K.B_HUMAN_FIRST, K.B_ONE_ROOT):
            a, b = K.variant_value(c, code, c[2] + c[4]), compiled(c, code, c[2] + c[4])
            assert a == b or (np.isnan(a) and np.isnan(b))
    h, M = _vectors(8, 50)
    for row, c in zip(M, K.pair_counts(h, M)):
        for variant, code in (("b", 0), ("23", 1), ("acc23", 2)):
            assert kendall_variant(h, row, variant) == K.variant_value(c, code, c[2] + c[4])
        for variant in ("23", "acc23"):  # one formula, exact counts: the two public functions agree
            assert kendall_variant(h, row, variant) == correlation.kendall(h, row, variant)


def test_correlation_kendall_needs_no_numba():
    code = ("import sys; sys.modules['numba'] = None\n"
            "from mtscore.analysis.correlation import kendall\n"
            "print(kendall([1, 2, 2, 3, 4], [2, 1, 1.5, 5, 3], 'acc23'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0.6"
