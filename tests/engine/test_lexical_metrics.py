"""BLEU / chrF against sacrebleu on generated adversarial corpora, sacrebleu's own published test
values, and the error contract (n-gram kernels vs their plain-Python twins:
tests/kernels/test_kernel_twins.py)."""
import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

import mtscore

WORDS = st.sampled_from(["the", "cat", "sat", "on", "mat", "a", "Cat", "mat.", "1.5", "-", "&amp;",
                         "<skipped>", "😀", "中文", "İ", "ΟΔΟΣ", ",", "", " ", "\u00a0", "x-1",
                         "\u2000", "."])
SENT = st.lists(WORDS, max_size=14).map(" ".join)
UNI = st.text(max_size=30)
SEG = st.one_of(SENT, SENT, UNI)


@st.composite
def corpora(draw):
    n = draw(st.integers(1, 6))
    k = draw(st.integers(1, 3))
    hyps = draw(st.lists(SEG, min_size=n, max_size=n))
    refs = [draw(st.lists(SEG, min_size=n, max_size=n)) for _ in range(k)]
    return hyps, refs


BLEU_OPTS = st.fixed_dictionaries({
    "tokenize": st.sampled_from(["13a", "none", "intl", "char", "zh"]),
    "lowercase": st.booleans(),
    "smooth_method": st.sampled_from(["none", "floor", "add-k", "exp"]),
    "effective_order": st.booleans(),
    "max_ngram_order": st.integers(1, 6),
})
CHRF_OPTS = st.fixed_dictionaries({
    "char_order": st.integers(0, 7), "word_order": st.integers(0, 3),
    "beta": st.sampled_from([1, 2, 3]), "lowercase": st.booleans(),
    "whitespace": st.booleans(), "eps_smoothing": st.booleans(),
}).filter(lambda d: d["char_order"] + d["word_order"] > 0)


@given(corpora(), BLEU_OPTS)
@settings(max_examples=250)
def test_bleu_matches_sacrebleu(corpus, opts):
    hyps, refs = corpus
    a = sacrebleu.BLEU(**opts)
    b = mtscore.BLEU(**opts)
    exp_stats = np.array(a._extract_corpus_statistics(hyps, refs), dtype=np.int64)
    stats = b.corpus_stats(hyps, refs)
    np.testing.assert_array_equal(stats, exp_stats)
    assert a.corpus_score(hyps, refs).score == b.corpus_score(hyps, refs).score
    sent = b.sentence_scores_from_stats(stats)
    for i, h in enumerate(hyps):
        assert sent[i] == a.sentence_score(h, [r[i] for r in refs]).score


@given(corpora(), CHRF_OPTS)
@settings(max_examples=250)
def test_chrf_matches_sacrebleu(corpus, opts):
    hyps, refs = corpus
    a = sacrebleu.CHRF(**opts)
    b = mtscore.CHRF(**opts)
    exp_stats = np.array(a._extract_corpus_statistics(hyps, refs), dtype=np.int64)
    stats, scores = b.segment_scores(hyps, refs)
    np.testing.assert_array_equal(stats, exp_stats)
    assert a.corpus_score(hyps, refs).score == b.corpus_score(hyps, refs).score
    for i, h in enumerate(hyps):
        assert scores[i] == a.sentence_score(h, [r[i] for r in refs]).score


@st.composite
def repeated_corpora(draw):
    """Corpora whose reference rows repeat (a long multi-system table): mtscore prepares each
    distinct row once (seg_map); None marks a missing reference."""
    k = draw(st.integers(1, 3))
    pool = draw(st.lists(st.lists(st.one_of(SEG, st.none()), min_size=k, max_size=k)
                         .filter(lambda row: any(x is not None for x in row)),
                         min_size=1, max_size=3))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=2, max_size=12))
    hyps = draw(st.lists(SEG, min_size=len(picks), max_size=len(picks)))
    refs = [[pool[p][j] for p in picks] for j in range(k)]
    return hyps, refs


