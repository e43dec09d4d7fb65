"""Word precision, recall and F-measure by reference-frequency bucket: compare-mt's word
accuracy analysis (``FreqWordBucketer`` + ``WordBucketer.calc_statistics``, Neubig et al. 2019).

Definitions (compare-mt 0.2.10, case-sensitive):

* a word's frequency is its count in the references (or in a given training corpus / count
  table); a word the table lacks has frequency 0 and falls in the first bucket (``<1`` with the
  default edges 1, 2, 3, 4, 5, 10, 100, 1000, so 9 buckets: ``<1``, ``1`` .. ``4``, ``[5,10)``,
  ``[10,100)``, ``[100,1000)``, ``>=1000``);
* in each segment, the i-th occurrence of a word in the output matches the i-th occurrence of
  that word in the reference, if there is one: a word type matches ``min(count in output, count
  in reference)`` times (compare-mt's ``_calc_trg_matches``);
* per bucket b: ``rcnt`` = reference words in b, ``ocnt`` = output words in b, ``mcnt`` = matched
  output words in b; recall ``mcnt / rcnt``, precision ``mcnt / ocnt``, F-measure
  ``2 * prec * rec / (prec + rec)``, all three 0.0 where ``mcnt == 0`` (compare-mt's float
  operations, so its numbers are reproduced bit for bit).

compare-mt takes one reference. With K references, each reference stream is paired with the
outputs and the counts are summed over the K pairings (and frequencies counted over all K
streams): with K = 1 this is compare-mt's definition.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError
from .edges import bucket_index, bucket_labels, check_edges
from .tokens import Tokens, check_corpus, token_ids

__all__ = ["DEFAULT_FREQ_EDGES", "WordAccuracy", "accuracy_from_counts", "fmeasure_ci",
           "fmeasure_ci_from_counts", "prf", "segment_counts", "word_accuracy", "word_frequencies"]

#: compare-mt's default frequency bucket edges (``FreqWordBucketer``)
DEFAULT_FREQ_EDGES = (1, 2, 3, 4, 5, 10, 100, 1000)


@dataclass(frozen=True)
class WordAccuracy:
    """Word accuracy of S systems in B frequency buckets.

    ``labels`` (B,) compare-mt's bucket names; ``ref_counts`` int64 (B,) reference words per
    bucket; ``out_counts`` / ``matches`` int64 (S, B) output and matched output words;
    ``precision`` / ``recall`` / ``fmeasure`` float64 (S, B)."""

    labels: tuple[str, ...]
    ref_counts: np.ndarray
    out_counts: np.ndarray
    matches: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    fmeasure: np.ndarray


def word_frequencies(corpus: Iterable[Tokens]) -> dict[str, int]:
    """Word -> count over ``corpus`` (token lists), e.g. the references or a training file's
    target side tokenised with :func:`.tokens.tokenize`."""
    counts: Counter[str] = Counter()
    for seg in corpus:
        counts.update(seg)
    return dict(counts)


def prf(matches: int, ref_count: int, out_count: int) -> tuple[float, float, float]:
    """(precision, recall, F-measure) of one bucket, compare-mt's formulas and float order;
    all 0.0 when ``matches`` is 0."""
    if matches == 0:
        return 0.0, 0.0, 0.0
    rec = matches / float(ref_count)
    prec = matches / float(out_count)
    return prec, rec, 2 * prec * rec / (prec + rec)


def segment_counts(refs: Sequence[Sequence[Tokens]], systems: Sequence[Sequence[Tokens]],
                   frequencies: Mapping[str, int] | None = None,
                   edges: Sequence[float] = DEFAULT_FREQ_EDGES
                   ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """Per-segment counts behind :func:`word_accuracy`: ``(labels (B,), ref int64 (N, B),
    out int64 (S, N, B), matches int64 (S, N, B))``, each segment's counts summed over the K
    reference pairings. Arguments and errors as :func:`word_accuracy`."""
    n = check_corpus(refs, systems)
    e = check_edges(edges, "edges")
    labels = bucket_labels(e)
    if frequencies is None:
        frequencies = word_frequencies(seg for stream in refs for seg in stream)
    elif not isinstance(frequencies, Mapping):
        raise AnalysisInputError("frequencies must be a mapping word -> count, got "
                                 f"{type(frequencies).__name__}")
    n_b, n_s = len(labels), len(systems)
    # words as integer ids (one vocabulary over every stream), each id's frequency bucket
    streams = [*refs, *systems]
    tid = token_ids(streams)
    vocab, ids, lens = tid.vocab, tid.ids, tid.lens
    bucket_of = np.array([bucket_index(frequencies.get(w, 0), e) for w in vocab], dtype=np.int64)
    seg_id = np.repeat(np.arange(len(lens), dtype=np.int64) % n, lens)
    cuts = np.concatenate([[0], np.cumsum(lens)[n - 1::n]]).astype(np.int64)  # stream t: cuts[t]..cuts[t+1]
    v = max(len(vocab), 1)
    # per stream: sorted (segment, word) keys and their counts
    keyed = [np.unique(seg_id[cuts[t]:cuts[t + 1]] * v + ids[cuts[t]:cuts[t + 1]], return_counts=True)
             for t in range(len(streams))]

    def per_bucket(keys: np.ndarray, vals: np.ndarray) -> np.ndarray:
        """Sums of ``vals`` per (segment, bucket of the word) of ``keys``: int64 (N, B)."""
        cell = (keys // v) * n_b + bucket_of[keys % v]
        return np.bincount(cell, weights=vals, minlength=n * n_b).astype(np.int64).reshape(n, n_b)

    k_ref = len(refs)
    ref_counts = sum(per_bucket(*keyed[k]) for k in range(k_ref))
    out_counts = np.zeros((n_s, n, n_b), dtype=np.int64)
    matches = np.zeros((n_s, n, n_b), dtype=np.int64)
    for s in range(n_s):
        ko, co = keyed[k_ref + s]
        out_counts[s] = per_bucket(ko, co * k_ref)
        m = np.zeros_like(co)
        for k in range(k_ref):
            kr, cr = keyed[k]
            if len(kr):
                i = np.minimum(np.searchsorted(kr, ko), len(kr) - 1)
                m += np.minimum(co, np.where(kr[i] == ko, cr[i], 0))
        matches[s] = per_bucket(ko, m)
    return labels, np.asarray(ref_counts, dtype=np.int64).reshape(n, n_b), out_counts, matches


def _prf_arrays(m: np.ndarray, r: np.ndarray, o: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`prf` elementwise (same float64 operations in the same order)."""
    hit = m > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        rec = np.where(hit, m / np.where(hit, r, 1), 0.0)
        prec = np.where(hit, m / np.where(hit, o, 1), 0.0)
        f = np.where(hit, 2 * prec * rec / np.where(hit, prec + rec, 1.0), 0.0)
    return prec, rec, f


