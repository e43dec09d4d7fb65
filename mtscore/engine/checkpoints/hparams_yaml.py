"""A reader of the flat YAML subset that COMET's ``hparams.yaml`` uses, without PyYAML.

PyYAML is not one of mtscore's dependencies, and a model folder is untrusted input, so the file is
read by this small parser of exactly the subset Lightning's ``save_hparams_to_yaml`` writes for
COMET models (wmt20-comet-da, wmt22-comet-da, wmt22-cometkiwi-da, ...)::

    # a comment
    class_identifier: regression_metric     # key: plain scalar
    encoder_learning_rate: 1.0e-06
    final_activation: null
    pretrained_model: 'xlm-roberta-large'   # single- or double-quoted scalars
    hidden_sizes:                           # key: then a block sequence of scalars
    - 3072
    - 1024
    input_segments: [mt, src]               # a flow sequence of scalars

Accepted: top-level ``key: value`` lines (the key a plain word: letters, digits, ``_ . -``, not
starting with a digit or ``-``); values that are plain, single-quoted or double-quoted scalars on one
line, flow sequences ``[a, b]`` of such scalars, ``[]``, ``{}``, or a block sequence of scalars on the
following lines (``- x``, at any one indentation); comments, blank lines, a leading ``---`` and a
final ``...``. Scalars resolve as PyYAML's ``safe_load`` resolves them (YAML 1.1): null (``~``,
``null``, empty), booleans (``true``/``false``/``yes``/``no``/``on``/``off`` in its three casings),
ints (decimal, ``0x``, ``0b``, leading-``0`` octal, ``_`` separators), floats (with a dot, as
``1.0e-06``; ``1e-06`` stays a string, as in PyYAML), ``.inf``/``.nan``; everything else a string.

Refused with a :class:`CheckpointError` naming the file and line (never guessed): nested mappings,
multi-line scalars, block scalars (``|``, ``>``), anchors, aliases, tags (``!!python/...``),
directives, complex keys, duplicate keys (PyYAML keeps the last one silently), sexagesimal numbers
and timestamps (PyYAML turns them into ints and dates).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .checkpoint_error import CheckpointError

__all__ = ["parse_hparams_yaml"]

# PyYAML's implicit resolvers (yaml/resolver.py, YAML 1.1)
_BOOL = {"yes": True, "Yes": True, "YES": True, "true": True, "True": True, "TRUE": True,
         "on": True, "On": True, "ON": True,
         "no": False, "No": False, "NO": False, "false": False, "False": False, "FALSE": False,
         "off": False, "Off": False, "OFF": False}
_NULL = {"", "~", "null", "Null", "NULL"}
_FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", re.X)
_INT = re.compile(r"""^(?:[-+]?0b[0-1_]+
                  |[-+]?0[0-7_]+
                  |[-+]?(?:0|[1-9][0-9_]*)
                  |[-+]?0x[0-9a-fA-F_]+
                  |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""", re.X)
_TIMESTAMP = re.compile(r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                        |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
                        (?:[Tt]|[ \t]+)[0-9][0-9]?
                        :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                        (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", re.X)
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
# characters that may not start a plain scalar (YAML indicators) in this subset
_BAD_START = set("&*!|>%@`{[?,]}#\"'")
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
            "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
            "L": "\u2028", "P": "\u2029"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class _Refused(Exception):
    """Raised inside the parser; turned into a CheckpointError naming the file and line."""


def _resolve_plain(text: str) -> Any:
    """The value PyYAML's safe_load gives a plain scalar (the subset above)."""
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    if text in ("<<", "="):
        raise _Refused(f"{text!r} (a YAML merge/value key) is not supported")
    if _INT.match(text):
        if ":" in text:
            raise _Refused(f"{text!r}: sexagesimal numbers are not supported")
        s = text.replace("_", "")
        sign = -1 if s[0] == "-" else 1
        if s[0] in "+-":
            s = s[1:]
        if s.startswith("0b"):
            return sign * int(s[2:], 2)
        if s.startswith("0x"):
            return sign * int(s[2:], 16)
        if s != "0" and s.startswith("0"):
            return sign * int(s, 8)
        return sign * int(s)
    if _FLOAT.match(text):
        if ":" in text:
            raise _Refused(f"{text!r}: sexagesimal numbers are not supported")
        s = text.replace("_", "").lower()
        if s.endswith(".inf"):
            return float("-inf") if s[0] == "-" else float("inf")
        if s == ".nan":
            return float("nan")
        return float(s)
    if _TIMESTAMP.match(text):
        raise _Refused(f"{text!r}: timestamps are not supported")
    return text


def _double_quoted(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == '"':
            raise _Refused('a double-quoted scalar with text after its closing "')
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            raise _Refused("a double-quoted scalar that ends with a backslash")
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in _HEX_ESCAPES:
            n = _HEX_ESCAPES[e]
            digits = body[i + 2:i + 2 + n]
            if len(digits) != n or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise _Refused(f"a bad \\{e} escape in a double-quoted scalar")
            out.append(chr(int(digits, 16)))
            i += 2 + n
        else:
            raise _Refused(f"an unknown escape \\{e} in a double-quoted scalar")
    return "".join(out)


def _scalar(text: str, in_flow: bool = False) -> Any:
    """One scalar (already stripped of surrounding blanks and of a trailing comment)."""
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise _Refused("an unterminated single-quoted scalar")
        body = text[1:-1]
        if "'" in body.replace("''", ""):
            raise _Refused("a single-quoted scalar with text after its closing '")
        return body.replace("''", "'")
    if text.startswith('"'):
        backslashes = len(text[:-1]) - len(text[:-1].rstrip("\\"))
        if len(text) < 2 or not text.endswith('"') or backslashes % 2:
            raise _Refused("an unterminated double-quoted scalar")
        return _double_quoted(text[1:-1])
    if text and (text[0] in _BAD_START or (text[0] in "-?:" and (len(text) == 1 or text[1] == " "))):
        raise _Refused(f"{text!r}: anchors, aliases, tags, block scalars, nested collections and "
                       "other YAML indicators are not supported")
    if ": " in text or text.endswith(":"):
        raise _Refused(f"{text!r}: nested mappings are not supported")
    if in_flow and any(c in text for c in "[]{},"):
        raise _Refused(f"{text!r}: nested flow collections are not supported")
    return _resolve_plain(text)


def _strip_comment(text: str) -> str:
    """``text`` without a trailing `` # comment`` (outside quotes), right-stripped."""
    quote = None
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        if quote:
            if c == "\\" and quote == '"':
                i += 1  # the escaped character cannot close the quote
            elif c == quote:
                quote = None
            continue
        i -= 1
        if c in "'\"" and (i == 0 or text[i - 1] in " [,"):
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
        i += 1
    return text.rstrip()


def _split_flow(body: str) -> list[str]:
    items: list[str] = []
    cur: list[str] = []
    quote: str | None = None
    for c in body:
        if quote:
            cur.append(c)
            if c == quote:
                quote = None
        elif c in "'\"" and not "".join(cur).strip():
            quote = c
            cur.append(c)
        elif c == ",":
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    last = "".join(cur).strip()
    if last:
        items.append(last)
    elif items:  # a trailing comma: [a, b,] is [a, b] in YAML
        pass
    if any(not it for it in items):
        raise _Refused("an empty item in a flow sequence")
    return items


def _value(text: str) -> Any:
    if text.startswith("["):
        if not text.endswith("]"):
            raise _Refused("a flow sequence must open and close on one line")
        body = text[1:-1].strip()
        return [_scalar(it, in_flow=True) for it in _split_flow(body)] if body else []
    if text.startswith("{"):
        if text.replace(" ", "") == "{}":
            return {}
        raise _Refused("flow mappings are not supported")
    return _scalar(text)


def parse_hparams_yaml(text: str, path: Path | str) -> dict[str, Any]:
    """The mapping of a flat ``hparams.yaml`` (see the module docstring for the subset);
    ``path`` names the file in errors."""
    lines = text.splitlines()
    out: dict[str, Any] = {}
    pending: str | None = None  # a key whose value may be a block sequence on the next lines
    seq_indent: int | None = None
    started = False
    for no, raw in enumerate(lines, 1):
        try:
            if "\t" in raw[:len(raw) - len(raw.lstrip())]:
                raise _Refused("tabs in indentation are not allowed in YAML")
            line = _strip_comment(raw)
            if not line.strip():
                continue
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            if not started and indent == 0 and line in ("---", "--- "):
                started = True
                continue
            started = True
            if indent == 0 and line == "...":
                break
            if stripped.startswith("- ") or stripped == "-":
                if pending is None:
                    raise _Refused("a sequence item outside a 'key:' block")
                if seq_indent is None:
                    seq_indent = indent
                elif indent != seq_indent:
                    raise _Refused("sequence items at different indentations")
                item = stripped[1:].strip()
                if item.startswith("- ") or item == "-":
                    raise _Refused("nested sequences are not supported")
                if not item:
                    raise _Refused("an empty or multi-line sequence item is not supported")
                if item.startswith(("[", "{")):
                    raise _Refused("nested collections are not supported")
                out[pending].append(_scalar(item))
                continue
            if indent != 0:
                raise _Refused("nested mappings and multi-line scalars are not supported")
            if pending is not None and not out[pending]:
                out[pending] = None  # 'key:' followed by nothing is null
            pending, seq_indent = None, None
            key, sep, rest = line.partition(":")
            if not sep or (rest and not rest.startswith(" ")):
                raise _Refused("expected 'key: value'")
            if not _KEY.match(key) or not isinstance(_resolve_plain(key), str):
                raise _Refused(f"the key {key!r} is not a plain word")
            if key in out:
                raise _Refused(f"the key {key!r} appears twice")
            rest = rest.strip()
            if rest:
                out[key] = _value(rest)
            else:
                out[key] = []
                pending = key
        except _Refused as e:
            raise CheckpointError(f"{path}: line {no}: {e} (mtscore reads the flat hparams.yaml "
                                  "subset COMET writes: key: value lines and lists of scalars)") from None
    if pending is not None and not out[pending]:
        out[pending] = None
    return out
