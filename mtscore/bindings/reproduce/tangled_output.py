"""Write a :class:`~.tangled.TangledReproduction` into a folder: per table a CSV (one line per
cell: reproduced, printed, whether they match) and a Markdown grid; per figure a PNG (matplotlib,
the ``plot`` extra) and a CSV of its numbers; ``index.html`` with every table (paper beside
reproduced, each differing cell marked) and every figure inline (self-contained: no URL, no
network request).

The folder is written whole or not at all: everything goes into a temporary folder beside it,
renamed into place at the end.
"""
from __future__ import annotations

import base64
import csv
import io
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from ...analysis.errors import AnalysisInputError
from ..report.page import esc, page, section, table, td
from .tangled import Cell, Figure, Table, TangledReproduction
from .tangled_printed import PAPER

__all__ = ["figure_png", "table_csv", "table_markdown", "write_tangled"]

_TITLE = "Tangled up in BLEU (Mathur et al. 2020): reproduction"
_MARK = "\u2260"  # a cell whose reproduced value differs from the printed one


def _cell_text(c: Cell) -> str:
    if c.reproduced is None:
        return "\u2013"
    if c.matches is False:
        return f"{c.reproduced_text} {_MARK} {c.printed}"
    return c.reproduced_text


def table_csv(t: Table) -> str:
    """One line per cell: table,row,column,reproduced,reproduced_rounded,printed,matches,source,reason."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["table", "row", "column", "reproduced", "reproduced_rounded", "printed", "matches", "source",
                "reason"])
    for r in t.rows:
        for col in t.columns:
            c = t.cell(r, col)
            w.writerow([t.key, r, col, "" if c.reproduced is None else repr(c.reproduced), c.reproduced_text,
                        c.printed or "", "" if c.matches is None else str(c.matches).lower(), c.source or "",
                        c.reason or ""])
    return buf.getvalue()


def table_markdown(t: Table) -> str:
    """The table as a Markdown grid of reproduced values at the printed precision; a printed value
    in bold means reproduced = printed, ``x != y`` a difference, an en dash no data."""
    head = "| | " + " | ".join(t.columns) + " |\n|---|" + "---|" * len(t.columns) + "\n"
    lines = []
    for r in t.rows:
        cells = []
        for col in t.columns:
            c = t.cell(r, col)
            txt = _cell_text(c)
            cells.append(f"**{txt}**" if c.matches else txt)
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    n = len(t.compared)
    bad = sum(1 for c in t.compared if not c.matches)
    return (f"# {t.title}\n\n{t.note}\n\nReproduced from the released data; **bold** = equals the value "
            f"printed in the paper ({n} printed cells compared, {bad} differ, marked {_MARK}).\n\n"
            + head + "\n".join(lines) + "\n")


def _figure_rows(f: Figure) -> tuple[list[str], list[list[object]]]:
    d = f.data
    metrics = list(d["metrics"])
    if "groups" in d:
        head = ["group", "count", "metric", "mean", "std", "min", "max", "q05", "q25", "q50", "q75", "q95"]
        rows: list[list[object]] = []
        for g, name in enumerate(d["groups"]):
            for j, m in enumerate(metrics):
                q = np.asarray(d["quantiles"])[g, j]
                rows.append([name, int(np.asarray(d["count"])[g]), m, *(float(np.asarray(d[k])[g, j])
                             for k in ("mean", "std", "min", "max")), *map(float, q)])
        return head, rows
    x = "n" if "n" in d else "start"
    r, lo, hi = (np.asarray(d[k]) for k in ("r", "low", "high"))
    head = [x, *metrics, *(f"{m} low" for m in metrics), *(f"{m} high" for m in metrics)]
    return head, [[int(v), *map(float, r[i]), *map(float, lo[i]), *map(float, hi[i])]
                  for i, v in enumerate(np.asarray(d[x]))]


def figure_csv(f: Figure) -> str:
    """The numbers a figure draws, one line per point (or per group and metric for Figure 2)."""
    head, rows = _figure_rows(f)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    w.writerows(rows)
    return buf.getvalue()


def figure_png(f: Figure) -> bytes:
    """The figure drawn with :mod:`mtscore.analysis.plots` (needs matplotlib: the ``plot`` extra)."""
    from ...analysis import plots

    d = f.data
    if f.key == "fig1-topn":
        return plots.topn_plot(d, list(d["metrics"]), title=f.title)
    if f.key.startswith("fig1-rolling"):
        return plots.rolling_plot(d, list(d["metrics"]), int(d["window"]),
                                  title=f.title)
    return plots.subset_boxplot(d, list(d["metrics"]), title=f.title)


_STYLE = ("<style>td.diff{background:#fbd3d3;font-weight:700}td.same{background:#e6f4ea}"
          "td.nodata{color:#999}td{white-space:nowrap}div.wide{overflow-x:auto}figure img{max-width:100%}</style>")


def _html_cell(c: Cell) -> str:
    if c.reproduced is None:
        return td("\u2013", cls="nodata", title=c.reason)
    if c.matches is None:
        return td(c.reproduced_text, c.reproduced, title="printed value not transcribed")
    if c.matches:
        return td(f"{c.reproduced_text} = {c.printed}", c.reproduced, cls="same", title=c.source)
    return td(f"{c.reproduced_text} {_MARK} {c.printed}", c.reproduced, cls="diff", title=c.source)


def _html_table(t: Table) -> str:
    rows = [[td(r, cls="t")] + [_html_cell(t.cell(r, col)) for col in t.columns] for r in t.rows]
    bad = sum(1 for c in t.compared if not c.matches)
    note = (f"{t.note} Cells read 'reproduced = paper' (green) where the paper's printed value is "
            f"transcribed; differing cells are red and marked {_MARK} ({len(t.compared)} compared, {bad} "
            "differ); a dash: no data.")
    body = table(["", *t.columns], rows, cls="plain", ident=f"tab-{t.key}")
    return section(t.key, t.title, f'<div class="wide">{body}</div>', note)


def _html_figure(f: Figure, png: bytes) -> str:
    img = (f'<figure id="fig-{esc(f.key)}"><img alt="{esc(f.title)}" src="data:image/png;base64,'
           f'{base64.b64encode(png).decode("ascii")}"><figcaption>{esc(f.title)}. {esc(f.note)}'
           f"</figcaption></figure>")
    return section(f.key, f.title, img)


def index_html(res: TangledReproduction, pngs: dict[str, bytes]) -> str:
    """The self-contained page: every table, every figure (PNG as data URI), what is not reproduced."""
    n = sum(len(t.compared) for t in res.tables)
    bad = len(res.differing)
    intro = (_STYLE + f"<p>{esc(PAPER)}, reproduced from the WMT19 system-level scores the authors "
             f"released (github.com/nitikam/tangled). A cell reads 'reproduced = printed' where the paper's "
             f"value is transcribed ({n} cells compared, {bad} differ); the other cells show the reproduced "
             "value alone.</p>")
    secs = [_html_table(t) for t in res.tables] + [_html_figure(f, pngs[f.key]) for f in res.figures]
    outl = table(["language pair", "MAD outliers"],
                 [[td(lp, cls="t"), td(", ".join(s) or "none", cls="t")] for lp, s in res.outliers.items()],
                 cls="plain")
    secs.append(section("outliers", "Outlier systems (|robust z| > 2.5 on DA z)", outl))
    nots = table(["not reproduced", "why"], [[td(a, cls="t"), td(b, cls="t")] for a, b in res.unsupported],
                 cls="plain")
    secs.append(section("unsupported", "Not supported by the released data", nots))
    return page(_TITLE, intro, secs)


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise AnalysisInputError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not _earlier_reproduction(out / "index.html"):
        raise AnalysisInputError(f"--out {out}: a folder that is neither empty nor an earlier reproduction "
                                 "(no index.html written by mtscore reproduce); choose a new folder")


def _earlier_reproduction(index: Path) -> bool:
    """Whether ``index`` is a page this module wrote (its title), so its folder may be replaced."""
    try:
        with open(index, encoding="utf-8", errors="replace") as fh:
            return f"<title>{_TITLE}</title>" in fh.read(4096)
    except OSError:
        return False


def write_tangled(res: TangledReproduction, out: str | Path) -> Path:
    """Write every file into ``out`` (created; an earlier reproduction there is replaced); returns
    the folder. Needs matplotlib (the ``plot`` extra); fails before writing anything without it."""
    from ...analysis.plots import require_matplotlib

    require_matplotlib()
    out = Path(out)
    _check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        for t in res.tables:
            (tmp / f"{t.key}.csv").write_text(table_csv(t), encoding="utf-8")
            (tmp / f"{t.key}.md").write_text(table_markdown(t), encoding="utf-8")
        pngs = {}
        for f in res.figures:
            pngs[f.key] = figure_png(f)
            (tmp / f"{f.key}.png").write_bytes(pngs[f.key])
            (tmp / f"{f.key}.csv").write_text(figure_csv(f), encoding="utf-8")
        (tmp / "index.html").write_text(index_html(res, pngs), encoding="utf-8")
        os.chmod(tmp, 0o777 & ~_umask())
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old / "x")
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
