"""The Metric base every mtscore metric derives from, and the missing-reference policy.

A metric is split the way sacrebleu splits it:

* ``corpus_stats(hyps, refs) -> np.ndarray`` of shape ``(N, k)``: per-segment sufficient
  statistics (int64 for BLEU/chrF; float64 for TER, whose 2nd column is a mean length),
* ``compute_score_from_stats(row) -> Score``: the score of a (summed) statistics row, written
  with sacrebleu's exact operation order so that the float result is bit-identical.

Everything else (corpus scores, sentence scores, bootstrap, paired tests, streaming and
multi-worker execution) is built on these two, because the statistics are additive.
:class:`Score` and :class:`Signature` live in ``metrics.score`` and are importable from here.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

# imported with the metric, not on its first call (a few imports nothing else): a first
# corpus_score would otherwise pay for finding and loading it
from ...errors import UserError
from ..coerce import as_ref_streams, as_text_list
from ..line_limit import MAX_LINE_CHARS, check_line_lengths
from .score import MTSCORE_VERSION as MTSCORE_VERSION
from .score import SACREBLEU_VERSION as SACREBLEU_VERSION
from .score import OwnSignature as OwnSignature
from .score import Score as Score
from .score import Signature as Signature

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .resampled import RowScores

#: the reference containers :meth:`Metric.sentence_score` hands to a compiled single-pair kernel
_LIST_OR_TUPLE = (list, tuple)

#: what a metric does with a segment that has no reference at all (every stream None there)
MISSING_REFS_POLICIES = ("error", "skip")


class MissingReferenceError(UserError, ValueError):
    """A segment has no reference (every reference stream is None/null there)."""


class MissingReferenceWarning(UserWarning):
    """Segments without any reference were left out of the scores (``missing_refs="skip"``)."""


def check_missing_refs_policy(value: str, owner: str) -> str:
    """``value`` if it is a known policy, else a ValueError naming ``owner``'s argument."""
    if value not in MISSING_REFS_POLICIES:
        raise ValueError(f"{owner}: missing_refs must be one of {', '.join(MISSING_REFS_POLICIES)}, "
                         f"got {value!r}")
    return value


class Prepared(Protocol):
    """References prepared by :meth:`Metric.prepare` (tokenized, n-gram tables built, ...):
    opaque to callers except for this interface, which every metric's prepared object has."""

    #: number of segments
    n: int
    #: sacrebleu's ``num_refs`` of these references (-1: it varies per segment)
    num_refs: int

    def slice(self, a: int, z: int) -> Prepared:
        """Segments ``a:z`` (sharing the prepared state, no copy of it)."""

    def missing(self) -> np.ndarray | None:
        """bool (n,): segments without any reference, or None when every segment has one."""


