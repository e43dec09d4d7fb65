"""Unit tests of mtscore.analysis.human and .pairwise on synthetic data (oracles: scipy)."""
import numpy as np
import pytest
from scipy import stats

from mtscore.analysis import human
from mtscore.analysis.metaeval import system_pairs as pairwise


def test_standardize():
    w = np.array(["a"] * 5 + ["b"] * 4 + ["c"] * 3)
    s = np.array([10, 20, 30, 40, 50, 1, 1, 3, 5, 7, 7, 7], float)
    z, keep = human.standardize(w, s)
    assert keep.tolist() == [True] * 9 + [False] * 3  # worker c has sd 0
    for name in "ab":
        zz = z[w == name]
        assert zz.mean() == pytest.approx(0, abs=1e-12)
        assert zz.std(ddof=1) == pytest.approx(1)
    with pytest.raises(ValueError, match="finite"):
        human.standardize(w, np.r_[s[:-1], np.nan])


def test_group_means_and_standardize_options():
    """The DA core both pipelines share: groups in key order (first key slowest), first row,
    counts, R or numpy means; standardize with numpy sums, rounded statistics and a mask."""
    from mtscore.analysis.human.scores import group_means

    sy = np.array(["B", "A", "B", "A", "B"])
    sg = np.array([2, 1, 1, 1, 2])
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    for how in ("r", "numpy"):
        g = group_means([sy, sg], [v, -v], how=how)
        assert (g.keys[0].tolist(), g.keys[1].tolist()) == (["A", "B", "B"], [1, 1, 2])
        assert (g.first.tolist(), g.n.tolist()) == ([1, 2, 0], [2, 1, 2])
        assert g.inv.tolist() == [2, 0, 1, 0, 2]
        assert (g.means[0].tolist(), g.means[1].tolist()) == ([3.0] * 3, [-3.0] * 3)
    with pytest.raises(ValueError, match="how"):
        group_means([sy], [v], how="mean")
    w = np.array(["a"] * 4 + ["b"] * 3 + ["a", "b"])
    s = np.array([10, 20, 30, 40, 1, 2, 6, 99, 99], float)
    stats_rows = np.arange(9) < 7                      # the last two rows are scored, not counted
    z, keep = human.standardize(w, s, mask=stats_rows, sums="numpy", round_stats=np.round)
    sd_a, sd_b = np.round(np.std([10, 20, 30, 40], ddof=1)), np.round(np.std([1, 2, 6], ddof=1))
    assert keep.all()
    assert (z[7], z[8]) == ((99 - 25) / sd_a, (99 - 3) / sd_b)
    z2, _ = human.standardize(w, s, mask=stats_rows)
    assert z2[7] == pytest.approx((99 - 25) / np.std([10, 20, 30, 40], ddof=1))
    with pytest.raises(ValueError, match="sums"):
        human.standardize(w, s, sums="pairwise")


@pytest.mark.parametrize("seed", range(5))
def test_mann_whitney_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a = np.round(rng.normal(0.2, 1, 60), 1)
    b = np.round(rng.normal(0, 1, 45), 1)
    ref = stats.mannwhitneyu(a, b, alternative="greater", method="asymptotic", use_continuity=True).pvalue
    assert human.mann_whitney_greater(a, b) == pytest.approx(ref, rel=1e-12)


