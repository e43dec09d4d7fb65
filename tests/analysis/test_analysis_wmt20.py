"""Golden tests against the official WMT20 metrics-task outputs (wmt20-metrics @3e434fc)."""
import re

import numpy as np
import pytest
from conftest import require

from mtscore.analysis import data as datasets
from mtscore.analysis import data as loaders
from mtscore.analysis.correlation import kendall, pearson
from mtscore.analysis.metaeval.darr import darr_kendall, darr_pairs
from mtscore.analysis.metaeval.williams import williams_matrix, winners, wmt_sig_table

SUFFIX = {"newstest2020": "", "newstestB2020": "_B", "newstestM2020": "_M", "newstestP2020": "_P"}


def _sys_files(root):
    out = []
    for f in sorted((root / "results/output/system-level").glob("DA-newstest*-sys-scores.csv")):
        _, ts, lpc = f.name.split("-")[:3]
        out.append((f, ts, lpc, lpc + SUFFIX[ts]))
    return out


@pytest.fixture(scope="module")
def w20(shared_data):
    return require(shared_data / "wmt20-metrics")


def _load(root, f, ts, lpc):
    sl = datasets.load_sys_level(f)
    outl = datasets.wmt20_outliers(root, lpc[:2] + "-" + lpc[2:] if "_" not in lpc else "en-iu_" + lpc.split("_")[1])
    return sl, outl


def test_sys_pearson_kendall_williams_all_files(w20):
    n_k = n_p = n_w = n_win = 0
    for f, ts, lpc, key in _sys_files(w20):
        sl, outl = _load(w20, f, ts, lpc)
        # Kendall tau-b, all MT systems
        cor = loaders.read_cor(w20 / f"results/output/system-level/DA-{key}-cor.csv")
        idx = {m: i for i, m in enumerate(sl.metrics)}
        for m, k_ref, n_ref in zip(*(cor.column(c).to_pylist() for c in ("metric", "Kendall", "N"))):
            row = sl.scores[idx[m]]
            assert np.sum(~np.isnan(row)) == n_ref
            assert kendall(sl.human, row) == pytest.approx(k_ref, abs=1e-12), (key, m)
            n_k += 1
        # Pearson without the official outliers
        cx = loaders.read_cor(w20 / f"results/output/system-level/DA-{key}-cor-excloutl.csv")
        so = sl.without(outl)
        for m, r_ref, n_ref in zip(*(cx.column(c).to_pylist() for c in ("metric", "Pearson", "N"))):
            row = so.scores[idx[m]]
            assert np.sum(~np.isnan(row)) == n_ref
            assert pearson(so.human, row) == pytest.approx(r_ref, abs=1e-12), (key, m)
            n_p += 1
        # Williams p-values (WMT table layout) and winners
        for excl, sub in ((False, sl), (True, so)):
            sig = w20 / f"results/output/system-level/DA-{key}-sig{'-excloutl' if excl else ''}.csv"
            if not sig.exists():
                continue
            rows, _cols, ref = loaders.read_matrix(sig)
            M = np.vstack([sub.scores[idx[m]] for m in rows])
            r, p = williams_matrix(sub.human, M, only_better=False)
            with np.errstate(invalid="ignore"):
                tab = wmt_sig_table(r, p)
            # twin metrics (esim = paresim-1, Yisi-combi = bleurt-Yisi-combi): r23 = 1 makes the
            # statistic 0/0; R printed NaN or, through rounding noise, a p > 0.05 (0.12).
            twin = np.isnan(tab) & np.isclose(r[:, None], r[None, :], rtol=0, atol=1e-12)
            assert np.all(np.isnan(ref[twin]) | (ref[twin] == 0.12)), key
            tab[twin] = ref[twin]
            assert np.array_equal(np.isnan(tab), np.isnan(ref)), key
            ok = ~np.isnan(ref)
            np.testing.assert_allclose(tab[ok], ref[ok], rtol=1e-9, atol=1e-13)
            n_w += int((ok & (ref != 0.12)).sum())
            if excl:
                win = winners(tab, nan_beats=True)
                wref = dict(zip(cx.column("metric").to_pylist(), cx.column("Winner").to_pylist()))
                for m, w in zip(rows, win):
                    assert bool(w) == (wref[m] in (True, "True")), (key, m)
                    n_win += 1
    assert n_k == 872
    assert n_p == 872
    assert n_win == 872
    assert n_w == 6123  # every non-sentinel p in the 40 DA-*-sig*.csv files
    print(f"kendall {n_k}, pearson-excl {n_p}, williams {n_w}, winners {n_win}")


