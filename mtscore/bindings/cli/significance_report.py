"""Text / LaTeX / JSON reports of paired tests and bootstrap CIs, formatted exactly like the
sacrebleu 2.6.0 CLI (``sacrebleu/utils.py::print_results_table`` and ``print_single_results``).

The CLI calls :func:`run_paired_cli` (``-pbs/-par`` with several systems) or
:func:`run_ci_cli` (``-ci`` with one system); both return the text sacrebleu would print.
Text tables come from :mod:`.text_grid` (tabulate's ``fancy_grid``, byte for byte, without its
import cost); LaTeX tables and any table outside what that module reproduces use the ``tabulate``
package (as sacrebleu does), imported lazily.
"""
from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ...engine.significance import ComparisonResult, compare
from .text_grid import fancy_grid

_ANSI = {"yellow": "\x1b[33m", "cyan": "\x1b[36m", "red": "\x1b[31m", "green": "\x1b[32m"}
_RESET = "\x1b[0m"


def _color(msg: str, color: str, enabled: bool) -> str:
    return f"{_ANSI[color]}{msg}{_RESET}" if enabled else msg


def colors_enabled(args=None, stream=None) -> bool:
    """sacrebleu's effective colour rule: off with ``--no-color`` or ``NO_COLOR``; colorama
    strips ANSI codes when stdout is not a terminal."""
    if os.environ.get("NO_COLOR", False) or (args is not None and getattr(args, "no_color", False)):
        return False
    stream = stream if stream is not None else sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _tabulate():
    try:
        from tabulate import tabulate
    except ImportError:  # pragma: no cover
        raise ImportError("significance tables need tabulate: pip install tabulate") from None
    return tabulate


def _format_score_lines(scores: dict[str, list], width: int, multiline: bool, color: bool) -> dict[str, list[str]]:
    scores = dict(scores)
    new_scores: dict[str, list[str]] = {"System": scores.pop("System")}
    brk = "\n" if multiline else " "
    is_bootstrap = False

    def pv(p: float) -> str:
        msg = f"(p = {p:.4f})"
        if p > 0.05:
            return _color(msg, "red", color)
        return msg + "*"

    for metric, vals in scores.items():
        out = []
        for r in vals:
            if isinstance(r, str):
                out.append(r)
                continue
            s = f"{r.score:.{width}f}"
            if r.mean is not None:
                is_bootstrap = True
                s += f" ({r.mean:.{width}f} ± {r.ci:.{width}f})"
            if r.p_value is not None:
                s += brk + pv(r.p_value)
            out.append(s)
        if is_bootstrap:
            metric += " (μ ± 95% CI)"
        new_scores[metric] = out
    return new_scores


def _jsonable(v):
    # sacrebleu dumps Result.__dict__; its numpy float32 means (chrF) are not JSON
    # serialisable there (a crash); here they are written as floats.
    if v is None or isinstance(v, (int, float, str)):
        return v if not hasattr(v, "item") else v.item()
    if hasattr(v, "item"):
        return v.item()
    return v


def format_results_table(scores: dict[str, list], signatures: Mapping[str, Any], fmt: str = "text",
                         width: int = 1, short: bool = False, color: bool = False,
                         paired: str | None = None, n_samples: int | None = None) -> str:
    """sacrebleu's ``print_results_table`` as a string.

    scores: ``{"System": [names...], metric: [Result-like or str, ...]}`` (PairedTest layout,
    baseline name prefixed ``Baseline: ``); signatures: metric -> Signature or str;
    fmt: ``json`` | ``text`` | ``latex``; paired: ``bs`` | ``ar`` | None.
    """
    if fmt == "json":
        return _results_json(scores)
    table, baseline_name = _results_grid(scores, fmt, width, color)
    lines = [table, ""]
    if paired:
        lines += _paired_legend(paired, n_samples, baseline_name, color)
    lines += _signature_lines(signatures, short)
    return "\n".join(lines) + "\n"


def _results_json(scores: dict[str, list]) -> str:
    """The ``json`` format: one object per system."""
    proper = []
    keys = list(scores.keys())
    for i in range(len(scores["System"])):
        value: dict[str, Any] = {"system": scores["System"][i]}
        for k in keys[1:]:
            r = scores[k][i]
            value[k] = r if isinstance(r, str) else {a: _jsonable(b) for a, b in vars(r).items()}
        proper.append(value)
    return json.dumps(proper, indent=4) + "\n"


