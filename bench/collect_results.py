"""Assemble bench/RESULTS.md from the per-area result files in bench/results/.

    python bench/collect_results.py
"""
from pathlib import Path

HERE = Path(__file__).parent
ORDER = ["lexical", "ter", "significance", "bertscore", "analysis"]

HEADER = """# mtscore benchmark results

Every table below was produced by the command written in its section, on the machine described
there, running mtscore and its peers side by side in one run (each measurement in a fresh
process where tokenizer caches matter). Ratios are CPU-time ratios unless stated. The machine is
a 2-core VM whose host sometimes contends the second vCPU (the lexical workers task measures
that ceiling beside mtscore), so absolute seconds are noisy and ratios can drift by +-15-30 %
between runs. Earlier runs on earlier code are in the git history of bench/results/.

Regenerate: run the `bench/bench_*.py` script named in a section, then
`python bench/collect_results.py`.

"""


def main() -> None:
    parts = [HEADER]
    files = {p.stem: p for p in sorted((HERE / "results").glob("*.md"))}
    for name in ORDER + sorted(set(files) - set(ORDER)):
        if name in files:
            text = files[name].read_text(encoding="utf-8").strip()
            # demote headings one level so each area is a section of this file
            text = "\n".join("#" + line if line.startswith("#") else line for line in text.splitlines())
            parts.append(text + "\n\n")
    (HERE / "RESULTS.md").write_text("".join(parts), encoding="utf-8")


if __name__ == "__main__":
    main()
