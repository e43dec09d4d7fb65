"""What the registry knows of a metric: :class:`MetricSpec` (names, class, options, how its
corpus score aggregates, where it runs) and :class:`Option` / :class:`OptionGroup` (its
constructor options as command-line flags).

Plain classes, no ``dataclasses`` (which imports ``inspect``) nor ``typing``: the registry is read when
``mtscore`` and its CLI start, so building a spec imports nothing. The metric class is named by
module path and class name and imported only when a metric object is made.
"""
from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: ``typing`` costs milliseconds at start-up
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

__all__ = ["AGGREGATES", "MetricSpec", "Option", "OptionGroup"]

#: how a metric's corpus score comes from its segments: "sum" (the score of the summed
#: statistics, sacrebleu's corpus BLEU/chrF/TER) or "mean" (the mean of sentence scores:
#: EED, METEOR, BERTScore)
AGGREGATES = ("sum", "mean")

_UNSET: Any = object()  # "no default given" (argparse's own default then)


class Option:
    """One constructor option as a command-line flag (argparse's ``add_argument`` arguments).

    flags   : the option strings, e.g. ``("--smooth-method", "-s")``
    kwarg   : the constructor argument it sets (None: read only by the spec's ``from_args``)
    dest    : the ``args`` attribute (default: argparse's, from the first long flag)
    type, default, help, choices, metavar, action : as ``argparse.add_argument``
    """

    __slots__ = ("action", "choices", "default", "dest", "flags", "help", "kwarg", "metavar", "type")

    def __init__(self, *flags: str, kwarg: str | None = None, dest: str | None = None,
                 type: Callable[[str], Any] | None = None, default: Any = _UNSET, help: str | None = None,
                 choices: Sequence[Any] | None = None, metavar: str | None = None,
                 action: str | None = None):
        if not flags or not all(f.startswith("-") for f in flags):
            raise ValueError(f"Option: flags must start with '-', got {flags!r}")
        self.flags = flags
        self.kwarg = kwarg
        self.dest = dest
        self.type = type
        self.default = default
        self.help = help
        self.choices = choices
        self.metavar = metavar
        self.action = action

    @property
    def attr(self) -> str:
        """The ``args`` attribute argparse stores the value in."""
        if self.dest is not None:
            return self.dest
        long = next((f for f in self.flags if f.startswith("--")), self.flags[0])
        return long.lstrip("-").replace("-", "_")

    def add_to(self, group) -> None:
        """Add the flag to an argparse parser or argument group."""
        kw: dict[str, Any] = {}
        for name in ("dest", "type", "choices", "metavar", "action"):
            value = getattr(self, name)
            if value is not None:
                kw[name] = value
        if self.default is not _UNSET:
            kw["default"] = self.default
        if self.help is not None:
            kw["help"] = self.help
        group.add_argument(*self.flags, **kw)


class OptionGroup:
    """A titled group of flags, shared by the metrics one class serves (chrF and chrF++; WER,
    PER and CER). ``section``: where ``mtscore --help`` lists it, after the "metrics" group
    (the lexical metrics) or after "reporting" (BERTScore, whose flags are no metric's)."""

    __slots__ = ("options", "section", "title")

    def __init__(self, title: str, options: Sequence[Option], section: str = "metrics"):
        if section not in ("metrics", "reporting"):
            raise ValueError(f"OptionGroup {title!r}: section must be 'metrics' or 'reporting', got {section!r}")
        self.title = title
        self.options = tuple(options)
        self.section = section

    def add_to(self, parser) -> None:
        group = parser.add_argument_group(self.title)
        for opt in self.options:
            opt.add_to(group)

    def kwargs(self, args) -> dict:
        """``{constructor argument: value}`` of the options that set one."""
        return {o.kwarg: getattr(args, o.attr) for o in self.options if o.kwarg is not None}


