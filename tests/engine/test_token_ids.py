"""TokenIds / as_token_ids: every input form gives the same CSR arrays; every bad input gets
the promised one-line error naming the argument and index."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtscore.engine.token_ids import MAX_ID, TokenIds, as_token_ids

SEQS = [[5, 7, 9], [], [MAX_ID], [0, 0, 3, 3], [42]]
PAD = -100


def padded(seqs, pad=PAD, extra=2):
    width = max(map(len, seqs)) + extra
    a = np.full((len(seqs), width), pad, dtype=np.int64)
    for i, s in enumerate(seqs):
        a[i, :len(s)] = s
    return a


class ArrayOnly:
    """An object with only ``__array__`` (like a torch tensor seen without torch)."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


class DlpackOnly:
    """An object with only ``__dlpack__`` / ``__dlpack_device__``."""

    def __init__(self, a):
        self._a = np.ascontiguousarray(a)

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def expected(seqs=SEQS):
    values = np.array([x for s in seqs for x in s], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64)
    return values, offsets


def check(t: TokenIds, seqs=SEQS):
    values, offsets = expected(seqs)
    assert t.values.dtype == np.int32
    assert t.offsets.dtype == np.int64
    np.testing.assert_array_equal(t.values, values)
    np.testing.assert_array_equal(t.offsets, offsets)
    assert t.to_lists() == [list(s) for s in seqs]
    assert len(t) == len(seqs)


def forms():
    lens = [len(s) for s in SEQS]
    a = padded(SEQS)
    yield "lists", lambda: as_token_ids(SEQS)
    yield "tuples", lambda: as_token_ids(tuple(tuple(s) for s in SEQS))
    yield "arrays", lambda: as_token_ids([np.array(s, dtype=np.int64) for s in SEQS])
    yield "csr", lambda: as_token_ids(TokenIds(*expected()))
    yield "from_lengths", lambda: TokenIds.from_lengths(expected()[0], lens)
    yield "padded+lengths", lambda: as_token_ids(a, lengths=lens)
    yield "padded+pad_id", lambda: as_token_ids(a, pad_id=PAD)
    yield "int32 padded", lambda: as_token_ids(a.astype(np.int32), pad_id=PAD)
    yield "__array__", lambda: as_token_ids(ArrayOnly(a), pad_id=PAD)
    yield "__dlpack__", lambda: as_token_ids(DlpackOnly(a), lengths=np.array(lens))
    yield "numpy (has __dlpack__)", lambda: as_token_ids(np.ascontiguousarray(a), lengths=lens)


@pytest.mark.parametrize(("name", "make"), list(forms()), ids=[n for n, _ in forms()])
def test_every_form_gives_the_same_csr(name, make):
    check(make())


def test_pyarrow_forms():
    pa = pytest.importorskip("pyarrow", reason="pyarrow not installed")
    check(as_token_ids(pa.array(SEQS, type=pa.list_(pa.int64()))))
    check(as_token_ids(pa.array(SEQS, type=pa.large_list(pa.int32()))))
    check(as_token_ids(pa.chunked_array([pa.array(SEQS[:2]), pa.array(SEQS[2:])])))
    whole = pa.array([[1, 2], *SEQS, [3]])
    check(as_token_ids(whole.slice(1, len(SEQS))))  # a slice: offsets rebased, no row copy
    fixed = pa.array([[1, 2], [3, 4]], type=pa.list_(pa.int64(), 2))
    check(as_token_ids(fixed), [[1, 2], [3, 4]])
    check(as_token_ids(fixed.slice(1)), [[3, 4]])


def test_pyarrow_zero_copy_values():
    pa = pytest.importorskip("pyarrow", reason="pyarrow not installed")
    arr = pa.array([[1, 2, 3], [4]], type=pa.list_(pa.int32()))
    t = as_token_ids(arr)
    child = np.frombuffer(arr.values.buffers()[1], dtype=np.int32)
    assert np.shares_memory(t.values, child)


def test_torch_tensor_without_special_casing():
    torch = pytest.importorskip("torch", reason="torch not installed")
    a = torch.tensor(padded(SEQS))
    check(as_token_ids(a, pad_id=PAD))
    check(as_token_ids([torch.tensor(s, dtype=torch.long) for s in SEQS]))


def test_pad_id_strips_only_the_trailing_run():
    t = as_token_ids(np.array([[0, 5, 0, 6, 0, 0], [0, 0, 0, 0, 0, 0]]), pad_id=0)
    assert t.to_lists() == [[0, 5, 0, 6], []]


def test_lengths_win_over_pad_id_and_padding_is_not_validated():
    t = as_token_ids(np.array([[3, -100, -100], [4, 5, -7]]), lengths=[1, 2], pad_id=-100)
    assert t.to_lists() == [[3], [4, 5]]


