"""Adapters from the WMT releases in ``shared/data`` to the arrays the statistics take.

``SysLevel`` holds one language pair's system-level table: systems (s,), human z (s,),
human raw (s,) and a metric matrix (m, s). ``wmt20_seg_metric`` aligns a WMT20 segment-level
metric file to the rows of the segment-level DA file.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import AnalysisInputError
from . import tables, wmt_files

__all__ = [
    "WMT20_LPS",
    "SysLevel",
    "load_sys_level",
    "tangled_sys_level",
    "wmt20_outliers",
    "wmt20_seg_da",
    "wmt20_seg_metric",
    "wmt20_sys_level",
]

WMT20_LPS = ["cs-en", "de-en", "iu-en", "ja-en", "km-en", "pl-en", "ps-en", "ru-en", "ta-en",
             "zh-en", "en-cs", "en-de", "en-iu", "en-ja", "en-pl", "en-ru", "en-ta", "en-zh"]


@dataclass
class SysLevel:
    """One language pair's system-level scores."""
    lp: str
    systems: list[str]
    human: np.ndarray                 # (s,) float64 DA z
    metrics: list[str]
    scores: np.ndarray                # (m, s) float64, NaN = missing
    human_raw: np.ndarray | None = None
    extra: dict[str, object] = field(default_factory=dict)

    def subset(self, keep: np.ndarray) -> SysLevel:
        keep = np.asarray(keep, dtype=bool)
        return SysLevel(self.lp, [s for s, k in zip(self.systems, keep) if k], self.human[keep],
                        list(self.metrics), self.scores[:, keep],
                        None if self.human_raw is None else self.human_raw[keep], dict(self.extra))

    def without(self, systems: Sequence[str]) -> SysLevel:
        drop = set(systems)
        return self.subset(np.array([s not in drop for s in self.systems]))

    def complete_metrics(self) -> SysLevel:
        """Drop metrics with any missing system score."""
        ok = ~np.isnan(self.scores).any(axis=1)
        return SysLevel(self.lp, list(self.systems), self.human, [m for m, k in zip(self.metrics, ok) if k],
                        self.scores[ok], self.human_raw, dict(self.extra))


def load_sys_level(path, human_col: str = "HUMAN", exclude_prefix: str | None = "Human",
                   raw_col: str | None = "HUMAN_RAW", metrics_as_columns: bool = True) -> SysLevel:
    """Read an ``LP SYSTEM HUMAN <metric...>`` table (WMT20 results, the WMT19 tables of Mathur et al. 2020) and drop
    human "systems" (names starting with ``exclude_prefix``). ``HUMAN_RAW`` (if present) is kept
    both as ``human_raw`` and as a metric column, like the WMT20 tables. A metric cell may be
    missing (NA/NaN: the metric is then incomplete and skipped); everything else that is not a
    number, a missing human score or a repeated system raises :class:`AnalysisInputError`."""
    t, linenos = wmt_files.read_combined_sys_scores_lines(path)
    _check_sys_columns(path, t, human_col)
    systems = [str(s) for s in t.column("SYSTEM").to_pylist()]
    _check_unique_systems(path, systems, linenos)
    keep = np.array([not (exclude_prefix and s.startswith(exclude_prefix)) for s in systems], dtype=bool)
    lp = _single_lp(path, [str(x) for x in t.column("LP").to_pylist()], linenos)
    mcols = [c for c in t.column_names if c not in ("LP", "SYSTEM", human_col)]
    scores = np.vstack([tables.float_column(t, c, linenos, path, missing_ok=True)
                        for c in mcols]) if mcols else np.zeros((0, len(systems)))
    human = tables.float_column(t, human_col, linenos, path)
    raw = (tables.float_column(t, raw_col, linenos, path, missing_ok=True)
           if raw_col and raw_col in t.column_names else None)
    sl = SysLevel(lp, systems, human, mcols, scores, raw, {"path": str(path)})
    return sl.subset(keep)


def _check_sys_columns(path, t, human_col: str) -> None:
    """The columns a system-level table needs, and at least one system row."""
    missing = [c for c in ("LP", "SYSTEM", human_col) if c not in t.column_names]
    if missing:
        hdr = " ".join(t.column_names)
        if "," in hdr:
            raise AnalysisInputError(
                f"{path}:1: the header looks comma-separated ({hdr[:60]!r}); the table must be "
                f"whitespace-separated with columns LP SYSTEM {human_col} <metric...>")
        raise AnalysisInputError(
            f"{path}:1: no {' / '.join(missing)} column (header: {hdr[:80]}); "
            f"expected columns LP SYSTEM {human_col} <metric...>")
    if t.num_rows == 0:
        raise AnalysisInputError(f"{path}: only a header, no system rows")


def _single_lp(path, lps: Sequence[str], linenos: Sequence[int]) -> str:
    """The table's one language pair (``en-iu`` for ``en-iu_news``). Correlations across
    language pairs mean nothing (each pair has its own systems and human scale), so a table
    mixing pairs is refused, naming the first line of a second pair; split it into one file
    per pair (the WMT releases do)."""
    first = lps[0] if lps else ""
    for lp, ln in zip(lps, linenos):
        if lp != first:
            raise AnalysisInputError(
                f"{path}:{ln}: language pair {lp!r} in column LP, but line {linenos[0]} has {first!r}; "
                "a system-level table holds one language pair: split it into one file per pair")
    return first.split("_")[0]


def _check_unique_systems(path, systems: Sequence[str], linenos: Sequence[int]) -> None:
    first: dict[str, int] = {}
    for s, ln in zip(systems, linenos):
        if s in first:
            raise AnalysisInputError(
                f"{path}:{ln}: system {s!r} again (first on line {first[s]}); give each system one row")
        first[s] = ln


