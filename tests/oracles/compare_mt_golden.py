"""Record compare-mt's own numbers on newstest2021 de-en for the P19 analyses' oracle test.

Writes tests/analysis/golden/compare_mt_newstest2021.json, which
tests/analysis/test_compare_mt_oracle.py compares with mtscore.analysis.compare:

* word precision / recall / F-measure by reference-frequency bucket (compare-mt's
  ``FreqWordBucketer(freq_data=ref).calc_statistics``, default edges);
* n-gram counts (``ngram_utils.compare_ngrams``, n = 1..4: the size, sum and SHA-256 of each of
  total / match / over / under) and the salient n-gram lists of the n-gram report
  (``stat_utils.extract_salient_features``, alpha 1, the 50 highest and 50 lowest) for
  compare types match, over and under.

compare-mt runs in its own environment: a virtualenv (default /tmp/cmt-venv) created here with
``pip install compare-mt==0.2.10 six`` (PyPI's ``compare-mt`` is neulab/compare-mt: its metadata
names https://github.com/neulab/compare-mt; it imports ``six`` without declaring it). Both
sides get the same token lists: the lines tokenised by mtscore's 13a tokenizer (sacrebleu's) and
split on spaces, passed to compare-mt as lists (its file reader would turn an empty line into
one empty token).

Usage (from the repository root, with the project's venv):
    .venv/bin/python tests/oracles/compare_mt_golden.py [--venv DIR] [--data DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from mtscore.analysis.compare.tokens import tokenize  # noqa: E402

COMPARE_MT = "compare-mt==0.2.10"
SIX = "six==1.17.0"
PAIR = "newstest2021.de-en"
REF = "A"
SYSTEMS = ("Facebook-AI", "Online-B")
TOKENIZER = "13a"
GOLDEN = REPO / "tests" / "analysis" / "golden" / "compare_mt_newstest2021.json"
TOP = 50

# runs inside compare-mt's venv: reads {"ref": [...], "outs": [[...], [...]]}, prints the JSON
INSIDE = r'''
import hashlib, json, operator, sys
from compare_mt import bucketers, ngram_utils, stat_utils
from compare_mt.version_info import __version__
data = json.load(open(sys.argv[1], encoding="utf-8"))
ref, outs = data["ref"], data["outs"]
b = bucketers.FreqWordBucketer(freq_data=ref)
stats, _, _, _ = b.calc_statistics(ref, outs)
word = {"labels": list(b.bucket_strs),
        "systems": [[{"matches": int(m), "ref": int(r), "out": int(o), "recall": rec,
                      "precision": prec, "fmeasure": f} for m, r, o, rec, prec, f in s] for s in stats]}
counts = [ngram_utils.compare_ngrams(ref, out, min_length=1, max_length=4) for out in outs]
def digest(d):
    items = sorted([list(k), v] for k, v in d.items() if v)
    return {"size": len(items), "sum": sum(v for _, v in items),
            "sha256": hashlib.sha256(json.dumps(items, ensure_ascii=False).encode()).hexdigest()}
kinds = ("total", "match", "over", "under")
ngram = {"counts": [{k: digest(c[i]) for i, k in enumerate(kinds)} for c in counts], "salient": {}}
for i, k in enumerate(kinds[1:], 1):
    a, c = counts[0][i], counts[1][i]
    sc = sorted(stat_utils.extract_salient_features(a, c, alpha=1.0).items(),
                key=operator.itemgetter(1), reverse=True)
    row = lambda kv: [list(kv[0]), kv[1], a[kv[0]], c[kv[0]]]
    ngram["salient"][k] = {"high": [row(kv) for kv in sc[:TOP]],
                           "low": [row(kv) for kv in reversed(sc[-TOP:])], "n": len(sc)}
print(json.dumps({"compare_mt": __version__, "word_accuracy": word, "ngrams": ngram}))
'''.replace("TOP", str(TOP))


def ensure_venv(venv: Path) -> Path:
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", COMPARE_MT, SIX], check=True)
    return py


def read_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--venv", type=Path, default=Path("/tmp/cmt-venv"))
    ap.add_argument("--data", type=Path,
                    default=Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")))
    args = ap.parse_args()
    txt = args.data / "wmt21-news-systems" / "txt"
    ref_file = txt / "references" / f"{PAIR}.ref.{REF}.en"
    sys_files = [txt / "system-outputs" / f"{PAIR}.hyp.{s}.en" for s in SYSTEMS]
    ref = tokenize(read_lines(ref_file), TOKENIZER)
    outs = [tokenize(read_lines(f), TOKENIZER) for f in sys_files]
    py = ensure_venv(args.venv)
    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "tokens.json"
        inp.write_text(json.dumps({"ref": ref, "outs": outs}, ensure_ascii=False), encoding="utf-8")
        env = {**os.environ, "PYTHONHASHSEED": "0"}  # compare-mt's tie order follows set order
        res = subprocess.run([str(py), "-c", INSIDE, str(inp)], check=True, capture_output=True,
                             text=True, env=env)
    out = json.loads(res.stdout.strip().split("\n")[-1])  # compare-mt prints progress lines first
    golden = {"about": "compare-mt's numbers, written by tests/oracles/compare_mt_golden.py",
              "pair": PAIR, "reference": REF, "systems": list(SYSTEMS), "tokenizer": TOKENIZER,
              "min_n": 1, "max_n": 4, "alpha": 1.0, "top": TOP, **out}
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN.relative_to(REPO)} (compare-mt {out['compare_mt']})")


if __name__ == "__main__":
    main()
