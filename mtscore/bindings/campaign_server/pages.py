"""The HTML of the campaign server: the item screen, the end-of-HIT page, errors, the
campaign-closed page and the admin page.

Plain HTML forms (they submit with scripts off), every text escaped with :func:`html.escape`,
one small inline script (the slider's number read-out and Enter to submit) allowed by its hash
in the Content-Security-Policy, which otherwise allows nothing but this page's forms. The link
token is in the URL, so ``Referrer-Policy: no-referrer`` keeps it from leaving the page.
"""
from __future__ import annotations

import base64
import hashlib
from html import escape

from .status import COLUMNS, CampaignStatus, headline, row_cells
from .store import Item

__all__ = ["HEADERS", "admin_page", "closed_page", "document_question", "done_page", "error_page", "item_page",
           "question"]

_SCRIPT = ("var s=document.getElementById('score'),o=document.getElementById('readout');"
           "s.addEventListener('input',function(){o.value=s.value;});"
           "s.addEventListener('keydown',function(e){if(e.key==='Enter'){e.preventDefault();s.form.submit();}});")
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
HEADERS = {
    "Content-Security-Policy": f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}
_STYLE = ("body{font-family:sans-serif;max-width:46em;margin:2em auto;padding:0 1em;line-height:1.5}"
          ".box{border:1px solid #888;padding:.8em;margin:.6em 0;white-space:pre-wrap}"
          "input[type=range]{width:100%}label{font-weight:bold}"
          "table{border-collapse:collapse}td,th{border:1px solid #aaa;padding:.2em .6em;text-align:right}"
          "#progress td{white-space:nowrap}#progress td:first-child{text-align:left}"
          ".ctx-side{color:#666}#context hr{border:0;border-top:1px dotted #aaa}")


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


_LANGUAGES = {"cs": "Czech", "de": "German", "en": "English", "es": "Spanish", "fi": "Finnish", "fr": "French",
              "ja": "Japanese", "lv": "Latvian", "ro": "Romanian", "ru": "Russian", "tr": "Turkish", "zh": "Chinese"}


def _language(trg: str) -> str:
    """The target language's English name for the fluency questions (the code itself when unknown)."""
    return _LANGUAGES.get(trg, f"{trg} (the target language)" if trg else "in the target language")


def question(setting: str, trg: str = "") -> str:
    """The question of the item screen in ``setting`` (:data:`.store.SETTINGS`); ``trg``: the
    target language code (named in the fluency question).

    ``ref``: adequacy against the reference (Graham et al. 2017, "Can machine translation systems
    be evaluated by the crowd alone?", Natural Language Engineering 23(1), §3.2: "The black text
    adequately expresses the meaning of the gray text"); ``src``: the same against the source
    (WMT's source-based, bilingual DA from 2018/2019); ``fluency``: the text alone (ibid. §3.3:
    "The text is fluent English"), asked as agreement with that statement."""
    if setting == "src":
        return "How accurately does the text convey the meaning of the source?"
    if setting == "fluency":
        return f"How much do you agree that the text below is fluent {_language(trg)}?"
    return "How well does the text below express the meaning of the reference?"


def document_question(setting: str, trg: str = "") -> str:
    """The question of a document-level campaign's whole-document item in ``setting`` (Appraise's
    document-level DA, WMT20: the document rated after its segments)."""
    if setting == "src":
        return "How accurately does the whole document convey the meaning of the source document?"
    if setting == "fluency":
        return f"How much do you agree that the whole document below is fluent {_language(trg)}?"
    return "How accurately does the whole document convey the meaning of the reference document?"


def _document_context(item: Item, setting: str) -> str:
    """The earlier segments of the item's document (the text rated, with the reference or source
    the setting shows), oldest first; "" when there are none."""
    if not item.context:
        return ""
    rows = []
    for text, ref, src in item.context:
        beside = {"ref": ref, "src": src or ""}.get(setting)
        rows.append((f"<div class=\"ctx-side\">{escape(beside)}</div>" if beside is not None else "")
                    + f"<div class=\"ctx-text\">{escape(text)}</div>")
    return ("<p>Earlier in this document:</p><div class=\"box\" id=\"context\">"
            + "<hr>".join(rows) + "</div>")


