"""MAD outliers on the Tangled WMT19 system scores (nitikam/tangled) and Tangled Tables 1-2."""
import numpy as np
import pytest
from conftest import require

from mtscore.analysis import data as datasets
from mtscore.analysis.correlation import pearson
from mtscore.analysis.metaeval.outliers import mad_outliers

# (systems, outliers) per language pair: Tangled §4.2 / Thesis 6.2.1 (checked in the reference notes)
EXPECTED = {
    "de-en": (16, {"online-X"}), "fi-en": (12, set()), "gu-en": (11, {"Ju_Saarland"}),
    "kk-en": (11, {"UMD", "DBMS-KU_KKEN"}), "lt-en": (11, {"online-X"}), "ru-en": (14, {"NICT"}),
    "zh-en": (15, {"online-X", "Apprentice-c"}), "en-cs": (11, set()), "en-de": (22, {"en_de_task", "online-X"}),
    "en-fi": (12, {"apertium-fin-eng-unconstrained-en-fi"}), "en-gu": (11, set()), "en-kk": (11, {"DBMS-KU_ENKK", "NICT"}),
    "en-lt": (12, set()), "en-ru": (12, {"NICT"}), "en-zh": (12, set()), "de-cs": (11, {"CAiRE"}),
    "de-fr": (11, set()), "fr-de": (10, {"online-X", "eTranslation", "MSRA.MADL"}),
}

# Tangled Tables 1-2 (r all -> r without outliers), "BLEU" = sacreBLEU-BLEU
TABLE = {
    ("en-de", "sacreBLEU-BLEU"): (0.969, 0.806), ("en-de", "chrF"): (0.979, 0.881),
    ("en-de", "TER"): (0.969, 0.841), ("en-de", "YiSi-1"): (0.991, 0.917), ("en-de", "ESIM"): (0.991, 0.928),
    ("en-de", "BLEU"): (0.921, 0.419), ("en-kk", "chrF"): (0.972, 0.900), ("en-kk", "TER"): (0.940, 0.547),
    ("de-en", "chrF"): (0.917, 0.862), ("gu-en", "YiSi-1"): (0.924, 0.997), ("zh-en", "ESIM"): (0.988, 0.961),
    ("fr-de", "TER"): (0.895, 0.673), ("fr-de", "ESIM"): (0.942, 0.825),
}


@pytest.fixture(scope="module")
def root(shared_data):
    require(shared_data / "tangled" / "wmt19_sys_scores")
    return shared_data


@pytest.mark.parametrize("lp", sorted(EXPECTED))
def test_mad_outlier_counts(root, lp):
    sl = datasets.tangled_sys_level(root, lp)
    out = mad_outliers(sl.human)
    n, names = EXPECTED[lp]
    assert len(sl.systems) == n
    assert {s.rsplit(".", 1)[0] for s, o in zip(sl.systems, out) if o} == names
    assert len(sl.systems) - out.sum() == n - len(names)
    # 1.483 (paper text) and 1.4826 (code) give the same sets
    assert np.array_equal(out, mad_outliers(sl.human, b=1.483))


def test_tangled_table_correlations(root):
    for (lp, metric), (r_all, r_out) in TABLE.items():
        sl = datasets.tangled_sys_level(root, lp)
        row = sl.scores[sl.metrics.index(metric)]
        keep = ~mad_outliers(sl.human)
        assert pearson(sl.human, row) == pytest.approx(r_all, abs=5e-4), (lp, metric)
        assert pearson(sl.human[keep], row[keep]) == pytest.approx(r_out, abs=5e-4), (lp, metric)
