"""MQM-style standalone ratings (mt-metrics-eval's ``standalone_ratings`` JSONL format) into
the (systems x segments) human score matrix the statistics take.

One JSON object per line: ``source``, ``hypothesis``, ``errors`` (list of objects with
``start``, ``end``, ``category``, ``severity``, optional ``score`` and ``is_source_error``),
``segment_id`` (0-based offset in the test set), ``system_id``, and optional ``document_id``,
``rater_id``, ``src_lang``, ``tgt_lang``. A segment's MQM score is minus the summed error
weights of each rater, averaged over its raters (the WMT MQM convention of mt-metrics-eval's
``score_mqm`` converter); a weight is looked up by ``severity/category/subcategory``, then
shorter prefixes (case-insensitive), 0 when none matches.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...engine.strict_numbers import NumberSyntaxError, parse_number
from ..errors import AnalysisInputError

__all__ = ["MQM_WEIGHTS", "MQMScores", "mqm_error_weight", "read_mqm_ratings", "read_score_file"]

#: WMT MQM weights (Freitag et al. 2021), as mt-metrics-eval's converter defaults.
MQM_WEIGHTS: dict[str, float] = {"major": 5.0, "minor": 1.0, "neutral": 0.0,
                                 "major/non-translation!": 25.0, "minor/fluency/punctuation": 0.1}


@dataclass
class MQMScores:
    """``systems`` (S,), ``scores`` (S, N) float64 (NaN = segment not rated for that system),
    ``raters`` (S, N) int64 (number of raters averaged)."""
    systems: list[str]
    scores: np.ndarray
    raters: np.ndarray


def mqm_error_weight(severity: str | None, category: str | None, weights: Mapping[str, float]) -> float:
    """Weight of one error: the longest ``severity/category/...`` prefix found in ``weights``."""
    items = [str(severity or "").lower()] + [c.lower() for c in str(category or "").split("/") if c]
    while items:
        key = "/".join(items)
        if key in weights:
            return float(weights[key])
        items = items[:-1]
    return 0.0


def _field(path: Path, lineno: int, rec: dict, name: str, kind: type):
    v = rec.get(name)
    if not isinstance(v, kind) or isinstance(v, bool):
        raise AnalysisInputError(f"{path}:{lineno}: field {name!r} must be a {kind.__name__}, got {v!r}")
    return v


def read_mqm_ratings(path, weights: Mapping[str, float] | None = None,
                     systems: Sequence[str] | None = None, n_segments: int | None = None) -> MQMScores:
    """Read a standalone ratings JSONL file into MQM scores (higher is better, 0 = no error).
    ``systems`` fixes the row order (default: sorted system ids), ``n_segments`` the number of
    columns (default: largest segment id + 1). A repeated (rater, system, segment) rating or a
    malformed line raises :class:`AnalysisInputError` naming the file and line."""
    p = Path(path)
    w = {k.lower(): float(v) for k, v in (MQM_WEIGHTS if weights is None else weights).items()}
    per: dict[tuple[str, int], dict[str, float]] = {}
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AnalysisInputError(f"{p}: cannot read the ratings file ({exc.strerror})") from None
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AnalysisInputError(f"{p}:{lineno}: not a JSON object ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise AnalysisInputError(f"{p}:{lineno}: not a JSON object")
        sys_id = _field(p, lineno, rec, "system_id", str)
        seg = _field(p, lineno, rec, "segment_id", int)
        errors = _field(p, lineno, rec, "errors", list)
        if seg < 0:
            raise AnalysisInputError(f"{p}:{lineno}: segment_id {seg} is negative")
        rater = str(rec.get("rater_id"))
        total = 0.0
        for e in errors:
            if not isinstance(e, dict):
                raise AnalysisInputError(f"{p}:{lineno}: an error span must be a JSON object, got {e!r}")
            total += mqm_error_weight(e.get("severity"), e.get("category"), w)
        cell = per.setdefault((sys_id, seg), {})
        if rater in cell:
            raise AnalysisInputError(f"{p}:{lineno}: rater {rater} already rated system {sys_id}, segment {seg}")
        cell[rater] = total
    if not per:
        raise AnalysisInputError(f"{p}: no ratings")
    names = sorted({s for s, _ in per}) if systems is None else list(systems)
    unknown = sorted({s for s, _ in per} - set(names))
    if unknown:
        raise AnalysisInputError(f"{p}: ratings for systems not in `systems`: {', '.join(unknown)}")
    n = max(g for _, g in per) + 1 if n_segments is None else int(n_segments)
    row = {s: i for i, s in enumerate(names)}
    scores = np.full((len(names), n), np.nan)
    raters = np.zeros((len(names), n), np.int64)
    for (s, g), cell in per.items():
        if g >= n:
            raise AnalysisInputError(f"{p}: segment_id {g} >= n_segments={n}")
        scores[row[s], g] = -sum(cell.values()) / len(cell)
        raters[row[s], g] = len(cell)
    return MQMScores(names, scores, raters)


def read_score_file(path, systems: Sequence[str], n_segments: int) -> np.ndarray:
    """An mt-metrics-eval score file (``SYSTEM SCORE`` per line, each system's segments in
    order, ``None`` = missing) as (S, N) float64 for ``systems`` (NaN = missing)."""
    p = Path(path)
    per: dict[str, list[float]] = {}
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AnalysisInputError(f"{p}: cannot read the score file ({exc.strerror})") from None
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        cols = line.split()
        if len(cols) != 2:
            raise AnalysisInputError(f"{p}:{lineno}: expected 'SYSTEM SCORE', got {len(cols)} columns")
        try:
            v = np.nan if cols[1] == "None" else parse_number(cols[1])
        except NumberSyntaxError as exc:
            raise AnalysisInputError(f"{p}:{lineno}: column 2 (score): {exc}; write None for a missing score") \
                from None
        per.setdefault(cols[0], []).append(v)
    out = np.full((len(systems), n_segments), np.nan)
    for i, s in enumerate(systems):
        if s not in per:
            raise AnalysisInputError(f"{p}: no scores for system {s}")
        if len(per[s]) != n_segments:
            raise AnalysisInputError(f"{p}: system {s} has {len(per[s])} scores, the ratings {n_segments} segments")
        out[i] = per[s]
    return out