def _results_grid(scores: dict[str, list], fmt: str, width: int, color: bool) -> tuple[str, str]:
    """The tabulated scores (``text``: fancy grid, ``latex``: booktabs) and the baseline's name."""
    tablefmt = {"text": "fancy_grid", "latex": "latex_booktabs"}.get(fmt, fmt)
    res = _format_score_lines(scores, width, multiline=tablefmt == "fancy_grid", color=color)
    new: dict[str, list[str]] = {}
    has_baseline = False
    baseline_name = ""
    for name in res:
        val = list(res[name])
        if val[0].startswith("Baseline:") or has_baseline:
            if val[0].startswith("Baseline:"):
                baseline_name = val[0]
            has_baseline = True
            val[0] = _color(val[0], "yellow", color)
        new[_color(name, "cyan", color)] = val
    table = fancy_grid(new) if tablefmt == "fancy_grid" else None
    if table is None:  # LaTeX, or a table the own grid is not certain to print as tabulate does
        table = _tabulate()(new, headers="keys", tablefmt=tablefmt, colalign=("right",),
                            stralign="center", numalign="center", floatfmt=f".{width}f")
    return table, baseline_name


def _paired_legend(paired: str, n_samples: int | None, baseline_name: str, color: bool) -> list[str]:
    """sacrebleu's explanation of a paired test under the table."""
    test_type = "bootstrap resampling" if paired == "bs" else "approximate randomization"
    sample_type = "resampling trials" if paired == "bs" else "trials"
    msg = f"Paired {test_type} test with {n_samples} {sample_type}"
    bline = _color("baseline", "yellow", color)
    bline_name = _color(baseline_name, "yellow", color)
    null_hyp = _color("Null hypothesis", "green", color)
    null_low = null_hyp.lower()  # sacrebleu lower-cases the (coloured) string
    pval_color = _color("highlighted in red", "red", color)
    lines = ["-" * len(msg) + "\n" + msg + "\n" + "-" * len(msg)]
    lines.append(f" - Each system is pairwise compared to {bline_name}.")
    if paired == "bs":
        lines.append("   Actual system score / bootstrap estimated true mean / 95% CI are provided for each metric.")
    else:
        lines.append("   Actual system score is provided for each metric.")
    lines.append("")
    lines.append(f" - {null_hyp}: the system and the {bline} translations are essentially")
    lines.append(f"   generated by the same underlying process. For a given system and the {bline},")
    lines.append("   the p-value is roughly the probability of the absolute score difference (delta)")
    lines.append(f"   or higher occurring due to chance, under the assumption that the {null_low} is correct.")
    lines.append("")
    lines.append(f" - Assuming a significance threshold of 0.05, the {null_low} can be rejected")
    lines.append('   for p-values < 0.05 (marked with "*"). This means that the delta is unlikely to be attributed')
    lines.append(f'   to chance, hence the system is significantly "different" than the {bline}.')
    lines.append(f"   Otherwise, the p-values are {pval_color}.")
    lines.append("")
    lines.append(f' - NOTE: Significance does not tell whether a system is "better" than the {bline} but rather')
    lines.append('   emphasizes the "difference" of the systems in terms of the replicability of the delta.')
    lines.append("")
    return lines


def _signature_lines(signatures: Mapping[str, Any], short: bool) -> list[str]:
    lines = ["-----------------", "Metric signatures", "-----------------"]
    for name, sig in signatures.items():
        s = sig.format(short) if hasattr(sig, "format") and not isinstance(sig, str) else str(sig)
        lines.append(f" - {name:<10} {s}")
    return lines


def format_comparison(result: ComparisonResult, fmt: str = "text", width: int = 1, short: bool = False,
                      color: bool = False) -> str:
    """Report of a baseline-mode :func:`mtscore.compare` result, exactly as sacrebleu's CLI
    prints a paired test. The baseline gets the ``Baseline: `` prefix if it has none."""
    if result.baseline is None:
        raise ValueError("format_comparison: all-pairs results have no sacrebleu layout; "
                         "use format_pairwise_matrix")
    sigs, scores = result.to_sacrebleu()
    names = list(scores["System"])
    if not names[0].startswith("Baseline"):
        names[0] = f"Baseline: {names[0]}"
    scores["System"] = names
    return format_results_table(scores, sigs, fmt, width, short, color, paired=result.test,
                                n_samples=result.n_samples)


