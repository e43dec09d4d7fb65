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
* :mod:`.metaeval` - WMT22+ meta-evaluation on Numba (extra ``metaeval``): Kendall variants,
  pairwise accuracy, acc_eq with tie calibration, soft pairwise accuracy, permutation tests
  (k-block), significance clusters; mt-metrics-eval parity. ``mtscore meta seg``.
* :mod:`.loaders`, :mod:`.datasets` - WMT file formats into pyarrow tables / arrays.
* :mod:`.plots`, :mod:`.report`, :mod:`.cli` - figures, HTML report, ``mtscore meta|human``.
"""
import importlib

__all__ = ["correlation", "outliers", "williams", "darr", "pairwise", "human", "rater_model", "agreement",
           "metaeval", "loaders", "datasets", "plots", "report", "cli"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
