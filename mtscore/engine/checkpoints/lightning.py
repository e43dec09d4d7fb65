"""A restricted reader of PyTorch / PyTorch Lightning checkpoints (``.ckpt``, ``.pt``, ``.bin``)
into numpy arrays, without torch and without running the checkpoint's pickle.

The format (``torch.save`` since torch 1.6; Lightning saves with it): a zip whose entries share
one top folder (``archive/`` for a buffer, the file's stem for a path)::

    <top>/data.pkl      the pickled object (protocol 2): dicts, lists, tensors
    <top>/data/<key>    one record per tensor storage: its raw bytes
    <top>/byteorder     "little" or "big" (absent in old files: little, as torch assumes)
    <top>/version, <top>/.data/..., <top>/.format_version   (not needed here)

A tensor is pickled as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, backward_hooks[, metadata])`` (a ``Parameter`` wraps that in
``torch._utils._rebuild_parameter[_with_state]``), ``backward_hooks`` an empty
``collections.OrderedDict()``, and ``storage`` a *persistent id*
``('storage', torch.<Dtype>Storage, key, location, numel)`` that this reader resolves to the
bytes of ``<top>/data/<key>``.

Security: unpickling calls whatever callables the pickle names, so a checkpoint from the internet
could run any code through an ordinary ``pickle.load`` / ``torch.load(weights_only=False)``. Here
:class:`_RestrictedUnpickler` overrides ``find_class`` (the one door through which the C unpickler
obtains any global, for the ``GLOBAL``, ``STACK_GLOBAL``, ``INST`` and extension opcodes) and
``persistent_load``:

* :data:`ALLOWED_GLOBALS` maps the few globals a tensor checkpoint needs to **this module's own**
  functions and classes (never to torch's, which is not imported): the tensor and parameter
  rebuild functions, ``collections.OrderedDict`` (the real class: building one runs no user code),
  the storage types (inert markers carrying a numpy dtype), and the builtins pickle protocol 2
  uses for plain values (``set``, ``frozenset``, ``bytearray``, and ``_codecs.encode``, checked to
  be the ``(str, 'latin1')`` form protocol 2 writes for ``bytes``).
* :data:`SKIPPED_GLOBALS` names the few classes Lightning puts in the *non-tensor* parts of a
  checkpoint (the ``hyper_parameters`` container of Lightning 1.x, the ``argparse.Namespace``
  of older versions, and the ``ModelCheckpoint`` / ``EarlyStopping`` classes that Lightning 1.0-1.4
  use as the *keys* of ``checkpoint["callbacks"]``: ``callback_states[type(callback)] = state``;
  1.5 and later key them by a string). Each maps to a stub class defined here whose constructor, ``__setstate__``,
  ``__setitem__``, ``append`` and ``extend`` accept anything and keep nothing: the real class is
  never imported and none of its code runs, so the stub can execute nothing; the value is simply
  absent from the result (mtscore takes the hyper-parameters from ``hparams.yaml``).
* Every other global raises :class:`CheckpointError` naming the file and the global, before the
  unpickler can call it; nothing has run by then except this module's rebuild functions.

Arrays are rebuilt with the stored size, stride and offset after checking that every element lies
inside the storage (``as_strided`` does not check), then copied into a C-contiguous array in native
byte order (the first tensor that is its whole storage, C-contiguous in native order, takes the
storage's buffer itself instead of a copy: each array still owns its memory alone); the storages
and arrays of one file together may take at most three times the file's size plus 64 MiB (a
zero-stride view could otherwise ask for terabytes from a few bytes). Storage dtypes: Float, Half, Double, Long, Int, Short, Char, Byte, Bool, and BFloat16
(numpy has no bfloat16: widened exactly to float32). Tensors of other kinds (quantized, sparse,
complex, the ``_rebuild_tensor_v3`` dtypes such as uint16) are refused as unknown globals.
"""
from __future__ import annotations

import codecs
import collections
import io
import pickle
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np

from .checkpoint_error import CheckpointError
from .hparams_yaml import parse_hparams_yaml

__all__ = ["ALLOWED_GLOBALS", "SKIPPED_GLOBALS", "read_checkpoint", "read_checkpoint_object", "read_hparams"]

_CHUNK = 1 << 26  # storages are read in 64 MiB pieces straight into their numpy buffer


