"""Human evaluation with Direct Assessment (Graham et al. 2017, NLE; WMT practice; Mathur 2021).

* :mod:`.scores` - per-worker standardisation, segment / document / system scores on judgement arrays.
* :mod:`.rater_qc` - rater quality control (paired t-test, rank-sum test, repeats, red flags).
* :mod:`.significance` - rank-sum tests (R's exact small-sample p), Wilcoxon matrices, rank
  clusters, sign tests, adequacy-then-fluency, equal-effort subsampling, significant-pair shares.
* :mod:`.agreement` - Cohen's kappa as R psych computes it, reference bias (Ma et al. 2017),
  reliability by self-replication.
* :mod:`.refbias` - the reference-bias figures (Ma et al. 2017): average-rating ranges (Fig. 3),
  kappa distributions per setting (Fig. 2).
* :mod:`.rater_model` - the Bayesian rater model (Mathur 2021, Ch. 3).
* :mod:`.rater_prior` - fitting its Gamma prior of worker precision on development HITs (§3.5).
* :mod:`.rater_eval` - its evaluation protocol (§3.5): baselines, cohort, adversarial and spammer sweeps, residuals.
* :mod:`.sequence_effects` - sequence effects in ratings (Mathur 2021, Ch. 4).
* :mod:`.sequence_anova` - the worker group x lag ANOVA of the sequence effect (Mathur 2021 §4.4.1).

The functions of the former ``mtscore.analysis.human`` module are importable from here.
"""
from .agreement import self_replication
from .rater_qc import qc_paired_ttest, qc_ranksum, qc_repeats, red_flags
from .scores import SCORED_TYPES, document_scores, segment_scores, standardize, system_scores
from .sequence_effects import sequence_effect
from .significance import (
    equal_effort_subsample,
    mann_whitney_greater,
    rank_clusters,
    round_significant,
    wilcoxon_matrix,
    wmt_wilcoxon_table,
)

__all__ = [
    "SCORED_TYPES",
    "document_scores",
    "equal_effort_subsample",
    "mann_whitney_greater",
    "qc_paired_ttest",
    "qc_ranksum",
    "qc_repeats",
    "rank_clusters",
    "red_flags",
    "round_significant",
    "segment_scores",
    "self_replication",
    "sequence_effect",
    "standardize",
    "system_scores",
    "wilcoxon_matrix",
    "wmt_wilcoxon_table",
]