def format_pairwise_matrix(result: ComparisonResult, fmt: str = "text", width: int = 4) -> str:
    """All-pairs p-value matrices (one table per metric; json: nested lists)."""
    if result.p_values is None:
        raise ValueError("format_pairwise_matrix: run compare(..., all_pairs=True)")
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=4, ensure_ascii=False) + "\n"
    tablefmt = {"text": "fancy_grid", "latex": "latex_booktabs"}.get(fmt, fmt)
    out = []
    for m in result.metrics:
        mat = result.p_values[m]
        rows = [[result.systems[i]] + ["-" if i == j else f"{mat[i, j]:.{width}f}" for j in range(len(result.systems))]
                for i in range(len(result.systems))]
        out.append(f"{m} pairwise p-values ({result.test}, n={result.n_samples}, seed={result.seed})")
        out.append(_tabulate()(rows, headers=["System", *list(result.systems)], tablefmt=tablefmt))
        out.append("")
    return "\n".join(out)


def _ordered_metrics(metrics) -> list[Any]:
    if isinstance(metrics, Mapping):
        return list(metrics.values())
    return list(metrics)


def run_paired_cli(args, systems: Mapping[str, Sequence[str]] | Sequence[tuple[str, Sequence[str]]],
                   refs, metrics, color: bool | None = None) -> str:
    """What ``sacrebleu -i A B C -pbs|-par ...`` prints, as a string.

    args: the CLI namespace (uses ``paired_bs``, ``paired_ar``, ``paired_bs_n``, ``paired_ar_n``,
    ``format``, ``width``, ``short``, ``no_color``, optional ``seed``); systems: names -> hyps
    in command-line order, the first being the baseline (names as sacrebleu shows them, i.e. file
    names; ``Baseline: `` is prefixed here); refs: K reference streams or None (metrics already
    hold cached references); metrics: metric objects in ``-m`` order (list or dict).
    ``SACREBLEU_FORMAT`` should already be applied to ``args.format`` by the caller.
    """
    test = "bs" if getattr(args, "paired_bs", False) else "ar"
    n = getattr(args, "paired_bs_n", 1000) if test == "bs" else getattr(args, "paired_ar_n", 10000)
    res = compare(systems, refs, metrics=_ordered_metrics(metrics), test=test, n=n,
                  seed=getattr(args, "seed", None))
    if color is None:
        color = colors_enabled(args)
    fmt = getattr(args, "format", "json")
    return format_comparison(res, fmt, getattr(args, "width", 1), getattr(args, "short", False), color)


def run_ci_cli(args, hyps: Sequence[str], refs, metrics, color: bool | None = None) -> str:
    """What ``sacrebleu -i A -ci [-cin S]`` prints for one system, as a string (metrics are
    evaluated in sorted name order, as the CLI does with its metric dict keys)."""
    items = [metrics[k] for k in sorted(metrics)] if isinstance(metrics, Mapping) else list(metrics)
    n_boot = getattr(args, "confidence_n", 1000) if getattr(args, "confidence", False) else 1
    fmt = getattr(args, "format", "json")
    seed = getattr(args, "seed", None)
    out = []
    for metric in items:
        if seed is not None and n_boot > 1:
            from ...engine.significance import bootstrap_ci

            stats = metric.corpus_stats(hyps, refs)
            score = metric.compute_score_from_stats(metric.sum_stats(stats))
            bootstrap_ci(metric, stats, score, n_boot, seed=seed)
        else:
            score = metric.corpus_score(hyps, refs, n_bootstrap=n_boot)
        sig = metric.get_signature().format(getattr(args, "short", False) if fmt != "json" else False)
        out.append(score.format(getattr(args, "width", 1), getattr(args, "score_only", False), sig, fmt == "json"))
    if color is None:
        color = colors_enabled(args)
    return format_single_results(out, fmt, color)


def format_single_results(results: list[str], fmt: str = "json", color: bool = False) -> str:
    """sacrebleu's ``print_single_results`` as a string."""
    if fmt == "json":
        if len(results) > 1:
            return "[\n" + ",\n".join(results) + "\n]\n"
        return results[0] + "\n"
    results = list(results)
    if results and "μ" in results[0]:
        color_re = re.compile(r"(\(μ = [0-9\.]+ ± [0-9\.]+\))")
        results = [color_re.sub(lambda m: _color(m.group(), "cyan", color), r) for r in results]
    if len(results) == 1:
        return results[0] + "\n"
    lens, lines = [], []
    for line in results:
        try:
            lens.append(line.index("=") - 1)
        except ValueError:
            lines.append(line)
    if lens:
        w = max(lens)
        for _len, line in zip(lens, [r for r in results if "=" in r]):
            left, right = line[:_len], line[_len:]
            lines.append(f"{left:>{w}}{right}")
    return "\n".join(lines) + "\n"
