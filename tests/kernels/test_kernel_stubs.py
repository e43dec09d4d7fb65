"""The .pyi stubs of the compiled kernels type-check (mypy) and match the built modules
(mypy.stubtest: names, parameters, defaults); tests/stubtest_allowlist.txt lists the only
exceptions, names Cython generates itself."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="the stub checks need mypy (pip install mypy)")

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "mtscore" / "kernels"
MODULES = sorted(f"mtscore.kernels.{p.stem}" for p in KERNELS.glob("_*.pyx"))


def _run(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True)


def test_every_compiled_module_has_a_stub_and_py_typed():
    assert MODULES
    for m in MODULES:
        assert (KERNELS / (m.rsplit(".", 1)[1] + ".pyi")).is_file(), m
    assert (ROOT / "mtscore" / "py.typed").is_file()


def test_stubs_typecheck_and_match_the_compiled_modules():
    r = _run("mypy", "--ignore-missing-imports", "--no-incremental",
             *[str(p) for p in sorted(KERNELS.glob("_*.pyi"))])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run("mypy.stubtest", "--allowlist", str(ROOT / "tests" / "stubtest_allowlist.txt"), *MODULES)
    assert r.returncode == 0, r.stdout + r.stderr
