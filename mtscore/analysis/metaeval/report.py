"""Meta-evaluation computations bundled for reports, and text / JSON / CSV / HTML renderers.

``meta_evaluate`` runs the whole system-level battery on one language pair: Pearson, Spearman
and Kendall with and without outliers, bootstrap CIs, Williams matrices and winners, top-N and
rolling windows; ``darr`` results can be attached. ``render_html`` writes a self-contained page
(PNG figures embedded as base64).
"""
from __future__ import annotations

import base64
import csv
import html
import io
import json
import warnings
from collections.abc import Sequence

import numpy as np

from ..correlation import bootstrap_ci, kendall, rolling_window, spearman, top_n
from ..data.released import SysLevel
from ..errors import AnalysisInputError
from ..output import jsonable
from .outliers import mad_outliers
from .williams import williams_matrix, winners

__all__ = [
    "MIN_SYSTEMS",
    "figures_for",
    "meta_evaluate",
    "render_csv",
    "render_html",
    "render_json",
    "render_text",
]


MIN_SYSTEMS = 4  # the Williams test has n - 3 degrees of freedom; Pearson over 3 points says little


def meta_evaluate(sl: SysLevel, outliers: Sequence[str] | None = None, n_resamples: int = 1000,
                  seed: int = 12345, min_n: int = 4, windows: Sequence[int] = (4, 8),
                  subsets_k: int | None = None, subset_draws: int = 10000) -> dict:
    """System-level battery for one language pair. ``outliers``: names to remove; None means
    MAD on the human scores (1.4826, |z| > 2.5). Metrics with missing systems are dropped.
    ``subsets_k`` adds ``res["subsets"]``: every metric's r over all k-system subsets (random
    ``subset_draws`` when there are too many), grouped by the outliers each contains (Mathur et al. 2020 §4.2, Fig. 2).
    Fewer than ``MIN_SYSTEMS`` systems, no complete metric or constant human scores raise
    :class:`AnalysisInputError`; lesser problems (a constant metric, too few systems left
    without the outliers) are explained in ``res["notes"]`` (one line each)."""
    full = _usable(sl)
    notes = _metric_notes(sl, full)
    sl = full
    if outliers is None:
        out_mask = mad_outliers(sl.human)
        source = "MAD (1.4826, |z| > 2.5)"
    else:
        oset = set(outliers)
        out_mask = np.array([s in oset for s in sl.systems], dtype=bool)
        source = "given list"
    res: dict = {"lp": sl.lp, "systems": list(sl.systems), "human": sl.human.tolist(),
                 "metrics": list(sl.metrics), "outliers": [s for s, o in zip(sl.systems, out_mask) if o],
                 "outlier_source": source, "n_all": len(sl.systems), "n_excl": int((~out_mask).sum()),
                 "notes": notes}
    # constant inputs give NaN correlations on purpose (explained in the notes): no numpy warnings
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res["table"] = {tag: d for tag, mask in (("all", np.ones_like(out_mask)), ("excl", ~out_mask))
                        if (d := _battery(sl, mask, tag, n_resamples, seed, res["notes"])) is not None}
        res["order"] = np.argsort(-np.nan_to_num(res["table"]["all"]["pearson"], nan=-np.inf),
                                  kind="mergesort").tolist()
        n_ci = min(n_resamples, 200)  # per-point CIs for the curves: 200 draws keeps reports quick
        if len(sl.systems) >= min_n + 1:
            res["topn"] = top_n(sl.human, sl.scores, min_n=min_n, ci=True, n_resamples=n_ci, seed=seed)
        res["rolling"] = {w: rolling_window(sl.human, sl.scores, w, ci=True, n_resamples=n_ci, seed=seed)
                          for w in windows if len(sl.systems) > w}
        if subsets_k is not None:
            res["subsets"] = _subsets(sl, out_mask, subsets_k, subset_draws, seed, res["notes"])
    res["out_mask"] = out_mask
    return res


def _subsets(sl: SysLevel, out_mask: np.ndarray, k: int, draws: int, seed: int, notes: list[str]) -> dict:
    """Mathur et al. 2020 §4.2, Fig. 2 for the report: r over k-subsets, marked by (at most 6 of) the outliers."""
    import math

    from .subsets import MAX_ENUMERATE, subset_correlations

    n = len(sl.systems)
    if not 3 <= k <= n:
        raise AnalysisInputError(f"--subsets {k}: the subset size must be between 3 and the number of systems ({n})")
    marked = [int(i) for i in np.flatnonzero(out_mask)]
    if len(marked) > 6:
        notes.append(f"subsets: {len(marked)} outliers; only the first 6 label the subset groups")
        marked = marked[:6]
    every = math.comb(n, k) <= MAX_ENUMERATE
    res = subset_correlations(sl.human, sl.scores, k, marked, None if every else draws, seed,
                              names=[s.rsplit(".", 1)[0] for s in sl.systems])
    res["metrics"] = list(sl.metrics)
    return res


