"""Writing analysis results: JSON-safe values (:func:`jsonable`), files written atomically
(:func:`write_atomic`) and the self-contained HTML page of a procedure (:func:`render_procedure_html`).
"""
from __future__ import annotations

import base64
import html
from collections.abc import Sequence

import numpy as np

__all__ = [
    "jsonable",
    "render_procedure_html",
    "write_atomic",
]


def jsonable(x):
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


_PROC_STYLE = ("<style>body{font-family:sans-serif;margin:2em;max-width:1100px}pre{font-size:12px;background:#f6f6f6;"
               "padding:8px}figure{display:inline-block;margin:8px}img{max-width:720px}</style>")


def render_procedure_html(title: str, sections: Sequence[dict]) -> str:
    """Self-contained HTML page for the thesis procedures (``mtscore human worker-test``,
    ``significance``, ``rater-heatmap``, ``sequence``, ``mtscore meta subsets``): each section a
    dict with ``heading``, optional ``about`` (one paragraph of plain text), ``text`` (the
    command's text result, shown preformatted) and ``figures`` ({caption: PNG bytes})."""
    esc = html.escape
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{esc(title)}</title>{_PROC_STYLE}"
             f"</head><body><h1>{esc(title)}</h1>"]
    for sec in sections:
        parts.append(f"<h2>{esc(sec['heading'])}</h2>")
        if sec.get("about"):
            parts.append(f"<p>{esc(sec['about'])}</p>")
        if sec.get("text"):
            parts.append(f"<pre>{esc(sec['text'])}</pre>")
        for name, png in sec.get("figures", {}).items():
            b64 = base64.b64encode(png).decode("ascii")
            parts.append(f"<figure><img alt='{esc(name)}' src='data:image/png;base64,{b64}'>"
                         f"<figcaption>{esc(name)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_atomic(path: str, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) through :func:`mtscore.engine.atomic.atomic_write`: a
    temporary file in the target folder, then a rename (never a half-written file); an
    ``OSError`` names ``path`` (not the temporary file)."""
    from ..engine.atomic import atomic_write

    payload = data if isinstance(data, bytes) else data.encode("utf-8")
    atomic_write(path, lambda f: f.write(payload))

