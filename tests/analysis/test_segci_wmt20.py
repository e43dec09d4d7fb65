"""Segment-level bootstrap CIs of the DARR Kendall-like tau (:func:`darr_bootstrap`), checked on the
released WMT20 metrics-task data (wmt20-metrics @3e434fc) and on synthetic pairs with a known answer.

Procedure (Mathur 2021 §2.3.3): 1000 resamples of the
DARR pairs with replacement, tau on each, 95% percentile interval. The released data holds no
segment-level CI or significance output to compare with, so the checks are the properties an
interval must have: the point is the official tau, the interval holds it, it narrows as 1/sqrt(P),
it agrees (within ~10%) with the closed-form binomial interval (tau = 2c - 1 with c the concordant share, so its
standard error is 2 sqrt(c (1 - c) / P)), and a fixed seed repeats it. Resampling whole source
segments instead (a cluster bootstrap) gives the same point and a wider interval: the pairs of one
segment share its translations, so they are not independent.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import require

from mtscore.analysis.correlation import bootstrap_ci, pearson
from mtscore.analysis.data import read_darr_cor
from mtscore.analysis.data.released import wmt20_outliers, wmt20_seg_da, wmt20_seg_metric
from mtscore.analysis.metaeval.darr import darr_bootstrap, darr_kendall, darr_pairs

METRICS = ["chrF", "TER"]


def _closed_half_width(tau: np.ndarray, n: int) -> np.ndarray:
    c = (tau + 1) / 2
    return 1.959964 * 2 * np.sqrt(c * (1 - c) / n)


def test_pair_bootstrap_matches_naive_resampling_and_closed_form():
    """Pooling pairs by concordance pattern draws from the same distribution as resampling pairs."""
    rng = np.random.default_rng(0)
    P = 4000
    better, worse = np.arange(P), np.arange(P, 2 * P)
    scores = rng.normal(size=(3, 2 * P))
    scores[:, :P] += np.array([[0.2], [0.8], [0.0]])  # three metrics, tau about 0.1 / 0.43 / 0
    res = darr_bootstrap(scores, better, worse, n_resamples=2000, seed=1)
    agree = np.where(scores[:, better] > scores[:, worse], 1.0, -1.0)
    np.testing.assert_array_equal(res["tau"], agree.mean(axis=1))
    np.testing.assert_array_equal(res["tau"], darr_kendall(scores, better, worse)["tau"])
    naive = np.stack([agree[:, rng.integers(0, P, P)].mean(axis=1) for _ in range(2000)])
    for q, got in ((2.5, res["low"]), (97.5, res["high"])):
        np.testing.assert_allclose(got, np.percentile(naive, q, axis=0), atol=0.006)
    half = (res["high"] - res["low"]) / 2
    np.testing.assert_allclose(half, _closed_half_width(res["tau"], P), rtol=0.08)
    assert res["units"] == P
    # metric 1 beats 0 and 2 in every draw; p_diff is one-sided "row > column"
    assert (res["p_diff"][1, 0], res["p_diff"][0, 1]) == (0.0, 1.0)
    assert np.isnan(res["p_diff"][0, 0])


def test_cluster_bootstrap_of_identical_pairs_is_a_bootstrap_of_clusters():
    """G clusters of k identical pairs: the cluster interval is the closed form with G units, not G k."""
    rng = np.random.default_rng(2)
    G, k = 500, 8
    conc = rng.random(G) < 0.7  # tau = 0.4 in expectation
    s = np.where(np.repeat(conc, k), 1.0, -1.0)
    scores = np.concatenate([s, np.zeros(G * k)])
    better, worse = np.arange(G * k), np.arange(G * k, 2 * G * k)
    pair = darr_bootstrap(scores, better, worse, n_resamples=1000, seed=3)
    clus = darr_bootstrap(scores, better, worse, n_resamples=1000, seed=3, clusters=np.repeat(np.arange(G), k))
    assert (clus["units"], pair["units"]) == (G, G * k)
    assert clus["tau"][0] == pair["tau"][0]
    np.testing.assert_allclose((clus["high"] - clus["low"]) / 2, _closed_half_width(clus["tau"], G), rtol=0.1)
    np.testing.assert_allclose((pair["high"] - pair["low"]) / 2, _closed_half_width(pair["tau"], G * k), rtol=0.1)
    with pytest.raises(ValueError, match="clusters has shape"):
        darr_bootstrap(scores, better, worse, clusters=np.arange(3))


@pytest.fixture(scope="module")
def wmt20(shared_data):
    root = require(shared_data / "wmt20-metrics")
    require(root / "results" / "output" / "seglevel_allsys")
    out = {}
    # km-en: 3706 pairs over 1350 segments; de-en: 16584 pairs over 780 segments (6185 without outliers)
    for lp in ("km-en", "de-en"):
        da = wmt20_seg_da(root, lp)
        scores = np.vstack([wmt20_seg_metric(root, m, lp, da) for m in METRICS])
        for sub, excl in (("allsys", ()), ("excloutl", wmt20_outliers(root, lp))):
            b, w = darr_pairs(da["sys"], da["sid"], da["raw"], exclude_systems=excl)
            ref = read_darr_cor(root / "results" / "output" / f"seglevel_{sub}" /
                                f"RR-newstest2020-{lp.replace('-', '')}-seg-nohy-cor.csv")
            official = dict(zip(ref.column("metric").to_pylist(), ref.column("tau").to_pylist()))
            out[(lp, sub)] = (scores, b, w, np.asarray(da["sid"])[b], official)
    return out


def test_wmt20_point_is_the_official_tau_and_inside(wmt20):
    for (lp, sub), (scores, b, w, _sid, official) in wmt20.items():
        res = darr_bootstrap(scores, b, w, n_resamples=1000, seed=12345)
        np.testing.assert_array_equal(res["tau"], darr_kendall(scores, b, w)["tau"])
        for i, m in enumerate(METRICS):  # the release prints 4 significant digits
            assert f"{res['tau'][i]:.4g}" == f"{official[m]:.4g}", (lp, sub, m)
        assert np.all(res["low"] < res["tau"]), (lp, sub)
        assert np.all(res["tau"] < res["high"]), (lp, sub)
    # the numbers: de-en chrF 0.4379 (16584 pairs) -> 0.01762 (6185) without outliers
    assert [f"{wmt20[('de-en', s)][4]['chrF']:.4g}" for s in ("allsys", "excloutl")] == ["0.4379", "0.01762"]
    assert [wmt20[("de-en", s)][1].size for s in ("allsys", "excloutl")] == [16584, 6185]
    assert wmt20[("km-en", "allsys")][1].size == 3706


def test_wmt20_width_shrinks_with_pairs_and_equals_closed_form(wmt20):
    half = {}
    for key, (scores, b, w, _sid, _off) in wmt20.items():
        res = darr_bootstrap(scores, b, w, n_resamples=1000, seed=12345)
        half[key] = (res["high"] - res["low"]) / 2
        np.testing.assert_allclose(half[key], _closed_half_width(res["tau"], b.size), rtol=0.1, err_msg=str(key))
        # the percentile interval is near-symmetric here (tau far from +-1)
        assert np.all(np.abs((res["high"] + res["low"]) / 2 - res["tau"]) < 0.15 * half[key])
    small, large = half[("km-en", "allsys")], half[("de-en", "allsys")]
    assert np.all(small > 2 * large / 1.2)  # sqrt(16584 / 3706) = 2.1
    np.testing.assert_allclose(small / large, np.sqrt(16584 / 3706), rtol=0.2)
    # de-en without outliers: 6185 of the 16584 pairs left, the interval wider
    assert np.all(half[("de-en", "excloutl")] > 1.4 * large)


def test_wmt20_same_seed_same_interval(wmt20):
    scores, b, w, _sid, _off = wmt20[("km-en", "allsys")]
    a = darr_bootstrap(scores, b, w, n_resamples=500, seed=7)
    again = darr_bootstrap(scores, b, w, n_resamples=500, seed=7)
    other = darr_bootstrap(scores, b, w, n_resamples=500, seed=8)
    for k in ("low", "high"):
        np.testing.assert_array_equal(a[k], again[k])
        assert not np.array_equal(a[k], other[k])
        np.testing.assert_allclose(a[k], other[k], atol=0.01)  # Monte Carlo noise only


def test_wmt20_segment_bootstrap_is_wider(wmt20):
    """Resampling source segments (all pairs of a drawn segment) keeps the point and widens the
    interval: de-en's 16584 pairs come from 780 segments, about 21 pairs each."""
    scores, b, w, sid, _off = wmt20[("de-en", "allsys")]
    pair = darr_bootstrap(scores, b, w, n_resamples=1000, seed=12345)
    seg = darr_bootstrap(scores, b, w, n_resamples=1000, seed=12345, clusters=sid)
    assert seg["units"] == 780
    np.testing.assert_array_equal(seg["tau"], pair["tau"])
    ratio = (seg["high"] - seg["low"]) / (pair["high"] - pair["low"])
    assert np.all(ratio > 1.5), ratio
    assert np.all(ratio < 3), ratio
    assert np.all(seg["low"] < seg["tau"])
    assert np.all(seg["tau"] < seg["high"])


def test_wmt20_segment_pearson_ci(shared_data):
    """Pearson r of chrF with the segment DA z of each MT translation (Human-* left out), with its
    percentile bootstrap over translations (:func:`bootstrap_ci`, 1000 resamples). WMT20 prints no
    segment-level Pearson (its segment level is DARR only), so there is no paper value: the checks
    are the point (= pearson), the interval holding it, and the Fisher-z closed form, which assumes
    bivariate normality: km-en agrees with it to 0.002, de-en's bootstrap interval is ~1.45x wider."""
    root = require(shared_data / "wmt20-metrics")
    half = {}
    for lp, n_want, r_want in (("km-en", 6659, "0.399"), ("de-en", 8652, "0.519")):
        da = wmt20_seg_da(root, lp)
        v = wmt20_seg_metric(root, "chrF", lp, da)
        ok = ~np.isnan(v) & ~np.isnan(da["z"]) & ~np.char.startswith(np.asarray(da["sys"]).astype(str), "Human")
        h, m = np.asarray(da["z"])[ok], v[ok]
        assert ok.sum() == n_want
        r, lo, hi = bootstrap_ci(h, m, "pearson", 1000, seed=12345)  # (n,) metric: floats back
        assert isinstance(r, float)
        assert r == float(pearson(h, m))
        assert f"{r:.3f}" == r_want
        assert lo < r < hi
        zf, se = np.arctanh(r), 1.959964 / np.sqrt(ok.sum() - 3)
        fisher = (np.tanh(zf - se), np.tanh(zf + se))
        half[lp] = (hi - lo) / (fisher[1] - fisher[0])
        if lp == "km-en":
            np.testing.assert_allclose((lo, hi), fisher, atol=0.002)
    assert 1.25 < half["de-en"] < 1.7


