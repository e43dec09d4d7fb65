"""The HTML frame of a report: escaping, number cells, tables, sections and the page itself
(inline CSS and one small inline script; no URL, no network request).

Every text that comes from the input (system names, segments, n-grams, metric names) goes
through :func:`esc`. Tables carry their numbers twice: the displayed, rounded text and the exact
value in ``data-v`` (Python ``repr`` of the float), which the sorting script and the tests read.
"""
from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

__all__ = ["PALETTE", "colour", "esc", "fmt", "page", "section", "table", "td", "th"]

#: system colours (cycled): Okabe-Ito's colour-blind-safe set, then darker tones
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000",
           "#7f3c8d", "#11a579", "#3969ac", "#f2b701", "#e73f74", "#80ba5a", "#e68310", "#008695")


def colour(i: int) -> str:
    """The colour of the i-th system."""
    return PALETTE[i % len(PALETTE)]


def esc(text: object) -> str:
    """``html.escape`` of ``str(text)`` (quotes too: safe inside attributes)."""
    return html.escape(str(text), quote=True)


def fmt(x: float | None, digits: int = 2) -> str:
    """A number rounded for display; NaN / None / inf as an en dash."""
    if x is None or not math.isfinite(float(x)):
        return "\u2013"
    return f"{float(x):.{digits}f}"


def td(text: str, value: float | int | None = None, *, raw: bool = False, cls: str | None = None,
       style: str | None = None, title: str | None = None) -> str:
    """One cell: ``text`` escaped (unless ``raw``: already HTML), ``value`` as ``data-v``."""
    attrs = ""
    if value is not None:
        attrs += f' data-v="{esc(repr(float(value)))}"'
    if cls:
        attrs += f' class="{esc(cls)}"'
    if style:
        attrs += f' style="{esc(style)}"'
    if title:
        attrs += f' title="{esc(title)}"'
    return f"<td{attrs}>{text if raw else esc(text)}</td>"


def th(text: str, scope: str = "col") -> str:
    """A header cell (escaped)."""
    return f'<th scope="{scope}">{esc(text)}</th>'


def table(head: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "sortable",
          caption: str | None = None, ident: str | None = None) -> str:
    """A table: ``head`` plain header texts, ``rows`` lists of cells made by :func:`td` or
    :func:`th`; ``cls`` "sortable" lets the script sort it by a click on a header."""
    out = [f'<table class="{esc(cls)}"' + (f' id="{esc(ident)}"' if ident else "") + ">"]
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<thead><tr>" + "".join(th(h) for h in head) + "</tr></thead><tbody>")
    out.extend("<tr>" + "".join(r) + "</tr>" for r in rows)
    out.append("</tbody></table>")
    return "".join(out)


def section(ident: str, title: str, body: str, note: str | None = None) -> str:
    """One report section, ``<section id=ident>``, with its heading and an optional note."""
    n = f'<p class="note">{esc(note)}</p>' if note else ""
    return f'<section id="{esc(ident)}"><h2>{esc(title)}</h2>{n}{body}</section>\n'


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;max-width:1200px;
padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
h3{font-size:1.05em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:right}
th{background:#f4f4f4}td.t,th.t{text-align:left}caption{text-align:left;font-weight:600;padding:.3em 0}
table.sortable th{cursor:pointer}tr.best td{font-weight:700}td.cluster{background:#e6f4ea}
.note{color:#555;font-size:.92em}.grid{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}
figcaption{font-size:.85em;color:#444}.seg{border:1px solid #ddd;margin:.6em 0;padding:.4em .6em}
.seg dt{font-weight:600;float:left;clear:left;width:8em}.seg dd{margin-left:8.5em}
ins{background:#d4f8d4;text-decoration:none}del{background:#fbd3d3}code{font-size:.95em}
.key span{display:inline-block;width:.9em;height:.9em;margin:0 .3em 0 1em;vertical-align:middle}
svg text{font:11px sans-serif}
@media print{table.sortable th{cursor:auto}#pair-picker,#example-filter{display:none}}
"""

# Sort a table by a click on a header (by data-v where a cell has one, else by text); show
# the chosen pair of systems only; filter the listed segments by reference length and text.
# Without the script every table, every pair and every segment is shown.
_JS = """
(function(){
function key(c){if(!c)return '';var v=c.getAttribute('data-v');
if(v!==null){var f=parseFloat(v);return isNaN(f)?-Infinity:f;}return c.textContent;}
document.querySelectorAll('table.sortable thead th').forEach(function(h){
h.addEventListener('click',function(){var t=h.closest('table'),b=t.tBodies[0];
var i=Array.prototype.indexOf.call(h.parentNode.children,h),asc=h.getAttribute('data-dir')!=='asc';
h.setAttribute('data-dir',asc?'asc':'desc');var rows=Array.prototype.slice.call(b.rows);
rows.sort(function(x,y){var a=key(x.cells[i]),c=key(y.cells[i]);return (a<c?-1:a>c?1:0)*(asc?1:-1);});
rows.forEach(function(r){b.appendChild(r);});});});
var sel=document.getElementById('pair-select');
if(sel){document.getElementById('pair-picker').hidden=false;
var show=function(){document.querySelectorAll('.pair').forEach(function(d){
d.hidden=d.getAttribute('data-pair')!==sel.value;});};
sel.addEventListener('change',show);show();}
var fl=document.getElementById('example-filter');
if(fl){fl.hidden=false;var lo=document.getElementById('filter-min'),hi=document.getElementById('filter-max'),
tx=document.getElementById('filter-text'),out=document.getElementById('filter-count');
var filt=function(){var a=parseFloat(lo.value),b=parseFloat(hi.value),q=tx.value.toLowerCase(),n=0;
document.querySelectorAll('dl.seg').forEach(function(d){var l=parseFloat(d.getAttribute('data-len'));
var ok=(isNaN(a)||l>=a)&&(isNaN(b)||l<=b)&&(!q||d.textContent.toLowerCase().indexOf(q)>=0);d.hidden=!ok;
var p=d.closest('.pair');if(ok&&!(p&&p.hidden))n++;});out.textContent=n+' shown';};
[lo,hi,tx].forEach(function(e){e.addEventListener('input',filt);});if(sel)sel.addEventListener('change',filt);filt();}
})();
"""


def page(title: str, intro: str, sections: Sequence[str]) -> str:
    """The whole document: ``intro`` and ``sections`` are HTML already (made with :func:`esc`)."""
    nav = "".join(_nav_items(sections))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>\n"
            f"<h1>{esc(title)}</h1>{intro}<nav><ul>{nav}</ul></nav>\n" + "".join(sections)
            + f"<script>{_JS}</script></body></html>\n")


def _nav_items(sections: Sequence[str]):
    for s in sections:
        ident = s.split('id="', 1)[1].split('"', 1)[0]
        title = s.split("<h2>", 1)[1].split("</h2>", 1)[0]
        yield f'<li><a href="#{ident}">{title}</a></li>'
