"""A4.1 exact rank-sum p, A8 sign test, A9 adequacy-then-fluency, A10 share of significant pairs.

References: brute-force enumeration / math.comb (scipy-free), scipy where it is a dependency
anyway, and the WMT21 to-English DA release (wmt21-news-systems)."""
import itertools
import math

import numpy as np
import pytest
from conftest import require
from hypothesis import given
from hypothesis import strategies as st

from mtscore.analysis import data as loaders
from mtscore.analysis import human
from mtscore.analysis.errors import AnalysisInputError
from mtscore.analysis.human.significance import (
    combine_adequacy_fluency,
    nle_worker_test,
    rank_sum_test,
    sign_test,
    sign_test_matrix,
    significance_curve,
    significant_pair_share,
)


def _brute_upper(a, b):
    """P(U >= U_obs) by enumerating every split of the pooled (distinct) values."""
    allv = np.r_[a, b]
    m = len(a)
    u_obs = sum((x > y) for x in a for y in b)
    hits = total = 0
    for idx in itertools.combinations(range(len(allv)), m):
        rest = [allv[i] for i in range(len(allv)) if i not in idx]
        u = sum((allv[i] > y) for i in idx for y in rest)
        hits += u >= u_obs
        total += 1
    return hits / total


@pytest.mark.parametrize("seed", range(4))
def test_exact_rank_sum_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(0.5, 1, 5), rng.normal(0, 1, 6)
    r = rank_sum_test(a, b, "greater")
    assert r.exact
    assert r.p == pytest.approx(_brute_upper(a, b), rel=1e-12)
    assert rank_sum_test(a, b, "less").p == pytest.approx(_brute_upper(b, a), rel=1e-12)


@given(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=30, unique=True),
       st.integers(1, 30), st.sampled_from(["greater", "less", "two-sided"]))
def test_exact_rank_sum_matches_scipy(vals, m, alt):
    from scipy.stats import mannwhitneyu

    m = min(m, len(vals) - 1) if len(vals) > 1 else 1
    a, b = np.array(vals[:m], float), np.array(vals[m:], float)
    if b.size == 0:
        assert np.isnan(rank_sum_test(a, b, alt).p)
        return
    r = rank_sum_test(a, b, alt)
    ref = mannwhitneyu(a, b, alternative=alt, method="exact")
    assert r.exact
    assert r.u == ref.statistic
    assert r.p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)


def test_rank_sum_falls_back_to_r_normal_approximation():
    from scipy.stats import mannwhitneyu

    a = np.array([1, 2, 2, 3, 5, 5, 7.0])
    b = np.array([0, 1, 1, 2, 3, 4.0])
    r = rank_sum_test(a, b)  # ties: R uses the normal approximation with continuity correction
    assert not r.exact
    assert r.p == pytest.approx(mannwhitneyu(a, b, alternative="greater", method="asymptotic").pvalue, rel=1e-12)
    assert r.p == pytest.approx(human.mann_whitney_greater(a, b), rel=1e-12)
    big = np.arange(60.0)
    assert not rank_sum_test(big + 0.5, big).exact  # n >= 50: normal approximation
    with pytest.raises(AnalysisInputError, match="NaN"):
        rank_sum_test([1.0, np.nan], [2.0])
    with pytest.raises(AnalysisInputError, match="alternative"):
        rank_sum_test([1.0], [2.0], "bigger")


@pytest.fixture(scope="module")
def csen(shared_data):
    he = require(shared_data / "wmt21-news-systems" / "humaneval" / "newstest2021-toen")
    t = loaders.read_ratings(require(he / "ad-csen-good-stnd.csv"))
    return {c: loaders.table_to_numpy(t, c) for c in ("HITId", "WorkerId", "sys_id", "sid", "type", "score")}, he


