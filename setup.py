"""Build the Cython kernels in mtscore/kernels against numpy.

Every ``mtscore/kernels/_*.pyx`` becomes the extension ``mtscore.kernels._*``.
Set ``MTSCORE_BUILD_ONLY=_name1,_name2`` to build a subset (useful while developing
one kernel), and ``MTSCORE_DEBUG=1`` to turn bounds checks back on.
``MTSCORE_SANITIZE=1`` (implies MTSCORE_DEBUG=1) builds every kernel with AddressSanitizer and
UndefinedBehaviorSanitizer (gcc/clang) at -O1 with frame pointers and debug info; such modules
only load with the sanitizer runtime preloaded -- use ``bench/sanitize.sh``, which builds them in
a copy of the tree and runs the kernel tests under them.
"""
import os
from pathlib import Path

import numpy as np
from setuptools import Extension, setup

HERE = Path(__file__).parent
KERNEL_DIR = HERE / "mtscore" / "kernels"

only = {x.strip() for x in os.environ.get("MTSCORE_BUILD_ONLY", "").split(",") if x.strip()}
sanitize = os.environ.get("MTSCORE_SANITIZE") == "1"
debug = os.environ.get("MTSCORE_DEBUG") == "1" or sanitize

# -ffp-contract=off: no fused multiply-add, so C float expressions round exactly like CPython's.
compile_args = ["-O3", "-ffp-contract=off", "-fno-strict-aliasing"]
link_args = []
if sanitize:
    san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
           "-fno-sanitize-recover=undefined"]
    # the last -O wins over the -O2/-O3 that distutils takes from Python's own CFLAGS
    compile_args = san + ["-O1", "-g", "-ffp-contract=off", "-fno-strict-aliasing"]
    link_args = san
directives = {
    "language_level": "3",
    "boundscheck": debug,
    "wraparound": False,
    "initializedcheck": debug,
    "cdivision": True,
    "embedsignature": True,
}

# per kernel, after compile_args. _ter_shift: the shift search's inner loops (the banded DP row,
# the shift copies) are ~60 bytes; at gcc's default 16-byte loop alignment where they land
# depends on the code before them, and a row split over three 32-byte fetch windows instead of
# two cost 2% on TER's worst segments (the _ter split moved them). Only nops move.
extra_args = {"_ter_shift": ["-falign-loops=32"]}

extensions = []
for pyx in sorted(KERNEL_DIR.glob("_*.pyx")):
    name = pyx.stem
    if only and name not in only:
        continue
    extensions.append(
        Extension(
            f"mtscore.kernels.{name}",
            [str(pyx.relative_to(HERE))],
            include_dirs=[np.get_include(), str(KERNEL_DIR)],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            extra_compile_args=compile_args + extra_args.get(name, []),
            extra_link_args=link_args,
        )
    )

from Cython.Build import cythonize  # noqa: E402

# force: a .c file left by a build with other directives (debug vs not) must be regenerated
setup(ext_modules=cythonize(extensions, compiler_directives=directives, quiet=True, force=debug))
