"""mtscore.analysis.metaeval against google-research/mt-metrics-eval (the oracle, imported from
MTSCORE_ORACLES): deterministic statistics bit for bit, permutation p-values exactly for a
shared seed (legacy stream), the fast stream within Monte Carlo error."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metaeval_oracle import oracle

from mtscore.analysis import correlation
from mtscore.analysis.errors import AnalysisInputError
from mtscore.analysis.metaeval import (
    compare_metrics,
    kendall_variant,
    pairwise_accuracy,
    pairwise_permutation_test,
    pairwise_pvalues,
    permutation_test,
    significance_clusters,
    soft_pairwise_accuracy,
    tie_calibrated_accuracy,
)

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def mme():
    return oracle()


def _task(seed, S=6, N=30, missing=0.2, rounding=1, noise=(1.0, 1.3)):
    rng = np.random.default_rng(seed)
    h = np.round(rng.normal(size=(S, N)), rounding)
    ms = [np.round(h + a * rng.normal(size=(S, N)), rounding) for a in noise]
    h[rng.random((S, N)) < missing] = np.nan
    return h, ms


def _tie_opt(mme, c, average_by, variant, sample_rate):
    """(best value, best epsilon, result) of the reference (Correlation.KendallWithTiesOpt
    returns no epsilon)."""
    return mme.stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, variant, c.num_sys, average_by, sample_rate)


def _corr(mme, h, m):
    gold = [None if np.isnan(x) else float(x) for x in h.ravel()]
    return mme.stats.Correlation(h.shape[0], gold, [float(x) for x in m.ravel()])


def test_stats_test_vectors():
    # the small vectors of mt-metrics-eval's stats_test.py
    g, x = [1, 2, 2, 3, 4], [2, 1, 1.5, 5, 3]
    assert kendall_variant(g, x, "b") == pytest.approx(0.3162, abs=1e-4)
    assert kendall_variant(g, x, "23") == pytest.approx(0.2)
    assert kendall_variant(g, x, "acc23") == pytest.approx(0.6)
    assert kendall_variant(g, x, "acc23", epsilon=2) == pytest.approx(0.4)
    assert tie_calibrated_accuracy(g, x).value == pytest.approx(0.7)


@pytest.mark.parametrize("average_by", ["none", "sys", "item"])
def test_kendall_variants_equal_oracle(mme, average_by):
    h, (m, _) = _task(1)
    c = _corr(mme, h, m)
    for variant in ("b", "23", "acc23"):
        for eps in (0.0, 0.25):
            for zero in (False, True):
                want = c.AverageCorrelation(mme.stats.KendallVariants, average_by, zero, variant=variant,
                                            epsilon=eps)(c.gold_scores, c.metric_scores)[0]
                assert kendall_variant(h, m, variant, average_by, eps, zero) == want


def test_kendall_variant_agrees_with_correlation_module():
    h, (m, _) = _task(2, missing=0.0)
    for variant in ("b", "23", "acc23"):
        assert kendall_variant(h.ravel(), m.ravel(), variant) == pytest.approx(
            correlation.kendall(h.ravel(), m.ravel(), variant), rel=1e-12)


@pytest.mark.parametrize("average_by", ["none", "sys", "item"])
def test_tie_calibration_equals_oracle(mme, average_by):
    h, (m, _) = _task(3, rounding=2)
    h = np.round(h, 0)                                 # human ties: epsilon > 0 pays off
    c = _corr(mme, h, m)
    for variant in ("acc23", "23"):
        want = _tie_opt(mme, c, average_by, variant, 1.0)
        got = tie_calibrated_accuracy(h, m, variant, average_by)
        assert (got.value, got.epsilon) == (want[0], want[1])
        opt = mme.stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, variant, h.shape[0], average_by, 1.0)[2]
        assert got.thresholds.tolist() == opt.thresholds
        assert got.values.tolist() == opt.taus
        assert got.epsilon > 0


def test_sampled_tie_calibration_replays_numpy_stream(mme):
    h, (m, _) = _task(4)
    c = _corr(mme, h, m)
    np.random.seed(11)
    want = _tie_opt(mme, c, "item", "acc23", 0.3)
    after_oracle = np.random.random()
    np.random.seed(11)
    got = tie_calibrated_accuracy(h, m, "acc23", "item", sample_rate=0.3)
    assert (got.value, got.epsilon) == (want[0], want[1])
    assert np.random.random() == after_oracle      # the global stream advanced exactly as the oracle's


def test_pairwise_accuracy_equals_agreement(mme):
    h, (m, _) = _task(5, S=9, N=3)
    g, x = h[:, 0], np.round(m[:, 0])
    agree, n = mme.stats.Agreement([None if np.isnan(v) else v for v in g], list(x))
    assert pairwise_accuracy(g, x) == (agree / n, n)
    # pooled over two language-pair blocks, as CompareMetricsWithGlobalAccuracy
    _a1, _n1 = mme.stats.Agreement(list(h[:5, 1]), list(m[:5, 1]))
    _a2, _n2 = mme.stats.Agreement(list(h[5:, 1]), list(m[5:, 1]))
    hv = h[:, 1].copy()
    hv[np.isnan(hv)] = 0.0
    assert pairwise_accuracy(hv, m[:, 1], blocks=[5, 4])[1] == 10 + 6


def test_soft_pairwise_accuracy_equals_pce(mme):
    rng = np.random.default_rng(6)
    h = rng.normal(size=(7, 120))
    m = h + 2 * rng.normal(size=(7, 120))
    c = mme.stats.Correlation(7, list(h.ravel()), list(m.ravel()))
    assert soft_pairwise_accuracy(h, m) == c.PairwiseConfidenceError()[0]
    np.testing.assert_array_equal(pairwise_pvalues(m, 200, seed=9), mme.pce.compute_pairwise_p_values(m, 200, 9))


SCORE_CASES = [("pearson", "b", 0.0), ("kendall", "b", 0.0), ("kendall", "acc23", 0.0), ("kendall", "23", 0.3)]


@pytest.mark.parametrize("average_by", ["none", "sys", "item"])
@pytest.mark.parametrize(("statistic", "variant", "eps"), SCORE_CASES)
def test_perm_both_equals_oracle_for_shared_seed(mme, average_by, statistic, variant, eps):
    import scipy.stats

    h, (m1, m2) = _task(7, N=16, noise=(1.3, 1.0))
    c1, c2 = _corr(mme, h, m1), _corr(mme, h, m2)
    fn = scipy.stats.pearsonr if statistic == "pearson" else mme.stats.KendallVariants
    kw = {} if statistic == "pearson" else {"variant": variant, "epsilon": eps}
    psd = mme.stats.PermutationSigDiffParams(25, 0.02, 0.5)
    np.random.seed(21)
    p, delta, used, draws = mme.stats.PermutationSigDiff(c1, c2, fn, average_by, 100, psd, **kw)
    np.random.seed(21)
    r = permutation_test(h, m1, m2, statistic, variant, eps, average_by, 100, 25, stream="legacy")
    assert (r.p_value, r.n_draws) == (p, used)
    assert r.delta == pytest.approx(delta, abs=1e-12)
    np.testing.assert_allclose(r.draws, np.asarray(draws), rtol=0, atol=1e-12)
    if statistic == "kendall":  # exact rational statistics: bit for bit
        assert r.delta == delta
        assert r.draws.tolist() == [list(d) for d in draws]


@pytest.mark.parametrize("average_by", ["none", "sys", "item"])
@pytest.mark.parametrize("variant", ["acc23", "23", "b"])
def test_pairs_permutation_equals_oracle_for_shared_seed(mme, average_by, variant):
    h, (m1, m2) = _task(8, noise=(1.3, 1.0))
    c1, c2 = _corr(mme, h, m1), _corr(mme, h, m2)
    psd = mme.stats.PermutationSigDiffParams(25, 0.02, 0.5)
    e1, e2 = (None, None) if variant != "b" else (0.1, 0.0)
    np.random.seed(5)
    p, delta, used, draws = mme.stats.PairwisePermutationSigDiff(c1, c2, variant, average_by, 150, psd, e1, e2)
    np.random.seed(5)
    r = pairwise_permutation_test(h, m1, m2, variant, average_by, e1, e2, k=150, block_size=25, stream="legacy")
    assert (r.p_value, r.delta, r.n_draws) == (p, delta, used)
    assert r.draws.tolist() == [list(d) for d in draws]


def test_seeded_legacy_stream_does_not_touch_global_state():
    h, (m1, m2) = _task(9)
    np.random.seed(1)
    a = permutation_test(h, m1, m2, "kendall", k=50, stream="legacy", seed=3)
    assert np.random.random() == np.random.RandomState(1).random_sample()
    b = permutation_test(h, m1, m2, "kendall", k=50, stream="legacy", seed=3)
    assert a.p_value == b.p_value
    assert np.array_equal(a.draws, b.draws)


def test_fast_stream_within_monte_carlo_error(mme):
    """The fast stream draws different random numbers: over repeated runs its p-values must
    agree with the oracle's (run with several seeds) within Monte Carlo error."""
    h, (m1, m2) = _task(13, S=5, N=10, noise=(1.0, 1.0))
    c1, c2 = _corr(mme, h, m1), _corr(mme, h, m2)
    k, runs = 200, 8
    psd = mme.stats.PermutationSigDiffParams(k, 0.0, 1.0)
    ref, fast = [], []
    for s in range(runs):
        np.random.seed(100 + s)
        ref.append(mme.stats.PairwisePermutationSigDiff(c1, c2, "acc23", "item", k, psd)[0])
        fast.append(pairwise_permutation_test(h, m1, m2, "acc23", "item", k=k, block_size=k, seed=s).p_value)
    p = np.mean(ref)
    assert 0.05 < p < 0.95                           # a case where the test is not trivial
    se = np.sqrt(p * (1 - p) / (k * runs) * 2)       # two independent means
    assert abs(np.mean(fast) - p) < 4 * se
    # variant 'b' runs the generic kernel (one random bit per differing pair)
    np.random.seed(3)
    ref_b = [mme.stats.PairwisePermutationSigDiff(c1, c2, "b", "item", k, psd, 0.0, 0.0)[0] for _ in range(runs)]
    fast_b = [pairwise_permutation_test(h, m1, m2, "b", "item", 0.0, 0.0, k=k, block_size=k, seed=50 + s).p_value
              for s in range(runs)]
    pb = np.mean(ref_b)
    assert 0.05 < pb < 0.95
    assert abs(np.mean(fast_b) - pb) < 4 * np.sqrt(pb * (1 - pb) / (k * runs) * 2)
    scores_fast = [permutation_test(h, m1, m2, "kendall", "acc23", average_by="item", k=k, block_size=k,
                                    seed=s).p_value for s in range(runs)]
    np.random.seed(7)
    scores_ref = [mme.stats.PermutationSigDiff(c1, c2, mme.stats.KendallVariants, "item", k, psd,
                                               variant="acc23")[0] for _ in range(runs)]
    q = np.mean(scores_ref)
    assert 0.05 < q < 0.95
    assert abs(np.mean(scores_fast) - q) < 4 * np.sqrt(q * (1 - q) / (k * runs) * 2) + 1e-9