def word_accuracy(refs: Sequence[Sequence[Tokens]], systems: Sequence[Sequence[Tokens]],
                  frequencies: Mapping[str, int] | None = None,
                  edges: Sequence[float] = DEFAULT_FREQ_EDGES) -> WordAccuracy:
    """Word precision / recall / F-measure of each system by frequency bucket.

    ``refs``: K reference streams, ``systems``: S output streams, each N token lists.
    ``frequencies``: word -> count (a training corpus's :func:`word_frequencies`); None counts
    the words of all reference streams. ``edges``: the bucket edges (compare-mt's default).
    Raises :class:`AnalysisInputError` naming the stream or argument that is wrong."""
    return accuracy_from_counts(*segment_counts(refs, systems, frequencies, edges))


def accuracy_from_counts(labels: Sequence[str], ref_seg: np.ndarray, out_seg: np.ndarray,
                         match_seg: np.ndarray) -> WordAccuracy:
    """:func:`word_accuracy` from the per-segment counts of :func:`segment_counts` (its four
    results), so that one counting serves it and :func:`fmeasure_ci_from_counts`."""
    ref_counts = ref_seg.sum(axis=0)
    out_counts = out_seg.sum(axis=1)
    matches = match_seg.sum(axis=1)
    n_s, n_b = matches.shape
    p = np.zeros((n_s, n_b))
    r = np.zeros((n_s, n_b))
    f = np.zeros((n_s, n_b))
    for s in range(n_s):
        for b in range(n_b):
            p[s, b], r[s, b], f[s, b] = prf(int(matches[s, b]), int(ref_counts[b]),
                                            int(out_counts[s, b]))
    return WordAccuracy(tuple(labels), ref_counts, out_counts, matches, p, r, f)


