"""Meta-evaluation and human evaluation (WMT; Graham et al. 2017; Mathur et al. 2020; Mathur 2021).

Packages and modules by role (imported on demand, so ``import mtscore.analysis`` stays light):

* :mod:`.metaeval` - metrics against human scores: :mod:`~.metaeval.williams` (Williams test,
  winner sets), :mod:`~.metaeval.darr` (DARR pairs, Kendall-like tau), :mod:`~.metaeval.outliers`
  (MAD), :mod:`~.metaeval.subsets` (r over k-system subsets), :mod:`~.metaeval.system_pairs`
  (human vs metric decisions on system pairs, Type I/II errors), :mod:`~.metaeval.report` (the
  system-level battery and its text / JSON / CSV / HTML renderings), and the WMT22+ statistics on
  Numba (extra ``metaeval``: Kendall variants, pairwise accuracy with tie calibration, soft
  pairwise accuracy, permutation tests, significance clusters; mt-metrics-eval parity).
* :mod:`.human` - DA on judgement arrays: standardisation and scores, rater QC, significance
  tests (R's exact rank-sum p, Wilcoxon matrices, rank clusters, sign tests), agreement (Cohen's
  kappa as R psych, reference bias), the Bayesian rater model, sequence effects.
* :mod:`.crowd` - DA from a crowd platform: HIT building, degraded items, simulated raters,
  Mechanical Turk / Appraise batches, worker QC, scores, release files, the QE gold simulation,
  R/Perl number emulation.
* :mod:`.correlation` - Pearson / Spearman / Kendall (b, c, 23, acc23), bootstrap CIs, top-N and
  rolling windows, vectorised over metrics (used by every role).
* :mod:`.kendall_tau` - Kendall's tau from pair-outcome counts: the one implementation of
  ``correlation.kendall`` and ``metaeval.kendall_variant`` (its formula compiled by the kernels).
* :mod:`.data` - WMT file layouts into pyarrow tables / arrays, and the released data sets.
* :mod:`.plots` - figures (extra ``plot``); :mod:`.output` - JSON-safe values, atomic files,
  procedure HTML pages; :mod:`.errors` - the user-input error.

The ``mtscore meta|human`` commands live in :mod:`mtscore.bindings.cli`. The former flat module
names (``human_tests``, ``crowd_qc``, ``loaders``, ...) still resolve as attributes of this
package, to their new modules.
"""
import importlib

# public name -> module under mtscore.analysis (the former flat modules map to their new homes)
_MODULES = {
    "agreement": "human.agreement",
    "correlation": "correlation",
    "crowd": "crowd",
    "crowd_qc": "crowd.qc",
    "crowd_qe": "crowd.qe_gold",
    "crowd_scores": "crowd.scores",
    "crowd_write": "crowd.release_files",
    "darr": "metaeval.darr",
    "data": "data",
    "datasets": "data",
    "errors": "errors",
    "human": "human",
    "human_tests": "human.significance",
    "loaders": "data",
    "metaeval": "metaeval",
    "outliers": "metaeval.outliers",
    "output": "output",
    "pairwise": "metaeval.system_pairs",
    "plots": "plots",
    "rater_model": "human.rater_model",
    "report": "metaeval.report",
    "sequence_effects": "human.sequence_effects",
    "subsets": "metaeval.subsets",
    "williams": "metaeval.williams",
}

__all__ = sorted(_MODULES)


def __getattr__(name):
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{_MODULES[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
