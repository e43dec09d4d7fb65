"""Batch API: score one or many systems against one reference set, all metrics in one call.

>>> r = mtscore.score(hyps, [refs], metrics=["bleu", "chrf"])
>>> r.corpus["bleu"].score          # sacrebleu-identical corpus score
>>> r.segments                      # pyarrow Table: seg, bleu, chrf (sentence scores)

Many systems: pass ``{"sysA": hyps_a, "sysB": hyps_b}``; ``r.corpus[system][metric]`` and a
``system`` column in ``r.segments``. References are prepared once per chunk of segments and
reused by every system; large corpora are processed in chunks so memory stays bounded.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np

from ...engine.metrics.base import Metric, Prepared, Score
from ...engine.metrics.registry import get_spec, make_metric, specs
from ...engine.metrics.registry import metric_name as metric_name
from ..metric_options import merge_metric_options, options_for

DEFAULT_CHUNK = 16384


class ScoreResult:
    """Result of :func:`score`.

    corpus   : ``{metric: Score}`` for one system, or ``{system: {metric: Score}}`` for several
    sentence_scores : ``{metric: float64 ndarray}`` of length (systems x N), system-major
    segments : pyarrow Table (built on first access), one row per (system, segment):
               ``system`` (several systems only), ``seg`` (int64, 0-based), one float64 column
               of sentence scores per metric
    stats    : ``{system: {metric: ndarray (N, k)}}`` per-segment sufficient statistics
    signatures : ``{metric: str}``

    ``metric`` is the metric's key: its name (``bleu``, ``chrf``, ``chrf++``, ``ter``, ...) or,
    for a later configuration of a name already given in the same call, the name plus the
    signature fields it differs in (``bleu|tok:char``; see :func:`metric_keys`).
    """

    def __init__(self, corpus, sentence_scores, systems, n, single, stats, signatures, metrics):
        self.corpus: dict[str, Any] = corpus
        self.sentence_scores: dict[str, np.ndarray] = sentence_scores
        self.stats: dict[str, dict[str, np.ndarray]] = stats
        self.signatures: dict[str, str] = signatures
        self.metrics: dict[str, Metric] = metrics
        self._systems = systems
        self._n = n
        self._single = single
        self._segments = None

    @property
    def segments(self):
        if self._segments is None:
            import pyarrow as pa

            table = {}
            if self.sentence_scores:
                if not self._single:
                    table["system"] = pa.array([s for s in self._systems for _ in range(self._n)],
                                               pa.string())
                table["seg"] = pa.array(np.tile(np.arange(self._n, dtype=np.int64),
                                                len(self._systems)))
                for m, v in self.sentence_scores.items():
                    table[m] = pa.array(v, pa.float64())
            self._segments = pa.table(table)
        return self._segments

    def __repr__(self) -> str:
        return f"ScoreResult(corpus={self.corpus!r}, {len(self._systems)} system(s) x {self._n} segments)"


def _as_systems(hyps) -> tuple:
    """Returns (systems dict, single: bool)."""
    if isinstance(hyps, Mapping):
        if not hyps:
            raise ValueError("score: no systems given")
        return dict(hyps), False
    return {"hyp": hyps}, True


def _metric_objects(metrics, options: Mapping[str, dict], workers: int,
                    missing_refs: str | None = None) -> dict[str, Metric]:
    """``{key: metric}`` for names or configured objects, in the given order, one distinct key
    each (see :func:`metric_keys`); a name is made with its entry of ``options`` (a
    :func:`~..metric_options.merge_metric_options` result), else its family's; ``workers``
    threads each (0 = all); ``missing_refs`` (if given) the policy of every metric for
    segments without a reference."""
    from ...engine.metrics.base import check_missing_refs_policy
    from ...engine.parallel import resolve_workers

    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    workers = resolve_workers(workers)
    named: list[tuple[str, Metric]] = []
    for i, m in enumerate(metrics):
        if isinstance(m, Metric):
            named.append((metric_name(m), m))
        elif isinstance(m, str):
            name = m.lower()
            spec = get_spec(name)  # its own options, else its family's (chrf++: chrf's)
            obj = make_metric(name, **options_for(name, options))
            if _named_by_options(spec) and metric_name(obj) != name:
                raise ValueError(_name_contradicted(i, m, spec, obj))
            named.append((name, obj))
        else:
            raise TypeError(f"score: metrics[{i}] is a {type(m).__name__}; expected a metric name "
                            "or an mtscore metric object")
    out = dict(zip(metric_keys(named), (obj for _, obj in named)))
    for obj in out.values():
        obj.workers = workers
        if missing_refs is not None:
            obj.missing_refs = check_missing_refs_policy(missing_refs, "score")
    return out


def _named_by_options(spec) -> bool:
    """Whether the options of ``spec``'s family decide which of its names an object has
    (chrF's word order: chrf, chrf++; the family's entry with a ``name_of``)."""
    return any(s.family == spec.family and s.name_of is not None for s in specs())


def _name_contradicted(i: int, given: str, spec, obj: Metric) -> str:
    """The message for metrics[i] named ``given`` whose family's options (``*_kwargs`` or
    ``metric_kwargs[family]``) compute another name."""
    import inspect

    family = [s for s in specs() if s.family == spec.family]
    opts = sorted({k for s in family for k in s.fixed})
    params = inspect.signature(type(obj)).parameters
    got = metric_name(obj)
    each = ", ".join(f"{s.name}: " + ", ".join(f"{k}={s.fixed.get(k, params[k].default)!r}" for k in opts)
                     for s in family)
    setting = ", ".join(f"{k}={getattr(obj, k, None)!r}" for k in opts)
    return (f"score: metrics[{i}] is {given!r} but {spec.family}_kwargs set {setting}, which "
            f"computes {got!r} ({each}); name it {got!r} if that is meant, or pass a configured "
            f"{spec.cls}({', '.join(f'{k}=...' for k in opts)}) object")


def metric_keys(named: Sequence[tuple[str, Metric]]) -> list[str]:
    """One distinct key per ``(name, metric)``, in order, that says what was computed.

    The first metric of a name keeps the plain name (``bleu``, ``chrf++``: every single-metric
    key is the name). A later metric of the same name gets the name plus the signature fields
    in which it differs from that first one, sacrebleu's ``field:value`` spelling joined by
    ``|``: ``[BLEU(), BLEU(tokenize="char")]`` -> ``bleu``, ``bleu|tok:char``;
    ``[CHRF(), CHRF(lowercase=True)]`` -> ``chrf``, ``chrf|case:lc``. Options a signature does
    not print (BLEU's ``max_ngram_order``, chrF's ``beta``) are added as ``option=value`` (those
    that vary among the call's metrics of that name) when the signature fields alone do not
    tell the metrics apart. The same configuration twice is a
    ValueError (it would compute the same numbers under two keys)."""
    keys: list[str] = []
    configs: dict[int, tuple] = {}

    def config(i: int) -> tuple:  # only for repeated names: the constructor options need inspect
        if i not in configs:
            configs[i] = (named[i][1].option_fields(), _constructor_options(named[i][1]))
        return configs[i]

    for i, (name, _) in enumerate(named):
        same = [j for j in range(i) if named[j][0] == name]
        if not same:
            keys.append(name)
            continue
        for j in same:
            if config(j) == config(i):
                raise ValueError(f"score: metrics[{i}] ({name}) has the same configuration as "
                                 f"metrics[{j}]; give each configuration once")
        f0, (f, o) = config(same[0])[0], config(i)
        parts = [f"{k}:{v}" for k, v in f.items() if f0.get(k) != v]
        key = "|".join([name, *parts])
        if not parts or key in keys:  # spell out the options that vary among this name's metrics
            group = [config(j)[1] for j, (n, _) in enumerate(named) if n == name]
            key = "|".join([name] + parts + [f"{k}={v}" for k, v in o.items()
                                             if any(g.get(k) != v for g in group)])
        if key in keys:  # pragma: no cover - equal configurations were refused above
            raise ValueError(f"score: metrics[{i}] ({name}) would share the key {key!r} with "
                             f"metrics[{keys.index(key)}]")
        keys.append(key)
    return keys


def _constructor_options(metric: Metric) -> dict[str, str]:
    """``{option: repr(value)}`` of the constructor arguments a metric keeps as attributes
    (only on the error path of equal signatures: ``inspect`` costs milliseconds to import)."""
    import inspect

    try:
        params = inspect.signature(type(metric)).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return {}
    skip = {"references", "missing_refs", "workers"}
    return {p: repr(getattr(metric, p)) for p in params if p not in skip and hasattr(metric, p)}


def score(hyps, refs, metrics: Sequence[str | Metric] = ("bleu", "chrf"), *,
          workers: int = 1, sentence_level: bool = True, chunk_size: int = DEFAULT_CHUNK,
          progress: bool | None = None,
          metric_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
          bleu_kwargs: dict | None = None, chrf_kwargs: dict | None = None,
          ter_kwargs: dict | None = None, missing_refs: str | None = None) -> ScoreResult:
    """Score one system (a sequence of N strings) or many (``{name: hyps}``) against ``refs``
    (K reference streams of N strings; ``None`` = no reference for that segment).

    metrics     : registered names ("bleu", "chrf", "chrf++", "ter", "wer", "per", "cer", "eed",
                  "meteor", and any :func:`mtscore.register_metric` added) or configured
                  metric objects, several configurations of one metric allowed. Each gets its
                  own key in every result dict and segment column (:func:`metric_keys`): the
                  first of a name keeps the plain name (``bleu``, ``chrf``, ``chrf++``), a
                  later one of the same name adds the signature fields it differs in
                  (``[BLEU(), BLEU(tokenize="char")]`` -> ``bleu``, ``bleu|tok:char``). A name
                  contradicted by its options (``"chrf++"`` with ``chrf_kwargs`` word_order 0)
                  and the same configuration twice are ValueErrors.
    metric_kwargs : ``{metric name: constructor arguments}`` (dict of dicts) for metrics given
                  by name, any registered metric, e.g. ``{"wer": {"lowercase": True},
                  "eed": {"language": "ja"}}``; names in any case. A metric takes the options
                  under its own name, else those under its family's (chrf++ takes ``"chrf"``'s);
                  options of a registered metric not in ``metrics`` are ignored (as are all of
                  them for metric objects); an unregistered name is a ValueError listing the
                  registered ones, an entry that is not a dict a TypeError
    workers     : threads (0 = all cores); results are identical for any value
    sentence_level : also compute per-segment sentence scores (the ``segments`` table)
    chunk_size  : segments per chunk; bounds memory for very large corpora (when the reference
                  rows repeat, e.g. a multi-system table, and are prepared once for the whole
                  corpus, hypotheses go in steps of ``4 * chunk_size``: no per-chunk reference
                  preparation to bound, fewer steps)
    bleu_kwargs, chrf_kwargs, ter_kwargs : the older spelling of ``metric_kwargs={"bleu": ...}``
                  etc., merged into it; the same metric given both ways is a ValueError
    missing_refs : segments whose references are all None: "error" (the default of every
                  metric, as sacrebleu cannot score them) or "skip" (left out of every metric's
                  corpus score, NaN sentence scores, one warning per metric with the count);
                  None keeps each metric object's own setting
    """
    from ...engine.coerce import as_ref_streams, as_text_list

    systems, single = _as_systems(hyps)
    systems = {k: as_text_list(v, f"score: hyps[{k!r}]" if not single else "score: hyps")
               for k, v in systems.items()}
    n = len(next(iter(systems.values())))
    for name, h in systems.items():
        if len(h) != n:
            raise ValueError(f"score: system {name!r} has {len(h)} segments, expected {n}")
    streams = as_ref_streams(refs, n, "score: refs")
    options = merge_metric_options(metric_kwargs, caller="score", bleu=bleu_kwargs, chrf=chrf_kwargs,
                                   ter=ter_kwargs)
    mobjs = _metric_objects(metrics, options, workers, missing_refs)
    shared = None
    step = chunk_size
    if n > chunk_size:
        from ...engine.metrics.lexical import repeated_rows

        rows = repeated_rows(streams)
        if rows is not None:
            shared = (streams, rows, chunk_size)
            if all(m.cheap_references or m.prepares_rows_once(len(rows[0]), chunk_size)
                   for m in mobjs.values()):
                step = 4 * chunk_size  # every lexical metric prepares the rows once
    bounds = [(a, min(a + step, n)) for a in range(0, n, step)] or [(0, 0)]
    chunks = (([st[a:z] for st in streams], {k: h[a:z] for k, h in systems.items()})
              for a, z in bounds)
    return _score_chunks(chunks, len(bounds), list(systems), single, mobjs, sentence_level,
                         progress, shared)


def score_table(source, hyp: str = "hyp", refs: Sequence[str] | None = None,
                system=None, metrics: Sequence[str | Metric] = ("bleu", "chrf"),
                **kwargs) -> ScoreResult:
    """Score a table: a TSV/CSV/JSONL/Parquet/Arrow file, a pyarrow Table or a pandas DataFrame
    with a hypothesis column, reference columns (default ``ref``/``ref_0``, ``ref_1``, ...) and
    optionally a ``system`` column (a long table of several systems over the same segments).
    Keyword arguments go to :func:`score`: ``metric_kwargs={name: {option: value}}`` (dict of
    dicts) for the metrics given by name (or the older ``bleu_kwargs``/``chrf_kwargs``/
    ``ter_kwargs``), ``workers``, ``missing_refs``, ..."""
    from ...engine.corpus import load_corpus

    corpus = load_corpus(source, hyp=hyp, ref_columns=refs, system=system)
    if corpus.systems():
        systems, ref_streams = corpus.by_system()
        return score(systems, ref_streams, metrics, **kwargs)
    return score(corpus.hyps(), corpus.ref_streams(), metrics, **kwargs)


def score_files(hyp_paths, ref_paths: Sequence[str], metrics: Sequence[str | Metric] = ("bleu", "chrf"),
                *, workers: int = 1, sentence_level: bool = True, chunk_size: int = DEFAULT_CHUNK,
                encoding: str = "utf-8", errors: str = "strict", progress: bool | None = None,
                metric_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
                bleu_kwargs: dict | None = None, chrf_kwargs: dict | None = None,
                ter_kwargs: dict | None = None) -> ScoreResult:
    """Like :func:`score`, streaming text files (one segment per line, ``.gz`` ok) chunk by chunk,
    so memory stays bounded for corpora of any size (only the (N, k) statistics and the per-segment
    scores grow with N). ``hyp_paths``: one path or ``{system: path}``; ``ref_paths``: K paths;
    ``metric_kwargs`` and the older ``*_kwargs``: as in :func:`score`."""
    from ...engine.corpus_error import CorpusError
    from ...engine.textio import iter_text_chunks

    single = not isinstance(hyp_paths, Mapping)
    paths = {"hyp": hyp_paths} if single else dict(hyp_paths)
    names = list(paths)
    first = names[0]

    def chunks():
        iters = {k: iter_text_chunks(p, ref_paths if k == first else (), chunk_size, encoding, errors)
                 for k, p in paths.items()}
        while True:
            got = {k: next(it, None) for k, it in iters.items()}
            if got[first] is None:
                extra = [k for k, c in got.items() if c is not None]
                if extra:
                    raise CorpusError(f"{paths[extra[0]]} has more lines than {paths[first]}")
                return
            for k, c in got.items():
                if c is None or len(c.hyps) != len(got[first].hyps):
                    raise CorpusError(f"{paths[k]} and {paths[first]} have different line counts")
            yield got[first].refs, {k: c.hyps for k, c in got.items()}

    options = merge_metric_options(metric_kwargs, caller="score_files", bleu=bleu_kwargs, chrf=chrf_kwargs,
                                   ter=ter_kwargs)
    mobjs = _metric_objects(metrics, options, workers)
    return _score_chunks(chunks(), None, names, single, mobjs, sentence_level, progress)


def score_stream(chunks: Iterable[tuple[Sequence[Sequence[str | None]], Mapping[str, Sequence[str]]]],
                 metrics: Sequence[str | Metric] = ("bleu", "chrf"), *, workers: int = 1,
                 sentence_level: bool = True, progress: bool | None = None,
                 missing_refs: str | None = None, n_chunks: int | None = None,
                 metric_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
                 bleu_kwargs: dict | None = None, chrf_kwargs: dict | None = None,
                 ter_kwargs: dict | None = None) -> ScoreResult:
    """Score a stream of aligned chunks in bounded memory: each item is ``(refs, systems)``,
    K reference streams of n segments and ``{system name: n hypotheses}`` (the same systems in
    every chunk). Only the (N, k) statistics and the sentence scores are kept, so a generator
    reading files, a socket or a database cursor may be of any length. The result equals
    :func:`score` on the concatenated chunks (``r.corpus[system][metric]`` always, as several
    systems' results). ``n_chunks`` (if known) sizes the progress bar; the other keyword
    arguments are those of :func:`score` (``metric_kwargs={name: {option: value}}`` and its
    older spellings ``bleu_kwargs``, ``chrf_kwargs``, ``ter_kwargs``)."""
    options = merge_metric_options(metric_kwargs, caller="score_stream", bleu=bleu_kwargs, chrf=chrf_kwargs,
                                   ter=ter_kwargs)
    it = iter(chunks)
    try:
        first = next(it)
    except StopIteration:
        raise ValueError("score_stream: no chunks") from None
    names = list(first[1])
    if not names:
        raise ValueError("score_stream: no systems in the first chunk")

    def checked():
        for refs, systems in chain([first], it):
            if list(systems) != names:
                raise ValueError(f"score_stream: a chunk has systems {list(systems)}, the first "
                                 f"had {names}")
            yield refs, systems

    mobjs = _metric_objects(metrics, options, workers, missing_refs)
    return _score_chunks(checked(), n_chunks, names, False, mobjs, sentence_level, progress)


def _score_chunks(chunks: Iterable, n_chunks: int | None, names: list[str], single: bool,
                  mobjs: dict[str, Metric], sentence_level: bool, progress: bool | None,
                  shared=None) -> ScoreResult:
    """The shared loop: per chunk of segments, prepare each metric's references once and score
    every system; then sum statistics into corpus scores.

    ``shared``: ``(ref streams, repeated_rows(ref streams), chunk_size)`` of the whole corpus
    when its reference rows repeat: a lexical metric then prepares the distinct rows once (if
    they fit its memory bound) and scores every chunk against slices of them."""
    acc = _Accumulator(names, mobjs, sentence_level)
    whole: dict[str, Prepared] = {}
    bar = _progress(n_chunks * len(mobjs) if n_chunks else None, progress)
    for ref_slice, hyp_slices in chunks:
        a, z = acc.add_chunk(ref_slice, hyp_slices)
        for mname, metric in mobjs.items():
            if shared is not None and metric.prepares_rows_once(len(shared[1][0]), shared[2]):
                if mname not in whole:
                    whole[mname] = metric.prepare(shared[0], rows=shared[1])
                prepared = whole[mname].slice(a, z)
            elif metric.reads_sources:   # COMET: the chunk's own sources, segments a..z
                reader: Any = metric     # its prepare takes offset= (Metric.reads_sources)
                prepared = reader.prepare(ref_slice, offset=a)
            else:
                prepared = metric.prepare(ref_slice)
            acc.score(mname, metric, hyp_slices, prepared)
            bar.update(1)
    bar.close()
    for mname, metric in mobjs.items():
        n_src = len(getattr(metric, "sources", None) or ()) if metric.reads_sources else acc.n
        if n_src != acc.n:   # chunks took their sources by offset: a longer source list is an error
            raise ValueError(f"{mname}: {n_src} source segments but the corpus has {acc.n} segments; the "
                             "sources and references must have the same number of lines")
    return acc.result(single)


class _Accumulator:
    """Statistics and sentence scores of every (system, metric), chunk by chunk, and the
    per-segment reference counts (sacrebleu's num_refs) seen so far."""

    def __init__(self, names: list[str], mobjs: dict[str, Metric], sentence_level: bool):
        self.names, self.mobjs, self.sentence_level = names, mobjs, sentence_level
        self.stats: dict[str, dict[str, list]] = {s: {m: [] for m in mobjs} for s in names}
        self.scores: dict[str, dict[str, list]] = {s: {m: [] for m in mobjs} for s in names}
        self.ref_counts: set = set()
        self.n = 0
        self.unreferenced: np.ndarray | None = None  # this chunk's segments without references

    def add_chunk(self, ref_slice, hyp_slices) -> tuple[int, int]:
        """Count the chunk's references; returns its segment range ``(a, z)``."""
        from ...engine.metrics.base import present_mask

        self.unreferenced = None  # segments left out under missing_refs="skip": NaN scores
        if ref_slice and len(ref_slice[0]):
            counts = present_mask(ref_slice).sum(axis=0)
            if not counts.all():
                self.unreferenced = counts == 0
                counts = counts[~self.unreferenced]
            if counts.size:  # np.unique imports numpy.ma
                self.ref_counts.update((int(counts.min()), int(counts.max())))
        a = self.n
        self.n += len(next(iter(hyp_slices.values())))
        return a, self.n

    def score(self, mname: str, metric: Metric, hyp_slices, prepared) -> None:
        """Every system's statistics (and sentence scores) for one metric and chunk."""
        names = self.names
        if len(names) > 1 and metric.dedupes_outputs:
            # every system at once: repeated outputs scored once (lexical metrics: each
            # reference table built once for all the outputs of its segment)
            res = metric.systems_stats_and_scores([hyp_slices[s] for s in names], prepared,
                                                   self.sentence_level)
        else:
            res = [metric.stats_and_scores(hyp_slices[s], prepared, self.sentence_level)
                   for s in names]
        for sname, (st, sc) in zip(names, res):
            self.stats[sname][mname].append(st)
            if self.sentence_level:
                self.scores[sname][mname].append(_nan_where(sc, self.unreferenced))

    def result(self, single: bool) -> ScoreResult:
        """Corpus scores from the summed statistics; the per-segment columns."""
        num_refs = next(iter(self.ref_counts)) if len(self.ref_counts) == 1 else -1
        corpus: dict[str, dict[str, Score]] = {s: {} for s in self.names}
        stats: dict[str, dict[str, np.ndarray]] = {s: {} for s in self.names}
        cols: dict[str, list] = {m: [] for m in self.mobjs}
        for sname in self.names:
            for mname, metric in self.mobjs.items():
                st = _joined(self.stats[sname][mname])
                stats[sname][mname] = st
                metric.num_refs = num_refs
                corpus[sname][mname] = metric.compute_score_from_stats(metric.sum_stats(st))
                if self.sentence_level:
                    cols[mname].append(_joined(self.scores[sname][mname]))
        sentence = {m: np.concatenate(cols[m]) for m in self.mobjs} if self.sentence_level else {}
        signatures = {m: str(obj.get_signature()) for m, obj in self.mobjs.items()}
        return ScoreResult(corpus[self.names[0]] if single else corpus, sentence, self.names,
                           self.n, single, stats, signatures, self.mobjs)


def _joined(parts: list) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _nan_where(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """``scores`` with NaN where ``mask`` (segments without any reference) is set."""
    if mask is not None:
        scores = np.array(scores, dtype=np.float64)
        scores[mask] = np.nan
    return scores


def _progress(total: int | None, enabled: bool | None):
    """A bar per (chunk, metric) by :mod:`mtscore.engine.progress`'s rule (a terminal, not CI,
    unless forced); by default only when there are more than 4 steps to show."""
    from ...engine.progress import progress_bar

    if enabled is None and total is not None and total <= 4:
        enabled = False
    return progress_bar(total, "mtscore", enabled, unit="chunk")
