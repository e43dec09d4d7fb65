"""Scores of token-id batches, as a decoder produces them (n-best lists, samples, RL rollouts).

Two modes:

* **id mode** (:func:`id_sentence_scores`, :func:`id_corpus_score`; BLEU and TER): every id is
  one token. The numbers equal sacrebleu 2.6.0 on the ids written as space-separated decimal
  numbers (``" ".join(map(str, ids))``) with ``tokenize="none"`` for BLEU (every smoothing
  method, ``effective_order``, ``max_ngram_order``) and any TER options. No text is built: the
  CSR id arrays go straight into the compiled kernels.
* **text mode** (:func:`text_sentence_scores`, :func:`text_corpus_score`; any metric): ids are
  decoded with a vocabulary's own decoder (``mtscore.engine.id_text``) and scored as text, so
  chrF/chrF++ and BLEU with a real tokenizer see words, not ids; equal to sacrebleu on the
  decoded text.

Inputs (``hyps``, ``refs``): anything :func:`mtscore.engine.token_ids.as_token_ids` takes
(lists of id lists, :class:`TokenIds`, padded 2-D numpy/torch arrays with ``pad_id`` or
``*_lengths``, pyarrow list arrays, ``__dlpack__`` / ``__array__`` objects). ``refs`` is one
batch of R sequences: by default R == N (reference i for hypothesis i); ``ref_groups`` (int64
(N + 1,), CSR offsets into refs) gives hypothesis i the references
``refs[ref_groups[i]:ref_groups[i + 1]]`` (e.g. ``np.arange(0, 4 * N + 1, 4)`` for 4 each). In
text mode ``refs`` may also be a list of R strings (used as they are).

>>> import numpy as np
>>> from mtscore.bindings.decoder.token_scores import id_sentence_scores
>>> id_sentence_scores([[5, 6, 7, 8]], [[5, 6, 7, 9]], "bleu", effective_order=True)
array([59.46035575])
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...engine.id_scoring import id_metric, id_stats_and_scores, reference_groups
from ...engine.id_text import load_vocabulary
from ...engine.metrics.base import Metric, Score
from ...engine.metrics.registry import make_metric, sentence_options
from ...engine.token_ids import TokenIds, as_token_ids

__all__ = [
    "decode_ids",
    "grouped_ref_streams",
    "id_corpus_score",
    "id_sentence_scores",
    "id_stats",
    "text_corpus_score",
    "text_sentence_scores",
    "text_stats_and_scores",
]


def _id_inputs(hyps, refs, pad_id, hyp_lengths, ref_lengths) -> tuple[TokenIds, TokenIds]:
    h = as_token_ids(hyps, pad_id=pad_id if hyp_lengths is None else None, lengths=hyp_lengths,
                     what="hyps")
    r = as_token_ids(refs, pad_id=pad_id if ref_lengths is None else None, lengths=ref_lengths,
                     what="refs")
    return h, r


def _corpus(metric: Metric, stats: np.ndarray) -> Score:
    if len(stats) == 0:
        raise ValueError(f"{type(metric).__name__}: empty batch (no hypotheses): there is nothing "
                         "to score")
    return metric.compute_score_from_stats(metric.sum_stats(stats))


# ---- id mode --------------------------------------------------------------------------------
def id_stats(hyps, refs, metric: str | Metric = "bleu", *, ref_groups=None,
             pad_id: int | None = None, hyp_lengths=None, ref_lengths=None,
             **options) -> np.ndarray:
    """Per-hypothesis sufficient statistics in id mode: BLEU int64 ``(N, 2 + 2 * order)``
    ``[hyp_len, ref_len, correct_1.., total_1..]``, TER float64 ``(N, 2)`` ``[edits,
    avg_ref_len]`` (additive: sum rows to combine batches)."""
    m = id_metric(metric, **options)
    h, r = _id_inputs(hyps, refs, pad_id, hyp_lengths, ref_lengths)
    return id_stats_and_scores(m, h, r, ref_groups, sentence_level=False)[0]


def id_sentence_scores(hyps, refs, metric: str | Metric = "bleu", *, ref_groups=None,
                       pad_id: int | None = None, hyp_lengths=None, ref_lengths=None,
                       **options) -> np.ndarray:
    """Sentence BLEU or TER of each hypothesis, float64 ``(N,)``: ``out[i]`` equals
    ``sacrebleu.BLEU(tokenize="none", effective_order=True, **options).sentence_score(h_i,
    refs_i).score`` on the space-joined ids (TER: ``sacrebleu.TER(**options)``); sentence BLEU
    uses effective order unless ``options`` say ``effective_order=False``.

    metric  : "bleu" (``tokenize="none"`` unless ``options`` says otherwise; "none", "13a" and
              "intl" leave ids alone), "ter", or a configured ``BLEU`` / ``TER`` object
    options : constructor arguments when ``metric`` is a name (``smooth_method``,
              ``effective_order``, ``max_ngram_order``, ``workers``, ``missing_refs``, ...)
    pad_id, hyp_lengths, ref_lengths : for padded 2-D inputs (see ``as_token_ids``)

    A hypothesis without reference (``ref_groups`` gives it none) raises, or with
    ``missing_refs="skip"`` gets NaN.
    """
    m = id_metric(metric, **(sentence_options(metric, options) if isinstance(metric, str) else options))
    h, r = _id_inputs(hyps, refs, pad_id, hyp_lengths, ref_lengths)
    scores = id_stats_and_scores(m, h, r, ref_groups, sentence_level=True)[1]
    assert scores is not None
    return scores


def id_corpus_score(hyps, refs, metric: str | Metric = "bleu", *, ref_groups=None,
                    pad_id: int | None = None, hyp_lengths=None, ref_lengths=None,
                    **options) -> Score:
    """Corpus BLEU / TER of the batch (a ``BLEUScore`` / ``TERScore``), equal to sacrebleu's
    ``corpus_score`` on the space-joined ids (several references per hypothesis: reference
    streams padded with None, sacrebleu's variable-reference form)."""
    m = id_metric(metric, **options)
    h, r = _id_inputs(hyps, refs, pad_id, hyp_lengths, ref_lengths)
    return _corpus(m, id_stats_and_scores(m, h, r, ref_groups, sentence_level=False)[0])


# ---- text mode ------------------------------------------------------------------------------
def decode_ids(ids, vocab: Any, *, rule: str | None = None, skip_ids=(),
               pad_id: int | None = None, lengths=None, what: str = "ids") -> list[str]:
    """Token-id sequences -> N strings with ``vocab``'s own decoder (a tokenizers / transformers
    tokenizer, a tokenizer.json or SentencePiece .model path, a SentencePieceProcessor, or a
    list of pieces with a ``rule``; see ``mtscore.engine.id_text``)."""
    return load_vocabulary(vocab, rule=rule, skip_ids=skip_ids).decode(
        as_token_ids(ids, pad_id=pad_id, lengths=lengths, what=what))


def _is_text_batch(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return len(x) > 0 and all(isinstance(s, str) for s in x)
    dtype = getattr(x, "dtype", None)
    return (dtype is not None and getattr(dtype, "kind", None) in ("U", "S")) or str(dtype) in ("string", "large_string")


def grouped_ref_streams(refs: Sequence[str | None], n: int,
                        ref_groups=None) -> list[list[str | None]]:
    """R reference strings grouped per hypothesis (CSR ``ref_groups``, default one each) ->
    K = max K_i reference streams of N strings, None where a hypothesis has fewer (sacrebleu's
    ``refs[k][i]`` layout)."""
    groups = reference_groups(n, len(refs), ref_groups)
    counts = np.diff(groups)
    if n and int(counts.min()) == int(counts.max()) == 1:
        return [list(refs)]
    k_max = int(counts.max()) if n else 0
    g = groups.tolist()
    return [[refs[g[i] + k] if g[i] + k < g[i + 1] else None for i in range(n)]
            for k in range(max(k_max, 1))]


def _text_metric(metric: str | Metric, options: dict, sentence_level: bool) -> Metric:
    if isinstance(metric, str):  # sentence scores: BLEU with effective order unless told otherwise
        return make_metric(metric, **(sentence_options(metric, options) if sentence_level else options))
    if options:
        raise TypeError(f"metric options {sorted(options)} given with a metric object; set them "
                        "on the object")
    return metric


def text_stats_and_scores(hyps: list[str], refs: Sequence[str | None],
                          metric: str | Metric = "chrf", *, ref_groups=None,
                          sentence_level: bool = True, **options) -> tuple[Metric, np.ndarray, np.ndarray | None]:
    """``(metric object, stats, sentence scores or None)`` of N hypothesis strings against R
    reference strings grouped by ``ref_groups`` (default one each), through the metric's batch
    path (references prepared once, one kernel pass)."""
    m = _text_metric(metric, options, sentence_level)
    streams = grouped_ref_streams(refs, len(hyps), ref_groups)
    stats, scores = m.stats_and_scores(hyps, m.prepare(streams), sentence_level)
    return m, stats, scores


def _text_inputs(hyps, refs, vocab, rule, skip_ids, pad_id, hyp_lengths, ref_lengths):
    dec = load_vocabulary(vocab, rule=rule, skip_ids=skip_ids)
    h = dec.decode(as_token_ids(hyps, pad_id=pad_id if hyp_lengths is None else None,
                                lengths=hyp_lengths, what="hyps"))
    if _is_text_batch(refs):
        r: list[str | None] = [str(s) for s in refs]
    else:
        r = list(dec.decode(as_token_ids(refs, pad_id=pad_id if ref_lengths is None else None,
                                         lengths=ref_lengths, what="refs")))
    return h, r


def text_sentence_scores(hyps, refs, metric: str | Metric = "chrf", *, vocab: Any,
                         rule: str | None = None, skip_ids=(), ref_groups=None,
                         pad_id: int | None = None, hyp_lengths=None, ref_lengths=None,
                         **options) -> np.ndarray:
    """Sentence scores float64 ``(N,)`` of id hypotheses decoded with ``vocab`` (``refs``: ids
    decoded the same way, or R strings), equal to sacrebleu's ``sentence_score`` on the decoded
    text. ``metric``: "bleu", "chrf", "chrf++", "ter" (``options`` = constructor arguments) or
    a metric object."""
    h, r = _text_inputs(hyps, refs, vocab, rule, skip_ids, pad_id, hyp_lengths, ref_lengths)
    scores = text_stats_and_scores(h, r, metric, ref_groups=ref_groups, **options)[2]
    assert scores is not None
    return scores


def text_corpus_score(hyps, refs, metric: str | Metric = "chrf", *, vocab: Any,
                      rule: str | None = None, skip_ids=(), ref_groups=None,
                      pad_id: int | None = None, hyp_lengths=None, ref_lengths=None,
                      **options) -> Score:
    """Corpus score of id hypotheses decoded with ``vocab`` (see :func:`text_sentence_scores`)."""
    h, r = _text_inputs(hyps, refs, vocab, rule, skip_ids, pad_id, hyp_lengths, ref_lengths)
    m, stats, _ = text_stats_and_scores(h, r, metric, ref_groups=ref_groups,
                                        sentence_level=False, **options)
    return _corpus(m, stats)