def _tex_pearson_all(root):
    out = {}
    for part in ("toen", "ento"):
        p = root / f"results/tables/tbl-DA-Pearson-MTall-exclhuman-{part}.tex"
        if not p.exists():
            continue
        lines = p.read_text().splitlines()
        hdr = next(line for line in lines if line.startswith("{} &") and "-" in line)
        lps = [c.strip(" \\").replace("\\_", "_") for c in hdr.split("&")[1:]]
        for line in lines:
            mm = re.match(r"\\metric\{(.+?)\}\s*&(.*)\\\\", line)
            if not mm:
                continue
            name = mm.group(1).replace("\\_", "_")
            for lp, cell in zip(lps, mm.group(2).split("&")):
                v = re.search(r"-?\d\.\d+", cell.replace("$-$", "").replace("−", "-"))
                if v:
                    out.setdefault(lp, {})[name] = float(v.group(0))
    return out


@pytest.mark.parametrize("lp", datasets.WMT20_LPS)
def test_darr_kendall_like_chrf_ter(w20, lp):
    da = datasets.wmt20_seg_da(w20, lp)
    M = np.vstack([datasets.wmt20_seg_metric(w20, m, lp, da) for m in ("chrF", "TER")])
    comp = lp.replace("-", "")
    for sub, excl in (("allsys", ()), ("excloutl", datasets.wmt20_outliers(w20, lp))):
        b, w = darr_pairs(da["sys"], da["sid"], da["raw"], exclude_systems=excl)
        res = darr_kendall(M, b, w)
        ref = loaders.read_darr_cor(w20 / f"results/output/seglevel_{sub}/RR-newstest2020-{comp}-seg-nohy-cor.csv")
        refd = {m: (t, n) for m, t, n in zip(*(ref.column(c).to_pylist() for c in ("metric", "tau", "n")))}
        for i, m in enumerate(("chrF", "TER")):
            assert res["n"][i] == refd[m][1]
            # released values are printed with 4 significant digits
            assert float(f"{res['tau'][i]:.4g}") == pytest.approx(refd[m][0], rel=1e-9, abs=1e-12), (lp, sub, m)


def test_sys_pearson_all_vs_latex_tables(w20):
    """Pearson over all MT systems is released only in the LaTeX tables (3 d.p.). Their LP
    column headers are permuted relative to the data columns (a release bug like the DARR
    *-agree.csv one), so each data column is matched to the one language pair whose values
    all agree; the test asserts that this is a bijection with every value equal."""
    tex = _tex_pearson_all(w20)
    ours = {}
    for lp in [x for x in datasets.WMT20_LPS if x != "en-iu"] + ["en-iu_full", "en-iu_news"]:
        sl = datasets.wmt20_sys_level(w20, lp)
        ours[lp] = {m: round(float(pearson(sl.human, sl.scores[i])), 3) for i, m in enumerate(sl.metrics)}
    matched, n_vals = {}, 0
    for col, vals in tex.items():
        hits = [lp for lp, o in ours.items()
                if all(m in o and abs(o[m] - v) <= 1.5e-3 for m, v in vals.items() if m in o)
                and sum(m in o for m in vals) >= 20]
        assert len(hits) == 1, (col, hits)
        matched[col] = hits[0]
        n_vals += sum(m in ours[hits[0]] for m in vals)
    assert sorted(matched.values()) == sorted(ours)
    assert n_vals >= 500


def test_segment_pearson_and_document_scores(w20):
    """Segment-level Pearson over DA (reference-notes demo: de-en chrF r = 0.519 on z, 0.571
    on raw, 8652 MT segments) and document scores = unweighted mean of segment means, equal to
    the released metrics-ad-doc-scores file."""
    from mtscore.analysis import human

    da = datasets.wmt20_seg_da(w20, "de-en")
    m = datasets.wmt20_seg_metric(w20, "chrF", "de-en", da)
    keep = np.array([not s.startswith("Human") for s in da["sys"]]) & ~np.isnan(m)
    assert keep.sum() == 8652
    assert pearson(da["z"][keep], m[keep]) == pytest.approx(0.519, abs=5e-4)
    assert pearson(da["raw"][keep], m[keep]) == pytest.approx(0.571, abs=5e-4)
    d = human.document_scores(da["sys"], da["doc"], da["z"])
    ref = loaders.read_da_scores(w20 / "manual-evaluation/DA/metrics-ad-doc-scores-de-en.csv")
    lut = {(s, g): (z, n) for s, g, z, n in zip(*(ref.column(c).to_pylist() for c in ("SYS", "SEGID", "Z.SCR", "N")))}
    assert len(lut) == len(d["score"]) == 1412
    for s, g, z, n in zip(d["system"], d["document"], d["score"], d["n_segments"]):
        assert lut[(s, g)][1] == n
        assert z == pytest.approx(lut[(s, g)][0], abs=1e-12)