def _no_setstate(self: Any, state: Any) -> None:
    # the BUILD opcode calls __setstate__ when an object has one, instead of writing attributes:
    # the objects find_class hands out are shared by every load, so a pickle must not change them
    raise pickle.UnpicklingError(f"a checkpoint may not set the state of {self!r}")


class _StorageType:
    """What ``torch.<Dtype>Storage`` unpickles to here: an inert marker with a numpy dtype."""

    __slots__ = ("dtype", "name")
    __setstate__ = _no_setstate

    def __init__(self, name: str, dtype: str):
        self.name = name
        self.dtype = np.dtype(dtype)

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # a pickle may not call it
        raise pickle.UnpicklingError(f"torch.{self.name} may only appear in a storage id")


class _Budget:
    """Bytes the storages and rebuilt arrays of one checkpoint may still take. A view with zero
    strides (an expanded tensor) can ask for far more elements than its storage holds; a crafted
    pickle could use that to allocate terabytes from a few bytes, so the storages and arrays of one
    file may not exceed three times the file's size on disk plus 64 MiB (a real checkpoint reads its
    storages once and rebuilds at most their bytes again, bfloat16 twice). The size on disk, not the
    zip's declared sizes, which the file itself states."""

    __slots__ = ("left",)
    __setstate__ = _no_setstate

    def __init__(self, left: int):
        self.left = left

    def take(self, nbytes: int) -> None:
        if nbytes > self.left:
            raise pickle.UnpicklingError(
                f"its tensors would take more memory than three times the file's size ({nbytes} more bytes asked, "
                f"{self.left} left): a view that repeats its storage")
        self.left -= nbytes


class _Storage:
    """One storage record read from the zip: a 1-d array of ``numel`` elements in the file's byte
    order (``bfloat16`` held as ``uint16``), and the memory budget of its checkpoint. ``given``:
    the array itself was handed out as a tensor (it covers the whole storage); any other tensor of
    this storage is a copy."""

    __slots__ = ("array", "bfloat16", "budget", "given")
    __setstate__ = _no_setstate

    def __init__(self, array: np.ndarray, bfloat16: bool, budget: _Budget):
        self.array = array
        self.bfloat16 = bfloat16
        self.budget = budget
        self.given = False


# name in the pickle (module, name) -> numpy dtype code; "bfloat16" is read as 2-byte unsigned
_STORAGE_DTYPES = {
    "FloatStorage": "f4", "HalfStorage": "f2", "DoubleStorage": "f8", "BFloat16Storage": "bfloat16",
    "LongStorage": "i8", "IntStorage": "i4", "ShortStorage": "i2", "CharStorage": "i1",
    "ByteStorage": "u1", "BoolStorage": "?", "UntypedStorage": "u1",
}


def _storage_type(name: str) -> _StorageType:
    code = _STORAGE_DTYPES[name]
    return _StorageType(name, "u2" if code == "bfloat16" else code)


def _check_ints(what: str, values: Any) -> tuple[int, ...]:
    if not isinstance(values, (tuple, list)) or not all(type(v) is int and v >= 0 for v in values):
        raise pickle.UnpicklingError(f"tensor {what} must be a tuple of non-negative ints, got {values!r}")
    return tuple(values)


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of a C-contiguous tensor of ``shape`` (torch's ``stride()``)."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def _rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any = False,
                       backward_hooks: Any = None, metadata: Any = None) -> np.ndarray:
    """``torch._utils._rebuild_tensor_v2`` rebuilt as a C-contiguous numpy array of its own: the
    storage's array itself, reshaped, for the first tensor that covers a whole native-order storage
    in C order (every tensor of a ``state_dict`` saved normally: no second copy of the weights),
    else a copy."""
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError("a tensor's storage must be a storage record of the checkpoint")
    if type(storage_offset) is not int or storage_offset < 0:
        raise pickle.UnpicklingError(f"tensor storage offset must be a non-negative int, got {storage_offset!r}")
    shape = _check_ints("size", size)
    strides = _check_ints("stride", stride)
    if len(shape) != len(strides):
        raise pickle.UnpicklingError(f"tensor size {shape} and stride {strides} differ in length")
    flat = storage.array
    if not isinstance(flat, np.ndarray) or flat.ndim != 1:  # pragma: no cover - _Storage is sealed
        raise pickle.UnpicklingError("a tensor's storage must be a flat array")
    native = flat.dtype.newbyteorder("=")
    storage.budget.take(int(np.prod(shape, dtype=object)) * native.itemsize * (2 if storage.bfloat16 else 1))
    if 0 in shape:
        out = np.zeros(shape, dtype=native)
    else:
        last = storage_offset + sum((n - 1) * s for n, s in zip(shape, strides))
        if last >= flat.shape[0]:
            raise pickle.UnpicklingError(
                f"tensor of size {shape}, stride {strides}, offset {storage_offset} reaches element {last} "
                f"of a storage of {flat.shape[0]}")
        whole = (storage_offset == 0 and last == flat.shape[0] - 1 and flat.dtype == native
                 and int(np.prod(shape, dtype=object)) == flat.shape[0])
        if whole and not storage.given and strides == _contiguous_strides(shape):
            storage.given = True  # handed out once: a second tensor of this storage gets a copy
            out = flat.reshape(shape)
        else:
            base = flat[storage_offset:]
            view = np.lib.stride_tricks.as_strided(
                base, shape=shape, strides=tuple(s * flat.itemsize for s in strides), writeable=False)
            out = np.array(view, dtype=native, order="C", copy=True)
    if storage.bfloat16:  # the high half of a float32: widening is exact
        out = (out.astype(np.uint32) << 16).view(np.float32)
    return out