def test_nle_worker_test_on_wmt21_csen(csen):
    """Every WMT21 cs-en worker: the exact p where R uses it (no ties, < 50 pairs) equals scipy's
    exact Mann-Whitney p of the same differences; ties fall back to the asymptotic p."""
    from scipy.stats import mannwhitneyu

    c, _ = csen
    key = np.char.add(np.char.add(c["HITId"].astype(str), "|"),
                      np.char.add(np.char.add(c["sys_id"].astype(str), "|"), c["sid"].astype(str)))
    res = nle_worker_test(c["WorkerId"], c["type"], key, c["score"])
    tested = np.isfinite(res["p"])
    print(f"cs-en: {len(res['worker'])} workers, {tested.sum()} tested, {res['exact'].sum()} exact, "
          f"{res['passed'].sum()} pass p < 0.05")
    # golden counts of this release (these workers all passed WMT's paired t-test already)
    assert (len(res["worker"]), tested.sum(), res["exact"].sum(), res["passed"].sum()) == (92, 92, 29, 53)
    # recompute the exact ones independently from the raw rows of one worker
    w = res["worker"][np.flatnonzero(res["exact"])[0]]
    sel = c["WorkerId"].astype(str) == w
    orig = {k: s for k, s, t in zip(key[sel], c["score"][sel], c["type"][sel]) if t == "SYSTEM"}
    db = [orig[k] - s for k, s, t in zip(key[sel], c["score"][sel], c["type"][sel]) if t == "BAD_REF" and k in orig]
    dr = [orig[k] - s for k, s, t in zip(key[sel], c["score"][sel], c["type"][sel]) if t == "REPEAT" and k in orig]
    ref = mannwhitneyu(db, dr, alternative="greater", method="exact").pvalue
    j = int(np.flatnonzero(res["worker"] == w)[0])
    assert res["p"][j] == pytest.approx(ref, rel=1e-10)
    assert res["n_bad"][j] == len(db)
    assert res["n_repeat"][j] == len(dr)
    # the exact p is never the normal approximation's value for those workers
    approx = nle_worker_test(c["WorkerId"], c["type"], key, c["score"], exact=False)
    assert not np.allclose(approx["p"][res["exact"]], res["p"][res["exact"]])


def test_nle_worker_test_bad_input():
    with pytest.raises(AnalysisInputError, match="one length"):
        nle_worker_test(["w"], ["SYSTEM", "BAD_REF"], ["k"], [1.0])
    res = nle_worker_test(["w", "w"], ["SYSTEM", "BAD_REF"], ["k", "k"], [80.0, 20.0])
    assert np.isnan(res["p"][0])
    assert not res["passed"][0]


def test_sign_test_against_binomial_sums():
    from scipy.stats import binomtest

    for w, lo in ((7, 3), (30, 12), (0, 5), (5, 0), (412, 380)):
        n = w + lo
        ref = sum(math.comb(n, k) for k in range(w, n + 1)) / 2 ** n
        assert sign_test(w, lo) == pytest.approx(ref, rel=1e-12)
        assert sign_test(w, lo) == pytest.approx(binomtest(w, n, 0.5, alternative="greater").pvalue, rel=1e-9)
        assert sign_test(w, lo, "two-sided") == pytest.approx(binomtest(w, n).pvalue, rel=1e-9)
    assert sign_test(7, 3) == pytest.approx(176 / 1024)
    assert math.isnan(sign_test(0, 0))
    with pytest.raises(AnalysisInputError):
        sign_test(-1, 3)


def test_sign_test_matrix_on_wmt21_segment_pairs(csen):
    """Pairwise 'relative ranking' from the WMT21 cs-en segment scores: for each pair of systems
    and each common segment, the system with the higher segment z wins."""
    c, _ = csen
    seg = human.segment_scores(c["sys_id"], c["sid"], c["score"], c["type"])
    by_seg = {}
    for s, g, z in zip(seg["system"], seg["segment"], seg["score"]):
        by_seg.setdefault(g, {})[s] = z
    a, b, o = [], [], []
    for d in by_seg.values():
        for x, y in itertools.combinations(sorted(d), 2):
            a.append(x)
            b.append(y)
            o.append(int(np.sign(d[x] - d[y])))
    res = sign_test_matrix(a, b, o)
    k = len(res["systems"])
    assert k == 9
    assert res["wins"].sum() == sum(v != 0 for v in o)
    i, j = 0, k - 1  # best vs worst: recount and test with the binomial sum
    wi, wj = int(res["wins"][i, j]), int(res["wins"][j, i])
    n = wi + wj
    assert res["p"][i, j] == pytest.approx(sum(math.comb(n, q) for q in range(wi, n + 1)) / 2 ** n, rel=1e-12)
    assert res["p"][i, j] < 1e-3
    share = significant_pair_share(res["p"])
    print("sign-test shares", share)
    assert 0 < share[0.001] <= share[0.01] <= share[0.05] <= 1
    with pytest.raises(AnalysisInputError, match="outcome"):
        sign_test_matrix(["a"], ["b"], [2])


