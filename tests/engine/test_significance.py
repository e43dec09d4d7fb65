"""Bootstrap CIs and paired tests: bit-identical to sacrebleu 2.6.0 (stored expected values for
the 16 WMT17 en-de systems, fresh sacrebleu runs on WMT17/WMT21 subsets incl. TER), the
Moses/multeval reference p-values, the resampling kernel against numpy (and its Python twin:
tests/kernels/test_kernel_twins.py), and
the vectorised score formulas against the per-row metric code (hypothesis)."""
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mtscore
import mtscore.engine.significance as sig
from mtscore.engine.metrics import bootstrap
from mtscore.engine.significance import compare, compare_segment_scores, paired_ttest
from mtscore.engine.significance.adapter import exact_total
from mtscore.engine.significance.resampling import draw_masks
from mtscore.kernels import _resample

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU as SBLEU  # noqa: E402
from sacrebleu.metrics import CHRF as SCHRF  # noqa: E402
from sacrebleu.metrics import TER as STER  # noqa: E402
from sacrebleu.significance import PairedTest  # noqa: E402

try:
    from mtscore import BLEU, CHRF
except Exception:  # pragma: no cover - until mtscore's metrics are importable
    BLEU, CHRF = SBLEU, SCHRF


def _read(p: Path):
    return p.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.fixture(scope="module")
def wmt17(shared_data):
    d = shared_data / "wmt17-en-de-systems"
    exp = json.loads(require(d / "expected" / "wmt17_en_de_significance_2.6.0.json").read_text())
    names = list(exp["bleu_tok_none|bs|1000"]["results"])  # the pickle's order: baseline first
    systems = {n: _read(require(d / f"{n}.txt")) for n in names}
    return exp, systems, [_read(d / "reference.txt")]


