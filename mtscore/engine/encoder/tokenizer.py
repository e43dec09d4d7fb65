"""bert_score-compatible tokenisation with Hugging Face ``tokenizers`` (no transformers, no torch).

bert_score (``utils.sent_encode``) strips the sentence, adds the special tokens and truncates to
``tokenizer.model_max_length`` keeping them; ``""`` becomes ``[CLS][SEP]``. Many ``tokenizer.json``
files carry a baked-in truncation/padding (sentence-transformers saves ``Fixed 128``), which is
switched off here: no padding, truncation at ``model_max_length``.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..missing_extra import install_hint
from .model_dir import EncoderError

_SENTINEL_LIMIT = 1_000_000  # HF writes 1e30 when a tokenizer has no model_max_length


class Tokenizer:
    """Token ids for sentences, exactly as bert_score's ``sent_encode`` produces them.

    Attributes: ``cls_id``, ``sep_id``, ``pad_id`` (int), ``max_length`` (int), ``vocab_size`` (int).
    """

    def __init__(self, tokenizer_dir: Path, config: dict | None = None):
        try:
            import tokenizers
        except ImportError:
            raise EncoderError(f"BERTScore needs tokenizers: {install_hint('bertscore')}") from None
        tokenizer_dir = Path(tokenizer_dir)
        tj = tokenizer_dir / "tokenizer.json"
        if not tj.is_file():
            raise EncoderError(
                f"--model: {tj}: missing. mtscore reads the fast-tokenizer file only; copy the model's "
                "tokenizer.json there, or create it once with "
                f"`python -c \"from transformers import AutoTokenizer; AutoTokenizer.from_pretrained('{tokenizer_dir}')"
                f".save_pretrained('{tokenizer_dir}')\"` (needs transformers and the model's vocabulary files)")
        config = config or {}
        spec = _read_spec(tj)
        mtype = config.get("model_type", "")
        pre = spec.get("pre_tokenizer") or {}
        # bert_score passes add_prefix_space=True to GPT-2/RoBERTa (byte-level BPE) tokenizers.
        if mtype in ("roberta", "gpt2", "bart", "longformer") and pre.get("type") == "ByteLevel":
            pre["add_prefix_space"] = True
        spec["truncation"] = None
        spec["padding"] = None
        try:
            self._tok = tokenizers.Tokenizer.from_str(json.dumps(spec))
        except Exception as e:  # the Rust side raises a bare Exception
            raise EncoderError(f"--model: {tj}: not a valid tokenizer.json ({e})") from None
        tcfg = _read_json(tokenizer_dir / "tokenizer_config.json")
        stm = _read_json(tokenizer_dir / "special_tokens_map.json")
        max_len = tcfg.get("model_max_length")
        if not isinstance(max_len, (int, float)) or max_len > _SENTINEL_LIMIT:
            # bert_score would crash here (issues #135/#205); use the model's position limit.
            mpe = int(config.get("max_position_embeddings", 512))
            if mtype in ("roberta", "xlm-roberta", "camembert"):
                mpe -= int(config.get("pad_token_id", 1)) + 1
            max_len = min(mpe, 512)
        self.max_length = int(max_len)
        # an untruncated twin for the sliding window (long segments scored whole)
        self._full = tokenizers.Tokenizer.from_str(self._tok.to_str())
        self._full.no_truncation()
        self._tok.enable_truncation(self.max_length)

        def special(name: str, fallback: Sequence[str]) -> int | None:
            for src in (stm, tcfg):
                v = src.get(name)
                if isinstance(v, dict):
                    v = v.get("content")
                if isinstance(v, str) and self._tok.token_to_id(v) is not None:
                    return self._tok.token_to_id(v)
            for s in fallback:
                if self._tok.token_to_id(s) is not None:
                    return self._tok.token_to_id(s)
            return None

        self.cls_id = special("cls_token", ["[CLS]", "<s>"])
        self.sep_id = special("sep_token", ["[SEP]", "</s>"])
        pad = special("pad_token", ["[PAD]", "<pad>"])
        cfg_pad = config.get("pad_token_id")
        self.pad_id = int(cfg_pad) if cfg_pad is not None else (pad if pad is not None else 0)
        self.vocab_size = max(int(config.get("vocab_size", 0)), self._tok.get_vocab_size(with_added_tokens=True))

    def encode(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """int64 id arrays, one per sentence (``strip()`` first, specials added, truncated)."""
        return self.encode_flagged(sentences)[0]

    def encode_flagged(self, sentences: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray]:
        """``(ids, truncated)``: the ids of :meth:`encode` and a bool ``[n]`` array, True where the
        sentence had more than ``max_length`` tokens and was cut (bert_score cuts silently).

        Cheap: the tokenizer keeps what it cut as ``overflowing``; only sentences that came out at
        exactly ``max_length`` tokens are asked."""
        encs = self._tok.encode_batch([s.strip() for s in sentences])
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encs]
        cut = self.max_length
        truncated = np.fromiter((len(x) >= cut and len(e.overflowing) > 0 for x, e in zip(ids, encs)),
                                dtype=bool, count=len(ids))
        return ids, truncated

    def encode_full(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """int64 id arrays like :meth:`encode` but never truncated (for the sliding window)."""
        return [np.asarray(e.ids, dtype=np.int64) for e in self._full.encode_batch([s.strip() for s in sentences])]

    def special_frame(self) -> tuple[int, int]:
        """``(head, tail)``: how many special tokens the tokenizer puts before and after the text
        (1, 1 for ``[CLS] ... [SEP]``); a window of a long segment keeps them around its slice."""
        mask = self._full.encode("a").special_tokens_mask
        head = next((i for i, m in enumerate(mask) if not m), len(mask))
        tail = next((i for i, m in enumerate(reversed(mask)) if not m), 0)
        return head, tail

    def special_weights(self) -> np.ndarray:
        """float64 ``[vocab_size]``: bert_score's no-idf weights (1, and 0 for [CLS]/[SEP] ids)."""
        w = np.ones(self.vocab_size, dtype=np.float64)
        for i in (self.cls_id, self.sep_id):
            if i is not None:
                w[i] = 0.0
        return w


def _read_spec(tj: Path) -> dict:
    try:
        spec = json.loads(tj.read_text(encoding="utf-8"))
    except (ValueError, OSError) as e:
        raise EncoderError(f"--model: {tj}: not a readable JSON file ({e})") from None
    if not isinstance(spec, dict) or "model" not in spec:
        raise EncoderError(f"--model: {tj}: not a tokenizer.json (no 'model' entry); "
                           "save the model's fast tokenizer there")
    return spec


def _read_json(p: Path) -> dict:
    if p.is_file():
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            return {}
    return {}
