"""Plain-Python twin of ``mtscore.kernels._ter_normalize`` (used by tests only): the kernel's
functions with the same names and signatures (``TercomVocab``, ``tercom_normalize_texts``,
``tercom_tokenize``) at the end, built on sacrebleu 2.6.0's ``tokenizers/tokenizer_ter.py``
followed step by step, written as explicit scans so that each step maps onto one loop of the
compiled kernel:

* :func:`tercom_normalize` - the Tercom normaliser (string in, normalised string out);
* :func:`tercom_steps` - its steps proper on rstripped / lowercased text (also used by the
  twin of ``_ter_fused``);
* :func:`tercom_normalize_reference` - what sacrebleu's TER does to a reference (twice).
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt


# ---------------------------------------------------------------------------------------------
# normaliser
# ---------------------------------------------------------------------------------------------
def _in_western_punct(c: str) -> bool:
    # the 13a class ``[{-~[-` -&(-+:-@/]``
    o = ord(c)
    return (0x7B <= o <= 0x7E or 0x5B <= o <= 0x60 or 0x20 <= o <= 0x26
            or 0x28 <= o <= 0x2B or 0x3A <= o <= 0x40 or o == 0x2F)


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def _in_cjk(c: str) -> bool:
    # union of the four character-splitting classes of ``_normalize_asian``
    o = ord(c)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x31C0 <= o <= 0x31EF
            or 0x2E80 <= o <= 0x2EFF or 0x3300 <= o <= 0x33FF or 0xF900 <= o <= 0xFAFF
            or 0xFE30 <= o <= 0xFE4F or 0x3200 <= o <= 0x3F22)


def _in_asian_punct(c: str) -> bool:
    o = ord(c)
    return (o in (0x3001, 0x3002, 0x30FB) or 0x3008 <= o <= 0x3011 or 0x3014 <= o <= 0x301F
            or 0xFF61 <= o <= 0xFF65)


def _in_fullwidth_punct(c: str) -> bool:
    return ord(c) in (0xFF0E, 0xFF0C, 0xFF1F, 0xFF1A, 0xFF1B, 0xFF01, 0xFF02, 0xFF08, 0xFF09)


def _replace_literal(s: str, old: str, new: str) -> str:
    # leftmost non-overlapping scan (what re.sub does for a literal pattern)
    out, i, k = [], 0, len(old)
    while i < len(s):
        if s.startswith(old, i):
            out.append(new)
            i += k
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _pair_scan(s: str, first, second, template: str) -> str:
    # re.sub(r"(A)(B)", template) for single-character classes A, B
    out, i, n = [], 0, len(s)
    while i < n:
        if i + 1 < n and first(s[i]) and second(s[i + 1]):
            a, b = s[i], s[i + 1]
            out.append(_fill(template, a, b))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _fill(template: str, a: str, b: str) -> str:
    return {"A B ": f"{a} {b} ", " A B": f" {a} {b}"}[template]


def normalize_general_and_western(s: str) -> str:
    s = _replace_literal(s, "\n-", "")
    s = _replace_literal(s, "\n", " ")
    s = _replace_literal(s, "&quot;", '"')
    s = _replace_literal(s, "&amp;", "&")
    s = _replace_literal(s, "&lt;", "<")
    s = _replace_literal(s, "&gt;", ">")
    s = f" {s} "
    s = "".join(f" {c} " if _in_western_punct(c) else c for c in s)
    s = _replace_literal(s, "'s ", " 's ")
    # r"'s$" cannot match: the string ends with the space added above and holds no "\n".
    s = _pair_scan(s, lambda c: not _is_digit(c), lambda c: c in ".,", "A B ")
    s = _pair_scan(s, lambda c: c in ".,", lambda c: not _is_digit(c), " A B")
    s = _pair_scan(s, _is_digit, lambda c: c == "-", "A B ")
    return s


def normalize_asian(s: str) -> str:
    # The kana rules of sacrebleu are anchored at both ends (``^`` inside the alternatives) and
    # this function only runs after the western step, which starts the string with a space, so
    # they never fire. The splitting classes only add spaces around single characters, so one
    # pass over their union gives the same tokens.
    return "".join(f" {c} " if (_in_cjk(c) or _in_asian_punct(c) or _in_fullwidth_punct(c))
                   else c for c in s)


def tercom_normalize(sent: str, normalized: bool = False, no_punct: bool = False,
                     asian_support: bool = False, case_sensitive: bool = False) -> str:
    """sacrebleu's ``TER._preprocess_segment``: ``TercomTokenizer(sent.rstrip())``."""
    sent = sent.rstrip()
    if not sent:
        return ""
    if not case_sensitive:
        sent = sent.lower()
    return tercom_steps(sent, normalized, no_punct, asian_support)