@pytest.fixture(autouse=True)
def _seed_env(monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", "12345")


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return float(a) == float(b)


def _assert_results_equal(ours, theirs_sigs, theirs_scores):
    """``ours``: ComparisonResult; ``theirs``: PairedTest()() output. Exact equality."""
    assert ours.systems == theirs_scores["System"]
    for m in ours.metrics:
        assert str(ours.signatures[m]) == str(theirs_sigs[m])
        for g, e in zip(ours.results[m], theirs_scores[m]):
            for f in ("score", "p_value", "mean", "ci"):
                assert _same(getattr(g, f), getattr(e, f)), (m, f, getattr(g, f), getattr(e, f))
                if getattr(e, f) is not None:
                    assert np.asarray(getattr(g, f)).dtype == np.asarray(getattr(e, f)).dtype, (m, f)


# ---------------------------------------------------------------- kernel vs numpy
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_resample_sums_kernel_numpy(dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5000, size=(4000, 7)).astype(dtype)
    if dtype != np.int64:
        x = x + rng.random(x.shape).astype(dtype)  # non-integers: order matters
    idx = rng.integers(0, len(x), size=(6, 4000))
    out = np.empty((6, 7), dtype=dtype)
    _resample.resample_sums(x, idx, out)
    ref = np.stack([x[i].sum(0) for i in idx])  # sacrebleu's operation
    assert np.array_equal(out, ref)


def test_resample_sums_errors():
    rng = np.random.default_rng(4)
    x = (rng.integers(0, 3000, size=(300, 5)) + rng.random((300, 5))).astype(np.float32)
    idx = rng.integers(0, 300, size=(3, 300))
    with pytest.raises(IndexError):
        _resample.resample_sums(x, np.array([[0, 300]], dtype=np.int64), np.empty((1, 5), np.float32))
    with pytest.raises(ValueError, match=r"out has shape \(2, 5\), expected \(3, 5\)"):
        _resample.resample_sums(x, idx, np.empty((2, 5), np.float32))


def test_draw_counts_kernel_numpy():
    rng = np.random.default_rng(6)
    for S, n, m in [(1, 50, 80), (4, 50, 80), (7, 3, 1), (2, 1, 5)]:
        idx = rng.integers(0, n, size=(S, m))
        a = np.full((S, n), 7.0, dtype=np.float32)
        _resample.draw_counts(idx, a)
        ref = np.stack([np.bincount(i, minlength=n) for i in idx]).astype(np.float32)
        assert np.array_equal(a, ref)
        x = rng.integers(0, 1000, size=(n, 3))
        assert np.array_equal(a @ x, np.stack([x[i].sum(0) for i in idx]))
    for bad in ([[0, 50]], [[-1]]):
        with pytest.raises(IndexError):
            _resample.draw_counts(np.array(bad, dtype=np.int64), np.empty((1, 50), np.float32))
    with pytest.raises(ValueError, match="counts has 3 rows, expected 2"):
        _resample.draw_counts(np.zeros((2, 3), np.int64), np.empty((3, 50), np.float32))


def _sacrebleu_sums(x, n, gen):
    idxs = gen.choice(len(x), size=(n, len(x)), replace=True)
    return x[idxs].sum(axis=1)  # sacrebleu's operation (float32, S x N x k)


@pytest.mark.parametrize("case", ["small", "heavy", "near_2_24"])
@pytest.mark.parametrize("bitgen", ["pcg64", "mt19937"])
def test_bootstrap_sums_every_path_equals_sacrebleu(monkeypatch, case, bitgen):
    """Bootstrap sums bit for bit equal to sacrebleu's float32 sums on every path: the fused
    PCG64 counting kernel, the counting kernel on drawn indices (other bit generators), their
    fall-backs when a resample sum passes 2**24 (float32 rounding), and the forced kernel."""
    rng = np.random.default_rng(7)
    if case == "small":
        x = rng.integers(0, 40, size=(3000, 6)).astype(np.float32)
    elif case == "heavy":  # totals < 0.9 * 2**24, but resamples drawing row 0 twice pass 2**24
        x = rng.integers(0, 3, size=(50, 6)).astype(np.float32)
        x[0, 2] = 2 ** 23 + 1
    else:  # totals ~2**24: float32 rounding in many resamples
        x = rng.integers(0, 1 << 14, size=(2000, 6)).astype(np.float32)
    n = 300
    gen = (lambda: np.random.default_rng(12345)) if bitgen == "pcg64" else \
        (lambda: np.random.Generator(np.random.MT19937(12345)))
    ref = _sacrebleu_sums(x, n, gen())
    if case != "small":
        assert (ref > 2 ** 24).any()  # a fall-back ran
    if case == "heavy":
        assert (ref <= 2 ** 24).any()
    for min_cells in (0, 1 << 62):  # counting kernels on; off (gather)
        monkeypatch.setattr(bootstrap, "COUNT_MIN_CELLS", min_cells)
        g = gen()
        got = bootstrap.bootstrap_sums([x[:, :4], x[:, 4:]], n, g)
        assert np.array_equal(np.concatenate(got, axis=1), ref)
        h = gen()
        _sacrebleu_sums(x, n, h)  # the generator is left where sacrebleu's draws leave it
        assert np.array_equal(g.integers(0, 2 ** 31, size=8), h.integers(0, 2 ** 31, size=8))
    monkeypatch.setattr(bootstrap, "FORCE_KERNEL", True)
    forced = bootstrap.bootstrap_sums([x[:, :4], x[:, 4:]], n, gen())
    assert np.array_equal(np.concatenate(forced, axis=1), ref)


@pytest.mark.parametrize("seed", [12345, 1, 2 ** 40])
def test_pcg64_draws_equal_numpy(seed):
    for N, M in [(1, 1), (2, 7), (3, 64), (1000, 1000), (100003, 2000), (2 ** 30 + 1, 4000),
                 (2 ** 31 - 1, 4000)]:  # the last two reject ~25% / ~50% of the 32-bit draws
        g = np.random.default_rng(seed)
        g.integers(0, 5, size=seed % 3)  # sometimes a buffered half of a 64-bit draw is left
        idx, state = _resample.pcg64_draw_indices(g.bit_generator.state, 3, N, M)
        assert np.array_equal(idx, g.integers(0, N, size=(3, M), dtype=np.int64)), N
        assert state == g.bit_generator.state, N
        if N <= 100003:
            for S in (1, 4, 6):
                g = np.random.default_rng(seed)
                g.integers(0, 5, size=seed % 3)
                counts = np.full((S, N), 3.0, dtype=np.float32)
                state = _resample.pcg64_draw_counts(g.bit_generator.state, counts)
                idx = g.integers(0, N, size=(S, N), dtype=np.int64)
                assert np.array_equal(counts, np.stack([np.bincount(i, minlength=N) for i in idx]))
                assert state == g.bit_generator.state


def test_masked_sums_kernel_matmul():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1 << 40, size=(257, 6), dtype=np.int64)
    mask = rng.integers(2, size=(9, 257), dtype=bool)
    out = np.empty((9, 6), np.int64)
    _resample.masked_sums(x, mask.view(np.uint8), out)
    assert np.array_equal(out, mask.astype(np.int64) @ x)


