"""Exported-encoder cache: ``$MTSCORE_CACHE/encoders``, else ``$XDG_CACHE_HOME/mtscore/encoders``,
else ``~/.cache/mtscore/encoders`` (an explicit ``cache_dir=`` argument wins over all three).

Each export is a folder holding ``model.onnx`` and ``manifest.json`` with the source hash
(sha256 of the weights file), layer, opset, dtype, builder version and options; ``--int8``
adds ``model.int8.onnx`` beside it. A graph whose weights exceed :data:`EXTERNAL_DATA_BYTES`
(protobuf's 2 GiB limit) keeps them in ``model.onnx.data`` beside ``model.onnx`` (ONNX external
data, named relative to the graph; onnxruntime finds it because sessions open the graph by path);
the manifest then records the data file and its size, and an entry whose data file is missing or
of another size is not used. mtscore's own builders write that data file while they build the
graph (:class:`ExternalData`), so the weights are never held a second time as protobuf copies;
the files are those :func:`save_model` writes from a finished model. A folder is found again by
a cheap key (path, size, mtime of config/weights + options), so a warm start never re-hashes
90 MB of weights.

Read-only and unusable caches (the policy):

* Reading never needs write access: a read-only cache that already holds the needed artefacts
  (the export, and the int8 file for ``--int8``) is used as it is, also when it was filled at
  another path and copied (the manifest's ONNX path is resolved inside its own folder).
* When an artefact must be built and its cache folder cannot be created or written (the
  variable points at a regular file, at a path under a file, at a read-only mount, ...), it is
  built in a temporary directory private to this process (removed at exit) and one
  :class:`EncoderCacheWarning` says so, naming the variable in force, the path and the reason:
  the user still gets a score, the next run pays the export again.
* Only when that temporary directory cannot be made either, :class:`EncoderCacheError` (a
  ``RuntimeError``) is raised, naming the variable, the path, the reason and the remedy.

Writes are atomic and safe under concurrent processes: every file is written to a unique temp
name in its destination folder (``mkstemp``) and ``os.replace``-d into place (the external data
before the graph that names it), the manifest last;
two processes building the same export write identical bytes and the last rename wins, and a
reader sees either no file or a whole one.
"""
from __future__ import annotations

import atexit
import contextlib
import errno
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Callable, NamedTuple

import numpy as np

from ..atomic import OutputError, atomic_write, register_temporary, temporary_beside
from . import onnx_builder
from .model_dir import (
    EncoderError,
    EncoderWarning,
    file_sha256,
    load_weights,
    memo_file_sha256,
    quick_key,
    read_config,
    weights_file,
)


class EncoderCacheWarning(EncoderWarning):
    """The encoder cache could not be written; an artefact was built in a temporary directory."""


class EncoderCacheError(EncoderError):
    """An artefact must be built but neither the cache nor a temporary directory can hold it."""


class CacheLocation(NamedTuple):
    """The cache root and what chose it (``MTSCORE_CACHE``, ``XDG_CACHE_HOME``, ...), for messages."""

    path: Path
    source: str

    def describe(self) -> str:
        return f"{self.path} (from {self.source})"


def cache_location(cache_dir: str | None = None) -> CacheLocation:
    """Where the cache lives and which setting put it there."""
    if cache_dir:
        return CacheLocation(Path(cache_dir).expanduser(), "cache_dir=")
    env = os.environ.get("MTSCORE_CACHE")
    if env:
        return CacheLocation(Path(env).expanduser(), "MTSCORE_CACHE")
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return CacheLocation(Path(xdg).expanduser() / "mtscore", "XDG_CACHE_HOME")
    home = Path(os.path.expanduser("~")) / ".cache" / "mtscore"
    return CacheLocation(home, "the default ~/.cache; MTSCORE_CACHE and XDG_CACHE_HOME are unset")


def cache_root(cache_dir: str | None = None) -> Path:
    return cache_location(cache_dir).path


# ---- writing: atomic, with a per-process temporary fallback ---------------------------------

_PROCESS_TMP: Path | None = None


