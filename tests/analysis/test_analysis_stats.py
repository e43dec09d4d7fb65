"""Unit and property tests of the meta-evaluation statistics (oracles: scipy, mt-metrics-eval
stats_test vectors)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mtscore.analysis import correlation as C
from mtscore.analysis.metaeval.darr import darr_bootstrap, darr_kendall, darr_pairs
from mtscore.analysis.metaeval.outliers import mad_outliers, robust_z
from mtscore.analysis.metaeval.williams import williams_matrix, williams_test, winners


def test_mtme_kendall_variants():
    g, m = [1, 2, 2, 3, 4], [2, 1, 1.5, 5, 3]
    assert C.kendall(g, m, "b") == pytest.approx(0.3162, abs=1e-4)
    assert C.kendall(g, m, "c") == pytest.approx(0.32, abs=1e-12)
    assert C.kendall(g, m, "23") == pytest.approx(0.2, abs=1e-12)
    assert C.kendall(g, m, "acc23") == pytest.approx(0.6, abs=1e-12)
    assert C.kendall(g, m, "acc23", epsilon=2) == pytest.approx(0.4, abs=1e-12)


def test_mtme_kendall_like():
    assert C.kendall_like([10, 11, 100, 150], [2, 1, 4, 3]) == (pytest.approx(0.6), 5, 4, 1)


def test_mtme_williams():
    gold = np.arange(1, 6, dtype=float)
    m1 = np.array([1.1, 2, 3.1, 4, 5.1])
    m2 = np.array([1.5, 2, 3.1, 4, 5.5])
    r1, r2 = C.pearson(gold, m1), C.pearson(gold, m2)
    p = williams_test(r1, r2, C.pearson(m1, m2), 5)
    assert p == pytest.approx(0.0191, abs=1e-4)
    _r, P = williams_matrix(gold, np.vstack([m1, m2]))
    assert P[0, 1] == pytest.approx(p)
    assert np.isnan(P[1, 0])
    assert winners(P).tolist() == [True, False]
    assert williams_test(r1, r2, C.pearson(m1, m2), 5, one_sided=False) == pytest.approx(2 * p)


def test_mtme_average_by_oracle():
    # Correlation(2, [1..6], [2,1,4,3,3,7]) 'none': Pearson 0.776, Kendall 0.552
    assert C.pearson(np.arange(1, 7), [2, 1, 4, 3, 3, 7]) == pytest.approx(0.776, abs=1e-3)
    assert C.kendall(np.arange(1, 7), [2, 1, 4, 3, 3, 7]) == pytest.approx(0.552, abs=1e-3)


vec = st.lists(st.integers(-5, 5), min_size=3, max_size=25)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_correlations_match_scipy(data):
    n = data.draw(st.integers(3, 25))
    h = np.array(data.draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n)), float)
    M = np.array([data.draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n)) for _ in range(3)], float)
    with np.errstate(all="ignore"):
        for i in range(3):
            for ours, ref in ((C.pearson(h, M)[i], stats.pearsonr(h, M[i])[0] if np.ptp(h) and np.ptp(M[i]) else np.nan),
                              (C.spearman(h, M)[i], stats.spearmanr(h, M[i])[0] if np.ptp(h) and np.ptp(M[i]) else np.nan),
                              (C.kendall(h, M)[i], stats.kendalltau(h, M[i])[0]),
                              (C.kendall(h, M, "c")[i], stats.kendalltau(h, M[i], variant="c")[0])):
                if np.isnan(ref):
                    assert np.isnan(ours)
                else:
                    assert ours == pytest.approx(ref, abs=1e-10)


def test_nan_handling_pairwise_complete():
    h = np.array([1.0, 2, 3, 4, 5])
    M = np.array([[1.0, 2, np.nan, 4, 6], [5, 4, 3, 2, 1]])
    r = C.pearson(h, M)
    assert r[0] == pytest.approx(stats.pearsonr([1, 2, 4, 5], [1, 2, 4, 6])[0])
    assert r[1] == pytest.approx(-1.0)


def test_bootstrap_ci_and_curves():
    rng = np.random.default_rng(0)
    h = rng.normal(size=15)
    M = np.vstack([h + rng.normal(0, s, 15) for s in (0.1, 0.5, 2.0)])
    r, lo, hi = C.bootstrap_ci(h, M, n_resamples=1000, seed=1)
    assert np.all(lo <= r)
    assert np.all(r <= hi)
    assert hi[0] - lo[0] < hi[2] - lo[2]
    _r2, lo2, _hi2 = C.bootstrap_ci(h, M, n_resamples=1000, seed=1)
    assert np.array_equal(lo, lo2)
    # same draws as a per-resample loop
    _, _, _, S = C.bootstrap_ci(h, M, n_resamples=50, seed=3, return_samples=True)
    idx = np.random.default_rng(3).integers(0, 15, size=(50, 15))
    np.testing.assert_allclose(S[7], C.pearson(h[idx[7]], M[:, idx[7]]))
    _, lo_k, hi_k = C.bootstrap_ci(h, M, "kendall", n_resamples=100, seed=1)
    assert np.all(lo_k <= hi_k)
    t = C.top_n(h, M, min_n=4, ci=True, n_resamples=50)
    assert t["n"].tolist() == list(range(15, 3, -1))
    assert t["r"].shape == (12, 3)
    np.testing.assert_allclose(t["r"][0], C.pearson(h, M))
    w = C.rolling_window(h, M, 4)
    order = np.argsort(h)
    np.testing.assert_allclose(w["r"][0], C.pearson(h[order[:4]], M[:, order[:4]]))
    assert len(w["start"]) == 12


def test_mad_outliers():
    h = np.array([0.1, 0.2, 0.15, 0.12, 0.18, -1.5])
    z = robust_z(h)
    med = np.median(h)
    assert z[-1] == pytest.approx((h[-1] - med) / (1.4826 * np.median(np.abs(h - med))))
    assert mad_outliers(h).tolist() == [False] * 5 + [True]
    assert not mad_outliers(np.ones(5)).any()
    assert mad_outliers(np.array([1.0, 1, 1, 1, 2])).tolist() == [False] * 4 + [True]


def test_darr_pairs_and_bootstrap():
    sys_ = ["A", "B", "C", "Human-A", "A", "B", "A"]
    seg = [1, 1, 1, 1, 2, 2, 2]          # second A row on seg 2 is a duplicate: ignored
    raw = [90, 60, 70, 99, 20, 50, 100]
    b, w = darr_pairs(sys_, seg, raw)
    pairs = sorted(zip(np.array(sys_)[b], np.array(seg)[b], np.array(sys_)[w]))
    assert pairs == [("A", 1, "B"), ("B", 2, "A")]
    metric = np.array([0.9, 0.5, 0.7, 0.0, 0.3, 0.3, 0.0])  # seg 2 is a metric tie -> discordant
    res = darr_kendall(metric, b, w)
    assert res == {"tau": 0.0, "n": 2, "concordant": 1, "discordant": 1}
    bs = darr_bootstrap(np.vstack([metric, -metric]), b, w, n_resamples=200)
    assert bs["low"][0] <= bs["tau"][0] <= bs["high"][0]
