"""Golden data of the tests lives in ``tests/data/*.jsonl`` (one JSON object per line); this is
the one loader for it."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """The objects of a JSONL file, skipping blank lines; a malformed line names file:line."""
    path = Path(path)
    if not path.exists():
        return
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{no}: not JSON ({e})") from None
