"""Plain-Python twin of ``mtscore/kernels/_text.pyx`` (tests only): the same names and
signatures (``encode``, ``tokenize_strings``, ``Vocab`` (re-exported from the twin of
``_text_vocab``, as the kernel does), ``set_intl_table``, the ``MODE_*`` numbers), built from
per-line tokenizers (``tok_13a``, ``tok_intl``, ``tok_zh``, ...).

Written from sacrebleu 2.6.0's tokenizer rules (its ``tokenizers/`` regexes) as explicit left-to-right scans
over whole lines (the kernel works word by word with a word cache), so a disagreement points at
the kernel and a disagreement with sacrebleu points at the rules.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import numpy.typing as npt

from .text_vocab import Vocab  # text.Vocab as well, as the kernel re-exports _text_vocab.Vocab

MODE_NONE = 0
MODE_13A = 1
MODE_INTL = 2
MODE_ZH = 3
MODE_CHAR = 4
MODE_CHARS = 5
MODE_CHARS_WS = 6
MODE_CHRF_WORDS = 7

ASCII_PUNCT = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


def _is_13a_punct(c: str) -> bool:
    o = ord(c)
    return (0x20 <= o <= 0x26 or 0x28 <= o <= 0x2B or o == 0x2F or 0x3A <= o <= 0x40
            or 0x5B <= o <= 0x60 or 0x7B <= o <= 0x7E)


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def _pair_scan(s: str, cond: Callable[[str, str], bool], repl: Callable[[str, str], str]) -> str:
    """re.sub for a two-character pattern: left to right, a match consumes both characters."""
    out = []
    i = 0
    while i < len(s):
        if i + 1 < len(s) and cond(s[i], s[i + 1]):
            out.append(repl(s[i], s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def regexp_passes(line: str) -> str:
    line = "".join(f" {c} " if _is_13a_punct(c) else c for c in line)
    line = _pair_scan(line, lambda a, b: not _is_digit(a) and b in ".,", lambda a, b: f"{a} {b} ")
    line = _pair_scan(line, lambda a, b: a in ".," and not _is_digit(b), lambda a, b: f" {a} {b}")
    line = _pair_scan(line, lambda a, b: _is_digit(a) and b == "-", lambda a, b: f"{a} {b} ")
    return " ".join(line.split())


def tok_13a(line: str) -> str:
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return regexp_passes(f" {line} ")


def tok_intl(line: str, P: Callable[[str], bool], S: Callable[[str], bool],
             N: Callable[[str], bool]) -> str:
    line = _pair_scan(line, lambda a, b: not N(a) and P(b), lambda a, b: f"{a} {b} ")
    line = _pair_scan(line, lambda a, b: P(a) and not N(b), lambda a, b: f" {a} {b}")
    line = "".join(f" {c} " if S(c) else c for c in line)
    return " ".join(line.split())


ZH_RANGES = [(0x2001, 0x2A6D), (0x2E80, 0x2FDF), (0x2FF0, 0x303F), (0x3100, 0x312F),
             (0x31A0, 0x31EF), (0x3200, 0x4DB5), (0x4E00, 0x9FBB), (0xF900, 0xFA2D),
             (0xFA30, 0xFA6A), (0xFA70, 0xFAD9), (0xFE10, 0xFE1F), (0xFE30, 0xFE4F),
             (0xFF00, 0xFFEF)]


def is_zh_char(c: str) -> bool:
    o = ord(c)
    return any(a <= o <= b for a, b in ZH_RANGES)


def tok_zh(line: str) -> str:
    line = "".join(f" {c} " if is_zh_char(c) else c for c in line.strip())
    return regexp_passes(line)


def tok_char(line: str) -> str:
    return " ".join(c for c in line if not c.isspace())


def chrf_words(sent: str) -> list[str]:
    out = []
    for w in sent.split():
        if len(w) == 1:
            out.append(w)
        elif w[-1] in ASCII_PUNCT:
            out += [w[:-1], w[-1]]
        elif w[0] in ASCII_PUNCT:
            out += [w[0], w[1:]]
        else:
            out.append(w)
    return out


def chrf_chars(sent: str, whitespace: bool) -> str:
    return sent if whitespace else "".join(sent.split())


# ---- the kernel's interface ------------------------------------------------------------------
_intl_table: npt.NDArray[np.uint8] | None = None


def set_intl_table(table: npt.NDArray[np.uint8]) -> None:
    """Install the 0x110000-entry class table for MODE_INTL (bit 1 P, 2 S, 4 N)."""
    global _intl_table
    table = np.asarray(table)
    if table.shape[0] != 0x110000:
        raise ValueError("intl table must have 0x110000 entries")
    _intl_table = table


def has_intl_table() -> bool:
    return _intl_table is not None


def _intl_class(bit: int) -> Callable[[str], bool]:
    table = _intl_table
    assert table is not None
    return lambda c: bool(table[ord(c)] & bit)


def _tokens(line: str, mode: int) -> list[str]:
    """The tokens of one line (characters for the chrF character modes)."""
    if mode == MODE_NONE:
        return line.split()
    if mode == MODE_13A:
        return tok_13a(line).split()
    if mode == MODE_INTL:
        return tok_intl(line, _intl_class(1), _intl_class(2), _intl_class(4)).split()
    if mode == MODE_ZH:
        return tok_zh(line).split()
    if mode == MODE_CHAR:
        return tok_char(line).split()
    if mode == MODE_CHARS:
        return list(chrf_chars(line, False))
    if mode == MODE_CHARS_WS:
        return list(chrf_chars(line, True))
    if mode == MODE_CHRF_WORDS:
        return chrf_words(line)
    raise ValueError(f"unknown mode {mode}")


UNSEEN_ID = 0x7FFFFFFF


def encode(texts: list[str], mode: int, vocab: Vocab | None = None, rstrip: bool = False,
           lookup: bool = False) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """``(values int32, offsets int64 (N + 1,))``: token ids, or code points for MODE_CHARS /
    MODE_CHARS_WS; ``rstrip`` removes trailing whitespace first; ``lookup``: a token ``vocab``
    lacks gets ``UNSEEN_ID`` and ``vocab`` is not changed."""
    if mode == MODE_INTL and _intl_table is None:
        raise RuntimeError("intl class table not installed")
    if vocab is None and mode not in (MODE_CHARS, MODE_CHARS_WS):
        raise ValueError("this mode needs a Vocab")
    values: list[int] = []
    offsets = [0]
    for i, t in enumerate(texts):
        if type(t) is not str:
            raise TypeError(f"segment {i} is {type(t).__name__}, expected str")
        toks = _tokens(t.rstrip() if rstrip else t, mode)
        if mode in (MODE_CHARS, MODE_CHARS_WS):
            values += [ord(c) for c in toks]
        else:
            assert vocab is not None
            if lookup:
                values += [i if i >= 0 else UNSEEN_ID for i in map(vocab.lookup, toks)]
            else:
                values += [vocab.intern(x) for x in toks]
        offsets.append(len(values))
    return np.array(values, dtype=np.int32), np.array(offsets, dtype=np.int64)


def tokenize_strings(texts: list[str], mode: int, rstrip: bool = False) -> list[str]:
    """The tokenized strings (tokens joined by one space; characters joined for the chrF
    character modes)."""
    v = Vocab()
    values, offsets = encode(texts, mode, v, rstrip)
    sep = "" if mode in (MODE_CHARS, MODE_CHARS_WS) else " "
    out = []
    for i in range(len(texts)):
        seg = values[offsets[i]:offsets[i + 1]]
        out.append(sep.join(chr(x) if not sep else v.token(int(x)) for x in seg))
    return out
