"""Token-id sequences as one CSR pair of arrays, from whatever a decoder produces.

:class:`TokenIds` is the id-mode input of the decoder API: ``values`` int32 ``(T,)`` holds the
ids of every sequence back to back, ``offsets`` int64 ``(N + 1,)`` says where each starts
(sequence ``i`` is ``values[offsets[i]:offsets[i + 1]]``; ``offsets[0] == 0`` and
``offsets[-1] == T``). Ids are in ``[0, 2**31 - 1]``. This is the layout the BLEU and TER
kernels take, so a batch reaches them without a per-sequence copy.

:func:`as_token_ids` builds one from

* a list/tuple of sequences of ints (lists, tuples, 1-D arrays or tensors),
* a :class:`TokenIds` (returned as is),
* a padded 2-D array (numpy, or anything with ``__dlpack__`` / ``__array__``: torch tensors,
  jax and cupy arrays on the host) with ``lengths=`` (int, one per row) or ``pad_id=`` (the
  trailing run of ``pad_id`` in each row is padding; ``pad_id`` inside a sequence is a token),
* a pyarrow ``ListArray`` / ``LargeListArray`` / ``FixedSizeListArray`` or a ``ChunkedArray`` of
  them: its ``offsets`` and ``values`` buffers are used directly (no per-row conversion).

Only numpy is imported: pyarrow and torch objects are recognised by duck typing. Bad input is
one ``ValueError`` / ``TypeError`` naming the argument (``what``) and the first bad index.
"""
from __future__ import annotations

from array import array
from itertools import chain
from typing import Any

import numpy as np

__all__ = ["MAX_ID", "TokenIds", "as_token_ids"]

#: the largest token id (ids are stored as int32)
MAX_ID = 2 ** 31 - 1


class TokenIds:
    """N token-id sequences in CSR form.

    ``values``: int32 ``(T,)``, all ids back to back; ``offsets``: int64 ``(N + 1,)``,
    non-decreasing, ``offsets[0] == 0``, ``offsets[-1] == T``; sequence ``i`` is
    ``values[offsets[i]:offsets[i + 1]]``. Construct with :meth:`from_arrays` (validates) or
    :func:`as_token_ids`; ``TokenIds(values, offsets)`` also validates.
    """

    __slots__ = ("offsets", "values")

    values: np.ndarray
    offsets: np.ndarray

    def __init__(self, values, offsets, what: str = "TokenIds"):
        v = np.asarray(values)
        o = np.asarray(offsets)
        if v.ndim != 1 or o.ndim != 1:
            raise ValueError(f"{what}: values and offsets must be 1-D (got shapes {v.shape} and {o.shape})")
        if len(o) == 0:
            raise ValueError(f"{what}: offsets must hold N + 1 >= 1 entries (got an empty array)")
        if o.dtype.kind not in "iu":
            raise TypeError(f"{what}: offsets must be integers, got dtype {o.dtype}")
        o = np.ascontiguousarray(o, dtype=np.int64)
        if o[0] != 0 or o[-1] != len(v):
            raise ValueError(f"{what}: offsets must start at 0 and end at len(values) = {len(v)} "
                             f"(got {int(o[0])} .. {int(o[-1])})")
        steps = np.diff(o)
        if len(steps) and steps.min() < 0:
            i = int(np.argmax(steps < 0))
            raise ValueError(f"{what}: offsets decrease at sequence {i} ({int(o[i])} > {int(o[i + 1])})")
        self.values = _checked_ids(v, o, what)
        self.offsets = o

    @classmethod
    def from_arrays(cls, values, offsets, what: str = "TokenIds") -> TokenIds:
        """Validated CSR pair (ids in range, offsets consistent); ``values`` is cast to int32
        (no copy when it already is contiguous int32)."""
        return cls(values, offsets, what)

    @classmethod
    def from_lengths(cls, values, lengths, what: str = "TokenIds") -> TokenIds:
        """``values`` (T,) cut into sequences of ``lengths`` (N,) (summing to T)."""
        lens = np.asarray(lengths)
        if lens.ndim != 1 or (lens.size and lens.dtype.kind not in "iu"):
            raise TypeError(f"{what}: lengths must be a 1-D integer array")
        if lens.size and lens.min() < 0:
            i = int(np.argmax(lens < 0))
            raise ValueError(f"{what}: lengths[{i}] = {int(lens[i])} is negative")
        offsets = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        return cls(values, offsets, what)

    @classmethod
    def _trusted(cls, values: np.ndarray, offsets: np.ndarray) -> TokenIds:
        """Arrays already checked (int32 ids in range, int64 offsets from 0 to T)."""
        out = cls.__new__(cls)
        out.values = values
        out.offsets = offsets
        return out

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.values)

    def lengths(self) -> np.ndarray:
        """int64 (N,): the length of each sequence."""
        return np.diff(self.offsets)

    def __getitem__(self, i: int) -> np.ndarray:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"sequence {i} out of range for {n} sequences")
        return self.values[self.offsets[i]:self.offsets[i + 1]]

    def take(self, idx) -> TokenIds:
        """The sequences ``idx`` (int array), in that order, as a new CSR pair (one gather)."""
        idx = np.asarray(idx, dtype=np.int64)
        starts = self.offsets[idx]
        lens = self.offsets[idx + 1] - starts
        offsets = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        # position t of the output reads input position starts[j] + (t - offsets[j])
        pos = np.repeat(starts - offsets[:-1], lens) + np.arange(offsets[-1], dtype=np.int64)
        return TokenIds._trusted(self.values[pos], offsets)

    def to_lists(self) -> list[list[int]]:
        """The sequences as lists of Python ints."""
        flat = self.values.tolist()
        o = self.offsets.tolist()
        return [flat[o[i]:o[i + 1]] for i in range(len(o) - 1)]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TokenIds) and np.array_equal(self.offsets, other.offsets)
                and np.array_equal(self.values, other.values))

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside

    def __repr__(self) -> str:
        return f"TokenIds(n={len(self)}, tokens={self.n_tokens})"


