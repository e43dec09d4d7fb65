"""The pairwise metric-vs-human decisions (Mathur et al. 2020 Sec. 5 / Fig. 3) on the WMT21
release (wmt21-news-systems @f41750d): mtscore's human decisions equal the official Wilcoxon
matrices for every system pair of every language pair, and one language pair's Type I / II
counts per bin are rebuilt here independently (scipy's Mann-Whitney U, a direct sacreBLEU
bootstrap)."""
from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from conftest import require
from scipy.stats import mannwhitneyu

from mtscore.analysis import human
from mtscore.analysis.data import read_matrix, read_ratings, table_to_numpy
from mtscore.analysis.metaeval.system_pairs import DEFAULT_BINS, error_bins, human_decisions
from mtscore.bindings.reproduce.wmt21_pairs import lp_decisions, mt_systems, output_name, read_diff_stars
from mtscore.engine.metrics.bleu import BLEU
from mtscore.engine.metrics.chrf import CHRF

FOLDERS = {**{lp: "newstest2021-toen" for lp in ("cs-en", "de-en", "ha-en", "is-en", "ja-en", "ru-en", "zh-en")},
           **{lp: "facebook-wikipedia-2021" for lp in ("bn-hi", "hi-bn", "xh-zu", "zu-xh")}}
# ru-en, 10 MT systems, 45 pairs: per bin (NS, 0-1, 1-2, 2-3, 3-5, 5-10, >10) pairs, agree, Type I, Type II
RU_EN = {"BLEU": {"pairs": [9, 1, 11, 6, 9, 9, 0], "agree": [5, 0, 5, 3, 4, 6, 0],
                  "type_I": [0, 1, 6, 3, 5, 3, 0], "type_II": [4, 0, 0, 0, 0, 0, 0]},
         "chrF": {"pairs": [11, 10, 2, 9, 6, 7, 0], "agree": [8, 5, 0, 5, 1, 6, 0],
                  "type_I": [0, 5, 2, 4, 5, 1, 0], "type_II": [3, 0, 0, 0, 0, 0, 0]}}


@pytest.fixture(scope="module")
def humaneval(shared_data):
    return require(shared_data / "wmt21-news-systems" / "humaneval")


def _seg_groups(folder, lp):
    """System -> segment z (the Z.SCR column of the released ad-seg-scores file, read here)."""
    rows = [ln.split() for ln in require(folder / f"ad-seg-scores-{lp}.csv").read_text().splitlines()[1:]]
    sys_ = np.array([r[0] for r in rows])
    z = np.array([float(r[3]) for r in rows])
    return {s: z[sys_ == s] for s in np.unique(sys_)}


@pytest.mark.parametrize("lp", list(FOLDERS))
def test_human_decisions_equal_the_official_matrices(humaneval, lp):
    folder = humaneval / FOLDERS[lp]
    code = lp.replace("-", "")
    groups = _seg_groups(folder, lp)
    names, ref = read_matrix(require(folder / f"adwilcox-{code}.csv"))[1:]
    D, p = human_decisions(groups, names)
    k = len(names)
    upper = np.triu(np.ones((k, k), bool), 1)
    # adwilcox: p of "row beats column" for a row ranked above, where p < 0.05; 0.12 elsewhere
    sig = upper & (D == 1)
    assert np.array_equal(ref != 0.12, sig)
    np.testing.assert_allclose(p[sig], ref[sig], rtol=1e-12)  # printed to 15 significant digits
    # ad-DA-diff-wilcoxon-rs: stars of both directions, * / ** / *** = p < 0.05 / 0.01 / 0.001
    star_names, stars = read_diff_stars(require(folder / f"ad-DA-diff-wilcoxon-rs-{code}.csv"))
    assert star_names == names
    q = np.nan_to_num(p, nan=1.0)
    assert np.array_equal(stars, (q < 0.05).astype(int) + (q < 0.01) + (q < 0.001))
    assert np.array_equal(D == 1, stars > 0)
    assert np.array_equal(D, -D.T)
    if lp == "de-en":  # a lower-ranked system wins: starred in ad-DA-diff only, 0.12 in adwilcox
        i, j = names.index("happypoet.8"), names.index("Watermelon.13")
        assert i > j
        assert D[i, j] == 1
        assert stars[i, j] == 1
        assert ref[j, i] == 0.12


