"""Degraded ("bad reference") quality-control items for a DA campaign (Graham et al. 2017, NLE §4).

A degraded item is an MT output made worse in a known way; a rater who is paying attention
scores it lower than the original (the rater test of Graham et al. 2017, NLE §4). Two generators:

* :func:`replace_phrase` - the later WMT practice (Graham's ``bad-refs.py``): a span of the
  output is *replaced* by an n-gram taken from other text (:func:`ngram_pool`). The span length
  follows :func:`replaced_words`; the span never starts at the first word.
* :func:`delete_phrase` - the Graham et al. 2017, NLE §4 adequacy version: one contiguous
  span is *deleted*; its length follows :func:`deleted_words`.
* :func:`duplicate_words` - the Graham et al. 2017, NLE §4 fluency version: a pair of adjacent words is copied
  elsewhere (not next to the original pair, not at the start or the end).

:func:`degrade` applies either to a list of texts, deterministically for a seed.
Words are whitespace-separated tokens (``str.split()``); the output joins them with one space.
"""
from __future__ import annotations

import random
from collections.abc import Sequence

from ..errors import AnalysisInputError

__all__ = [
    "METHODS",
    "degradable",
    "degrade",
    "degrade_text",
    "delete_phrase",
    "deleted_words",
    "duplicate_words",
    "ngram_pool",
    "replace_phrase",
    "replaced_words",
    "span_bounds",
]

METHODS = ("replace", "delete", "duplicate")
_MIN_WORDS = {"replace": 1, "delete": 2, "duplicate": 4}
MAX_NGRAM = 6  # longest replacement n-gram: spans of more than 5 words get a 6-gram


def replaced_words(n: int) -> int:
    """Words replaced in an output of ``n`` words (WMT ``bad-refs.py``): 1 for n <= 3
    (n = 1: the whole output), 2 for n = 4 and 5, 3 for 6-7, 4 for 8-14, 5 for 15-19, n // 4 from 20."""
    if n < 1:
        raise ValueError(f"an output of {n} words cannot be degraded")
    if n <= 3:
        return 1
    if n <= 5:
        return 2
    if n <= 7:
        return 3
    if n <= 14:
        return 4
    if n <= 19:
        return 5
    return n // 4


def deleted_words(n: int) -> int:
    """Words deleted from an output of ``n`` words (Graham et al. 2017, NLE §4, table): 1 for 2-3, 2 for 4-5,
    3 for 6-8, 4 for 9-15, 5 for 16-20, n // 5 above 20. One-word outputs cannot be degraded."""
    if n < 2:
        raise ValueError(f"an output of {n} word(s) cannot lose a phrase and keep a word")
    for top, k in ((3, 1), (5, 2), (8, 3), (15, 4), (20, 5)):
        if n <= top:
            return k
    return n // 5


def ngram_pool(texts: Sequence[str], max_n: int = MAX_NGRAM) -> dict[int, list[str]]:
    """n -> the distinct n-grams (1 <= n <= ``max_n``) of the interior words of ``texts``
    (the first and last word of each text are skipped, the first n-gram word is lower-cased),
    in order of first appearance. This is the replacement material of :func:`replace_phrase`;
    WMT builds it from the reference translations."""
    seen: dict[int, dict[str, None]] = {k: {} for k in range(1, max_n + 1)}
    for text in texts:
        w = text.split()
        inner = w[1:-1]
        for j in range(len(inner)):
            for k in range(1, max_n + 1):
                if j + k > len(inner):
                    break
                seen[k].setdefault(" ".join([inner[j].lower(), *inner[j + 1:j + k]]), None)
    return {k: list(v) for k, v in seen.items()}


def _pick(pool: dict[int, list[str]], k: int, rng: random.Random) -> str:
    choices = pool.get(k) or []
    if not choices:
        raise AnalysisInputError(f"the replacement pool has no {k}-gram: give more (or longer) texts "
                                 f"to draw bad-reference phrases from (each needs {k + 2} or more words)")
    return choices[rng.randrange(len(choices))]


