"""Pairwise system decisions, metric against human, on the WMT21 newstest2021 to-English data:
the procedure of Mathur, Baldwin & Cohn (2020), "Tangled up in BLEU" (ACL 2020), Sec. 5 / Fig. 3
(Mathur 2021, thesis Sec. 6.6), run on WMT21 (the paper used WMT19, whose segment-level DA and
outputs are not in its release).

For every pair of MT systems of a language pair (the human translation ``HUMAN.0`` left out):

* human decision: both one-sided Wilcoxon rank-sum tests on the systems' segment z (the WMT21
  test, :func:`~mtscore.analysis.metaeval.system_pairs.human_decisions`), p < 0.05;
* metric decision: paired bootstrap (Koehn 2004) of corpus BLEU and corpus chrF (sacreBLEU's
  defaults, reference A, the full test set), 1,000 resamples, seed 12345, two-sided at 0.05
  (one-sided p < 0.025);
* pairs oriented so the metric difference is >= 0 and binned by it: NS (metric n.s.), then
  0-1, 1-2, 2-3, 3-5, 5-10, >10 points (the paper names the 0-3 and 3-5 BLEU bins; the other
  edges are ours, used for chrF points too);
* Type I = metric significant, humans n.s. or the opposite; Type II = metric n.s., humans
  significant (the thesis' labels; Tangled Sec. 5's text swaps them).

:func:`lp_decisions` computes one language pair, :func:`pairs_tables` the pooled tables and the
figure, :func:`decision_figures` the per-pair scatter (Tangled Fig. 3 style) and the
agreement matrix between the metrics (Tangled Fig. 5 / thesis Fig. 6.12). :func:`read_diff_stars` reads the release's ``ad-DA-diff-wilcoxon-rs`` matrices, whose
stars mark the significant human decisions in both directions.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...analysis.errors import AnalysisInputError
from ...analysis.metaeval.system_pairs import (
    DEFAULT_BINS,
    agreement_matrix,
    error_bins,
    metric_score_fn,
    paired_bootstrap_all,
    pairwise_decisions,
)
from .model import Cell, Figure, Table

__all__ = ["LPS", "METRICS", "N_RESAMPLES", "SEED", "decision_figures", "lp_decisions", "mt_systems", "output_name",
           "pairs_tables",
           "read_diff_stars", "reference_file", "required_files"]

#: the newstest2021 to-English pairs with segment DA, outputs and references in the release
LPS = ("cs-en", "de-en", "ha-en", "is-en", "ja-en", "ru-en", "zh-en")
METRICS = ("BLEU", "chrF")
N_RESAMPLES = 1000
SEED = 12345
#: human-evaluation system name (without its ".N" id) -> output file name, where they differ
RENAMED = {"Nemo": "NVIDIA-NeMo"}
NOTE = ("Ours on WMT21 data; Tangled's Fig. 3 used WMT19. Pairs of MT systems of the 7 newstest2021 "
        "to-English pairs, pooled. Human: one-sided Wilcoxon rank-sum on segment z, both directions, p < 0.05. "
        f"Metric: paired bootstrap of corpus BLEU / chrF (sacreBLEU defaults, reference A), {N_RESAMPLES} "
        f"resamples, seed {SEED}, two-sided at 0.05. Rows: NS (metric n.s.), then the metric difference in "
        "points. agree: NS row, humans n.s. too; other rows, humans find the metric's winner significantly "
        "better. Type I: metric significant, humans n.s. or the opposite; Type II: metric n.s., humans "
        "significant. error rate = (Type I + Type II) / pairs.")


def _txt(humaneval: Path) -> Path:
    return humaneval.parent / "txt"


def reference_file(humaneval: Path, lp: str) -> Path:
    """Reference A of ``lp`` (``txt/references/newstest2021.<lp>.ref.A.en`` beside ``humaneval/``)."""
    return _txt(humaneval) / "references" / f"newstest2021.{lp}.ref.A.{lp[3:]}"


def required_files(humaneval: Path) -> list[Path]:
    """The references this part reads (the outputs are found by system name, see :func:`lp_decisions`)."""
    return [reference_file(humaneval, lp) for lp in LPS]


def output_name(system: str) -> str:
    """Output file name of a human-evaluation system: ``"Nemo.7"`` -> ``"NVIDIA-NeMo"``."""
    base = system.rsplit(".", 1)[0]
    return RENAMED.get(base, base)


def mt_systems(names) -> list[str]:
    """The MT systems among human-evaluation names (sorted; ``HUMAN.*`` left out)."""
    return sorted(str(s) for s in names if not str(s).startswith("HUMAN"))


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        raise AnalysisInputError(f"missing data file {path} (the WMT21 release's txt/ folder, "
                                 "github.com/wmt-conference/wmt21-news-systems)")
    text = path.read_text(encoding="utf-8").split("\n")
    return text[:-1] if text and text[-1] == "" else text


def lp_decisions(humaneval: str | Path, lp: str, groups: dict[str, np.ndarray],
                 n_resamples: int = N_RESAMPLES, seed: int = SEED) -> dict[str, np.ndarray]:
    """:func:`~mtscore.analysis.metaeval.system_pairs.pairwise_decisions` of the MT systems in
    ``groups`` (system -> segment z (n,) float64, human-evaluation names) for BLEU and chrF.
    ``humaneval``: the release's ``humaneval/`` folder (``txt/`` beside it). Raises
    :class:`AnalysisInputError` naming a missing output file or one whose line count is not the
    reference's."""
    from ...engine.metrics.bleu import BLEU
    from ...engine.metrics.chrf import CHRF

    h = Path(humaneval)
    ref_path = reference_file(h, lp)
    ref = _lines(ref_path)
    systems = mt_systems(groups)
    hyps = []
    for s in systems:
        path = _txt(h) / "system-outputs" / f"newstest2021.{lp}.hyp.{output_name(s)}.{lp[3:]}"
        hyps.append(_lines(path))
        if len(hyps[-1]) != len(ref):
            raise AnalysisInputError(f"{path}: {len(hyps[-1])} lines, but {ref_path} has {len(ref)}")
    scores, pvals = {}, {}
    for name, metric in (("BLEU", BLEU()), ("chrF", CHRF())):
        stats = np.stack(metric.systems_stats(hyps, [ref]))
        scores[name], pvals[name] = paired_bootstrap_all(stats, metric_score_fn(metric), n_resamples, seed)
    return pairwise_decisions(systems, {s: groups[s] for s in systems}, scores, pvals)


