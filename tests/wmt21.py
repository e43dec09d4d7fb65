"""Load newstest2021 / florestest2021 references and system outputs from the shared data."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from conftest import data_dir

TXT = "wmt21-news-systems/txt"


def read_segments(path: Path) -> list[str]:
    """One segment per line, newline removed, nothing else touched (API-level input)."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def pairs() -> list[str]:
    d = data_dir() / TXT / "references"
    if not d.is_dir():
        return []
    return sorted({".".join(p.name.split(".")[:2]) for p in d.iterdir()})


@lru_cache(maxsize=4)
def load_pair(pair: str) -> tuple[list[list[str]], dict[str, list[str]], str]:
    """(reference streams [ref.A, ref.B, ...], {system: hyps}, target language)."""
    base = data_dir() / TXT
    ref_files = sorted((base / "references").glob(f"{pair}.ref.*"))
    refs = [read_segments(p) for p in ref_files]
    systems = {}
    for p in sorted((base / "system-outputs").glob(f"{pair}.hyp.*")):
        name = p.name[len(pair) + len(".hyp."):].rsplit(".", 1)[0]
        systems[name] = read_segments(p)
    trg = pair.split(".")[1].split("-")[1]
    return refs, systems, trg