def test_a_metric_missing_some_segments_gets_its_own_pairs_not_a_crash():
    """seg-darr-ci bootstraps a metric that lacks some segments' scores over the pairs it scores
    both sides of (as seg-darr's tau drops the others), alone; the fully scored metrics share one
    set of draws; the point estimate is seg-darr's tau in both cases."""
    from mtscore.bindings.reproduce.wmt20_segci import seg_ci_table

    rng = np.random.default_rng(3)
    n = 60
    b = rng.integers(0, n, 400)
    w = (b + 1 + rng.integers(0, n - 1, 400)) % n
    good = rng.normal(size=n)
    holes = good + rng.normal(size=n)
    holes[:7] = np.nan
    scores = {("A", "xx"): good, ("B", "xx"): holes, ("C", "xx"): np.full(n, np.nan)}
    t = seg_ci_table(scores, {("xx", "all"): (b, w), ("xx", "-out"): (b[:200], w[:200])}, ["A", "B", "C"], ["xx"])
    assert t.rows == ["A xx all", "B xx all", "A xx -out", "B xx -out"]
    cell = {(r, c): t.cells[(r, c)].reproduced for r, c in t.cells}
    scored = ~(np.isnan(holes[b]) | np.isnan(holes[w]))
    assert 0 < scored.sum() < b.size
    assert cell[("A xx all", "pairs")] == b.size
    assert cell[("B xx all", "pairs")] == scored.sum() == darr_kendall(holes, b, w, missing="drop")["n"]
    assert cell[("B xx all", "tau")] == pytest.approx(darr_kendall(holes, b, w, missing="drop")["tau"], abs=1e-12)
    assert cell[("A xx all", "tau")] == pytest.approx(darr_kendall(good, b, w)["tau"], abs=1e-12)
    assert cell[("B xx all", "low")] <= cell[("B xx all", "tau")] <= cell[("B xx all", "high")]
