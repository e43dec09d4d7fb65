"""The cached COMET head: everything a :class:`~.spec.CometSpec` holds besides the encoder weights,
so a warm :func:`~.scorer.load_comet` (its ONNX export cached too) never reads the checkpoint.

Reading a real checkpoint (wmt22-comet-da: 2.3 GB) only to throw its encoder weights away costs
seconds; the estimator and the layer mix are a small part of it. An entry is a folder
``comet-head-<class>-<key>`` of the encoder cache (:mod:`mtscore.engine.encoder.cache`, beside the
exports) holding ``head.npz`` (:func:`~.spec.head_tensors`: the estimator's weights and biases, the
layer-mix scalars and gamma, float32, under their checkpoint names) and ``manifest.json``, written
last: the format version, the key, a digest of the arrays and the spec's scalar fields as JSON.

The key is a hash of :data:`HEAD_FORMAT`, the checkpoint's sha256 and the parsed ``hparams.yaml``
and encoder ``config.json`` (everything the spec is derived from besides the tensors), so an edited
file gets a new entry. A hit rebuilds the spec with :func:`~.spec.comet_head_spec`, the same
derivation and shape checks as a full read, and then requires the manifest's fields to match it;
anything else (no entry, another format, a missing, misshaped or altered array, an unreadable
file) is a miss: the caller reads the checkpoint, as without this cache, and writes the entry again.

A read-only cache holding the entry is used as it is. Writing is best effort (the entry only
saves a parse): a cache that cannot take it (read-only, full disk) gets none, with no warning, no
error and no temporary copy; :func:`~.scorer.load_comet` writes none either when its export went to
this process's temporary folder (an unwritable cache, already warned about once).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import atomic_write
from ..encoder import cache
from .model import CometModelFiles
from .spec import CometSpec, comet_head_spec, head_tensors

__all__ = ["HEAD_FORMAT", "comet_head_folder", "read_comet_head", "tensors_digest", "write_comet_head"]

#: the entry's layout and the spec derivation it relies on; a new value makes every old entry a miss
HEAD_FORMAT = 1
_KIND = "comet-head"
_TENSORS = "head.npz"
# a damaged or foreign entry can raise nearly anything while it is read and checked (zipfile and
# numpy raise zlib.error, NotImplementedError, RuntimeError, MemoryError... on corrupt members): it is
# data, never code, and every failure to read it is a miss (the full read follows)
_UNUSABLE = (Exception,)


def _key(files: CometModelFiles, checkpoint_sha256: str) -> str:
    blob = json.dumps({"format": HEAD_FORMAT, "checkpoint_sha256": checkpoint_sha256, "hparams": files.hparams,
                       "config": files.config}, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def comet_head_folder(files: CometModelFiles, checkpoint_sha256: str, cache_dir: str | None = None) -> Path:
    """The cache folder of the head entry of ``files`` whose checkpoint has sha256 ``checkpoint_sha256``."""
    root = cache.cache_location(cache_dir).path
    return root / "encoders" / f"comet-head-{files.class_identifier}-{_key(files, checkpoint_sha256)}"


def tensors_digest(arrays: dict[str, np.ndarray]) -> str:
    """sha256 of the arrays' names, dtypes, shapes and bytes (not of the .npz file, whose zip
    metadata differ between two writers of the same arrays)."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{list(a.shape)};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _fields(spec: CometSpec) -> dict[str, Any]:
    """The spec's fields besides the arrays, as JSON values (gamma as its repr: exact)."""
    return json.loads(json.dumps({
        "class_identifier": spec.class_identifier, "dims": dataclasses.asdict(spec.dims), "layer": spec.layer,
        "mix": spec.mix, "layer_norm": spec.layer_norm, "gamma": None if spec.gamma is None else repr(spec.gamma),
        "pool": spec.pool, "features": list(spec.features),
        "activations": [layer.activation for layer in spec.estimator], "ignored": list(spec.ignored),
        "encoder_config": spec.encoder_config,
    }, sort_keys=True))


def read_comet_head(files: CometModelFiles, checkpoint_sha256: str, cache_dir: str | None = None) -> CometSpec | None:
    """The ``head_only`` spec of ``files`` from its cached head entry, equal to the full spec's
    head (bit for bit) without the encoder weights; None when there is no usable entry (see the
    module docstring). Reads and writes nothing else; never raises for a damaged entry."""
    folder = comet_head_folder(files, checkpoint_sha256, cache_dir)
    try:
        man = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if not isinstance(man, dict) or (man.get("kind"), man.get("format"), man.get("key"),
                                         man.get("checkpoint_sha256")) != (
                _KIND, HEAD_FORMAT, _key(files, checkpoint_sha256), checkpoint_sha256):
            return None
        with open(folder / _TENSORS, "rb") as fh:  # closed also when np.load fails on a damaged zip
            z = np.load(fh, allow_pickle=False)
            if not isinstance(z, np.lib.npyio.NpzFile):  # a .npy under that name
                return None
            arrays = {name: z[name] for name in z.files}
        if tensors_digest(arrays) != man["tensors_digest"]:
            return None
        fields = man["spec"]
        spec = comet_head_spec(files.hparams, files.config, arrays, fields["ignored"],
                               hparams_path=files.hparams_file, config_path=files.encoder_folder / "config.json",
                               head_path=folder / _TENSORS)
    except _UNUSABLE:
        return None
    return spec if _fields(spec) == fields else None


def write_comet_head(files: CometModelFiles, checkpoint_sha256: str, spec: CometSpec,
                     cache_dir: str | None = None) -> Path | None:
    """Write the head entry of ``spec`` (the full spec of ``files``, read from the checkpoint whose
    sha256 is ``checkpoint_sha256``) and return its folder: ``head.npz`` first, the manifest last,
    each atomically. The head only saves later loads the checkpoint's parse, so this is best
    effort: a cache that cannot take it (read-only, full) gets nothing, without a warning or an
    error (no temporary folder either: no later process would find it there), and None is
    returned."""
    if spec.head_only:
        raise ValueError(f"{files.checkpoint}: write_comet_head takes the spec read from the checkpoint, "
                         "not a head_only one")
    folder = comet_head_folder(files, checkpoint_sha256, cache_dir)
    arrays = head_tensors(spec)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / _TENSORS, lambda f: np.savez(f, **arrays))  # type: ignore[arg-type]
        cache.write_manifest(folder, {
            "kind": _KIND, "format": HEAD_FORMAT, "key": _key(files, checkpoint_sha256),
            "checkpoint_sha256": checkpoint_sha256, "checkpoint": os.fspath(files.checkpoint),
            "tensors": _TENSORS, "tensors_digest": tensors_digest(arrays), "spec": _fields(spec),
        })
    except OSError:
        return None
    return folder