class MetricSpec:
    """One registry entry: everything the API, the CLI, resampling, Ray and the decoder need
    to know of a metric, so that none of them lists metric names.

    name          : the registry name (``mtscore -m NAME``, ``score(metrics=[NAME])``), lower case
    module, cls   : where the class lives (``"mtscore.engine.metrics.bleu"``, ``"BLEU"``),
                    imported on first use
    fixed         : constructor arguments the name means (chrf++: ``{"word_order": 2}``); an
                    option given with another value is refused
    family        : the name whose options it takes (chrf++ takes chrF's: ``chrf_kwargs``, the
                    chrF flags); default ``name``
    name_of       : ``f(metric) -> str``: the name of an object of the class where the options
                    decide it (chrF: ``chrf++`` for word order 2); default ``name``
    export        : whether ``mtscore.<cls>`` names the class (one entry per class does)
    options       : its command-line flags (:class:`OptionGroup`, possibly shared), or None
    from_args     : ``f(args, kwargs) -> kwargs``: the constructor arguments of parsed
                    command-line ``args`` beyond the flags' own (BLEU's target language, ...),
                    given the flags' ``kwargs``; default: those alone
    cli           : ``mtscore -m`` offers it (chrf++ is chrF with ``--chrf-word-order 2`` there)
    report_runner : ``"module:Class"``, the command line's own runner of it, or None (scored
                    with the other metrics). ``mtscore`` and ``score-table`` score a metric that
                    has one apart from the others, on the whole corpus' text (its own encoder,
                    progress and report lines: BERTScore's
                    ``"mtscore.bindings.cli.bertscore:BERTScoreRunner"``); the class is imported
                    only when ``-m`` names the metric (:meth:`load_runner`), so ``mtscore --help``
                    imports nothing of it. It takes ``(args, n_systems=None)`` and has
                    ``n_systems``, ``result(hyps, refs) -> dict`` (``name``, ``score``,
                    ``signature``) and ``format(hyps, refs) -> str``; for ``score-table --ray``
                    the class methods ``check_ray(args)``, ``ray_kwargs(args)`` and
                    ``from_ray(args, result, test_set, name)``
    separate_runner : ``report_runner is not None`` (read only)
    lower_is_better : as the class's ``lower_is_better`` (TER, WER, PER, CER, EED)
    aggregate     : "sum" or "mean" (:data:`AGGREGATES`)
    resamples     : bootstrap CIs and paired bootstrap / AR tests take its statistics
                    (``compare``, ``--confidence``, ``--paired-bs``)
    ray           : ``score_ray`` scores it; ``ray_actors``: on actors (a model loaded once per
                    actor, on a GPU each where the cluster has them: its ``device`` option is
                    set to "cuda" there and to "cpu" on the driver); ``ray_defaults``: its
                    constructor arguments on a worker unless given; ``ray_check``:
                    ``f(kwargs)`` raising for options Ray cannot run
    sources       : it reads the source segments (COMET: its ``sources`` attribute, N strings
                    aligned with the hypotheses); ``score_ray`` carries the source column
                    (``src=``) to its workers, which set ``metric.sources`` from each batch
    decoder       : ``mtscore decoder ... -m`` offers it (the Python decoder functions take
                    any registered name)
    sentence_defaults : constructor defaults where it scores single sentences (the decoder
                    API, n-best, MBR, rewards): BLEU's effective order
    ids           : scores token ids directly (id mode: BLEU, TER): ``id_metric`` and the
                    decoder's id functions accept the name. The class's statistics of ids come
                    from the BLEU n-gram or TER shift-search kernels (a subclass of either),
                    else from its own ``stats_of_ids(hyps, refs, groups)`` (``TokenIds``
                    hyps and refs, int64 ``(N + 1,)`` reference offsets ``groups``) giving an
                    ``(N, k)`` statistics matrix, as its ``corpus_stats`` would of the ids
                    written as text
    id_defaults   : constructor defaults in id mode (BLEU: ``tokenize="none"``, each id one
                    token); the caller's options win
    extra         : the pip extra its class needs, if any
    """

    __slots__ = ("aggregate", "cli", "cls", "decoder", "export", "extra", "family", "fixed",
                 "from_args", "id_defaults", "ids", "lower_is_better", "module", "name", "name_of", "options", "ray",
                 "ray_actors", "ray_check", "ray_defaults", "report_runner", "resamples",
                 "sentence_defaults", "sources")

    def __init__(self, name: str, module: str, cls: str, *, fixed: Mapping[str, Any] | None = None,
                 family: str | None = None, name_of: Callable[[Any], str] | None = None,
                 export: bool = True, options: OptionGroup | None = None,
                 from_args: Callable[[Any, dict], dict] | None = None, cli: bool = True,
                 report_runner: str | None = None, lower_is_better: bool = False, aggregate: str = "sum",
                 resamples: bool = True, ray: bool = True, ray_actors: bool = False,
                 ray_defaults: Mapping[str, Any] | None = None,
                 ray_check: Callable[[dict], None] | None = None, decoder: bool = False,
                 sentence_defaults: Mapping[str, Any] | None = None, ids: bool = False,
                 id_defaults: Mapping[str, Any] | None = None, extra: str | None = None,
                 sources: bool = False):
        if not name or name != name.lower():
            raise ValueError(f"MetricSpec: name must be a non-empty lower-case string, got {name!r}")
        if report_runner is not None and report_runner.count(":") != 1:
            raise ValueError(f"MetricSpec {name!r}: report_runner must be 'module:Class', got {report_runner!r}")
        if aggregate not in AGGREGATES:
            raise ValueError(f"MetricSpec {name!r}: aggregate must be one of {AGGREGATES}, got {aggregate!r}")
        self.name = name
        self.module = module
        self.cls = cls
        self.fixed = dict(fixed or {})
        self.family = family or name
        self.name_of = name_of
        self.export = export
        self.options = options
        self.from_args = from_args
        self.cli = cli
        self.report_runner = report_runner
        self.lower_is_better = lower_is_better
        self.aggregate = aggregate
        self.resamples = resamples
        self.ray = ray
        self.ray_actors = ray_actors
        self.ray_defaults = dict(ray_defaults or {})
        self.ray_check = ray_check
        self.decoder = decoder
        self.sentence_defaults = dict(sentence_defaults or {})
        self.ids = ids
        self.id_defaults = dict(id_defaults or {})
        self.extra = extra
        self.sources = sources

    def load(self) -> type:
        """The metric class (imports its module)."""
        return getattr(importlib.import_module(self.module), self.cls)

    @property
    def separate_runner(self) -> bool:
        """The CLI scores it apart from the other metrics, with its :attr:`report_runner`."""
        return self.report_runner is not None

    def load_runner(self) -> Any:
        """The command line's runner class of it (imports its module; ``ValueError`` without a
        :attr:`report_runner`)."""
        if self.report_runner is None:
            raise ValueError(f"metric {self.name!r} has no report_runner")
        module, _, cls = self.report_runner.partition(":")
        return getattr(importlib.import_module(module), cls)

    def cli_kwargs(self, args) -> dict:
        """Constructor arguments from parsed command-line ``args`` (the flags, then ``from_args``)."""
        kwargs = self.options.kwargs(args) if self.options is not None else {}
        return self.from_args(args, kwargs) if self.from_args is not None else kwargs

    def __repr__(self) -> str:
        return f"MetricSpec({self.name!r}, {self.module!r}, {self.cls!r})"