def test_early_stopping_k_block(mme):
    h, (m1, m2) = _task(11, noise=(2.0, 0.5))     # metric 2 is clearly better: stops after one block
    r = permutation_test(h, m1, m2, "pearson", k=1000, block_size=100, seed=1)
    assert r.n_draws == 100
    assert r.p_value < 0.02
    r = permutation_test(h, m2, m1, "pearson", k=1000, block_size=100, seed=1)
    assert r.n_draws == 100
    assert r.p_value > 0.5
    assert permutation_test(h, m1, m2, "pearson", k=300, block_size=300, early_min=0, early_max=1,
                            seed=1).n_draws == 300


@pytest.mark.parametrize(("statistic", "perm"), [("kendall", "scores"), ("acc_eq", "pairs")])
def test_compare_metrics_equals_oracle(mme, statistic, perm):
    rng = np.random.default_rng(12)
    S, N = 5, 16
    h = np.round(rng.normal(size=(S, N)), 1)
    metrics = np.stack([np.round(h + a * rng.normal(size=(S, N)), 1) for a in (0.4, 0.5, 1.5, 3.0)])
    names = ["m-a", "m-b", "m-c", "m-d"]
    corrs = {n: _corr(mme, h, m) for n, m in zip(names, metrics)}
    psd = mme.stats.PermutationSigDiffParams(20, 0.02, 0.5)
    fn = mme.stats.KendallVariants if statistic == "kendall" else mme.stats.KendallWithTiesOpt
    kw = {"variant": "acc23"} if statistic == "kendall" else {"sample_rate": 1.0}
    np.random.seed(2)
    ranks, sig, _, _ = mme.data.CompareMetrics(corrs, fn, "item", 100, psd, 0.05, perm_test=perm, **kw)
    np.random.seed(2)
    res = compare_metrics(h, metrics, names, statistic, "acc23", average_by="item", k=100, block_size=20,
                          stream="legacy")
    assert res.names == list(ranks)
    assert res.values.tolist() == [v[0] for v in ranks.values()]
    assert res.ranks.tolist() == [v[1] for v in ranks.values()]
    np.testing.assert_array_equal(res.sig_matrix, sig)


