"""Numba kernels of the meta-evaluation statistics, in one namespace (imported only through
:mod:`._jit`): :mod:`._kern_pairs` (pair outcomes, Kendall variants, tie calibration),
:mod:`._kern_pairs_perm` (pairwise permutation tests), :mod:`._kern_scores` (tests on the
scores, soft pairwise accuracy) and :mod:`._kern_base` (random streams, means, argsort).

Conventions shared by every kernel:

* A *grouped* vector is a flat float64 array ``x`` (T,) plus ``offs`` (G+1,) int64: group g is
  ``x[offs[g]:offs[g+1]]`` (a row of the systems x items matrix for ``average_by='sys'``, a
  column for ``'item'``, everything for ``'none'``). Missing entries are already removed.
* Pair outcome codes (human h, metric m, pair i < j inside a group): 0 concordant, 1 discordant,
  2 tied only in h, 3 tied only in m, 4 tied in both.
* Random streams (``mode`` 0 = legacy NumPy MT19937 replay, 1 = xoshiro256**) and NumPy-exact
  means come from :mod:`._kern_base`.
"""
from ._kern_base import (  # noqa: F401  (re-exported: used through _jit.kernels())
    mt_coin,
    mt_double,
    mt_doubles,
    mt_twist,
    nanmean_np,
    popcount,
    random_bit,
    seqmean,
    stable_argsort_nonneg,
    temper,
    xs_next,
)
from ._kern_pairs import group_variants, pair_codes, tie_calibration  # noqa: F401
from ._kern_pairs_perm import pairs_permutation, pairs_permutation_linear  # noqa: F401
from ._kern_scores import (  # noqa: F401
    corr_groups,
    pairwise_pvalues,
    scores_permutation,
    swap_mask,
)
