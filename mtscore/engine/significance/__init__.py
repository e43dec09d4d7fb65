"""Bootstrap confidence intervals and paired significance tests, identical to sacrebleu 2.6.0.

One job per module, imports only downward:

* ``comparison`` -- :func:`compare` / :func:`compare_stats`, the entry points of the paired tests;
* ``segments`` -- tests for metrics whose corpus score is a mean of segment scores (t-test, bootstrap);
* ``paired`` -- paired bootstrap / approximate randomisation on statistics matrices;
* ``resampling`` -- mask draws, exact AR sums, p-value and CI rules, seeds, single-system bootstrap;
* ``adapter`` -- statistics, totals and scores from an mtscore or a sacrebleu metric object;
* ``results`` -- :class:`TestResult`, :class:`ComparisonResult`.

What sacrebleu does (``sacrebleu/significance.py``), and how it is reproduced here:

* Indices and masks are drawn with ``numpy.random.default_rng(seed)`` exactly as sacrebleu
  draws them (``rng.choice(N, size=(S, N))`` is ``rng.integers(0, N, size=(S, N))``; AR masks
  are ``rng.integers(2, size=(T, N), dtype=bool)``), but in chunks of resamples, so memory does
  not grow with ``S * N``. Chunked draws give the same stream (bool chunks are kept to multiples
  of 32 elements, because numpy discards the unused bits of its 32-bit buffer at each call).
* Bootstrap sums: sacrebleu materialises ``float32`` stats ``[idxs]`` (S x N x k) and sums each
  resample with ``.sum(0)``, a sequential float32 accumulation. The compiled kernel
  ``mtscore.kernels._resample.resample_sums`` does the same accumulation, bit for bit, for every
  system and metric at once (their columns side by side).
* AR sums are exact integers (``mask @ stats`` in int64), computed as ``P = mask @ stats`` per
  system; the shuffled pseudo-systems are ``P_bl + (tot_sys - P_sys)`` and ``(tot_bl - P_bl) + P_sys``.
* Scores of resamples: per-row ``metric.compute_score_from_stats`` gives sacrebleu's numbers by
  construction; for BLEU, chrF/chrF++ and TER a vectorised evaluation of the same formulas
  reproduces NumPy's NEP 50 float32 semantics operation by operation (and checks itself against
  the per-row path on every call, falling back to it on any difference).
* The CI rule (``n // 40``), the centred paired-bootstrap statistic and ``p = (c + 1) / (n + 1)``
  are evaluated with the same numpy operations and dtypes as sacrebleu.

Seeds: ``seed=None`` reads ``SACREBLEU_SEED`` (default ``12345``; ``none`` = unseeded, OS entropy);
an explicit ``seed`` overrides it. As in sacrebleu, paired tests give every system a fresh
generator with the same seed (so all systems share the same resamples), and a seed of 0 means
unseeded for the per-system draws.
"""
from __future__ import annotations

from .comparison import compare, compare_stats
from .paired import paired_ar, paired_bootstrap
from .resampling import DEFAULT_SAMPLES, bootstrap_ci, bootstrap_scores, estimate_ci, resolve_seed
from .results import ComparisonResult, TestResult
from .segments import compare_segment_scores, paired_ttest

__all__ = [
    "DEFAULT_SAMPLES",
    "ComparisonResult",
    "TestResult",
    "bootstrap_ci",
    "bootstrap_scores",
    "compare",
    "compare_segment_scores",
    "compare_stats",
    "estimate_ci",
    "paired_ar",
    "paired_bootstrap",
    "paired_ttest",
    "resolve_seed",
]
