"""Figures of the analyses: meta-evaluation reports, the human-evaluation procedures and the raw-batch
DA pipeline (matplotlib, Agg backend, imported lazily; the ``plot`` extra).

Every function returns PNG bytes (so reports can embed them) and optionally writes ``path``.
"""
from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np

from ..engine.missing_extra import MissingExtraError, install_hint
from .crowd.qc import WorkerQC, WorkerStats

__all__ = [
    "coefficient_plot",
    "diverging_norm",
    "downsampling_plot",
    "heatmap",
    "kappa_distribution_plot",
    "pairwise_plot",
    "rating_ranges_plot",
    "require_matplotlib",
    "residual_plot",
    "rolling_plot",
    "scatter_fit",
    "sequence_bins_plot",
    "significance_curve_plot",
    "subset_boxplot",
    "sweep_plot",
    "topn_plot",
    "worker_heatmap",
    "worker_means_plot",
]


def require_matplotlib():
    """Import matplotlib with the Agg backend or fail with the install command."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - depends on the environment
        raise MissingExtraError(f"plotting needs matplotlib: {install_hint('plot')}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _finish(fig, path) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    fig.clf()
    import matplotlib.pyplot as plt

    plt.close(fig)
    data = buf.getvalue()
    if path:
        from ..engine.atomic import atomic_write

        atomic_write(path, lambda fh: fh.write(data))
    return data


def scatter_fit(human, metric, labels: Sequence[str] | None = None, outliers=None,
                title: str = "", xlabel: str = "human (DA z)", ylabel: str = "metric",
                n_boot: int = 1000, seed: int = 12345, path: str | None = None) -> bytes:
    """Metric vs human scatter with the least-squares line, its 95% bootstrap band, outliers
    marked (red x) and r over all systems / without outliers in the legend."""
    from .correlation import pearson

    plt = require_matplotlib()
    h = np.asarray(human, dtype=np.float64)
    m = np.asarray(metric, dtype=np.float64)
    out = np.zeros(h.shape, bool) if outliers is None else np.asarray(outliers, bool)
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    ax.scatter(h[~out], m[~out], s=28, color="tab:blue", label="systems", zorder=3)
    if out.any():
        ax.scatter(h[out], m[out], s=60, color="tab:red", marker="x", label="outliers", zorder=4)
    for mask, color, name in ((np.ones_like(out), "tab:gray", "all"), (~out, "tab:orange", "w/o outliers")):
        if mask.sum() < 3 or (name == "w/o outliers" and not out.any()):
            continue
        hh, mm = h[mask], m[mask]
        xs = np.linspace(hh.min(), hh.max(), 50)  # band only over the data it was fitted on
        slope, icpt = np.polyfit(hh, mm, 1)
        r = pearson(hh, mm)
        ax.plot(xs, slope * xs + icpt, color=color, lw=1.5, zorder=5, label=f"fit {name}: r = {r:.3f} (n={mask.sum()})")
        rng = np.random.default_rng(seed)
        lines = []
        for _ in range(n_boot):
            ii = rng.integers(0, hh.size, hh.size)
            if np.ptp(hh[ii]) == 0:
                continue
            s_, i_ = np.polyfit(hh[ii], mm[ii], 1)
            lines.append(s_ * xs + i_)
        if lines:
            lo, hi = np.percentile(np.array(lines), [2.5, 97.5], axis=0)
            ax.fill_between(xs, lo, hi, color=color, alpha=0.15, lw=0)
    if labels is not None:
        for x, y, lab in zip(h, m, labels):
            ax.annotate(str(lab).rsplit(".", 1)[0], (x, y), fontsize=6, alpha=0.7,
                        xytext=(2, 2), textcoords="offset points")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def _lines_with_ci(x, r, low, high, names, title, xlabel, path, invert=False):
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for i, name in enumerate(names):
        if low is not None:
            yerr = np.vstack([r[:, i] - low[:, i], high[:, i] - r[:, i]])
            yerr = np.where(np.isfinite(yerr), np.maximum(yerr, 0), 0)
            ax.errorbar(x + (i - len(names) / 2) * 0.06, r[:, i], yerr=yerr, marker="o", ms=3,
                        capsize=2, lw=1, label=name)
        else:
            ax.plot(x, r[:, i], marker="o", ms=3, label=name)
    if invert:
        ax.invert_xaxis()
    ax.axhline(0, color="k", lw=0.5)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Pearson r")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return _finish(fig, path)


def topn_plot(res: dict[str, np.ndarray], names: Sequence[str], title: str = "",
              path: str | None = None) -> bytes:
    """Top-N correlation (x = N, decreasing) with bootstrap error bars if present."""
    return _lines_with_ci(res["n"].astype(float), res["r"], res.get("low"), res.get("high"), names,
                          title, "N (top systems by DA)", path, invert=True)


def rolling_plot(res: dict[str, np.ndarray], names: Sequence[str], window: int, title: str = "",
                 path: str | None = None) -> bytes:
    """Rolling-window correlation (x = index of the window's worst system)."""
    return _lines_with_ci(res["start"].astype(float), res["r"], res.get("low"), res.get("high"), names,
                          title, f"start of window (w={window}, systems sorted by DA ascending)", path)


def pairwise_plot(decisions, metric: str, title: str = "", path: str | None = None) -> bytes:
    """Mathur et al. 2020 Fig. 3/4 style: x = human delta, y = metric delta (oriented >= 0), colour = human
    outcome (cyan n.s., green better, red worse); hollow markers = metric n.s."""
    plt = require_matplotlib()
    sel = decisions["metric"] == metric
    x = decisions["human_delta"][sel]
    y = decisions["metric_delta"][sel]
    h = decisions["human"][sel]
    sig = decisions["metric_sig"][sel]
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    colors = {-1: "tab:red", 0: "c", 1: "tab:green"}
    names = {-1: "human: significantly worse", 0: "human: n.s.", 1: "human: significantly better"}
    for v in (-1, 0, 1):
        for s_, face in ((True, None), (False, "none")):
            m = (h == v) & (sig == s_)
            if m.any():
                ax.scatter(x[m], y[m], s=22, edgecolors=colors[v], facecolors=colors[v] if face is None else "none",
                           label=names[v] + ("" if s_ else " (metric n.s.)"))
    ax.axvline(0, color="k", lw=0.5)
    ax.set_xlabel("human delta (DA z, A - B)")
    ax.set_ylabel(f"{metric} delta (A - B)")
    ax.set_title(title)
    ax.legend(fontsize=6)
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def error_bins_plot(bins: dict[str, dict[str, np.ndarray]], title: str = "", path: str | None = None) -> bytes:
    """Stacked bars per metric-delta bin (agree / Type I / Type II pairs), one panel per metric, from
    :func:`mtscore.analysis.metaeval.system_pairs.error_bins` (metric -> its dict)."""
    plt = require_matplotlib()
    fig, axes = plt.subplots(1, len(bins), figsize=(4.2 * len(bins), 3.6), squeeze=False)
    for ax, (metric, b) in zip(axes[0], bins.items()):
        x = np.arange(len(b["labels"]))
        bottom = np.zeros(len(x))
        for key, colour, lab in (("agree", "tab:green", "agree"), ("type_I", "tab:red", "Type I"),
                                 ("type_II", "tab:orange", "Type II")):
            ax.bar(x, b[key], bottom=bottom, color=colour, label=lab)
            bottom = bottom + b[key]
        ax.set_xticks(x, [str(v) for v in b["labels"]])
        ax.set_xlabel(f"{metric} difference (metric n.s.: NS)")
        ax.set_ylabel("system pairs")
        ax.set_title(metric)
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return _png(fig, path)


def heatmap(mat, rows: Sequence[str], cols: Sequence[str], title: str = "", fmt: str = "{:.2g}",
            cmap: str = "viridis_r", path: str | None = None) -> bytes:
    """Annotated heat map (p-value matrices, agreement matrices)."""
    plt = require_matplotlib()
    M = np.asarray(mat, dtype=np.float64)
    fig, ax = plt.subplots(figsize=(0.45 * len(cols) + 2.5, 0.4 * len(rows) + 1.8))
    im = ax.imshow(np.ma.masked_invalid(M), cmap=cmap, aspect="auto")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([str(c).rsplit(".", 1)[0] for c in cols], rotation=90, fontsize=6)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([str(r).rsplit(".", 1)[0] for r in rows], fontsize=6)
    if M.size <= 900:
        for i in range(M.shape[0]):
            for j in range(M.shape[1]):
                if np.isfinite(M[i, j]):
                    ax.text(j, i, fmt.format(M[i, j]), ha="center", va="center", fontsize=5, color="w")
    fig.colorbar(im, ax=ax, fraction=0.04)
    ax.set_title(title)
    return _finish(fig, path)


def diverging_norm(centre: float, vmin: float = -1.0, vmax: float = 1.0):
    """A matplotlib norm mapping ``centre`` to the middle of a diverging colour map."""
    require_matplotlib()
    from matplotlib.colors import TwoSlopeNorm

    return TwoSlopeNorm(vcenter=centre, vmin=vmin, vmax=vmax)


def worker_heatmap(labels: Sequence, R, centre: float = 0.198, title: str = "",
                   path: str | None = None) -> bytes:
    """Diagnostic heat map (Mathur 2021 §3.5.5): pairwise Pearson r of workers (rows by inferred
    precision), the model and the z-mean; the diverging map is centred at ``centre`` (the
    one-sided 95% critical r, 0.198 for 70 items; see ``rater_model.critical_r``)."""
    plt = require_matplotlib()
    M = np.asarray(R, dtype=np.float64)
    k = M.shape[0]
    fig, ax = plt.subplots(figsize=(0.22 * k + 2.5, 0.22 * k + 1.8))
    im = ax.imshow(np.ma.masked_invalid(M), cmap="RdBu_r", norm=diverging_norm(centre), aspect="auto")
    names = [str(x) for x in labels]
    ax.set_xticks(range(k))
    ax.set_xticklabels(names, rotation=90, fontsize=5)
    ax.set_yticks(range(k))
    ax.set_yticklabels(names, fontsize=5)
    fig.colorbar(im, ax=ax, fraction=0.04, label=f"Pearson r (centre {centre:.3f})")
    ax.set_title(title or "worker correlations (rows: most precise first)")
    return _finish(fig, path)


def sequence_bins_plot(res: dict[str, np.ndarray], title: str = "", path: str | None = None) -> bytes:
    """Mathur 2021 §4.4.1, Table 4.3: mean score per previous-gold bin (Low .. High) for each N of averaged workers, with
    High - Low and Welch p in the legend."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    nb = res["bin_mean"].shape[1]
    xs = np.arange(nb)
    for r, n in enumerate(res["n"]):
        ax.plot(xs, res["bin_mean"][r], marker="o", label=f"N={int(n)}: H-L {res['high_minus_low'][r]:+.3f} "
                                                          f"(p={res['welch_p'][r]:.2g})")
    ax.set_xticks(xs)
    ax.set_xticklabels(["Low", "Middle", "High"] if nb == 3 else [f"bin {b + 1}" for b in range(nb)])
    ax.set_xlabel("gold score of the previous item")
    ax.set_ylabel("mean score of the item")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_title(title or "sequence effect: previous item's quality")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def coefficient_plot(fits: dict[str, object], term: str = "lag", title: str = "",
                     path: str | None = None) -> bytes:
    """One coefficient (``term``) of several regressions (e.g. worker subsets or position
    buckets) with 95% Wald intervals; ``fits`` maps a label to a ``sequence_effects.Regression``."""
    plt = require_matplotlib()
    labels = list(fits)
    est = np.array([fits[k][term][0] for k in labels])  # type: ignore[index]
    se = np.array([fits[k][term][1] for k in labels])  # type: ignore[index]
    fig, ax = plt.subplots(figsize=(0.9 * len(labels) + 2.5, 3.4))
    ax.errorbar(np.arange(len(labels)), est, yerr=1.96 * se, fmt="o", capsize=3)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xticks(np.arange(len(labels)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel(f"coefficient of {term} (95% CI)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def subset_boxplot(res: dict, metrics: Sequence[str], title: str = "", path: str | None = None) -> bytes:
    """Mathur et al. 2020 §4.2, Figure 2: per metric, boxes of Pearson r over the system subsets of each
    group (box: quartiles, whiskers: 5% and 95% quantiles) from ``subsets.subset_correlations``."""
    plt = require_matplotlib()
    groups = list(res["groups"])
    q = np.asarray(res["quantiles"])
    G, m = len(groups), len(metrics)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.5 * G * m + 2), 3.8))
    width = 0.8 / G
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for g in range(G):
        stats = [{"whislo": q[g, j, 0], "q1": q[g, j, 1], "med": q[g, j, 2], "q3": q[g, j, 3],
                  "whishi": q[g, j, 4], "label": ""} for j in range(m)]
        pos = np.arange(m) + (g - (G - 1) / 2) * width
        bp = ax.bxp(stats, positions=pos, widths=width * 0.9, showfliers=False, patch_artist=True,
                    medianprops={"color": "k"})
        for box in bp["boxes"]:
            box.set_facecolor(colors[g % len(colors)])
            box.set_alpha(0.6)
        ax.plot([], [], color=colors[g % len(colors)], lw=6, alpha=0.6,
                label=f"{groups[g]} ({int(res['count'][g])})")
    ax.set_xticks(np.arange(m))
    ax.set_xticklabels(list(metrics), fontsize=7, rotation=30)
    ax.set_ylabel(f"Pearson r over {res['k']}-system subsets")
    ax.set_title(title)
    ax.legend(fontsize=7, title="subsets containing", title_fontsize=7)
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def significance_curve_plot(curve: dict[str, np.ndarray], title: str = "", path: str | None = None) -> bytes:
    """Graham et al. 2017, NLE §5.4, Figure 5: share of system pairs significantly different vs judgements per system."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for j, t in enumerate(curve["thresholds"]):
        ax.plot(curve["n"], curve["share"][:, j], marker="o", label=f"p < {t:g}")
    ax.set_xlabel("judgements per system (collection order)")
    ax.set_ylabel("share of significant system pairs")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def _png(fig, path: str | None) -> bytes:
    plt = require_matplotlib()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = buf.getvalue()
    if path:
        from .output import write_atomic

        write_atomic(path, data)
    return data


def downsampling_plot(curve: dict[str, np.ndarray], title: str = "", path: str | None = None) -> bytes:
    """r (y) against mean judgements per document (x) from :func:`mtscore.analysis.crowd.scores.downsampling_curve`,
    the fewest judgements of a document on a second axis."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(curve["mean_n"], curve["r"], marker="o", ms=3, lw=1, label="r (document z)")
    ax.set_xlabel("judgements per document (mean)")
    ax.set_ylabel("Pearson r with the other run")
    ax.set_ylim(min(0.0, float(np.nanmin(curve["r"])) - 0.05) if len(curve["r"]) else 0.0, 1.0)
    ax.grid(alpha=0.3)
    ax2 = ax.twinx()
    ax2.step(curve["mean_n"], curve["min_n"], where="post", color="gray", lw=1, label="fewest per document")
    ax2.set_ylabel("fewest judgements of a document", color="gray")
    ax.set_title(title or "run-A vs run-B reliability as judgements are added")
    return _png(fig, path)


def worker_means_plot(workers: WorkerStats, qc: WorkerQC, title: str = "", path: str | None = None) -> bytes:
    """Mean raw score of BAD_REF items (y) against SYSTEM items (x) per worker, by QC status."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    status = dict(zip(qc.worker.tolist(), qc.status.tolist()))
    colours = {"good": "tab:green", "bad": "tab:red", "rejected": "tab:gray", "untestable": "tab:orange",
               "repeats": "tab:purple"}
    st = np.array([status.get(w, "untestable") for w in workers.worker.tolist()])
    for s, c in colours.items():
        m = st == s
        if m.any():
            ax.scatter(workers.mean_system[m], workers.mean_bad_ref[m], s=18, color=c, label=f"{s} ({int(m.sum())})")
    ax.plot([0, 100], [0, 100], color="black", lw=0.6)
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_xlabel("mean raw score, MT outputs")
    ax.set_ylabel("mean raw score, degraded items")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(title or "workers: degraded vs MT output means")
    return _png(fig, path)


def kappa_distribution_plot(dists, title: str = "", path: str | None = None) -> bytes:
    """Ma et al. 2017, Figure 2: per setting (x), the Cohen's kappa of every judge pair (points,
    jittered) over a box of their quartiles (black: median, red: mean), the number of pairs and the
    mean in the label.
    ``dists``: setting -> :class:`mtscore.analysis.human.refbias.KappaDistribution`."""
    plt = require_matplotlib()
    names = list(dists)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(names) + 1.5), 3.8))
    rng = np.random.default_rng(0)  # the jitter only
    data = [np.asarray(dists[s].kappa)[~np.isnan(np.asarray(dists[s].kappa))] for s in names]
    ax.boxplot(data, positions=np.arange(len(names)), widths=0.5, showfliers=False,
               medianprops={"color": "k"})
    for i, v in enumerate(data):
        ax.plot(i + rng.uniform(-0.18, 0.18, v.size), v, "o", ms=3, alpha=0.6)
        ax.plot([i - 0.3, i + 0.3], [dists[names[i]].mean] * 2, color="C3", lw=1.5)
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels([f"{s}\n{len(dists[s])} pairs, mean {dists[s].mean:.3f}" for s in names], fontsize=8)
    ax.set_ylabel("Cohen's kappa of a judge pair")
    ax.axhline(0, color="gray", lw=0.8)
    ax.set_title(title or "kappa of judge pairs per setting")
    ax.grid(alpha=0.3, axis="y")
    return _finish(fig, path)


