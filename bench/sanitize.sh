#!/usr/bin/env bash
# Run the Cython kernels under AddressSanitizer + UndefinedBehaviorSanitizer.
#
# Builds every kernel with MTSCORE_SANITIZE=1 (setup.py: -fsanitize=address,undefined -O1 -g,
# Cython boundscheck/initializedcheck on) in a throw-away copy of the tree -- the in-place .so
# files of this checkout are never touched -- then runs the kernel-vs-twin / kernel-vs-sacrebleu
# tests and the saved fuzz corpus against that build with gcc's libasan preloaded. Fails if a test
# fails or if any sanitizer report is written.
#
#   bench/sanitize.sh                 # default test selection (see TESTS below)
#   bench/sanitize.sh tests/engine/test_ter.py -k kernel   # any pytest arguments instead
#   PYTHON=/path/to/python KEEP=1 bench/sanitize.sh  # KEEP=1 keeps the build copy and the logs
#
# PYTHONMALLOC=malloc routes CPython's small objects through malloc so ASan sees them too;
# detect_leaks=0 because CPython does not free everything at exit.
#
# Needs gcc (for libasan/libubsan), the test dependencies (pytest, hypothesis, sacrebleu==2.6.0).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python}
case "$PY" in */*) PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" ;; esac  # the script cds away
CC=${CC:-gcc}
export CC
start=$(date +%s)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mtscore-sanitize.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "build copy and sanitizer logs kept in $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi

# 1. a copy of the sources: tracked and untracked-but-not-ignored files (no .so, no .c, no .venv)
(cd "$REPO" && git ls-files -z -co --exclude-standard) | while IFS= read -r -d '' f; do
  [ -e "$REPO/$f" ] || continue  # deleted in the work tree
  mkdir -p "$WORK/src/$(dirname "$f")"
  cp -p "$REPO/$f" "$WORK/src/$f"
done
# Cython's "# cython: boundscheck=False" header comments win over setup.py's compiler_directives,
# so MTSCORE_DEBUG alone leaves those files unchecked: turn the checks on in the copy's headers,
# decorators and with-blocks too (wraparound stays off: with boundscheck, a negative index raises).
find "$WORK/src/mtscore/kernels" \( -name '*.pyx' -o -name '*.pxd' -o -name '*.pxi' \) -exec sed -i -E \
  -e '/^#[[:space:]]*cython:/s/(boundscheck|initializedcheck)[[:space:]]*=[[:space:]]*False/\1=True/g' \
  -e 's/(boundscheck|initializedcheck)\(False\)/\1(True)/g' {} +
# the shared WMT data is found relative to the repository; point the copy at the real one
export MTSCORE_DATA="${MTSCORE_DATA:-$(cd "$REPO/.." && pwd)/shared/data}"

# 2. the sanitized build. setup.py needs Cython, which a pip-installed environment does not keep
#    (pip builds in an isolated environment from pyproject's build requirements): borrow it then.
BUILD_PATH=""
if ! "$PY" -c "import Cython" 2>/dev/null; then
  echo "+ $PY -m pip install --target $WORK/build-deps Cython>=3.0 (for the build only)"
  "$PY" -m pip install -q --disable-pip-version-check --target "$WORK/build-deps" "Cython>=3.0" \
    >"$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log"; exit 1; }
  BUILD_PATH="$WORK/build-deps"
fi
echo "+ MTSCORE_SANITIZE=1 $PY setup.py build_ext --inplace (in $WORK/src)"
(cd "$WORK/src" && MTSCORE_SANITIZE=1 PYTHONPATH="$BUILD_PATH" "$PY" setup.py -q build_ext --inplace -j "$(nproc)" \
  >"$WORK/build.log" 2>&1) || { tail -50 "$WORK/build.log"; exit 1; }
for so in "$WORK"/src/mtscore/kernels/_*.so; do
  if [ "$(nm -D "$so" | grep -c __asan_)" = 0 ]; then
    echo "error: $so was not built with AddressSanitizer" >&2
    exit 1
  fi
done
build_s=$(( $(date +%s) - start ))

# 3. the tests (an IndexError from a bounds check inside a noexcept nogil function can only be
#    printed as "unraisable": -W error makes that a failure), with the sanitizer runtime preloaded and every report written to a log file
LIBASAN=$("$CC" -print-file-name=libasan.so)
[ -e "$LIBASAN" ] || { echo "error: $CC has no libasan.so ($LIBASAN)" >&2; exit 1; }
mkdir -p "$WORK/logs"
TESTS=(
  tests/kernels/test_kernel_twins.py          # every kernel function vs its plain-Python twin:
  tests/kernels/test_kernel_twins_ngram.py    # _text/_lists here, then _ngram/_pairwise/_resample/
  tests/kernels/test_kernel_twins_ter.py      # _greedy, _detok/_ter_*/_sentence and _edit_*
  tests/kernels/test_kernel_twins_edit.py     # (one file per kernel family)
  tests/kernels/test_tokenizers.py            # _text kernels vs sacrebleu's tokenizers
  tests/engine/test_ter.py                   # _ter_normalize / _ter_shift kernels vs sacrebleu
  tests/engine/test_lexical_metrics.py       # _ngram kernels vs sacrebleu
  tests/engine/test_significance.py          # _resample kernels vs numpy / sacrebleu
  # _sentence / _ter_fused single-pair kernels vs sacrebleu (the WMT21 sweep is left to the plain run)
  tests/engine/test_sentence_score_kernel.py::test_adversarial_unicode_sentence_scores_equal_sacrebleu
  tests/engine/test_sentence_score_kernel.py::test_one_object_many_calls_keeps_no_state
  tests/engine/test_sentence_score_kernel.py::test_threads_calling_at_once_get_their_own_scratch
  tests/engine/test_fuzz_differential.py     # the saved fuzz corpus + 1/4 of the ci fuzz budget (~1,000
                                      # draws; MTSCORE_FUZZ_SCALE=1 for all of it, +3 min)
  "tests/engine/test_bertscore.py::test_greedy_kernel_negative_max_and_quirk"
  # _meteor (alignment, chunks) vs its twin, bad input, threads
  tests/engine/test_meteor.py::test_kernel_equals_twin
  tests/engine/test_meteor.py::test_kernel_rejects_bad_input
  tests/engine/test_meteor.py::test_hand_computed_alignment
  tests/engine/test_meteor.py::test_registry_batch_api_and_workers
)
[ $# -gt 0 ] && TESTS=("$@")
cd "$WORK/src"
echo "+ LD_PRELOAD=$LIBASAN $PY -m pytest ${TESTS[*]}"
set +e
env LD_PRELOAD="$LIBASAN" \
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$WORK/logs/asan" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$WORK/logs/ubsan" \
  PYTHONMALLOC=malloc PYTHONPATH="$WORK/src" HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}" \
  MTSCORE_FUZZ_SCALE="${MTSCORE_FUZZ_SCALE:-0.25}" \
  "$PY" -m pytest -p no:cacheprovider -q --durations=12 -W error::pytest.PytestUnraisableExceptionWarning \
    -n "${SANITIZE_WORKERS:-2}" --dist worksteal "${TESTS[@]}"
rc=$?
set -e
# the copy really was the one tested
env LD_PRELOAD="$LIBASAN" ASAN_OPTIONS=detect_leaks=0 PYTHONPATH="$WORK/src" "$PY" -c \
  "import mtscore.kernels._ngram as m, sys; sys.exit(not m.__file__.startswith('$WORK/src/'))" \
  || { echo "error: the tests did not import the sanitized kernels" >&2; rc=1; }

reports=$(find "$WORK/logs" -type f | sort)
total_s=$(( $(date +%s) - start ))
if [ -n "$reports" ]; then
  echo "SANITIZER REPORTS:" >&2
  for r in $reports; do echo "== $r" >&2; cat "$r" >&2; done
  rc=1
fi
echo "sanitize: build ${build_s}s, total ${total_s}s, pytest rc=$rc, reports: $(echo -n "$reports" | grep -c . || true)"
exit $rc
