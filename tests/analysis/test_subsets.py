"""E8: correlation over all sub-sampled system sets (Tangled Figure 2) on the WMT19 en-de
system scores of nitikam/tangled."""
import math

import numpy as np
import pytest
from conftest import require

from mtscore.analysis import data as datasets
from mtscore.analysis.correlation import pearson
from mtscore.analysis.errors import AnalysisInputError
from mtscore.analysis.metaeval.subsets import QUANTILES, subset_correlations, system_subsets


@pytest.fixture(scope="module")
def ende(shared_data):
    require(shared_data / "tangled" / "wmt19_sys_scores")
    return datasets.tangled_sys_level(shared_data, "en-de").complete_metrics()


def test_all_646646_subsets_of_wmt19_ende(ende):
    names = [s.rsplit(".", 1)[0] for s in ende.systems]
    metrics = ["sacreBLEU-BLEU", "chrF", "YiSi-1", "ESIM"]
    rows = np.array([ende.scores[ende.metrics.index(mt)] for mt in metrics])
    marked = [names.index("en_de_task"), names.index("online-X")]
    res = subset_correlations(ende.human, rows, k=10, marked=marked, names=names, return_all=True)
    assert res["subsets"] == math.comb(22, 10) == 646646
    assert res["exhaustive"]
    expect = {"none": math.comb(20, 10), "en_de_task": math.comb(20, 9), "online-X": math.comb(20, 9),
              "en_de_task+online-X": math.comb(20, 8)}
    assert dict(zip(res["groups"], res["count"].tolist())) == expect
    # every subset r equals a plain Pearson on that subset (spot check 300 subsets)
    rng = np.random.default_rng(0)
    for s in rng.integers(0, res["subsets"], 300):
        idx = res["indices"][s]
        for j in range(len(metrics)):
            assert res["r"][s, j] == pytest.approx(pearson(ende.human[idx], rows[j, idx]), abs=1e-12)
    # Tangled §4.2: subsets that contain both outliers correlate higher than those with neither
    mean = dict(zip(res["groups"], res["mean"]))
    q = dict(zip(res["groups"], res["quantiles"]))
    for j, mt in enumerate(metrics):
        print(mt, {g: round(float(mean[g][j]), 3) for g in mean}, "median none", q["none"][j, 2])
        assert mean["en_de_task+online-X"][j] > mean["none"][j] + 0.05
        assert mean["none"][j] < mean["online-X"][j] < mean["en_de_task"][j]
        assert mean["en_de_task"][j] > 0.98  # en_de_task alone drives r to ~1 (Fig. 2)
        assert q["none"][j, 0] < q["en_de_task"][j, 0] - 0.1  # without outliers r spreads widely
    # golden means of sacreBLEU-BLEU per group (regenerate only if the data change)
    np.testing.assert_allclose([mean[g][0] for g in expect], [0.810, 0.988, 0.924, 0.981], atol=6e-4)
    # group statistics agree with the raw rs
    g_none = res["groups"].index("none")
    sel = res["group"] == g_none
    np.testing.assert_allclose(res["quantiles"][g_none, 1], np.quantile(res["r"][sel, 1], QUANTILES))


def test_random_draws_approach_the_enumeration(ende):
    row = ende.scores[ende.metrics.index("chrF")][None]
    full = subset_correlations(ende.human, row, k=10)
    drawn = subset_correlations(ende.human, row, k=10, draws=20000, seed=3)
    assert not drawn["exhaustive"]
    assert drawn["subsets"] == 20000
    assert drawn["mean"][0, 0] == pytest.approx(full["mean"][0, 0], abs=0.01)


def test_subset_bad_input():
    with pytest.raises(AnalysisInputError, match="more than"):
        system_subsets(40, 20)
    with pytest.raises(AnalysisInputError, match="between 1"):
        system_subsets(5, 6)
    with pytest.raises(AnalysisInputError, match="at least 3"):
        subset_correlations(np.arange(5.0), np.arange(5.0)[None], k=2)
    with pytest.raises(AnalysisInputError, match="finite"):
        subset_correlations(np.r_[np.arange(4.0), np.nan], np.arange(5.0)[None], k=3)
    with pytest.raises(AnalysisInputError, match="systems"):
        subset_correlations(np.arange(5.0), np.arange(4.0)[None], k=3)
    # a constant metric on some subsets: NaN r, left out of the statistics (documented)
    res = subset_correlations(np.arange(5.0), np.array([[0, 0, 0, 1, 2.0]]), k=3, return_all=True)
    assert np.isnan(res["r"][0, 0])
    assert np.isfinite(res["mean"][0, 0])
    assert system_subsets(6, 3).tolist()[:2] == [[0, 1, 2], [0, 1, 3]]


def test_meta_report_subsets_section(ende):
    """``meta_evaluate(subsets_k=10)`` adds E8 to the report: the outliers (MAD) label the groups,
    the HTML page has the table and the figure."""
    from mtscore.analysis.data.released import SysLevel
    from mtscore.analysis.metaeval import report

    keep = [ende.metrics.index(m) for m in ("sacreBLEU-BLEU", "chrF")]
    sl = SysLevel(ende.lp, ende.systems, ende.human, [ende.metrics[i] for i in keep], ende.scores[keep])
    res = report.meta_evaluate(sl, n_resamples=20, subsets_k=10)
    sub = res["subsets"]
    assert sub["groups"] == ["none", "en_de_task", "online-X", "en_de_task+online-X"]
    assert sub["mean"][0, 0] == pytest.approx(0.810, abs=6e-4)  # = test_all_646646_subsets_of_wmt19_ende
    page = report.render_html(res, {})  # figures_for draws the boxes with plots.subset_boxplot
    assert "Correlation over subsets of 10 systems" in page
    assert "184,756" in page
    with pytest.raises(AnalysisInputError, match="between 3"):
        report.meta_evaluate(sl, n_resamples=20, subsets_k=30)