def _where(offsets: np.ndarray, flat: int) -> str:
    """``[i][j]`` of flat position ``flat``."""
    i = int(np.searchsorted(offsets, flat, side="right")) - 1
    return f"[{i}][{flat - int(offsets[i])}]"


def _checked_ids(values: np.ndarray, offsets: np.ndarray, what: str) -> np.ndarray:
    """``values`` as contiguous int32 after checking dtype and range (names the first bad id)."""
    if values.dtype.kind not in "iu":
        first = f" ({what}{_where(offsets, 0)} = {values[0]!r})" if len(values) else ""
        raise TypeError(f"{what}: token ids must be integers, got dtype {values.dtype}{first}")
    if values.dtype == np.int32:
        if len(values) and values.min() < 0:
            k = int(np.argmax(values < 0))
            raise ValueError(f"{what}{_where(offsets, k)} = {int(values[k])}: token ids must be >= 0")
        return np.ascontiguousarray(values)
    if len(values):
        lo, hi = values.min(), values.max()
        if lo < 0:
            k = int(np.argmax(values < 0))
            raise ValueError(f"{what}{_where(offsets, k)} = {int(values[k])}: token ids must be >= 0")
        if hi > MAX_ID:
            k = int(np.argmax(values > MAX_ID))
            raise ValueError(f"{what}{_where(offsets, k)} = {int(values[k])}: token ids must be "
                             f"< 2**31 (stored as int32)")
    return np.ascontiguousarray(values, dtype=np.int32)


