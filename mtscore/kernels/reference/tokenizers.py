"""Plain-Python twins of the tokenizers in ``mtscore/kernels/_text.pyx`` (tests only).

Written from the rules in reference/sacrebleu-behaviour.md §1 as explicit left-to-right scans,
the same algorithm the kernel runs, so a disagreement points at the kernel and a disagreement
with sacrebleu points at the rules.
"""
from __future__ import annotations

from typing import Callable, List

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


def chrf_words(sent: str) -> List[str]:
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