def read_diff_stars(path: str | Path) -> tuple[list[str], np.ndarray]:
    """A released ``ad-DA-diff-wilcoxon-rs-<lp>.csv``: (system names (k,), stars (k, k) int64),
    stars[i, j] = the asterisks after cell (i, j), the mean-z difference i - j (``-`` on the
    diagonal). Raises :class:`AnalysisInputError` naming the file and line of a malformed row."""
    p = Path(path)
    if not p.is_file():
        raise AnalysisInputError(f"missing data file {p}")
    lines = [ln.split() for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]
    if not lines:
        raise AnalysisInputError(f"{p}: empty; expected a header of system names and one row per system")
    names = lines[0]
    stars = np.zeros((len(names), len(names)), np.int64)
    for i, row in enumerate(lines[1:]):
        if i >= len(names) or len(row) != len(names) + 1 or row[0] != names[i]:
            raise AnalysisInputError(f"{p}, line {i + 2}: expected {names[i] if i < len(names) else 'no row'} "
                                     f"and {len(names)} cells")
        stars[i] = [len(c) - len(c.rstrip("*")) for c in row[1:]]
    if len(lines) - 1 != len(names):
        raise AnalysisInputError(f"{p}: {len(lines) - 1} rows for {len(names)} columns")
    return names, stars