# ---- the input forms ------------------------------------------------------------------------
def _is_arrow(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "pyarrow"


def _arrow_numpy(arr: Any, what: str, name: str) -> np.ndarray:
    if arr.null_count:
        raise ValueError(f"{what}: the Arrow {name} hold {arr.null_count} null(s); token ids and "
                         "sequences must not be null")
    return arr.to_numpy(zero_copy_only=False)


def _from_arrow_array(arr: Any, what: str, base: int = 0):
    """(values, offsets) of one pyarrow list array; ``base`` numbers rows in error messages."""
    if arr.null_count:
        first = int(np.argmax(_arrow_numpy(arr.is_null(), what, "null mask")))
        raise ValueError(f"{what}[{base + first}] is null; every sequence must be a list of ids "
                         "(use [] for an empty one)")
    tname = str(arr.type)
    if hasattr(arr, "offsets"):  # ListArray (int32 offsets), LargeListArray (int64)
        offsets = _arrow_numpy(arr.offsets, what, "offsets").astype(np.int64)
        lo, hi = int(offsets[0]), int(offsets[-1])
        values = _arrow_numpy(arr.values, what, "values")[lo:hi]  # sliced arrays share the child
        return values, offsets - lo
    if hasattr(arr, "type") and hasattr(arr.type, "list_size"):  # FixedSizeListArray
        size = int(arr.type.list_size)
        n = len(arr)
        flat = arr.flatten()  # honours the slice; zero-copy for primitive children
        return _arrow_numpy(flat, what, "values"), np.arange(n + 1, dtype=np.int64) * size
    raise TypeError(f"{what}: a pyarrow {type(arr).__name__} of type {tname} is not a list array; "
                    "pass a List/LargeList/FixedSizeList array of integers")


def _from_arrow(x: Any, what: str) -> TokenIds:
    if hasattr(x, "chunks"):  # ChunkedArray: one concatenation of the chunk buffers
        parts = []
        base = 0
        for c in x.chunks:
            parts.append(_from_arrow_array(c, what, base))
            base += len(c)
        if not parts:
            return TokenIds._trusted(np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64))
        lens = np.concatenate([np.diff(o) for _, o in parts])
        values = np.concatenate([v for v, _ in parts])
        offsets = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
    else:
        values, offsets = _from_arrow_array(x, what)
    return TokenIds(values, offsets, what)


