"""Shared by the bench scripts: where the shared WMT data is and how its text files are read.

``python bench/bench_x.py`` puts bench/ first on ``sys.path``, so scripts import this module as
``from bench_data import data_dir, read_lines``."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """``$MTSCORE_DATA``, default ``../shared/data`` beside the repository."""
    return Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")).resolve()


def read_lines(p: Path):
    """The lines of a text file without their newlines (no empty last line for the final one)."""
    lines = p.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines
