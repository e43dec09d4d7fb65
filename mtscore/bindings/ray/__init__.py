"""Scoring on Ray Data: the same numbers as :func:`mtscore.score`, on as many machines as Ray has.

>>> from mtscore.bindings.ray import score_ray
>>> r = score_ray("s3://bucket/segments/", metrics=["bleu", "chrf", "ter"], address="auto")
>>> r.corpus["sysA"]["bleu"].score           # == mtscore.score(...).corpus["sysA"]["bleu"].score

How it works (only the metric contract is used, so every lexical metric works the same way):

* the input (a ``ray.data.Dataset``, or Parquet / JSONL / CSV paths read by Ray) is cut into
  Arrow batches; :class:`BatchScorer` turns a batch into per-segment statistics with the compiled
  kernels. Local Parquet files (a shared file system) are scored by plain Ray tasks that read
  their own row groups (``parquet_tasks``: a fraction of the CPU Ray Data's reader takes);
  other inputs run as Ray Data tasks fused with the read (no copy of the text
  between read and scoring), keeping its metric objects in a per-process cache, so a worker
  process builds them once; ``compute="actors"`` runs it on an actor pool instead. The
  references of a batch are prepared once for all its rows (repeated reference rows, as in a
  long multi-system table, are prepared once each);
* only statistics travel back to the driver: per (test set, system) the integer column sums
  of BLEU/chrF (exact in any order), the float rows of TER (whose mean reference length the
  driver adds in segment order, as sacrebleu does), the whole ``(N, k)`` matrices when they
  are kept for significance tests (``keep_stats=True``) and the sentence scores when they are
  written (``segments=PATH``). Never the text;
* corpus scores come from the summed statistics (``compute_score_from_stats``): bit-identical
  to the single-machine result, including after a worker was killed and its task retried (a
  batch's statistics depend only on its rows);
* bootstrap CIs and paired tests run on the gathered matrices with the same code as locally
  (:meth:`RayScoreResult.compare`, :meth:`RayScoreResult.confidence`), so they equal the local
  results for the same seed.

Ray is an optional dependency (the ``ray`` extra). Its requirements install next to any mtscore
(a clone, an editable install, a wheel) without rebuilding anything:
``pip install "ray[data]>=2.40" aiohttp`` (:data:`PIP_HINT`, read from the installed package's
metadata, says the same). Installing mtscore together with the extra works too:
``pip install ".[ray]"`` in a clone (which rebuilds the kernels), or ``pip install "mtscore[ray]"``
once mtscore is on a package index.

The package, one job per module (imports go down this list): ``score`` (the entry point
:func:`score_ray`), ``result`` (:class:`RayScoreResult`), ``gather`` (the driver folding the
payloads), ``parquet_tasks`` (local Parquet files on plain tasks), ``worker``
(:class:`BatchScorer`), ``digest`` (CRC-32s of reference columns), ``sources`` (inputs as
Datasets), ``cluster`` (importing Ray, connecting, Ray's errors).
"""
from __future__ import annotations

from .cluster import PIP_HINT, check_reachable, connect, require_ray
from .result import RayScoreResult
from .score import score_ray
from .sources import read_dataset, text_dataset
from .worker import DEFAULT_BATCH, BatchScorer

__all__ = [
           "DEFAULT_BATCH",
           "PIP_HINT",
           "BatchScorer",
           "RayScoreResult",
           "check_reachable",
           "connect",
           "read_dataset",
           "require_ray",
           "score_ray",
           "text_dataset",
]