@given(repeated_corpora(), BLEU_OPTS, CHRF_OPTS)
@settings(max_examples=150)
def test_repeated_reference_rows_match_sacrebleu(corpus, bopts, copts):
    hyps, refs = corpus
    from mtscore.engine.metrics.lexical import dedupe_rows
    first, seg_map = dedupe_rows(refs)
    has_none = any(x is None for r in refs for x in r)
    for name, a, b in (("bleu", sacrebleu.BLEU(**bopts), mtscore.BLEU(**bopts)),
                       ("chrf", sacrebleu.CHRF(**copts), mtscore.CHRF(**copts))):
        if name == "chrf" and has_none:
            continue  # sacrebleu's chrF cannot take None references (its BLEU skips them)
        exp = np.array(a._extract_corpus_statistics(hyps, refs), dtype=np.int64)
        stats, scores = b.segment_scores(hyps, refs)
        np.testing.assert_array_equal(stats, exp)
        assert b.corpus_score(hyps, refs).score == a.corpus_score(hyps, refs).score
        # the same with two workers (distinct rows dealt to two chunks)
        b2 = type(b)(**(bopts if name == "bleu" else copts), workers=2)
        np.testing.assert_array_equal(b2.segment_scores(hyps, refs)[0], exp)
        if name == "chrf":
            for i, h in enumerate(hyps):
                assert scores[i] == a.sentence_score(h, [r[i] for r in refs]).score
    assert len(first) == len(set(seg_map.tolist())) <= len(hyps)


def test_dedupe_rows():
    from mtscore.engine.metrics.lexical import dedupe_rows
    first, seg_map = dedupe_rows([["a", "b", "a", None, "b", None], ["x", "y", "x", "z", "y", "z"]])
    assert first.tolist() == [0, 1, 3]
    assert seg_map.tolist() == [0, 1, 0, 2, 1, 2]
    first, seg_map = dedupe_rows([["a", "a", "a"]])
    assert first.tolist() == [0]
    assert seg_map.tolist() == [0, 0, 0]
    # max_distinct: None as soon as more rows than that are distinct
    assert dedupe_rows([["a", "b", "a", "c"]], 2) is None
    first, seg_map = dedupe_rows([["a", "b", "a", "c"]], 3)
    assert first.tolist() == [0, 1, 3]
    assert seg_map.tolist() == [0, 1, 0, 2]


def test_repeated_rows_only_for_heavy_repetition():
    """Rows deduplicated only when at most DEDUPE_MAX_SHARE of them are distinct (a
    multi-system table); a corpus with a few repeats is prepared row by row."""
    from mtscore.engine.metrics.lexical import DEDUPE_MAX_SHARE, repeated_rows
    table = [f"reference {i}" for i in range(500)] * 3
    first, seg_map = repeated_rows([table])
    assert len(first) == 500
    assert seg_map.tolist() == list(range(500)) * 3
    few = [f"segment {i}" for i in range(900)] + ["segment 0"] * 100
    assert len(set(few)) > DEDUPE_MAX_SHARE * len(few)
    assert repeated_rows([few]) is None
    assert repeated_rows([table], max_distinct=499) is None


def test_none_references_and_variable_counts():
    hyps = ["the cat sat", "a b c d", "x"]
    refs = [["the cat sat", None, "x y"], ["a cat sat", "a b c", None]]
    for cls in (sacrebleu.BLEU, sacrebleu.CHRF):
        a = cls().corpus_score(hyps, refs)
        m = getattr(mtscore, cls.__name__)()
        b = m.corpus_score(hyps, refs)
        assert a.score == b.score
        assert str(m.get_signature()).startswith("nrefs:var|")


