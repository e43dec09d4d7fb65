"""TER: compiled kernel vs sacrebleu 2.6.0 on adversarial inputs (kernel vs plain-Python twin, and
the twin vs sacrebleu: tests/kernels/test_kernel_twins.py).

No data files needed; everything here runs in a few seconds (sacrebleu's own TER is the slow
part, so the 300-token cases are few)."""
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER as SacreTER
from sacrebleu.metrics.lib_ter import translation_edit_rate as sacre_ter_pair
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

import mtscore
from mtscore.engine.metrics.ter import TER, ter_stats
from mtscore.kernels import _ter_normalize, _ter_shift

OPTION_SETS = [
    {},
    {"normalized": True},
    {"no_punct": True},
    {"normalized": True, "asian_support": True},
    {"no_punct": True, "asian_support": True},
    {"normalized": True, "no_punct": True, "asian_support": True},
    {"case_sensitive": True},
    {"normalized": True, "no_punct": True, "asian_support": True, "case_sensitive": True},
]


def ids(xs):
    return np.asarray(xs, dtype=np.int32)


def assert_same_as_sacrebleu(hyps, refs, **opts):
    """Per-segment stats, corpus score, num_edits, ref_length and signature all equal."""
    ours = TER(**opts)
    theirs = SacreTER(**opts)
    s_ours = ours.corpus_stats(hyps, refs)
    s_theirs = theirs._extract_corpus_statistics(hyps, refs)
    assert [[int(a), float(b)] for a, b in s_ours] == [[a, b] for a, b in s_theirs]
    # sacrebleu's TER is slow: score the statistics already computed (same code path as
    # corpus_score: sum_of_lists + _compute_score_from_stats)
    c_ours = ours.compute_score_from_stats(ours.sum_stats(s_ours))
    c_theirs = theirs._aggregate_and_compute(s_theirs)
    assert c_ours.score == c_theirs.score
    assert c_ours.num_edits == c_theirs.num_edits
    assert c_ours.ref_length == c_theirs.ref_length
    assert str(ours.get_signature()) == str(theirs.get_signature())
    assert ours.get_signature().format(short=True) == theirs.get_signature().format(short=True)
    return c_ours


# ---- upstream sacrebleu test values -----------------------------------------------------------
@pytest.mark.parametrize(("hyp", "ref", "expected"), [
    ("a b c d e f g h", "a b c d e f g h", 0.0),
    ("a b c d", "e f g h", 1.0),
    ("", "a", 1.0),
    ("a", "", 1.0),
    ("", "", 0.0),
    ("d e f g h a b c", "a b c d e f g h", 1 / 8),
])
def test_upstream_values(hyp, ref, expected):
    score = TER().sentence_score(hyp, [ref])
    assert score.score == pytest.approx(100 * expected)
    assert score.score == SacreTER().sentence_score(hyp, [ref]).score


# ---- adversarial segments ------------------------------------------------------------------
def _words(rng, n, vocab):
    return " ".join(f"w{rng.randrange(vocab)}" for _ in range(n))


def test_banded_case_gives_100_not_80():
    ref = [f"r{i}" for i in range(100)]
    hyp = [f"junk{i}" for i in range(40)] + ref[:60]
    assert _ter_shift.ter_pair_ids(ids([1000 + i for i in range(40)] + list(range(60))),
                             ids(range(100))) == (100, 100)
    score = assert_same_as_sacrebleu([" ".join(hyp)], [[" ".join(ref)]])
    assert score.num_edits == 100


def test_empty_identical_and_whitespace_segments():
    hyps = ["", "a b c", "", "  ", "x y z", "The same.", "\t", "a\u3000b", "a"]
    refs = ["", "", "a b c", "", "x y z", "the same.", "q", "a b", "  \u2028 "]
    for opts in OPTION_SETS:
        assert_same_as_sacrebleu(hyps, [refs], **opts)