def test_take_and_getitem():
    t = as_token_ids(SEQS)
    assert t.take([3, 0, 1]).to_lists() == [SEQS[3], SEQS[0], SEQS[1]]
    assert t[-1].tolist() == SEQS[-1]
    with pytest.raises(IndexError):
        t[len(SEQS)]


@given(st.lists(st.lists(st.one_of(st.integers(0, 50), st.integers(MAX_ID - 3, MAX_ID)),
                         max_size=12), max_size=8))
def test_generated_round_trip(seqs):
    check(as_token_ids(seqs), seqs)
    if seqs:
        check(as_token_ids(padded(seqs), lengths=[len(s) for s in seqs]), seqs)


@pytest.mark.parametrize(("bad", "kw", "exc", "msg"), [
    ([[1, -1]], {}, ValueError, r"hyps\[0\]\[1\] = -1: token ids must be >= 0"),
    ([[1], [2, 2 ** 31]], {}, ValueError, r"hyps\[1\]\[1\] = 2147483648: token ids must be < 2\*\*31"),
    ([[1, 2.5]], {}, TypeError, r"hyps\[0\]\[1\] = 2.5 is not an integer token id"),
    (np.array([[True, False]]), {"pad_id": 0}, TypeError, r"hyps: token ids must be integers, got dtype bool"),
    ([[1], "a b"], {}, TypeError, r"hyps\[1\] is a str"),
    ([[1], None], {}, TypeError, r"hyps\[1\] is None"),
    ([1, 2, 3], {}, TypeError, r"hyps\[0\] is an int"),
    (np.arange(4), {}, ValueError, r"hyps: a 1-D array of 4 ids is one sequence"),
    (np.zeros((2, 3, 4), dtype=int), {}, ValueError, r"hyps: expected a 2-D \(padded\) array, got 3-D"),
    (np.zeros((2, 3), dtype=int), {}, ValueError, r"hyps: a 2-D \(padded\) array needs lengths= .* or pad_id="),
    (np.zeros((2, 3), dtype=int), {"lengths": [1, 4]}, ValueError, r"hyps: lengths\[1\] = 4 is out of range \[0, 3\]"),
    (np.zeros((2, 3), dtype=int), {"lengths": [1, -1]}, ValueError, r"hyps: lengths\[1\] = -1 is out of range"),
    (np.zeros((2, 3), dtype=int), {"lengths": [1, 2, 3]}, ValueError, r"hyps: lengths must be 1-D with one entry per row \(2\)"),
    (np.zeros((2, 3)), {"pad_id": 9}, TypeError, r"hyps: token ids must be integers, got dtype float64"),
    (np.array([[1, -5]]), {"pad_id": 0}, ValueError, r"hyps\[0\]\[1\] = -5: token ids must be >= 0"),
    ([[1]], {"pad_id": 0}, ValueError, r"hyps: lengths= / pad_id= apply to padded 2-D arrays"),
    ("1 2 3", {}, TypeError, r"hyps: expected token-id sequences, got str"),
    (7, {}, TypeError, r"hyps: expected token-id sequences, got int"),
])
def test_errors_name_the_argument_and_index(bad, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        as_token_ids(bad, **kw)


def test_errors_use_the_argument_name():
    with pytest.raises(ValueError, match=r"refs\[0\]\[0\] = -3"):
        as_token_ids([[-3]], what="refs")


def test_csr_errors():
    with pytest.raises(ValueError, match=r"offsets must start at 0 and end at len\(values\) = 3"):
        TokenIds(np.array([1, 2, 3]), np.array([0, 2]))
    with pytest.raises(ValueError, match=r"offsets decrease at sequence 1 \(3 > 2\)"):
        TokenIds(np.array([1, 2, 3]), np.array([0, 3, 2, 3]))
    with pytest.raises(ValueError, match=r"TokenIds\[1\]\[0\] = -2"):
        TokenIds(np.array([1, -2]), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"lengths\[1\] = -1 is negative"):
        TokenIds.from_lengths(np.array([1, 2]), [3, -1])
    with pytest.raises(ValueError, match=r"end at len\(values\) = 2 \(got 0 \.\. 3\)"):
        TokenIds.from_lengths(np.array([1, 2]), [1, 2])  # ragged lengths that do not add up


def test_arrow_nulls_are_errors():
    pa = pytest.importorskip("pyarrow", reason="pyarrow not installed")
    with pytest.raises(ValueError, match=r"hyps\[1\] is null"):
        as_token_ids(pa.array([[1], None, [2]]))
    with pytest.raises(ValueError, match="hold 1 null"):
        as_token_ids(pa.array([[1, None]]))
    with pytest.raises(TypeError, match="not a list array"):
        as_token_ids(pa.array([1, 2]))
    with pytest.raises(ValueError, match=r"hyps\[3\] is null"):
        as_token_ids(pa.chunked_array([pa.array([[1], [2]]), pa.array([[3], None])]))
