"""Token ids -> text with a vocabulary's own decoder (the text mode of the decoder API).

Scoring decoded text with chrF, chrF++, BLEU (any tokenizer) or TER then goes through the
ordinary text path, so the numbers equal sacrebleu on that decoded text. A vocabulary is

* a Hugging Face ``tokenizers.Tokenizer`` (``decode_batch(ids, skip_special_tokens=True)``),
  or a ``transformers`` tokenizer (``batch_decode``, same flag);
* a path to a ``tokenizer.json`` (or a model directory holding one), loaded with ``tokenizers``;
* a SentencePiece model: a ``sentencepiece.SentencePieceProcessor`` or a path to a ``.model``
  file (its ``decode`` drops control symbols such as <s>, </s>, <pad>);
* a list of pieces (``pieces[id]`` is the string of id) with a declared ``rule``:
  ``"space"`` (pieces are words, joined by one space), ``"concat"`` (joined by nothing),
  ``"metaspace"`` (joined by nothing, then U+2581 ``▁`` -> space and one leading space
  dropped, the SentencePiece convention) or ``"wordpiece"`` (joined by spaces, ``##`` pieces
  glued to the previous one; no punctuation clean-up); ``skip_ids`` are dropped first.

``tokenizers`` and ``sentencepiece`` are imported only when a path needs loading (the
``decoder`` extra); objects are recognised by their methods.

SentencePiece models and ``tokenizers.Tokenizer`` objects whose decoder pipeline
``mtscore.engine.piece_bytes`` follows (Metaspace, ByteLevel, WordPiece, the Llama-style
Replace + ByteFallback + Fuse + Strip sequence, ...) decode in a compiled kernel from a piece
table built once per vocabulary object (cached, rebuilt when the vocabulary changes); the result
is the vocabulary's own decoder's, character for character. Other decoders and ``transformers``
tokenizers (whose ``clean_up_tokenization_spaces`` and added-token handling live in Python)
keep the vocabulary's own batch decoder. (A ``SentencePieceProcessor`` given decode options
with ``SetDecodeExtraOptions``, which cannot be read back, is not supported.)
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .missing_extra import MissingExtraError, install_hint
from .piece_bytes import PieceTable, hf_fingerprint, hf_table, spm_table
from .token_ids import TokenIds

__all__ = ["PIECE_RULES", "IdDecoder", "load_vocabulary"]

PIECE_RULES = ("space", "concat", "metaspace", "wordpiece")


class IdDecoder:
    """``decode(ids: TokenIds) -> list of N str`` with one vocabulary; ``name`` describes it."""

    def __init__(self, decode: Callable[[TokenIds], list[str]], name: str):
        self._decode = decode
        self.name = name

    def decode(self, ids: TokenIds) -> list[str]:
        return self._decode(ids)

    def __repr__(self) -> str:
        return f"IdDecoder({self.name})"


def _hf_decoder(tok: Any, method: str) -> IdDecoder:
    fn = getattr(tok, method)
    return IdDecoder(lambda ids: list(fn(ids.to_lists(), skip_special_tokens=True)),
                     f"{type(tok).__module__}.{type(tok).__name__}")


def _check_range(ids: TokenIds, size: int, what: str) -> None:
    if len(ids.values) and int(ids.values.max()) >= size:
        k = int(np.argmax(ids.values >= size))
        i = int(np.searchsorted(ids.offsets, k, side="right")) - 1
        raise ValueError(f"ids[{i}][{k - int(ids.offsets[i])}] = {int(ids.values[k])} is not in "
                         f"the {what} vocabulary (size {size})")


# id(vocabulary object) -> (the object, its fingerprint, its piece table or None): the table is
# built once per object (tens of ms for a 30k vocabulary) and rebuilt when the fingerprint moves;
# the oldest entries go first. Holding the object keeps its id from being reused meanwhile.
_TABLES: OrderedDict[int, tuple[Any, Any, PieceTable | None]] = OrderedDict()
_TABLES_MAX = 8


def _cached_table(obj: Any, fingerprint: Any, build: Callable[[Any], PieceTable | None]
                  ) -> PieceTable | None:
    hit = _TABLES.get(id(obj))
    if hit is not None and hit[0] is obj and hit[1] == fingerprint:
        return hit[2]
    table = build(obj)
    _TABLES[id(obj)] = (obj, fingerprint, table)
    while len(_TABLES) > _TABLES_MAX:
        try:
            _TABLES.popitem(last=False)
        except KeyError:  # emptied by another thread meanwhile
            break
    return table


_TOKENIZER_API = ("decoder", "model", "get_added_tokens_decoder", "id_to_token", "get_vocab_size")


def _tokenizers_decoder(tok: Any) -> IdDecoder:
    """A ``tokenizers.Tokenizer``: the compiled table decoder when its decoder pipeline is one
    ``piece_bytes`` follows, else its own ``decode_batch``. Ids at or above the vocabulary's
    size are an error (``decode`` would drop them); ids in range without a token are dropped.
    An object that only looks like one (no ``decoder``, ...) keeps its ``decode_batch``."""
    if not all(hasattr(tok, a) for a in _TOKENIZER_API):
        return _hf_decoder(tok, "decode_batch")
    table = _cached_table(tok, hf_fingerprint(tok), hf_table)
    name = f"{type(tok).__module__}.{type(tok).__name__}"
    if table is None:
        added = tok.get_added_tokens_decoder()
        size = max([int(tok.get_vocab_size(with_added_tokens=False))] + [int(i) + 1 for i in added])
        library = _hf_decoder(tok, "decode_batch")

        def decode_library(ids: TokenIds) -> list[str]:
            _check_range(ids, size, "tokenizer's")
            return library.decode(ids)
        return IdDecoder(decode_library, name)
    return _table_decoder(table, "tokenizer's", name + " (compiled)")


def _table_decoder(table: PieceTable, what: str, name: str) -> IdDecoder:
    def decode(ids: TokenIds) -> list[str]:
        _check_range(ids, table.size, what)
        return table.decode(ids.values, ids.offsets)
    return IdDecoder(decode, name)


def _spm_decoder(sp: Any) -> IdDecoder:
    table = _cached_table(sp, hash(sp.serialized_model_proto()), spm_table)
    if table is not None:
        return _table_decoder(table, "SentencePiece", "sentencepiece (compiled)")
    size = int(sp.get_piece_size())

    def decode(ids: TokenIds) -> list[str]:
        _check_range(ids, size, "SentencePiece")
        return [str(s) for s in sp.decode(ids.to_lists())]

    return IdDecoder(decode, "sentencepiece")


def _load_path(path: Path) -> IdDecoder:
    if path.is_dir():
        if (path / "tokenizer.json").is_file():
            return _load_path(path / "tokenizer.json")
        models = sorted(path.glob("*.model"))
        if len(models) == 1:
            return _load_path(models[0])
        raise ValueError(f"vocabulary directory {path} has no tokenizer.json (nor a single "
                         "SentencePiece .model file)")
    if not path.is_file():
        raise FileNotFoundError(f"vocabulary file {path} does not exist")
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    hit = _LOADED.get(key)
    if hit is None:
        hit = _LOADED[key] = _load_file(path)
        while len(_LOADED) > _TABLES_MAX:
            try:
                _LOADED.popitem(last=False)
            except KeyError:
                break
    return hit


# (resolved path, mtime, size) -> its decoder: a vocabulary named by path in a loop is read once
_LOADED: OrderedDict[tuple[str, int, int], IdDecoder] = OrderedDict()


def _load_file(path: Path) -> IdDecoder:
    if path.suffix == ".json":
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise MissingExtraError(f"reading {path} needs the tokenizers package: "
                                    f"{install_hint('decoder')}") from None
        return _tokenizers_decoder(Tokenizer.from_file(str(path)))
    if path.suffix == ".model":
        try:
            import sentencepiece as spm
        except ImportError:
            raise MissingExtraError(f"reading {path} needs sentencepiece: "
                                    f"{install_hint('decoder')}") from None
        return _spm_decoder(spm.SentencePieceProcessor(model_file=str(path)))
    raise ValueError(f"vocabulary file {path}: expected a tokenizer.json or a SentencePiece "
                     ".model file")


def _join_rows(tokens: list[str], offsets: np.ndarray, sep: str) -> list[str]:
    o = offsets.tolist()
    return [sep.join(tokens[o[i]:o[i + 1]]) for i in range(len(o) - 1)]


def _pieces_decoder(pieces: list[str], rule: str | None, skip_ids: Iterable[int]) -> IdDecoder:
    if rule not in PIECE_RULES:
        raise ValueError(f"a list of pieces needs rule= to say how pieces join: one of "
                         f"{', '.join(PIECE_RULES)} (got {rule!r})")
    for k, p in enumerate(pieces):
        if not isinstance(p, str):
            raise TypeError(f"pieces[{k}] is a {type(p).__name__}; pieces must be strings")
    table = np.array(pieces, dtype=object)
    skip = np.array(sorted(set(int(x) for x in skip_ids)), dtype=np.int64)

    def decode(ids: TokenIds) -> list[str]:
        values, offsets = ids.values, ids.offsets
        if len(values) and int(values.max()) >= len(table):
            k = int(np.argmax(values >= len(table)))
            i = int(np.searchsorted(offsets, k, side="right")) - 1
            raise ValueError(f"ids[{i}][{k - int(offsets[i])}] = {int(values[k])} has no piece "
                             f"(the vocabulary holds {len(table)})")
        if len(skip):
            keep = ~np.isin(values, skip)
            kept = np.concatenate([[0], np.cumsum(keep)])
            offsets, values = kept[offsets], values[keep]
        tokens = table[values].tolist()
        if rule == "space":
            return _join_rows(tokens, offsets, " ")
        if rule == "wordpiece":
            return [s.replace(" ##", "") for s in _join_rows(tokens, offsets, " ")]
        out = _join_rows(tokens, offsets, "")
        if rule == "metaspace":
            out = [s.replace("\u2581", " ") for s in out]
            out = [s[1:] if s.startswith(" ") else s for s in out]
        return out

    return IdDecoder(decode, f"pieces[{len(table)}], rule={rule}")


def load_vocabulary(vocab: Any, *, rule: str | None = None,
                    skip_ids: Iterable[int] = ()) -> IdDecoder:
    """An :class:`IdDecoder` for ``vocab`` (see the module docstring). ``rule`` and
    ``skip_ids`` apply to a list of pieces only (tokenizers skip their own special tokens)."""
    if isinstance(vocab, IdDecoder):
        return vocab
    if isinstance(vocab, (list, tuple)):
        return _pieces_decoder(list(vocab), rule, skip_ids)
    if rule is not None or tuple(skip_ids):
        raise ValueError("rule= and skip_ids= apply to a list of pieces; a tokenizer decodes with "
                         "its own rules and skips its own special tokens")
    if isinstance(vocab, (str, Path)):
        return _load_path(Path(vocab).expanduser())
    if hasattr(vocab, "decode_batch"):  # tokenizers.Tokenizer
        return _tokenizers_decoder(vocab)
    if hasattr(vocab, "batch_decode"):  # transformers PreTrainedTokenizer(Fast)
        return _hf_decoder(vocab, "batch_decode")
    if hasattr(vocab, "get_piece_size") and hasattr(vocab, "decode"):  # SentencePieceProcessor
        return _spm_decoder(vocab)
    raise TypeError(f"vocab: expected a tokenizers.Tokenizer, a transformers tokenizer, a "
                    f"SentencePieceProcessor, a tokenizer.json / .model path or a list of pieces; "
                    f"got {type(vocab).__name__}")
