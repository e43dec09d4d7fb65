"""Reference aggregation: linear-time MBR utilities that score each hypothesis ONCE against the
(weighted) average n-gram statistics of all pseudo-references, instead of against each of them.

These are *different utilities* from the pairwise ones (the expected value of a metric is not the
metric of the expected statistics), chosen because they cost O(n) instead of O(n^2):

* :func:`aggregate_chrf_scores`: chrF / chrF++ of a hypothesis against the reference n-gram
  counts averaged over the pseudo-references (Vamvas & Sennrich 2024, "Linear-time minimum Bayes
  risk decoding with reference aggregation"; fastChrF's ``aggregate_chrf``). Per order:
  hypothesis n-grams ``t_h``, expected reference n-grams ``sum_j p_j t_j``, matches
  ``sum_g min(c_h(g), sum_j p_j c_j(g))``; then sacrebleu's chrF formula on those (fractional)
  statistics.
* :func:`expected_bleu_scores`: sentence BLEU of a hypothesis against the expected n-gram counts
  (DeNero, Chiang & Knight 2009, "Fast consensus decoding over translation forests"): clipped
  matches ``sum_g min(c_h(g), E[c(g)])`` per order, the hypothesis' own n-gram totals, reference
  length ``sum_j p_j |r_j|``, then sacrebleu's ``compute_bleu`` with the metric's smoothing and
  effective order (fractional statistics).

With a single pseudo-reference (or all identical) both equal the metric's sentence score of the
hypothesis against it, up to float rounding in the weighted sums.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .bleu import BLEU
    from .chrf import CHRF
    from .pairwise import GroupNgrams


def _entry_segments(g: GroupNgrams) -> np.ndarray:
    """The (text, order) segment index of every entry, int64 (E,)."""
    return np.repeat(np.arange(len(g.offsets) - 1, dtype=np.int64), np.diff(g.offsets))


def _expected_and_matches(g: GroupNgrams, n_hyps: int, p: np.ndarray):
    """Texts ``0..n_hyps-1`` of ``g`` are hypotheses, the rest pseudo-references with weights
    ``p``. Returns (expected reference totals float64 (O,), matches float64 (n_hyps, O))."""
    n_orders = g.totals.shape[1]
    seg = _entry_segments(g)
    text = seg // n_orders
    ref_entry = text >= n_hyps
    w = p[text[ref_entry] - n_hyps] * g.counts[ref_entry]
    expected = np.bincount(g.ids[ref_entry], weights=w, minlength=g.n_ids)
    hyp_entry = ~ref_entry
    clipped = np.minimum(g.counts[hyp_entry].astype(np.float64), expected[g.ids[hyp_entry]])
    matches = np.bincount(seg[hyp_entry], weights=clipped, minlength=n_hyps * n_orders).reshape(n_hyps, n_orders)
    # p @ totals would take BLAS's summation order, which varies with the CPU and the BLAS build
    # (the last digit of the utilities moved between machines); each elementwise product is exact
    # IEEE arithmetic and fsum rounds the sum once, the same everywhere
    ref_totals = g.totals[n_hyps:].astype(np.float64)
    exp_totals = np.array([math.fsum((p * ref_totals[:, k]).tolist()) for k in range(n_orders)],
                          dtype=np.float64)
    return exp_totals, matches


def _weights(m: int, weights) -> np.ndarray:
    if weights is None:
        return np.full(m, 1.0 / m)
    p = np.asarray(weights, dtype=np.float64)
    return p / math.fsum(p.tolist())  # not p.sum(): its SIMD pairwise order is build-dependent


def aggregate_chrf_scores(metric: CHRF, hyps: Sequence[str], refs: Sequence[str],
                          weights=None) -> np.ndarray:
    """chrF (the metric's char/word orders, beta, lowercase, whitespace, eps_smoothing) of each
    hypothesis against the averaged n-gram statistics of ``refs`` (weights: their
    probabilities, normalised; None: uniform) -> float64 (n,)."""
    hyps, refs = list(hyps), list(refs)
    g = metric.group_ngram_counts(hyps + refs)
    exp_totals, matches = _expected_and_matches(g, len(hyps), _weights(len(refs), weights))
    out = np.empty(len(hyps), dtype=np.float64)
    row = np.empty(3 * g.totals.shape[1], dtype=np.float64)
    for i in range(len(hyps)):
        row[0::3] = g.totals[i]
        row[1::3] = exp_totals
        row[2::3] = matches[i]
        out[i] = metric.compute_score_from_stats(row).score
    return out


def expected_bleu_scores(metric: BLEU, hyps: Sequence[str], refs: Sequence[str],
                         weights=None) -> np.ndarray:
    """Sentence BLEU (the metric's tokenizer, lowercase, smoothing, effective order) of each
    hypothesis against the expected n-gram counts and expected length of ``refs`` -> float64
    (n,)."""
    hyps, refs = list(hyps), list(refs)
    g = metric.group_ngram_counts(hyps + refs)
    exp_totals, matches = _expected_and_matches(g, len(hyps), _weights(len(refs), weights))
    ref_len = float(exp_totals[0])  # order-1 n-grams of a text = its length
    out = np.empty(len(hyps), dtype=np.float64)
    for i in range(len(hyps)):
        totals: list = g.totals[i].tolist()
        score = metric.compute_bleu(matches[i].tolist(), totals, int(totals[0]),
                                    ref_len,  # type: ignore[arg-type]  # expected: fractional
                                    smooth_method=metric.smooth_method,
                                    smooth_value=metric.smooth_value,
                                    effective_order=metric.effective_order,
                                    max_ngram_order=metric.max_ngram_order)
        out[i] = score.score
    return out