def replace_phrase(text: str, pool: dict[int, list[str]], rng: random.Random) -> str:
    """``text`` with one span replaced by a random n-gram of ``pool`` (WMT ``bad-refs.py``).

    n = 1: the whole output becomes one random word (title-cased); n = 2: word 2 is replaced;
    n = 3: the middle word; n = 4: words 2-3 by a bigram; n >= 5: :func:`replaced_words` words
    starting at a random position in [1, n - r - 2] (0-based, so the first word always stays),
    replaced by an r-gram, or by a 6-gram when r > 5 (long outputs get shorter)."""
    w = text.split()
    n = len(w)
    if n == 0:
        raise ValueError("an empty output cannot be degraded")
    if n == 1:
        return _pick(pool, 1, rng).title()
    if n <= 4:
        k = 1 if n < 4 else 2
        return " ".join([w[0], _pick(pool, k, rng), *w[1 + k:]])
    r = replaced_words(n)
    start = rng.randrange(1, n - r - 1)
    return " ".join([*w[:start], _pick(pool, min(r, MAX_NGRAM), rng), *w[start + r:]])


def delete_phrase(text: str, rng: random.Random) -> str:
    """``text`` without one contiguous span of :func:`deleted_words` words at a random start
    (Graham et al. 2017, NLE §4; the paper leaves contiguity open, a "phrase" is read as one span)."""
    w = text.split()
    r = deleted_words(len(w))
    start = rng.randrange(0, len(w) - r + 1)
    return " ".join(w[:start] + w[start + r:])


def duplicate_words(text: str, rng: random.Random) -> str:
    """``text`` with a random pair of adjacent words copied into a random gap between two words
    that is not next to the pair itself (Graham et al. 2017, NLE §4 fluency items; "a pair of words" is read as a
    bigram). Needs 4 or more words."""
    w = text.split()
    n = len(w)
    if n < 4:
        raise ValueError(f"an output of {n} words has no gap to copy a word pair into")
    i = rng.randrange(0, n - 1)                        # the pair w[i], w[i + 1]
    gaps = [g for g in range(1, n) if g not in (i, i + 1, i + 2)]  # gap g: before w[g]
    if not gaps:                                       # n = 4 with the middle pair: take another pair
        i = rng.choice([0, n - 2])
        gaps = [g for g in range(1, n) if g not in (i, i + 1, i + 2)]
    g = gaps[rng.randrange(len(gaps))]
    return " ".join(w[:g] + w[i:i + 2] + w[g:])


def degradable(text: str, method: str = "replace") -> bool:
    """Whether ``method`` can degrade ``text`` (replace: 1+ words; delete: 2+; duplicate: 4+)."""
    return len(text.split()) >= _MIN_WORDS[method]


def degrade(texts: Sequence[str], method: str = "replace", seed: int | None = 0,
            pool_texts: Sequence[str] | None = None) -> list[str]:
    """One degraded version of each of ``texts`` (``method`` in :data:`METHODS`), the same
    for the same ``seed`` (Python ``random.Random(seed)``, drawn in input order).

    ``pool_texts``: the text the replacement n-grams come from (WMT: the reference
    translations; default ``texts``). A text ``method`` cannot degrade (:func:`degradable`)
    raises :class:`AnalysisInputError` naming its index."""
    if method not in METHODS:
        raise AnalysisInputError(f"degradation method {method!r}: choose one of {', '.join(METHODS)}")
    rng = random.Random(seed)
    pool = ngram_pool(texts if pool_texts is None else pool_texts) if method == "replace" else {}
    out = []
    for i, t in enumerate(texts):
        if not degradable(t, method):
            raise AnalysisInputError(f"text {i} ({t!r}) is too short to degrade by {method}")
        out.append(degrade_text(method, t, pool, rng))
    return out


def degrade_text(method: str, text: str, pool: dict[int, list[str]], rng: random.Random) -> str:
    """One degraded version of ``text`` by ``method`` (``pool`` is used by "replace" only)."""
    if method == "replace":
        return replace_phrase(text, pool, rng)
    return delete_phrase(text, rng) if method == "delete" else duplicate_words(text, rng)


def span_bounds(original: str, degraded: str) -> tuple[int, int]:
    """(common prefix words, common suffix words) of two texts: where they differ (for tests
    and reports)."""
    a, b = original.split(), degraded.split()
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    return p, s
