"""Meta-evaluation and human evaluation (WMT / Mathur et al.).

Submodules (imported on demand, so ``import mtscore.analysis`` stays light):

* :mod:`.correlation` - Pearson / Spearman / Kendall (b, c, 23, acc23, DARR-like), bootstrap
  CIs, top-N and rolling windows, vectorised over metrics.
* :mod:`.outliers` - MAD outlier detection (1.4826, |z| > 2.5).
* :mod:`.williams` - Williams test, all-pairs matrices, winner sets.
* :mod:`.darr` - DARR pairs from segment DA and the Kendall-like tau.
* :mod:`.pairwise` - system-pair decisions (human Wilcoxon vs metric bootstrap / t-test),
  Type I/II tables, metric agreement matrices.
* :mod:`.human` - DA standardisation, rater QC, segment/document/system scores, Wilcoxon
  matrices and rank clusters, equal-effort subsampling, reliability, sequence effects.
* :mod:`.rater_model` - the Bayesian rater model of Mathur's thesis (Ch. 3).
* :mod:`.agreement` - Cohen's kappa as R psych computes it, all judge pairs with groups, the
  reference-bias analysis (bootstrap CI of a group's mean kappa, non-overlapping CIs, rating
  cross-tabulations; Ma et al. 2017).
* :mod:`.crowd`, :mod:`.crowd_qc`, :mod:`.crowd_scores`, :mod:`.crowd_qe`, :mod:`.crowd_write` - DA
  from raw crowd batches (Mechanical Turk, Appraise): red flags, worker QC, z-scores, segment /
  document / system scores, run-A vs run-B reliability, the document-level QE gold simulation.
* :mod:`.human_tests` - R's exact small-sample rank-sum p and the NLE rater test, sign test,
  adequacy-then-fluency, share of significant system pairs (Graham et al. 2017).
* :mod:`.sequence_effects` - previous-item bins with Welch's test, logistic and pooled lag
  regressions (Mathur 2021, Ch. 4).
* :mod:`.subsets` - correlation over all k-system subsets (Mathur et al. 2020, Fig. 2).
* :mod:`.metaeval` - WMT22+ meta-evaluation on Numba (extra ``metaeval``): Kendall variants,
  pairwise accuracy, acc_eq with tie calibration, soft pairwise accuracy, permutation tests
  (k-block), significance clusters; mt-metrics-eval parity. ``mtscore meta seg``.
* :mod:`.loaders`, :mod:`.datasets` - WMT file formats into pyarrow tables / arrays.
* :mod:`.plots`, :mod:`.report` - figures, HTML report (the ``mtscore meta|human`` commands live in
  :mod:`mtscore.bindings.cli`).
"""
import importlib

__all__ = [
    "agreement",
    "correlation",
    "crowd",
    "crowd_qc",
    "crowd_qe",
    "crowd_scores",
    "crowd_write",
    "darr",
    "datasets",
    "human",
    "human_tests",
    "loaders",
    "metaeval",
    "outliers",
    "pairwise",
    "plots",
    "rater_model",
    "report",
    "sequence_effects",
    "subsets",
    "williams",
]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