def test_chunked_draws_equal_sacrebleu_draws(monkeypatch):
    monkeypatch.setattr(bootstrap, "CHUNK_BYTES", 999)  # force many small chunks
    n, s = 37, 101
    want = np.random.default_rng(7).choice(n, size=(s, n), replace=True)
    got = np.concatenate([c for _, c in bootstrap.draw_indices(np.random.default_rng(7), s, n)])
    assert np.array_equal(want, got)
    r = np.random.default_rng(7)
    want_m = r.integers(2, size=(s, n), dtype=bool)
    want_i = r.choice(n, size=(5, n), replace=True)  # drawn after the masks (AR CI)
    r = np.random.default_rng(7)
    got_m = np.concatenate([c for _, c in draw_masks(r, s, n)])
    got_i = np.concatenate([c for _, c in bootstrap.draw_indices(r, 5, n)])
    assert np.array_equal(want_m, got_m)
    assert np.array_equal(want_i, got_i)


# ---------------------------------------------------------------- stored sacrebleu numbers
@pytest.mark.parametrize("key", ["bleu_tok_none|bs|1000", "bleu_tok_none|ar|10000", "bleu_tok_none|bs|2000",
                                 "bleu_13a|bs|1000", "bleu_13a|ar|10000", "chrf|bs|1000", "chrf|ar|10000"])
def test_wmt17_16_systems_equal_sacrebleu_2_6_0(wmt17, key):
    exp, systems, refs = wmt17
    mname, test, n = key.split("|")
    metric = {"bleu_tok_none": lambda: BLEU(tokenize="none"), "bleu_13a": lambda: BLEU(),
              "chrf": lambda: CHRF()}[mname]()
    r = compare(systems, refs, metrics=[metric], test=test, n=int(n))
    m = r.metrics[0]
    assert str(r.signatures[m]) == exp[key]["signature"]
    for name, res in zip(r.systems, r.results[m]):
        e = exp[key]["results"][name]
        for f in ("score", "p_value", "mean", "ci"):
            assert _same(getattr(res, f), e[f]), (name, f, getattr(res, f), e[f])


def test_wmt17_single_system_ci_equals_sacrebleu(wmt17):
    exp, systems, refs = wmt17
    e = exp["ci_bleu_13a_first_system"]
    metric = BLEU()
    score = metric.corpus_score(systems[e["system"]], refs, n_bootstrap=1000)
    assert (score.score, score._mean, score._ci) == (e["score"], e["mean"], e["ci"])
    assert str(metric.get_signature()) == e["signature"]


# Moses bootstrap-hypothesis-difference-significance.pl (2000 samples, mean of 3 runs) and
# multeval AR (10,000 trials), BLEU tokenize='none' - sacrebleu's test/test_significance.py
MOSES_P = {"C-3MA.4959": 0.0, "FBK.4870": 0.01267, "KIT.4950": 0.02233, "LMU-nmt-reranked.4934": 0.04383,
           "LMU-nmt-single.4893": 0.20783, "online-A.0": 0.0, "online-B.0": 0.38100, "online-F.0": 0.0,
           "online-G.0": 0.0, "PROMT-Rule-based.4735": 0.0, "RWTH-nmt-ensemble.4921": 0.01167,
           "SYSTRAN.4847": 0.20983, "TALP-UPC.4834": 0.0, "uedin-nmt.4722": 0.0, "xmu.4910": 0.25483}