# sacrebleu's own unit-test values (test_bleu.py, test_sentence_bleu.py, test_chrf.py)
README_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
README_REFS = [["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
               ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."]]


@pytest.mark.parametrize(("kw", "expected"), [
    ({}, 48.530827), ({"tokenize": "none"}, 49.1919566), ({"tokenize": "intl"}, 43.91623493),
    ({"max_ngram_order": 1}, 77.65), ({"max_ngram_order": 2}, 60.50), ({"max_ngram_order": 5}, 46.14),
    ({"max_ngram_order": 6}, 43.28),
])
def test_readme_example(kw, expected):
    s = mtscore.BLEU(**kw).corpus_score(README_HYPS, README_REFS).score
    assert abs(s - expected) < (1e-6 if "max_ngram_order" not in kw else 5e-3)


def test_worked_example_and_compute_bleu():
    b = mtscore.BLEU().corpus_score(["the cat sat on mat"], [["the cat sat on the mat"]])
    assert b.counts == [5, 3, 2, 1]
    assert b.totals == [5, 4, 3, 2]
    assert abs(b.score - 57.893) < 1e-3
    k = mtscore.BLEU(smooth_method="add-k").corpus_score(["the cat sat on mat"], [["the cat sat on the mat"]])
    assert k.counts == [5, 4, 3, 2]
    assert k.totals == [5, 5, 4, 3]
    assert abs(k.score - 65.1113) < 1e-4
    s = mtscore.BLEU.compute_bleu([9, 7, 5, 3], [10, 8, 6, 4], 11, 11)
    assert abs(s.score - 83.75922397) < 1e-6


def test_chrf_examples():
    c = mtscore.CHRF()
    assert c.corpus_stats(["the cat sat on the mat"], [["a cat sat"]]).tolist() == \
        [[17, 7, 7, 16, 6, 5, 15, 5, 4, 14, 4, 3, 13, 3, 2, 12, 2, 1]]
    assert abs(mtscore.CHRF(eps_smoothing=True).sentence_score("a b", ["a b c"]).score - 21.164) < 1e-3
    assert abs(mtscore.CHRF().sentence_score("a b", ["a b c"]).score - 63.636) < 1e-3
    assert abs(mtscore.CHRF(whitespace=True).sentence_score(" ab ", ["ab"]).score - 78.125) < 1e-9


@pytest.mark.parametrize("hyps", [np.array(README_HYPS), tuple(README_HYPS)])
def test_array_inputs(hyps):
    import pandas as pd
    import pyarrow as pa

    expected = mtscore.BLEU().corpus_score(README_HYPS, README_REFS).score
    for h in (hyps, pd.Series(README_HYPS), pa.array(README_HYPS), pa.chunked_array([README_HYPS])):
        refs = [pa.array(r) for r in README_REFS]
        assert mtscore.BLEU().corpus_score(h, refs).score == expected


def test_errors():
    with pytest.raises(ValueError, match="2 segments but there are 3 hypotheses"):
        mtscore.BLEU().corpus_score(README_HYPS, [r[:2] for r in README_REFS])
    with pytest.raises(ValueError, match="N x K"):  # transposed layout
        mtscore.CHRF().corpus_score(README_HYPS, [list(x) for x in zip(*README_REFS)])
    with pytest.raises(TypeError, match="flat list"):
        mtscore.BLEU().corpus_score(README_HYPS, README_REFS[0])
    with pytest.raises(ValueError, match="unknown smooth_method"):
        mtscore.BLEU(smooth_method="bogus")
    with pytest.raises(RuntimeError, match="cache is empty"):
        mtscore.BLEU().corpus_score(README_HYPS, None)
    with pytest.raises(ValueError, match="evaluate the metric first"):
        mtscore.BLEU().get_signature()


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_give_identical_results(workers):
    hyps = README_HYPS * 7
    refs = [r * 7 for r in README_REFS]
    r = mtscore.score({"a": hyps, "b": hyps[::-1]}, refs, metrics=["bleu", "chrf", "chrf++"],
                      workers=workers, chunk_size=5)
    base = mtscore.score({"a": hyps, "b": hyps[::-1]}, refs, metrics=["bleu", "chrf", "chrf++"])
    for s in ("a", "b"):
        for m in ("bleu", "chrf", "chrf++"):
            assert r.corpus[s][m].score == base.corpus[s][m].score
            np.testing.assert_array_equal(r.stats[s][m], base.stats[s][m])
    assert r.segments.equals(base.segments)


def test_score_files_streams_like_score(tmp_path):
    hyps = README_HYPS * 11 + ["", "x"]
    refs = [r * 11 + ["a", ""] for r in README_REFS]
    hp = tmp_path / "hyp.txt"
    hp.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    rps = []
    for k, r in enumerate(refs):
        p = tmp_path / f"ref{k}.txt"
        p.write_text("\n".join(r) + "\n", encoding="utf-8")
        rps.append(str(p))
    a = mtscore.score_files({"s": str(hp), "t": str(hp)}, rps, metrics=["bleu", "chrf++"], chunk_size=4)
    b = mtscore.score({"s": hyps, "t": hyps}, refs, metrics=["bleu", "chrf++"])
    for s in ("s", "t"):
        for m in ("bleu", "chrf++"):
            assert a.corpus[s][m].score == b.corpus[s][m].score
    assert a.segments.equals(b.segments)
    assert a.signatures == b.signatures


def test_large_corpus_stats_are_chunked():
    hyps = README_HYPS * 5
    refs = [r * 5 for r in README_REFS]
    m = mtscore.CHRF(word_order=2)
    whole = m.corpus_stats(hyps, refs)
    m.chunk_size = 4
    np.testing.assert_array_equal(m.corpus_stats(hyps, refs), whole)
    assert str(m.get_signature()).startswith("nrefs:2|")


def test_repeated_references_prepared_once_for_chunked_corpora(monkeypatch):
    """A long corpus whose reference rows repeat (a multi-system table) prepares the distinct
    rows once when they fit the metric's bound (BLEU here: 12 <= 8 x chunk_size) and chunk by
    chunk otherwise (chrF: 12 > 2 x chunk_size); both give the unchunked statistics."""
    from mtscore.engine.metrics.lexical import LexicalMetric

    distinct = [f"The {w} no. {i} sat on the mat, didn't it?" for i, w in
                enumerate(["cat", "dog", "cow", "hen", "owl", "elk", "yak", "ram", "emu", "bee", "ant", "fox"])]
    refs = [distinct * 3, [r.upper() for r in distinct] * 3]
    hyps = [f"the {i % 5} cat sat on a mat {i}" for i in range(36)]
    calls = []
    orig = LexicalMetric._prepare_streams

    def spy(self, streams, rows="auto"):
        calls.append((type(self).__name__, len(streams[0])))
        return orig(self, streams, rows)

    monkeypatch.setattr(LexicalMetric, "_prepare_streams", spy)
    for make in (mtscore.BLEU, lambda: mtscore.CHRF(word_order=2)):
        whole = make().corpus_stats(hyps, refs)
        m = make()
        m.chunk_size = 4
        calls.clear()
        np.testing.assert_array_equal(m.corpus_stats(hyps, refs), whole)
        assert calls == ([("BLEU", 36)] if isinstance(m, mtscore.BLEU) else [("CHRF", 4)] * 9)
        calls.clear()
        r = mtscore.score({"a": hyps, "b": hyps[::-1]}, refs, metrics=[m], chunk_size=4)
        base = mtscore.score({"a": hyps, "b": hyps[::-1]}, refs, metrics=[make()])
        assert r.segments.equals(base.segments)
        name = "bleu" if isinstance(m, mtscore.BLEU) else "chrf++"
        for s in ("a", "b"):
            np.testing.assert_array_equal(r.stats[s][name], base.stats[s][name])
        n_prep = sum(1 for c in calls if c[1] != 36)
        assert n_prep == (0 if name == "bleu" else 9), calls


def test_score_table_long_format(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    hyps_a = README_HYPS
    hyps_b = [h.lower() for h in README_HYPS]
    t = pa.table({"system": ["A"] * 3 + ["B"] * 3, "hyp": hyps_a + hyps_b,
                  "ref_0": README_REFS[0] * 2, "ref_1": README_REFS[1] * 2})
    path = tmp_path / "t.parquet"
    pq.write_table(t, path)
    r = mtscore.score_table(str(path), metrics=["bleu", "chrf"])
    base = mtscore.score({"A": hyps_a, "B": hyps_b}, README_REFS, metrics=["bleu", "chrf"])
    for s in ("A", "B"):
        for m in ("bleu", "chrf"):
            assert r.corpus[s][m].score == base.corpus[s][m].score
    assert r.segments.equals(base.segments)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "b", "é", "a b", "\U0001F600"]),
                          st.tuples(st.sampled_from(["a", "b"]), st.none() | st.just("c"))),
                max_size=40))