def _usable(sl: SysLevel) -> SysLevel:
    """The complete metrics of ``sl``, or AnalysisInputError when nothing can be computed."""
    where = sl.extra.get("path", sl.lp)
    full = sl.complete_metrics()
    n = len(sl.systems)
    if n < MIN_SYSTEMS:
        raise AnalysisInputError(
            f"{where}: {n} MT system(s) (rows named Human* do not count); the meta-evaluation needs at "
            f"least {MIN_SYSTEMS}: the Williams test has n - 3 degrees of freedom")
    if not full.metrics:
        raise AnalysisInputError(
            f"{where}: no metric column with a score for every system" +
            (f" ({', '.join(sl.metrics[:8])} have missing cells)" if sl.metrics else " (no metric columns at all)"))
    if np.ptp(sl.human) == 0:
        raise AnalysisInputError(f"{where}: all {n} HUMAN scores are equal ({sl.human[0]:g}); "
                                 "correlations with constant human scores are undefined")
    return full


def _metric_notes(sl: SysLevel, full: SysLevel) -> list[str]:
    """One line each about metrics left out (incomplete) and metrics that cannot correlate."""
    notes = []
    partial = [m for m in sl.metrics if m not in set(full.metrics)]
    if partial:
        more = f" and {len(partial) - 10} more" if len(partial) > 10 else ""
        notes.append(f"left out {len(partial)} metric(s) without a score for every system: "
                     f"{', '.join(partial[:10])}{more}")
    const = [m for m, row in zip(full.metrics, full.scores) if np.ptp(row) == 0]
    if const:
        notes.append(f"metric(s) {', '.join(const)} give every system the same score: their correlations "
                     "are undefined (NaN) and they are never winners")
    return notes


def _battery(sl: SysLevel, mask: np.ndarray, tag: str, n_resamples: int, seed: int,
             notes: list[str]) -> dict | None:
    """Correlations, CIs and Williams winners over the systems in ``mask`` (None: too few)."""
    h, M = sl.human[mask], sl.scores[:, mask]
    if tag == "excl" and (h.size < MIN_SYSTEMS or np.ptp(h) == 0):
        why = f"only {h.size} remain" if h.size < MIN_SYSTEMS else "the human scores of the rest are all equal"
        notes.append(f"no correlations without the outliers: {why} (need {MIN_SYSTEMS} distinct)")
        return None
    r, lo, hi = bootstrap_ci(h, M, "pearson", n_resamples, seed=seed)
    _rr, p = williams_matrix(h, M)
    return {"pearson": r, "pearson_low": lo, "pearson_high": hi,
            "spearman": spearman(h, M), "kendall": kendall(h, M),
            "williams_p": p, "winner": winners(p) & np.isfinite(r), "n": int(h.size)}


def _rows(res: dict) -> list[dict]:
    rows = []
    t = res["table"]
    for i in res["order"]:
        row = {"metric": res["metrics"][i]}
        for tag in ("all", "excl"):
            if tag not in t:
                continue
            d = t[tag]
            row.update({f"pearson_{tag}": float(d["pearson"][i]), f"ci_low_{tag}": float(d["pearson_low"][i]),
                        f"ci_high_{tag}": float(d["pearson_high"][i]), f"spearman_{tag}": float(d["spearman"][i]),
                        f"kendall_{tag}": float(d["kendall"][i]), f"winner_{tag}": bool(d["winner"][i]),
                        f"n_{tag}": d["n"]})
        rows.append(row)
    return rows