def test_significance_clusters_equal_assign_ranks(mme):
    rng = np.random.default_rng(13)
    for _ in range(50):
        n = int(rng.integers(1, 8))
        sig = np.triu(rng.choice([0.001, 0.03, 0.2, 0.6], size=(n, n)), 1)
        assert significance_clusters(sig).tolist() == mme.data.AssignRanks(sig, 0.05)


def test_bad_inputs_name_the_problem():
    h, (m1, m2) = _task(14)
    with pytest.raises(AnalysisInputError, match="average_by"):
        kendall_variant(h, m1, average_by="rows")
    with pytest.raises(AnalysisInputError, match="shape"):
        permutation_test(h, m1[:, :3], m2)
    bad = m1.copy()
    bad[np.argwhere(~np.isnan(h))[0][0], np.argwhere(~np.isnan(h))[0][1]] = np.inf
    with pytest.raises(AnalysisInputError, match="not finite"):
        tie_calibrated_accuracy(h, bad)
    with pytest.raises(AnalysisInputError, match="variant"):
        tie_calibrated_accuracy(h, m1, "b")
    with pytest.raises(AnalysisInputError, match="stream"):
        permutation_test(h, m1, m2, stream="mt")
    with pytest.raises(AnalysisInputError, match="statistic"):
        compare_metrics(h, np.stack([m1, m2]), ["a", "b"], "spearman")


