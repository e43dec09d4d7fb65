"""METEOR's word keys: tokens interned once, each distinct token lowercased, stemmed and (with
a WordNet) given its synonyms once, so that the alignment kernel sees integers only.

Three id spaces: the tokenizer's ``Vocab`` (tokens as the tokenizer returns them), and one
*key* ``Vocab`` shared by the lowercased words, their stems and their synonyms (a stem that is
also a word gets one id, as the strings compare equal in NLTK's dictionaries). Per distinct
token: ``word[token]`` (key of the lowercased token) and ``stem[token]`` (key of the stem of
that lowercased word).

The default stemmer is the Snowball stemmer of the language from PyStemmer (the Snowball
project's C library, the algorithm family the original METEOR's stem module used); any callable
``str -> str`` replaces it (NLTK parity passes ``nltk.stem.PorterStemmer().stem``).
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Callable

import numpy as np

from ...kernels._text import Vocab
from ..missing_extra import MissingExtraError, install_hint

__all__ = ["SNOWBALL_LANGUAGES", "MeteorLexicon", "SnowballStems", "UserStems", "snowball_stemmer"]

#: language codes -> Snowball algorithm names of PyStemmer (an algorithm name works as well)
SNOWBALL_LANGUAGES = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "fa": "persian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}

StemMany = Callable[[list[str]], list[str]]


class SnowballStems:
    """PyStemmer's Snowball stemmer of one algorithm as a list stemmer (picklable: only the
    algorithm name travels). Words PyStemmer cannot encode (lone surrogates) stay unstemmed."""

    def __init__(self, algorithm: str):
        import Stemmer

        self.algorithm = algorithm
        self._st = Stemmer.Stemmer(algorithm)

    def __call__(self, words: list[str]) -> list[str]:
        try:
            return self._st.stemWords(words)
        except UnicodeEncodeError:
            return [self._one(w) for w in words]

    def _one(self, word: str) -> str:
        try:
            return self._st.stemWord(word)
        except UnicodeEncodeError:
            return word

    def __reduce__(self):
        return (SnowballStems, (self.algorithm,))


def snowball_stemmer(language: str) -> tuple[StemMany, str]:
    """``(stem a list of words, signature name)`` for a language code or Snowball algorithm.

    Raises :class:`MissingExtraError` (with the pip command) without PyStemmer, ValueError for
    a language Snowball lacks."""
    try:
        import Stemmer
    except ImportError:
        raise MissingExtraError(
            f"METEOR: the stem module needs PyStemmer (the Snowball stemmers): {install_hint('meteor')}, or "
            "pass stemmer= (a callable str -> str) or modules=('exact',)") from None
    algorithm = SNOWBALL_LANGUAGES.get(language, language)
    if algorithm not in Stemmer.algorithms():
        raise ValueError(f"METEOR: no Snowball stemmer for language {language!r}; choose a code of "
                         f"{', '.join(sorted(SNOWBALL_LANGUAGES))} or an algorithm of "
                         f"{', '.join(Stemmer.algorithms())}")
    # the library version names the Snowball release, whose stems can change between releases
    return SnowballStems(algorithm), f"snowball-{algorithm}-{Stemmer.version()}"


class UserStems:
    """A callable ``str -> str`` as a list stemmer, its results checked to be strings."""

    def __init__(self, fn: Callable[[str], str]):
        if not callable(fn):
            raise TypeError(f"METEOR: stemmer must be a callable str -> str, got {type(fn).__name__}")
        self.fn = fn

    def __call__(self, words: list[str]) -> list[str]:
        out = [self.fn(w) for w in words]
        for w, s in zip(words, out):
            if type(s) is not str:
                raise TypeError(f"METEOR: stemmer({w!r}) returned {type(s).__name__}, expected str")
        return out


class MeteorLexicon:
    """Tokens -> METEOR keys (see the module docstring); grows as texts arrive, thread-safe.

    :param encode: ``(texts, vocab) -> (token ids int32, offsets int64 (N + 1))``, a
        tokenizer's ``encode``.
    :param lowercase: key = ``token.lower()`` (NLTK's default ``preprocess``), else the token.
    :param stem_many: list stemmer, or None without the stem module.
    :param wordnet: a WordNet-like object (``synsets(word)`` -> synsets with ``lemmas()`` ->
        lemmas with ``name()``, as ``nltk.corpus.wordnet``), or None.
    """

    def __init__(self, encode: Callable, lowercase: bool, stem_many: StemMany | None,
                 wordnet: Any = None):
        self._encode = encode
        self._lowercase = lowercase
        self._stem_many = stem_many
        self._wordnet = wordnet
        self.tokens = Vocab()
        self.keys = Vocab()
        self._word = np.zeros(0, dtype=np.int32)
        self._stem = np.zeros(0, dtype=np.int32)
        self._synonyms: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        """Picklable: the vocabularies as their strings in id order (re-interned on load)."""
        state = {k: v for k, v in self.__dict__.items() if k != "_lock"}
        state["tokens"] = [self.tokens.token(i) for i in range(len(self.tokens))]
        state["keys"] = [self.keys.token(i) for i in range(len(self.keys))]
        return state

    def __setstate__(self, state: dict) -> None:
        for name in ("tokens", "keys"):
            vocab = Vocab()
            for x in state[name]:
                vocab.intern(x)
            state[name] = vocab
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def n_keys(self) -> int:
        return len(self.keys)

    def encode(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(word keys int32 (T,), stem keys int32 (T,), offsets int64 (N + 1))`` of N texts
        (stem keys equal word keys without a stemmer)."""
        with self._lock:
            ids, offsets = self._encode(texts, self.tokens)
            self._grow()
            return self._word[ids], self._stem[ids], offsets

    def _grow(self) -> None:
        old, new = len(self._word), len(self.tokens)
        if new == old:
            return
        words = [self.tokens.token(i) for i in range(old, new)]
        if self._lowercase:
            words = [w.lower() for w in words]
        word_keys = np.fromiter((self.keys.intern(w) for w in words), dtype=np.int32, count=len(words))
        if self._stem_many is None:
            stem_keys = word_keys
        else:
            stems = self._stem_many(words)
            stem_keys = np.fromiter((self.keys.intern(s) for s in stems), dtype=np.int32, count=len(words))
        self._word = np.concatenate([self._word, word_keys])
        self._stem = np.concatenate([self._stem, stem_keys])

    def synonym_table(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the keys of N tokens: ``(row int32 (N,), values int32, offsets int64)``, row r of
        the CSR table the synonyms of a key (its WordNet lemma names without "_", and the key
        itself), token i using row ``row[i]``; each distinct key looked up once per lexicon."""
        with self._lock:
            uniq, row = np.unique(keys, return_inverse=True)
            rows = [self._synonyms_of(int(k)) for k in uniq]
            offsets = np.zeros(len(rows) + 1, dtype=np.int64)
            np.cumsum([len(r) for r in rows], out=offsets[1:])
            values = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int32)
            return row.astype(np.int32).reshape(-1), values.astype(np.int32), offsets

    def _synonyms_of(self, key: int) -> np.ndarray:
        found = self._synonyms.get(key)
        if found is None:
            word = self.keys.token(key)
            names = {word}
            if self._wordnet is not None:
                names.update(_lemma_names(self._wordnet, word))
            found = np.array(sorted(self.keys.intern(x) for x in names), dtype=np.int32)
            self._synonyms[key] = found
        return found


def _lemma_names(wordnet: Any, word: str) -> Iterable[str]:
    """NLTK's synonym set of a word: every lemma name of every synset without an underscore."""
    for synset in wordnet.synsets(word):
        for lemma in synset.lemmas():
            name = lemma.name()
            if type(name) is not str:
                raise TypeError(f"METEOR: wordnet lemma name of {word!r} is {type(name).__name__}, expected str")
            if name.find("_") < 0:
                yield name
