"""The golden COMET files of tests/golden/comet (written by tests/oracles/comet_oracle.py with
unbabel-comet 2.2.7), shared by the COMET tests: where they are, golden.json, and the inputs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden" / "comet"
ENCODER = GOLDEN / "encoder"


def golden() -> dict:
    """golden.json; skips the test, saying why, when the golden files are absent."""
    f = GOLDEN / "golden.json"
    if not f.is_file() or not (ENCODER / "tokenizer.json").is_file():
        pytest.skip(f"{f}: absent (tests/oracles/comet_oracle.py writes it)")
    return json.loads(f.read_text(encoding="utf-8"))


def golden_inputs(n: int | None = None) -> dict[str, list[str]]:
    """The first ``n`` (all: None) triples of inputs.jsonl as columns ``src``, ``mt``, ``ref``."""
    rows = [json.loads(line) for line in (GOLDEN / "inputs.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return {k: [r[k] for r in rows[:n]] for k in ("src", "mt", "ref")}
