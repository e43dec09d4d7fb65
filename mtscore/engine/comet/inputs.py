"""COMET's encoder inputs without transformers: token ids exactly as unbabel-comet 2.2.7 builds them,
the joint input of ``unified_metric``, de-duplicated sentences and padded token-budget batches.

What unbabel-comet 2.2.7 does (``comet/encoders/base.py`` and ``bert.py``; Rei et al., 2020, 2022):

* ``max_positions = max_position_embeddings - 2`` (514 - 2 = 512 for XLM-R and InfoXLM);
  ``prepare_sample`` calls the tokenizer with ``truncation=True, max_length=max_positions - 2``,
  special tokens included, so a sentence becomes ``<s>`` + its first ``max_positions - 4`` pieces +
  ``</s>`` (at most 510 ids). The text is not stripped.
* ``concat_sequences`` (``unified_metric``, wmt22-cometkiwi-da): every id equal to the pad id is
  removed from each sentence (a literal ``<pad>`` in the text too), then ``<s> mt </s></s> src </s>``
  is built from the inner ids (without each sentence's own ``<s>``/``</s>``) and cut to its first
  ``max_positions`` ids when the inner lengths sum to more than ``max_positions - 5``: the tail of
  the source and the final ``</s>`` are then lost.
* The attention mask is 1 on every id of a sentence and 0 on padding; a literal ``<pad>`` inside a
  separately encoded sentence keeps mask 1 (the encoder's position ids and COMET's average pooling
  look at the id, not the mask: that is the encoder graph's business).

The batches here are mtscore's, not COMET's (COMET sorts by characters and takes 16 rows): sentences
sorted by token count, as many rows as fit a budget of padded tokens. COMET's scores do not depend on
the batch (the layer norm of the mix is per sentence); on the CPU padding moves no bit of an
embedding (:mod:`.graph`).
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..checkpoints import CheckpointError
from ..encoder.runtime import DEFAULT_BATCH_TOKENS, MAX_BATCH_ROWS, pad_batch
from ..missing_extra import install_hint
from .model import CometModelFiles
from .spm_tokenizer import xlmr_tokenizer_from_spm

__all__ = ["Batch", "CometTokenizer", "length_batches", "load_comet_tokenizer", "padded_batches",
           "unique_pairs", "unique_texts"]

#: special tokens of XLM-R's tokenizer (unbabel-comet's XLMREncoder), unless the tokenizer's
#: special_tokens_map.json / tokenizer_config.json name others
_SPECIALS = {"cls_token": "<s>", "sep_token": "</s>", "pad_token": "<pad>"}


class CometTokenizer:
    """XLM-R token ids as unbabel-comet 2.2.7's encoder builds them, from a ``tokenizer.json`` read
    by Hugging Face ``tokenizers`` (no transformers), or from a ``sentencepiece.bpe.model`` converted
    as transformers 4.x converts it (:mod:`.spm_tokenizer`).

    ``tokenizer_file``: the encoder's ``tokenizer.json`` (its own truncation/padding settings are
    ignored, as transformers overrides them per call) or a file ending in ``.model``;
    ``config``: the encoder's ``config.json``
    (``max_position_embeddings`` gives the limits; ``vocab_size`` bounds the ids).

    Attributes: ``bos_id`` (``<s>``), ``eos_id`` (``</s>``), ``pad_id`` (``<pad>``),
    ``max_positions`` (``max_position_embeddings - 2``: the joint input's cut), ``max_length``
    (``max_positions - 2``: a sentence's ids, specials included), ``path``.
    """

    def __init__(self, tokenizer_file: Path | str, config: Mapping[str, Any], *,
                 config_file: Path | str = "config.json"):
        try:
            import tokenizers
        except ImportError:
            raise CheckpointError(f"COMET needs tokenizers: {install_hint('bertscore')}") from None
        self.path = Path(tokenizer_file)
        if self.path.suffix == ".model":
            self._tok = xlmr_tokenizer_from_spm(self.path)
        else:
            spec = _read_json_object(self.path, required=True)
            if "model" not in spec:
                raise CheckpointError(f"{self.path}: not a tokenizer.json (no 'model' entry)")
            spec["truncation"] = None
            spec["padding"] = None
            try:
                self._tok = tokenizers.Tokenizer.from_str(json.dumps(spec))
            except Exception as e:  # the Rust side raises a bare Exception
                raise CheckpointError(f"{self.path}: not a valid tokenizer.json ({e})") from None

        mpe = config.get("max_position_embeddings")
        if isinstance(mpe, bool) or not isinstance(mpe, int) or mpe < 5:
            raise CheckpointError(f"{config_file}: max_position_embeddings: {mpe!r}; expected an integer >= 5 "
                                  "(COMET truncates sentences to max_position_embeddings - 4 ids)")
        self.max_positions = mpe - 2
        self.max_length = self.max_positions - 2

        names = dict(_SPECIALS)
        for extra in ("special_tokens_map.json", "tokenizer_config.json"):
            found = _read_json_object(self.path.parent / extra, required=False)
            for key in names:
                v = found.get(key)
                v = v.get("content") if isinstance(v, dict) else v
                if isinstance(v, str) and v:
                    names[key] = v
        ids = {}
        for key, token in names.items():
            i = self._tok.token_to_id(token)
            if i is None:
                raise CheckpointError(f"{self.path}: the {key} {token!r} is not in the vocabulary")
            ids[key] = int(i)
        self.bos_id, self.eos_id, self.pad_id = ids["cls_token"], ids["sep_token"], ids["pad_token"]
        # batches are padded with the tokenizer's <pad>; the encoder's position ids and COMET's
        # avg / max pooling tell padding by the config's pad_token_id: they must be the same id
        cfg_pad = config.get("pad_token_id", 1)
        if cfg_pad != self.pad_id:
            raise CheckpointError(f"{self.path}: the pad_token {names['pad_token']!r} is id {self.pad_id}, but "
                                  f"{config_file} says pad_token_id {cfg_pad!r}; the encoder would take padding "
                                  "for text (positions, pooling)")
        # the single-sentence template must be <s> $A </s> (XLM-R's RobertaProcessing), since the
        # ids are wrapped here; anything else would silently change COMET's inputs
        empty = self._tok.encode("", add_special_tokens=True).ids
        if empty != [self.bos_id, self.eos_id] or self._tok.encode("", add_special_tokens=False).ids:
            raise CheckpointError(f"{self.path}: post_processor adds {empty} to a sentence; COMET's XLM-R "
                                  f"encoder expects <s> ... </s> ({self.bos_id}, {self.eos_id})")
        vocab = config.get("vocab_size")
        n = self._tok.get_vocab_size(with_added_tokens=True)
        if isinstance(vocab, int) and not isinstance(vocab, bool) and n > vocab:
            raise CheckpointError(f"{self.path}: {n} tokens, more than the encoder's vocab_size {vocab} in "
                                  f"{config_file} (the tokenizer does not belong to this encoder)")

    def encode_flagged(self, texts: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray]:
        """``(ids, truncated)``: per text an int64 array ``<s>`` + its first ``max_length - 2``
        pieces + ``</s>``, and a bool ``[n]`` array, True where pieces were cut off."""
        keep = self.max_length - 2
        out: list[np.ndarray] = []
        cut = np.zeros(len(texts), dtype=bool)
        for k, enc in enumerate(self._tok.encode_batch(list(texts), add_special_tokens=False)):
            pieces = enc.ids
            if len(pieces) > keep:
                cut[k] = True
                pieces = pieces[:keep]
            a = np.empty(len(pieces) + 2, dtype=np.int64)
            a[0], a[-1] = self.bos_id, self.eos_id
            a[1:-1] = pieces
            out.append(a)
        return out, cut

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text an int64 array of at most ``max_length`` ids: ``<s>`` + the first
        ``max_length - 2`` pieces + ``</s>``, what COMET's ``prepare_sample`` feeds the encoder
        (without its padding)."""
        return self.encode_flagged(texts)[0]

    def joint(self, mt_ids: Sequence[np.ndarray], src_ids: Sequence[np.ndarray]) -> list[np.ndarray]:
        """``unified_metric``'s joint inputs from :meth:`encode`'s ids of the translations and the
        sources (pairwise): int64 ``<s> mt </s></s> src </s>``, pad ids removed, at most
        ``max_positions`` ids (see the module notes for the cut)."""
        if len(mt_ids) != len(src_ids):
            raise ValueError(f"joint: {len(mt_ids)} translations but {len(src_ids)} sources")
        head = np.array([self.bos_id], dtype=np.int64)
        mid = np.array([self.eos_id, self.eos_id], dtype=np.int64)
        tail = mid[:1]
        out = []
        for mt, src in zip(mt_ids, src_ids):
            mt = mt[mt != self.pad_id][1:-1]
            src = src[src != self.pad_id][1:-1]
            seq = np.concatenate([head, mt, mid, src, tail]).astype(np.int64, copy=False)
            if len(mt) + len(src) > self.max_positions - 5:  # 1 + 2 * size_separator, as COMET counts
                seq = seq[:self.max_positions]
            out.append(seq)
        return out


def load_comet_tokenizer(files: CometModelFiles) -> CometTokenizer:
    """The tokenizer of a resolved COMET model (:func:`~.model.resolve_comet_model`): its encoder
    folder's ``tokenizer.json``, else its ``sentencepiece.bpe.model`` (``microsoft/infoxlm-large``)
    converted as transformers 4.x does, with the folder's ``config.json``."""
    tf = files.tokenizer_file or files.encoder_folder / "sentencepiece.bpe.model"
    return CometTokenizer(tf, files.config, config_file=files.encoder_folder / "config.json")


def unique_texts(*columns: Sequence[str]) -> tuple[list[str], list[np.ndarray]]:
    """The distinct texts of all ``columns`` (sources, references, each system's translations) in
    first-seen order, and per column an int64 ``[len(column)]`` array of positions in that list:
    ``columns[c][i] == texts[index[c][i]]``. Each distinct text is then encoded once."""
    seen: dict[str, int] = {}
    index = []
    for col in columns:
        idx = np.empty(len(col), dtype=np.int64)
        for i, t in enumerate(col):
            j = seen.get(t)
            if j is None:
                j = seen[t] = len(seen)
            idx[i] = j
        index.append(idx)
    return list(seen), index


def unique_pairs(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, index)``: the distinct ``(first[i], second[i])`` pairs as int64 ``[k, 2]`` (sorted)
    and int64 ``[n]`` with ``pairs[index[i]] == (first[i], second[i])``; for the joint input of
    ``unified_metric``, which is encoded once per distinct (translation, source) pair."""
    a = np.asarray(first, dtype=np.int64)
    b = np.asarray(second, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"unique_pairs: shapes {a.shape} and {b.shape}; expected two equal 1-d arrays")
    if not len(a):
        return np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.int64)
    pairs, index = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)
    return pairs.astype(np.int64, copy=False), index.reshape(-1).astype(np.int64, copy=False)


def length_batches(lengths: np.ndarray, batch_tokens: int = DEFAULT_BATCH_TOKENS,
                   max_rows: int = MAX_BATCH_ROWS) -> list[np.ndarray]:
    """Index batches (int64 arrays): longest sequence first (ties in input order), each with
    ``rows x its longest <= batch_tokens`` and at most ``max_rows`` rows (always at least one)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    out, i, n = [], 0, len(order)
    while i < n:
        longest = int(lengths[order[i]])
        rows = max(1, min(max_rows, batch_tokens // max(longest, 1)))
        out.append(order[i:i + rows])
        i += rows
    return out


@dataclass(frozen=True)
class Batch:
    """One encoder call: ``rows`` int64 ``[B]`` (positions in the sequence list given to
    :func:`padded_batches`), ``input_ids`` int64 ``[B, T]`` padded with the pad id, and
    ``attention_mask`` int64 ``[B, T]`` (1 on each sequence's ids, 0 on padding); T is the longest."""

    rows: np.ndarray
    input_ids: np.ndarray
    attention_mask: np.ndarray


def padded_batches(ids: Sequence[np.ndarray], pad_id: int, *, batch_tokens: int = DEFAULT_BATCH_TOKENS,
                   max_rows: int = MAX_BATCH_ROWS) -> Iterator[Batch]:
    """The sequences ``ids`` (e.g. :meth:`CometTokenizer.encode` of :func:`unique_texts`, or
    :meth:`CometTokenizer.joint`) in :func:`length_batches` order, each batch padded."""
    lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
    for b in length_batches(lengths, batch_tokens, max_rows):
        inp, mask, _ = pad_batch(ids, b, lengths, pad_id)
        yield Batch(b, inp, mask)


def _read_json_object(path: Path, *, required: bool) -> dict:
    if not path.is_file():
        if required:
            raise CheckpointError(f"{path}: missing")
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path}: not a readable JSON file ({e})") from None
    if not isinstance(found, dict):
        if required:
            raise CheckpointError(f"{path}: expected a JSON object, got {type(found).__name__}")
        return {}
    return found