def render_text(res: dict) -> str:
    out = [f"language pair {res['lp']}: {res['n_all']} systems, {res['n_all'] - res['n_excl']} outliers "
           f"({res['outlier_source']}): {', '.join(res['outliers']) or '-'}", ""]
    hdr = f"{'metric':<22} {'r all':>7} {'95% CI':>17} {'tau':>7} {'r -out':>7} {'95% CI':>17} {'tau':>7}"
    out.append(hdr)
    out.append("-" * len(hdr))
    def cell(row, tag):
        if f"pearson_{tag}" not in row:
            return f"{'':>7} {'':>17} {'':>7}"
        star = "*" if row[f"winner_{tag}"] else " "
        return (f"{row[f'pearson_{tag}']:>6.3f}{star} [{row[f'ci_low_{tag}']:>6.3f},{row[f'ci_high_{tag}']:>6.3f}]"
                f" {row[f'kendall_{tag}']:>7.3f}")

    for row in _rows(res):
        out.append(f"{row['metric']:<22} {cell(row, 'all')} {cell(row, 'excl')}")
    out.append("")
    out.append("* = winner: not significantly outperformed by any other metric (Williams, one-sided, p <= 0.05)")
    if "darr" in res:
        out.append("")
        out.append("segment level (DARR Kendall-like, |raw DA diff| >= 25):")
        for m, d in res["darr"].items():
            out.append(f"  {m:<20} tau all {d['tau_all']:.4f} (n={d['n_all']})   w/o outliers {d['tau_excl']:.4f} (n={d['n_excl']})")
    if "pairwise" in res:
        out.append("")
        out.append("system pairs (human: one-sided Wilcoxon on DA z; metric: paired t-test on segment scores, "
                   "two-sided, alpha 0.05):")
        for m, d in res["pairwise"].items():
            out.append(f"  {m:<20} Type I {d['type_I']:>3}   Type II {d['type_II']:>3}   "
                       f"bins {', '.join(f'{lab}: {c.tolist()}' for lab, c in zip(d['labels'], d['counts']))}")
        out.append("  (counts per |metric delta| bin as [human worse, human n.s., human better]; NS = metric n.s.)")
    return "\n".join(out) + "\n"


def render_json(res: dict) -> str:
    payload = {k: v for k, v in res.items() if k not in ("out_mask",)}
    payload["rows"] = _rows(res)
    return json.dumps(jsonable(payload), indent=1) + "\n"


def render_csv(res: dict) -> str:
    rows = _rows(res)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0].keys()) if rows else ["metric"])
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def figures_for(res: dict, sl: SysLevel, max_curves: int = 6, decisions=None) -> dict[str, bytes]:
    """PNG figures for a report: scatter per top metric, top-N, rolling windows, Williams heat map."""
    from .. import plots

    sl = sl.complete_metrics()
    figs: dict[str, bytes] = {}
    order = res["order"]
    show = [i for i in order if sl.metrics[i] not in ("HUMAN_RAW",)][:max_curves]
    for i in show[:4]:
        figs[f"scatter: {sl.metrics[i]}"] = plots.scatter_fit(
            sl.human, sl.scores[i], labels=sl.systems, outliers=res["out_mask"],
            title=f"{res['lp']}: {sl.metrics[i]}", ylabel=sl.metrics[i])
    names = [sl.metrics[i] for i in show]
    if "topn" in res:
        t = res["topn"]
        sub = {k: (v[:, show] if v.ndim == 2 else v) for k, v in t.items()}
        figs["top-N"] = plots.topn_plot(sub, names, title=f"{res['lp']}: correlation over the top-N systems")
    for w, rw in res["rolling"].items():
        sub = {k: (v[:, show] if v.ndim == 2 else v) for k, v in rw.items()}
        figs[f"rolling window {w}"] = plots.rolling_plot(sub, names, w, title=f"{res['lp']}: rolling window of {w} systems")
    tag = "excl" if "excl" in res["table"] else "all"
    t = res["table"][tag]
    o = np.argsort(-t["pearson"], kind="mergesort")
    p = t["williams_p"][np.ix_(o, o)]
    figs["Williams p-values"] = plots.heatmap(
        np.where(p <= 0.05, p, np.nan), [res["metrics"][i] for i in o], [res["metrics"][i] for i in o],
        title=f"Williams test p <= 0.05 (row beats column; {'without outliers' if tag == 'excl' else 'all systems'})")
    if "subsets" in res:
        sub = dict(res["subsets"])
        for key in ("mean", "std", "min", "max", "quantiles"):
            sub[key] = np.asarray(sub[key])[:, show]
        figs[f"subsets of {sub['k']} systems"] = plots.subset_boxplot(
            sub, names, title=f"{res['lp']}: r over {sub['subsets']:,} subsets of {sub['k']} systems")
    if decisions is not None:
        for m in dict.fromkeys(decisions["metric"].tolist()):
            figs[f"pairwise: {m}"] = plots.pairwise_plot(decisions, m, title=f"{res['lp']}: system pairs, {m}")
    return figs