def tercom_steps(sent: str, normalized: bool, no_punct: bool, asian_support: bool) -> str:
    """The TercomTokenizer steps proper (input already rstripped and lowercased)."""
    if normalized and sent:
        sent = normalize_general_and_western(sent)
        if asian_support:
            sent = normalize_asian(sent)
    if no_punct:
        sent = "".join(c for c in sent if c not in '.,?:;!"()')
        if asian_support:
            sent = "".join(c for c in sent
                           if not (_in_asian_punct(c) or _in_fullwidth_punct(c)))
    return " ".join(sent.split())


def tercom_normalize_reference(sent: str, normalized: bool = False, no_punct: bool = False,
                               asian_support: bool = False, case_sensitive: bool = False) -> str:
    """What sacrebleu's TER does to a REFERENCE: ``_cache_references`` preprocesses it and
    ``_extract_reference_info`` preprocesses the result again (not idempotent when normalized)."""
    once = tercom_normalize(sent, normalized, no_punct, asian_support, case_sensitive)
    return tercom_normalize(once, normalized, no_punct, asian_support, case_sensitive)


# ---------------------------------------------------------------------------------------------
# the kernel's interface
# ---------------------------------------------------------------------------------------------
class TercomVocab:
    """Exact interning of token strings to dense ids, in first-seen order."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._tokens: list[str] = []

    def __len__(self) -> int:
        return len(self._tokens)

    def token(self, i: int) -> str:
        if i < 0 or i >= len(self._tokens):
            raise IndexError(f"TercomVocab.token: id {i} out of range (size {len(self._tokens)})")
        return self._tokens[i]

    def intern(self, tok: str) -> int:
        i = self._ids.get(tok)
        if i is None:
            i = self._ids[tok] = len(self._tokens)
            self._tokens.append(tok)
        return i


def _check_text(s: object) -> str:
    if not isinstance(s, str):
        raise TypeError(f"Tercom normaliser: got {type(s).__name__}, expected str")
    return s


def _prepared(s: object, rstrip: bool, lowercase: bool) -> str:
    s = _check_text(s)
    if rstrip:
        s = s.rstrip()
    return s.lower() if lowercase else s


def tercom_normalize_texts(texts: list[str], normalized: bool = False, no_punct: bool = False,
                           asian_support: bool = False, rstrip: bool = False,
                           lowercase: bool = False) -> list[str]:
    """The Tercom steps on each string (``rstrip()``-ed / ``lower()``-ed first on request),
    tokens joined by a space."""
    return [tercom_steps(_prepared(t, rstrip, lowercase), normalized, no_punct, asian_support)
            for t in texts]


def tercom_tokenize(texts: list[str], vocab: TercomVocab, normalized: bool = False,
                    no_punct: bool = False, asian_support: bool = False, rstrip: bool = False,
                    lowercase: bool = False) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """``(ids int32, offsets int64 (N + 1,))`` of the normalised tokens, interned in ``vocab``."""
    ids: list[int] = []
    offsets = [0]
    for t in tercom_normalize_texts(texts, normalized, no_punct, asian_support, rstrip, lowercase):
        ids += [vocab.intern(tok) for tok in t.split()]
        offsets.append(len(ids))
    return np.array(ids, dtype=np.int32), np.array(offsets, dtype=np.int64)