def _rebuild_parameter(data: Any, requires_grad: Any = False, backward_hooks: Any = None,
                       state: Any = None) -> np.ndarray:
    """``torch._utils._rebuild_parameter[_with_state]``: the parameter's data (the state, a
    Parameter's extra attributes, is dropped)."""
    if not isinstance(data, np.ndarray):
        raise pickle.UnpicklingError("a parameter's data must be a tensor")
    return data


def _codecs_encode(text: Any, encoding: Any = "utf-8", errors: Any = "strict") -> bytes:
    """``_codecs.encode`` as protocol 2 uses it for ``bytes``: ``encode(str, 'latin1')`` only."""
    if type(text) is not str or encoding not in ("latin1", "latin-1") or errors != "strict":
        raise pickle.UnpicklingError("_codecs.encode is accepted only as encode(str, 'latin1')")
    return codecs.encode(text, "latin1")


def _bytearray(*args: Any) -> bytearray:
    """``bytearray`` as pickles write it: ``bytearray()``, ``bytearray(bytes)`` (protocols 3-4) or
    ``bytearray(str, 'latin-1')`` (protocol 2); never ``bytearray(n)``, which allocates n bytes."""
    if not args:
        return bytearray()
    if len(args) == 1 and type(args[0]) is bytes:
        return bytearray(args[0])
    if len(args) == 2 and type(args[0]) is str and args[1] in ("latin1", "latin-1"):
        return bytearray(args[0], "latin-1")
    raise pickle.UnpicklingError("bytearray is accepted only as bytearray(), bytearray(bytes) or "
                                 "bytearray(str, 'latin-1')")


class _Skipped:
    """Stands in for a class of :data:`SKIPPED_GLOBALS`: accepts every construction and state
    opcode, keeps nothing, runs nothing."""

    def __new__(cls, *args: Any, **kwargs: Any) -> _Skipped:
        return object.__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        pass

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def append(self, value: Any) -> None:
        pass

    def extend(self, values: Any) -> None:
        pass

    def __repr__(self) -> str:
        return f"<skipped {type(self).__name__}>"


class _Function:
    """One of this module's rebuild functions as ``find_class`` hands it out: callable, but its
    state cannot be changed by a BUILD opcode (a plain function's ``__defaults__`` could be)."""

    __slots__ = ("_fn",)
    __setstate__ = _no_setstate

    def __init__(self, fn: Callable[..., Any]):
        self._fn = fn

    def __call__(self, *args: Any) -> Any:
        return self._fn(*args)

    def __repr__(self) -> str:
        return f"<checkpoint reader's {self._fn.__name__}>"


def _skipped(qualified: str) -> type:
    return type(qualified, (_Skipped,), {})


