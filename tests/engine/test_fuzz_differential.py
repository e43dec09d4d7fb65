"""Standing differential fuzzer: mtscore's BLEU, chrF/chrF++ and TER against sacrebleu 2.6.0.

Every draw picks random metric options and a random corpus (1-3 reference streams, ragged via
``None``, empty strings, duplicated references and segments, text from every Unicode block plus
control characters, combining marks, zero-width and bidi controls, CJK, emoji, U+2028, NUL; no
lone surrogates) and checks, against a fresh sacrebleu object:

* corpus score: ``.score`` float equality (BLEU also counts/totals/bp/lengths), and the signature;
* per-segment sufficient statistics: ``corpus_stats`` == sacrebleu ``_extract_corpus_statistics``;
* sentence scores: ``sentence_score`` and ``sentence_scores_from_stats`` (TER:
  ``compute_score_from_stats`` of each row) == sacrebleu ``sentence_score``;
* several configurations of one metric in one ``mtscore.score`` call
  (``test_fuzz_score_several_configurations``): one result key per configuration, each corpus
  score, signature and sentence score equal to sacrebleu's for that configuration; the same
  configuration twice raises ValueError;
* malformed input (``test_rejected_inputs_raise_in_both``): where sacrebleu raises, mtscore raises
  too. Exception mapping (sacrebleu -> mtscore):

  ==============================================  ============================================
  sacrebleu                                       mtscore
  ==============================================  ============================================
  TypeError (non-str hyp/ref element, None hyp)   TypeError, message names the element
  AttributeError / TypeError from deep inside     TypeError (checked up front, same message)
  KeyError (unknown tokenizer)                    ValueError ("unknown tokenizer ... choose")
  AssertionError (unknown smooth_method)          ValueError ("unknown smooth_method ...")
  ==============================================  ============================================

  i.e. mtscore raises the same class, or TypeError/ValueError with a non-empty message.

Known differences by design, excluded from the comparisons (never generated in the differential
tests; ``test_by_design_rejections`` pins each one down):

1. Mismatched numbers of hypotheses and reference segments, and K x N vs N x K transposed
   reference layouts: sacrebleu silently truncates (``zip``); mtscore raises ValueError
   (``CorpusError``).
2. ``refs`` given as a flat string / list of strings, ``hyps`` given as one string: sacrebleu
   iterates the characters; mtscore raises TypeError.
3. An empty corpus (0 hypotheses): sacrebleu's ``corpus_score`` raises IndexError, mtscore a
   ValueError saying the corpus is empty (``test_by_design_rejections``).
4. Option values outside sacrebleu's documented ranges (``max_ngram_order=0``, negative chrF
   orders, ``char_order + word_order == 0``): sacrebleu computes a degenerate 0.0; mtscore raises
   ValueError. The fuzzer draws options only inside the documented ranges.
5. Segments with no reference at all (every stream ``None``): sacrebleu raises (TypeError /
   IndexError / ZeroDivisionError from deep inside, or BLEU counts a reference length of -1);
   every mtscore metric raises ``MissingReferenceError`` (a ValueError) unless
   ``missing_refs="skip"``. ``test_segment_without_any_reference_raises`` asserts both raise; the
   differential draws always give each segment at least one reference.

6. Non-sequence containers: sacrebleu raises TypeError for ``hyps``/reference streams that are
   not a ``Sequence``. mtscore raises TypeError for dicts and sets too (their order is not the
   segments' order; found by this fuzzer), and accepts other iterables (generators, file
   objects, numpy/pandas/pyarrow columns) on purpose. Not generated.
7. Float NaN (and pandas NA/NaT) inside a reference stream is a missing reference in mtscore, like
   ``None`` (DataFrame input); sacrebleu raises TypeError. Not generated as a "bad" reference.
8. sacrebleu's ``_check_corpus_score_args`` type-checks only the first hypothesis and the first
   element of ``refs``; a non-str element further on can slip through (``b"abc"`` as a reference
   with ``tokenize="none"`` is split as bytes and scored). mtscore checks every element and raises
   TypeError naming it; the malformed-input test accepts that.

Budget: each fuzz test has an explicit ``max_examples`` (``BUDGET``) so that the ``ci`` profile
runs >= 2,000 differential draws in total (``test_ci_budget``). ``HYPOTHESIS_PROFILE=fuzz-long``
multiplies every budget by ``MTSCORE_FUZZ_SCALE`` (default 10). The saved corpus
``tests/data/fuzz_corpus.jsonl`` (shrunk failures + diverse draws) is replayed by
``test_replay_fuzz_corpus`` on every run; regenerate it with
``python tests/engine/test_fuzz_differential.py --write-corpus`` (see ``_write_corpus``).
"""
import json
import logging
import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import mtscore

logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # sentence BLEU without effective_order
logging.getLogger("mtscore").setLevel(logging.ERROR)

CORPUS_FILE = Path(__file__).resolve().parents[1] / "data" / "fuzz_corpus.jsonl"

# ---------------------------------------------------------------------------------------------
# budget
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
SCALE = float(os.environ.get("MTSCORE_FUZZ_SCALE", "10" if PROFILE == "fuzz-long" else "1"))
BUDGET = {"bleu": 1500, "chrf": 1200, "ter": 900, "errors": 300, "noref": 30, "multi": 200}
CI_MIN_DRAWS = 2000


def _fuzz_settings(name):
    return settings(max_examples=max(1, round(BUDGET[name] * SCALE)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------------------------
# text
SPECIALS = [
    "\x00", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x7f", "\x85", "\xa0", "\u00ad",
    "\u0301", "\u0308", "\u0327", "\u034f", "\u0670", "\u093c", "\u200b", "\u200c", "\u200d",
    "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069", "\u2028", "\u2029", "\u2060",
    "\u3000", "\ufeff", "\ufe0f", "\ufffd", "\uffff", "\U000e0001", "\U000e007f", "\U0010ffff",
    "\U0001f3fb", "\u1680", "\u180e", "\u2000", "\u205f",
]
WORDS = [
    "the", "The", "THE", "cat", "Cat", "sat", "on", "mat", "a", "A", "mat.", "cat,", "1.5",
    "1,000.5", "$5", "5%", "-", "--", "'s", "n't", "don't", ".", ",", "...", "!?", "(", ")", '"',
    "&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "<skipped>", "x-1", "e.g.", "U.S.A", "a/b",
    "http://a.b/c?d=e", "a@b.c", "İ", "İstanbul", "ı", "ß", "ẞ", "ΣΑΣ", "σας", "ς", "ΐ", "ﬁ", "ﬀ",
    "ǅ", "Å", "Å", "K", "Ω", "Ⅻ", "½", "²", "٣", "١٢", "中文", "日本語", "漢字", "한국어", "ไทย",
    "עברית", "العربية", "हिन्दी", "ქართული", "Ꭰ", "𐌰𐌱", "𝔘𝔫𝔦", "😀", "👩‍👩‍👧", "🇺🇳", "👍🏽",
    "ＡＢＣ", "１２", "«", "»", "“", "„", "‘", "、", "。", "！", "（", "）", "·", "—", "–", "…",
    "〜", "㈱", "゙", "ｶﾞ", "\u4e00\u9fff", "\u3400", "\U00020000", "\U0002a6d6", "\uac00",
    "\u3041", "\u30a1", "\uff5e", "\u2e80", "\u31c0", "\uf900",
]
SEPARATORS = [" ", " ", " ", " ", "  ", "\t", "\n", "\xa0", "\u3000", "\u2028", "", "\u200b",
              " \u0301", "\r\n", "\x0b"]
_NON_SURROGATE_BLOCKS = [b for b in range(0x1100) if not 0xD8 <= b <= 0xDF]


@st.composite
def block_word(draw):
    """A short word of characters from one 256-code-point block (script-coherent)."""
    base = draw(st.sampled_from(_NON_SURROGATE_BLOCKS)) * 256
    chars = st.characters(min_codepoint=base, max_codepoint=base + 255, blacklist_categories=("Cs",))
    return draw(st.text(chars, min_size=1, max_size=4))


ANY_CHAR = st.characters(blacklist_categories=("Cs",))
WORD = st.one_of(
    st.sampled_from(WORDS), st.sampled_from(WORDS), st.sampled_from(SPECIALS), block_word(),
    st.text(ANY_CHAR, min_size=1, max_size=4),
    st.builds(lambda w, m: w + m, st.sampled_from(WORDS), st.sampled_from(SPECIALS)),
)


@st.composite
def sentence(draw, vocab, max_words):
    words = draw(st.lists(st.sampled_from(vocab), max_size=max_words))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words), max_size=len(words)))
    s = "".join(w + sp for w, sp in zip(words, seps))
    if draw(st.integers(0, 9)) == 0:
        s = draw(st.sampled_from(SEPARATORS)) + s
    if draw(st.integers(0, 4)):
        s = s.rstrip(" ") if draw(st.booleans()) else s
    return s


