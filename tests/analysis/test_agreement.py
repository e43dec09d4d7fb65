"""Cohen's kappa against R ``psych::cohen.kappa`` (refbias release, every judge pair) and the
reference-bias analysis of Ma et al. (2017) against evaluation-methods Part F."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.human.agreement import (
    FIGURE1_PANELS,
    bootstrap_mean_ci,
    cohen_kappa,
    figure1_intervals,
    kappa_weights,
    nonoverlap_shares,
    pair_setting,
    pairwise_kappas,
    rating_crosstab,
)
from tests.conftest import require

BATCHES = {"batch1": [1, 4, 10, 20, 21], "batch2": [5, 7, 16, 19, 22], "batch3": [2, 6, 8, 15, 25],
           "batch4": [9, 13, 14, 18, 24], "batch5": [3, 11, 12, 17, 23]}
GROUPS = {g: [f"j{i}" for i in v] for g, v in BATCHES.items()}


@pytest.fixture(scope="module")
def refbias(shared_data: Path):
    d = shared_data / "refbias"
    lines = [ln for ln in require(d / "ratings_all").read_text().splitlines() if ln.strip()]
    names = lines[0].split(";")
    R = np.array([[float(c) for c in ln.split(";")] for ln in lines[1:]]).T  # judges x items
    return d, names, R


@pytest.fixture(scope="module")
def table(refbias):
    _, names, R = refbias
    return pairwise_kappas(R, names, GROUPS, source_groups=["batch5"])


def _psych_rows(path: Path):
    for ln in path.read_text().splitlines():
        p = ln.split()
        if p and p[0] != "klo":
            a, b = p[0].split("_")
            yield a, b, np.array([float(v) for v in p[1:]])


def test_every_judge_pair_equals_psych(refbias):
    """All 600 ordered judge pairs of kappas_all.txt: lower/estimate/upper of the unweighted and
    the (default, quadratic) weighted kappa, to 1e-9."""
    d, names, R = refbias
    idx = {n: i for i, n in enumerate(names)}
    worst, count = np.zeros(6), 0
    for a, b, want in _psych_rows(require(d / "kappas" / "kappas_all.txt")):
        u = cohen_kappa(R[idx[a]], R[idx[b]])
        w = cohen_kappa(R[idx[a]], R[idx[b]], weights="quadratic")
        got = np.array([u.low, u.kappa, u.high, w.low, w.kappa, w.high])
        worst = np.maximum(worst, np.abs(got - want))
        count += 1
    assert count == 600
    assert worst.max() < 1e-9, worst


@pytest.mark.parametrize(("name", "setting", "n"), [("same_ref_kappas.txt", "SAME", 40),
                                              ("diff_ref_kappas.txt", "DIFF", 150),
                                              ("src_kappas.txt", "SOURCE", 10)])
def test_setting_files_equal_pairwise_table(refbias, table, name, setting, n):
    d = refbias[0]
    want = {frozenset((a, b)): v for a, b, v in _psych_rows(require(d / "kappas" / name))}
    m = table.where(setting)
    assert len(want) == m.sum() == n
    for a, b, lo, k, hi in zip(table.judge_a[m], table.judge_b[m], table.low[m], table.kappa[m], table.high[m]):
        assert np.abs(np.array([lo, k, hi]) - want[frozenset((a, b))][:3]).max() < 1e-9


def test_group_means_and_corrected_bootstrap(table):
    """evaluation-methods F2 [CHECKED]: mean kappa SAME 0.197, DIFF 0.164, SOURCE 0.247; the
    corrected bootstrap (M=1000, with replacement, n=N, 95%) SAME [0.165, 0.230], DIFF
    [0.147, 0.179] (a different RNG: agreement within Monte Carlo error), and they overlap."""
    mean = {s: table.kappa[table.where(s)].mean() for s in ("SAME", "DIFF", "SOURCE")}
    assert round(mean["SAME"], 3) == 0.197
    assert round(mean["DIFF"], 3) == 0.164
    assert round(mean["SOURCE"], 3) == 0.247
    assert round(mean["SAME"] - mean["DIFF"], 3) in (0.032, 0.033)
    quoted = {"SAME": (0.165, 0.230), "DIFF": (0.147, 0.179)}
    for s, (lo, hi) in quoted.items():
        m, blo, bhi = bootstrap_mean_ci(table.kappa[table.where(s)], seed=2017)
        assert m == pytest.approx(mean[s])
        assert abs(blo - lo) < 0.004, (s, blo, bhi)
        assert abs(bhi - hi) < 0.004, (s, blo, bhi)
    same = bootstrap_mean_ci(table.kappa[table.where("SAME")], seed=1)
    diff = bootstrap_mean_ci(table.kappa[table.where("DIFF")], seed=1)
    assert same[1] < diff[2]  # Fig. 1(f): the corrected intervals overlap


def test_figure1_panels(table):
    """Each correction of Fig. 1: (a) M=50 without replacement n<N; ... (f) the corrected one.
    (f) equals bootstrap_mean_ci's default; without replacement and n<N the interval shrinks
    relative to (d) (finite-population effect), and M=50 (e) is noisier than (f) but centred."""
    v = table.kappa[table.where("SAME")]
    panels = figure1_intervals(v, original_sample_size=20, original_level=0.90, seed=7)
    assert [p.panel for p in FIGURE1_PANELS] == list("abcdef")
    assert set(panels) == set("abcdef")
    assert panels["f"] == bootstrap_mean_ci(v, 1000, None, True, 0.95, seed=7)
    width = {p: hi - lo for p, (_, lo, hi) in panels.items()}
    assert width["a"] < width["b"]  # a narrower proportion than 95%
    assert width["c"] < width["d"]  # drawing without replacement from 40 understates the spread
    assert width["f"] < width["d"]  # n = N = 40 > 20: the mean of more values varies less
    for p in "abcdef":
        assert panels[p][1] < v.mean() < panels[p][2]


def test_table2_nonoverlap(table):
    """Ma et al. (2017) Table 2 (and evaluation-methods F3): SOURCE/SOURCE 47% (45), SOURCE/SAME
    29% (400), SOURCE/DIFF 27% (1,500), SAME/SAME 12% (780), SAME/DIFF 13% (6,000), DIFF/DIFF
    12% (11,175)."""
    rows = nonoverlap_shares(table, ["SOURCE", "SAME", "DIFF"])
    got = {(r["setting_a"], r["setting_b"]): (round(100 * r["share"]), r["total"]) for r in rows}
    assert got == {("SOURCE", "SOURCE"): (47, 45), ("SOURCE", "SAME"): (29, 400), ("SOURCE", "DIFF"): (27, 1500),
                   ("SAME", "SAME"): (12, 780), ("SAME", "DIFF"): (13, 6000), ("DIFF", "DIFF"): (12, 11175)}


def test_table2_counts_equal_release_files(refbias, table):
    """The exact counts from the release's own kappa files (its 3_compute.py rule) equal ours."""
    d = refbias[0]
    rows = {(r["setting_a"], r["setting_b"]): r["nonoverlap"] for r in nonoverlap_shares(table)}
    ci = {s: np.array([v[[0, 2]] for *_, v in _psych_rows(require(d / "kappas" / f))])
          for s, f in (("SAME", "same_ref_kappas.txt"), ("DIFF", "diff_ref_kappas.txt"), ("SOURCE", "src_kappas.txt"))}
    for a, b in (("SAME", "DIFF"), ("SOURCE", "SOURCE"), ("DIFF", "DIFF")):
        A, B = ci[a], ci[b]
        apart = (A[:, None, 1] < B[None, :, 0]) | (A[:, None, 0] > B[None, :, 1])
        want = int(np.triu(apart, 1).sum()) if a == b else int(apart.sum())
        assert rows.get((a, b), rows.get((b, a))) == want