class Metric(ABC):
    """The metric contract: every metric (lexical, edit-distance, embedding) implements

    * :meth:`prepare` ``(refs) -> Prepared``: the reference work, done once and reused for
      every system and resample;
    * :meth:`stats` ``(hyps, prepared) -> (N, k) ndarray``: per-segment sufficient statistics
      (int64 for BLEU/chrF; float64 for TER, whose 2nd column is a mean length; P/R/F/1 for
      BERTScore);
    * :meth:`compute_score_from_stats` ``(row) -> Score``: the score of a (summed) statistics
      row, with sacrebleu's exact operation order (bit-identical floats);
    * :meth:`scores_from_stats` ``(stats) -> float64 (N,)``: every row's score at once,
      bit-identical to ``compute_score_from_stats`` row by row (default: that loop);
    * :meth:`get_signature`.

    :meth:`prepare`, :meth:`stats` and :meth:`compute_score_from_stats` are abstract: a class
    that lacks one cannot be instantiated. :meth:`sentence_score` and the ``missing_refs``
    policy are written here once; a metric with a compiled single-pair path implements
    :meth:`_sentence_score_kernel`. ``mtscore.testing.check_metric(metric)`` runs the contract's
    checks on any metric.

    Optional hooks have working defaults: :meth:`stats_and_scores` (statistics and sentence
    scores in one pass), :meth:`rows_stats_and_scores` with ``dedupes_outputs = True`` (score
    each distinct (segment, output) pair of several systems once), :meth:`prepares_rows_once`
    and ``cheap_references`` (how the batch API may chunk a corpus). Everything else (corpus
    and sentence scores, streaming, the batch API, bootstrap and paired tests, the CLI) is
    built on these hooks, because the statistics are additive.
    """

    _SIGNATURE_TYPE = Signature

    #: prepared references take little memory per segment (TER: token ids), so the batch API
    #: may prepare them for larger steps of a corpus
    cheap_references: bool = False
    #: implements :meth:`rows_stats_and_scores`, so several systems' repeated outputs are
    #: scored once
    dedupes_outputs: bool = False
    #: the score is an error rate (TER, WER, ...): lower is better (MBR, n-best oracles and RL
    #: rewards pick the lowest / negate it)
    lower_is_better: bool = False
    #: reads source segments of its own (COMET): the batch API then passes each chunk's first
    #: segment to ``prepare(refs, offset=...)`` so the chunk is scored against its own sources
    reads_sources: bool = False
    #: longest line (characters) a hypothesis or reference may have; 0/None: no limit
    #: (engine/line_limit.py: a line of tens of millions of characters needs gigabytes)
    max_line_chars: int | None = MAX_LINE_CHARS

    def prepares_rows_once(self, n_rows: int, chunk_size: int) -> bool:
        """Whether the batch API should prepare the ``n_rows`` distinct reference rows of a
        chunked corpus once for all its chunks (``prepare(refs, rows=...)``; lexical metrics,
        within their memory bound) rather than chunk by chunk."""
        return False

    #: worker threads of metrics that use them (BLEU, chrF, TER); the batch API sets it
    workers: int
    #: sacrebleu's ``num_refs`` of the prepared references (-1: it varies per segment); set
    #: when references are first prepared
    num_refs: int

    def __init__(self, missing_refs: str = "error") -> None:
        self._ref_cache: Prepared | None = None
        self.n_bootstrap: int | None = None
        self.seed: str | None = None
        #: segments with no reference: "error" (sacrebleu cannot score them either: its BLEU,
        #: chrF and TER fail or, for BLEU, count a length of -1) or "skip" (zero statistics, so
        #: the corpus score is that of the other segments; NaN sentence score; a warning)
        self.missing_refs = check_missing_refs_policy(missing_refs, type(self).__name__)
        # num_refs is set when references are first prepared; get_signature() raises before

    # ---- the contract --------------------------------------------------------------
    @abstractmethod
    def prepare(self, refs, rows=None) -> Prepared:  # pragma: no cover - abstract
        """K reference streams of N segments (``None`` = no reference) -> prepared references.
        ``rows``: optionally ``(first, seg_map)``, the distinct reference rows of ``refs``
        (see ``lexical.repeated_rows``), which a metric may use to prepare each row once."""
        raise NotImplementedError

    @abstractmethod
    def stats(self, hyps, prepared) -> np.ndarray:  # pragma: no cover - abstract
        """``(N, k)`` statistics of N hypotheses against ``prepared`` (N segments)."""
        raise NotImplementedError

    @abstractmethod
    def compute_score_from_stats(self, stats) -> Score:  # pragma: no cover - abstract
        """The score of one (summed) statistics row (a list or a numpy row)."""
        raise NotImplementedError

    def stats_and_scores(self, hyps, prepared, sentence_level: bool = True) -> tuple:
        """``(stats (N, k), sentence scores float64 (N,) or None)`` in one pass."""
        st = self.stats(hyps, prepared)
        return st, self.scores_from_stats(st) if sentence_level else None

    def rows_stats_and_scores(self, hyps: list[str], rows, prepared,
                              sentence_level: bool = True) -> tuple:  # pragma: no cover
        """Statistics (and sentence scores) of ``hyps[j]`` against prepared segment ``rows[j]``
        (int64, ascending); metrics with ``dedupes_outputs = True`` implement it."""
        raise NotImplementedError(f"{type(self).__name__} does not score rows of a prepared set")

    # sacrebleu spelling, so code written against sacrebleu's internals keeps working
    def _compute_score_from_stats(self, stats) -> Score:
        return self.compute_score_from_stats(stats)

    # ---- shared -------------------------------------------------------------------
    def _coerce_hyps(self, hyps) -> list[str]:
        """Hypotheses as a list of str (accepts list/tuple/numpy/pandas/pyarrow)."""
        out = as_text_list(hyps, f"{type(self).__name__}: hyps", allow_none=False)
        check_line_lengths(out, f"{type(self).__name__}: hyps", self.max_line_chars)
        return out

    def _coerce_refs(self, refs, n: int | None = None) -> list[list[str | None]]:
        """K reference streams, each a list of N str-or-None, validated against ``n``."""
        streams = as_ref_streams(refs, n, f"{type(self).__name__}: refs")
        for k, st in enumerate(streams):
            check_line_lengths(st, f"{type(self).__name__}: refs[{k}]", self.max_line_chars)
        return streams

    def get_signature(self) -> Signature:
        return self._SIGNATURE_TYPE(self.__dict__)

    def option_fields(self) -> dict[str, str]:
        """The options that decide this metric's numbers, as its signature prints them
        (``{"case": "lc", "tok": "char", ...}``, sacrebleu's long field names), without the
        fields that describe a run rather than the metric (``nrefs``, ``version``, resampling,
        test set). Available before any reference is prepared; ``{}`` for a metric whose
        signature cannot be built without a run."""
        args = dict(self.__dict__)
        args.setdefault("num_refs", 1)
        try:
            info = self._SIGNATURE_TYPE(args).info
        except (KeyError, ValueError, TypeError, AttributeError):
            return {}
        run_fields = Signature({"num_refs": 1}).info
        return {k: ("yes" if v else "no") if isinstance(v, bool) else str(v)
                for k, v in info.items() if k not in run_fields and v is not None}

    def prepare_references(self, refs):
        """Prepare (tokenize, build n-gram tables for) K reference streams once and keep them
        as the metric's cached references, like sacrebleu's ``references=`` argument."""
        self._ref_cache = self.prepare(refs)
        return self._ref_cache

    def _get_prepared(self, refs):
        if refs is not None:
            return self.prepare(refs)
        if self._ref_cache is None:
            raise RuntimeError("No references provided and the cache is empty.")
        return self._ref_cache

    def corpus_stats(self, hyps, refs=None):
        """Per-segment sufficient statistics, an ``(N, k)`` numpy array."""
        if refs is not None:
            # validate the layout against the hypotheses first (clear transposed-layout errors)
            hyps = self._coerce_hyps(hyps)
            refs = self._coerce_refs(refs, len(hyps))
        return self.stats(hyps, self._get_prepared(refs))

    def _unreferenced(self, missing: np.ndarray, warn: bool = True,
                      stacklevel: int = 3) -> np.ndarray | None:
        """Apply the ``missing_refs`` policy to ``missing`` (bool (N,): segments with no
        reference): raise :class:`MissingReferenceError` ("error"), or warn with the count
        (unless ``warn`` is False: the caller already did for the whole corpus; the warning
        names the caller ``stacklevel - 1`` frames up) and return the mask ("skip"; callers
        zero those statistics rows). None if none is missing."""
        if not missing.any():
            return None
        name = type(self).__name__
        if self.missing_refs != "skip":
            first = int(missing.argmax())
            raise MissingReferenceError(
                f"{name}: segment {first} (0-based) has no reference: every reference stream is "
                f"None there (null/NaN/NA in a table), {int(missing.sum())} segment(s) in all; "
                "sacrebleu cannot score such segments either. Give each segment a reference, or "
                "pass missing_refs='skip' to leave them out of the scores.")
        if not warn:
            return missing
        import warnings

        warnings.warn(MissingReferenceWarning(
            f"{name}: {int(missing.sum())} of {len(missing)} segment(s) have no reference and were "
            "skipped (missing_refs='skip': zero statistics, NaN sentence scores)"), stacklevel=stacklevel)
        return missing

    def _skipped(self, prepared: Prepared, warn: bool = True) -> np.ndarray | None:
        """The ``missing_refs`` policy applied to the segments of ``prepared`` that have no
        reference (see :meth:`_unreferenced`): None when every segment has one, else the bool
        (N,) mask of the rows the caller leaves at zero statistics ("skip")."""
        missing = prepared.missing()
        # stacklevel: the warning names the caller of the metric's stats, as before this helper
        return None if missing is None else self._unreferenced(missing, warn, stacklevel=4)

    # ---- sentence scores ----------------------------------------------------------
    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> Any:
        """The score of one hypothesis against its references, equal to the corpus score of a
        one-segment corpus (``corpus_score([hypothesis], [[r] for r in references])``, the
        ``missing_refs`` policy included). Metrics with a compiled single-pair path
        (:meth:`_sentence_score_kernel`: BLEU, chrF, TER) take it for a str and a non-empty
        list or tuple of str; everything else (other sequences, None references, argument
        errors: :meth:`_check_sentence_args`) goes through the corpus path. Typed ``Any``
        because BERTScore's returns its own result; each metric types its own Score."""
        if type(hypothesis) is str and type(references) in _LIST_OR_TUPLE and references:
            score = self._sentence_score_kernel(hypothesis, references)
            if score is not None:
                return score
        self._check_sentence_args(hypothesis, references)
        return self.corpus_score([hypothesis], [[r] for r in references])

    def _sentence_score_kernel(self, hyp: str, refs: Sequence[str | None]) -> Score | None:
        """The sentence score of a str and a non-empty list or tuple of references in one
        compiled call, bit-identical to the corpus path, or None to take the corpus path (no
        such kernel, the default; a reference that is not a str)."""
        return None

    def _check_sentence_args(self, hypothesis, references) -> None:
        """The TypeErrors of :meth:`sentence_score`'s arguments, named after ``_NAME`` (or the
        class): ``hypothesis`` a str, ``references`` a sized non-str sequence. BLEU and chrF
        use sacrebleu's stricter checks (:func:`check_sentence_args`)."""
        name = getattr(self, "_NAME", None) or type(self).__name__
        if not isinstance(hypothesis, str):
            raise TypeError(f"{name}: The argument `hyp` should be a string.")
        if isinstance(references, str) or not hasattr(references, "__len__"):
            raise TypeError(f"{name}: The argument `refs` should be a sequence of strings.")

    def _check_hyps(self, hyps) -> None:  # noqa: B027 - an optional hook, not abstract
        """Warnings about one system's hypotheses (BLEU: tokenized input); none by default."""

    #: the statistics are counts (BLEU, chrF): a float matrix must hold whole numbers
    integer_stats: bool = False

    def stats_columns(self) -> int | None:
        """k, the number of columns of this metric's ``(N, k)`` statistics with its options
        (None: not declared, any k is accepted)."""
        return None

    def check_stats(self, stats, owner: str = "scores_from_stats") -> np.ndarray:
        """``stats`` as an ndarray after checking what every score-from-statistics path needs:
        a 2-D ``(N, k)`` array of real numbers with k = :meth:`stats_columns` (whole numbers
        for count statistics). A wrong shape or dtype is a ValueError / TypeError naming
        ``stats`` and the expected column count, never zeros or NaN from misread columns.
        O(1) for integer input (float input of count statistics: one pass)."""
        import numpy as np

        name = type(self).__name__
        k = self.stats_columns()
        want = f"(N, {k})" if k is not None else "(N, k)"
        st = stats if isinstance(stats, np.ndarray) else np.asarray(stats)
        if st.dtype.kind not in "iuf":
            raise TypeError(f"{name}.{owner}: stats must be a {want} array of numbers, got dtype "
                            f"{st.dtype}")
        if st.ndim != 2:
            raise ValueError(f"{name}.{owner}: stats must be a 2-D {want} array (one row per "
                             f"segment), got shape {st.shape}")
        if k is not None and st.shape[1] != k:
            raise ValueError(f"{name}.{owner}: stats has {st.shape[1]} columns; {name} with these "
                             f"options has {k} ({self.stats_layout()}), shape {want}")
        if self.integer_stats and st.dtype.kind == "f" and st.size:
            bad = ~np.isfinite(st) | (st != np.round(st))
            if bad.any():
                i, j = (int(x) for x in np.argwhere(bad)[0])
                raise ValueError(f"{name}.{owner}: stats[{i}, {j}] = {float(st[i, j])!r}; "
                                 f"{name} statistics are counts (whole numbers)")
        return st

    def stats_layout(self) -> str:
        """What the columns of the statistics are, in words (for error messages)."""
        return "see the metric's documentation"

    def scores_from_stats(self, stats) -> np.ndarray:
        """The sentence score of every row of an ``(N, k)`` stats matrix, float64 (N,), each
        equal to ``compute_score_from_stats(row).score`` (BLEU/chrF: one kernel call).
        ``stats`` is checked by :meth:`check_stats` first (the one place every metric's
        matrix is validated); metrics implement :meth:`_scores_of_checked`."""
        return self._scores_of_checked(self.check_stats(stats))

    def _scores_of_checked(self, stats: np.ndarray) -> np.ndarray:
        """:meth:`scores_from_stats` of a checked matrix (default: the per-row loop)."""
        import numpy as np

        return np.array([self.compute_score_from_stats(list(row)).score for row in stats],
                        dtype=np.float64)

    def pairwise_scores(self, rows: Sequence[str], cols: Sequence[str] | None = None,
                        workers: int | None = None) -> np.ndarray:
        """All-pairs sentence scores, float64 ``(n, m)``: cell ``(i, j)`` equals
        ``sentence_score(rows[i], [cols[j]]).score`` (``cols`` None: ``rows`` against themselves,
        ``(n, n)``, as MBR needs). Each distinct string is scored once. ``workers``: threads
        (None: this metric's ``workers``). Default: every pair as one segment of a corpus
        through :meth:`stats` + :meth:`scores_from_stats`; BLEU, chrF and TER override it with
        all-pairs kernels that build each sample's n-grams / token ids once."""
        from .pairwise import sentence_pairs_matrix

        return sentence_pairs_matrix(self, self._coerce_hyps(rows),
                                     None if cols is None else self._coerce_hyps(cols))

    def resampled_scores(self, sums: np.ndarray) -> RowScores | None:
        """Scores of many summed-statistics rows ((S, k): float32 bootstrap sums, int64/float64
        AR sums) at once, with sacrebleu's scalar semantics (see ``metrics.resampled``); None:
        no vectorised formula, the significance tests call ``compute_score_from_stats`` row
        by row. May raise ``resampled.Unsupported`` for rows it cannot reproduce exactly."""
        return None

    def sentence_scores_from_stats(self, stats) -> np.ndarray:
        """Alias of :meth:`scores_from_stats` (its name before the metric contract)."""
        return self.scores_from_stats(stats)

    def systems_stats_and_scores(self, systems: Sequence[Any], prepared,
                                  sentence_level: bool = True) -> list:
        """Several systems' outputs for the same N segments against one prepared reference
        set: ``[(stats (N, k), sentence scores float64 (N,) or None), ...]``, one pair per
        system, each equal to scoring that system alone.

        A segment's statistics depend only on its hypothesis and its references, so each
        distinct (segment, hypothesis) pair is scored once (systems often agree: 26 % of the
        pairs of 20 newstest2021 en-de systems repeat) through the metric's
        ``rows_stats_and_scores(hyps, rows, prepared, sentence_level)`` hook, which scores
        ``hyps[j]`` against prepared segment ``rows[j]`` (rows ascending)."""
        from ...kernels._lists import dedupe_columns

        name = type(self).__name__
        systems = [self._coerce_hyps(h) for h in systems]
        for h in systems:
            if len(h) != prepared.n:
                raise ValueError(
                    f"{name}: {len(h)} hypotheses but {prepared.n} reference segments "
                    "(sacrebleu would silently truncate; mtscore refuses).")
            self._check_hyps(h)
        missing = prepared.missing()
        if missing is not None:  # the policy once, counted in segments (not distinct pairs)
            self._unreferenced(missing)
        strings, rows, index = dedupe_columns(systems)
        stats, scores = self.rows_stats_and_scores(strings, rows, prepared, sentence_level)
        if scores is None and sentence_level:
            scores = self.scores_from_stats(stats)
        return [(stats[ix], None if scores is None else scores[ix]) for ix in index]

    def systems_stats(self, systems: Sequence, refs=None) -> list:
        """Per-segment statistics of several systems' outputs for the same N segments against
        one reference set (``refs``: K streams, or None for the cached references): a list of
        ``(N, k)`` arrays, one per system, each equal to ``corpus_stats(system, refs)``. The
        reference work is done once and, where the metric supports it (BLEU, chrF, TER), each
        distinct (segment, output) pair is scored once."""
        if len(systems) > 1 and self.dedupes_outputs:
            if refs is not None:
                refs = self._coerce_refs(refs, len(self._coerce_hyps(systems[0])))
            return [st for st, _ in self.systems_stats_and_scores(
                systems, self._get_prepared(refs), sentence_level=False)]
        if refs is not None and len(systems) > 1:
            self.prepare_references(refs)
            refs = None
        return [self.corpus_stats(h, refs) for h in systems]

    def sum_stats(self, stats) -> list:
        """Column sums of an ``(N, k)`` stats matrix as Python numbers (exact for ints)."""
        return [x.item() for x in stats.sum(axis=0)]

    def skipped_segments(self, refs=None) -> np.ndarray | None:
        """bool (N,): the segments of ``refs`` (None: the cached references) that
        ``missing_refs="skip"`` leaves out (no reference at all); None when nothing is skipped
        (or the policy is "error"). Resampling tests drop these rows."""
        if self.missing_refs != "skip":
            return None
        missing: np.ndarray | None
        if refs is not None:
            missing = unreferenced_mask(self._coerce_refs(refs))
        elif self._ref_cache is not None:
            missing = self._ref_cache.missing()
        else:
            return None
        return missing if missing is not None and missing.any() else None

    def corpus_score(self, hyps, refs=None, n_bootstrap: int = 1) -> Score:
        """Corpus score; ``refs`` is K streams of N segments (or None to use the cache)."""
        stats = self.corpus_stats(hyps, refs)
        if len(stats) == 0:
            raise ValueError(f"{type(self).__name__}: empty corpus (no segments): there is nothing "
                             "to score (sacrebleu fails on it too)")
        score = self.compute_score_from_stats(self.sum_stats(stats))
        if n_bootstrap > 1:
            from .bootstrap import bootstrap_ci

            skipped = self.skipped_segments(refs)
            bootstrap_ci(self, stats if skipped is None else stats[~skipped], score, n_bootstrap)
        return score


