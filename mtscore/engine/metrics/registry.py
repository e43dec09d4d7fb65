"""The metric registry: one :class:`~.spec.MetricSpec` per metric name, read by ``mtscore``'s
lazy exports, the batch API, the CLI (``-m`` choices, each metric's flag group, its constructor
arguments), ``compare``, the decoder functions, rewards and ``score_ray``; no other module lists
metric names. :func:`register_metric` adds one (a user's metric, the tests' toy).

Nothing here imports a metric module: a spec names its class by module and class name, and
:func:`make_metric` imports it when an object is made.
"""
from __future__ import annotations

from .spec import MetricSpec, Option, OptionGroup

__all__ = ["METRICS", "SENTENCE_DEFAULTS", "MetricSpec", "Option", "OptionGroup", "get_spec",
           "make_metric", "make_sentence_metric", "metric_name", "register_metric",
           "sentence_options", "specs", "unregister_metric"]

#: metric name -> its spec, in registration order (the order of ``mtscore -m``'s choices)
METRICS: dict[str, MetricSpec] = {}

#: metric name -> constructor defaults where it scores single sentences (the decoder API,
#: n-best, MBR, RL rewards): each spec's ``sentence_defaults``
SENTENCE_DEFAULTS: dict[str, dict] = {}


def register_metric(spec: MetricSpec, *, replace: bool = False) -> MetricSpec:
    """Add ``spec`` to the registry: ``make_metric(spec.name)``, ``mtscore.score(metrics=[name])``,
    ``compare``, the decoder functions and (with ``cli=True``) ``mtscore -m NAME`` with its
    flag group then know it. A name already registered is refused unless ``replace``."""
    if not isinstance(spec, MetricSpec):
        raise TypeError(f"register_metric: expected a MetricSpec, got {type(spec).__name__}")
    if spec.name in METRICS and not replace:
        raise ValueError(f"register_metric: metric {spec.name!r} is already registered "
                         "(pass replace=True to replace it)")
    _check_flags(spec)
    METRICS[spec.name] = spec
    if spec.sentence_defaults:
        SENTENCE_DEFAULTS[spec.name] = spec.sentence_defaults
    else:
        SENTENCE_DEFAULTS.pop(spec.name, None)
    return spec


def _check_flags(spec: MetricSpec) -> None:
    """A new flag group's flags must differ from the other registered groups' (argparse would
    refuse the whole command line)."""
    if spec.options is None or not spec.cli:
        return
    for other in METRICS.values():
        group = other.options
        if other.name == spec.name or group is None or group is spec.options or not other.cli:
            continue
        taken = {f for o in group.options for f in o.flags}
        clash = sorted(taken.intersection(f for o in spec.options.options for f in o.flags))
        if clash:
            raise ValueError(f"register_metric: {spec.name!r}: flag(s) {', '.join(clash)} already "
                             f"belong to metric {other.name!r}")


def unregister_metric(name: str) -> MetricSpec:
    """Remove metric ``name`` from the registry (a test's toy metric); returns its spec."""
    SENTENCE_DEFAULTS.pop(name, None)
    return METRICS.pop(name)


def specs() -> list[MetricSpec]:
    """Every registered spec, in registration order."""
    return list(METRICS.values())


def get_spec(name: str) -> MetricSpec:
    """The spec of metric ``name`` (any case); ``ValueError`` naming the registered ones."""
    spec = METRICS.get(name.lower())
    if spec is None:
        raise ValueError(f"unknown metric {name!r}; choose from {', '.join(METRICS)}")
    return spec


def sentence_options(name: str, options: dict) -> dict:
    """``options`` over :data:`SENTENCE_DEFAULTS` of metric ``name`` (the caller's options win)."""
    return {**SENTENCE_DEFAULTS.get(name.lower(), {}), **options}


def make_sentence_metric(name: str, **kwargs):
    """:func:`make_metric` with :data:`SENTENCE_DEFAULTS` (the caller's options win)."""
    return make_metric(name, **sentence_options(name, kwargs))


def make_metric(name: str, **kwargs):
    """A metric object from its registered name (bleu, chrf, chrf++, ter, wer, per, cer, eed,
    meteor, bertscore, and any :func:`register_metric` added) and constructor arguments."""
    spec = get_spec(name)
    defaults = spec.fixed
    for opt, value in defaults.items():  # a name that fixes an option means it ("chrf++": word order 2)
        if opt in kwargs and kwargs[opt] != value:
            raise ValueError(f"metric {name!r} means {opt}={value!r}, but {opt}={kwargs[opt]!r} was given; "
                             f"use the plain name (e.g. 'chrf') with {opt}={kwargs[opt]!r}")
    klass = spec.load()
    try:
        return klass(**{**defaults, **kwargs})
    except TypeError:
        _check_options(name, klass, kwargs)  # names the unknown options, if that was it
        raise


def metric_name(metric) -> str:
    """The registry name of a metric object: the name of the entry for its class that fixes no
    option (its ``name_of`` where it has one: chrF with word n-grams as sacrebleu names it,
    ``chrf++`` for ``word_order=2``, ``chrf+`` for 1), else its class name in lower case."""
    t = type(metric)
    for spec in METRICS.values():
        if not spec.fixed and spec.cls == t.__name__ and spec.module == t.__module__:
            return spec.name_of(metric) if spec.name_of is not None else spec.name
    return t.__name__.lower()


def _check_options(name: str, klass, kwargs: dict) -> None:
    """A ``TypeError`` naming the unknown options and the known ones (not Python's bare
    "unexpected keyword argument" of the constructor). Only on the error path: ``inspect``
    costs milliseconds to import."""
    import inspect

    params = inspect.signature(klass).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(set(kwargs) - set(params))
    if unknown:
        known = ", ".join(n for n in params if n != "references")
        raise TypeError(f"{name}: unknown option(s) {', '.join(unknown)}; its options: {known}") from None


def _register_builtins() -> None:
    from .builtin_specs import BUILTIN

    for spec in BUILTIN:
        register_metric(spec)


_register_builtins()
