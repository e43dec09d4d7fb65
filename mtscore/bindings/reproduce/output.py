"""Write a :class:`~.model.Reproduction` (any paper's) into a folder: per table a CSV (one line per
cell: reproduced, printed, whether they match) and a Markdown grid; per figure a PNG (the figure's
``draw``; matplotlib, the ``plot`` extra) and a CSV of its numbers; ``index.html`` with every table (paper beside
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

from ...analysis.errors import AnalysisInputError
from ..report.page import esc, page, section, table, td
from .model import Cell, Extra, Figure, Reproduction, Table

__all__ = ["figure_csv", "index_html", "table_csv", "table_markdown", "write_reproduction"]

_TITLE_END = ": reproduction"  # every page's title ends so (an earlier reproduction may be replaced)
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


def figure_csv(f: Figure) -> str:
    """The numbers a figure draws: its ``head`` line, then one line per point."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(f.head)
    w.writerows(f.points)
    return buf.getvalue()


def _num(x: object) -> str:
    return f"{x:.4f}" if isinstance(x, float) else str(x)


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


def _html_figure(f: Figure, png: bytes | None) -> str:
    if png is None:
        rows = [[td(_num(x), x if isinstance(x, float) else None, cls=None if isinstance(x, float) else "t")
                 for x in p] for p in f.points]
        body = table(f.head, rows, cls="plain", ident=f"fig-{f.key}")
        return section(f.key, f.title, f'<div class="wide">{body}</div>', f.note or None)
    img = (f'<figure id="fig-{esc(f.key)}"><img alt="{esc(f.title)}" src="data:image/png;base64,'
           f'{base64.b64encode(png).decode("ascii")}"><figcaption>{esc(f.title)}. {esc(f.note)}'
           f"</figcaption></figure>")
    return section(f.key, f.title, img)


def _html_extra(e: Extra) -> str:
    body = table(e.head, [[td(x, cls="t") for x in row] for row in e.rows], cls="plain")
    return section(e.key, e.title, body, e.note or None)


def index_html(res: Reproduction, pngs: dict[str, bytes], title: str) -> str:
    """The self-contained page: every table, every figure (PNG as data URI; a figure without one:
    its CSV numbers as a table), the extras, what is not reproduced."""
    n = len(res.compared)
    bad = len(res.differing)
    intro = (_STYLE + f"<p>{esc(res.paper)}, reproduced from {esc(res.source)}. A cell reads 'reproduced = printed' where the paper's "
             f"value is transcribed ({n} cells compared, {bad} differ); the other cells show the reproduced "
             "value alone.</p>")
    secs = [_html_table(t) for t in res.tables] + [_html_figure(f, pngs.get(f.key)) for f in res.figures]
    secs += [_html_extra(e) for e in res.extras]
    nots = table(["not reproduced", "why"], [[td(a, cls="t"), td(b, cls="t")] for a, b in res.unsupported],
                 cls="plain")
    secs.append(section("unsupported", "Not supported by the released data", nots))
    return page(title, intro, secs)


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
            return f"{_TITLE_END}</title>" in fh.read(4096)
    except OSError:
        return False


def write_reproduction(res: Reproduction, out: str | Path, title: str) -> Path:
    """Write every file into ``out`` (created; an earlier reproduction there is replaced); returns
    the folder. ``title``: the page's, ending in ": reproduction". Needs matplotlib (the ``plot``
    extra) where a figure is drawn; fails before writing anything without it."""
    from ...analysis.plots import require_matplotlib

    if not title.endswith(_TITLE_END):
        raise ValueError(f"title {title!r} must end in {_TITLE_END!r}")
    if any(f.draw is not None for f in res.figures):
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
            if f.draw is not None:
                pngs[f.key] = f.draw(f)
                (tmp / f"{f.key}.png").write_bytes(pngs[f.key])
            (tmp / f"{f.key}.csv").write_text(figure_csv(f), encoding="utf-8")
        (tmp / "index.html").write_text(index_html(res, pngs, title), encoding="utf-8")
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