#: (module, name) -> what ``find_class`` returns for it; everything else is refused
ALLOWED_GLOBALS: dict[tuple[str, str], Any] = {
    ("torch._utils", "_rebuild_tensor_v2"): _Function(_rebuild_tensor_v2),
    ("torch._utils", "_rebuild_parameter"): _Function(_rebuild_parameter),
    ("torch._utils", "_rebuild_parameter_with_state"): _Function(_rebuild_parameter),
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): _Function(_bytearray),
    ("_codecs", "encode"): _Function(_codecs_encode),
    **{("torch", name): _storage_type(name) for name in _STORAGE_DTYPES},
    ("torch.storage", "UntypedStorage"): _storage_type("UntypedStorage"),
}

#: (module, name) of classes of a checkpoint's non-tensor parts, replaced by an inert stub
SKIPPED_GLOBALS: dict[tuple[str, str], type] = {
    key: _skipped(".".join(key)) for key in [
        ("pytorch_lightning.utilities.parsing", "AttributeDict"),
        ("lightning_fabric.utilities.data", "AttributeDict"),
        ("lightning.fabric.utilities.data", "AttributeDict"),
        ("argparse", "Namespace"),
        # Lightning <= 1.4 keys the callback states by the callback's class: the pickle only names
        # the class (a dict key), it never calls it; the states themselves are plain values
        ("pytorch_lightning.callbacks.model_checkpoint", "ModelCheckpoint"),
        ("pytorch_lightning.callbacks.early_stopping", "EarlyStopping"),
    ]
}

# protocol 2 pickles name Python 2's modules; pickle's own find_class maps them (fix_imports)
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, path: Path, load_storage: Callable[[_StorageType, str, int], _Storage]):
        super().__init__(file)
        self._path = path
        self._load_storage = load_storage

    def find_class(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)
        key = (module, name)
        if key in ALLOWED_GLOBALS:
            return ALLOWED_GLOBALS[key]
        if key in SKIPPED_GLOBALS:
            return SKIPPED_GLOBALS[key]
        raise CheckpointError(
            f"{self._path}: refused to load: its pickle asks for the global {module}.{name}, which is "
            "not a tensor or a plain container; mtscore's checkpoint reader never runs a checkpoint's "
            "code (an untrusted checkpoint could do anything through it)")

    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or len(pid) != 5:
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        typename, storage_type, key, _location, numel = pid
        if isinstance(typename, bytes):
            typename = typename.decode("ascii")
        if isinstance(key, bytes):
            key = key.decode("ascii")
        if (typename != "storage" or not isinstance(storage_type, _StorageType) or type(key) is not str
                or type(numel) is not int or numel < 0):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        return self._load_storage(storage_type, key, numel)