def _process_tmp() -> Path:
    """This process's private fallback cache (created once, removed at exit)."""
    global _PROCESS_TMP
    if _PROCESS_TMP is None or not _PROCESS_TMP.is_dir():
        _PROCESS_TMP = Path(tempfile.mkdtemp(prefix="mtscore-cache-"))
        atexit.register(shutil.rmtree, str(_PROCESS_TMP), True)
    return _PROCESS_TMP


def _probe_writable(folder: Path) -> None:
    """Create ``folder`` and check a file can be made in it (raises ``OSError`` otherwise)."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(dir=folder, prefix=".probe-")
    os.close(fd)
    os.unlink(probe)


def _reason(e: OSError) -> str:
    name = errno.errorcode.get(e.errno or 0, "")
    return f"{e.strerror or e}{f' [{name}]' if name else ''}" + (f": {e.filename}" if e.filename else "")


def build_folder(folder: Path, origin: str, what: str) -> Path:
    """``folder`` if an artefact can be written there; else a folder of this process's temporary
    cache, with one :class:`EncoderCacheWarning`. ``origin`` names where ``folder`` comes from
    (e.g. ``"/x (from MTSCORE_CACHE)"``) and ``what`` the artefact, for the messages."""
    try:
        _probe_writable(folder)
        return folder
    except OSError as e:
        reason = _reason(e)
    try:
        tmp = _process_tmp() / folder.name
        _probe_writable(tmp)
    except OSError as e2:
        raise EncoderCacheError(
            f"cannot build the {what}: the encoder cache {origin} is not writable ({reason}), and no "
            f"temporary directory could be made either ({_reason(e2)}); set MTSCORE_CACHE to a writable "
            "directory (or TMPDIR for the fallback)") from None
    warnings.warn(
        f"the encoder cache {origin} is not writable ({reason}); the {what} is built in a temporary "
        f"directory for this run only and rebuilt next time (set MTSCORE_CACHE to a writable directory "
        "to keep it)", EncoderCacheWarning, stacklevel=2)
    return tmp


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a unique temp file in the same folder + ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: f.write(data))


#: a model whose initializers hold more bytes than this is saved with external data (protobuf
#: cannot serialise 2 GiB; every XLM-R large graph, COMET's, is ~2.24 GB in float32)
EXTERNAL_DATA_BYTES = 1_500_000_000
#: initializers of at least this many bytes go to the data file (the small ones stay inline)
_EXTERNAL_MIN_TENSOR = 1024
_EXTERNAL_ALIGN = 4096  # offsets page-aligned, so onnxruntime can map the file


def external_data_name(onnx_path: Path) -> str:
    """The data file beside an ONNX graph saved with external data: ``model.onnx`` ->
    ``model.onnx.data`` (in the same folder; the graph names it relative to itself)."""
    return Path(onnx_path).name + ".data"


#: a temporary data file not written to for this long is a dead build's (:meth:`ExternalData._sweep_stale`)
_STALE_TMP_S = 24 * 3600


class ExternalData:
    """The external-data file of the graph ``onnx_path``, filled while the graph is built: the
    :class:`~.onnx_builder.InitializerSink` of :class:`~.onnx_builder.GraphBuilder` (threshold
    :data:`EXTERNAL_DATA_BYTES`, tensors of at least 1 kB), so the weights go to disk as the builder
    makes them instead of being held as a second, protobuf copy until :func:`save_model`. The file
    is the one :func:`save_model` writes from a finished model: the same tensors in the same order,
    each at a 4096-aligned offset (zero padding between), named by :func:`external_data_name`.

    A context manager: the bytes go to a temporary file beside the graph (made on the first
    write: a small graph never makes one), which :func:`save_model` renames into place before it
    writes the graph; leaving the ``with`` block without that (an error) removes it. An
    ``OSError`` becomes :class:`~mtscore.engine.atomic.OutputError` naming the data file."""

    def __init__(self, onnx_path: Path):
        self.path = Path(onnx_path).with_name(external_data_name(Path(onnx_path)))
        self.location = self.path.name
        self.threshold = EXTERNAL_DATA_BYTES
        self.min_bytes = _EXTERNAL_MIN_TENSOR
        self.size = 0  # bytes written so far (the data file's size)
        self._file: IO[bytes] | None = None
        self._tmp: str | None = None
        self._guard: contextlib.ExitStack | None = None

    @property
    def used(self) -> bool:
        """Whether any tensor was written (the graph then refers to this file)."""
        return self._tmp is not None

    def write(self, data: np.ndarray) -> tuple[str, int]:
        """Append ``data``'s bytes (C order, as they are) at the next 4096-aligned offset;
        returns ``(location, offset)`` for the tensor's external-data entry."""
        try:
            if self._file is None:
                self._open()
            assert self._file is not None
            pad = -self.size % _EXTERNAL_ALIGN
            self._file.write(b"\0" * pad)
            offset = self.size + pad
            self._file.write(np.ascontiguousarray(data).reshape(-1).view(np.uint8).data)
        except OSError as e:
            raise self._error(e) from None
        self.size = offset + data.nbytes
        return self.location, offset

    def _open(self) -> None:
        self._sweep_stale()
        fd, self._tmp = temporary_beside(str(self.path))
        self._file = os.fdopen(fd, "wb")  # at once: discard() closes it whatever fails next
        self._guard = contextlib.ExitStack()
        self._guard.enter_context(register_temporary(self._tmp))

    def _sweep_stale(self) -> None:
        """Remove this data file's temporary files older than :data:`_STALE_TMP_S`: a build killed
        outright (SIGKILL, the out-of-memory killer; other signals clean up) leaves one, up to the
        size of the weights, and no later export would ever remove it. A younger one may belong to
        another process exporting the same model right now, so it is left alone."""
        now = time.time()
        for p in self.path.parent.glob(f".{self.location}.*.tmp"):
            with contextlib.suppress(OSError):
                if now - p.stat().st_mtime > _STALE_TMP_S:
                    p.unlink()

    def _error(self, e: OSError) -> OutputError:
        return OutputError(e.errno, e.strerror or str(e), str(self.path), str(self.path))

    def commit(self) -> None:
        """Close the file and rename it into place (nothing to do when nothing was written)."""
        if self._tmp is None:
            return
        try:
            if self._file is not None:
                self._file.close()
                self._file = None
            os.replace(self._tmp, self.path)
        except OSError as e:
            raise self._error(e) from None
        self._tmp = None
        self._close_guard()

    def discard(self) -> None:
        """Close and remove the temporary file, if any (the graph was not saved)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)
            self._tmp = None
        self._close_guard()

    def _close_guard(self) -> None:
        if self._guard is not None:
            self._guard.close()
            self._guard = None

    def __enter__(self) -> ExternalData:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def save_model(model, path: Path, external: ExternalData | None = None) -> dict | None:
    """Write ``model`` to ``path`` atomically. Up to :data:`EXTERNAL_DATA_BYTES` of initializers: one
    protobuf file, returns None. Above: the initializers of at least 1 kB go to
    :func:`external_data_name` beside it (each at a 4096-aligned offset, referenced by the relative
    name, so the folder can move), written to a temporary name and renamed first, then the graph;
    returns ``{"external_data": name, "external_data_bytes": size}`` for the manifest, which the
    caller writes last. ``model``'s initializers are emptied in that case (no 2 GB copy is made).
    ``external``: the :class:`ExternalData` the model was built with; when the builder wrote to it,
    the data file is already complete: it is renamed into place, then the graph written."""
    if external is not None and external.used:
        path.parent.mkdir(parents=True, exist_ok=True)
        external.commit()
        _atomic_write_bytes(path, model.SerializeToString())
        return {"external_data": external.location, "external_data_bytes": external.size}
    inits = list(model.graph.initializer)
    if sum(t.ByteSize() for t in inits) <= EXTERNAL_DATA_BYTES:
        _atomic_write_bytes(path, model.SerializeToString())
        return None
    from onnx import TensorProto
    from onnx.external_data_helper import set_external_data

    path.parent.mkdir(parents=True, exist_ok=True)
    with ExternalData(path) as data:
        data.write(np.empty(0, np.uint8))  # the data file exists even if no tensor is large enough
        for t in inits:
            if t.data_location == TensorProto.EXTERNAL or not t.HasField("raw_data"):
                continue  # already external, or typed fields (not written by mtscore's builders)
            raw = t.raw_data
            if len(raw) < _EXTERNAL_MIN_TENSOR:
                continue
            location, offset = data.write(np.frombuffer(raw, dtype=np.uint8))
            set_external_data(t, location=location, offset=offset, length=len(raw))
            t.data_location = TensorProto.EXTERNAL
            t.ClearField("raw_data")
        data.commit()
        _atomic_write_bytes(path, model.SerializeToString())
    return {"external_data": data.location, "external_data_bytes": data.size}


# ---- reading ----------------------------------------------------------------------------------

def write_manifest(folder: Path, man: dict) -> None:
    """Write ``folder/manifest.json`` atomically: the last file of an export (see :func:`save_model`)."""
    _atomic_write_bytes(folder / "manifest.json", json.dumps(man, indent=1).encode())


def read_manifest(folder: Path) -> dict | None:
    """The folder's manifest with ``onnx`` pointing at its existing ONNX file, or None (missing,
    unreadable or stale). The file is taken from the manifest's own folder, not from the absolute
    path recorded at export time, so a cache copied or mounted elsewhere is self-contained."""
    try:
        man = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        onnx = folder / Path(man["onnx"]).name
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not onnx.is_file():
        return None
    data = man.get("external_data")
    if data is not None:  # the graph's data file must be there, whole (its size as written)
        try:
            if (folder / Path(data).name).stat().st_size != man["external_data_bytes"]:
                return None
        except (OSError, KeyError, TypeError):
            return None
    man["onnx"] = str(onnx)
    return man


def export_encoder(model_dir: Path, layer: int, dtype: str = "float32", fused: bool = False,
                   cache_dir: str | None = None, force: bool = False, revision: str | None = None,
                   check_source: Callable[[Path, str], None] | None = None) -> dict:
    """Export (or find the cached export of) ``hidden_states[layer]`` of a HF model directory.
    ``revision``: the Hugging Face commit the directory is a snapshot of (part of the cache key and
    the manifest, so each Hub revision has its own export). ``check_source(weights file, sha256)``
    may raise before anything is built or returned (the default model's pinned hash): a cached
    export gives the hash its manifest recorded for the weights at the same (path, size, mtime),
    a new export hashes the weights once (remembered for the process).

    Returns the manifest dict; ``manifest["onnx"]`` is the path of the ONNX file. A read-only
    cache holding the export is fine; an unwritable one makes the export go to a temporary
    directory with an :class:`EncoderCacheWarning` (see the module docstring).
    """
    model_dir = Path(model_dir)
    config = read_config(model_dir)
    wfile = weights_file(model_dir)
    opts = f"L{layer}|{dtype}|fused={int(fused)}|v{onnx_builder.BUILDER_VERSION}|opset{onnx_builder.OPSET}"
    if revision:
        opts += f"|rev={revision}"
    key = quick_key(model_dir / "config.json", wfile) + "-" + quick_key_str(opts)
    name = f"{config.get('model_type', 'model')}-L{layer}-{dtype}{'-fused' if fused else ''}-{key}"
    loc = cache_location(cache_dir)
    folder = loc.path / "encoders" / name
    man = None if force else read_manifest(folder)
    if man is not None:
        if check_source is not None:
            recorded = man.get("source_sha256")
            check_source(wfile, recorded if isinstance(recorded, str) else memo_file_sha256(wfile))
        return man
    src_hash = memo_file_sha256(wfile)
    if check_source is not None:
        check_source(wfile, src_hash)
    folder = build_folder(folder, loc.describe(), f"ONNX export of {model_dir}")
    onnx_path = folder / "model.onnx"
    with ExternalData(onnx_path) as sink:
        model, exporter = _build_model(model_dir, config, wfile, layer, dtype, sink)
        external = save_model(model, onnx_path, sink)
        del model
    if fused:
        onnx_path, external = _fuse(onnx_path, config)
    hidden, _, n_layers = _dims(config)
    man = {
        "onnx": str(onnx_path), "source": str(model_dir), "source_file": wfile.name,
        "source_sha256": src_hash, "revision": revision, "model_type": config.get("model_type", ""), "layer": layer,
        "num_layers": n_layers, "hidden_size": hidden, "opset": onnx_builder.OPSET, "dtype": dtype,
        "fused": fused, "exporter": exporter, "builder_version": onnx_builder.BUILDER_VERSION,
        **(external or {}),
    }
    write_manifest(folder, man)
    return man


def _build_model(model_dir: Path, config: dict, wfile: Path, layer: int, dtype: str, sink: ExternalData):
    """(onnx ModelProto, exporter name): torch-free for supported architectures (large weights
    streamed to ``sink``, each dropped from the loaded weights as the graph takes it), else torch.onnx."""
    mt = config.get("model_type", "")
    if mt in onnx_builder.SUPPORTED:
        weights = load_weights(wfile)
        np_dtype = np.float16 if dtype == "float16" else np.float32
        return onnx_builder.build_encoder_graph(config, weights, layer, dtype=np_dtype, sink=sink,
                                                consume=True), "mtscore-onnx-builder"
    try:
        import torch  # noqa: F401
    except ImportError:
        raise EncoderError(
            f"{model_dir / 'config.json'}: model_type {mt!r} is not supported by mtscore's torch-free "
            f"exporter (supported: {', '.join(sorted(onnx_builder.SUPPORTED))}); install torch and "
            "transformers (pip install torch transformers) to export it with torch.onnx, or pass "
            "a ready .onnx file as --model") from None
    from .torch_export import torch_export

    return torch_export(model_dir, layer), "torch.onnx"


def quick_key_str(s: str) -> str:
    import hashlib

    return hashlib.sha1(s.encode()).hexdigest()[:8]


def _dims(config: dict):
    try:
        return onnx_builder.model_dims(config)
    except KeyError:
        return None, None, None


def _fuse(onnx_path: Path, config: dict) -> tuple[Path, dict | None]:
    """Rewrite with onnxruntime's fused transformer ops (Attention, SkipLayerNorm, BiasGelu)."""
    from onnxruntime.transformers.optimizer import optimize_model

    hidden, heads, _ = _dims(config)
    opt = optimize_model(str(onnx_path), model_type="bert", num_heads=heads, hidden_size=hidden,
                         opt_level=0)
    out = onnx_path.with_name("model.fused.onnx")
    return out, save_model(opt.model, out)


def quantized_path(onnx_path: Path, cache_dir: str | None = None) -> Path:
    """int8 dynamic quantisation (approximate: F moves by ~0.01 on MiniLM), kept next to the fp32
    file (``model.int8.onnx`` in the export's cache folder). An existing one is used without any
    write; if it must be made and that folder is not writable, it is made in this process's
    temporary cache with an :class:`EncoderCacheWarning`."""
    onnx_path = Path(onnx_path)
    out = onnx_path.with_name(onnx_path.stem + ".int8.onnx")
    if out.is_file():
        return out
    loc = cache_location(cache_dir)
    try:
        in_cache = onnx_path.resolve().is_relative_to(loc.path.resolve())
    except OSError:
        in_cache = False
    origin = loc.describe() if in_cache else f"{out.parent} (the folder of the .onnx file)"
    out = build_folder(out.parent, origin, f"int8 model for {onnx_path}") / out.name
    if out.is_file():
        return out
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=out.name + ".", suffix=".tmp.onnx")
    os.close(fd)
    try:
        with _quiet_ort_quantizer():
            quantize_dynamic(str(onnx_path), tmp, weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


@contextlib.contextmanager
def _quiet_ort_quantizer() -> Iterator[None]:
    """Drop onnxruntime.quantization's advice lines ("consider to run pre-processing ..."), which
    it logs on the root logger; a NullHandler keeps that call from configuring root logging."""
    root = logging.getLogger()

    def keep(record: logging.LogRecord) -> bool:
        return "/onnxruntime/quantization/" not in record.pathname.replace("\\", "/")

    null = logging.NullHandler()
    added = not root.handlers
    if added:
        root.addHandler(null)
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)
        if added:
            root.removeHandler(null)


def onnx_file_hash(path: Path, cache_dir: str | None = None) -> str:
    """sha256 of a user-supplied .onnx file, memoised in the cache by (path, size, mtime); the memo
    is best effort (an unreadable or unwritable cache only costs the re-hash)."""
    idx = cache_root(cache_dir) / "onnx-hashes" / (quick_key(Path(path)) + ".txt")
    try:
        if idx.is_file():
            return idx.read_text().strip()
    except OSError:
        pass
    h = file_sha256(Path(path))
    with contextlib.suppress(OSError):
        _atomic_write_bytes(idx, h.encode())
    return h
