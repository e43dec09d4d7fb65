"""Piece tables of vocabularies whose decoder the compiled kernel ``_detok`` reproduces exactly.

A :class:`PieceTable` holds, per id, the UTF-8 bytes the id contributes where it opens the text
(the *first* form) and elsewhere (the *later* form), flags (skipped, byte piece, literal,
leading U+2581) and the byte of a byte piece; see ``mtscore/kernels/_detok.pyx``.

* :func:`hf_table` reads a ``tokenizers.Tokenizer``: its decoder (``Tokenizer.decoder``'s
  serialisation) must be a pipeline the kernel follows step for step, else ``None`` (the caller
  keeps the tokenizer's own ``decode_batch``). Followed: no decoder (tokens joined by spaces);
  ``ByteLevel`` alone (GPT-2 bytes, joined, ``from_utf8_lossy``); any sequence of per-token
  steps ``Replace`` (a string pattern), ``Metaspace``, ``WordPiece``, ``Strip`` (``stop = 0``),
  then optionally ``ByteFallback``, ``Fuse`` and one final ``Strip`` (``stop = 0``, after
  ``Fuse``) -- the Llama / Mistral decoder and those of SentencePiece-converted and BERT-like
  tokenizers. Skipped ids: special added tokens (``skip_special_tokens=True``: tokens whose
  string is a special token's content) and ids without a token, as ``Tokenizer.decode`` does.
* :func:`spm_table` reads a ``sentencepiece.SentencePieceProcessor``: ``Decode``'s rules
  (control pieces invisible, ``unk_surface`` for the unknown piece, byte pieces joined one
  character at a time, U+2581 -> space, the leading one removed per ``add_dummy_prefix`` /
  ``remove_extra_whitespaces``), read from the serialised model; ``None`` for a model with a
  denormaliser.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..kernels import _detok

__all__ = ["PieceTable", "hf_table", "spm_table"]

_SPACE = "\u2581"


@dataclass(frozen=True)
class PieceTable:
    """Arguments of ``_detok.decode_rows`` after the ids: ``data`` uint8, ``form_offsets`` int64
    (2V + 1,), ``flags`` uint8 (V,), ``byte_values`` uint8 (V,), the mode and its options."""

    data: np.ndarray
    form_offsets: np.ndarray
    flags: np.ndarray
    byte_values: np.ndarray
    mode: int
    bos_strip: bool = False
    bos_once: bool = False
    strip_char: np.ndarray | None = None
    strip_count: int = 0

    @property
    def size(self) -> int:
        return len(self.flags)

    def decode(self, values: np.ndarray, offsets: np.ndarray) -> list[str]:
        """CSR ids (values int32, offsets int64) -> list of str (ids must be in [0, size))."""
        return _detok.decode_rows(values, offsets, self.data, self.form_offsets, self.flags,
                                  self.byte_values, self.mode, self.bos_strip, self.bos_once,
                                  self.strip_char, self.strip_count)


def _pack(first: Sequence[bytes], later: Sequence[bytes], flags: np.ndarray,
          byte_values: np.ndarray, mode: int, **options: Any) -> PieceTable:
    forms = [b for pair in zip(first, later) for b in pair]
    lengths = np.fromiter(map(len, forms), dtype=np.int64, count=len(forms))
    form_offsets = np.zeros(len(forms) + 1, dtype=np.int64)
    np.cumsum(lengths, out=form_offsets[1:])
    return PieceTable(np.frombuffer(b"".join(forms), dtype=np.uint8).copy(), form_offsets,
                      np.asarray(flags, dtype=np.uint8), np.asarray(byte_values, dtype=np.uint8),
                      mode, **options)


# ---- Hugging Face tokenizers ----------------------------------------------------------------
def _gpt2_char_bytes() -> dict[str, int]:
    """GPT-2's bytes_to_unicode inverted: the character of each byte -> the byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) \
        + list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


_CHAR_BYTES = _gpt2_char_bytes()


def _byte_level_bytes(token: str) -> bytes:
    """``tokenizers``' ByteLevel decoder on one token: its GPT-2 bytes, or its own UTF-8 bytes
    when one of its characters is not a byte's character."""
    try:
        return bytes([_CHAR_BYTES[c] for c in token])
    except KeyError:
        return token.encode("utf-8")


def _wordpiece_cleanup(s: str) -> str:
    """``tokenizers::decoders::wordpiece::cleanup`` (the same replacements in the same order)."""
    return (s.replace(" .", ".").replace(" ?", "?").replace(" !", "!").replace(" ,", ",")
            .replace(" ' ", "'").replace(" n't", "n't").replace(" 'm", "'m")
            .replace(" do not", " don't").replace(" 's", "'s").replace(" 've", "'ve")
            .replace(" 're", "'re"))


