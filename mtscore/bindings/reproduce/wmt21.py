"""The WMT21 news task's human evaluation (Akhbardeh et al. 2021, "Findings of the 2021 Conference
on Machine Translation (WMT21)", WMT 2021): the DA system rankings and Wilcoxon significance
clusters, rebuilt from the released ratings (``wmt-conference/wmt21-news-systems``,
``humaneval/``) and compared with the official ranking files of the same release.

Per language pair (to-English: cs, de, ha, is, ja, ru, zh; the Facebook Wikipedia pairs bn-hi,
hi-bn, xh-zu, zu-xh) one table, a row per system in the reproduced ranking order:

* ``rank``: position by mean z (official: the line of ``ad-sys-ranking-<lp>-z.csv``);
* ``raw``: mean raw score (0-100), from the released segment scores (the ratings files carry z only);
* ``z``: system z = mean over segments of the mean standardised judgement of SYSTEM and REPEAT
  items ("micro average over segments", printed to 3 decimals);
* ``N`` / ``N.ALL``: segments / judgements behind it;
* ``wins`` and ``cluster``: how many systems it beats (one-sided Wilcoxon rank-sum on segment z,
  p < 0.05) and the first rank of its cluster (official: ``clusters.csv``).

Plus ``wilcoxon``: per language pair the number of significant pairs, reproduced and in the
official ``adwilcox-<lp>.csv`` matrix (non-0.12 entries), whether every p-value agrees, and whether
every decision of both directions (p < 0.05 / 0.01 / 0.001) equals the stars of the official
``ad-DA-diff-wilcoxon-rs-<lp>.csv``; and, for the newstest2021 to-English pairs, the pairwise
metric-vs-human decisions with their Type I / II errors (:mod:`.wmt21_pairs`: ``pairs``,
``pairs-lp``, ``agreement`` and the figures ``fig-pairs``, ``fig-pairwise-BLEU``, ``fig-pairwise-chrF``,
``fig-agreement``).

The to-English pairs and the Facebook pairs start from the individual standardised ratings
(``ad-<xxyy>-good-stnd.csv``); zh-en, whose ratings file (>= 4 MiB) the snapshot lacks, from
the released segment scores ``ad-seg-scores-zh-en.csv``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...analysis import human
from ...analysis.data import read_da_scores, read_matrix, read_ratings, read_sys_ranking, read_table, table_to_numpy
from ...analysis.errors import AnalysisInputError
from . import wmt21_pairs as pairs
from .model import Cell, Reproduction, Table
from .output import write_reproduction

__all__ = ["FROM_RATINGS", "FROM_SEGMENTS", "UNSUPPORTED", "reproduce_wmt21", "required_files", "write_wmt21"]

TITLE = "WMT21 human evaluation (Akhbardeh et al. 2021): reproduction"
PAPER = ("Akhbardeh et al. (2021), Findings of the 2021 Conference on Machine Translation (WMT21): DA system "
         "rankings and Wilcoxon significance clusters")
SOURCE = "github.com/wmt-conference/wmt21-news-systems @f41750d (humaneval/)"
#: language pair -> folder under humaneval/, rebuilt from the individual ratings
FROM_RATINGS = {**{lp: "newstest2021-toen" for lp in ("cs-en", "de-en", "ha-en", "is-en", "ja-en", "ru-en")},
                **{lp: "facebook-wikipedia-2021" for lp in ("bn-hi", "hi-bn", "xh-zu", "zu-xh")}}
#: rebuilt from the released segment scores (the ratings file is absent from the snapshot)
FROM_SEGMENTS = {"zh-en": "newstest2021-toen"}
#: N.ALL cells that differ from the official file, and why: the released ranking counts a
#: duplicated judgement (same worker, item and score, recorded twice) twice, the ratings file once
DUPLICATED = {"de-en": 73, "is-en": 1}
COLUMNS = ["rank", "raw", "z", "N", "N.ALL", "wins", "cluster"]
UNSUPPORTED = [
    ("Out-of-English and fr-de/de-fr rankings and clusters (newstest2021-EX_and_XY)",
     "the release holds only the Appraise cluster printout; the ratings (>= 4 MiB) are absent from the snapshot"),
    ("Raw (unstandardised) system scores from the individual ratings",
     "the released ratings files carry standardised scores only; the raw column averages the released "
     "segment scores (ad-seg-scores-<lp>.csv RAW.SCR) instead"),
    ("zh-en N.ALL", "its individual ratings file is absent from the snapshot; N, z, clusters come from the "
     "released segment scores"),
]


def _root(data: str | Path) -> Path:
    d = Path(data)
    for cand in (d / "wmt21-news-systems" / "humaneval", d / "humaneval"):
        if cand.is_dir():
            return cand
    return d


def _code(lp: str) -> str:
    return lp.replace("-", "")


def required_files(data: str | Path) -> list[Path]:
    """Every file the reproduction reads (under ``DATA/wmt21-news-systems/humaneval`` or ``DATA``, and
    the to-English references under ``txt/`` beside ``humaneval/``; the system outputs are named
    when missing)."""
    r = _root(data)
    out = []
    for lp, sub in {**FROM_RATINGS, **FROM_SEGMENTS}.items():
        first = (f"ad-{_code(lp)}-good-stnd.csv" if lp in FROM_RATINGS else f"ad-seg-scores-{lp}.csv")
        out += [r / sub / first, r / sub / f"ad-sys-ranking-{lp}-z.csv", r / sub / f"adwilcox-{_code(lp)}.csv",
                r / sub / f"ad-DA-diff-wilcoxon-rs-{_code(lp)}.csv"]
        if lp in FROM_RATINGS:
            out.append(r / sub / f"ad-seg-scores-{lp}.csv")
    out += [r / sub / "clusters.csv" for sub in sorted(set(FROM_RATINGS.values()))]
    return out + pairs.required_files(r)


def _check(data: str | Path) -> Path:
    for p in required_files(data):
        if not p.is_file():
            raise AnalysisInputError(
                f"missing data file {p} (the reproduction needs the WMT21 human evaluation release, "
                "github.com/wmt-conference/wmt21-news-systems, humaneval/)")
    return _root(data)


def _segments(folder: Path, lp: str) -> tuple[dict[str, np.ndarray], dict[str, int] | None]:
    """Segment scores (system, score) and judgements per system (None: not available)."""
    if lp in FROM_SEGMENTS:
        t = read_da_scores(folder / f"ad-seg-scores-{lp}.csv")
        return {"system": table_to_numpy(t, "SYS"), "score": t.column("Z.SCR").to_numpy()}, None
    t = read_ratings(folder / f"ad-{_code(lp)}-good-stnd.csv")
    col = {c: table_to_numpy(t, c) for c in ("sys_id", "sid", "score", "type")}
    # the Facebook files quote the system names ("UEdin.4"); the ranking files do not
    col["sys_id"] = np.array([str(s).strip('"') for s in col["sys_id"]], dtype=object)
    seg = human.segment_scores(col["sys_id"], col["sid"], col["score"], col["type"])
    m = np.isin(col["type"].astype(str), human.SCORED_TYPES)
    sy, cnt = np.unique(col["sys_id"][m].astype(str), return_counts=True)
    return seg, dict(zip(sy.tolist(), cnt.tolist()))


def _lp_table(folder: Path, lp: str, clusters) -> tuple[Table, tuple[int, int, bool, bool], dict[str, np.ndarray]]:
    seg, n_all = _segments(folder, lp)
    groups = {str(s): seg["score"][seg["system"] == s] for s in np.unique(seg["system"])}
    names, p = human.wilcoxon_matrix(groups)
    names = [str(s) for s in names]
    sysz = human.system_scores(seg["system"], seg["score"])
    st = read_da_scores(folder / f"ad-seg-scores-{lp}.csv")
    raw = human.system_scores(table_to_numpy(st, "SYS"), st.column("RAW.SCR").to_numpy())
    raw_of = dict(zip(raw["system"].tolist(), raw["score"].tolist()))
    rk = read_sys_ranking(folder / f"ad-sys-ranking-{lp}-z.csv")
    off = {s: (i + 1, z, n, na, rw) for i, (s, z, n, na, rw) in enumerate(zip(*(rk.column(c).to_pylist() for c in (
        "SYS", "Z.SCR", "N", "N.ALL", "RAW.SCR"))))}
    sel = (clusters["SRC"] == lp[:2]) & (clusters["TRG"] == lp[3:])
    cl = {s: (w, c) for s, w, c in zip(clusters["SYSTEM"][sel], clusters["WINS"][sel], clusters["CLUSTER_START"][sel])}
    wins = (np.nan_to_num(p, nan=1.0) < 0.05).sum(axis=1)
    ids = human.rank_clusters(p)
    first = {c: int(np.flatnonzero(ids == c)[0]) + 1 for c in np.unique(ids)}
    zsrc = f"ad-sys-ranking-{lp}-z.csv"
    cells: dict[tuple[str, str], Cell] = {}
    for i, s in enumerate(names):
        o = off.get(s)
        c = cl.get(s)
        k = int(np.flatnonzero(sysz["system"] == s)[0])
        vals: dict[str, tuple[float | None, str | None, str | None, str | None]] = {
            "rank": (float(i + 1), None if o is None else str(o[0]), zsrc, None),
            "raw": (raw_of.get(s), None if o is None else f"{o[4]:.1f}", zsrc,
                    None if s in raw_of else "no segment scores"),
            "z": (float(sysz["score"][k]), None if o is None else f"{o[1]:.3f}", zsrc, None),
            "N": (float(sysz["n"][k]), None if o is None else str(int(o[2])), zsrc, None),
            "N.ALL": (None if n_all is None else float(n_all.get(s, 0)), None if o is None else str(int(o[3])), zsrc,
                      "judgements not available (segment scores only)" if n_all is None else None),
            "wins": (float(wins[i]), None if c is None else str(int(c[0])), "clusters.csv", None),
            "cluster": (float(first[int(ids[i])]), None if c is None else str(int(c[1])), "clusters.csv", None),
        }
        for col, (v, pr, src, why) in vals.items():
            cells[(s, col)] = Cell(f"ranking-{lp}", s, col, v, pr, src if pr is not None else None, why,
                                   default_digits={"z": 3, "raw": 1}.get(col, 0))
    rows, cols, ref = read_matrix(folder / f"adwilcox-{_code(lp)}.csv")
    tab = human.wmt_wilcoxon_table(p)
    same = rows == cols == names and bool(np.allclose(tab, ref, rtol=1e-10, atol=1e-300))
    n_ours = int((tab != 0.12).sum())
    n_ref = int((ref != 0.12).sum())
    star_names, stars = pairs.read_diff_stars(folder / f"ad-DA-diff-wilcoxon-rs-{_code(lp)}.csv")
    q = np.nan_to_num(p, nan=1.0)
    ours = (q < 0.05).astype(np.int64) + (q < 0.01) + (q < 0.001)
    same_stars = star_names == names and bool((ours == stars).all())
    note = ("Systems in the reproduced ranking order (mean segment z); rank, raw (1 d.p., mean of the released "
            "segment scores' RAW.SCR), z (3 d.p.), N segments, N.ALL "
            f"judgements against {zsrc}; wins (systems beaten, one-sided Wilcoxon rank-sum p < 0.05) and "
            "cluster (first rank of its significance cluster) against clusters.csv.")
    if lp in DUPLICATED:
        note += (f" N.ALL differs where the official count includes {DUPLICATED[lp]} duplicated judgement(s) "
                 "(same worker and score recorded twice) that the de-duplicated ratings file holds once; "
                 "z and N are unaffected.")
    title = f"{lp}: DA ranking and significance clusters"
    return Table(f"ranking-{lp}", title, names, list(COLUMNS), cells, note), (n_ours, n_ref, same, same_stars), groups


def _clusters(path: Path) -> dict[str, np.ndarray]:
    t = read_table(path, string_columns=("SRC", "TRG", "SYSTEM", "END_OF_CLUSTER"))
    return {c: table_to_numpy(t, c) for c in ("SRC", "TRG", "SYSTEM", "WINS", "CLUSTER_START")}


def reproduce_wmt21(data: str | Path) -> Reproduction:
    """Every ranking the release supports. ``data``: the shared data folder (holding
    ``wmt21-news-systems/humaneval/``) or that folder. Raises :class:`AnalysisInputError` naming
    the first missing file."""
    r = _check(data)
    clusters = {sub: _clusters(r / sub / "clusters.csv") for sub in sorted(set(FROM_RATINGS.values()))}
    tables: list[Table] = []
    sig: dict[tuple[str, str], Cell] = {}
    decisions = {}
    lps = list(FROM_RATINGS) + list(FROM_SEGMENTS)
    for lp in lps:
        sub = {**FROM_RATINGS, **FROM_SEGMENTS}[lp]
        t, (n_ours, n_ref, same, same_stars), groups = _lp_table(r / sub, lp, clusters[sub])
        tables.append(t)
        src = f"adwilcox-{_code(lp)}.csv"
        sig[(lp, "significant pairs")] = Cell("wilcoxon", lp, "significant pairs", float(n_ours), str(n_ref), src)
        sig[(lp, "all p equal")] = Cell("wilcoxon", lp, "all p equal", float(same), "1", src)
        sig[(lp, "all decisions equal")] = Cell("wilcoxon", lp, "all decisions equal", float(same_stars), "1",
                                                f"ad-DA-diff-wilcoxon-rs-{_code(lp)}.csv")
        if lp in pairs.LPS:
            decisions[lp] = pairs.lp_decisions(r, lp, groups)
    tables.append(Table("wilcoxon", "Wilcoxon rank-sum matrices", lps,
                        ["significant pairs", "all p equal", "all decisions equal"], sig,
                        "Significant one-sided pairs (p < 0.05, higher-ranked system first) reproduced vs the "
                        "official adwilcox-<lp>.csv (entries other than the 0.12 sentinel); 'all p equal' = 1 "
                        "when every entry agrees to 1e-10 relative; 'all decisions equal' = 1 when every ordered "
                        "pair, both directions, has the stars of ad-DA-diff-wilcoxon-rs-<lp>.csv (p < 0.05 / "
                        "0.01 / 0.001; a lower-ranked system can win, e.g. de-en happypoet.8 over Watermelon.13)."))
    ordered = {lp: decisions[lp] for lp in pairs.LPS}
    pair_tables, fig = pairs.pairs_tables(ordered)
    agreement, more = pairs.decision_figures(ordered)
    return Reproduction(tables + pair_tables + [agreement], [fig, *more], list(UNSUPPORTED), PAPER, SOURCE)


def write_wmt21(res: Reproduction, out: str | Path) -> Path:
    """Write :func:`reproduce_wmt21`'s result into ``out`` (:func:`~.output.write_reproduction`)."""
    return write_reproduction(res, out, TITLE)
