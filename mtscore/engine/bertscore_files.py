"""bert_score's rescale-baseline files: read one (a path, or the file bert_score ships for a
language and model), write one. Format: CSV despite the .tsv name, header ``LAYER,P,R,F``, one row
per layer 0..L (the row's position is the layer, as bert_score reads it with ``iloc``)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["packaged_baseline", "read_baseline", "write_baseline"]


def read_baseline(path: str | Path, layer: int) -> np.ndarray:
    """float64 ``[3]`` (P, R, F) baseline for ``layer`` from a bert_score baseline file
    (CSV despite the .tsv name: header ``LAYER,P,R,F``, one row per layer 0..L; row index = layer).
    A malformed file raises ValueError naming ``--rescale-baseline``, the file, the line and the
    problem (wrong number of columns, not a number, not finite, >= 1 which would divide by <= 0)."""
    path = Path(path)
    opt = f"--rescale-baseline {path}"
    if path.is_dir():
        raise IsADirectoryError(f"{opt}: is a directory; expected a baseline file (CSV LAYER,P,R,F)")
    if not path.is_file():
        raise FileNotFoundError(f"{opt}: baseline file not found (make one with "
                                "`mtscore bertscore baseline --corpus FILE --out FILE`)")
    try:
        with open(path, encoding="utf-8") as f:
            rows = _baseline_rows(f, opt)
    except UnicodeDecodeError as e:
        raise ValueError(f"{opt}: not UTF-8 text ({e.reason} at byte {e.start}); expected bert_score's "
                         "CSV baseline format LAYER,P,R,F") from None
    if not 0 <= layer < len(rows):
        raise ValueError(f"{opt}: no baseline row for layer {layer} "
                         f"(file has layers 0..{len(rows) - 1}; --layer picks the row)")
    # bert_score: torch.from_numpy(...).float() -> the baseline is applied in float32
    return np.asarray(rows[layer], dtype=np.float32).astype(np.float64)


def _baseline_rows(f, opt: str) -> list[list[float]]:
    """The P, R, F rows of an open baseline file, checked (see :func:`read_baseline`)."""
    header = [h.strip() for h in f.readline().strip().split(",")]
    if [h.upper() for h in header[-3:]] != ["P", "R", "F"]:
        raise ValueError(f"{opt}:1: expected a header ending in P,R,F (bert_score's LAYER,P,R,F), "
                         f"got {','.join(header)!r}")
    rows = []
    for ln, line in enumerate(f, start=2):
        if not line.strip():
            continue
        parts = line.strip().split(",")
        if len(parts) != len(header):
            raise ValueError(f"{opt}:{ln}: {len(parts)} field(s) in {line.strip()!r}, the header has "
                             f"{len(header)} ({','.join(header)})")
        try:
            vals = [float(x) for x in parts[-3:]]
        except ValueError:
            raise ValueError(f"{opt}:{ln}: not a number in {line.strip()!r}") from None
        if not all(math.isfinite(v) and v < 1.0 for v in vals):
            raise ValueError(f"{opt}:{ln}: baseline values must be finite and below 1 "
                             f"(rescaling divides by 1 - b), got {line.strip()!r}")
        rows.append(vals)
    return rows


def write_baseline(path: str | Path, table: np.ndarray) -> None:
    """Write ``table`` float ``[L+1, 3]`` (P, R, F per layer) in bert_score's baseline format."""
    from .atomic import atomic_write

    rows = [f"{i},{p:.8g},{r:.8g},{fv:.8g}\n" for i, (p, r, fv) in
            enumerate(np.asarray(table, dtype=np.float64))]
    text = "LAYER,P,R,F\n" + "".join(rows)
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def packaged_baseline(lang: str, model: str) -> Path:
    """bert_score's shipped baseline file for ``lang`` and ``model`` (``rescale_baseline/{lang}/
    {model}.tsv`` inside the installed ``bert_score`` package, located without importing it, which
    would import torch). FileNotFoundError naming the file and the fix when it is not there."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("bert_score")
    except (ImportError, ValueError):
        spec = None
    where = f"rescale_baseline/{lang.lower()}/{model}.tsv"
    dirs = list(spec.submodule_search_locations or []) if spec is not None else []
    for d in dirs:
        f = Path(d) / where
        if f.is_file():
            return f
    if not dirs:
        raise FileNotFoundError(
            "rescale_with_baseline: bert_score's baseline files come with the bert_score package, which "
            "is not installed (pip install bert-score); or pass baseline_path=FILE (make one with "
            "`mtscore bertscore baseline --corpus FILE --out FILE`)")
    raise FileNotFoundError(
        f"rescale_with_baseline: bert_score has no baseline for model {model!r} in language {lang!r} "
        f"(looked for {Path(dirs[0]) / where}); pass baseline_path=FILE, made with "
        "`mtscore bertscore baseline --model MODEL --corpus FILE --out FILE`")