def _rust_hex_byte(token: str) -> int | None:
    """ByteFallback's test: a 6-byte token ``<0x??>`` whose bytes 3..5 parse with Rust's
    ``u8::from_str_radix(_, 16)`` (which accepts a leading ``+``), else None."""
    b = token.encode("utf-8")
    if len(b) != 6 or not b.startswith(b"<0x") or not b.endswith(b">"):
        return None
    mid = b[3:5]
    if mid.startswith(b"+"):
        mid = mid[1:]
    if not mid or any(c not in b"0123456789abcdefABCDEF" for c in mid):
        return None
    return int(mid, 16)


_Step = Callable[[str, int], str]


def _per_token_step(step: dict[str, Any]) -> _Step | None:
    """One decoder step that maps each token on its own (``i``: the token's position)."""
    t = step.get("type")
    if t == "Replace":
        pattern, content = step.get("pattern"), step.get("content")
        if not isinstance(pattern, dict) or set(pattern) != {"String"} or not pattern["String"] \
                or not isinstance(content, str):
            return None  # a regex pattern: not followed
        old: str = pattern["String"]
        return lambda tok, i: tok.replace(old, content)
    if t == "Metaspace":
        repl, scheme = step.get("replacement"), step.get("prepend_scheme")
        if not isinstance(repl, str) or len(repl) != 1 or scheme not in ("always", "never", "first"):
            return None
        # every replacement character of the first token is dropped (not only a leading one)
        return lambda tok, i: tok.replace(repl, "" if i == 0 and scheme != "never" else " ")
    if t == "WordPiece":
        prefix, cleanup = step.get("prefix"), step.get("cleanup")
        if not isinstance(prefix, str) or not isinstance(cleanup, bool):
            return None

        def wordpiece(tok: str, i: int) -> str:
            if i != 0:
                tok = tok[len(prefix):] if tok.startswith(prefix) else " " + tok
            return _wordpiece_cleanup(tok) if cleanup else tok
        return wordpiece
    if t == "Strip":
        c, start, stop = step.get("content"), step.get("start"), step.get("stop")
        if not isinstance(c, str) or len(c) != 1 or not isinstance(start, int) or stop != 0:
            return None

        def strip(tok: str, i: int) -> str:
            cut = 0
            while cut < min(start, len(tok)) and tok[cut] == c:
                cut += 1
            return tok[cut:]
        return strip
    return None


def _hf_plan(decoder: dict[str, Any] | None):
    """``(kind, per-token steps, byte_fallback, final strip)`` of a decoder's serialisation, or
    None when the kernel does not follow it. kind: "join" (no decoder), "bytelevel", "pieces"."""
    if decoder is None:
        return "join", [], False, None
    steps: list[dict[str, Any]] = []

    def flatten(d: dict[str, Any]) -> None:
        if d.get("type") == "Sequence":
            for x in d.get("decoders", []):
                flatten(x)
        else:
            steps.append(d)
    flatten(decoder)
    if [s.get("type") for s in steps] == ["ByteLevel"]:
        return "bytelevel", [], False, None
    per_token: list[_Step] = []
    byte_fallback = fused = False
    strip: tuple[str, int] | None = None
    for s in steps:
        t = s.get("type")
        if strip is not None:
            return None  # nothing after the final Strip
        if t == "Fuse":
            fused = True
        elif t == "ByteFallback" and not byte_fallback and not fused:
            byte_fallback = True
        elif fused and t == "Strip":
            c, start, stop = s.get("content"), s.get("start"), s.get("stop")
            if not isinstance(c, str) or len(c) != 1 or not isinstance(start, int) or stop != 0:
                return None
            strip = (c, start)
        elif fused or byte_fallback:
            return None  # a step on the fused text or on byte runs' text
        else:
            fn = _per_token_step(s)
            if fn is None:
                return None
            per_token.append(fn)
    return "pieces", per_token, byte_fallback, strip