def test_list_helpers_match_python(items):
    """The C-loop helpers behind as_text_list / present_mask / dedupe_rows against plain Python."""
    from mtscore.kernels import _lists

    seen = {}
    seg = [seen.setdefault(x, len(seen)) for x in items]
    first = [seg.index(j) for j in range(len(seen))]
    f, s = _lists.dedupe_index(items)
    assert f.dtype == s.dtype == np.int64
    assert f.tolist() == first
    assert s.tolist() == seg
    strs = [x for x in items if not isinstance(x, tuple)]
    mask = [x is not None for x in strs]
    row = _lists.present_row(strs)
    assert (row is None) == all(mask)
    assert (row is None or row.tolist() == [int(m) for m in mask])
    bad = [i for i, x in enumerate(items) if type(x) is not str]
    assert _lists.first_non_str(items) == (bad[0] if bad else -1)
    bad = [i for i, x in enumerate(items) if type(x) is not str and x is not None]
    assert _lists.first_non_str(items, True) == (bad[0] if bad else -1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["", "a", "b", "a b", "é", "\U0001F600", "a" * 40]),
                         min_size=3, max_size=3), max_size=6),
       st.integers(1, 40))
def test_dedupe_columns_matches_python(rows, n_cols):
    """dedupe_columns (pairwise compare for <= 32 columns, a dict beyond) against plain Python:
    distinct (segment, string) pairs in segment-major, first-seen order."""
    from mtscore.kernels import _lists

    cols = [[row[(j + s) % 3] for row in rows] for s in range(n_cols) for j in (s % 2,)]
    if not rows:
        cols = [[] for _ in range(n_cols)]
    strings, seg, index = _lists.dedupe_columns(cols)
    exp_strings, exp_seg, exp_index = [], [], [[0] * len(rows) for _ in cols]
    for i in range(len(rows)):
        seen = {}
        for s, c in enumerate(cols):
            if c[i] not in seen:
                seen[c[i]] = len(exp_strings)
                exp_strings.append(c[i])
                exp_seg.append(i)
            exp_index[s][i] = seen[c[i]]
    assert strings == exp_strings
    assert seg.tolist() == exp_seg
    assert index.dtype == seg.dtype == np.int64
    assert index.tolist() == exp_index


