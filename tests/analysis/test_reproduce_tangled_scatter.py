"""``mtscore reproduce tangled``: the outlier scatter figures (Mathur et al. 2020, Sec. 4.2; Mathur 2021,
Sec. 6.2), their numbers checked against Tables 1-2's printed r (all systems / without outliers) and
the MAD outlier lists, recomputed from the figure's CSV rows."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import require

from mtscore.bindings.reproduce import reproduce_tangled
from mtscore.bindings.reproduce.tangled import SCATTER_LPS, SCATTER_METRICS
from mtscore.bindings.reproduce.tangled_printed import PRINTED

# the MAD outliers (|robust z| > 2.5 on DA z) Tables 1-2 remove, in the release's row order
OUTLIERS = {"en-de": {"en_de_task", "online-X"}, "en-kk": {"DBMS-KU_ENKK", "NICT"},
            "gu-en": {"Ju_Saarland"}, "zh-en": {"online-X", "Apprentice-c"}}
N_SYSTEMS = {"en-de": 22, "en-kk": 11, "gu-en": 11, "zh-en": 15}


@pytest.fixture(scope="module")
def res(shared_data):
    require(shared_data / "tangled" / "wmt19_sys_scores")
    return reproduce_tangled(shared_data)


@pytest.mark.parametrize("lp", list(SCATTER_LPS))
def test_scatter_rows_give_the_printed_r_and_outliers(res, lp):
    f = res.figure(f"scatter-{lp}")
    assert f.head == ["system", "DA z", *SCATTER_METRICS, "outlier"]
    assert len(f.points) == N_SYSTEMS[lp]
    assert {row[0] for row in f.points if row[-1] == "true"} == OUTLIERS[lp]
    assert {row[-1] for row in f.points} == {"true", "false"}
    human = np.array([row[1] for row in f.points])
    out = np.array([row[-1] == "true" for row in f.points])
    for j, metric in enumerate(SCATTER_METRICS):
        scores = np.array([row[2 + j] for row in f.points])
        for which, keep in (("All", np.ones_like(out)), ("-out", ~out)):
            printed = PRINTED[(SCATTER_LPS[lp], metric, f"{lp} {which}")]
            r = np.corrcoef(human[keep], scores[keep])[0, 1]
            assert f"{r:.3f}" == printed, (lp, metric, which)
            stored = f.data["r_all" if which == "All" else "r_out"][j]
            assert stored == pytest.approx(r, abs=1e-12)


def test_scatter_png(res):
    pytest.importorskip("matplotlib", reason="figures need matplotlib (the plot extra)")
    f = res.figure("scatter-gu-en")
    png = f.draw(f)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 20_000  # four panels, not an empty canvas