MULTEVAL_P = {"C-3MA.4959": 0.0001, "FBK.4870": 0.0218, "KIT.4950": 0.0410, "LMU-nmt-reranked.4934": 0.09029,
              "LMU-nmt-single.4893": 0.58494, "online-A.0": 0.0001, "online-B.0": 0.94111, "online-F.0": 0.0001,
              "online-G.0": 0.0001, "PROMT-Rule-based.4735": 0.0001, "RWTH-nmt-ensemble.4921": 0.0207,
              "SYSTRAN.4847": 0.59914, "TALP-UPC.4834": 0.0001, "uedin-nmt.4722": 0.0001, "xmu.4910": 0.71073}


@pytest.mark.parametrize(("test", "n", "table"), [("bs", 2000, MOSES_P), ("ar", 10000, MULTEVAL_P)])
def test_moses_multeval_reference_p_values(wmt17, test, n, table):
    _, systems, refs = wmt17
    r = compare(systems, refs, metrics=[BLEU(tokenize="none")], test=test, n=n, seed=12345)
    got = {s.replace("newstest2017.", "").replace(".en-de", ""): x.p_value
           for s, x in zip(r.systems[1:], r.results["BLEU"][1:])}
    assert set(got) == set(table)
    for k, v in table.items():
        assert abs(got[k] - v) < 0.01, (k, got[k], v)


# ---------------------------------------------------------------- fresh sacrebleu runs
def _fresh(named, refs, make_metrics, test, n, ours_metrics=None, n_ar_confidence=-1):
    sb_metrics = {}
    for m in make_metrics():
        m._ref_cache = m._cache_references(refs)
        sb_metrics[type(m).__name__] = m
    sigs, scores = PairedTest(named, sb_metrics, references=None, test_type=test, n_samples=n,
                              n_ar_confidence=n_ar_confidence)()
    ours = compare(dict(named), refs, metrics=ours_metrics or make_metrics(), test=test, n=n,
                   n_ar_confidence=n_ar_confidence)
    _assert_results_equal(ours, sigs, scores)
    return ours


@pytest.mark.parametrize(("test", "n", "conf"), [("bs", 1000, -1), ("ar", 1000, -1), ("ar", 500, 200)])
def test_ter_fresh_sacrebleu(wmt17, test, n, conf):
    _, systems, refs = wmt17
    named = [(k, v[:120]) for k, v in list(systems.items())[:4]]
    r = [refs[0][:120]]
    _fresh(named, r, lambda: [STER()], test, n, n_ar_confidence=conf)


def test_ter_single_system_ci_fresh(wmt17):
    _, systems, refs = wmt17
    hyps = list(systems.values())[2][:120]
    r = [refs[0][:120]]
    want = STER().corpus_score(hyps, r, n_bootstrap=500)
    m = STER()
    stats = np.array(m._extract_corpus_statistics(hyps, r))
    got = m._compute_score_from_stats(exact_total(m, stats))
    sig.bootstrap_ci(m, stats, got, 500)
    assert (got.score, got._mean, got._ci) == (want.score, want._mean, want._ci)
    assert m.seed == "12345"
    assert m.n_bootstrap == 500


WMT21_PAIRS = {"cs-en": ("en", ["A", "B"]), "en-de": ("de", ["A", "C", "D"]), "en-zh": ("zh", ["A", "B"])}


def _wmt21(shared_data, lp, n_refs, n_sys=4, n_seg=300):
    tgt, ref_ids = WMT21_PAIRS[lp]
    d = shared_data / "wmt21-news-systems" / "txt"
    refs = [_read(require(d / "references" / f"newstest2021.{lp}.ref.{x}.{tgt}"))[:n_seg] for x in ref_ids[:n_refs]]
    files = sorted((d / "system-outputs").glob(f"newstest2021.{lp}.hyp.*.{tgt}"))[:n_sys]
    if len(files) < n_sys:
        pytest.skip(f"not enough {lp} systems under {d}")
    return [(f.name.split(".hyp.")[1][:-len(tgt) - 1], _read(f)[:n_seg]) for f in files], refs


@pytest.mark.parametrize("lp", sorted(WMT21_PAIRS))
@pytest.mark.parametrize(("test", "n"), [("bs", 1000), ("ar", 2000)])
def test_wmt21_three_language_pairs_fresh_sacrebleu(shared_data, lp, test, n):
    named, refs = _wmt21(shared_data, lp, 1)
    tok = "zh" if lp.endswith("zh") else "13a"
    _fresh(named, refs, lambda: [SBLEU(tokenize=tok), SCHRF()], test, n,
           ours_metrics=[BLEU(tokenize=tok), CHRF()])