def _label(label: str) -> str:
    return ">" + label[:-4] if label.endswith("-inf") else label


COLUMNS = ["pairs", "agree", "Type I", "Type II", "error rate"]


def pairs_tables(decisions: dict[str, dict[str, np.ndarray]]) -> tuple[list[Table], Figure]:
    """The pooled table (rows ``<metric> <bin>`` and ``<metric> all``), the per-language-pair
    table and the Fig. 3-style figure from ``decisions`` (lp -> :func:`lp_decisions`)."""
    pooled = {k: np.concatenate([d[k] for d in decisions.values()]) for k in next(iter(decisions.values()))}
    cells: dict[tuple[str, str], Cell] = {}
    rows: list[str] = []
    fig_data = {}
    for m in METRICS:
        b = error_bins(pooled, m, DEFAULT_BINS)
        fig_data[m] = {**b, "labels": np.array([_label(str(x)) for x in b["labels"]])}
        counts = [(f"{m} {_label(str(lab))}", [int(b[k][i]) for k in ("pairs", "agree", "type_I", "type_II")])
                  for i, lab in enumerate(b["labels"])]
        counts.append((f"{m} all", [int(b[k].sum()) for k in ("pairs", "agree", "type_I", "type_II")]))
        for row, (n, agree, t1, t2) in counts:
            rows.append(row)
            vals = [n, agree, t1, t2, (t1 + t2) / n if n else None]
            for col, v in zip(COLUMNS, vals):
                cells[(row, col)] = Cell("pairs", row, col, None if v is None else float(v), None, None,
                                         "no pairs in this bin" if v is None else None,
                                         default_digits=3 if col == "error rate" else 0)
    table = Table("pairs", "Pairwise decisions, metric vs human (ours on WMT21 data; Tangled's Fig. 3 used WMT19)",
                  rows, list(COLUMNS), cells, NOTE)
    lp_cols = ["pairs", "human significant"] + [f"{m} {e}" for m in METRICS for e in ("Type I", "Type II")]
    lp_cells: dict[tuple[str, str], Cell] = {}
    for lp, d in decisions.items():
        first = d["metric"] == METRICS[0]
        vals = [float(first.sum()), float((d["human"][first] != 0).sum())]
        vals += [float(((d["metric"] == m) & (d["error"] == e)).sum()) for m in METRICS for e in ("I", "II")]
        for col, v in zip(lp_cols, vals):
            lp_cells[(lp, col)] = Cell("pairs-lp", lp, col, v, default_digits=0)
    lp_table = Table("pairs-lp", "Pairwise decisions per language pair (ours on WMT21 data)", list(decisions),
                     lp_cols, lp_cells, "MT-system pairs, pairs the humans find significant (either direction), "
                     "and each metric's Type I / Type II errors; procedure as in the pooled table.")
    head = ["metric", "bin", "pairs", "agree", "type_I", "type_II"]
    pts = [[m, str(b["labels"][i])] + [int(b[k][i]) for k in head[2:]] for m, b in fig_data.items()
           for i in range(len(b["labels"]))]
    fig = Figure("fig-pairs", "Pairwise decisions by metric difference, WMT21 to-English (after Tangled Fig. 3)",
                 fig_data, "Stacked system pairs per bin of the metric difference: agree (green), Type I (red), "
                 "Type II (orange); " + NOTE, head, pts, _draw)
    return [table, lp_table], fig


def _draw(f: Figure) -> bytes:
    from ...analysis import plots

    return plots.error_bins_plot(f.data, title=f.title)


#: per-pair decision rows written beside each scatter figure
DECISION_HEAD = ["lp", "sys_a", "sys_b", "metric_delta", "human_delta", "human", "metric_sig", "error"]