def test_segment_z_from_ratings_rounded_as_wmt(humaneval):
    """From the individual ratings, the segment means carry more than the 15 digits WMT wrote and
    ranked: rounded (the default) the p-values are the printed ones, unrounded ties break
    differently and they move by up to 1.3 % relative."""
    folder = humaneval / "newstest2021-toen"
    t = read_ratings(require(folder / "ad-deen-good-stnd.csv"))
    col = {c: table_to_numpy(t, c) for c in ("sys_id", "sid", "score", "type")}
    seg = human.segment_scores(col["sys_id"], col["sid"], col["score"], col["type"])
    groups = {str(s): seg["score"][seg["system"] == s] for s in np.unique(seg["system"])}
    names, ref = read_matrix(require(folder / "adwilcox-deen.csv"))[1:]
    sig = ref != 0.12
    D, p = human_decisions(groups, names)
    np.testing.assert_allclose(p[sig], ref[sig], rtol=1e-12)
    D_raw, p_raw = human_decisions(groups, names, significant_digits=None)
    assert np.array_equal(D, D_raw)  # the decisions do not change here, the p-values do
    assert 0.01 < np.nanmax(np.abs(p_raw[sig] / ref[sig] - 1)) < 0.02


def _direct_bootstrap(metric, ours, hyps, ref, n=1000, seed=12345):
    """Resample segments, score each resample with sacreBLEU's own formula; p[a, b] = share of
    resamples a <= b. The segment statistics are mtscore's (sacreBLEU's per segment is ~10 s here),
    checked equal to sacreBLEU's for the first system."""
    st = np.stack(ours.systems_stats(hyps, [ref])).astype(np.float64)
    assert np.array_equal(st[0], np.array(metric._extract_corpus_statistics(hyps[0], [ref]), dtype=np.float64))
    idx = np.random.default_rng(seed).integers(0, len(ref), size=(n, len(ref)))
    res = np.array([[metric._compute_score_from_stats(list(st[s, row].sum(axis=0))).score
                     for s in range(len(hyps))] for row in idx])
    scores = np.array([metric._compute_score_from_stats(list(st[s].sum(axis=0))).score for s in range(len(hyps))])
    return scores, (res[:, :, None] <= res[:, None, :]).mean(axis=0)


def test_ru_en_bins_rebuilt_independently(humaneval):
    folder = humaneval / "newstest2021-toen"
    groups = _seg_groups(folder, "ru-en")
    systems = mt_systems(groups)
    assert len(systems) == 10
    assert "HUMAN.0" in groups
    txt = humaneval.parent / "txt"
    ref = require(txt / "references" / "newstest2021.ru-en.ref.A.en").read_text(encoding="utf-8").splitlines()
    hyps = [require(txt / "system-outputs" / f"newstest2021.ru-en.hyp.{output_name(s)}.en")
            .read_text(encoding="utf-8").splitlines() for s in systems]
    ours = lp_decisions(humaneval, "ru-en", groups)
    for name, metric, mine in (("BLEU", sacrebleu.BLEU(), BLEU()), ("chrF", sacrebleu.CHRF(), CHRF())):
        scores, p = _direct_bootstrap(metric, mine, hyps, ref)
        counts = {k: np.zeros(7, int) for k in ("pairs", "agree", "type_I", "type_II")}
        for a in range(len(systems)):
            for b in range(a + 1, len(systems)):
                w, l_ = (a, b) if scores[a] >= scores[b] else (b, a)
                ga, gb = groups[systems[w]], groups[systems[l_]]
                human = (1 if mannwhitneyu(ga, gb, alternative="greater").pvalue < 0.05 else
                         -1 if mannwhitneyu(gb, ga, alternative="greater").pvalue < 0.05 else 0)
                if p[w, l_] < 0.025:
                    k = int(np.searchsorted(DEFAULT_BINS, scores[w] - scores[l_], side="right"))
                    counts["agree" if human == 1 else "type_I"][k] += 1
                else:
                    k = 0
                    counts["agree" if human == 0 else "type_II"][k] += 1
                counts["pairs"][k] += 1
        assert {k: v.tolist() for k, v in counts.items()} == RU_EN[name], name
        bins = error_bins(ours, name)
        assert {k: bins[k].tolist() for k in RU_EN[name]} == RU_EN[name], name
        sel = ours["metric"] == name
        assert sorted(ours["metric_delta"][sel]) == pytest.approx(
            sorted(abs(scores[a] - scores[b]) for a in range(10) for b in range(a + 1, 10)), abs=1e-9)


def test_read_diff_stars_malformed_files(tmp_path):
    """An extra row, a wrong row name or an empty file: one AnalysisInputError naming the file."""
    from mtscore.analysis.errors import AnalysisInputError

    f = tmp_path / "ad-DA-diff-wilcoxon-rs-xxen.csv"
    f.write_text("A B\nA - 0.1*\nB -0.1 -\n", encoding="utf-8")
    names, stars = read_diff_stars(f)
    assert names == ["A", "B"]
    assert stars.tolist() == [[0, 1], [0, 0]]
    for text, message in (("A B\nA - 0.1*\nB -0.1 -\nC 0 0\n", "line 4: expected no row"),
                          ("A B\nA - 0.1*\nX -0.1 -\n", "line 3: expected B and 2 cells"),
                          ("", "empty")):
        f.write_text(text, encoding="utf-8")
        with pytest.raises(AnalysisInputError, match=message) as e:
            read_diff_stars(f)
        assert str(f) in str(e.value)