class _Archive:
    """The zip of a torch checkpoint: its top folder, byte order and storage records."""

    def __init__(self, zf: zipfile.ZipFile, path: Path):
        self.zf, self.path = zf, path
        names = zf.namelist()
        pkls = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
        if len(pkls) != 1:
            found = "no" if not pkls else f"{len(pkls)}"
            raise CheckpointError(f"{path}: not a torch checkpoint: {found} <folder>/data.pkl record in the zip")
        self.top = pkls[0][:-len("data.pkl")]
        self.names = set(names)
        order = self.top + "byteorder"
        byteorder = self.read(order).decode("ascii", "replace") if order in self.names else "little"
        if byteorder not in ("little", "big"):
            raise CheckpointError(f"{path}: unknown byte order {byteorder!r} in its byteorder record")
        self.order: Literal["<", ">"] = "<" if byteorder == "little" else ">"
        self.storages: dict[str, _Storage] = {}
        self.budget = _Budget(3 * path.stat().st_size + (64 << 20))

    def read(self, name: str) -> bytes:
        return self.zf.read(name)

    def storage(self, storage_type: _StorageType, key: str, numel: int) -> _Storage:
        dtype = storage_type.dtype.newbyteorder(self.order)
        if key in self.storages:
            s = self.storages[key]
            if s.array.dtype != dtype or s.array.shape[0] != numel:
                raise pickle.UnpicklingError(f"storage {key} is used with two different types or sizes")
            return s
        name = f"{self.top}data/{key}"
        if name not in self.names:
            raise CheckpointError(f"{self.path}: damaged checkpoint: the storage record {name} is missing")
        info = self.zf.getinfo(name)
        if info.compress_type != zipfile.ZIP_STORED:   # torch.save stores them; deflate could inflate 1000x
            raise CheckpointError(f"{self.path}: the storage record {name} is compressed; torch writes storage "
                                  "records uncompressed (re-save the checkpoint with torch.save)")
        nbytes = numel * dtype.itemsize
        if info.file_size != nbytes:
            raise CheckpointError(f"{self.path}: damaged checkpoint: the storage record {name} holds "
                                  f"{info.file_size} bytes, its tensor {numel} x {dtype.itemsize}")
        self.budget.take(nbytes)
        buf = np.empty(nbytes, dtype=np.uint8)
        with self.zf.open(info) as f:
            pos = 0
            while pos < nbytes:
                piece = f.read(min(_CHUNK, nbytes - pos))
                if not piece:
                    raise CheckpointError(f"{self.path}: damaged checkpoint: the record {name} ends early")
                buf[pos:pos + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
                pos += len(piece)
        s = _Storage(buf.view(dtype), storage_type.name == "BFloat16Storage", self.budget)
        self.storages[key] = s
        return s


def read_checkpoint_object(path: str | Path) -> Any:
    """The whole unpickled object of a torch checkpoint zip, tensors as numpy arrays, the classes of
    :data:`SKIPPED_GLOBALS` as inert stubs. Raises :class:`CheckpointError` (naming the file) for a
    missing, truncated or non-zip file, a missing record, or a refused global."""
    path = Path(path)
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: checkpoint file not found") from None
    except IsADirectoryError:
        raise CheckpointError(f"{path}: is a folder, not a checkpoint file") from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot read the checkpoint: {e.strerror or e}") from None
    except (zipfile.BadZipFile, ValueError, EOFError) as e:
        raise CheckpointError(
            f"{path}: not a torch checkpoint zip ({e}): the file is truncated or damaged, or was saved "
            "in torch's legacy pre-1.6 format, which mtscore does not read (re-save it with torch.save)"
        ) from None
    with zf:
        try:
            archive = _Archive(zf, path)
            data = archive.read(archive.top + "data.pkl")
            unpickler = _RestrictedUnpickler(io.BytesIO(data), path, archive.storage)
            obj = unpickler.load()
        except CheckpointError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
            raise CheckpointError(f"{path}: damaged checkpoint: {e}") from None
        except (pickle.UnpicklingError, ValueError, TypeError, KeyError, IndexError, AttributeError,
                RecursionError, MemoryError, OverflowError) as e:
            raise CheckpointError(f"{path}: damaged or unsupported checkpoint pickle: {type(e).__name__}: {e}") from None
    return obj


def read_checkpoint(path: str | Path) -> dict[str, np.ndarray]:
    """The state dict of a torch or PyTorch Lightning checkpoint as ``{name: array}``.

    The checkpoint's ``state_dict`` entry when it has one (Lightning's layout), else the object
    itself when it is a mapping (``torch.save(model.state_dict())``). Arrays are C-contiguous, in
    native byte order, with the tensor's dtype (float32, float16, float64, int64, int32, int16, int8,
    uint8, bool; bfloat16 widened to float32). Entries that are not tensors are left out. Raises
    :class:`CheckpointError` as :func:`read_checkpoint_object` does, and when no state dict is found.
    """
    path = Path(path)
    obj = read_checkpoint_object(path)
    state = obj.get("state_dict", obj) if isinstance(obj, dict) else None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: holds no state dict (expected a mapping of parameter names to tensors, "
                              "or a Lightning checkpoint with a 'state_dict' entry)")
    out = {k: v for k, v in state.items() if isinstance(k, str) and isinstance(v, np.ndarray)}
    if not out and state:
        raise CheckpointError(f"{path}: its state dict holds no tensors")
    return out


def read_hparams(folder: str | Path) -> dict[str, Any]:
    """``hparams.yaml`` of a COMET model folder (``folder/hparams.yaml``, or the file itself) as a
    dict, read by the flat-YAML subset parser of :mod:`.hparams_yaml` (PyYAML is not a dependency
    of mtscore). Raises :class:`CheckpointError` naming the file when it is missing, not UTF-8,
    outside the subset, or not a mapping."""
    folder = Path(folder)
    f = folder if folder.is_file() else folder / "hparams.yaml"
    if not f.is_file():
        raise CheckpointError(f"{folder}: hparams.yaml missing; a COMET model folder holds hparams.yaml "
                              "and checkpoints/model.ckpt")
    try:
        text = f.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise CheckpointError(f"{f}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise CheckpointError(f"{f}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return parse_hparams_yaml(text, f)

