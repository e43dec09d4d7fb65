"""Bootstrap confidence intervals and paired significance tests, identical to sacrebleu 2.6.0.

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

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

import numpy as np

from ..kernels._resample import masked_sums, resample_sums
from .metrics import bootstrap
from .metrics.base import Metric
from .metrics.bootstrap import RowScorer, bootstrap_sums, draw_indices, resolve_seed, rows_per_chunk
from .metrics.resampled import RowScores

__all__ = [
    "DEFAULT_SAMPLES", "TestResult", "ComparisonResult", "resolve_seed", "bootstrap_ci",
    "bootstrap_scores", "estimate_ci", "paired_bootstrap", "paired_ar", "compare",
    "paired_ttest", "compare_segment_scores",
]

#: default number of resamples / trials (sacrebleu ``PairedTest._DEFAULT_SAMPLES``)
DEFAULT_SAMPLES = {"ar": 10000, "bs": 1000}

# The bootstrap machinery (resample sums, scores of resamples, single-system CI, seeds) lives in
# ``metrics/bootstrap.py``, below the metric base class that uses it for
# ``corpus_score(n_bootstrap=)``; its knobs (``FORCE_KERNEL``, ``CHUNK_BYTES``, ...) are there.


# ------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------
def estimate_ci(scores: np.ndarray) -> Tuple[Any, Any]:
    """Mean and 95% CI half-width of resampled scores, exactly sacrebleu's
    ``significance.estimate_ci`` (numpy sort, indices ``n // 40`` and ``n - n // 40 - 1``,
    numpy mean; results keep the dtype of ``scores``)."""
    scores = np.sort(scores)
    n = len(scores)
    lower_idx = n // 40
    upper_idx = n - lower_idx - 1
    ci = 0.5 * (scores[upper_idx] - scores[lower_idx])
    return scores.mean(), ci


def _p_value(stats: np.ndarray, real_difference: float) -> float:
    """multeval/sacrebleu p-value: ``(#(stats > delta) + 1) / (len + 1)``."""
    c = np.sum(stats > real_difference).item()
    return (c + 1) / (len(stats) + 1)


def _draw_masks(rng: np.random.Generator, n_trials: int, n: int, itemsize: int = 1):
    """Yield ``(start, mask_chunk)``; the concatenation equals
    ``rng.integers(2, size=(n_trials, n), dtype=bool)`` (chunks hold multiples of 32 elements)."""
    rows = rows_per_chunk(n, itemsize, multiple=32)
    for start in range(0, n_trials, rows):
        c = min(rows, n_trials - start)
        yield start, rng.integers(2, size=(c, n), dtype=bool)


# ------------------------------------------------------------------------------------------
# metric adapter: statistics, exact totals, scores of many summed rows
# ------------------------------------------------------------------------------------------
def _score_fn(metric):
    """The score of one summed row (sacrebleu's metric objects spell it with an underscore)."""
    return bootstrap.score_fn(metric, isinstance(metric, Metric))


def _row_scorer(metric, k: int) -> RowScorer:
    """Scores of many summed rows of ``metric`` (an mtscore or a sacrebleu metric)."""
    return RowScorer(metric, k, isinstance(metric, Metric))


def _segment_stats(metric, hyps, refs=None) -> np.ndarray:
    """``(N, k)`` statistics matrix from an mtscore metric or a sacrebleu metric object."""
    if isinstance(metric, Metric):
        return np.asarray(metric.corpus_stats(hyps, refs))
    return np.array(metric._extract_corpus_statistics(hyps, refs))


def _systems_stats(metric, systems) -> List[np.ndarray]:
    """Statistics of every system against the metric's prepared references (mtscore metrics:
    one call, repeated outputs scored once; sacrebleu metrics: system by system). Systems of
    another length than the references raise the metric's error."""
    if isinstance(metric, Metric):
        return [np.asarray(st) for st in metric.systems_stats(systems)]
    return [_segment_stats(metric, h, None) for h in systems]


def _prepare_refs(metric, refs) -> None:
    """Prepare references once for all systems (mtscore: ``prepare_references``; sacrebleu:
    the metric's reference cache)."""
    if refs is None:
        return
    if isinstance(metric, Metric):
        metric.prepare_references(refs)
    else:
        metric._ref_cache = metric._cache_references(refs)


def _exact_total(metric, stats: np.ndarray) -> list:
    """Column sums as sacrebleu's ``sum_of_lists`` gives them (Python ints; floats summed
    sequentially)."""
    if isinstance(metric, Metric):
        return metric.sum_stats(stats)
    if stats.dtype.kind in "iub":
        return [int(x) for x in stats.sum(axis=0, dtype=np.int64)]
    return [float(x) for x in np.cumsum(stats, axis=0)[-1]]


def _corpus_score(metric, stats: np.ndarray):
    return _score_fn(metric)(_exact_total(metric, stats))


# ------------------------------------------------------------------------------------------
# resampling engines
# ------------------------------------------------------------------------------------------
def _dyadic_scale(stats: np.ndarray) -> Optional[int]:
    """Smallest power of two 2**s (s <= 16) making every float statistic an integer, so that
    float64 sums are exact in any order; None if there is none. 1 for integer stats."""
    if stats.dtype.kind in "iub":
        return 1
    for s in range(17):
        scaled = stats * float(1 << s)
        if np.all(scaled == np.round(scaled)) and np.all(np.abs(scaled) < 2 ** 50 / max(1, len(stats))):
            return 1 << s
    return None


def _ar_sums(blocks: Sequence[np.ndarray], scales: Sequence[Optional[int]], n_trials: int,
             rng: np.random.Generator):
    """Masked sums of several (N, k_b) blocks with one mask stream.

    Blocks with a scale (integers, or floats that are integers times 1/scale) are summed
    exactly in int64 by the kernel: returns ``pos @ (block * scale)`` (T, k_b) int64.
    Blocks without one get sacrebleu's float64 matmuls: returns ``(pos @ block, neg @ block)``.
    """
    n = blocks[0].shape[0]
    int_ids = [(i, s) for i, s in enumerate(scales) if s is not None]
    flt_ids = [i for i, s in enumerate(scales) if s is None]
    xi: Optional[np.ndarray] = None
    pi: Optional[np.ndarray] = None
    if int_ids:
        xi = np.ascontiguousarray(np.concatenate(
            [np.round(blocks[i] * float(s)).astype(np.int64) if blocks[i].dtype.kind == "f"
             else blocks[i].astype(np.int64) for i, s in int_ids], axis=1))
        pi = np.empty((n_trials, xi.shape[1]), dtype=np.int64)
    xf: Optional[np.ndarray] = None
    pf64: Optional[np.ndarray] = None
    if xi is not None and int(np.abs(xi).sum(axis=0).max(initial=0)) < 2 ** 53 and not bootstrap.FORCE_KERNEL:
        xf = xi.astype(np.float64)
        pf64 = np.empty((rows_per_chunk(n, 8, multiple=32), xi.shape[1]))
    pf = {i: (np.empty((n_trials, blocks[i].shape[1])), np.empty((n_trials, blocks[i].shape[1])))
          for i in flt_ids}
    fl = {i: np.asarray(blocks[i], dtype=np.float64) for i in flt_ids}
    for start, mask in _draw_masks(rng, n_trials, n, 8 if (xf is not None or flt_ids) else 1):
        stop = start + len(mask)
        if xi is not None:
            assert pi is not None  # allocated with xi
            if xf is not None:
                assert pf64 is not None  # allocated with xf
                # integers < 2**53 in every partial sum: float64 BLAS is exact in any order
                np.matmul(mask.astype(np.float64), xf, out=pf64[:stop - start])
                pi[start:stop] = pf64[:stop - start]
            else:
                masked_sums(xi, mask.view(np.uint8), pi[start:stop])
        if flt_ids:
            neg = ~mask
            for i in flt_ids:
                pf[i][0][start:stop] = mask @ fl[i]
                pf[i][1][start:stop] = neg @ fl[i]
    res: List[Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]] = []
    c = 0
    for i, b in enumerate(blocks):
        if scales[i] is not None:
            assert pi is not None  # some block has a scale
            w = b.shape[1]
            res.append(pi[:, c:c + w])
            c += w
        else:
            res.append(pf[i])
    return res