def test_long_segments_300_tokens():
    rng = random.Random(7)
    ref = _words(rng, 300, 80)
    r = ref.split()
    # heavy edits, block moves and a shuffled version
    h1 = " ".join(r[150:] + r[:150])
    h2 = " ".join(w if rng.random() < 0.7 else f"x{rng.randrange(50)}" for w in r)
    assert_same_as_sacrebleu([h1, h2], [[ref, ref]])


def test_heavy_repetition_and_block_moves():
    rng = random.Random(3)
    hyps, refs = [], []
    for _ in range(12):
        base = _words(rng, rng.randrange(5, 40), 4)  # tiny vocabulary: many equal tokens
        w = base.split()
        k = rng.randrange(1, max(2, len(w) // 2))
        s = rng.randrange(0, len(w) - k + 1)
        moved = w[:s] + w[s + k:]
        t = rng.randrange(0, len(moved) + 1)
        moved = moved[:t] + w[s:s + k] + moved[t:]
        hyps.append(" ".join(moved))
        refs.append(base)
    hyps.append("the the the the the the the the the the the the")
    refs.append("the cat the the dog the the the")
    hyps.append("a b c d e f g h i j k l m n o p")
    refs.append("i j k l m n o p a b c d e f g h")
    assert_same_as_sacrebleu(hyps, [refs])


def test_extreme_length_ratios_widen_the_beam():
    rng = random.Random(11)
    hyps = [_words(rng, 2, 20), _words(rng, 130, 20), _words(rng, 1, 5), _words(rng, 3, 30)]
    refs = [_words(rng, 150, 20), _words(rng, 2, 20), _words(rng, 120, 5), _words(rng, 200, 30)]
    assert_same_as_sacrebleu(hyps, [refs])


def test_cjk_with_asian_support():
    hyps = ["美众院公布对特朗普的弹劾条款。", "りの拳銃を持った男、東京で逮捕", "ＡＢＣ，（テスト）！「引用」・終",
            "中文和English混合, 4.2 公里", "㈱㍿︰豈更 ⺀ ㇀ ㇰㇱ"]
    refs = ["美众院公布对特朗普的弹劾条款", "拳銃を持った男が東京で逮捕された。", "ＡＢＣ（テスト）！「引用」終",
            "中文 和 english 混合，4.2公里", "㍿ 豈 更"]
    for opts in OPTION_SETS:
        assert_same_as_sacrebleu(hyps, [refs], **opts)


def test_multi_reference_rules_and_none():
    hyps = ["a b c d", "x y", "p q r", ""]
    r1 = ["a b c d e", None, "p q r s t u", ""]
    r2 = ["d c b a", "x y z", None, "a"]
    r3 = ["a b", "y x", "r q p", None]
    score = assert_same_as_sacrebleu(hyps, [r1, r2, r3])
    ours = TER()
    ours.corpus_score(hyps, [r1, r2, r3])
    assert ours.num_refs == -1
    assert "nrefs:var" in str(ours.get_signature())
    # mean length over ALL references, edits from the best one (strict <, first wins)
    assert_same_as_sacrebleu(["a b c", "one two three four"],
                             [["a b c x y z", "four three two one"], ["c b a", "one two"]])
    assert score.num_edits >= 0


def test_cached_references_and_sentence_score():
    refs = [["The cat sat on the mat.", "A dog barked!"], ["the cat is on the mat", None]]
    hyps = ["the cat on the mat sat", "a dog barks"]
    for opts in OPTION_SETS:
        ours = TER(references=refs, **opts)
        theirs = SacreTER(references=refs, **opts)
        assert ours.corpus_score(hyps).score == theirs.corpus_score(hyps, None).score
        for h, r in zip(hyps, zip(*refs)):
            a = ours.sentence_score(h, list(r))
            b = theirs.sentence_score(h, list(r))
            assert (a.score, a.num_edits, a.ref_length) == (b.score, b.num_edits, b.ref_length)
            assert str(ours.get_signature()) == str(theirs.get_signature())


def test_lazy_export_and_score_object():
    assert mtscore.TER is TER
    s = TER().corpus_score(["a b c"], [["a b d"]])
    assert s.name == "TER"
    assert isinstance(s.num_edits, int)
    assert s.format() == SacreTER().corpus_score(["a b c"], [["a b d"]]).format()


def test_sum_stats_is_sequential_like_sacrebleu():
    rng = np.random.default_rng(0)
    lens = rng.integers(1, 60, size=(5000, 3)).sum(1) / 3  # multi-ref means: not exact in float
    stats = np.stack([rng.integers(0, 30, 5000).astype(np.float64), lens], axis=1)
    from sacrebleu.utils import sum_of_lists
    expected = sum_of_lists([[int(a), float(b)] for a, b in stats])
    assert TER().sum_stats(stats) == expected
    assert TER().sum_stats(stats)[1] != float(stats[:, 1].sum()) or True  # pairwise may differ


def test_score_from_float32_rows_like_sacrebleu_bootstrap():
    rows = np.array([[13, 52.333333], [0, 0], [5, 0], [1234, 5678.5]], dtype=np.float32)
    for row in rows:
        a = TER().compute_score_from_stats(row)
        b = SacreTER()._compute_score_from_stats(row)
        assert type(a.score) is type(b.score)
        assert a.score == b.score
        assert a.num_edits == b.num_edits
        assert a.ref_length == b.ref_length


def test_workers_do_not_change_results():
    rng = random.Random(5)
    refs = [_words(rng, rng.randrange(0, 60), 30) for _ in range(300)]
    hyps = [_words(rng, rng.randrange(0, 60), 30) for _ in range(300)]
    one = TER(workers=1).corpus_stats(hyps, [refs])
    two = TER(workers=2).corpus_stats(hyps, [refs])
    three = TER(workers=3).corpus_stats(hyps, [refs])
    assert np.array_equal(one, two)
    assert np.array_equal(one, three)


@pytest.mark.parametrize("chunk", [5, 16, 64])
def test_pipelined_workers_match_one_worker(monkeypatch, chunk):
    """workers > 1 tokenises chunk by chunk while other threads search: same statistics as
    one worker, with several and missing references (ragged seg_refs)."""
    from mtscore.engine.metrics import ter as ter_mod
    monkeypatch.setattr(ter_mod, "_PIPE_CHUNK", chunk)
    rng = random.Random(chunk)
    n = 151
    refs_a = [_words(rng, rng.randrange(0, 25), 30) for _ in range(n)]
    refs_b = [None if rng.random() < 0.3 else _words(rng, rng.randrange(0, 25), 30)
              for _ in range(n)]
    hyps = [_words(rng, rng.randrange(0, 25), 30) for _ in range(n)]
    one = TER(workers=1).corpus_stats(hyps, [refs_a, refs_b])
    for w in (2, 3):
        assert np.array_equal(TER(workers=w).corpus_stats(hyps, [refs_a, refs_b]), one)
    if chunk != 16:
        return
    theirs = SacreTER(references=[refs_a, refs_b])._extract_corpus_statistics(hyps, None)
    assert one.tolist() == [[float(e), float(n)] for e, n in theirs]


def test_cost_order_is_a_permutation_costliest_first():
    from mtscore.engine.metrics.ter import _cost_order
    rng = np.random.default_rng(3)
    for n, k in [(1, 1), (7, 2), (300, 3)]:
        hyp_len = rng.integers(0, 80, n)
        hyp_len[n // 2] = 1000  # one very long segment
        refs_per_seg = rng.integers(1, k + 1, n)
        ref_len = rng.integers(0, 80, int(refs_per_seg.sum()))
        ho = np.concatenate(([0], np.cumsum(hyp_len)))
        ro = np.concatenate(([0], np.cumsum(ref_len)))
        sr = np.concatenate(([0], np.cumsum(refs_per_seg)))
        order = _cost_order(ho, ro, sr)
        assert order.dtype == np.int64
        assert sorted(order.tolist()) == list(range(n))
        cost = [(hyp_len[i] + 1) * (ref_len[sr[i]:sr[i + 1]].sum() + 1) for i in order]
        assert cost == sorted(cost, reverse=True)
        assert order[0] == n // 2


def test_ter_stats_shared_threads_fill_every_row_once():
    """Several threads sharing one counter, any grain, fill exactly the rows in ``order``."""
    import threading

    from mtscore.kernels import _ter_shift
    rng = np.random.default_rng(11)
    n = 200
    hyp_len = rng.integers(0, 40, n)
    ref_len = rng.integers(1, 40, n)
    hyp_ids = rng.integers(0, 6, int(hyp_len.sum())).astype(np.int32)
    ref_ids = rng.integers(0, 6, int(ref_len.sum())).astype(np.int32)
    ho = np.concatenate(([0], np.cumsum(hyp_len))).astype(np.int64)
    ro = np.concatenate(([0], np.cumsum(ref_len))).astype(np.int64)
    sr = np.arange(n + 1, dtype=np.int64)
    want = np.zeros((n, 2))
    _ter_shift.ter_stats_range(hyp_ids, ho, ref_ids, ro, sr, want, 0, n)
    for i in range(n):
        e, m = _ter_shift.ter_pair_ids(hyp_ids[ho[i]:ho[i + 1]], ref_ids[ro[i]:ro[i + 1]])
        assert want[i].tolist() == [e, m]
    for threads, grain in [(1, 1), (2, 3), (3, 1000), (4, 7)]:
        order = rng.permutation(n)[:150].astype(np.int64)
        out = np.full((n, 2), -1.0)
        counter = np.zeros(1, dtype=np.int64)
        ts = [threading.Thread(target=_ter_shift.ter_stats_shared,
                               args=(hyp_ids, ho, ref_ids, ro, sr, out, order, counter, grain))
              for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        done = np.zeros(n, bool)
        done[order] = True
        assert np.array_equal(out[done], want[done])
        assert (out[~done] == -1.0).all()
        assert counter[0] >= len(order)
    with pytest.raises(ValueError, match="not a segment"):
        _ter_shift.ter_stats_shared(hyp_ids, ho, ref_ids, ro, sr, out, np.array([n], np.int64),
                              np.zeros(1, np.int64))


def test_errors_are_clear():
    with pytest.raises(ValueError, match=r"line-count|same number of lines|do not match"):
        TER().corpus_score(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="no reference"):
        TER().corpus_score(["a"], [[None]])
    with pytest.raises(TypeError):
        TER().sentence_score("a", "a")


def test_ter_stats_on_token_ids_directly():
    hyp_ids = ids([1, 2, 3, 4, 5, 9])
    hyp_off = np.array([0, 4, 6], dtype=np.int64)
    ref_ids = ids([4, 1, 2, 3, 5, 9, 9, 5])
    ref_off = np.array([0, 4, 6, 8], dtype=np.int64)
    seg_refs = np.array([0, 1, 3], dtype=np.int64)
    out = ter_stats(hyp_ids, hyp_off, ref_ids, ref_off, seg_refs)
    # one shift; an exact match among two references of mean length 2
    assert out.tolist() == [[1.0, 4.0], [0.0, 2.0]]


# ---- property tests: kernel == sacrebleu --------------------------------------------
token_lists = st.lists(st.integers(0, 6), min_size=0, max_size=35)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(token_lists, token_lists)
def test_kernel_equals_sacrebleu_on_random_token_ids(h, r):
    expected = sacre_ter_pair([str(x) for x in h], [str(x) for x in r])
    assert _ter_shift.ter_pair_ids(ids(h), ids(r)) == expected


# adversarial Unicode for the normaliser: everything its rules look at, plus whitespace and
# case oddities (final sigma, dotted I), astral characters and lone surrogates
_ALPHABET = (
    [*list("aAbBsS'\".,-?:;!()&qutomplg;0123456789/[]{}~`@^_|+*#$%<>=\\"), "\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x85", "\xa0", "\u1680", "\u2000", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", " ", " ", " ", "&quot;", "&amp;", "&lt;", "&gt;", "&amp;quot;", "'s ", "\n-", "Σ", "ΑΣ", "İ", "ẞ", "ǅ", *list("美众院公布りのをテスト、。〈〉【】〔〕・ｰ｡｢．，？：；！＂（）㈱㍿豈︰⺀㇀ㇰ㇀㈀㼢㼣"), "😀", "𠀀", "�", "\x00"]
)
texts = st.lists(st.sampled_from(_ALPHABET), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_normaliser_equals_sacrebleu_tokenizer(text):
    for opts in OPTION_SETS:
        sacre = TercomTokenizer(**opts)
        metric = TER(**opts)
        # hypotheses: one pass of TercomTokenizer over rstrip()
        expected = sacre(text.rstrip())
        assert metric.tokens(text) == expected.split()
        # references: sacrebleu preprocesses them twice
        expected_ref = sacre(sacre(text.rstrip()).rstrip())
        ids_, _offs = metric.tokenize_refs([text])
        assert [metric._vocab.token(int(i)) for i in ids_] == expected_ref.split()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=4))
def test_metric_equals_sacrebleu_on_adversarial_text(pairs):
    hyps = [h for h, _ in pairs]
    refs = [r for _, r in pairs]
    for opts in ({}, {"normalized": True, "asian_support": True},
                 {"no_punct": True, "asian_support": True, "case_sensitive": True}):
        assert_same_as_sacrebleu(hyps, [refs], **opts)


# ---- the one-pass tokenizer of normalized=False: lowercasing per code point ---------------------
def _code_point_texts():
    """Every BMP code point (surrogates too) inside a token between cased letters ("x" c "Y"),
    256 per text (so Latin-1 texts, UCS-2 texts and whitespace code points all occur), plus
    texts with astral characters, capital sigma in every position and dotted capital I."""
    out = []
    for page in range(256):
        out.append(" ".join(f"x{chr(c)}Y" for c in range(page * 256, page * 256 + 256)))
    out += ["Ab \U0001F600 \U00010400x \U0001E900", "ΑΣ Σ ΣΑ Σ. .Σ ΑΣ'Α", "İstanbul DİYARBAKIR",
            "Straße ǅemal ǈ ǋ ẞ", "Œuvre ÀÉÎÕÜ ÿ µ", "\u1680A\u3000B\x85C\xa0D\u2028E"]
    return out


@pytest.mark.parametrize("opts", [
    {"lowercase": True}, {}, {"lowercase": True, "no_punct": True},
    {"lowercase": True, "no_punct": True, "asian_support": True}, {"no_punct": True},
    {"rstrip": True, "lowercase": True}])
def test_one_pass_tokenizer_lowercases_every_code_point_like_python(opts):
    """``tercom_tokenize`` without ``normalized`` splits first and lowercases per code point
    from a table learnt from ``str.lower()`` (Python's own ``lower`` only for texts with capital
    sigma, multi-code-point lowercase forms or astral characters): equal to the twin, which
    lowercases the whole text with ``str.lower()`` first, on every BMP code point."""
    from mtscore.kernels.reference import ter_normalize as twin

    texts = _code_point_texts()
    vk, vt = _ter_normalize.TercomVocab(), twin.TercomVocab()
    k_ids, k_off = _ter_normalize.tercom_tokenize(texts, vk, **opts)
    t_ids, t_off = twin.tercom_tokenize(texts, vt, **opts)
    assert k_off.tolist() == t_off.tolist()
    assert [vk.token(int(i)) for i in k_ids] == [vt.token(int(i)) for i in t_ids]
    assert k_ids.tolist() == t_ids.tolist()  # same first-seen order of the vocabulary
    # a second call with the same vocabulary (table and vocabulary warm) gives the same ids
    assert _ter_normalize.tercom_tokenize(texts, vk, **opts)[0].tolist() == k_ids.tolist()


def test_one_pass_tokenizer_rejects_non_str():
    with pytest.raises(TypeError, match="expected str"):
        _ter_normalize.tercom_tokenize(["a", None], _ter_normalize.TercomVocab(), lowercase=True)