@pytest.mark.parametrize("n_refs", [2, 3])
def test_ter_multi_reference_dyadic_and_fallback(shared_data, n_refs):
    # 2 refs: mean ref lengths are halves (exact int path); 3 refs: thirds (float64 matmul path)
    named, refs = _wmt21(shared_data, "en-de", n_refs, n_sys=3, n_seg=30)
    _fresh(named, refs, lambda: [STER()], "ar", 1000)


def test_chrf_plus_plus_and_bleu_variants_fresh(wmt17):
    _, systems, refs = wmt17
    named = [(k, v[:100]) for k, v in list(systems.items())[:3]]
    r = [refs[0][:100]]
    def make():
        return [SBLEU(smooth_method="floor"), SBLEU(smooth_method="add-k"), SBLEU(smooth_method="none"),
                SBLEU(effective_order=True, max_ngram_order=3), SCHRF(word_order=2),
                SCHRF(eps_smoothing=True)]
    # duplicate metric names are suffixed by mtscore but overwrite each other in sacrebleu, so
    # compare one metric at a time
    for i in range(6):
        for test, n in (("bs", 300), ("ar", 300)):
            _fresh(named, r, lambda i=i: [make()[i]], test, n)


# ---------------------------------------------------------------- seeds, modes, API
def test_seed_env_and_override(wmt17, monkeypatch):
    _, systems, refs = wmt17
    small = {k: v[:100] for k, v in list(systems.items())[:3]}
    r = [refs[0][:100]]
    a = compare(small, r, metrics=[SBLEU()], n=200, seed=7)
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    b = compare(small, r, metrics=[SBLEU()], n=200)
    assert [x.p_value for x in a.results["BLEU"]] == [x.p_value for x in b.results["BLEU"]]
    assert "seed:7" in str(b.signatures["BLEU"])
    monkeypatch.setenv("SACREBLEU_SEED", "none")
    c = compare(small, r, metrics=[SBLEU()], n=200)
    assert "seed:none" in str(c.signatures["BLEU"])
    assert all(0 < x.p_value <= 1 for x in c.results["BLEU"][1:])
    assert sig.resolve_seed("None") == (None, "none")
    assert sig.resolve_seed(5) == (5, "5")
    with pytest.raises(ValueError, match="seed"):
        sig.resolve_seed("abc")


def test_all_pairs_matrix_matches_baseline_runs(wmt17):
    _, systems, refs = wmt17
    small = {k: v[:300] for k, v in list(systems.items())[:3]}
    r = [refs[0][:300]]
    for test, n in (("bs", 500), ("ar", 500)):
        allp = compare(small, r, metrics=[BLEU(), CHRF()], test=test, n=n, all_pairs=True)
        for m in allp.metrics:
            mat = allp.p_values[m]
            assert np.allclose(mat, mat.T, equal_nan=True)
            assert np.isnan(np.diag(mat)).all()
        names = list(small)
        for b in names:
            base = compare(small, r, metrics=[BLEU(), CHRF()], test=test, n=n, baseline=b)
            for m in allp.metrics:
                for s, res in zip(base.systems[1:], base.results[m][1:]):
                    assert allp.p_value(m, b, s) == res.p_value
                    if test == "bs":
                        i = allp.systems.index(s)
                        assert allp.results[m][i].mean == res.mean
                        assert allp.results[m][i].ci == res.ci


def test_ar_kernel_path_equals_blas_path(wmt17, monkeypatch):
    _, systems, refs = wmt17
    small = {k: v[:300] for k, v in list(systems.items())[:3]}
    r = [refs[0][:300]]
    a = compare(small, r, metrics=[BLEU(), CHRF()], test="ar", n=1000)
    monkeypatch.setattr(bootstrap, "FORCE_KERNEL", True)
    b = compare(small, r, metrics=[BLEU(), CHRF()], test="ar", n=1000)
    for m in a.metrics:
        assert [vars(x) for x in a.results[m]] == [vars(x) for x in b.results[m]]