def wmt20_outliers(root, lp: str) -> list[str]:
    d = wmt_files.read_outlier_dict(Path(root) / "manual-evaluation" / "outlier-systems-dict.json")
    if lp in d:
        return d[lp]
    return d.get(lp.split("_")[0], [])


def wmt20_sys_level(root, lp: str, testset: str = "newstest2020") -> SysLevel:
    """WMT20 ``results/output/system-level/DA-<testset>-<lp>-sys-scores.csv`` (lp like
    ``de-en``; ``en-iu_full``/``en-iu_news``; testset newstest2020/newstestB2020/M/P)."""
    p = (Path(root) / "results" / "output" / "system-level" /
         f"DA-{testset}-{lp.replace('-', '')}-sys-scores.csv")
    sl = load_sys_level(p)
    sl.lp = lp
    return sl


def tangled_sys_level(root, lp: str) -> SysLevel:
    """The WMT19 tables of Mathur et al. 2020 (``nitikam/tangled``), ``DA-newstest2019-<lp>-sys-nohy-scores.csv`` (root = shared/data)."""
    p = Path(root) / "tangled" / "wmt19_sys_scores" / f"DA-newstest2019-{lp.replace('-', '')}-sys-nohy-scores.csv"
    sl = load_sys_level(p, raw_col=None)
    sl.lp = lp
    return sl


def wmt20_seg_da(root, lp: str):
    """WMT20 ``metrics-ad-seg-scores-<lp>.csv`` as arrays: dict with sys (N,), doc (N,),
    seg (N,) int (1-based within doc), sid (N,), raw (N,), z (N,), n (N,)."""
    path = Path(root) / "manual-evaluation" / "DA" / f"metrics-ad-seg-scores-{lp}.csv"
    t, linenos = wmt_files.read_da_scores_lines(path)
    segid = t.column("SEGID").to_pylist()
    doc, seg = zip(*(s.rsplit("::", 1) for s in segid)) if segid else ((), ())
    return {"sys": np.asarray(t.column("SYS").to_pylist(), dtype=object),
            "doc": np.asarray(doc, dtype=object), "seg": np.asarray(seg, dtype=np.int64),
            "sid": t.column("SID").to_numpy(), "raw": tables.float_column(t, "RAW.SCR", linenos, path),
            "z": tables.float_column(t, "Z.SCR", linenos, path), "n": t.column("N").to_numpy()}


@lru_cache(maxsize=4)
def _read_metric_cached(path: str):
    return wmt_files.read_metric_scores(path, "seg")


def wmt20_seg_metric(root, metric: str, lp: str, da: dict, refset: str = "newstest2020",
                     higher_is_better: bool = True) -> np.ndarray:
    """Scores of a WMT20 segment-level metric aligned to the rows of ``da`` (N,), NaN where
    missing. Looks in final-metric-scores/{baselines,submissions}. WMT files already store
    error metrics (TER) negated, so ``higher_is_better`` is True for all of them."""
    root = Path(root)
    cands = [root / "final-metric-scores" / d / f"{metric}.seg.score.gz" for d in ("baselines", "submissions")]
    path = next((c for c in cands if c.exists()), None)
    if path is None:
        raise FileNotFoundError(f"{cands[0]}: no segment-level scores for {metric} "
                                f"(the WMT20 snapshot lacks files >= 4 MiB; see MISSING_IN_SNAPSHOT.txt)")
    import pyarrow.compute as pc

    t = _read_metric_cached(str(path))
    t = t.set_column(t.column_names.index("score"), "score",
                     pa.array(wmt_files.metric_score_column(path, t), pa.float64()))
    t = t.filter(pc.and_(pc.equal(t.column("lp"), lp), pc.equal(t.column("refset"), refset)))
    lut = dict(zip(zip(t.column("system").to_pylist(), t.column("doc").to_pylist(),
                       t.column("seg").to_pylist()),
                   t.column("score").to_numpy().astype(np.float64)))
    out = np.array([lut.get((s, d, int(g)), np.nan) for s, d, g in zip(da["sys"], da["doc"], da["seg"])])
    return out if higher_is_better else -out


def wmt20_seg_metric_matrix(root, metric: str, lp: str, systems: Sequence[str],
                            refset: str = "newstest2020") -> np.ndarray:
    """(S, N) per-segment scores of a WMT20 segment-level metric for ``systems`` over the
    segments every one of them has (for paired tests between systems)."""
    import pyarrow.compute as pc

    root = Path(root)
    cands = [root / "final-metric-scores" / d / f"{metric}.seg.score.gz" for d in ("baselines", "submissions")]
    path = next((c for c in cands if c.exists()), None)
    if path is None:
        raise FileNotFoundError(f"{cands[0]}: no segment-level scores for {metric}")
    t = _read_metric_cached(str(path))
    t = t.set_column(t.column_names.index("score"), "score",
                     pa.array(wmt_files.metric_score_column(path, t), pa.float64()))
    t = t.filter(pc.and_(pc.equal(t.column("lp"), lp), pc.equal(t.column("refset"), refset)))
    per: dict[str, dict] = {}
    for s, d, g, v in zip(t.column("system").to_pylist(), t.column("doc").to_pylist(),
                          t.column("seg").to_pylist(), t.column("score").to_numpy()):
        per.setdefault(s, {})[(d, g)] = v
    missing = [s for s in systems if s not in per]
    if missing:
        raise ValueError(f"{path}: no {lp} scores for system(s) {', '.join(missing)}")
    keys = sorted(set.intersection(*(set(per[s]) for s in systems)))
    return np.array([[per[s][k] for k in keys] for s in systems], dtype=np.float64)
