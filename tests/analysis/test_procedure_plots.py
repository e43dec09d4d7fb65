"""Figures of the thesis procedures (B6, C4, C5/C6, E8, A10): each renders a PNG from real
results; the B6 colour map is centred at the critical r."""
import io

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from mtscore.analysis import plots
from mtscore.analysis.human.rater_model import critical_r, fit_rater_model, simulate, worker_correlations
from mtscore.analysis.human.sequence_effects import sequence_bins, sequence_pooled
from mtscore.analysis.metaeval.subsets import subset_correlations


def _image(png: bytes):
    import matplotlib.image as mpimg

    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return mpimg.imread(io.BytesIO(png), format="png")


def test_b6_heatmap_centred_at_critical_r(tmp_path):
    norm = plots.diverging_norm(critical_r(70))
    assert norm(critical_r(70)) == pytest.approx(0.5)
    assert norm(1.0) == pytest.approx(1.0)
    assert norm(-1.0) == pytest.approx(0.0)
    d = simulate(n_items=70, n_workers=5, n_spammers=2, seed=1, prior_scale=1.0)
    fit = fit_rater_model(d["item"], d["worker"], d["score"])
    labels, R = worker_correlations(d["item"], d["worker"], d["score"], fit)
    out = tmp_path / "b6.png"
    png = plots.worker_heatmap(labels, R, centre=critical_r(70), path=str(out))
    img = _image(png)
    assert out.read_bytes() == png
    assert img.shape[0] > 100
    # the good workers' block is red (r >> centre): some strongly red pixels exist, and blue ones
    rgb = img[..., :3]
    assert ((rgb[..., 0] > 0.6) & (rgb[..., 2] < 0.4)).sum() > 100
    assert ((rgb[..., 2] > 0.6) & (rgb[..., 0] < 0.5)).sum() > 10


def test_sequence_and_subset_figures():
    rng = np.random.default_rng(0)
    n_hits, n_items, n_w = 6, 30, 5
    hit = np.repeat(np.arange(n_hits), n_items * n_w)
    worker = np.array([f"{h}-{w}" for h in range(n_hits) for w in range(n_w) for _ in range(n_items)])
    pos = np.tile(np.arange(n_items), n_hits * n_w)
    gold = rng.standard_normal(n_hits * n_items)[hit * n_items + pos]
    score = gold + rng.normal(0, 0.5, gold.size)
    res = sequence_bins(worker, hit, pos, score, gold, n_workers=(1, 5))
    assert _image(plots.sequence_bins_plot(res)).shape[1] > 200
    fits = {"all": sequence_pooled(worker, hit, pos, score, gold),
            "first half": sequence_pooled(worker, hit, pos, score, gold, mask=pos < 15)}
    assert _image(plots.coefficient_plot(fits, "lag")).ndim == 3
    h = np.arange(8.0)
    sub = subset_correlations(h, np.vstack([h + rng.normal(0, 1, 8), h ** 2]), k=5, marked=[7], names=list("abcdefgh"))
    assert sub["groups"] == ["none", "h"]
    assert _image(plots.subset_boxplot(sub, ["noisy", "square"])).ndim == 3
    curve = {"n": np.array([10, 20]), "share": np.array([[0.2, 0.1], [0.5, 0.3]]), "thresholds": np.array([0.05, 0.01])}
    assert _image(plots.significance_curve_plot(curve)).ndim == 3


def test_meta_report_draws_the_subset_figure():
    from mtscore.analysis.data.released import SysLevel
    from mtscore.analysis.metaeval import report

    rng = np.random.default_rng(4)
    h = np.r_[rng.normal(0, 0.2, 7), -2.0]  # one low outlier (MAD)
    sl = SysLevel("xx-yy", [f"s{i}" for i in range(8)], h, ["m"], (h + rng.normal(0, 0.1, 8))[None])
    res = report.meta_evaluate(sl, n_resamples=20, subsets_k=4)
    assert res["subsets"]["groups"] == ["none", "s7"]
    assert res["subsets"]["subsets"] == 70
    figs = report.figures_for(res, sl)
    _image(figs["subsets of 4 systems"])