def test_dedupe_columns_errors():
    from mtscore.kernels import _lists

    with pytest.raises(ValueError, match="column 1 has 1 items, expected 2"):
        _lists.dedupe_columns([["a", "b"], ["a"]])
    with pytest.raises(TypeError, match="column 1 item 0 is NoneType"):
        _lists.dedupe_columns([["a"], [None]])


SYSTEM_POOL = st.lists(SEG, min_size=1, max_size=3)


@st.composite
def multi_system_corpora(draw):
    """S systems whose outputs for a segment often coincide (drawn from a small per-segment
    pool), K reference streams with None gaps (every segment keeps one reference)."""
    n = draw(st.integers(1, 7))
    k = draw(st.integers(1, 3))
    pools = [draw(SYSTEM_POOL) for _ in range(n)]
    n_sys = draw(st.integers(2, 5))
    systems = {f"s{j}": [draw(st.sampled_from(p)) for p in pools] for j in range(n_sys)}
    refs = [draw(st.lists(SEG | st.none(), min_size=n, max_size=n)) for _ in range(k)]
    for i in range(n):
        if all(r[i] is None for r in refs):
            refs[0][i] = draw(SEG)
    return systems, refs


@settings(max_examples=120, deadline=None)
@given(multi_system_corpora(), st.sampled_from(["13a", "char", "intl"]), st.booleans(),
       st.sampled_from([1, 2]), st.sampled_from([2, 3, 16384]))