def test_rating_crosstab(refbias, table):
    """Fig. 4: per setting, every judge pair's ratings of the same item; rows sum to 100%."""
    _, _, R = refbias
    ct = rating_crosstab(R, table, source_groups=["batch5"])
    assert set(ct) == {"SAME", "DIFF", "SOURCE", "SOURCE-REF"}
    assert ct["SAME"]["counts"].sum() == 2 * 40 * 100
    assert ct["SOURCE-REF"]["counts"].sum() == 100 * 100
    assert np.array_equal(ct["DIFF"]["counts"], ct["DIFF"]["counts"].T)
    assert np.allclose(ct["SOURCE"]["row_percent"].sum(axis=1), 100)
    # SOURCE-REF rows are the source judge's ratings: row sums = how often source judges gave each
    src = np.isin(np.arange(25), [i - 1 for i in BATCHES["batch5"]])
    want = np.array([(R[src] == v).sum() * 20 for v in (1, 2, 3, 4, 5)])
    assert np.array_equal(ct["SOURCE-REF"]["counts"].sum(axis=1), want)


# ---- small cases, no data needed ----------------------------------------------------------------

def test_textbook_values():
    """Hand-checkable: 2 x 2 table [[20, 5], [10, 15]]: p_o = 0.7, p_c = 0.5, kappa = 0.4."""
    x = np.array([0] * 25 + [1] * 25)
    y = np.array([0] * 20 + [1] * 5 + [0] * 10 + [1] * 15)
    k = cohen_kappa(x, y)
    assert k.kappa == pytest.approx(0.4)
    assert k.observed == pytest.approx(0.7)
    assert k.expected == pytest.approx(0.5)
    assert k.n == 50
    assert k.table.tolist() == [[20, 5], [10, 15]]
    assert k.low == pytest.approx(k.kappa - 1.959963984540054 * k.se)
    # two categories: linear and quadratic weights are the identity, so all three agree
    assert cohen_kappa(x, y, "quadratic").kappa == pytest.approx(0.4)
    assert cohen_kappa(x, y, "linear").kappa == pytest.approx(0.4)
    assert tuple(k) == (k.low, k.kappa, k.high)


