"""``mtscore demo``: the main job on the bundled example (16 English segments, two systems):
every lexical metric, BERTScore with the local default model when its extra is installed, and a
paired significance test. Runs offline."""
from __future__ import annotations

import sys
from importlib import resources
from typing import List, Optional


def demo_files():
    base = resources.files("mtscore") / "data" / "demo"
    return str(base / "ref.en"), str(base / "sys1.en"), str(base / "sys2.en")


def main(argv: Optional[List[str]] = None) -> int:
    from .cli import main as cli_main

    ref, sys1, sys2 = demo_files()
    print(f"# mtscore demo: {ref}\n# system 1: {sys1}\n# system 2: {sys2}\n", flush=True)
    print("## corpus scores of system 1 (BLEU, chrF, TER; sacrebleu-identical)", flush=True)
    rc = cli_main([ref, "-i", sys1, "-m", "bleu", "chrf", "ter", "-f", "text", "-q"])
    print("\n## chrF++ with a 95% bootstrap confidence interval", flush=True)
    rc |= cli_main([ref, "-i", sys1, "-m", "chrf", "-cw", "2", "-f", "text", "-q", "--confidence"])
    print("\n## paired bootstrap: system 2 against system 1 (baseline)", flush=True)
    rc |= cli_main([ref, "-i", sys1, sys2, "-m", "bleu", "chrf", "-f", "text", "-q",
                    "--paired-bs", "--no-color"])
    print("\n## BERTScore (all-MiniLM-L6-v2 on ONNX Runtime, offline)", flush=True)
    try:
        from ..engine.bertscore import BERTScore  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e}")
    else:
        try:
            rc |= cli_main([ref, "-i", sys1, "-m", "bertscore", "-f", "text", "-q"])
        except Exception as e:  # missing optional model/extra: say how to fix, do not crash
            print(f"skipped: {e}")
    return rc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
