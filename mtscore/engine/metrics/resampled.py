"""Scores of many summed-statistics rows at once (bootstrap resamples, AR trials), each
bit-identical to the metric's ``compute_score_from_stats(row).score``, including sacrebleu's
float32 semantics: bootstrap sums are numpy float32 rows, and sacrebleu's formulas then compute
in float32 wherever a float32 scalar meets a Python number (NumPy 2 / NEP 50 promotion). Each
metric's ``resampled_scores`` hook calls the function for its formula here; the significance
tests check a few rows against ``compute_score_from_stats`` and fall back to it row by row if
they ever differ.
"""
from __future__ import annotations

import math
import sys

import numpy as np


class Unsupported(Exception):
    """These rows are outside what the vectorised formula reproduces exactly: score them one by
    one with ``compute_score_from_stats``."""


class RowScores:
    """Scores of many resamples: ``array`` equals sacrebleu's ``np.array([... .score ...])``;
    ``scalars()`` gives the individual scores with sacrebleu's scalar types (np.float32 or
    float), as ``Score.estimate_ci`` / ``statistics.mean`` see them."""

    __slots__ = ("_scalars", "is32", "values")

    def __init__(self, values: np.ndarray | None, is32: np.ndarray | None = None, scalars=None):
        # values is None when the scores were computed one by one (``scalars``)
        self.values = values
        self.is32 = is32
        self._scalars = scalars

    @property
    def array(self) -> np.ndarray:
        if self._scalars is not None:
            return np.array(self._scalars)
        assert self.values is not None
        if self.is32 is not None and self.is32.size and self.is32.all():
            return self.values.astype(np.float32)
        return self.values

    def scalars(self) -> list:
        if self._scalars is not None:
            return list(self._scalars)
        assert self.values is not None
        if self.is32 is None or not self.is32.any():
            return self.values.tolist()
        if self.is32.all():
            return list(self.values.astype(np.float32))
        return [np.float32(v) if f else float(v) for v, f in zip(self.values.tolist(), self.is32.tolist())]


def f32_op(a, a32, b, b32, fn):
    """Apply ``fn`` with NumPy 2 (NEP 50) promotion per element: the result is float32 where
    either operand is a float32 scalar (Python numbers are weak and become float32), else
    double (Python float arithmetic). Values are carried as float64 (exact for float32)."""
    r32 = np.logical_or(a32, b32)
    with np.errstate(all="ignore"):
        out = fn(np.asarray(a, np.float64), np.asarray(b, np.float64))
        if np.any(r32):
            o32 = fn(np.asarray(a, np.float64).astype(np.float32),
                     np.asarray(b, np.float64).astype(np.float32)).astype(np.float64)
            out = np.where(r32, o32, out)
    return out, np.broadcast_to(r32, np.shape(out)).copy()


#: CPython >= 3.12 sums floats with Neumaier compensation (``sum()``); before, left to right.
#: sacrebleu's BLEU takes ``sum()`` of the log precisions, so its result depends on it.
NEUMAIER_SUM = sys.version_info >= (3, 12)


def my_log(p: float):
    return -9999999999 if p == 0.0 else math.log(p)


def bleu_scores(m, sums: np.ndarray) -> RowScores:
    """Scores of summed BLEU statistics rows with ``m``'s options (see the module docstring)."""
    order = int(m.max_ngram_order)
    method = m.smooth_method
    sv = m.smooth_value
    if sv is None:
        sv = m.SMOOTH_DEFAULTS[method]
    is32 = sums.dtype == np.float32
    if sums.dtype.kind not in "fi":
        raise Unsupported
    if method == "add-k" and not is32 and sums.dtype.kind == "i" and not isinstance(sv, int):
        raise Unsupported  # sacrebleu itself fails here (in-place float add to an int row)
    ft = np.float32 if is32 else np.float64
    correct, total = _bleu_counts(sums, order, method, sv, ft)
    prec, is_set, eff = _bleu_precisions(correct, total, method, sv, ft, bool(m.effective_order))
    bp = _brevity_penalty(sums)
    mean_log = _mean_log_precision(prec, is_set, eff)
    out = bp * np.array(list(map(math.exp, mean_log.tolist())))
    out[~(sums[:, 2:2 + order] != 0).any(axis=1)] = 0.0
    return RowScores(out, np.zeros(len(sums), dtype=bool))