def test_scores_clusters_subsample():
    rng = np.random.default_rng(1)
    systems = np.repeat(["good", "mid", "bad"], 300)
    seg = np.tile(np.arange(100), 9)
    score = np.r_[rng.normal(1, 1, 300), rng.normal(0.9, 1, 300), rng.normal(-1, 1, 300)]
    types = np.array(["SYSTEM"] * 900)
    s = human.segment_scores(systems, seg, score, types)
    assert len(s["system"]) == 300
    assert s["n"].tolist() == [3] * 300
    g = {k: s["score"][s["system"] == k] for k in ("good", "mid", "bad")}
    names, p = human.wilcoxon_matrix(g)
    assert names[-1] == "bad"
    assert human.rank_clusters(p).tolist() == [1, 1, 2]
    assert human.rank_clusters(p, rule="strict").tolist() == [1, 1, 2]
    tab = human.wmt_wilcoxon_table(p)
    assert tab[0, 2] < 0.05
    assert tab[2, 0] == 0.12
    sy = human.system_scores(s["system"], s["score"])
    assert sy["system"][-1] == "bad"
    d = human.document_scores(s["system"], s["segment"] // 10, s["score"])
    assert len(d["score"]) == 30
    m = human.equal_effort_subsample(systems, np.arange(900)[::-1], 50)
    assert m.sum() == 150
    assert m[-50:].all()
    assert not m[:250].any()
    r, n = human.self_replication(np.arange(50), np.arange(50.0), np.arange(10, 60), np.arange(10, 60.0) * 2)
    assert n == 40
    assert r == pytest.approx(1.0)


def test_qc_tests():
    rng = np.random.default_rng(2)
    worker, types, key, score = [], [], [], []
    for w, gap in (("good", 30.0), ("random", 0.0)):
        for k in range(10):
            orig = rng.uniform(40, 90)
            worker += [w, w, w]
            types += ["SYSTEM", "BAD_REF", "REPEAT"]
            key += [f"{k}"] * 3
            noise = rng.normal(0, 15 if w == "random" else 3, 2)
            score += [orig, orig - gap + noise[0], orig + noise[1]]
    q = human.qc_paired_ttest(worker, types, key, score)
    assert q["worker"].tolist() == ["good", "random"]
    assert q["passed"].tolist() == [True, False]
    d = np.array(score)[np.array(types) == "BAD_REF"][:10] - np.array(score)[np.array(types) == "SYSTEM"][:10]
    assert q["p"][0] == pytest.approx(stats.ttest_1samp(d, 0, alternative="less").pvalue)
    assert human.qc_ranksum(worker, types, key, score)["passed"].tolist() == [True, False]
    assert human.qc_repeats(worker, types, key, score)["passed"].all()
    f = human.red_flags(worker, types, score)
    # the random clicker has mean(BAD_REF) >= mean(SYSTEM); no REF items, so that rule is silent
    assert f["flag_scores"].tolist() == [False, True]


def test_sequence_effect_recovers_coefficients():
    rng = np.random.default_rng(3)
    n_w, n_items = 40, 100
    gold = rng.normal(size=n_items)
    ws, hs, pos, ys, gs = [], [], [], [], []
    for w in range(n_w):
        prev = 0.0
        for t in range(n_items):
            y = 0.2 * prev + 0.7 * gold[t] + rng.normal(0, 0.5)
            ws.append(w)
            hs.append(0)
            pos.append(t)
            ys.append(y)
            gs.append(gold[t])
            prev = y
    res = human.sequence_effect(ws, hs, pos, ys, gs)[0]
    assert res["coef"][1] == pytest.approx(0.2, abs=0.03)
    assert res["coef"][2] == pytest.approx(0.7, abs=0.03)
    assert res["p_value"][1] < 1e-3
    assert res["n"] == n_w * (n_items - 1)
    assert len(human.sequence_effect(ws, hs, pos, ys, gs, buckets=3)) == 3


def test_pairwise_decisions_and_tables():
    import sacrebleu

    rng = np.random.default_rng(4)
    # averaged metric: paired t-test against scipy
    X = rng.normal(0, 1, (4, 200)) + np.array([0.5, 0.4, 0.0, -0.5])[:, None]
    means, p = pairwise.paired_ttest_all(X)
    assert p[0, 2] == pytest.approx(stats.ttest_rel(X[0], X[2], alternative="greater").pvalue)
    systems = ["s0", "s1", "s2", "s3"]
    hum = {s: rng.normal(mu, 1, 400) for s, mu in zip(systems, (0.5, 0.45, 0.0, -0.5))}
    dec = pairwise.pairwise_decisions(systems, hum, {"m": means}, {"m": p})
    assert len(dec["metric"]) == 6
    assert (dec["metric_delta"] >= 0).all()
    tab = pairwise.error_table(dec, "m")
    assert tab["counts"].sum() == 6
    dec2 = dict(dec)
    dec2 = {k: np.r_[v, v] for k, v in dec.items()}
    dec2["metric"] = np.r_[dec["metric"], np.array(["n"] * 6)]
    dec2["error"] = np.r_[dec["error"], np.array(["I"] * 6)]
    ms, A = pairwise.agreement_matrix(dec2)
    assert ms == ["m", "n"]
    assert A[1, 1] == 6
    assert A[0, 1] == 0
    # corpus BLEU from sacrebleu statistics; paired bootstrap decisions
    refs = [" ".join(rng.choice(list("abcdefgh"), 12)) for _ in range(60)]
    hyps = [[" ".join(w if rng.random() > q else "z" for w in r.split()) for r in refs] for q in (0.1, 0.3, 0.6)]
    bleu = sacrebleu.BLEU()
    stats_ = np.array([[bleu._extract_corpus_statistics([h], [[r]])[0] for h, r in zip(hs, refs)] for hs in hyps], float)
    scores, pb = pairwise.paired_bootstrap_all(stats_, pairwise.bleu_from_stats, n_resamples=300)
    for i, hs in enumerate(hyps):
        assert scores[i] == pytest.approx(sacrebleu.corpus_bleu(hs, [refs]).score, abs=1e-9)
    assert pb[0, 2] < 0.01
    assert pb[2, 0] > 0.99
