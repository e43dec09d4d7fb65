"""WMT20 metrics task, document level: the DARR Kendall-like tau of every metric whose document
scores the release holds (``final-metric-scores/*/<metric>.doc.score.gz``), over document pairs
built from ``manual-evaluation/DA/metrics-ad-doc-scores-<lp>.csv`` exactly as the segment level
(documents as items, |raw difference| >= 25, metric ties discordant), against
``results/output/doclevel_{allsys,excloutl}/RR-newstest2020-<lp>-seg-nohy-cor.csv``.

As the task's script does (``results/combine-scores-seg-RR.py``), only the Human-A and Human-B rows
are dropped: en-de's Human-P translation takes part in the document pairs (60 official pairs hold
it, although the committed pair builder below skips every 'Human*' row). As that pair builder does
(``manual-evaluation/DA2RR/seglevel-ken-rr.py`` of the release repository: at document level a row
with ``nannot < 2`` is skipped), a document score averaged over fewer than :data:`MIN_RATED`
rated segments (column ``N``) takes part in no pair. In the released files this drops exactly one
row: en-cs ``Online-B.1589`` on ``thesun.co.uk.27377``, rated on 1 of the document's 26 segments
(every other system: 26), whose 7 pairs (6 without outliers) the official en-cs counts (1442 and
572 pairs) leave out.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
from numpy.typing import ArrayLike

from ...analysis.data import read_darr_cor, read_table, table_to_numpy
from ...analysis.data.released import wmt20_outliers
from ...analysis.data.wmt_files import metric_score_column, read_metric_scores
from ...analysis.metaeval.darr import darr_kendall, darr_pairs
from .model import Cell, Table

__all__ = ["DOC_LPS", "MIN_RATED", "doc_files", "doc_pairs", "doc_table"]

#: language pairs with official document-level results
DOC_LPS = ["cs-en", "de-en", "ja-en", "pl-en", "ru-en", "ta-en", "zh-en",
           "en-cs", "en-de", "en-iu", "en-ja", "en-pl", "en-ru", "en-ta", "en-zh"]
_DROPPED = ["Human-A.0", "Human-B.0"]
#: fewest rated segments (column ``N``) a document score needs to take part in a pair
MIN_RATED = 2


def _cor(lp: str, sub: str) -> str:
    return f"doclevel_{sub}/RR-newstest2020-{lp.replace('-', '')}-seg-nohy-cor.csv"


def doc_files(r: Path) -> list[Path]:
    """The files the document level reads, metric score files found by listing the release."""
    out = [r / "manual-evaluation" / "DA" / f"metrics-ad-doc-scores-{lp}.csv" for lp in DOC_LPS]
    out += [r / "results" / "output" / _cor(lp, sub) for lp in DOC_LPS for sub in ("allsys", "excloutl")]
    return out


def _metric_files(r: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for d in ("baselines", "submissions"):
        for p in sorted((r / "final-metric-scores" / d).glob("*.doc.score.gz")):
            found.setdefault(p.name[: -len(".doc.score.gz")], p)
    return found


def doc_pairs(systems: ArrayLike, docs: ArrayLike, raw: ArrayLike, n_rated: ArrayLike,
              exclude_systems: Iterable[str] = ()) -> tuple[np.ndarray, np.ndarray]:
    """The task's document pairs: ``systems``/``docs`` (N,) str, ``raw`` (N,) float64 document
    scores (mean raw DA), ``n_rated`` (N,) rated segments per row. Rows with ``n_rated <``
    :data:`MIN_RATED`, of ``exclude_systems`` or of Human-A/B are left out; |raw difference| >= 25.
    Returns (better, worse) (P,) int64 row indices (:func:`darr_pairs`)."""
    raw = np.where(np.asarray(n_rated, dtype=np.float64) < MIN_RATED, np.nan, np.asarray(raw, dtype=np.float64))
    return darr_pairs([str(x) for x in np.asarray(systems)], docs, raw,
                      exclude_systems=list(exclude_systems) + _DROPPED, human_prefix=None)


def doc_table(r: Path) -> Table:
    """Table ``doc-darr``: rows = metrics, columns = '<lp> all' / '<lp> -out'."""
    da, pairs, refs = {}, {}, {}
    for lp in DOC_LPS:
        t = read_table(r / "manual-evaluation" / "DA" / f"metrics-ad-doc-scores-{lp}.csv",
                       string_columns=("SYS", "SEGID"))
        da[lp] = (table_to_numpy(t, "SYS"), table_to_numpy(t, "SEGID"))
        raw, n_rated = t.column("RAW.SCR").to_numpy(), t.column("N").to_numpy()
        for sub, tag, excl in (("allsys", "all", []), ("excloutl", "-out", wmt20_outliers(r, lp))):
            pairs[(lp, tag)] = doc_pairs(da[lp][0], da[lp][1], raw, n_rated, excl)
            ref = read_darr_cor(r / "results" / "output" / _cor(lp, sub))
            refs[(lp, tag)] = dict(zip(ref.column("metric").to_pylist(), ref.column("tau").to_pylist()))
    files = _metric_files(r)
    cols = [f"{lp} {tag}" for lp in DOC_LPS for tag in ("all", "-out")]
    cells: dict[tuple[str, str], Cell] = {}
    for m, path in files.items():
        t = read_metric_scores(path, "doc")
        score = metric_score_column(path, t)
        keep = pc.equal(t.column("refset"), "newstest2020").to_numpy(zero_copy_only=False)
        lps = t.column("lp").to_pylist()
        lut: dict[str, dict[tuple[str, str], float]] = {}
        for lp, s, d, v, k in zip(lps, t.column("system").to_pylist(), t.column("doc").to_pylist(), score, keep):
            if k:
                lut.setdefault(lp, {})[(s, d)] = float(v)
        for lp in DOC_LPS:
            sy, doc = da[lp]
            v = np.array([lut.get(lp, {}).get((s, d), np.nan) for s, d in zip(sy, doc)])
            for tag, sub in (("all", "allsys"), ("-out", "excloutl")):
                col = f"{lp} {tag}"
                if np.isnan(v).all():
                    cells[(m, col)] = Cell("doc-darr", m, col, None, reason=f"{m} has no {lp} document scores")
                    continue
                tau = float(darr_kendall(v[None, :], *pairs[(lp, tag)])["tau"][0])
                refd = refs[(lp, tag)]
                cells[(m, col)] = Cell("doc-darr", m, col, tau, f"{refd[m]:.4g}" if m in refd else None,
                                       _cor(lp, sub))
    note = ("DARR tau over document pairs (metrics-ad-doc-scores, |raw diff| >= 25; Human-A/B dropped, en-de's "
            "Human-P kept as in the task's script; as the task's DA2RR/seglevel-ken-rr.py, a document score over "
            f"fewer than {MIN_RATED} rated segments is left out: en-cs Online-B.1589 on thesun.co.uk.27377, rated "
            "on 1 of 26 segments, the release's only one), all systems and without outliers. Official: "
            "doclevel_*/RR-newstest2020-<lp>-seg-nohy-cor.csv (4 significant digits).")
    return Table("doc-darr", "Document level: DARR Kendall-like tau", list(files), cols, cells, note)
