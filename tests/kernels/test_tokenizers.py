"""Every compiled tokenizer equals sacrebleu's on fixed tricky cases and on generated adversarial
Unicode (kernel vs plain-Python twin: tests/kernels/test_kernel_twins.py)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtscore.engine.tokenizers import Tokenizer
from mtscore.kernels import _text

sacre_tok = pytest.importorskip("sacrebleu.tokenizers.tokenizer_13a")
from sacrebleu.metrics.chrf import CHRF as SacreCHRF  # noqa: E402
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a  # noqa: E402
from sacrebleu.tokenizers.tokenizer_char import TokenizerChar  # noqa: E402
from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International  # noqa: E402
from sacrebleu.tokenizers.tokenizer_none import NoneTokenizer  # noqa: E402
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh  # noqa: E402

SACRE = {"13a": Tokenizer13a(), "intl": TokenizerV14International(), "zh": TokenizerZh(),
         "char": TokenizerChar(), "none": NoneTokenizer()}
OURS = {name: Tokenizer(name) for name in SACRE}
_SACRE_CHRF = SacreCHRF()

FIXED = [
    "Hello, world.", "3.14 and 1,000", "a-b 1-2 x-1", "it's $5 (ok)!", "end 2020.",
    "a.. b,,c ...", "Mr.Smith", "1.5.2020", "«Bonjour» – dit‐il…", "x<skipped>y",
    "&quot;q&quot; &amp; &lt;b&gt; &apos;", "&amp;lt;", "a-\nb", "a -\n b\nc", "<skip<skipped>ped>",
    "It’s €5 → done 美众院公布对特", "  lead and trail  ", "", " ", "\u00a0nbsp\u00a0", "\u2000\u2001x\u200a",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠀀𠀁 😀.", "٣.٤ ١,٢", "9-", "-9-", ".,.,", "1..2", "a.,b", "x\u3000y", "\u200bzw\u200bsp",
    "ΟΔΟΣ İstanbul", "tab\there", "cr\rhere", "\x1c\x1d\x1e\x1fsep", "a\u0085b", "e\u0301", "'s 's'",
    "$$$", "((()))", "1-2-3", "1.-2", "--a--", "www.example.com/path?q=1&r=2", "ab\ud800cd",
    "10, 541", "a 10, 541 b", "end 2020. next", "x 5. y", "中 10, 5 文", "7, 8.", "(1,) 2.",
    # leading whitespace before punctuation: intl keeps it (a non-digit before "?"), zh strips it
    " ?0", "\u3000?0", " ?0 ?0 ", " $0", "\t(a) b", " 中?0",
    # 13a fast path (one mark in front / at the end of a plain body) and its near misses
    "(abc abc) abc, abc. (abc) \"abc\" abc: abc? $5 5, 5. a5, a5. (5. (5, ((a a)) (a-b) a-",
    "(.  .) ,a .a a., a,. () (a (, a' 'a' 'a (' ) ( x.5 x,5 5.x 5,x é, é. (é) «a», a», a)é",
    "a.\u00e9 a.5 (a.b) [a] {a} <a> a; ;a a/ /a a& &a @a a@ a^ ^a a` `a a| |a a~ ~a a_ _a",
]

ADVERSARIAL = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("abcAB 09.,-&;<>'\"()$€«»…—’“”\n\t\r\u00a0\u2000\u2009\u200a\u202f\u3000"
                             "\u3001\u3002中文日本語한국어😀𝔘\U00020000\U0002A6D6\u20001\u2E80\u303F\ufe30\uff01\u0301")),
        st.characters(),
    ),
    max_size=60,
).flatmap(lambda s: st.sampled_from([s, s + ".", "&amp;lt;" + s, s + "-\n" + s,
                                      s.replace("a", "<skipped>"), "1" + s + "9", s + " .",
                                      s + " 10, " + s, s + "7. " + s, "\u4e2d3, " + s]))


def sacre_tokens(name, line):
    line = line.rstrip()
    return " ".join(SACRE[name](line).split())


@pytest.mark.parametrize("name", sorted(SACRE))
def test_fixed_cases(name):
    ours = OURS[name].tokenize(FIXED)
    for s, o in zip(FIXED, ours):
        assert o == sacre_tokens(name, s), (name, s)


@pytest.mark.parametrize("name", sorted(SACRE))
@given(lines=st.lists(ADVERSARIAL, min_size=1, max_size=8))
@settings(max_examples=300)
def test_adversarial_unicode(name, lines):
    ours = OURS[name].tokenize(lines)
    for s, o in zip(lines, ours):
        assert o == sacre_tokens(name, s), (name, s)


def test_zh_ranges_every_code_point():
    """The kernel's effective zh ranges equal sacrebleu's malformed range table exactly (the
    twin's table against sacrebleu's: tests/kernels/test_kernel_twins.py)."""
    line = "".join(chr(cp) for cp in range(0x2000, 0x10000) if not chr(cp).isspace())
    assert OURS["zh"].tokenize([line])[0] == sacre_tokens("zh", line)


@given(lines=st.lists(ADVERSARIAL, min_size=1, max_size=8), ws=st.booleans())
@settings(max_examples=200)
def test_chrf_chars_and_words(lines, ws):
    chars = _text.tokenize_strings(lines, _text.MODE_CHARS_WS if ws else _text.MODE_CHARS)
    words = _text.tokenize_strings(lines, _text.MODE_CHRF_WORDS)
    for s, c, w in zip(lines, chars, words):
        assert c == (s if ws else "".join(s.split()))
        assert w == " ".join(_SACRE_CHRF._remove_punctuation(s))


def test_unknown_tokenizer_error():
    with pytest.raises(ValueError, match="unknown tokenizer 'bogus'"):
        Tokenizer("bogus")


def test_vocab_interning_is_exact():
    v = _text.Vocab()
    toks = ["a", "b", "ab", "a", "𝔘", "\ud800", "", "b"]
    ids = [v.intern(t) for t in toks]
    assert ids[0] == ids[3]
    assert ids[1] == ids[7]
    assert len(set(ids)) == 6
    assert [v.token(i) for i in ids] == toks
    assert v.lookup("zz") == -1
    assert v.lookup("ab") == ids[2]
    assert len(v) == 6


# none / 13a scan whole lines as bit masks, 16 code points per step in 64-code-point blocks:
# long lines put word boundaries, non-ASCII whitespace and punctuation at every block offset
_LONG_PIECES = st.sampled_from(
    ["a", "bc", "Straße", "(x)", "end.", "1,5", "9-", "\u201eq\u201c", "中文", "😀", "&amp;",
     " ", "  ", "\t", "\u00a0", "\u0085", "\u1680", "\u2000", "\u200a", "\u2028", "\u202f",
     "\u205f", "\u3000", "\u167f", "\u180e", "\u200b", "ÿ", "\u00ff\u0100", "\x1c", "\n"])


@pytest.mark.parametrize("name", ["13a", "none", "intl", "zh"])
@given(lines=st.lists(st.lists(_LONG_PIECES, min_size=20, max_size=160).map("".join),
                      min_size=1, max_size=4))
@settings(max_examples=150)
def test_long_lines_across_scan_blocks(name, lines):
    ours = OURS[name].tokenize(lines)
    for s, o in zip(lines, ours):
        assert o == sacre_tokens(name, s), (name, s)


@given(word=st.text(st.characters(exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
                    min_size=1, max_size=40).filter(
                        lambda w: not any(c.isspace() or (ord(c) < 128 and not c.isalnum())
                                          for c in w)))
@settings(max_examples=200)
def test_token_hash_is_one_function_of_the_token(word):
    """A token gets one id however it is reached: as a plain word, split off punctuation by the
    13a fast path, inside a word the word cache tokenizes, and through Vocab.lookup (each path
    hashes it differently in the kernel: from the line buffer with or without reading past the
    token, or from a copy)."""
    v = _text.Vocab()
    vals, _ = _text.encode([f"{word} ({word} {word}. a.{word}.b"], _text.MODE_13A, v, True)
    toks = [v.token(int(i)) for i in vals]
    ids = [int(i) for i, t in zip(vals, toks) if t == word]
    assert len(ids) >= 3, (toks, ids)
    assert len(set(ids)) == 1, (toks, ids)
    assert v.lookup(word) == ids[0]
    assert v.intern(word) == ids[0]
    v0, _ = _text.encode([word], _text.MODE_NONE, v, True)
    assert int(v0[0]) == ids[0]


@given(words=st.lists(st.text(st.sampled_from("abÿéàßQ09\u00b5\u00c0"), min_size=1, max_size=20),
                      min_size=1, max_size=6),
       wide=st.sampled_from(["\u20ac", "\U0001F600"]), mode=st.sampled_from([0, 1]))
@settings(max_examples=300)
def test_token_id_does_not_depend_on_the_string_storage(words, wide, mode):
    """none / 13a read a 1-byte (Latin-1) string's own storage for its words' keys (a token of at
    most 16 code points is its bytes; read as two words unless it ends within 16 bytes of the
    string's end) and widened code points for 2- and 4-byte strings: a token must get the same
    id either way, whichever storage interned it first, at every length around 8 and 16."""
    latin1 = " ".join(words)
    wider = latin1 + " " + wide   # the same words in a 2- or 4-byte string
    for first, then in ((latin1, wider), (wider, latin1)):
        v = _text.Vocab()
        a, _ = _text.encode([first], mode, v, True)
        n = len(v)
        b, _ = _text.encode([then], mode, v, True, True)   # looked up, not added
        k = min(len(a), len(b)) if first is latin1 else len(b)
        assert [int(x) for x in a[:k]] == [int(x) for x in b[:k]], (first, then)
        assert len(v) == n
        for w in words:
            assert v.lookup(w) >= 0, w