def test_radix_argsort_is_numpy_stable_argsort():
    from mtscore.analysis.metaeval._jit import kernels

    k = kernels()
    rng = np.random.default_rng(15)
    for n in (0, 1, 7, 3000):
        for d in (np.abs(rng.normal(size=n)), np.round(rng.random(n), 2), np.zeros(n),
                  rng.integers(0, 3, n) * 1e300, np.abs(rng.normal(size=n)) * 1e-310):
            assert np.array_equal(k.stable_argsort_nonneg(np.asarray(d, np.float64)), np.argsort(d, kind="stable"))


def test_missing_numba_names_the_install_command(monkeypatch):
    import sys

    from mtscore.engine.missing_extra import MissingExtraError

    monkeypatch.setitem(sys.modules, "numba", None)     # import numba -> ImportError
    h, (m, _) = _task(16)
    with pytest.raises(MissingExtraError, match=r"mtscore\[metaeval\]"):
        kendall_variant(h, m)


def test_import_does_not_load_numba():
    import subprocess
    import sys

    code = ("import sys, mtscore, mtscore.analysis.metaeval, mtscore.bindings.cli.analysis; mtscore.BLEU; "
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_global_accuracy_perm_both_equals_oracle(mme):
    """System-level pairwise accuracy pooled over language pairs, tested as
    CompareMetricsWithGlobalAccuracy does (PERM-BOTH over the concatenated vectors)."""
    rng = np.random.default_rng(17)
    sizes = [6, 4, 5]
    h = np.full((3, 6), np.nan)
    m1, m2 = np.zeros((3, 6)), np.zeros((3, 6))
    for i, n in enumerate(sizes):
        h[i, :n] = np.round(rng.normal(size=n), 1)
        m1[i, :n] = np.round(h[i, :n] + 1.2 * rng.normal(size=n), 1)
        m2[i, :n] = np.round(h[i, :n] + 0.8 * rng.normal(size=n), 1)
    flat = [np.concatenate([r[:n] for r, n in zip(x, sizes)]) for x in (h, m1, m2)]

    def accuracy(g, m):
        agree = pairs = b = 0
        for n in sizes:
            a, p = mme.stats.Agreement(g[b:b + n], m[b:b + n])
            agree, pairs, b = agree + a, pairs + p, b + n
        return agree / pairs, pairs

    c1 = mme.stats.Correlation(sum(sizes), list(flat[0]), list(flat[1]))
    c2 = mme.stats.Correlation(sum(sizes), list(flat[0]), list(flat[2]))
    psd = mme.stats.PermutationSigDiffParams(50, 0.02, 0.5)
    np.random.seed(4)
    p, delta, used, draws = mme.stats.PermutationSigDiff(c1, c2, accuracy, "none", 200, psd)
    np.random.seed(4)
    r = permutation_test(h, m1, m2, "accuracy", average_by="sys", k=200, block_size=50, stream="legacy")
    assert (r.p_value, r.delta, r.n_draws) == (p, delta, used)
    assert r.draws.tolist() == [list(d) for d in draws]
    assert pairwise_accuracy(flat[0], flat[2], blocks=sizes)[0] == accuracy(flat[0], flat[2])[0]


def test_pairs_test_plain_early_stopping():
    h, (m1, m2) = _task(18, noise=(3.0, 0.3))
    quirk = pairwise_permutation_test(h, m1, m2, "acc23", "item", k=400, block_size=50, seed=2)
    plain = pairwise_permutation_test(h, m1, m2, "acc23", "item", k=400, block_size=50, seed=2,
                                      legacy_early_stop=False)
    assert quirk.n_draws == 400
    assert quirk.p_value == 0.0
    assert plain.n_draws == 50
    assert plain.p_value == 0.0


@st.composite
def _tied_task(draw):
    """Small matrices of few distinct values (ties everywhere), some cells unrated."""
    S = draw(st.integers(2, 4))
    N = draw(st.integers(2, 5))
    vals = st.sampled_from([0.0, 0.5, 1.0, 1.5, 3.0])
    h = np.array(draw(st.lists(vals, min_size=S * N, max_size=S * N))).reshape(S, N)
    m = np.array(draw(st.lists(vals, min_size=S * N, max_size=S * N))).reshape(S, N)
    miss = np.array(draw(st.lists(st.booleans(), min_size=S * N, max_size=S * N))).reshape(S, N)
    h[miss & (np.arange(N) > 0)] = np.nan           # keep column 0 whole: every layout has a pair
    return h, m


@settings(max_examples=60, deadline=None)
@given(task=_tied_task(), average_by=st.sampled_from(["none", "sys", "item"]))
def test_property_ties_equal_oracle(task, average_by):
    mme = oracle()
    h, m = task
    try:
        from mtscore.analysis.metaeval._inputs import groups

        groups(h, average_by)
    except AnalysisInputError:
        return                                       # no group with a pair: nothing to compare
    c = _corr(mme, h, m)
    for variant in ("b", "23", "acc23"):
        want = c.KendallVariants(average_by, variant, 0.0)[0]
        got = kendall_variant(h, m, variant, average_by)
        assert got == want or (np.isnan(got) and np.isnan(want))
    want = _tie_opt(mme, c, average_by, "acc23", 1.0)
    got = tie_calibrated_accuracy(h, m, "acc23", average_by)
    assert (got.value, got.epsilon) == (want[0], want[1])


def test_soft_accuracy_perm_both_equals_oracle(mme):
    from mtscore.analysis.metaeval.soft import soft_permutation_test

    rng = np.random.default_rng(19)
    S, N = 5, 30
    h = rng.normal(size=(S, N))
    m1, m2 = h + 1.5 * rng.normal(size=(S, N)), h + 1.2 * rng.normal(size=(S, N))
    c1 = mme.stats.Correlation(S, list(h.ravel()), list(m1.ravel()))
    c2 = mme.stats.Correlation(S, list(h.ravel()), list(m2.ravel()))

    def spa(g, m):
        return mme.stats.PairwiseConfidenceError(g, m, num_sys=S)

    psd = mme.stats.PermutationSigDiffParams(10, 0.02, 0.5)
    np.random.seed(6)
    p, delta, used, draws = mme.stats.PermutationSigDiff(c1, c2, spa, "none", 30, psd)
    np.random.seed(6)
    r = soft_permutation_test(h, m1, m2, k=30, block_size=10, stream="legacy")
    assert (r.p_value, r.delta, r.n_draws) == (p, delta, used)
    assert r.draws.tolist() == [list(d) for d in draws]
    fast = soft_permutation_test(h, m1, m2, k=30, block_size=30, seed=1)
    assert fast.n_draws == 30
    assert 0 <= fast.p_value <= 1


def test_compare_metrics_soft_equals_oracle(mme):
    rng = np.random.default_rng(20)
    S, N = 4, 20
    h = rng.normal(size=(S, N))
    metrics = np.stack([h + a * rng.normal(size=(S, N)) for a in (0.5, 1.0, 3.0)])
    names = ["x", "y", "z"]
    corrs = {n: mme.stats.Correlation(S, list(h.ravel()), list(m.ravel())) for n, m in zip(names, metrics)}
    psd = mme.stats.PermutationSigDiffParams(10, 0.02, 0.5)
    np.random.seed(1)
    ranks, sig, _, _ = mme.data.CompareMetricsWithPairwiseConfidenceError(corrs, 20, psd, 0.05)
    np.random.seed(1)
    res = compare_metrics(h, metrics, names, "soft", k=20, block_size=10, stream="legacy")
    assert res.names == list(ranks)
    assert res.values.tolist() == [v[0] for v in ranks.values()]
    assert res.ranks.tolist() == [v[1] for v in ranks.values()]
    np.testing.assert_array_equal(res.sig_matrix, sig)


@pytest.mark.parametrize("command", ["meta", "human"])
def test_help_does_not_load_numpy(command):
    """`mtscore meta --help` / `mtscore human --help` build every subcommand's parser without
    numpy (~50-100 ms): the subcommand modules import it where they compute."""
    import subprocess
    import sys

    code = ("import sys\nfrom mtscore.bindings.cli.main import main\ntry:\n"
            f"    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass\n"
            "print('numpy' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "usage: mtscore" in out.stdout
    assert out.stderr.strip() == "False"
