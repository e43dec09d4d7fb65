"""XLM-R's fast tokenizer built from a ``sentencepiece.bpe.model`` alone (``microsoft/infoxlm-large``,
the encoder of wmt22-cometkiwi-da, ships no ``tokenizer.json``), without sentencepiece, protobuf or
transformers.

unbabel-comet 2.2.7 calls ``XLMRobertaTokenizerFast.from_pretrained``; with transformers 4.x (it pins
< 5) and no ``tokenizer.json`` that converts the SentencePiece model with ``XLMRobertaConverter``.
:func:`xlmr_tokenizer_from_spm` builds what transformers 4.57 (the last 4.x) builds:

* a Unigram model over fairseq's ids: ``<s> <pad> </s> <unk>`` = 0..3, then the SentencePiece pieces
  after its first three (``<unk> <s> </s>``) with their scores, so a piece's id is its SentencePiece
  id + 1, and ``<mask>`` last; unknown -> 3; no byte fallback;
* normaliser: the model's precompiled charsmap (nmt_nfkc for XLM-R), strip on the right, runs of 2+
  spaces -> one ``▁``; pre-tokeniser ``Metaspace(▁, prepend always)``; ``<s> $A </s>`` (pair
  ``<s> $A </s> </s> $B </s>``); the five special tokens as added tokens (``<mask>`` strips left).

Older transformers 4.x (before about 4.36) normalised with the charsmap and ``" {2,}" -> " "`` only
(no right strip): they differ on trailing whitespace. The model is read by a minimal reader of the
protobuf wire format (only the fields above).
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from ..checkpoints import CheckpointError
from ..missing_extra import install_hint

__all__ = ["SpmModel", "read_spm_model", "xlmr_tokenizer_from_spm"]

#: what the first three SentencePiece pieces must be for fairseq's id offset to hold
_SPM_HEAD = ("<unk>", "<s>", "</s>")
_UNIGRAM = 1
_NORMAL = 1


class SpmModel:
    """The parts of a SentencePiece ``ModelProto`` the XLM-R conversion reads: ``pieces`` (list of
    ``(piece, score, type)``), ``model_type`` (1 unigram, 2 BPE, ...), ``precompiled_charsmap``
    (bytes, may be empty), ``normalizer_name``."""

    def __init__(self, pieces: list[tuple[str, float, int]], model_type: int, precompiled_charsmap: bytes,
                 normalizer_name: str):
        self.pieces = pieces
        self.model_type = model_type
        self.precompiled_charsmap = precompiled_charsmap
        self.normalizer_name = normalizer_name


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _fields(buf: bytes):
    """``(field number, wire type, value)`` of a serialised message: an int for varints, bytes for
    length-delimited fields, the raw 4 or 8 bytes for fixed ones."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if i > len(buf):
            raise ValueError("truncated field")
        yield field, wire, value


def read_spm_model(path: Path | str) -> SpmModel:
    """Read ``path`` (a serialised SentencePiece model); :class:`CheckpointError` naming it when it
    is not one."""
    path = Path(path)
    try:
        buf = path.read_bytes()
    except OSError as e:
        raise CheckpointError(f"{path}: cannot read ({e})") from None
    pieces: list[tuple[str, float, int]] = []
    model_type, charsmap, name = _UNIGRAM, b"", ""
    try:
        for field, wire, value in _fields(buf):
            if field == 1 and wire == 2:  # repeated SentencePiece pieces
                piece, score, kind = "", 0.0, _NORMAL
                for f, w, v in _fields(value):
                    if f == 1 and w == 2:
                        piece = v.decode("utf-8")
                    elif f == 2 and w == 5:
                        score = struct.unpack("<f", v)[0]
                    elif f == 3 and w == 0:
                        kind = v
                pieces.append((piece, score, kind))
            elif field == 2 and wire == 2:  # TrainerSpec
                for f, w, v in _fields(value):
                    if f == 3 and w == 0:
                        model_type = v
            elif field == 3 and wire == 2:  # NormalizerSpec
                for f, w, v in _fields(value):
                    if f == 1 and w == 2:
                        name = v.decode("utf-8")
                    elif f == 2 and w == 2:
                        charsmap = bytes(v)
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: not a SentencePiece model ({e})") from None
    if not pieces:
        raise CheckpointError(f"{path}: not a SentencePiece model (no pieces)")
    return SpmModel(pieces, model_type, charsmap, name)


def xlmr_tokenizer_from_spm(path: Path | str):
    """A ``tokenizers.Tokenizer`` equal to transformers 4.57's ``XLMRobertaTokenizerFast`` converted
    from the SentencePiece model at ``path`` (see the module notes). Refuses (CheckpointError naming
    the file) a model that is not unigram or whose first pieces are not ``<unk> <s> </s>``."""
    try:
        from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    except ImportError:
        raise CheckpointError(f"COMET needs tokenizers: {install_hint('bertscore')}") from None
    spm = read_spm_model(path)
    if spm.model_type != _UNIGRAM:
        raise CheckpointError(f"{path}: SentencePiece model type {spm.model_type}; XLM-R's is unigram (1)")
    head = tuple(p for p, _, _ in spm.pieces[:3])
    if head != _SPM_HEAD:
        raise CheckpointError(f"{path}: first pieces {head}; XLM-R's fairseq ids need {_SPM_HEAD}")
    vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    vocab += [(p, s) for p, s, _ in spm.pieces[3:]]
    vocab.append(("<mask>", 0.0))
    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    steps = [normalizers.Strip(left=False, right=True), normalizers.Replace(Regex(" {2,}"), "\u2581")]
    if spm.precompiled_charsmap:
        steps.insert(0, normalizers.Precompiled(spm.precompiled_charsmap))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<s>", "<pad>", "</s>", "<unk>")]
                           + [AddedToken("<mask>", special=True, normalized=False, lstrip=True)])
    return tok