def _pooled(decisions: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The language pairs' decisions in one table, systems named ``<lp>:<system>`` (a system name can
    recur across language pairs) and the language pair in ``lp``."""
    parts = []
    for lp, d in decisions.items():
        n = len(d["metric"])
        parts.append({**d, "lp": np.array([lp] * n, dtype=object),
                      "sys_a": np.array([f"{lp}:{x}" for x in d["sys_a"]], dtype=object),
                      "sys_b": np.array([f"{lp}:{x}" for x in d["sys_b"]], dtype=object)})
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def decision_figures(decisions: dict[str, dict[str, np.ndarray]]) -> tuple[Table, list[Figure]]:
    """The agreement matrix table (Tangled Fig. 5 / Mathur 2021 Fig. 6.12: cell (A, B) = system
    pairs where metric A errs and B is right, diagonal = A's Type I + Type II errors, pooled over
    the language pairs) and the figures: per metric the scatter of human vs metric difference per
    pair coloured by the human outcome (CSV: one row per pair, :data:`DECISION_HEAD`), and the
    matrix as a heat map. ``decisions``: lp -> :func:`lp_decisions`."""
    pooled = _pooled(decisions)
    names, A = agreement_matrix(pooled, METRICS)
    cells = {(a, b): Cell("agreement", a, b, float(A[i, j]), default_digits=0)
             for i, a in enumerate(names) for j, b in enumerate(names)}
    table = Table("agreement", "Agreement matrix between metrics (ours on WMT21 data; after Tangled Fig. 5)",
                  list(names), list(names), cells,
                  "Row A, column B: system pairs where A errs (Type I or II) and B is right; diagonal: A's "
                  "errors. Pooled over the 7 newstest2021 to-English pairs; decisions as in the pooled "
                  "table (TER, in Tangled's Fig. 5, is not run: its statistics would add minutes).")
    figs = []
    for m in METRICS:
        sel = pooled["metric"] == m
        d = {k: v[sel] for k, v in pooled.items()}
        pts = [[d["lp"][i], str(d["sys_a"][i]).split(":", 1)[1], str(d["sys_b"][i]).split(":", 1)[1],
                float(d["metric_delta"][i]), float(d["human_delta"][i]), int(d["human"][i]),
                "true" if d["metric_sig"][i] else "false", str(d["error"][i])] for i in range(int(sel.sum()))]
        figs.append(Figure(f"fig-pairwise-{m}", f"{m} vs human difference per system pair, WMT21 to-English "
                           "(ours on WMT21 data; after Tangled Fig. 3)", {"metric": m, "decisions": d},
                           "decisions: the pooled per-pair arrays of lp_decisions (pairs oriented so the metric "
                           "difference is >= 0); x = human difference (mean segment z), y = metric difference; "
                           "colour = human outcome: cyan n.s., red significantly worse, green significantly "
                           "better; hollow = metric n.s. " + NOTE, list(DECISION_HEAD), pts, _draw_pairwise))
    figs.append(Figure("fig-agreement", "Agreement matrix between metrics, WMT21 to-English (ours on WMT21 data; "
                       "after Tangled Fig. 5)", {"metrics": list(names), "matrix": A},
                       "matrix (m, m) int64: row A, column B = pairs where A errs and B is right; diagonal = "
                       "A's errors.", ["metric", *names], [[a, *map(int, A[i])] for i, a in enumerate(names)],
                       _draw_agreement))
    return table, figs


def _draw_pairwise(f: Figure) -> bytes:
    from ...analysis import plots

    m = f.data["metric"]
    return plots.pairwise_plot(f.data["decisions"], m, title=f"{m}: decisions per system pair, WMT21 to-English\n"
                               "(ours on WMT21 data; after Tangled Fig. 3)")


def _draw_agreement(f: Figure) -> bytes:
    from ...analysis.plots_meta import agreement_plot

    return agreement_plot(f.data["matrix"], f.data["metrics"], title="Agreement matrix, WMT21 to-English\n"
                          "(ours on WMT21 data; after Tangled Fig. 5)")