def test_weights_are_psych_positions():
    assert np.allclose(kappa_weights(3, "quadratic"), [[1, .75, 0], [.75, 1, .75], [0, .75, 1]])
    assert np.allclose(kappa_weights(3, "linear"), [[1, .5, 0], [.5, 1, .5], [0, .5, 1]])
    x, y = [1, 2, 5, 5, 1, 2], [2, 2, 5, 2, 1, 5]  # 3 used of a 1-5 scale: weights over positions
    k3 = cohen_kappa(x, y, "linear")
    assert k3.levels == (1, 2, 5)
    assert k3.kappa == pytest.approx(0.4)  # distances 0, 1, 2 between the used categories
    assert cohen_kappa(x, y, "linear", levels=[1, 2, 3, 4, 5]).kappa == pytest.approx(10 / 31)  # 0, 1, 4
    with pytest.raises(ValueError, match="not one of levels"):
        cohen_kappa(x, y, levels=[1, 2, 3])
    with pytest.raises(ValueError, match="weights must be"):
        cohen_kappa(x, y, weights="cubic")


def test_nan_policy():
    nan = math.nan
    # missing ratings are left out pairwise
    k = cohen_kappa([1, 2, nan, 3, 1], [1, 2, 3, nan, 2])
    assert k.n == 3
    # no common item: n = 0, everything NaN
    e = cohen_kappa([1, nan], [nan, 2])
    assert e.n == 0
    assert math.isnan(e.kappa)
    assert math.isnan(e.low)
    assert math.isnan(e.high)
    # both judges constant on the same value: undefined
    c = cohen_kappa([3, 3, 3], [3, 3, 3], weights="quadratic")
    assert math.isnan(c.kappa)
    assert math.isnan(c.high)
    assert c.n == 3
    c5 = cohen_kappa([3, 3, 3], [3, 3, 3], levels=[1, 2, 3, 4, 5])
    assert math.isnan(c5.kappa)
    # one constant judge against a varied one: defined, 0 (as psych)
    z = cohen_kappa([3, 3, 3, 3], [1, 3, 2, 3])
    assert z.kappa == 0
    assert z.low <= 0 <= z.high
    # strings work as categories
    s = cohen_kappa(["red", "yellow", "blue", "red"], ["red", "blue", "blue", "red"])
    assert s.levels == ("blue", "red", "yellow")
    assert -1 <= s.kappa <= 1


def test_bounds_clipped_to_one():
    k = cohen_kappa([1, 2, 1, 2, 1], [1, 2, 1, 2, 1])
    assert k.kappa == 1
    assert k.high == 1
    assert k.var == 0
    assert not k.variance_clamped


def test_pairwise_errors_and_settings():
    R = np.array([[1, 2, 3, np.nan], [np.nan, np.nan, np.nan, 1.0], [1, 2, 2, 3]])
    t = pairwise_kappas(R, ["a", "b", "c"])
    assert list(t.setting) == ["ALL"] * 3
    assert t.n.tolist() == [0, 3, 1]
    assert math.isnan(t.kappa[0])  # a-b: no common item
    assert pair_setting("g1", "g1") == "SAME"
    assert pair_setting("g1", "g2") == "DIFF"
    assert pair_setting("s", "s", ["s"]) == "SOURCE"
    assert pair_setting("g1", "s", ["s"]) == "SOURCE-REF"
    with pytest.raises(ValueError, match="in no group"):
        pairwise_kappas(R, ["a", "b", "c"], {"g": ["a", "b"]})
    with pytest.raises(ValueError, match="two groups"):
        pairwise_kappas(R, ["a", "b", "c"], {"g": ["a", "b"], "h": ["b", "c"]})
    with pytest.raises(ValueError, match="not a judge"):
        pairwise_kappas(R, ["a", "b", "c"], {"g": ["a", "b", "c", "zz"]})
    with pytest.raises(ValueError, match="at least 2 judges"):
        pairwise_kappas(R[:1])
    assert nonoverlap_shares(t)[0]["total"] == 1  # a-b has no CI; a-c and b-c (n = 1, kappa 0) have


def test_bootstrap_edge_cases():
    assert all(math.isnan(v) for v in bootstrap_mean_ci([np.nan, np.nan]))
    m, lo, hi = bootstrap_mean_ci([0.2, 0.2, 0.2], seed=0)
    assert m == lo == hi == pytest.approx(0.2)
    with pytest.raises(ValueError, match="sample_size must be between 1 and 2, got 3"):
        bootstrap_mean_ci([1.0, 2.0], sample_size=3, replace=False)
    # without replacement and n = N every resample is the whole set: a zero-width interval
    m, lo, hi = bootstrap_mean_ci([0.1, 0.5, 0.3], sample_size=3, replace=False, seed=0)
    assert lo == pytest.approx(hi)