def bootstrap_scores(metric, stats: np.ndarray, n_samples: int, rng: np.random.Generator) -> RowScores:
    """Scores of ``n_samples`` bootstrap resamples of one system (sacrebleu's
    ``_bootstrap_resample`` without materialising the resamples). stats: (N, k); metric: an
    mtscore or sacrebleu metric."""
    return bootstrap.bootstrap_scores(metric, stats, n_samples, rng, isinstance(metric, Metric))


def bootstrap_ci(metric, stats: np.ndarray, score, n_bootstrap: int,
                 seed: Union[int, str, None] = None):
    """Single-system 95% bootstrap CI, as sacrebleu's ``corpus_score(..., n_bootstrap=S)``.

    metric: an mtscore or sacrebleu metric; stats: (N, k) per-segment statistics (int64, or
    float64 for TER); score: the corpus ``Score``. Sets ``metric.n_bootstrap``, ``metric.seed``
    (the signature's ``bs:``/``seed:``) and ``score._mean`` / ``score._ci``; returns ``score``.
    """
    return bootstrap.bootstrap_ci(metric, stats, score, n_bootstrap, seed, isinstance(metric, Metric))


# ------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------
@dataclass
class TestResult:
    """One system's result for one metric (field order = sacrebleu's ``Result``).

    score: corpus score; p_value: vs. the baseline (None for the baseline itself); mean / ci:
    bootstrap mean and 95% CI half-width (numpy scalars with sacrebleu's dtypes) or None."""

    score: Any
    p_value: Optional[float] = None
    mean: Any = None
    ci: Any = None

    __test__ = False  # not a pytest class