def rating_ranges_plot(ranges, title: str = "", path: str | None = None) -> bytes:
    """Ma et al. 2017, Figure 3: each judge's average rating (points) per group (x), the group's
    average (bar) and the within-group range in the label; the range of the reference groups'
    averages in the title. ``ranges``: :class:`mtscore.analysis.human.refbias.RatingRanges`."""
    plt = require_matplotlib()
    groups = list(ranges.group_mean)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(groups) + 1.5), 3.8))
    gj = np.asarray(ranges.judge_group, dtype=object)
    for i, g in enumerate(groups):
        v = np.asarray(ranges.judge_mean)[gj == g]
        src = g not in ranges.reference_groups
        ax.plot(np.full(v.size, i), v, "o", ms=5, color="C1" if src else "C0")
        ax.plot([i - 0.3, i + 0.3], [ranges.group_mean[g]] * 2, color="k", lw=1.5)
    ax.set_xticks(np.arange(len(groups)))
    ax.set_xticklabels([f"{g}{' (source)' if g not in ranges.reference_groups else ''}\n"
                        f"range {ranges.within_range[g]:.2f}" for g in groups], fontsize=8)
    ax.set_ylabel("judge's average rating")
    ax.set_title(title or f"average ratings; reference groups' averages span {ranges.across_range:.2f}")
    ax.grid(alpha=0.3, axis="y")
    return _finish(fig, path)