def test_combine_adequacy_fluency_rules():
    pa = np.array([[np.nan, 0.01, 0.2, 0.03], [0.9, np.nan, 0.5, 0.5],
                   [0.8, 0.5, np.nan, 0.5], [0.97, 0.5, 0.5, np.nan]])
    pf = np.array([[np.nan, 0.9, 0.01, 0.5], [0.001, np.nan, 0.3, 0.5],
                   [0.9, 0.02, np.nan, 0.5], [0.5, 0.5, 0.5, np.nan]])
    d, src = combine_adequacy_fluency(pa, pf, alpha=0.05)
    assert d[0, 1] == 1
    assert src[0, 1] == "adequacy"
    assert d[1, 0] == -1
    assert d[0, 2] == 1
    assert src[0, 2] == "fluency"
    assert d[2, 1] == 1
    assert d[1, 2] == -1
    assert d[0, 3] == 1
    assert d[3, 0] == -1
    d2, src2 = combine_adequacy_fluency(pa, pf, alpha=0.01)
    assert d2[0, 3] == 0
    assert src2[0, 3] == ""
    assert (d + d.T == 0).all()
    with pytest.raises(AnalysisInputError, match="square"):
        combine_adequacy_fluency(pa, pf[:3])


def test_pair_share_reproduces_wmt21_wilcoxon_files(csen, shared_data):
    """A10 on real data: the share of significant pairs computed from the ratings equals the
    share in the released adwilcox matrices (0.12 marks n.s. there) for every to-English pair."""
    he = csen[1]
    for lp in ("cs-en", "is-en", "ru-en"):
        t = loaders.read_ratings(require(he / f"ad-{lp.replace('-', '')}-good-stnd.csv"))
        col = {k: loaders.table_to_numpy(t, k) for k in ("sys_id", "sid", "type", "score")}
        seg = human.segment_scores(col["sys_id"], col["sid"], col["score"], col["type"])
        _, p = human.wilcoxon_matrix({s: seg["score"][seg["system"] == s] for s in np.unique(seg["system"])})
        _, _, ref = loaders.read_matrix(he / f"adwilcox-{lp.replace('-', '')}.csv")
        k = ref.shape[0]
        released = (ref[np.triu_indices(k, 1)] != 0.12).mean()
        share = significant_pair_share(p)
        print(lp, share, released)
        assert share[0.05] == pytest.approx(released, abs=1e-12)
        assert share[0.001] <= share[0.01] <= share[0.05]
    assert np.isnan(significant_pair_share(np.full((1, 1), np.nan))[0.05])
    with pytest.raises(AnalysisInputError, match="square"):
        significant_pair_share(np.zeros((2, 3)))


def test_significance_curve_grows_with_judgements(csen):
    c, _ = csen
    sel = np.isin(c["type"], ("SYSTEM", "REPEAT"))
    order = np.arange(sel.sum())  # file order stands in for collection order
    cur = significance_curve(c["sys_id"][sel], c["score"][sel], order, [50, 200, 2000])
    print(cur)
    s05 = cur["share"][:, 0]
    assert s05[0] < s05[-1]
    assert np.all(np.diff(s05) >= -0.05)
    # at 2000 (>= every system's count) the curve equals the full-data matrix on judgements
    z = c["score"][sel]
    sy = c["sys_id"][sel].astype(str)
    _, p = human.wilcoxon_matrix({s: z[sy == s] for s in np.unique(sy)}, significant_digits=None)
    assert s05[-1] == significant_pair_share(p)[0.05]
    with pytest.raises(AnalysisInputError, match="at least 1"):
        significance_curve(sy, z, order, [0])


def test_combine_adequacy_fluency_recovers_simulated_systems():
    """Four systems with known adequacy [0.5, 0.5, 0, 0] and fluency [0.4, 0, 0.4, 0] (z units,
    400 judgements each, sd 1): adequacy decides where it differs (even against fluency, 1 vs 2),
    fluency decides the adequacy ties (0 > 1, 2 > 3)."""
    rng = np.random.default_rng(11)
    adequacy, fluency = [0.5, 0.5, 0.0, 0.0], [0.4, 0.0, 0.4, 0.0]
    names = ["s0", "s1", "s2", "s3"]
    adq = {s: rng.normal(a, 1, 400) for s, a in zip(names, adequacy)}
    flu = {s: rng.normal(f, 1, 400) for s, f in zip(names, fluency)}
    _, pa = human.wilcoxon_matrix(adq, order=names, significant_digits=None)
    _, pf = human.wilcoxon_matrix(flu, order=names, significant_digits=None)
    d, src = combine_adequacy_fluency(pa, pf)
    expected = np.array([[0, 1, 1, 1], [-1, 0, 1, 1], [-1, -1, 0, 1], [-1, -1, -1, 0]])
    assert (d == expected).all(), (d, pa, pf)
    assert src[0, 1] == src[2, 3] == "fluency"
    assert src[1, 2] == src[0, 3] == "adequacy"
    assert pf[2, 1] < 0.05  # fluency alone would have ranked 2 above 1