@dataclass
class ComparisonResult:
    """Output of :func:`compare`.

    systems: names, baseline first (baseline mode) or in input order (all-pairs mode);
    results[metric][i]: :class:`TestResult` of ``systems[i]``; signatures[metric]: the metric's
    signature (``seed``, ``bs``/``ar`` added as sacrebleu adds them); p_values[metric]: (M, M)
    float64 matrix of pairwise p-values (all-pairs mode; NaN on the diagonal), else None.
    """

    systems: List[str]
    baseline: Optional[str]
    test: str
    n_samples: int
    seed: str
    metrics: List[str]
    results: Dict[str, List[TestResult]]
    signatures: Dict[str, Any]
    p_values: Optional[Dict[str, np.ndarray]] = None
    n_ar_confidence: int = -1
    extra: Dict[str, Any] = field(default_factory=dict)

    def p_value(self, metric: str, a: str, b: Optional[str] = None) -> Optional[float]:
        """p-value of system ``a`` vs ``b`` (or vs the baseline when ``b`` is None)."""
        if b is None:
            return self.results[metric][self.systems.index(a)].p_value
        if self.p_values is None:
            raise ValueError("p_value(a, b): run compare(..., all_pairs=True) for pairwise p-values")
        return float(self.p_values[metric][self.systems.index(a), self.systems.index(b)])

    def to_sacrebleu(self) -> Tuple[Dict[str, Any], Dict[str, list]]:
        """``(signatures, scores)`` in the shape ``sacrebleu.significance.PairedTest()`` returns."""
        scores: Dict[str, list] = {"System": list(self.systems)}
        for name in self.metrics:
            scores[name] = list(self.results[name])
        return dict(self.signatures), scores

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict (floats, lists)."""
        def f(v):
            return None if v is None else float(v)
        d: Dict[str, Any] = {
            "test": self.test, "n_samples": self.n_samples, "seed": self.seed,
            "baseline": self.baseline, "systems": list(self.systems),
            "signatures": {k: str(v) for k, v in self.signatures.items()},
            "results": {m: [{"system": s, "score": f(r.score), "p_value": f(r.p_value), "mean": f(r.mean),
                             "ci": f(r.ci)} for s, r in zip(self.systems, self.results[m])]
                        for m in self.metrics},
        }
        if self.p_values is not None:
            d["p_values"] = {m: [[None if np.isnan(x) else float(x) for x in row] for row in v.tolist()]
                             for m, v in self.p_values.items()}
        return d


# ------------------------------------------------------------------------------------------
# paired tests on statistics matrices
# ------------------------------------------------------------------------------------------
def _system_seed(seed_int: Optional[int]) -> Optional[int]:
    # sacrebleu PairedTest.__call__: ``seed = self._seed if self._seed else None``
    return seed_int if seed_int else None


def _paired_bs_core(metrics: Sequence[Any], stats: Sequence[Sequence[np.ndarray]],
                    exact: Sequence[Sequence[float]], n: int, seed_int: Optional[int],
                    pairs: Sequence[Tuple[int, int]], need_ci: Sequence[int]):
    """Paired bootstrap on precomputed statistics.

    metrics[m]; stats[s][m]: (N, k_m) matrix of system s; exact[s][m]: exact corpus score.
    pairs: (baseline, system) index pairs to test. need_ci: systems whose mean/CI is wanted.
    Returns (p[(a, b)][m], ci[s][m] = (mean, ci)).
    """
    n_met = len(metrics)
    scorers = [_row_scorer(metrics[m], stats[0][m].shape[1]) for m in range(n_met)]

    def scores_for(systems, rng):
        blocks = [stats[s][m].astype(np.float32) for s in systems for m in range(n_met)]
        sums = bootstrap_sums(blocks, n, rng)
        out, i = {}, 0
        for s in systems:
            for m in range(n_met):
                out[s, m] = scorers[m](sums[i]).array
                i += 1
        return out

    pvals: Dict[Tuple[int, int], List[float]] = {}
    cis: Dict[int, List[Tuple[Any, Any]]] = {}
    sys_seed = _system_seed(seed_int)
    if sys_seed is not None:
        involved = sorted({s for p in pairs for s in p} | set(need_ci))
        shared = scores_for(involved, np.random.default_rng(sys_seed))
        groups = {p: shared for p in pairs}
        ci_src = {s: shared for s in need_ci}
    else:
        groups = {p: scores_for(sorted(set(p)), np.random.default_rng(None)) for p in pairs}
        ci_src = {}
        for s in need_ci:
            # sacrebleu: the baseline CI draws with int(SACREBLEU_SEED) (0 is a seed there),
            # a system's CI comes from its own paired draw
            hit = next((g for p, g in groups.items() if p[1] == s), None)
            ci_src[s] = hit if hit is not None else scores_for([s], np.random.default_rng(seed_int))
    for (a, b), g in groups.items():
        row = []
        for m in range(n_met):
            diff = abs(exact[a][m] - exact[b][m])
            sample_diffs = np.abs(g[b, m] - g[a, m])
            st = sample_diffs - sample_diffs.mean()
            row.append(_p_value(st, diff))
        pvals[a, b] = row
    for s in need_ci:
        cis[s] = [estimate_ci(ci_src[s][s, m]) for m in range(n_met)]
    return pvals, cis


def _paired_ar_core(metrics: Sequence[Any], stats: Sequence[Sequence[np.ndarray]],
                    exact: Sequence[Sequence[float]], n: int, seed_int: Optional[int],
                    pairs: Sequence[Tuple[int, int]], n_ar_confidence: int = -1):
    """Paired approximate randomisation on precomputed statistics (see _paired_bs_core).
    Returns (p[(a, b)][m], ci[b][m]) where ci is filled when n_ar_confidence > 0."""
    n_met = len(metrics)
    scorers = [_row_scorer(metrics[m], stats[0][m].shape[1]) for m in range(n_met)]
    sys_seed = _system_seed(seed_int)
    involved_all = sorted({x for p in pairs for x in p})
    # one scale per metric over all systems, so shuffled sums combine in one representation
    scales = []
    for m in range(n_met):
        sc = [_dyadic_scale(stats[s][m]) for s in involved_all]
        known = [x for x in sc if x is not None]
        scales.append(None if len(known) < len(sc) else max(known))

    def run(systems, rng):
        blocks = [stats[s][m] for s in systems for m in range(n_met)]
        P = _ar_sums(blocks, [scales[m] for s in systems for m in range(n_met)], n, rng)
        out, i = {}, 0
        for s in systems:
            for m in range(n_met):
                out[s, m] = P[i]
                i += 1
        bs = None
        if n_ar_confidence > 0:
            bblocks = [stats[s][m].astype(np.float32) for s in systems for m in range(n_met)]
            sums = bootstrap_sums(bblocks, n_ar_confidence, rng)
            bs, i = {}, 0
            for s in systems:
                for m in range(n_met):
                    bs[s, m] = scorers[m](sums[i]).array
                    i += 1
        return out, bs

    def int_total(s, m):
        st = stats[s][m]
        if st.dtype.kind == "f":
            return np.round(st * float(scales[m])).astype(np.int64).sum(axis=0)
        return st.sum(axis=0, dtype=np.int64)

    if sys_seed is not None:
        shared = run(involved_all, np.random.default_rng(sys_seed))
        groups = {p: shared for p in pairs}
    else:
        groups = {p: run(sorted(set(p)), np.random.default_rng(None)) for p in pairs}
    pvals, cis = {}, {}
    for (a, b), (P, bs) in groups.items():
        row = []
        for m in range(n_met):
            pa, pb = P[a, m], P[b, m]
            if scales[m] is not None:
                shuf_a = pa + (int_total(b, m) - pb)        # = pos @ bl + neg @ sys   (exact)
                shuf_b = (int_total(a, m) - pa) + pb        # = neg @ bl + pos @ sys
                if stats[a][m].dtype.kind == "f":
                    # float (TER) statistics: exact sums of dyadic values, back in float64
                    shuf_a = shuf_a.astype(np.float64) / scales[m]
                    shuf_b = shuf_b.astype(np.float64) / scales[m]
            else:
                shuf_a = pa[0] + pb[1]
                shuf_b = pa[1] + pb[0]
            sc_a = scorers[m](np.ascontiguousarray(shuf_a)).array
            sc_b = scorers[m](np.ascontiguousarray(shuf_b)).array
            diff = abs(exact[a][m] - exact[b][m])
            row.append(_p_value(np.abs(np.array(sc_a) - np.array(sc_b)), diff))
        pvals[a, b] = row
        if bs is not None:
            cis[b] = [estimate_ci(bs[b, m]) for m in range(n_met)]
    return pvals, cis


def _seed_for_signature(seed_int: Optional[int]) -> str:
    return str(seed_int).lower()


def paired_bootstrap(baseline_stats: np.ndarray, system_stats: np.ndarray, metric,
                     n_samples: int = 1000, seed: Union[int, str, None] = None) -> TestResult:
    """Paired bootstrap of one system against a baseline on (N, k) statistics matrices;
    sacrebleu's ``_paired_bs_test`` (returns score, p_value, mean, ci of the system)."""
    seed_int, _ = resolve_seed(seed)
    bl, sy = np.asarray(baseline_stats), np.asarray(system_stats)
    exact = [[float(_corpus_score(metric, bl).score)], [float(_corpus_score(metric, sy).score)]]
    p, ci = _paired_bs_core([metric], [[bl], [sy]], exact, n_samples, seed_int, [(0, 1)], [1])
    return TestResult(_corpus_score(metric, sy).score, p[0, 1][0], ci[1][0][0], ci[1][0][1])