def _bleu_counts(sums: np.ndarray, order: int, method: str, sv, ft):
    """(S, order) matches and totals, add-k smoothed as sacrebleu smooths them: in place on the
    int row for integer sums (then exact in float64), in ``ft`` (float32 for bootstrap sums)."""
    correct0 = sums[:, 2:2 + order]
    if sums.dtype.kind == "i":
        if method == "add-k":
            correct = correct0.copy()
            total = sums[:, 2 + order:].copy()
            correct[:, 1:] += sv
            total[:, 1:] += sv
            return correct.astype(np.float64), total.astype(np.float64)
        return correct0.astype(np.float64), sums[:, 2 + order:].astype(np.float64)
    correct = correct0.astype(ft, copy=True)
    total = sums[:, 2 + order:].astype(ft, copy=True)
    if method == "add-k":
        correct[:, 1:] += ft(sv)
        total[:, 1:] += ft(sv)
    return correct, total


def _bleu_precisions(correct: np.ndarray, total: np.ndarray, method: str, sv, ft, effective_order: bool):
    """sacrebleu's smoothed n-gram precisions: ``(prec, is_set, eff)``, the (S, order) float64
    precisions (evaluated in ``ft``), which of them sacrebleu sets, and the effective order."""
    S, order = correct.shape
    prec = np.zeros((S, order), dtype=np.float64)
    is_set = np.zeros((S, order), dtype=bool)
    active = np.ones(S, dtype=bool)
    eff = np.full(S, order, dtype=np.int64)
    smooth = np.ones(S, dtype=np.float64)
    hundred = ft(100.0)
    with np.errstate(all="ignore"):
        for n in range(order):
            t = total[:, n]
            c = correct[:, n]
            active &= t != 0
            if effective_order:
                eff[active] = n + 1
            zero = c == 0
            vals = (hundred * c) / t
            setm = active & ~zero
            if method == "exp":
                smooth = np.where(active & zero, smooth * 2, smooth)
                v = hundred / (smooth.astype(ft) * t)
                vals = np.where(zero, v, vals)
                setm = active.copy()
            elif method == "floor":
                v = ft(100.0 * sv) / t
                vals = np.where(zero, v, vals)
                setm = active.copy()
            prec[:, n] = np.where(setm, vals.astype(np.float64), 0.0)
            is_set[:, n] = setm
    return prec, is_set, eff


def _brevity_penalty(sums: np.ndarray) -> np.ndarray:
    """Brevity penalty from Python ints (sacrebleu: sys_len=int(stats[0]), ref_len=int(stats[1]))."""
    sl = sums[:, 0].astype(np.float64)
    rl = sums[:, 1].astype(np.float64)
    if max(np.abs(sl).max(initial=0), np.abs(rl).max(initial=0)) >= 2 ** 53:
        raise Unsupported
    bp = np.ones(len(sums))
    short = sl < rl
    bp[short & (sl <= 0)] = 0.0
    pos = short & (sl > 0)
    with np.errstate(all="ignore"):
        arg = 1 - rl[pos] / sl[pos]  # int / int true division == double division here
    bp[pos] = list(map(math.exp, arg.tolist()))
    return bp


def _mean_log_precision(prec: np.ndarray, is_set: np.ndarray, eff: np.ndarray) -> np.ndarray:
    """Mean of ``my_log`` over the first ``eff`` precisions of each row, summed as ``sum()``."""
    S, order = prec.shape
    # my_log of every precision: math.log (libm, as sacrebleu) on the set, non-zero ones
    logs = np.full((S, order), -9999999999.0)
    lm = is_set & (prec != 0.0)
    logs[lm] = list(map(math.log, prec[lm].tolist()))
    if not NEUMAIER_SUM:
        # Python < 3.12 sum() over floats is a plain left-to-right double sum
        acc = np.zeros(S)
        for n in range(order):
            acc = np.where(n < eff, acc + logs[:, n], acc)
        return acc / eff
    # Python >= 3.12 sum() is compensated: use it row by row
    ll = logs.tolist()
    el = eff.tolist()
    return np.array([sum(ll[r][:el[r]]) / el[r] for r in range(S)])


#: sacrebleu's chrF epsilon for empty precisions, recalls and F-scores
_CHRF_EPS = 1e-16


def chrf_scores(m, sums: np.ndarray) -> RowScores:
    """Scores of summed chrF/chrF++ statistics rows with ``m``'s options."""
    if sums.dtype.kind not in "fi":
        raise Unsupported
    is32 = sums.dtype == np.float32
    S = len(sums)
    order = int(m.char_order) + int(m.word_order)
    x = sums.astype(np.float64)
    factor = m.beta ** 2
    F = np.zeros(S, dtype=bool)                       # "is float32" flags of Python numbers
    T32 = np.full(S, is32, dtype=bool)
    score, score32 = np.zeros(S), F.copy()
    avg_p, avg_p32 = np.zeros(S), F.copy()
    avg_r, avg_r32 = np.zeros(S), F.copy()
    eff = np.zeros(S, dtype=np.int64)
    for i in range(order):
        n_hyp, n_ref, n_match = x[:, 3 * i], x[:, 3 * i + 1], x[:, 3 * i + 2]
        prec, prec32, rec, rec32 = _chrf_prec_rec(n_hyp, n_ref, n_match, T32)
        term, term32 = _chrf_f_term(prec, prec32, rec, rec32, factor, F)
        score, score32 = f32_op(score, score32, term, term32, np.add)
        both = (n_hyp > 0) & (n_ref > 0)
        avg_p, avg_p32 = _add_where(both, avg_p, avg_p32, prec, prec32)
        avg_r, avg_r32 = _add_where(both, avg_r, avg_r32, rec, rec32)
        eff += both
    if m.eps_smoothing:
        v, v32 = f32_op(100, F, score, score32, np.multiply)
        v, v32 = f32_op(v, v32, order, F, np.divide)
        return RowScores(v, v32)
    return _chrf_from_averages(avg_p, avg_p32, avg_r, avg_r32, eff, factor)


