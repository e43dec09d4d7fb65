"""Reward functions for RL fine-tuning (TRL's ``GRPOTrainer`` / ``RLOOTrainer`` contract).

``reward_fn(metric, reference_column, scale, **metric_options)`` returns
``fn(completions, **columns) -> list[float]``, called the way TRL calls a reward function::

    fn(prompts=[...], completions=[...], completion_ids=[[...], ...], <dataset columns>=[...],
       trainer_state=...)

* ``completions``: B = (prompts x G samples) items, each a string, a chat completion (a list of
  ``{"role", "content"}`` messages: the last message's content is scored), or a sequence of
  token ids (id mode: BLEU/TER with one token per id, or any metric when ``vocab`` is given,
  which decodes the ids first). ``use_completion_ids=True`` scores ``columns["completion_ids"]``
  (what TRL passes) instead of the text.
* ``columns[reference_column]``: a list with one item per completion (TRL passes every dataset
  column this way, repeating a prompt's row for each of its G samples): a reference string, or a
  list of reference strings (several references); in id mode a sequence of ids, or a list of
  such sequences. A single string is not broadcast: it raises a TypeError naming the column
  (``list("xy")`` would otherwise score each completion against one character); for one
  reference shared by the batch pass ``[ref] * len(completions)``.
* every other keyword (``prompts``, ``trainer_state``, other columns) is ignored.

The whole batch is scored in one call of the metric's batch path (references prepared once,
one kernel pass), never a Python loop per sample. Returns ``scale * score`` per completion:
``scale=0.01`` (the default) maps BLEU / chrF / chrF++ to [0, 1]; ``scale=1.0`` keeps sacrebleu's
0-100 numbers. Error rates (TER, WER, ...: ``metric.lower_is_better``) give ``-scale * rate``.

Runnable example (no trainer needed)::

    >>> from mtscore.bindings.decoder.rewards import reward_fn
    >>> chrf = reward_fn("chrf", reference_column="reference")
    >>> chrf(prompts=["Translate: Hallo Welt", "Translate: Hallo Welt"],
    ...      completions=["Hello world", "Hi world"],
    ...      reference=["Hello world", "Hello world"])
    [1.0, 0.33668459708285925]
    >>> # with TRL:  GRPOTrainer(model=..., reward_funcs=[chrf], train_dataset=ds)  where ds has
    >>> # a "prompt" column and a "reference" column
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable

import numpy as np

from ...engine.id_scoring import id_metric, id_stats_and_scores
from ...engine.id_text import load_vocabulary
from ...engine.metrics.base import Metric
from ...engine.metrics.registry import make_sentence_metric, sentence_options
from ...engine.token_ids import as_token_ids
from .token_scores import text_stats_and_scores

__all__ = ["reward_fn"]


def _completion_text(c: Any, i: int) -> str | None:
    """The text of completion ``i`` (a str or chat messages), or None when it is token ids."""
    if isinstance(c, str):
        return c
    if isinstance(c, (list, tuple)) and c and isinstance(c[-1], dict):
        content = c[-1].get("content")
        if isinstance(content, str):
            return content
        raise TypeError(f"completions[{i}]: the last message has no string 'content' "
                        f"(keys: {sorted(c[-1])})")
    if isinstance(c, dict):
        raise TypeError(f"completions[{i}] is a dict; a chat completion is a list of messages "
                        "[{'role': 'assistant', 'content': ...}]")
    return None


def _is_ids(x: Any) -> bool:
    """A single id sequence (not text, not a list of sequences)."""
    if isinstance(x, (str, bytes)):
        return False
    if hasattr(x, "ndim"):
        return x.ndim == 1
    if isinstance(x, (list, tuple)):
        return len(x) == 0 or isinstance(x[0], (int, np.integer))
    return False


def _flatten_refs(refs: Sequence[Any], n: int, ids: bool, column: str) -> tuple[list, np.ndarray]:
    """Per-completion references (one, or a list of several) -> (R flat references, int64
    (N + 1,) group offsets)."""
    if len(refs) != n:
        raise ValueError(f"reward: {len(refs)} values in column {column!r} for {n} completions; "
                         "the trainer passes one per completion (repeated for each sample of a prompt)")
    flat: list = []
    groups = np.zeros(n + 1, dtype=np.int64)
    for i, r in enumerate(refs):
        single = _is_ids(r) if ids else isinstance(r, str)
        if single:
            flat.append(r)
        elif isinstance(r, (list, tuple)):
            for x in r:
                if (not _is_ids(x)) if ids else (not isinstance(x, str)):
                    kind = "a sequence of token ids" if ids else "a string"
                    raise TypeError(f"reward: {column}[{i}] holds a {type(x).__name__}; each "
                                    f"reference must be {kind}")
            flat.extend(r)
        else:
            kind = "token ids (or a list of id sequences)" if ids else "a string (or a list of strings)"
            raise TypeError(f"reward: {column}[{i}] is a {type(r).__name__}; expected {kind}")
        groups[i + 1] = len(flat)
    return flat, groups


def _column(values: Any, column: str) -> list:
    """A dataset column as TRL passes it (one item per completion) as a list. A single string
    (or bytes, or a mapping) is refused: ``list()`` would split it into characters (or keys)
    and score each completion against one of them."""
    if isinstance(values, (str, bytes, bytearray)):
        hint = ("wrap a single completion as [text]" if column == "completions" else
                f"pass {column}=[ref] * len(completions) for one reference shared by the batch")
        raise TypeError(
            f"reward: {column} is a single {type(values).__name__}; TRL passes {column} as a "
            f"list with one item per completion; {hint}")
    if isinstance(values, Mapping):
        raise TypeError(f"reward: {column} is a {type(values).__name__}; expected a list with one "
                        "reference (or list of references) per completion")
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"reward: {column} is a {type(values).__name__}; expected a list with "
                        "one reference (or list of references) per completion") from None


def _completion_texts(comps: list[Any]) -> list[str] | None:
    """The texts of the completions, or None when they are all token ids (a mix is an error)."""
    texts = [_completion_text(c, i) for i, c in enumerate(comps)]
    if comps and all(t is None for t in texts):
        return None
    bad = next((i for i, t in enumerate(texts) if t is None), None)
    if bad is not None:
        raise TypeError(f"reward: completions[{bad}] is a {type(comps[bad]).__name__} "
                        "among text completions")
    return [t for t in texts if t is not None]


def reward_fn(metric: str | Metric = "chrf", reference_column: str = "reference",
              scale: float = 0.01, *, vocab: Any = None, use_completion_ids: bool = False,
              **metric_options) -> Callable[..., list[float]]:
    """A reward function ``fn(completions, **columns) -> list[float]`` (see the module docstring
    for the call contract). ``metric``: "chrf", "chrf++", "bleu", "ter" (with
    ``metric_options`` as constructor arguments; sentence BLEU uses ``effective_order=True``
    unless they say otherwise) or a metric object. ``vocab``: decode id completions/references with it and score
    the text (any metric). Errors in the options are raised here, not at the first batch."""
    name = metric if isinstance(metric, str) else type(metric).__name__.lower()
    # by name, sentence defaults: BLEU with effective order unless metric_options say otherwise
    text_metric = make_sentence_metric(metric, **metric_options) if isinstance(metric, str) else metric
    decoder = load_vocabulary(vocab) if vocab is not None else None
    id_mode_metric: list[Any] = []  # built on first use (only BLEU / TER have an id mode)
    sign = -1.0 if text_metric.lower_is_better else 1.0

    def score_ids(hyps: Any, refs: Sequence[Any]) -> np.ndarray:
        h = as_token_ids(hyps, what="completions")
        flat, groups = _flatten_refs(refs, len(h), True, reference_column)
        r = as_token_ids(flat, what=reference_column)
        if decoder is not None:
            return score_text(decoder.decode(h), decoder.decode(r), groups)
        if not id_mode_metric:
            id_mode_metric.append(id_metric(metric, **sentence_options(metric, metric_options))
                                  if isinstance(metric, str)
                                  else id_metric(metric))
        scores = id_stats_and_scores(id_mode_metric[0], h, r, groups)[1]
        assert scores is not None
        return scores

    def score_text(hyps: list[str], flat: list, groups: np.ndarray) -> np.ndarray:
        scores = text_stats_and_scores(hyps, flat, text_metric, ref_groups=groups)[2]
        assert scores is not None
        return scores

    def fn(completions: Sequence[Any] | None = None, **columns: Any) -> list[float]:
        if reference_column not in columns:
            raise KeyError(f"reward: no {reference_column!r} column among the keyword arguments "
                           f"({', '.join(sorted(columns)) or 'none'}); pass "
                           "reference_column= the dataset column holding the references")
        refs = _column(columns[reference_column], reference_column)
        if use_completion_ids:
            if "completion_ids" not in columns:
                raise KeyError("reward: use_completion_ids=True but no completion_ids were passed")
            scores = score_ids(columns["completion_ids"], refs)
        else:
            if completions is None:
                raise TypeError("reward: no completions given")
            comps = _column(completions, "completions")
            texts = _completion_texts(comps)
            if texts is None:
                scores = score_ids(comps, refs)
            else:
                flat, groups = _flatten_refs(refs, len(texts), False, reference_column)
                scores = score_text(texts, flat, groups)
        return (sign * scale * scores).tolist()

    fn.__name__ = f"{name}_reward"
    fn.__qualname__ = fn.__name__
    return fn