def paired_ar(baseline_stats: np.ndarray, system_stats: np.ndarray, metric,
              n_samples: int = 10000, seed: Union[int, str, None] = None,
              n_ar_confidence: int = -1) -> TestResult:
    """Paired approximate randomisation of one system against a baseline on (N, k) statistics
    matrices; sacrebleu's ``_paired_ar_test``."""
    seed_int, _ = resolve_seed(seed)
    bl, sy = np.asarray(baseline_stats), np.asarray(system_stats)
    exact = [[float(_corpus_score(metric, bl).score)], [float(_corpus_score(metric, sy).score)]]
    p, ci = _paired_ar_core([metric], [[bl], [sy]], exact, n_samples, seed_int, [(0, 1)], n_ar_confidence)
    r = TestResult(_corpus_score(metric, sy).score, p[0, 1][0])
    if 1 in ci:
        r.mean, r.ci = ci[1][0]
    return r


# ------------------------------------------------------------------------------------------
# segment-averaged metrics (BERTScore, sentence-averaged chrF): E12 / mean bootstrap
# ------------------------------------------------------------------------------------------
def paired_ttest(a: np.ndarray, b: np.ndarray) -> Tuple[float, float]:
    """Paired t-test on per-segment scores (Mathur et al. 2020, E12): d = a - b,
    t = mean(d) / (sd(d) / sqrt(n)) with the n-1 standard deviation, df = n - 1; two-sided p.
    a, b: (N,) float arrays. Returns (t, p); (0.0, 1.0) when all differences are zero."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired_ttest: need two 1-d arrays of equal length, got {a.shape} and {b.shape}")
    n = len(a)
    if n < 2:
        raise ValueError("paired_ttest: need at least 2 segments")
    d = a - b
    sd = d.std(ddof=1)
    mean = d.mean()
    if sd == 0:
        return (0.0, 1.0) if mean == 0 else (math.copysign(math.inf, mean), 0.0)
    t = mean / (sd / math.sqrt(n))
    try:
        from scipy.stats import t as tdist
    except ImportError:  # pragma: no cover
        raise ImportError("paired_ttest needs scipy: pip install scipy") from None
    p = float(2 * tdist.sf(abs(t), n - 1))
    return float(t), p


def compare_segment_scores(scores: Mapping[str, Sequence[float]], test: str = "ttest",
                           n: Optional[int] = None, seed: Union[int, str, None] = None,
                           baseline: Optional[str] = None, all_pairs: bool = False,
                           name: str = "score") -> ComparisonResult:
    """Significance for metrics whose corpus score is the mean of segment scores.

    scores: {system: (N,) per-segment scores}. test: ``ttest`` (paired t-test, E12) or ``bs``
    (paired bootstrap of the mean with sacrebleu's seeds, centred statistic and p-value rule;
    also mean / 95% CI per system). Corpus score = mean of the segment scores.
    """
    names = list(scores)
    if baseline is not None and not all_pairs:
        if baseline not in scores:
            raise ValueError(f"compare_segment_scores: baseline {baseline!r} is not one of {names}")
        names.remove(baseline)
        names.insert(0, baseline)
    arrs = [np.asarray(scores[s], dtype=np.float64) for s in names]
    N = len(arrs[0])
    if any(len(x) != N for x in arrs):
        raise ValueError("compare_segment_scores: systems have different numbers of segments")
    seed_int, _ = resolve_seed(seed)
    means = [float(x.mean()) for x in arrs]
    M = len(names)
    pairs = [(i, j) for i in range(M) for j in range(i + 1, M)] if all_pairs else [(0, j) for j in range(1, M)]
    results = [TestResult(means[i]) for i in range(M)]
    pmat = np.full((M, M), np.nan) if all_pairs else None
    if test == "ttest":
        n_used = 0
        for a, b in pairs:
            _, p = paired_ttest(arrs[a], arrs[b])
            if pmat is not None:  # all_pairs
                pmat[a, b] = pmat[b, a] = p
            else:
                results[b].p_value = p
    elif test == "bs":
        n_used = n or DEFAULT_SAMPLES["bs"]
        sys_seed = _system_seed(seed_int)
        x = np.ascontiguousarray(np.stack(arrs, axis=1))       # (N, M) float64

        def draw(rng):
            out = np.empty((n_used, M))
            for start, idx in draw_indices(rng, n_used, N):
                resample_sums(x, idx, out[start:start + len(idx)])
            return out / N

        shared = draw(np.random.default_rng(sys_seed)) if sys_seed is not None else None
        for a, b in pairs:
            res = shared if shared is not None else draw(np.random.default_rng(None))
            diff = abs(means[a] - means[b])
            sd = np.abs(res[:, b] - res[:, a])
            p = _p_value(sd - sd.mean(), diff)
            if pmat is not None:  # all_pairs
                pmat[a, b] = pmat[b, a] = p
            else:
                results[b].p_value = p
        ci_src = shared if shared is not None else draw(np.random.default_rng(seed_int))
        for i in range(M):
            results[i].mean, results[i].ci = estimate_ci(ci_src[:, i])
    else:
        raise ValueError(f"compare_segment_scores: test must be 'ttest' or 'bs', got {test!r}")
    return ComparisonResult(
        systems=names, baseline=None if all_pairs else names[0], test=test, n_samples=n_used,
        seed=_seed_for_signature(seed_int), metrics=[name], results={name: results},
        signatures={name: f"test:{test}|n:{n_used}|seed:{_seed_for_signature(seed_int)}"},
        p_values={name: pmat} if pmat is not None else None)


# ------------------------------------------------------------------------------------------
# public entry point
# ------------------------------------------------------------------------------------------
def _without_skipped(metrics: Sequence[Any], stats: List[List[np.ndarray]]) -> List[List[np.ndarray]]:
    """Drop the segments that a metric's ``missing_refs="skip"`` left out (no reference) from
    every system's statistics, so resampling draws only scored segments."""
    masks = [x for x in (m.skipped_segments() for m in metrics if isinstance(m, Metric)) if x is not None]
    if not masks:
        return stats
    keep = ~np.logical_or.reduce(masks)
    return [[st[keep] for st in row] for row in stats]