def render_html(res: dict, figures: dict[str, bytes], title: str | None = None) -> str:
    """Self-contained HTML page: summary, correlation table, DARR table, figures (base64 PNG)."""
    esc = html.escape
    title = title or f"mtscore meta-evaluation: {res['lp']}"
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{esc(title)}</title>",
             "<style>body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;font-size:13px}"
             "td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}td:first-child{text-align:left}"
             ".win{font-weight:bold}figure{display:inline-block;margin:8px}img{max-width:520px}</style></head><body>",
             f"<h1>{esc(title)}</h1>",
             f"<p>{res['n_all']} MT systems; outliers ({esc(res['outlier_source'])}): "
             f"{esc(', '.join(res['outliers']) or 'none')}; {res['n_excl']} systems remain.</p>",
             "<h2>System-level correlation with DA</h2>",
             "<p>Pearson r with 95% percentile bootstrap interval (1000 resamples of systems), Kendall tau-b. "
             "Bold = winner: not significantly outperformed by another metric (Williams test, one-sided, p &le; 0.05).</p>",
             "<table><tr><th>metric</th><th>r (all)</th><th>95% CI</th><th>&tau; (all)</th>"
             "<th>r (w/o outliers)</th><th>95% CI</th><th>&tau; (w/o outliers)</th></tr>"]
    for row in _rows(res):
        cells = [f"<td>{esc(row['metric'])}</td>"]
        for tag in ("all", "excl"):
            if f"pearson_{tag}" not in row:
                cells += ["<td></td>"] * 3
                continue
            cls = " class='win'" if row[f"winner_{tag}"] else ""
            cells.append(f"<td{cls}>{row[f'pearson_{tag}']:.3f}</td>")
            cells.append(f"<td>[{row[f'ci_low_{tag}']:.3f}, {row[f'ci_high_{tag}']:.3f}]</td>")
            cells.append(f"<td>{row[f'kendall_{tag}']:.3f}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</table>")
    if "darr" in res:
        parts.append("<h2>Segment level: DARR Kendall-like &tau;</h2><table><tr><th>metric</th><th>&tau; all</th>"
                     "<th>pairs</th><th>&tau; w/o outliers</th><th>pairs</th></tr>")
        for m, d in res["darr"].items():
            parts.append(f"<tr><td>{esc(m)}</td><td>{d['tau_all']:.4f}</td><td>{d['n_all']}</td>"
                         f"<td>{d['tau_excl']:.4f}</td><td>{d['n_excl']}</td></tr>")
        parts.append("</table>")
    if "pairwise" in res:
        parts.append("<h2>System pairs: metric vs human significance</h2><p>Human: one-sided Wilcoxon rank-sum "
                     "on segment DA z (alpha 0.05). Metric: paired t-test on segment scores (two-sided, 0.05). "
                     "Type I = metric significant, humans not (or opposite); Type II = metric n.s., humans significant. "
                     "Cells: [human worse, human n.s., human better] per |metric delta| bin.</p>"
                     "<table><tr><th>metric</th><th>Type I</th><th>Type II</th><th>bins</th></tr>")
        for m, d in res["pairwise"].items():
            bins = "; ".join(f"{esc(lab)}: {c.tolist()}" for lab, c in zip(d["labels"], d["counts"]))
            parts.append(f"<tr><td>{esc(m)}</td><td>{d['type_I']}</td><td>{d['type_II']}</td><td>{bins}</td></tr>")
        parts.append("</table>")
    if "subsets" in res:
        parts += _subsets_html(res["subsets"])
    if figures:
        parts.append("<h2>Figures</h2>")
        for name, png in figures.items():
            b64 = base64.b64encode(png).decode("ascii")
            parts.append(f"<figure><img alt='{esc(name)}' src='data:image/png;base64,{b64}'>"
                         f"<figcaption>{esc(name)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _subsets_html(sub: dict) -> list[str]:
    esc = html.escape
    how = "all" if sub["exhaustive"] else "random"
    parts = [f"<h2>Correlation over subsets of {sub['k']} systems</h2><p>Pearson r of each metric over {how} "
             f"{sub['subsets']:,} subsets of {sub['k']} systems (Mathur et al. 2020, Figure 2), grouped by the "
             "outliers each subset contains: median [5%, 95%].</p><table><tr><th>metric</th>"
             + "".join(f"<th>{esc(g)} ({c:,})</th>" for g, c in zip(sub["groups"], sub["count"])) + "</tr>"]
    q = np.asarray(sub["quantiles"])
    for j, m in enumerate(sub["metrics"]):
        parts.append(f"<tr><td>{esc(m)}</td>" + "".join(
            f"<td>{q[g, j, 2]:.3f} [{q[g, j, 0]:.3f}, {q[g, j, -1]:.3f}]</td>" for g in range(q.shape[0])) + "</tr>")
    parts.append("</table>")
    return parts