def _to_numpy(x: Any, what: str) -> np.ndarray:
    """A numpy view of an array-like: ``__dlpack__`` first (zero copy), then ``__array__``."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__"):
        dev = getattr(x, "__dlpack_device__", None)
        if dev is not None and dev()[0] not in (1, 3) and hasattr(x, "cpu"):  # 1 CPU, 3 CUDA host
            x = x.cpu()  # a device tensor (torch CUDA): one copy to the host
        try:
            return np.from_dlpack(x)
        except (TypeError, BufferError, RuntimeError, ValueError):
            if not hasattr(x, "__array__"):
                raise TypeError(f"{what}: could not read {type(x).__name__} through __dlpack__ "
                                "(is it on a GPU? move it to the host first)") from None
    return np.asarray(x)


def _padded(arr: np.ndarray, what: str, pad_id, lengths) -> TokenIds:
    n, width = arr.shape
    if lengths is not None:
        lens = _to_numpy(lengths, f"{what} lengths")
        if lens.ndim != 1 or len(lens) != n:
            raise ValueError(f"{what}: lengths must be 1-D with one entry per row ({n}), "
                             f"got shape {lens.shape}")
        if n and lens.dtype.kind not in "iu":
            raise TypeError(f"{what}: lengths must be integers, got dtype {lens.dtype}")
        lens = lens.astype(np.int64, copy=False)
        bad = (lens < 0) | (lens > width)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{what}: lengths[{i}] = {int(lens[i])} is out of range [0, {width}] "
                             f"for a padded array of width {width}")
    elif pad_id is not None:
        if width == 0:
            lens = np.zeros(n, dtype=np.int64)
        else:
            keep = arr != pad_id
            # 1 + the last column that is not padding (0 when the whole row is padding)
            last = width - np.argmax(keep[:, ::-1], axis=1)
            lens = np.where(keep.any(axis=1), last, 0).astype(np.int64)
    else:
        raise ValueError(f"{what}: a 2-D (padded) array needs lengths= (one per row) or pad_id= "
                         f"(the trailing padding id); pass lengths=[{width}] * {n} if no row is padded")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    # nothing to strip, or keep each row's first lens[i] ids (row-major: row after row)
    values = arr.reshape(-1) if n and int(lens.min()) == width else arr[np.arange(width)[None, :] < lens[:, None]]
    return TokenIds(values, offsets, what)


def _from_sequences(x: Any, what: str) -> TokenIds:
    seqs = list(x)
    lens = np.empty(len(seqs), dtype=np.int64)
    arrays = None
    for i, s in enumerate(seqs):
        if isinstance(s, (list, tuple)):
            lens[i] = len(s)
            continue
        if isinstance(s, (str, bytes)):
            raise TypeError(f"{what}[{i}] is a {type(s).__name__}; expected a sequence of int token "
                            "ids (text goes through the text path)")
        if isinstance(s, (int, np.integer)):
            raise TypeError(f"{what}[{i}] is an int; expected a sequence of sequences of ids, "
                            "one per segment (e.g. [[5, 7, 9], [4]])")
        if s is None:
            raise TypeError(f"{what}[{i}] is None; expected a sequence of int token ids (use [] "
                            "for an empty one)")
        if hasattr(s, "__dlpack__") or hasattr(s, "__array__"):
            a = _to_numpy(s, f"{what}[{i}]")
            if a.ndim != 1:
                raise ValueError(f"{what}[{i}] has shape {a.shape}; each sequence must be 1-D")
            if arrays is None:
                arrays = {}
            arrays[i] = a
            lens[i] = len(a)
            continue
        raise TypeError(f"{what}[{i}] is a {type(s).__name__}; expected a sequence of int token ids")
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    def items():
        if arrays is None:
            return chain.from_iterable(seqs)
        return chain.from_iterable(arrays[i].tolist() if i in arrays else s for i, s in enumerate(seqs))

    try:
        # array('q') takes only ints (floats and strings raise), in C: ~3x faster than np.array
        values = np.frombuffer(array("q", items()), dtype=np.int64)
    except (TypeError, OverflowError, ValueError):
        _first_bad_item(list(items()), offsets, what)
        raise  # pragma: no cover - _first_bad_item raised
    if len(values) != offsets[-1]:
        raise ValueError(f"{what}: a sequence changed length while it was read")
    return TokenIds(values, offsets, what)


def _first_bad_item(flat: list, offsets: np.ndarray, what: str) -> None:
    """Raise the error of the first item that is not an int id in range."""
    for k, v in enumerate(flat):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{what}{_where(offsets, k)} = {v!r} is not an integer token id")
        if v < 0:
            raise ValueError(f"{what}{_where(offsets, k)} = {v}: token ids must be >= 0")
        if v > MAX_ID:
            raise ValueError(f"{what}{_where(offsets, k)} = {v}: token ids must be < 2**31 (stored as int32)")
    raise TypeError(f"{what}: token ids must be integers")  # pragma: no cover - mixed kinds


def as_token_ids(x: Any, *, pad_id: int | None = None, lengths: Any = None,
                 what: str = "hyps") -> TokenIds:
    """``x`` as a :class:`TokenIds` (see the module docstring for the accepted forms).

    ``pad_id`` / ``lengths`` apply to 2-D (padded) arrays only: ``lengths`` (N,) gives each
    row's length (wins over ``pad_id``); otherwise the trailing run of ``pad_id`` in each row
    is dropped (a ``pad_id`` before the last non-pad id is kept as a token). ``what`` names the
    argument in error messages (``hyps[3][7] = -1: token ids must be >= 0``).
    """
    if isinstance(x, TokenIds):
        return x
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{what}: expected token-id sequences, got {type(x).__name__}")
    if _is_arrow(x):
        if lengths is not None or pad_id is not None:
            raise ValueError(f"{what}: lengths= / pad_id= apply to padded 2-D arrays, not Arrow lists")
        return _from_arrow(x, what)
    if isinstance(x, np.ndarray) or hasattr(x, "__dlpack__") or hasattr(x, "__array__"):
        arr = _to_numpy(x, what)
        if arr.dtype.kind == "O" and arr.ndim == 1:  # a ragged numpy array of sequences
            return _from_sequences(arr, what)
        if arr.ndim == 2:
            return _padded(arr, what, pad_id, lengths)
        if arr.ndim == 1:
            raise ValueError(f"{what}: a 1-D array of {len(arr)} ids is one sequence; pass a list of "
                             "sequences, a padded 2-D array, or TokenIds.from_lengths(values, lengths)")
        raise ValueError(f"{what}: expected a 2-D (padded) array, got {arr.ndim}-D of shape {arr.shape}")
    if lengths is not None or pad_id is not None:
        raise ValueError(f"{what}: lengths= / pad_id= apply to padded 2-D arrays, not to a list of "
                         "sequences (each already has its own length)")
    try:
        iter(x)
    except TypeError:
        raise TypeError(f"{what}: expected token-id sequences, got {type(x).__name__}") from None
    return _from_sequences(x, what)