def test_many_systems_match_one_by_one_and_sacrebleu(corpus, tok, lc, workers, chunk_size):
    """score() with several systems (deduplicated pairs, reference tables reused segment by
    segment, chunked and threaded) equals each system scored alone, and sacrebleu."""
    systems, refs = corpus
    configs = {"bleu": (mtscore.BLEU, sacrebleu.BLEU,
                        dict(tokenize=tok, lowercase=lc, effective_order=True)),
               "chrf++": (mtscore.CHRF, sacrebleu.CHRF, dict(word_order=2, lowercase=lc)),
               "ter": (mtscore.TER, sacrebleu.TER, dict(case_sensitive=not lc, normalized=lc))}
    r = mtscore.score(systems, refs, metrics=[ours(**kw) for ours, _, kw in configs.values()],
                      workers=workers, chunk_size=chunk_size)
    n = len(refs[0])
    for m, (ours, theirs, kw) in configs.items():
        col = r.segments.column(m).to_numpy()
        for j, (name, hyps) in enumerate(systems.items()):
            alone = ours(**kw).corpus_stats(hyps, refs)
            np.testing.assert_array_equal(r.stats[name][m], alone)
            np.testing.assert_array_equal(col[j * n:(j + 1) * n],
                                          [ours(**kw).compute_score_from_stats(list(row)).score
                                           for row in alone])
            expect = theirs(**kw)._extract_corpus_statistics(hyps, refs)
            np.testing.assert_array_equal(r.stats[name][m], np.array(expect, dtype=alone.dtype))
            assert r.corpus[name][m].score == theirs(**kw).corpus_score(hyps, refs).score


def test_systems_stats_public_api():
    """Metric.systems_stats: several systems (any sequence type) against given or cached
    references equal corpus_stats one by one; wrong lengths raise the usual error."""
    import pandas as pd

    h1 = README_HYPS
    h2 = [h.upper() for h in README_HYPS[:-1]] + [README_HYPS[-1]]
    for make in (mtscore.BLEU, lambda: mtscore.CHRF(word_order=2), mtscore.TER):
        m = make()
        got = m.systems_stats([np.array(h1), pd.Series(h2), tuple(h1)], README_REFS)
        assert len(got) == 3
        for stats, h in zip(got, (h1, h2, h1)):
            np.testing.assert_array_equal(stats, make().corpus_stats(h, README_REFS))
        cached = make()
        cached.prepare_references(README_REFS)
        for stats, h in zip(cached.systems_stats([h2, h1]), (h2, h1)):
            np.testing.assert_array_equal(stats, make().corpus_stats(h, README_REFS))
        with pytest.raises(ValueError, match="hypotheses but 3 reference segments"):
            cached.systems_stats([h1, h1[:2]])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=60), st.integers(0, 5))
def test_order_by_row_and_take_match_numpy(rows, extra):
    """The counting sort that orders hypotheses by reference row equals numpy's stable
    argsort, and take() equals a list comprehension."""
    from mtscore.kernels import _lists, _ngram

    arr = np.array(rows, dtype=np.int64)
    n_rows = (max(rows) + 1 if rows else 0) + extra
    order = _ngram.order_by_row(arr, n_rows)
    assert order.dtype == np.int64
    np.testing.assert_array_equal(order, np.argsort(arr, kind="stable"))
    items = [f"s{r}" for r in rows]
    assert _lists.take(items, order) == [items[i] for i in order]


def test_order_by_row_and_take_errors():
    from mtscore.kernels import _lists, _ngram

    with pytest.raises(ValueError, match=r"row 3 at position 1 is outside \[0, 3\)"):
        _ngram.order_by_row(np.array([0, 3], dtype=np.int64), 3)
    with pytest.raises(ValueError, match="outside"):
        _ngram.order_by_row(np.array([-1], dtype=np.int64), 3)
    with pytest.raises(IndexError, match="index 2 out of range for 2 items"):
        _lists.take(["a", "b"], np.array([0, 2], dtype=np.int64))