def test_compare_errors():
    with pytest.raises(ValueError, match="at least 2"):
        compare({"a": ["x"]}, [["x"]], metrics=[SBLEU()])
    with pytest.raises(ValueError, match="baseline"):
        compare({"a": ["x"], "b": ["y"]}, [["x"]], metrics=[SBLEU()], baseline="c")
    with pytest.raises(ValueError, match="test"):
        compare({"a": ["x"], "b": ["y"]}, [["x"]], metrics=[SBLEU()], test="t")


def test_lazy_export():
    import mtscore
    assert mtscore.compare is compare


# ---------------------------------------------------------------- segment-mean metrics (E12)
def test_paired_ttest_matches_scipy():
    from scipy.stats import ttest_rel
    rng = np.random.default_rng(11)
    a = rng.random(500)
    b = a + rng.normal(0.01, 0.1, 500)
    t, p = paired_ttest(a, b)
    want = ttest_rel(a, b)
    assert t == pytest.approx(want.statistic, rel=1e-12)
    assert p == pytest.approx(want.pvalue, rel=1e-9)
    assert paired_ttest(a, a) == (0.0, 1.0)


def test_segment_mean_bootstrap_and_ttest():
    rng = np.random.default_rng(12)
    base = rng.random(400)
    scores = {"A": base, "B": base + 0.05, "C": base + rng.normal(0, 0.01, 400)}
    r = compare_segment_scores(scores, test="bs", n=1000, seed=12345)
    # reference: materialised bootstrap of the means with the same draws
    idx = np.random.default_rng(12345).choice(400, size=(1000, 400), replace=True)
    for i, s in enumerate(r.systems):
        means = np.array([x.sum() for x in scores[s][idx]]) / 400
        mean, ci = sig.estimate_ci(means)
        assert r.results["score"][i].mean == pytest.approx(mean, rel=1e-12)
        assert r.results["score"][i].ci == pytest.approx(ci, rel=1e-9)
    assert r.results["score"][1].p_value < 0.01
    t = compare_segment_scores(scores, test="ttest", all_pairs=True)
    assert t.p_values["score"][0, 1] < 1e-10
    assert t.p_values["score"][0, 2] > 0.01


def test_segment_mean_approximate_randomisation():
    """test="ar": sacrebleu's _paired_ar_test of the mean (masks rng.integers(2, (n, N), bool) from
    one seeded generator, shuffled pseudo-systems pos @ a + neg @ b and neg @ a + pos @ b, p =
    (c + 1) / (n + 1)), materialised here; and the same numbers as compare_stats' AR on
    [segment score, 1] statistics of a metric scoring their mean (what -m comet --paired-ar ran)."""
    from mtscore.engine.metrics.base import Score
    from mtscore.engine.metrics.mean_score import MeanSentenceMetric

    rng = np.random.default_rng(13)
    base = rng.random(300)
    scores = {"A": base, "B": base + rng.normal(0.02, 0.1, 300), "C": base + rng.normal(0, 0.1, 300)}
    n = 500
    r = compare_segment_scores(scores, test="ar", n=n, seed=12345, name="m")
    assert r.test == "ar"
    assert r.n_samples == n
    assert r.signatures["m"] == f"test:ar|n:{n}|seed:12345"
    pos = np.random.default_rng(12345).integers(2, size=(n, 300), dtype=bool)
    stats = {k: np.column_stack([x, np.ones(300)]) for k, x in scores.items()}

    def mean_of(rows):
        return rows[:, 0] / rows[:, 1]

    for i, s in enumerate(["B", "C"], start=1):
        a, b = stats["A"], stats[s]
        diff = abs(np.add.accumulate(a[:, 0])[-1] / 300 - np.add.accumulate(b[:, 0])[-1] / 300)
        shuf_a, shuf_b = pos @ a + ~pos @ b, ~pos @ a + pos @ b
        c = int(np.sum(np.abs(mean_of(shuf_a) - mean_of(shuf_b)) > diff))
        assert r.results["m"][i].p_value == (c + 1) / (n + 1)
    assert r.results["m"][1].p_value < 0.05 < r.results["m"][2].p_value
    assert r.results["m"][0].p_value is None
    assert [x.score for x in r.results["m"]] == pytest.approx([float(x.mean()) for x in scores.values()],
                                                              abs=1e-12)

    class Mean(MeanSentenceMetric):  # the mean of [score, 1] rows, as COMET scores them
        _NAME = "Mean"
        _SCORE_TYPE = staticmethod(lambda mean, count: Score("Mean", mean))

        def prepare(self, refs, rows=None):
            raise NotImplementedError

    mean_metric = Mean()
    mean_metric.num_refs = 1
    want = sig.compare_stats(list(scores), [mean_metric], [[stats[k]] for k in scores], test="ar", n=n,
                             seed=12345)
    (w,) = want.results.values()
    assert [x.p_value for x in r.results["m"]] == [x.p_value for x in w]
    allp = compare_segment_scores(scores, test="ar", n=n, seed=12345, all_pairs=True, name="m")
    assert allp.p_values["m"][0, 1] == r.results["m"][1].p_value
    assert allp.p_values["m"][0, 2] == r.results["m"][2].p_value
    with pytest.raises(ValueError, match="'ttest', 'bs' or 'ar'"):
        compare_segment_scores(scores, test="perm")


