"""Ma et al. (2017) Figs. 2 and 3 on the released Fomicheva & Specia (2016) ratings (refbias)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.human.agreement import pairwise_kappas
from mtscore.analysis.human.refbias import kappa_distributions, rating_ranges
from tests.conftest import require

# the release's batches; the paper's G1 (source) is batch5, G2-G5 are batch1-batch4
BATCHES = {"batch1": [1, 4, 10, 20, 21], "batch2": [5, 7, 16, 19, 22], "batch3": [2, 6, 8, 15, 25],
           "batch4": [9, 13, 14, 18, 24], "batch5": [3, 11, 12, 17, 23]}
GROUPS = {g: [f"j{i}" for i in v] for g, v in BATCHES.items()}


@pytest.fixture(scope="module")
def refbias(shared_data: Path):
    lines = [ln for ln in require(shared_data / "refbias" / "ratings_all").read_text().splitlines() if ln.strip()]
    names = lines[0].split(";")
    R = np.array([[float(c) for c in ln.split(";")] for ln in lines[1:]]).T  # judges x items
    return names, R


def test_figure3_ranges(refbias):
    """Fig. 3: the averages of the reference groups G2-G5 span 0.76; inside one group the
    judges' averages span up to 0.97 (G5 = batch4)."""
    names, R = refbias
    rr = rating_ranges(R, names, GROUPS, source_groups=["batch5"])
    assert rr.reference_groups == ["batch1", "batch2", "batch3", "batch4"]
    assert round(rr.across_range, 2) == 0.76
    assert rr.widest_group() == "batch4"
    assert round(rr.within_range["batch4"], 2) == 0.97
    # the other groups, and the judge averages behind them (100 items, so exact in 1/100)
    assert {g: round(v, 2) for g, v in rr.within_range.items()} == \
        {"batch1": 0.55, "batch2": 0.66, "batch3": 0.91, "batch4": 0.97, "batch5": 0.41}
    assert {g: round(v, 3) for g, v in rr.group_mean.items()} == \
        {"batch1": 1.98, "batch2": 2.342, "batch3": 2.562, "batch4": 2.74, "batch5": 2.878}
    assert rr.judge_mean[names.index("j9")] == pytest.approx(2.51)
    assert rr.judge_group[names.index("j3")] == "batch5"
    # the source group left out: with it the across-group range would be 0.90
    assert round(rating_ranges(R, names, GROUPS).across_range, 2) == 0.90


def test_figure3_missing_ratings_and_errors():
    R = np.array([[1.0, 3.0, np.nan], [2.0, 2.0, 2.0], [5.0, np.nan, np.nan]])
    rr = rating_ranges(R, None, {"a": ["j1", "j2"], "s": ["j3"]}, source_groups=["s"])
    assert rr.judge_mean.tolist() == [2.0, 2.0, 5.0]
    assert rr.within_range == {"a": 0.0, "s": 0.0}
    assert rr.across_range == 0.0
    assert rr.reference_groups == ["a"]
    assert math.isnan(rating_ranges(R, None, {"s": ["j1", "j2", "j3"]}, ["s"]).across_range)
    with pytest.raises(ValueError, match="j3 are in no group"):
        rating_ranges(R, None, {"a": ["j1", "j2"]})
    with pytest.raises(ValueError, match="not a judge"):
        rating_ranges(R, None, {"a": ["j1", "j2", "j3", "x"]})
    with pytest.raises(ValueError, match="source group"):
        rating_ranges(R, None, {"a": ["j1", "j2", "j3"]}, ["b"])
    with pytest.raises(ValueError, match="rated no item"):
        rating_ranges(np.array([[1.0, 2.0], [np.nan, np.nan]]), None, {"a": ["j1", "j2"]})


def test_figure2_kappa_distributions(refbias):
    """Fig. 2: per setting the kappas of its judge pairs: SOURCE 10, SAME 40, DIFF 150 (and the
    100 source-vs-reference pairs); means as evaluation-methods F2 [CHECKED] (0.247 / 0.197 /
    0.164, the paper's SAME - DIFF gap 0.034 within rounding)."""
    names, R = refbias
    table = pairwise_kappas(R, names, GROUPS, source_groups=["batch5"])
    d = kappa_distributions(table)
    assert list(d) == ["SOURCE", "SAME", "DIFF", "SOURCE-REF"]
    assert {s: len(v) for s, v in d.items()} == {"SOURCE": 10, "SAME": 40, "DIFF": 150, "SOURCE-REF": 100}
    assert {s: round(d[s].mean, 3) for s in ("SOURCE", "SAME", "DIFF")} == \
        {"SOURCE": 0.247, "SAME": 0.197, "DIFF": 0.164}
    for v in d.values():
        assert np.all(np.diff(v.kappa) >= 0)  # sorted
        assert np.all(v.low <= v.kappa)
        assert np.all(v.kappa <= v.high)
        assert v.minimum == v.kappa[0]
        assert v.maximum == v.kappa[-1]
        assert v.median == pytest.approx(float(np.median(v.kappa)))
    # the first SAME pair of the release file (j1_j4: kappa 0.07355) sits in SAME with its CI
    same = d["SAME"]
    i = [(a, b) for a, b in zip(same.judge_a, same.judge_b)].index(("j1", "j4"))
    assert (round(same.low[i], 5), round(same.kappa[i], 5), round(same.high[i], 5)) == (-0.05868, 0.07355, 0.20577)
    assert list(kappa_distributions(table, ["DIFF"])) == ["DIFF"]
    with pytest.raises(ValueError, match="no judge pairs"):
        kappa_distributions(table, ["ALL"])
    with pytest.raises(ValueError, match="choose from"):
        kappa_distributions(table, ["BOTH"])


def test_figure_renderings(refbias, tmp_path):
    """The two figures render to PNG (the ``plot`` extra) from the reproduced numbers."""
    pytest.importorskip("matplotlib")
    import io

    import matplotlib.image as mpimg

    from mtscore.analysis import plots

    names, R = refbias
    d = kappa_distributions(pairwise_kappas(R, names, GROUPS, source_groups=["batch5"]))
    out = tmp_path / "fig2.png"
    png = plots.kappa_distribution_plot(d, path=str(out))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.read_bytes() == png
    assert mpimg.imread(io.BytesIO(png), format="png").shape[1] > 300
    png3 = plots.rating_ranges_plot(rating_ranges(R, names, GROUPS, source_groups=["batch5"]))
    img = mpimg.imread(io.BytesIO(png3), format="png")[..., :3]
    # 20 reference judges in C0 blue and 5 source judges in C1 orange are drawn
    assert ((img[..., 0] > 0.9) & (img[..., 1] > 0.4) & (img[..., 1] < 0.6) & (img[..., 2] < 0.2)).sum() > 20
    assert ((img[..., 2] > 0.6) & (img[..., 0] < 0.3)).sum() > 50