def interval_plot(points: Sequence[tuple[str, str, float, float, float]], title: str = "", ylabel: str = "",
                  path: str | None = None) -> bytes:
    """Confidence intervals side by side (Ma et al. 2017, Figure 1: the bootstrap CI of the mean
    kappa of SAME and DIFF per panel): ``points`` (x label, series, estimate, low, high); one
    colour per series, offset within each x label, the estimate as a dot, the interval as a bar."""
    plt = require_matplotlib()
    xs = list(dict.fromkeys(p[0] for p in points))
    series = list(dict.fromkeys(p[1] for p in points))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(xs) + 1.5), 3.6))
    width = 0.6 / max(1, len(series))
    for j, s in enumerate(series):
        pts = [p for p in points if p[1] == s]
        x = np.array([xs.index(p[0]) for p in pts]) + (j - (len(series) - 1) / 2) * width
        est = np.array([p[2] for p in pts])
        err = np.array([[p[2] - p[3] for p in pts], [p[4] - p[2] for p in pts]])
        ax.errorbar(x, est, yerr=err, fmt="o", ms=4, capsize=3, color=f"C{j}", label=s)
    ax.set_xticks(np.arange(len(xs)))
    ax.set_xticklabels(xs)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return _finish(fig, path)


def sweep_plot(sweep, title: str = "", path: str | None = None) -> bytes:
    """Mathur 2021 §3.5 sweeps: each method's mean Pearson r with the truth (y) against the swept
    value (x: workers per item, random workers, or workers kept, the last decreasing), a band of
    +-1 SD over the repeats. ``sweep``: :class:`mtscore.analysis.human.rater_eval.Sweep`."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    m, sd = sweep.mean(), sweep.sd()
    x = np.asarray(sweep.x, dtype=np.float64)
    for i, name in enumerate(sweep.methods):
        ax.plot(x, m[i], marker="o", ms=3, lw=1.2, color=f"C{i}", label=name)
        if sweep.r.shape[2] > 1:
            ax.fill_between(x, m[i] - sd[i], m[i] + sd[i], color=f"C{i}", alpha=0.15, lw=0)
    if sweep.x_name == "workers kept":
        ax.invert_xaxis()
    ax.set_xlabel(sweep.x_name)
    ax.set_ylabel("Pearson r with the ground truth")
    ax.set_title(title or f"r against {sweep.x_name}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _finish(fig, path)


def residual_plot(residuals, judgement_worker, workers: Sequence[int], title: str = "",
                  path: str | None = None) -> bytes:
    """Mathur 2021 §3.5.2 residual diagnostics: per worker in ``workers`` (one column each) a
    histogram of its errors (top) and their normal QQ plot with the line mean + sd * q (bottom).
    ``residuals``: :class:`mtscore.analysis.human.rater_eval.WorkerResiduals`;
    ``judgement_worker`` (N,) the judgements' worker codes."""
    from .human.rater_eval import normal_qq

    plt = require_matplotlib()
    fig, axes = plt.subplots(2, len(workers), figsize=(2.6 * len(workers) + 0.6, 5.0), squeeze=False)
    for c, w in enumerate(workers):
        e = residuals.of(w, judgement_worker)
        k = residuals.worker.tolist().index(w)
        axes[0, c].hist(e, bins=20, color="C0", alpha=0.8)
        axes[0, c].set_title(f"worker {w}: mean {residuals.mean[k]:.2f}, sd {residuals.sd[k]:.2f}", fontsize=8)
        q, v = normal_qq(e)
        axes[1, c].plot(q, v, "o", ms=2, color="C0")
        axes[1, c].plot(q, residuals.mean[k] + residuals.sd[k] * q, color="C3", lw=1)
        axes[1, c].set_xlabel("normal quantile")
    axes[0, 0].set_ylabel("judgements")
    axes[1, 0].set_ylabel("error (z - estimate)")
    fig.suptitle(title or "workers' errors against the estimate")
    return _finish(fig, path)