def fmeasure_ci(refs: Sequence[Sequence[Tokens]], systems: Sequence[Sequence[Tokens]],
                frequencies: Mapping[str, int] | None = None,
                edges: Sequence[float] = DEFAULT_FREQ_EDGES, n_bootstrap: int = 1000,
                seed: int = 12345, sample_ratio: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap 95% interval of each system's F-measure per bucket: ``(low, high)``, float64
    (S, B) each.

    Segments are drawn with replacement (``ceil(N * sample_ratio)`` per resample, from
    ``numpy.random.default_rng(seed)``), the counts of the drawn segments summed and the
    F-measure computed as :func:`prf` does; the bounds are the sorted resample values at
    ``int(0.025 * n_bootstrap)`` and ``int(0.975 * n_bootstrap)`` (compare-mt's
    ``calc_bucket_details``, which draws half-size samples, ``sample_ratio`` 0.5, from NumPy's
    global random state)."""
    if not (isinstance(n_bootstrap, int) and n_bootstrap >= 2):
        raise AnalysisInputError(f"n_bootstrap must be an integer >= 2, got {n_bootstrap!r}")
    if not 0 < sample_ratio <= 1:
        raise AnalysisInputError(f"sample_ratio must be in (0, 1], got {sample_ratio!r}")
    _, ref_seg, out_seg, match_seg = segment_counts(refs, systems, frequencies, edges)
    return fmeasure_ci_from_counts(ref_seg, out_seg, match_seg, n_bootstrap, seed, sample_ratio)


def fmeasure_ci_from_counts(ref_seg: np.ndarray, out_seg: np.ndarray, match_seg: np.ndarray,
                            n_bootstrap: int = 1000, seed: int = 12345,
                            sample_ratio: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fmeasure_ci` from the per-segment counts of :func:`segment_counts` (ref int64
    (N, B), out / matches int64 (S, N, B))."""
    if not (isinstance(n_bootstrap, int) and n_bootstrap >= 2):
        raise AnalysisInputError(f"n_bootstrap must be an integer >= 2, got {n_bootstrap!r}")
    if not 0 < sample_ratio <= 1:
        raise AnalysisInputError(f"sample_ratio must be in (0, 1], got {sample_ratio!r}")
    n = ref_seg.shape[0]
    size = int(np.ceil(n * sample_ratio))
    rng = np.random.default_rng(seed)
    # how often each segment is drawn; sums as float64 BLAS products, exact (integers < 2**53)
    # (drawn in row chunks: the same numbers as one rng.integers(0, n, size) call per resample)
    draws = np.zeros((n_bootstrap, n), dtype=np.float64)
    rows = max(1, (1 << 22) // max(size, 1))
    for j in range(0, n_bootstrap, rows):
        c = min(rows, n_bootstrap - j)
        idx = rng.integers(0, n, (c, size)) + (np.arange(c, dtype=np.int64) * n)[:, None]
        draws[j:j + c] = np.bincount(idx.reshape(-1), minlength=c * n).reshape(c, n)
    r = draws @ ref_seg.astype(np.float64)                # (n_bootstrap, B)
    o = draws @ out_seg.astype(np.float64)                # (S, n_bootstrap, B)
    m = draws @ match_seg.astype(np.float64)
    _, _, f = _prf_arrays(m, r[None, :, :], o)
    f.sort(axis=1)
    return f[:, int(n_bootstrap * 0.025), :], f[:, int(n_bootstrap * 0.975), :]
