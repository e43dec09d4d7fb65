"""Smoke test of an installed mtscore (a wheel from cibuildwheel or .ci/check_wheel.sh): every
compiled kernel loads, the bundled demo files and the .pyi stubs were installed, and one sentence
scores exactly what sacrebleu 2.6.0 gives (the values below are sacrebleu's, stored so the test
needs neither sacrebleu nor the source tree). Run it from outside the source tree, so that
``import mtscore`` is the installed package."""
import importlib
import pathlib
import sys

import mtscore

pkg = pathlib.Path(mtscore.__file__).parent
here = pathlib.Path.cwd().resolve()
assert here not in pkg.resolve().parents, f"mtscore imported from the source tree {pkg}, not the installed wheel"

kernels = sorted(p.name.split(".")[0] for p in (pkg / "kernels").glob("_*.pyx"))
assert kernels, f"no kernel sources (.pyx) installed in {pkg / 'kernels'}"
for name in kernels:
    importlib.import_module(f"mtscore.kernels.{name}")
    assert (pkg / "kernels" / f"{name}.pyi").is_file(), f"{name}.pyi missing from the wheel"
assert (pkg / "py.typed").is_file(), "py.typed missing from the wheel"
for f in ("ref.en", "sys1.en", "sys2.en"):
    assert (pkg / "data" / "demo" / f).is_file(), f"mtscore/data/demo/{f} missing from the wheel"

hyps = ["The cat sat on mat."]
refs = [["The cat sat on the mat."]]
expected = {  # sacrebleu 2.6.0 on the same sentence
    "BLEU": (mtscore.BLEU(), 51.15078115793242),
    "chrF2": (mtscore.CHRF(), 66.67806908310806),
    "chrF2++": (mtscore.CHRF(word_order=2), 69.66352557717607),
    "TER": (mtscore.TER(), 16.666666666666664),
}
for name, (metric, value) in expected.items():
    got = metric.corpus_score(hyps, refs).score
    assert got == value, f"{name}: {got!r} != sacrebleu's {value!r}"
print(f"mtscore {mtscore.__version__} on Python {sys.version.split()[0]}: {len(kernels)} kernels load, "
      f"BLEU/chrF/chrF++/TER equal sacrebleu's on one sentence")