def present_mask(streams) -> np.ndarray:
    """(K, N) uint8: 1 where reference k of segment i is not None."""
    import numpy as np

    from ...kernels._lists import present_row

    out = np.ones((len(streams), len(streams[0]) if streams else 0), dtype=np.uint8)
    for k, st in enumerate(streams):
        row = present_row(st)
        if row is not None:
            out[k] = row
    return out


def count_refs(present: np.ndarray) -> int:
    """sacrebleu's num_refs of a :func:`present_mask`: the single per-segment count, or -1 when
    it varies (segments with no reference, scored only under ``missing_refs="skip"``, do not
    count)."""
    per_seg = present.sum(axis=0)
    if per_seg.size and not per_seg.all():
        per_seg = per_seg[per_seg > 0]
    if per_seg.size == 0:
        return len(present)
    lo, hi = int(per_seg.min()), int(per_seg.max())
    return lo if lo == hi else -1


def unreferenced_mask(streams) -> np.ndarray:
    """bool (N,): segments where every one of the K reference streams is None."""
    import numpy as np

    return np.asarray(~present_mask(streams).any(axis=0), dtype=bool)


def check_sentence_args(metric, hyp, refs) -> None:
    """sacrebleu's argument checks of ``sentence_score(hyp, refs)`` (TypeError, its messages)."""
    prefix = type(metric).__name__
    if not isinstance(hyp, str):
        raise TypeError(f"{prefix}: The argument `hyp` should be a string.")
    if isinstance(refs, str) or not isinstance(refs, Sequence) or len(refs) == 0:
        raise TypeError(f"{prefix}: The argument `refs` should be a sequence of strings.")
    if not isinstance(refs[0], str) and refs[0] is not None:
        raise TypeError(f"{prefix}: Each element of `refs` should be a string.")