def hf_table(tok: Any) -> PieceTable | None:
    """The piece table of a ``tokenizers.Tokenizer`` decoding with ``skip_special_tokens=True``,
    or None when its decoder is not one the kernel follows."""
    dec = tok.decoder
    plan = _hf_plan(None if dec is None else json.loads(dec.__getstate__()))
    if plan is None:
        return None
    kind, steps, byte_fallback, strip = plan
    added = tok.get_added_tokens_decoder()
    special = {t.content for t in added.values() if t.special and t.content}
    size = max([int(tok.get_vocab_size(with_added_tokens=False))] + [int(i) + 1 for i in added])
    first: list[bytes] = []
    later: list[bytes] = []
    flags = np.zeros(size, dtype=np.uint8)
    byte_values = np.zeros(size, dtype=np.uint8)
    for i in range(size):
        token = tok.id_to_token(i)
        if token is None or token in special:
            flags[i] = _detok.FLAG_SKIP
            first.append(b"")
            later.append(b"")
            continue
        if kind == "join":
            f0, f1 = token.encode(), (" " + token).encode()
        elif kind == "bytelevel":
            f0 = f1 = _byte_level_bytes(token)
        else:
            t0 = t1 = token
            for fn in steps:
                t0, t1 = fn(t0, 0), fn(t1, 1)
            if byte_fallback:
                b0, b1 = _rust_hex_byte(t0), _rust_hex_byte(t1)
                if (b0 is None) != (b1 is None) or b0 != b1:
                    return None  # a byte piece only where it opens the text: not followed
                if b0 is not None:
                    flags[i] = _detok.FLAG_BYTE
                    byte_values[i] = b0
            f0, f1 = t0.encode(), t1.encode()
        first.append(f0)
        later.append(f1)
    options: dict[str, Any] = {}
    if strip is not None and strip[1] > 0:
        options = {"strip_char": np.frombuffer(strip[0].encode(), dtype=np.uint8).copy(),
                   "strip_count": strip[1]}
    return _pack(first, later, flags, byte_values, _detok.MODE_HF, **options)


def hf_fingerprint(tok: Any) -> tuple[Any, ...]:
    """What a cached table of ``tok`` depends on, cheap to read: the decoder, the added tokens
    (their decoding strings included) and the sizes, and the tokens of 64 ids spread over the
    vocabulary (a replaced model)."""
    dec = tok.decoder
    added = tok.get_added_tokens_decoder()
    n = int(tok.get_vocab_size(with_added_tokens=False))
    return (type(tok.model).__name__, n, None if dec is None else dec.__getstate__(),
            tuple((int(i), t.content, bool(t.special), tok.id_to_token(int(i)))
                  for i, t in sorted(added.items())),
            tuple(tok.id_to_token(int(i)) for i in np.linspace(0, max(n - 1, 0), 64).astype(int)))


# ---- SentencePiece ------------------------------------------------------------------------
def _proto_fields(buf: bytes) -> dict[int, list[Any]]:
    """Protocol-buffer wire format -> {field number: [values]} (varints as int, length-delimited
    fields as bytes); enough to read a few scalar fields of a SentencePiece ModelProto."""
    out: dict[int, list[Any]] = {}
    i, n = 0, len(buf)

    def varint() -> int:
        nonlocal i
        shift = value = 0
        while True:
            if i >= n:
                raise ValueError("truncated protocol buffer")
            b = buf[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value
    while i < n:
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            value: Any = varint()
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            length = varint()
            value, i = buf[i:i + length], i + length
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported protocol-buffer wire type {wire}")
        out.setdefault(field, []).append(value)
    return out


def spm_table(sp: Any) -> PieceTable | None:
    """The piece table of a ``SentencePieceProcessor`` (``decode`` of ids), or None when its
    model has a denormaliser (not followed)."""
    model = _proto_fields(sp.serialized_model_proto())
    trainer = _proto_fields(model[2][-1]) if 2 in model else {}
    normalizer = _proto_fields(model[3][-1]) if 3 in model else {}
    denormalizer = _proto_fields(model[5][-1]) if 5 in model else {}
    if denormalizer.get(2, [b""])[-1]:
        return None
    unk_surface = trainer[44][-1].decode("utf-8") if 44 in trainer else " \u2047 "
    add_dummy_prefix = bool(normalizer.get(3, [1])[-1])
    remove_extra_whitespaces = bool(normalizer.get(4, [1])[-1])
    size = int(sp.get_piece_size())
    first: list[bytes] = []
    later: list[bytes] = []
    flags = np.zeros(size, dtype=np.uint8)
    byte_values = np.zeros(size, dtype=np.uint8)
    for i in range(size):
        piece = sp.id_to_piece(i)
        if sp.is_byte(i):
            flags[i] = _detok.FLAG_BYTE
            byte_values[i] = int(piece[3:5], 16)
            f0 = f1 = b""
        elif sp.is_control(i):
            flags[i] = _detok.FLAG_LITERAL
            f0 = f1 = b""
        elif sp.is_unknown(i):
            flags[i] = _detok.FLAG_LITERAL
            f0 = f1 = unk_surface.encode()
        else:
            f1 = piece.replace(_SPACE, " ").encode()
            f0 = f1
            if piece.startswith(_SPACE):
                flags[i] = _detok.FLAG_LEADING_WS
                f0 = piece[1:].replace(_SPACE, " ").encode()
        first.append(f0)
        later.append(f1)
    return _pack(first, later, flags, byte_values, _detok.MODE_SPM,
                 bos_strip=add_dummy_prefix or remove_extra_whitespaces,
                 bos_once=not remove_extra_whitespaces)