def _chrf_prec_rec(n_hyp, n_ref, n_match, T32):
    """Precision and recall of one n-gram order (``eps`` where undefined), with float32 flags."""
    p_, p32 = f32_op(n_match, T32, n_hyp, T32, np.divide)
    prec = np.where(n_hyp > 0, p_, _CHRF_EPS)
    prec32 = np.where(n_hyp > 0, p32, False)
    r_, r32 = f32_op(n_match, T32, n_ref, T32, np.divide)
    rec = np.where(n_ref > 0, r_, _CHRF_EPS)
    rec32 = np.where(n_ref > 0, r32, False)
    return prec, prec32, rec, rec32


def _chrf_f_term(prec, prec32, rec, rec32, factor, F):
    """F-beta of one order, ``(1 + b2) * p * r / (b2 * p + r)`` (``eps`` where the denominator is 0)."""
    a, a32 = f32_op(factor, F, prec, prec32, np.multiply)
    denom, denom32 = f32_op(a, a32, rec, rec32, np.add)
    t1, t132 = f32_op(1 + factor, F, prec, prec32, np.multiply)
    t2, t232 = f32_op(t1, t132, rec, rec32, np.multiply)
    t3, t332 = f32_op(t2, t232, denom, denom32, np.divide)
    pos = denom > 0
    return np.where(pos, t3, _CHRF_EPS), np.where(pos, t332, False)


def _add_where(mask, acc, acc32, val, val32):
    """``acc + val`` where ``mask``, else ``acc`` (with float32 flags)."""
    s, s32 = f32_op(acc, acc32, val, val32, np.add)
    return np.where(mask, s, acc), np.where(mask, s32, acc32)


def _chrf_from_averages(avg_p, avg_p32, avg_r, avg_r32, eff, factor) -> RowScores:
    """chrF without eps smoothing: F-beta of the precisions and recalls averaged over the
    ``eff`` orders where both hypothesis and reference have n-grams."""
    F = np.zeros(len(eff), dtype=bool)
    has = eff > 0
    effd = np.where(has, eff, 1).astype(np.float64)
    ap, ap32 = f32_op(avg_p, avg_p32, effd, F, np.divide)
    ar, ar32 = f32_op(avg_r, avg_r32, effd, F, np.divide)
    avg_p = np.where(has, ap, 0.0)
    avg_p32 = np.where(has, ap32, False)
    avg_r = np.where(has, ar, 0.0)
    avg_r32 = np.where(has, ar32, False)
    s, _ = f32_op(avg_p, avg_p32, avg_r, avg_r32, np.add)
    nz = s != 0
    v, v32 = f32_op(1 + factor, F, avg_p, avg_p32, np.multiply)
    v, v32 = f32_op(v, v32, avg_r, avg_r32, np.multiply)
    d, d32 = f32_op(factor, F, avg_p, avg_p32, np.multiply)
    d, d32 = f32_op(d, d32, avg_r, avg_r32, np.add)
    v, v32 = f32_op(v, v32, d, d32, np.divide)
    v, v32 = f32_op(100, F, v, v32, np.multiply)
    return RowScores(np.where(nz, v, 0.0), np.where(nz, v32, False))


def ter_scores(sums: np.ndarray) -> RowScores:
    """Scores of summed TER statistics rows."""
    if sums.dtype.kind not in "fi":
        raise Unsupported
    is32 = sums.dtype == np.float32
    x = sums.astype(np.float64)
    edits, ref = x[:, 0], x[:, 1]
    S = len(sums)
    T32 = np.full(S, is32, dtype=bool)
    F = np.zeros(S, dtype=bool)
    q, q32 = f32_op(edits, T32, ref, T32, np.divide)
    has = ref > 0
    score = np.where(has, q, np.where(edits > 0, 1.0, 0.0))
    score32 = np.where(has, q32, False)
    v, v32 = f32_op(100, F, score, score32, np.multiply)
    return RowScores(v, v32)