def _default_metrics():
    from .metrics.registry import make_metric

    return [make_metric("bleu")]


def compare(systems: Union[Mapping[str, Sequence[str]], Sequence[Tuple[str, Sequence[str]]]],
            refs=None, metrics: Optional[Sequence[Any]] = None, test: str = "bs",
            n: Optional[int] = None, seed: Union[int, str, None] = None,
            baseline: Optional[str] = None, all_pairs: bool = False,
            n_ar_confidence: int = -1) -> ComparisonResult:
    """Paired significance tests of several systems, identical to sacrebleu's ``PairedTest``.

    systems: {name: N hypotheses} (or a list of (name, hyps)); refs: K reference streams of N
    segments (None: use each metric's cached references); metrics: mtscore (or sacrebleu)
    metric objects, default ``[BLEU()]``; test: ``bs`` (paired bootstrap, default n=1000) or
    ``ar`` (approximate randomisation, default n=10000); seed: overrides ``SACREBLEU_SEED``;
    baseline: a system name (default: the first); all_pairs: also test every pair and return
    (M, M) p-value matrices in ``result.p_values``; n_ar_confidence: AR only, bootstrap
    resamples for each system's CI (-1: none, 0: 1000), as sacrebleu's API.

    Metrics may also be given by name ("bleu", "chrf", "chrf++", "ter"). The statistics are
    computed once (references prepared once per metric) and tested by :func:`compare_stats`.

    Metrics whose corpus score is a mean of segment scores (objects with ``segment_scores(hyps,
    refs)`` and no ``corpus_stats``) are tested with the paired bootstrap of the mean (``bs``)
    or a paired t-test (``ttest``); see :func:`compare_segment_scores`.
    """
    _check_test(test)
    items: List[Tuple[str, Sequence[str]]] = (list(systems.items()) if isinstance(systems, Mapping)
                                             else [cast(Tuple[str, Sequence[str]], tuple(x)) for x in systems])
    names = _check_names([x[0] for x in items], baseline)
    if baseline is not None and not all_pairs:
        items.insert(0, items.pop(names.index(baseline)))
    metrics = list(metrics) if metrics is not None else _default_metrics()
    if any(isinstance(m, str) for m in metrics):
        from .metrics.registry import make_metric

        metrics = [make_metric(m) if isinstance(m, str) else m for m in metrics]
    for metric in metrics:
        _prepare_refs(metric, refs)
    by_metric = [_systems_stats(metric, [hyps for _, hyps in items]) for metric in metrics]
    stats = [[by_metric[m][s] for m in range(len(metrics))] for s in range(len(items))]
    return compare_stats([x[0] for x in items], metrics, _without_skipped(metrics, stats),
                         test=test, n=n, seed=seed, all_pairs=all_pairs,
                         n_ar_confidence=n_ar_confidence)