# ---------------------------------------------------------------- vectorised formulas
_rows = hnp.arrays(np.int64, st.tuples(st.integers(1, 40), st.just(10)),
                   elements=st.one_of(st.just(0), st.integers(0, 30), st.integers(0, 1 << 26)))


def _check_vectorised(metric, theirs, rows):
    """mtscore's vectorised formula (the metric's resampled_scores hook, as the significance
    tests use it) against sacrebleu's compute_score_from_stats row by row, on float32
    bootstrap sums and integer AR sums: same values and same scalar types."""
    scorer = bootstrap.RowScorer(metric, rows.shape[1])
    assert scorer.vectorised
    for arr in (rows.astype(np.float32), rows):
        got = scorer(arr)
        want = [theirs._compute_score_from_stats(r.copy()).score for r in arr]
        assert scorer.vectorised, "vectorised path disagreed and fell back"
        g = got.scalars()
        assert [float(x) for x in g] == [float(x) for x in want]
        assert [type(x) is np.float32 for x in g] == [type(x) is np.float32 for x in want]
        assert got.array.dtype == np.array(want).dtype


@settings(max_examples=60, deadline=None)
@given(rows=_rows, method=st.sampled_from(["exp", "none", "floor", "add-k"]), eff=st.booleans())
def test_vectorised_bleu_equals_per_row(rows, method, eff):
    rows[:, 1] = rows[:, 1] % 1000
    _check_vectorised(mtscore.BLEU(smooth_method=method, effective_order=eff),
                      SBLEU(smooth_method=method, effective_order=eff), rows)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), wo=st.sampled_from([0, 2]), eps=st.booleans(), beta=st.sampled_from([1, 2, 3]))
def test_vectorised_chrf_equals_per_row(data, wo, eps, beta):
    k = 3 * (6 + wo)
    rows = data.draw(hnp.arrays(np.int64, st.tuples(st.integers(1, 30), st.just(k)),
                                elements=st.one_of(st.just(0), st.integers(0, 50), st.integers(0, 1 << 27))))
    _check_vectorised(mtscore.CHRF(word_order=wo, eps_smoothing=eps, beta=beta),
                      SCHRF(word_order=wo, eps_smoothing=eps, beta=beta), rows)


@settings(max_examples=40, deadline=None)
@given(rows=hnp.arrays(np.int64, st.tuples(st.integers(1, 30), st.just(2)),
                       elements=st.one_of(st.just(0), st.integers(0, 100), st.integers(0, 1 << 26))))
def test_vectorised_ter_equals_per_row(rows):
    _check_vectorised(mtscore.TER(), STER(), rows.astype(np.float64))


def test_scalar_env_switch_gives_same_numbers(wmt17, monkeypatch):
    _, systems, refs = wmt17
    small = {k: v[:150] for k, v in list(systems.items())[:3]}
    r = [refs[0][:150]]
    a = compare(small, r, metrics=[SBLEU(), SCHRF()], n=200)
    monkeypatch.setenv("MTSCORE_SIGNIFICANCE_SCALAR", "1")
    b = compare(small, r, metrics=[SBLEU(), SCHRF()], n=200)
    for m in a.metrics:
        assert [vars(x) for x in a.results[m]] == [vars(x) for x in b.results[m]]
