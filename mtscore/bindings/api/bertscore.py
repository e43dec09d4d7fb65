"""bert_score's ``score()`` on mtscore's ONNX engine: the same arguments, defaults and numbers.

``score(cands, refs, lang="en")`` picks bert_score's model for the language and its tuned layer,
finds the model in the Hugging Face cache (or downloads it), and returns P, R, F as float64 numpy
arrays (bert_score returns float32 torch tensors of the same values). The result also carries
bert_score's hash string (``result.hash``) next to mtscore's signature (``result.signature``).

Differences, all deliberate:

* a missing baseline file raises ``FileNotFoundError`` (bert_score prints a warning and returns
  unscaled scores, which are easy to mistake for rescaled ones);
* ``all_layers=True`` is not supported (one layer per encoder export);
* the tokenizer is always the model's ``tokenizer.json`` (bert_score's ``use_fast_tokenizer=True``):
  identical ids to bert_score's default slow tokenizer for WordPiece models (BERT, MiniLM), not
  always for byte-level BPE (RoBERTa) where the two HF tokenizers themselves differ;
* scores do not depend on ``batch_size`` (bert_score's padding quirk is off; see ``INVARIANCE_TOL``);
* ``device=None`` uses CUDA when onnxruntime-gpu offers it (in fp32, as bert_score), else the CPU;
  the CUDA path has not been checked against bert_score on a GPU yet;
* segments over the model's length are cut as bert_score cuts them, but with a warning giving the
  counts; ``long_inputs="window"`` scores them whole instead.
"""
from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata

from ...engine.bertscore import BERTScore, BERTScoreResult
from ...engine.encoder.bert_score_defaults import bert_score_defaults

__all__ = ["BERT_SCORE_VERSION", "bert_score_hash", "score"]

#: the ``__version__`` that bert_score 0.3.13 (the release mtscore reproduces) reports in its hash
BERT_SCORE_VERSION = "0.3.12"

_ENCODERS: dict[tuple, object] = {}  # the last encoder loaded: one model load for repeated calls


def bert_score_hash(model_type: str, num_layers: int, idf: bool, rescale_with_baseline: bool,
                    custom_baseline: bool, use_fast_tokenizer: bool = False) -> str:
    """bert_score's ``get_hash`` string, e.g. ``roberta-large_L17_no-idf_version=0.3.12(hug_trans=4.57.6)``.
    ``hug_trans`` is the installed transformers version (``none`` without transformers: mtscore
    does not use it, the string says which bert_score set-up gives the same numbers)."""
    try:
        trans = metadata.version("transformers")
    except metadata.PackageNotFoundError:
        trans = "none"
    msg = f"{model_type}_L{num_layers}{'_idf' if idf else '_no-idf'}_version={BERT_SCORE_VERSION}(hug_trans={trans})"
    if rescale_with_baseline:
        msg += "-custom-rescaled" if custom_baseline else "-rescaled"
    if use_fast_tokenizer:
        msg += "_fast-tokenizer"
    return msg


def _streams(refs: Sequence) -> list[list[str | None]]:
    """bert_score's refs (N strings, or N lists of strings of any lengths) as K streams of N,
    ``None`` where a segment has fewer references."""
    if len(refs) == 0 or isinstance(refs[0], str):
        return [list(refs)]
    groups = [[g] if isinstance(g, str) else list(g) for g in refs]
    k = max(len(g) for g in groups)
    if min(len(g) for g in groups) == 0:
        i = next(i for i, g in enumerate(groups) if not g)
        raise ValueError(f"refs[{i}]: an empty reference group; every candidate needs a reference")
    return [[g[j] if j < len(g) else None for g in groups] for j in range(k)]


def score(cands: Sequence[str], refs: Sequence[str | Sequence[str]], model_type: str | None = None,
          num_layers: int | None = None, verbose: bool = False, idf: bool | dict = False,
          device: str | None = None, batch_size: int = 64, nthreads: int = 4, all_layers: bool = False,
          lang: str | None = None, return_hash: bool = False, rescale_with_baseline: bool = False,
          baseline_path: str | None = None, use_fast_tokenizer: bool = False, *,
          revision: str | None = None, long_inputs: str = "truncate", cache_dir: str | None = None,
          threads: int | None = None) -> BERTScoreResult | tuple[tuple, str]:
    """BERTScore of ``cands`` (N strings) against ``refs`` (N strings, or N lists of references:
    each candidate takes its best reference, per metric), with bert_score's arguments.

    ``model_type``: a bert_score model name, a Hugging Face name or a local directory / .onnx file;
    default: bert_score's model for ``lang`` (one of the two is required, as in bert_score).
    ``num_layers``: default bert_score's tuned layer for the model (the last layer for models not
    in its table). ``rescale_with_baseline`` needs ``lang``; the baseline is ``baseline_path`` or
    bert_score's file for ``lang`` and ``model_type`` (needs bert-score installed). ``device``:
    None = CUDA when onnxruntime-gpu has it, else CPU. ``batch_size``: most sentences per
    encoder call (memory only). ``nthreads`` is accepted and unused (tokenising is native code);
    ``threads``: ONNX Runtime threads. ``revision``: Hub branch, tag or commit of the model.

    Returns a :class:`BERTScoreResult`, which unpacks as ``P, R, F`` (float64 ``[N]``) and holds
    ``hash`` and ``signature``; with ``return_hash=True``, ``((P, R, F), hash)`` like bert_score.
    """
    if len(cands) != len(refs):
        raise ValueError(f"{len(cands)} candidates but {len(refs)} references; they must pair up")
    if lang is None and model_type is None:
        raise ValueError("pass lang= (bert_score's model for that language) or model_type=")
    if rescale_with_baseline and lang is None:
        raise ValueError("rescale_with_baseline=True needs lang= (bert_score's baselines are per language)")
    if all_layers:
        raise ValueError("all_layers=True is not supported by mtscore: score one layer (num_layers=) per call")
    model, layer = bert_score_defaults(model_type, lang, num_layers)
    rescale: bool | str | None = None
    if rescale_with_baseline:
        rescale = baseline_path if baseline_path is not None else True
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size={batch_size!r}: must be a positive number of sentences")
    encoder = _encoder(model, layer, device, revision, cache_dir, threads)
    scorer = BERTScore(model=model, lang=lang, encoder=encoder, idf=idf, rescale_baseline=rescale,
                       long_inputs=long_inputs, batch_size=batch_size, progress=True if verbose else None)
    result = scorer.score(list(cands), _streams(refs))
    assert model is not None
    result.hash = bert_score_hash(model, scorer.layer, bool(idf), bool(rescale_with_baseline),
                                  baseline_path is not None, use_fast_tokenizer)
    if return_hash:
        return (result.precision, result.recall, result.f1), result.hash
    return result


def _encoder(model, layer, device, revision, cache_dir, threads):
    """The encoder for this configuration, loaded once per session (the last one is kept)."""
    from ...engine.encoder import load_encoder

    key = (model, layer, device, revision, cache_dir, threads)
    enc = _ENCODERS.get(key)
    if enc is None:
        _ENCODERS.clear()  # one model in memory at a time
        # fp32 on every device: bert_score computes in fp32, and its numbers are the contract here
        enc = _ENCODERS[key] = load_encoder(model, layer, device=device or "auto", threads=threads,
                                            cache_dir=cache_dir, revision=revision, precision="fp32")
    return enc