def _check_test(test: str) -> None:
    if test not in ("bs", "ar"):
        raise ValueError(f"compare: test must be 'bs' or 'ar', got {test!r}")


def _check_names(names: List[str], baseline: Optional[str]) -> List[str]:
    if len(names) < 2:
        raise ValueError("compare: paired tests need at least 2 systems")
    if len(set(names)) != len(names):
        raise ValueError("compare: system names must be unique")
    if baseline is not None and baseline not in names:
        raise ValueError(f"compare: baseline {baseline!r} is not one of the systems {names}")
    return names


def compare_stats(names: Sequence[str], metrics: Sequence[Any],
                  stats: Sequence[Sequence[np.ndarray]], test: str = "bs",
                  n: Optional[int] = None, seed: Union[int, str, None] = None,
                  all_pairs: bool = False, n_ar_confidence: int = -1) -> ComparisonResult:
    """:func:`compare` on statistics already computed (streamed from files, gathered from
    workers): ``stats[s][m]`` is system ``names[s]``'s (N, k) statistics matrix for
    ``metrics[m]`` (the objects that computed it: they score the resamples and give the
    signatures), the first system being the baseline unless ``all_pairs``. Only the integer
    statistics are needed, never the text; results equal :func:`compare`'s for the same seed."""
    _check_test(test)
    names = _check_names(list(names), None)
    M = len(names)
    N = stats[0][0].shape[0]
    for s in range(M):
        if stats[s][0].shape[0] != N:
            raise ValueError(f"compare: system {names[s]!r} has {stats[s][0].shape[0]} segments, "
                             f"{names[0]!r} has {N}")
    n_samples = n if n and n > 0 else DEFAULT_SAMPLES[test]
    n_conf = n_ar_confidence if n_ar_confidence != 0 else DEFAULT_SAMPLES["bs"]
    seed_int, _ = resolve_seed(seed)
    corpus = [[_corpus_score(metric, stats[s][m]) for m, metric in enumerate(metrics)] for s in range(M)]
    metric_names = _unique_metric_names([c.name for c in corpus[0]])
    pairs = ([(i, j) for i in range(M) for j in range(i + 1, M)] if all_pairs
             else [(0, j) for j in range(1, M)])
    exact = [[float(c.score) for c in row] for row in corpus]
    if test == "bs":
        pv, cis = _paired_bs_core(metrics, stats, exact, n_samples, seed_int, pairs, list(range(M)))
    else:
        pv, cis = _paired_ar_core(metrics, stats, exact, n_samples, seed_int, pairs, n_conf)
        if n_conf > 0:
            # baseline CI (sacrebleu: _bootstrap_resample with a fresh generator from SACREBLEU_SEED)
            for s in ([0] if not all_pairs else [i for i in range(M) if i not in cis]):
                cis[s] = [estimate_ci(bootstrap_scores(metric, stats[s][m], n_conf,
                                                       np.random.default_rng(seed_int)).array)
                          for m, metric in enumerate(metrics)]
    results = {nm: [TestResult(corpus[s][m].score) for s in range(M)] for m, nm in enumerate(metric_names)}
    pmats = _fill_results(results, metric_names, pv, cis, M, all_pairs)
    signatures = {}
    for m, metric in enumerate(metrics):
        sig = metric.get_signature()
        sig.update("seed", _seed_for_signature(seed_int))
        sig.update(test, n_samples)
        if n_conf > 0:  # sacrebleu: set whenever n_ar_confidence > 0, whatever the test
            sig.update("bs", n_conf)
        signatures[metric_names[m]] = sig
    return ComparisonResult(
        systems=names, baseline=None if all_pairs else names[0], test=test, n_samples=n_samples,
        seed=_seed_for_signature(seed_int), metrics=metric_names, results=results,
        signatures=signatures, p_values=pmats, n_ar_confidence=n_conf if test == "ar" else -1)


def _unique_metric_names(names: Sequence[str]) -> List[str]:
    out: List[str] = []
    for nm in names:
        while nm in out:
            nm = nm + "'"
        out.append(nm)
    return out


def _fill_results(results: Dict[str, List[TestResult]], metric_names: List[str], pv: dict,
                  cis: dict, M: int, all_pairs: bool) -> Optional[Dict[str, np.ndarray]]:
    """p-values and CIs into ``results``; the (M, M) p-value matrices when ``all_pairs``."""
    pmats = {nm: np.full((M, M), np.nan) for nm in metric_names} if all_pairs else None
    for (a, b), row in pv.items():
        for m, nm in enumerate(metric_names):
            if pmats is not None:
                pmats[nm][a, b] = pmats[nm][b, a] = row[m]
            elif a == 0:
                results[nm][b].p_value = row[m]
    for s, row in cis.items():
        for m, nm in enumerate(metric_names):
            results[nm][s].mean, results[nm][s].ci = row[m]
    return pmats