def item_page(token: str, item: Item, total: int, csrf: str, nonce: str, setting: str = "ref",
              trg: str = "") -> str:
    """The rating screen of ``item`` (position k of ``total``) in ``setting``: the reference
    (``ref``), the source (``src``) or nothing (``fluency``) above the text to rate, the setting's
    :func:`question` and a 0-100 slider in a form POSTed to ``/a/{token}/rate`` with hidden
    position, CSRF token and nonce. In ``src`` a REF item's text (the reference) is rated as a
    translation of the source, as in WMT's bilingual DA.

    Document-level campaigns: a segment shows its document's earlier segments above it
    (``id="context"``); the whole-document item shows the reference (or source) document and the
    document to rate, one segment a line, with :func:`document_question`."""
    t = escape(token, quote=True)
    whole = " document" if item.is_document else ""
    shown = {"ref": ("Reference" + whole, "reference", item.ref),
             "src": ("Source" + whole, "source", item.src or "")}.get(setting)
    context = f"<p>{shown[0]}:</p><div class=\"box\" id=\"{shown[1]}\">{escape(shown[2])}</div>" if shown else ""
    context = _document_context(item, setting) + context
    ask = document_question(setting, trg) if item.is_document else question(setting, trg)
    scale = "0 (strongly disagree) to 100 (strongly agree)" if setting == "fluency" else "0 (not at all) to 100 (perfectly)"
    body = (f"<p>Item {item.position + 1} of {total}</p>"
            f"<progress max=\"{total}\" value=\"{item.position}\">{item.position} done</progress>"
            f"<h1 id=\"question\">{escape(ask)}</h1>{context}"
            f"<p>{'Document' if item.is_document else 'Text'} to rate:</p>"
            f"<div class=\"box\" id=\"candidate\">{escape(item.text)}</div>"
            f"<form method=\"post\" action=\"/a/{t}/rate\" id=\"rate\">"
            f"<input type=\"hidden\" name=\"position\" value=\"{item.position}\">"
            f"<input type=\"hidden\" name=\"csrf\" value=\"{escape(csrf, quote=True)}\">"
            f"<input type=\"hidden\" name=\"nonce\" value=\"{escape(nonce, quote=True)}\">"
            f"<label for=\"score\">Your rating, {scale}:</label> "
            "<output for=\"score\" id=\"readout\">50</output><br>"
            "<input type=\"range\" id=\"score\" name=\"score\" min=\"0\" max=\"100\" step=\"1\" value=\"50\" "
            "autofocus aria-describedby=\"keys\">"
            "<p id=\"keys\">Keys: arrows move the slider by 1, Page Up/Down by 10, Home/End to 0/100; "
            "Enter (or Tab then Enter on Next) submits.</p>"
            "<button type=\"submit\" id=\"next\">Next</button></form>"
            f"<script>{_SCRIPT}</script>")
    return _page(f"Item {item.position + 1} of {total}", body)


def done_page(code: str, total: int) -> str:
    """The end-of-HIT page with the completion code."""
    return _page("Thank you", f"<h1>Thank you</h1><p>You have rated all {total} items.</p>"
                              f"<p>Your completion code: <strong id=\"code\">{escape(code)}</strong></p>")


def error_page(status: int, message: str, token: str | None = None) -> str:
    """A short error page; with ``token``, a link back to the annotator's current item."""
    back = f'<p><a href="/a/{escape(token, quote=True)}">Back to your current item</a></p>' if token else ""
    return _page(f"Error {status}", f"<h1>Error {status}</h1><p id=\"message\">{escape(message)}</p>{back}")


def closed_page() -> str:
    """What an annotator sees once the campaign is closed."""
    return _page("Campaign closed", "<h1>Campaign closed</h1><p id=\"message\">This campaign is closed: "
                                    "no more ratings are accepted. Thank you for your work.</p>")


def admin_page(status: CampaignStatus, csrf: str) -> str:
    """Progress and live quality control of every annotator, and the "close campaign" form
    (POST ``/admin/close`` with the admin CSRF token ``csrf``) while the campaign is open."""
    total = status.items_per_hit
    trs = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row_cells(a, total)) + "</tr>"
                  for a in status.annotators)
    close = ("<form method=\"post\" action=\"/admin/close\" id=\"close\">"
             f"<input type=\"hidden\" name=\"csrf\" value=\"{escape(csrf, quote=True)}\">"
             "<input type=\"checkbox\" name=\"confirm\" value=\"yes\" id=\"confirm\" required> "
             "<label for=\"confirm\">I want to close this campaign: no more ratings will be accepted</label> "
             "<button type=\"submit\" id=\"close-button\">Close campaign</button></form>"
             if status.closed_ms is None else "")
    body = (f"<h1>Campaign progress</h1><p id=\"headline\">{escape(headline(status))}.</p>"
            "<table id=\"progress\"><tr>" + "".join(f"<th>{escape(c)}</th>" for c in COLUMNS) + "</tr>"
            f"{trs}</table><p>QC: one-sided paired t-test that degraded (BAD_REF) items score lower than their "
            f"originals, pass at p &lt;= {status.alpha:g}, shown from {status.min_pairs} rated pairs; "
            f"repeat mean |diff|: repeat vs original; median seconds per item on screen.</p>{close}")
    return _page("Campaign progress", body)