@st.composite
def corpora(draw, max_n=5, max_k=3, max_words=8, allow_none=True):
    """(hyps, refs): N segments, K streams; every segment keeps at least one reference."""
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(1, max_k))
    vocab = draw(st.lists(WORD, min_size=1, max_size=8))
    sent = sentence(vocab, max_words)
    free = st.text(ANY_CHAR, max_size=12)
    cell = st.one_of(sent, sent, sent, free, st.just(""))
    refs = [[draw(cell) for _ in range(n)] for _ in range(k)]
    for i in range(n):
        for j in range(k):
            r = draw(st.integers(0, 19))
            if allow_none and k > 1 and r < 3:
                refs[j][i] = None
            elif r == 3 and j > 0:
                refs[j][i] = refs[0][i]  # duplicated reference
        if all(refs[j][i] is None for j in range(k)):
            refs[draw(st.integers(0, k - 1))][i] = draw(sent)
    hyps = []
    for i in range(n):
        mode = draw(st.integers(0, 9))
        present = [refs[j][i] for j in range(k) if refs[j][i] is not None]
        if mode == 0:
            hyps.append(draw(st.sampled_from(present)))  # exact copy of a reference
        elif mode == 1:
            h = draw(st.sampled_from(present))
            hyps.append(draw(st.sampled_from([h.upper(), h.lower(), h.swapcase(), h + " " + h,
                                              h[: len(h) // 2], " ".join(h.split()[::-1])])))
        elif mode == 2:
            hyps.append(draw(st.one_of(free, st.just(""))))
        else:
            hyps.append(draw(sent))
    if n > 1 and draw(st.integers(0, 4)) == 0:  # duplicated segment
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        hyps[b] = hyps[a]
        for j in range(k):
            refs[j][b] = refs[j][a]
    return hyps, refs


# ---------------------------------------------------------------------------------------------
# options
SMOOTH_VALUES = st.sampled_from([None, 0.0, 0.01, 0.1, 0.5, 1.0, 2.0, 1e-9])
BLEU_OPTS = st.fixed_dictionaries({
    "tokenize": st.sampled_from(["none", "13a", "intl", "char", "zh"]),
    "lowercase": st.booleans(),
    "smooth_method": st.sampled_from(["none", "floor", "add-k", "exp"]),
    "smooth_value": SMOOTH_VALUES,
    "effective_order": st.booleans(),
    "max_ngram_order": st.integers(1, 4),
})
CHRF_OPTS = st.fixed_dictionaries({
    "char_order": st.integers(1, 6), "word_order": st.integers(0, 2),
    "beta": st.integers(1, 3), "lowercase": st.booleans(),
    "whitespace": st.booleans(), "eps_smoothing": st.booleans(),
})
TER_OPTS = st.fixed_dictionaries({
    "normalized": st.booleans(), "no_punct": st.booleans(),
    "asian_support": st.booleans(), "case_sensitive": st.booleans(),
})
OPTS = {"bleu": BLEU_OPTS, "chrf": CHRF_OPTS, "ter": TER_OPTS}
CLASSES = {"bleu": ("BLEU",), "chrf": ("CHRF",), "ter": ("TER",)}


def _pair(metric, opts):
    name = CLASSES[metric][0]
    return getattr(sacrebleu, name)(**opts), getattr(mtscore, name)(**opts)


# ---------------------------------------------------------------------------------------------
# the comparison (shared by the fuzz tests and the corpus replay)
def check_case(metric, opts, hyps, refs):
    """Assert mtscore == sacrebleu on one corpus; raises AssertionError naming what differs."""
    a, b = _pair(metric, opts)
    exp_stats = a._extract_corpus_statistics(hyps, refs)
    stats = b.corpus_stats(hyps, refs)
    if metric == "ter":
        exp = np.array(exp_stats, dtype=np.float64).reshape(-1, 2)
        assert stats.shape == exp.shape, (stats.shape, exp.shape)
        assert stats[:, 0].tolist() == exp[:, 0].tolist(), "TER edits differ"
        assert stats[:, 1].tolist() == exp[:, 1].tolist(), "TER reference lengths differ"
    else:
        exp = np.array(exp_stats, dtype=np.int64)
        np.testing.assert_array_equal(stats, exp.reshape(stats.shape), err_msg="stats differ")

    a, b = _pair(metric, opts)
    sa, sb = a.corpus_score(hyps, refs), b.corpus_score(hyps, refs)
    assert sb.score == sa.score, ("corpus score", sb.score, sa.score)
    if metric == "bleu":
        assert (list(sb.counts), list(sb.totals), sb.sys_len, sb.ref_len) == \
            (list(sa.counts), list(sa.totals), sa.sys_len, sa.ref_len)
        assert sb.bp == sa.bp
        assert list(sb.precisions) == list(sa.precisions)
    assert str(b.get_signature()) == str(a.get_signature())

    if metric == "ter":
        from_stats = [b.compute_score_from_stats(row).score for row in stats]
    else:
        from_stats = b.sentence_scores_from_stats(stats).tolist()
    a, b = _pair(metric, opts)
    for i, h in enumerate(hyps):
        seg_refs = [r[i] for r in refs if r[i] is not None]
        want = a.sentence_score(h, seg_refs).score
        got = b.sentence_score(h, seg_refs).score
        assert got == want, ("sentence_score", i, got, want)
        assert from_stats[i] == want, ("sentence score from stats", i, from_stats[i], want)


_RECORD = os.environ.get("MTSCORE_FUZZ_RECORD")


def _record(kind, metric, opts, hyps, refs):
    if _RECORD:
        with open(_RECORD, "a", encoding="utf-8") as f:
            f.write(json.dumps({"kind": kind, "metric": metric, "opts": opts, "hyps": hyps,
                                "refs": refs}, ensure_ascii=True) + "\n")


# ---------------------------------------------------------------------------------------------
# fuzz tests
def test_ci_budget():
    """The ci profile runs at least CI_MIN_DRAWS differential draws (explicit max_examples)."""
    assert sum(BUDGET.values()) >= CI_MIN_DRAWS, BUDGET


@_fuzz_settings("bleu")
@given(corpora(), BLEU_OPTS)
def test_fuzz_bleu(corpus, opts):
    _record("diff", "bleu", opts, *corpus)
    check_case("bleu", opts, *corpus)


@_fuzz_settings("chrf")
@given(corpora(), CHRF_OPTS)
def test_fuzz_chrf(corpus, opts):
    _record("diff", "chrf", opts, *corpus)
    check_case("chrf", opts, *corpus)


@_fuzz_settings("ter")
@given(corpora(max_n=4, max_words=7), TER_OPTS)
def test_fuzz_ter(corpus, opts):
    _record("diff", "ter", opts, *corpus)
    check_case("ter", opts, *corpus)


# several configurations of one metric in one call of mtscore.score (P13 "Trust II")
@st.composite
def configurations(draw):
    """A metric and 2-4 option dicts for it (equal ones possible: then score() must refuse)."""
    metric = draw(st.sampled_from(["bleu", "chrf", "ter"]))
    return metric, draw(st.lists(OPTS[metric], min_size=2, max_size=4))


def check_configurations(metric, configs, hyps, refs):
    """``mtscore.score`` with every configuration at once: one key per configuration, each
    corpus score, signature and sentence score equal to sacrebleu's for that configuration."""
    name = CLASSES[metric][0]
    objs = [getattr(mtscore, name)(**opts) for opts in configs]
    distinct = {json.dumps(o, sort_keys=True) for o in configs}
    if len(distinct) < len(configs):
        with pytest.raises(ValueError, match="same configuration"):
            mtscore.score(hyps, refs, metrics=objs)
        return
    r = mtscore.score(hyps, refs, metrics=objs)
    assert len(r.corpus) == len(configs), list(r.corpus)
    key_of = {id(m): k for k, m in r.metrics.items()}
    assert sorted(key_of) == sorted(id(m) for m in objs), "a configuration is missing"
    assert r.segments.num_columns == 1 + len(configs)
    for opts, obj in zip(configs, objs):
        key = key_of[id(obj)]
        theirs = getattr(sacrebleu, name)(**opts)
        assert r.corpus[key].score == theirs.corpus_score(hyps, refs).score, (key, opts)
        assert r.signatures[key] == str(theirs.get_signature()), (key, opts)
        theirs = getattr(sacrebleu, name)(**opts)
        for i, h in enumerate(hyps):
            want = theirs.sentence_score(h, [x[i] for x in refs if x[i] is not None]).score
            assert r.sentence_scores[key][i] == want, (key, opts, i)
    first = {}
    for k in r.metrics:  # the first of a name keeps the plain name
        base = k.split("|")[0]
        first.setdefault(base, k)
        assert first[base] == base


@_fuzz_settings("multi")
@given(corpora(max_n=4, max_words=6), configurations())
def test_fuzz_score_several_configurations(corpus, configs):
    check_configurations(configs[0], configs[1], *corpus)


# malformed input: one thing broken per draw
BAD_VALUES = st.sampled_from([None, 1, 1.5, b"abc", ["a"], ("a",), float("nan"), True])


@st.composite
def rejected_case(draw):
    metric = draw(st.sampled_from(["bleu", "chrf", "ter"]))
    opts = dict(draw(OPTS[metric]))
    hyps, refs = draw(corpora(max_n=3, max_words=4))
    what = draw(st.sampled_from(["hyp", "ref", "hyps", "opt"]))
    if what == "hyp":
        hyps[draw(st.integers(0, len(hyps) - 1))] = draw(BAD_VALUES)
    elif what == "ref":
        # not None / NaN: a missing reference in mtscore (pandas), see the module docstring (7)
        refs[draw(st.integers(0, len(refs) - 1))][draw(st.integers(0, len(hyps) - 1))] = \
            draw(BAD_VALUES.filter(lambda v: v is not None and v == v))
    elif what == "hyps":
        # not {"a": 1}, a set, a generator: sacrebleu wants a Sequence, mtscore iterates any
        # iterable (a dict's keys, a set in hash order) -- reported, see the module docstring (6)
        hyps = draw(st.sampled_from([None, 3, 2.5]))
    else:
        if metric == "bleu":
            opts[draw(st.sampled_from(["tokenize", "smooth_method"]))] = draw(
                st.sampled_from(["bogus", "", "13A", "EXP"]))
        elif metric == "chrf":
            opts["char_order"] = draw(st.sampled_from([None, "6"]))
        else:
            return draw(rejected_case())
    return metric, opts, hyps, refs


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:
        return None, e


@_fuzz_settings("errors")
@given(rejected_case())
def test_rejected_inputs_raise_in_both(case):
    metric, opts, hyps, refs = case
    name = CLASSES[metric][0]
    sa, ea = _outcome(lambda: getattr(sacrebleu, name)(**opts).corpus_score(hyps, refs).score)
    sb, eb = _outcome(lambda: getattr(mtscore, name)(**opts).corpus_score(hyps, refs).score)
    if ea is None:  # sacrebleu accepted it (e.g. a tuple element): then both must agree
        if isinstance(eb, TypeError) and "element" in str(eb):
            return  # sacrebleu type-checks only element 0; see the module docstring (8)
        assert eb is None, f"mtscore raised {eb!r} where sacrebleu gave {sa}"
        assert sb == sa
        return
    assert eb is not None, f"sacrebleu raised {ea!r} but mtscore returned {sb}"
    assert isinstance(eb, (type(ea), TypeError, ValueError)), (ea, eb)
    assert str(eb), f"mtscore raised {type(eb).__name__} without a message"


@st.composite
def corpora_with_unreferenced_segment(draw):
    hyps, refs = draw(corpora(max_n=4, max_words=5))
    i = draw(st.integers(0, len(hyps) - 1))
    for r in refs:
        r[i] = None
    return hyps, refs


@pytest.mark.parametrize("metric", [
    "bleu", "chrf", "ter",
])
@settings(_fuzz_settings("noref"),  # no 'explain' phase: it costs ~2 s per expected failure
          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
@given(corpus=corpora_with_unreferenced_segment())
def test_segment_without_any_reference_raises(metric, corpus):
    hyps, refs = corpus
    name = CLASSES[metric][0]
    try:
        theirs = getattr(sacrebleu, name)().corpus_score(hyps, refs)
    except Exception:  # TypeError / IndexError / ZeroDivisionError from deep inside
        pass
    else:  # sacrebleu's BLEU may instead count a reference length of -1 per such segment
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = mtscore.BLEU(missing_refs="skip").corpus_score(hyps, refs)
        unreferenced = sum(all(st[i] is None for st in refs) for i in range(len(hyps)))
        assert name == "BLEU"
        assert theirs.ref_len == ours.ref_len - unreferenced
    with pytest.raises(ValueError, match="no reference"):
        getattr(mtscore, name)().corpus_score(hyps, refs)
    with pytest.raises(ValueError, match="no reference"):
        getattr(mtscore, name)().corpus_stats(hyps, refs)


@pytest.mark.parametrize("name", ["BLEU", "CHRF", "TER"])
def test_by_design_rejections(name):
    """Where sacrebleu silently computes something, mtscore raises (module docstring, 1, 2, 4)."""
    m = getattr(mtscore, name)
    sacrebleu_accepts = [
        (["a", "b"], [["a"]], ValueError),                    # fewer reference lines
        (["a"], [["a", "b"]], ValueError),                    # more reference lines
        (["a", "b"], [["a", "x", "y"], ["b", "z", "w"]], ValueError),  # N x K instead of K x N
        (["a"], ["a"], TypeError),                             # flat list of strings
        (["a b"], "a b", TypeError),                           # refs as one string
        ("a b", [["a b"]], TypeError),                          # hyps as one string
    ]
    for hyps, refs in (({"a": 1}, [["a"]]), (["a"], [{"a"}])):  # dict / set: not the order
        with pytest.raises(TypeError):
            getattr(sacrebleu, name)().corpus_score(hyps, refs)
        with pytest.raises(TypeError, match="order"):
            m().corpus_score(hyps, refs)
    with pytest.raises(IndexError):
        getattr(sacrebleu, name)().corpus_score([], [[]])
    with pytest.raises(ValueError, match="empty corpus"):
        m().corpus_score([], [[]])
    for hyps, refs, exc in sacrebleu_accepts:
        getattr(sacrebleu, name)().corpus_score(hyps, refs)  # no error there
        with pytest.raises(exc):
            m().corpus_score(hyps, refs)
    bad_opts = {"BLEU": [{"max_ngram_order": 0}],
                "CHRF": [{"char_order": 0, "word_order": 0}, {"char_order": -1}, {"word_order": -1}],
                "TER": []}[name]
    for opts in bad_opts:
        getattr(sacrebleu, name)(**opts).corpus_score(["a b"], [["a b"]])
        with pytest.raises(ValueError, match="order"):
            m(**opts).corpus_score(["a b"], [["a b"]])


# ---------------------------------------------------------------------------------------------
# the saved corpus
def _load_corpus():
    if not CORPUS_FILE.exists():
        return []
    with open(CORPUS_FILE, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


_CASES = _load_corpus()


@pytest.mark.parametrize("case", _CASES, ids=[f"{i}-{c['metric']}-{c['kind']}" for i, c in enumerate(_CASES)])
def test_replay_fuzz_corpus(case):
    hyps, refs, metric, opts = case["hyps"], case["refs"], case["metric"], case["opts"]
    if case["kind"] == "noref":
        name = CLASSES[metric][0]
        with pytest.raises((TypeError, IndexError, ValueError, ZeroDivisionError)):
            getattr(sacrebleu, name)(**opts).corpus_score(hyps, refs)
        if metric == "ter":
            with pytest.raises(ValueError, match="has no reference"):
                mtscore.TER(**opts).corpus_score(hyps, refs)
        return  # BLEU/chrF: the known no-reference bug (test_segment_without_any_reference_raises)
    check_case(metric, opts, hyps, refs)


def test_fuzz_corpus_is_small_and_present():
    assert CORPUS_FILE.exists()
    assert CORPUS_FILE.stat().st_size < 200_000
    assert len(_CASES) >= 200


def _write_corpus(recorded, out, per_metric=90, max_chars=500, seed=0):
    """Pick a diverse sample from a recorded fuzz run (MTSCORE_FUZZ_RECORD=file) plus the
    hand-kept cases already in ``out`` marked ``"keep": true`` (shrunk failures)."""
    with open(recorded, encoding="utf-8") as f:
        rows = [json.loads(x) for x in f]
    keep = [c for c in _load_corpus() if c.get("keep")]
    rng = random.Random(seed)
    picked = []
    for metric in ("bleu", "chrf", "ter"):
        mine = [r for r in rows if r["metric"] == metric and r["kind"] == "diff"
                and len(json.dumps(r)) < max_chars]
        # prefer variety: rank by the number of distinct characters, then shuffle within
        mine.sort(key=lambda r: -len(set("".join(r["hyps"]) + "".join(
            x for s in r["refs"] for x in s if x is not None))))
        pool = mine[: per_metric * 3]
        rng.shuffle(pool)
        picked.extend(pool[:per_metric])
    with open(out, "w", encoding="utf-8") as f:
        for r in keep + picked:
            f.write(json.dumps(r, ensure_ascii=True) + "\n")


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) == 4 and sys.argv[1] == "--write-corpus":
        _write_corpus(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: test_fuzz_differential.py --write-corpus RECORDED.jsonl OUT.jsonl")
