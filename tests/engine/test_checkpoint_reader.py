"""The restricted reader of torch / PyTorch Lightning checkpoints (mtscore.engine.checkpoints):
tensors saved by torch.save come back as equal numpy arrays (every dtype, views with strides and
offsets, shared storages, parameters, either byte order); Lightning's checkpoint layout gives its
state dict; a crafted pickle that would run code is refused before anything runs, the message naming
the file and the global; damaged files give one clear error each; hparams.yaml is read without PyYAML
as PyYAML reads it, and what is outside the subset is refused."""
from __future__ import annotations

import math
import os
import pickle
import struct
import subprocess
import sys
import time
import types
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

from mtscore.engine.checkpoints import (
    ALLOWED_GLOBALS,
    CheckpointError,
    read_checkpoint,
    read_checkpoint_object,
    read_hparams,
)
from mtscore.errors import UserError


def _torch():
    return pytest.importorskip("torch", reason="torch (the test extra) builds the checkpoints")


def _save(obj, path: Path) -> Path:
    _torch().save(obj, path)
    return path


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    assert a.flags.c_contiguous
    np.testing.assert_array_equal(a, b)


# --- tensors ---------------------------------------------------------------------------------------

def test_every_dtype_comet_uses_and_more(tmp_path):
    torch = _torch()
    g = torch.Generator().manual_seed(0)
    sd = {
        "f32": torch.randn(7, 5, generator=g),
        "f16": torch.randn(3, 4, generator=g).half(),
        "i64": torch.arange(-5, 7, dtype=torch.int64).reshape(3, 4),
        "f64": torch.randn(4, generator=g, dtype=torch.float64),
        "i32": torch.tensor([1, -2, 2**31 - 1], dtype=torch.int32),
        "i16": torch.tensor([-3, 4], dtype=torch.int16),
        "i8": torch.tensor([-128, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(3.25),
        "empty": torch.zeros(0, 4),
        "f32_specials": torch.tensor([float("inf"), float("-inf"), -0.0, 1e-45]),
    }
    got = read_checkpoint(_save(sd, tmp_path / "m.ckpt"))
    assert list(got) == list(sd)
    for k, t in sd.items():
        _same(got[k], t.numpy())
    assert got["f16"].dtype == np.float16
    assert got["i64"].dtype == np.int64
    assert got["f32"].dtype == np.float32
    nan = read_checkpoint(_save({"x": torch.tensor([float("nan")])}, tmp_path / "nan.ckpt"))["x"]
    assert np.isnan(nan[0])


def test_bfloat16_is_widened_exactly(tmp_path):
    torch = _torch()
    t = torch.randn(6, 3, generator=torch.Generator().manual_seed(1)).bfloat16()
    got = read_checkpoint(_save({"w": t}, tmp_path / "bf.pt"))["w"]
    _same(got, t.float().numpy())


def test_views_strides_offsets_and_shared_storage(tmp_path):
    torch = _torch()
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    half = torch.arange(24, dtype=torch.float16).reshape(4, 6)
    longs = torch.arange(40, dtype=torch.int64).reshape(5, 8)
    sd = OrderedDict([
        ("base", base),
        ("transposed", base.t()),
        ("rows", base[2:5]),                # offset 20
        ("cols", base[:, 3:7]),             # offset 3, row stride 10
        ("strided", base[1::2, ::3]),       # offset 10, strides (20, 3)
        ("column", base[:, 9]),             # offset 9, stride 10
        ("expanded", base[0, :1].expand(4, 3)),  # stride 0
        ("half_t", half.t()[1:]),
        ("long_slice", longs[1:, 2:5].t()),
    ])
    for k in ("transposed", "cols", "strided", "column", "expanded", "half_t", "long_slice"):
        assert not sd[k].is_contiguous(), k
    got = read_checkpoint(_save(sd, tmp_path / "views.ckpt"))
    for k, t in sd.items():
        _same(got[k], t.contiguous().numpy())
    got["base"][0, 0] = -1  # copies: no entry shares memory with another
    assert got["transposed"][0, 0] == 0
    assert got["rows"][0, 0] == 20


def test_whole_storages_are_not_copied_twice(tmp_path):
    """A tensor that is its whole storage (every weight of a state_dict saved normally) comes back
    in the buffer its record was read into, not in a second copy: reading 16 MB of weights peaks
    under 1.5 times their size (the record buffers plus a copy of each was twice). Two tensors of
    one whole storage still give two arrays that share no memory."""
    import tracemalloc

    torch = _torch()
    g = torch.Generator().manual_seed(0)
    sd = {f"w{i}": torch.randn(512, 512, generator=g) for i in range(16)}  # 1 MiB each
    sd["tied"] = sd["w3"].view(512, 512)  # another tensor object on the same whole storage
    path = _save(sd, tmp_path / "big.ckpt")
    tracemalloc.start()
    try:
        got = read_checkpoint(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    total = 16 << 20
    assert sum(a.nbytes for k, a in got.items() if k != "tied") == total
    assert peak < 1.5 * total + (1 << 20) + (1 << 20)  # the tied copy, one read piece
    for k, t in sd.items():
        _same(got[k], t.numpy())
    assert not np.shares_memory(got["w3"], got["tied"])
    got["w3"][0, 0] = 1e9
    assert got["tied"][0, 0] == sd["w3"][0, 0].item()


def test_parameters_and_module_state_dict(tmp_path):
    torch = _torch()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(11, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 3))
    params = {"weight": model[2].weight, "bias": model[2].bias}  # Parameters, not detached tensors
    got = read_checkpoint(_save(params, tmp_path / "params.pt"))
    for k, p in params.items():
        _same(got[k], p.detach().numpy())
    got = read_checkpoint(_save(model.state_dict(), tmp_path / "sd.pt"))
    assert list(got) == list(model.state_dict())
    for k, t in model.state_dict().items():
        _same(got[k], t.numpy())



def test_pickle_protocol_4_and_legacy_format(tmp_path):
    """torch.save's pickle_protocol=4 (STACK_GLOBAL, framing) reads the same; torch's legacy pre-1.6
    format (a bare pickle stream) is refused with one clear message, never unpickled."""
    torch = _torch()
    sd = {"w": torch.randn(3, 4, generator=torch.Generator().manual_seed(3)).t(), "i": torch.arange(5)}
    path = tmp_path / "p4.ckpt"
    torch.save(sd, path, pickle_protocol=4)
    got = read_checkpoint(path)
    for k, t in sd.items():
        _same(got[k], t.contiguous().numpy())
    legacy = tmp_path / "legacy.pt"
    torch.save(sd, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointError, match=r"legacy pre-1\.6 format") as e:
        read_checkpoint(legacy)
    assert str(e.value).startswith(f"{legacy}: ")

def test_big_endian_byteorder_record(tmp_path):
    torch = _torch()
    sd = {"w": torch.randn(4, 3, generator=torch.Generator().manual_seed(2)), "v": torch.randn(5)[1:]}
    little = _save(sd, tmp_path / "little.ckpt")
    big = tmp_path / "big.ckpt"
    with zipfile.ZipFile(little) as src, zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/byteorder"):
                data = b"big"
            elif "/data/" in info.filename:
                data = np.frombuffer(data, "<f4").astype(">f4").tobytes()
            dst.writestr(info.filename, data)
    got = read_checkpoint(big)
    for k, t in sd.items():
        assert got[k].dtype == np.dtype("float32")
        assert got[k].dtype.isnative
        _same(got[k], t.contiguous().numpy())


def _lightning_module(monkeypatch):
    """A stand-in for pytorch_lightning.utilities.parsing (not installed here), so that pickle
    writes the global Lightning 1.x writes for its hyper-parameters."""
    names = ["pytorch_lightning", "pytorch_lightning.utilities", "pytorch_lightning.utilities.parsing"]
    for name in names:
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))

    class AttributeDict(dict):
        pass

    AttributeDict.__module__, AttributeDict.__qualname__ = names[-1], "AttributeDict"
    sys.modules[names[-1]].AttributeDict = AttributeDict
    return AttributeDict


def test_lightning_checkpoint_layout(tmp_path, monkeypatch):
    torch = _torch()
    import argparse

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(torch.randn(2, 6)).sum().backward()
    opt.step()
    AttributeDict = _lightning_module(monkeypatch)
    ckpt = {
        "epoch": 3,
        "global_step": 120,
        "pytorch-lightning_version": "2.2.1",
        "state_dict": OrderedDict(model.state_dict()),
        "loops": {"fit_loop": {"state_dict": {}, "epoch_progress": {"total": {"ready": 4, "completed": 3}}}},
        "callbacks": {"ModelCheckpoint{'monitor': 'val_kendall'}": {
            "best_model_score": torch.tensor(0.31), "best_k_models": {"a.ckpt": torch.tensor(0.31)},
            "dirpath": "checkpoints"}},
        "optimizer_states": [opt.state_dict()],
        "lr_schedulers": [],
        "hparams_name": "kwargs",
        "hyper_parameters": {"class_identifier": "regression_metric", "hidden_sizes": [3072, 1024],
                             "layer": "mix", "dropout": 0.1, "final_activation": None,
                             "raw": b"\x00\xffbytes", "langs": {"en", "de"}, "frozen": frozenset({1}),
                             "buf": bytearray(b"ab"), "pair": (1, 2.5)},
        "legacy_hparams": AttributeDict(layer="mix", pool="avg"),
        "namespace": argparse.Namespace(pool="avg", layer_norm=False),
    }
    path = _save(ckpt, tmp_path / "model.ckpt")
    got = read_checkpoint(path)
    assert list(got) == list(model.state_dict())
    for k, t in model.state_dict().items():
        _same(got[k], t.numpy())
    whole = read_checkpoint_object(path)
    assert whole["epoch"] == 3
    assert whole["hparams_name"] == "kwargs"
    hp = whole["hyper_parameters"]
    assert hp["raw"] == b"\x00\xffbytes"
    assert hp["langs"] == {"en", "de"}
    assert hp["buf"] == bytearray(b"ab")
    assert hp["hidden_sizes"] == [3072, 1024]
    assert hp["pair"] == (1, 2.5)
    exp_avg = whole["optimizer_states"][0]["state"][0]["exp_avg"]
    _same(exp_avg, opt.state_dict()["state"][0]["exp_avg"].numpy())
    # the classes of SKIPPED_GLOBALS become inert stubs holding nothing
    for key in ("legacy_hparams", "namespace"):
        assert type(whole[key]).__name__ in ("pytorch_lightning.utilities.parsing.AttributeDict", "argparse.Namespace")
        assert not vars(whole[key])


def _callback_classes(monkeypatch):
    """Stand-ins for Lightning 1.x's ModelCheckpoint and EarlyStopping (their real modules and
    names, so that pickle writes the globals a Lightning <= 1.4 checkpoint names)."""
    made = []
    for mod, name in [("pytorch_lightning.callbacks.model_checkpoint", "ModelCheckpoint"),
                      ("pytorch_lightning.callbacks.early_stopping", "EarlyStopping")]:
        parts = mod.split(".")
        for i in range(1, len(parts) + 1):
            if ".".join(parts[:i]) not in sys.modules or i == len(parts):
                monkeypatch.setitem(sys.modules, ".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))

        def reduce(self):  # an instance pickles as a call of its class: the reader must not run it
            return (type(self), ("dirpath", 3))

        cls = type(name, (), {"__reduce__": reduce, "__module__": mod, "__qualname__": name})
        setattr(sys.modules[mod], name, cls)
        made.append(cls)
    return made


def test_lightning_1_4_callback_states_keyed_by_class(tmp_path, monkeypatch):
    """Lightning 1.0-1.4 save ``checkpoint["callbacks"]`` as ``{type(callback): state}`` (1.5 and
    later key it by a string; 1.9.5 and 2.x checkpoints name no class): the classes are only dict
    keys. They are read as inert stubs, the states kept; even a call of one (crafted) runs nothing."""
    import pickletools

    torch = _torch()
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 2)
    ModelCheckpoint, EarlyStopping = _callback_classes(monkeypatch)
    ckpt = {
        "epoch": 2, "global_step": 40, "pytorch-lightning_version": "1.4.9",
        "state_dict": OrderedDict(model.state_dict()),
        "callbacks": {
            ModelCheckpoint: {"monitor": "kendall", "best_model_score": torch.tensor(0.25, dtype=torch.float64),
                              "best_model_path": "epoch=1.ckpt", "current_score": torch.tensor(0.25),
                              "dirpath": "checkpoints"},
            EarlyStopping: {"wait_count": 0, "stopped_epoch": 0, "best_score": torch.tensor(0.25),
                            "patience": 1},
        },
        "optimizer_states": [], "lr_schedulers": [],
        "hparams_name": "kwargs", "hyper_parameters": {"pool": "avg", "layer": "mix"},
        "crafted": ModelCheckpoint(),
    }
    path = _save(ckpt, tmp_path / "pl14.ckpt")
    with zipfile.ZipFile(path) as z:
        pkl = z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))
    named = {arg for op, arg, _ in pickletools.genops(pkl) if op.name == "GLOBAL"}
    assert {"pytorch_lightning.callbacks.model_checkpoint ModelCheckpoint",
            "pytorch_lightning.callbacks.early_stopping EarlyStopping"} <= named
    got = read_checkpoint(path)
    for k, t in model.state_dict().items():
        _same(got[k], t.numpy())
    whole = read_checkpoint_object(path)
    keys = sorted(whole["callbacks"], key=lambda c: c.__name__)
    assert [c.__name__ for c in keys] == ["pytorch_lightning.callbacks.early_stopping.EarlyStopping",
                                          "pytorch_lightning.callbacks.model_checkpoint.ModelCheckpoint"]
    assert not {ModelCheckpoint, EarlyStopping} & set(keys)  # stubs, not the classes (importable here)
    state = whole["callbacks"][keys[1]]
    assert state["best_model_path"] == "epoch=1.ckpt"
    _same(state["best_model_score"], np.array(0.25, np.float64))
    assert whole["callbacks"][keys[0]]["patience"] == 1
    assert type(whole["crafted"]) is keys[1]
    assert not vars(whole["crafted"])
    assert whole["hyper_parameters"] == {"pool": "avg", "layer": "mix"}


# --- crafted pickles -------------------------------------------------------------------------------

def _zip_pickle(path: Path, pkl: bytes, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", b"little")
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return path


def _str(s: str) -> bytes:
    """BINUNICODE: a str on the pickle stack."""
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


PROTO2 = b"\x80\x02"


def _payloads(marker: Path) -> dict[str, tuple[bytes, str]]:
    """Hand-made pickles, each of which would create ``marker`` if it were run by pickle.load."""
    m = str(marker)
    cmd = f"touch '{m}'"
    ev = f"open({m!r}, 'w').close()"
    return {
        # GLOBAL os.system, (cmd,), REDUCE
        "os.system": (PROTO2 + _global("os", "system") + _str(cmd) + b"\x85R.", "os.system"),
        # GLOBAL builtins.eval (written as Python 2's __builtin__), (src,), REDUCE
        "eval": (PROTO2 + _global("__builtin__", "eval") + _str(ev) + b"\x85R.", "builtins.eval"),
        # GLOBAL subprocess.Popen, (['touch', marker],), REDUCE
        "Popen": (PROTO2 + _global("subprocess", "Popen") + b"]" + _str("touch") + b"a" + _str(m) + b"a"
                  + b"\x85R.", "subprocess.Popen"),
        # protocol 4 STACK_GLOBAL posix.system
        "stack_global": (b"\x80\x04" + b"\x8c\x05posix\x94\x8c\x06system\x94\x93" + _str(cmd) + b"\x85R.",
                         "posix.system"),
        # INST opcode (protocol 0): builds os.system(cmd) via find_class too
        "inst": (b"(" + _str(cmd) + b"ios\nsystem\n.", "os.system"),
        # a Lightning-like dict whose first entries are fine and whose later value runs eval
        "late": (PROTO2 + b"}(" + _str("epoch") + b"K\x03" + _str("state_dict") + _global("collections", "OrderedDict")
                 + b")R" + _str("hyper_parameters") + _global("builtins", "exec") + _str(ev) + b"\x85R" + b"u.",
                 "builtins.exec"),
    }


@pytest.mark.parametrize("kind", ["os.system", "eval", "Popen", "stack_global", "inst", "late"])
def test_crafted_pickle_is_refused_and_nothing_runs(tmp_path, kind):
    marker = tmp_path / f"pwned-{kind}"
    pkl, refused = _payloads(marker)[kind]
    path = _zip_pickle(tmp_path / "evil.ckpt", pkl)
    for reader in (read_checkpoint, read_checkpoint_object):
        with pytest.raises(CheckpointError) as e:
            reader(path)
        msg = str(e.value)
        assert str(path) in msg
        assert refused in msg
        assert "\n" not in msg
        assert isinstance(e.value, UserError)
    assert not marker.exists()
    # the payload is real: the plain pickle module, in a child process, does create the file (the
    # shell payloads use touch and the posix module: POSIX only)
    if os.name != "posix":
        return
    subprocess.run([sys.executable, "-c", "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"],
                   input=pkl, check=False, capture_output=True, timeout=60)
    deadline = time.monotonic() + 10  # Popen's child may finish after the unpickling process
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()


def test_bare_pickle_file_is_not_unpickled(tmp_path):
    marker = tmp_path / "pwned"
    pkl, _ = _payloads(marker)["os.system"]
    path = tmp_path / "legacy.pt"
    path.write_bytes(pkl)
    with pytest.raises(CheckpointError, match="not a torch checkpoint zip") as e:
        read_checkpoint(path)
    assert str(path) in str(e.value)
    assert not marker.exists()


def test_pickle_cannot_change_the_shared_allowed_objects(tmp_path):
    float_storage = ALLOWED_GLOBALS[("torch", "FloatStorage")]
    rebuild = ALLOWED_GLOBALS[("torch._utils", "_rebuild_tensor_v2")]
    attacks = {
        # BUILD {'dtype': 'u1'} on the shared FloatStorage marker
        "storage": PROTO2 + _global("torch", "FloatStorage") + b"}" + _str("dtype") + _str("u1") + b"sb.",
        # BUILD (None, {'_fn': ...}) on the shared rebuild function (slot state goes through setattr)
        "function": PROTO2 + _global("torch._utils", "_rebuild_tensor_v2") + b"N}" + _str("_fn") + _str("x")
        + b"s\x86b.",
        # BUILD on the OrderedDict class itself
        "class": PROTO2 + _global("collections", "OrderedDict") + b"N}" + _str("get") + _str("x") + b"s\x86b.",
    }
    for name, pkl in attacks.items():
        with pytest.raises(CheckpointError) as e:
            read_checkpoint_object(_zip_pickle(tmp_path / f"{name}.ckpt", pkl))
        assert str(tmp_path / f"{name}.ckpt") in str(e.value)
    assert float_storage.dtype == np.dtype("f4")
    assert ALLOWED_GLOBALS[("torch._utils", "_rebuild_tensor_v2")] is rebuild
    assert "get" not in vars(OrderedDict)          # the BUILD did not set a class attribute
    assert OrderedDict.get is dict.get


def _tensor_pickle(offset: int, size: tuple[int, ...], stride: tuple[int, ...], numel: int) -> bytes:
    """{'w': _rebuild_tensor_v2(storage '0' of numel floats, offset, size, stride, False, OrderedDict())}."""
    def tup(xs):
        return b"(" + b"".join(b"K" + bytes([x]) for x in xs) + b"t"

    pid = b"(" + _str("storage") + _global("torch", "FloatStorage") + _str("0") + _str("cpu") + b"K" + bytes([numel]) + b"tQ"
    args = b"(" + pid + b"K" + bytes([offset]) + tup(size) + tup(stride) + b"\x89" + _global("collections", "OrderedDict") + b")Rt"
    return PROTO2 + b"}" + _str("w") + _global("torch._utils", "_rebuild_tensor_v2") + args + b"Rs."


def test_hand_made_tensor_and_out_of_bounds_views(tmp_path):
    data = np.arange(12, dtype="<f4").tobytes()
    ok = _zip_pickle(tmp_path / "ok.ckpt", _tensor_pickle(2, (3, 2), (1, 3), 12), {"archive/data/0": data})
    # size (3, 2), stride (1, 3), offset 2: element [i, j] is storage[2 + i + 3 j]
    _same(read_checkpoint(ok)["w"], np.array([[2, 5], [3, 6], [4, 7]], dtype=np.float32))
    # a view reaching past its storage would read memory it does not own: refused
    bad = _zip_pickle(tmp_path / "oob.ckpt", _tensor_pickle(2, (3, 4), (1, 3), 12), {"archive/data/0": data})
    with pytest.raises(CheckpointError, match="reaches element 13 of a storage of 12") as e:
        read_checkpoint(bad)
    assert str(bad) in str(e.value)
    # a zero-stride view repeating 12 floats 100,000 x 100,000 times (40 GB) is refused, not allocated
    def big(n):  # BININT: a 4-byte int on the pickle stack
        return b"J" + struct.pack("<i", n)

    huge = _tensor_pickle(0, (1, 1), (0, 0), 12).replace(b"(K\x01K\x01t", b"(" + big(100_000) + big(100_000) + b"t", 1)
    assert huge != _tensor_pickle(0, (1, 1), (0, 0), 12)
    bomb = _zip_pickle(tmp_path / "bomb.ckpt", huge, {"archive/data/0": data})
    with pytest.raises(CheckpointError, match="more memory than three times the file's size") as e:
        read_checkpoint(bomb)
    assert str(bomb) in str(e.value)
    # the storage record must hold numel elements
    short = _zip_pickle(tmp_path / "short.ckpt", _tensor_pickle(0, (2,), (1,), 12), {"archive/data/0": data[:40]})
    with pytest.raises(CheckpointError, match=r"holds 40 bytes, its tensor 12 x 4"):
        read_checkpoint(short)


def test_budget_is_the_size_on_disk_and_storages_count(tmp_path):
    """The declared sizes of a zip are the file's own claims: an unread, deflated 64 MiB entry
    must not raise the budget (it follows the bytes on disk), and a deflated storage record, which
    could inflate a few kB into gigabytes, is refused (torch writes them uncompressed)."""
    data = np.zeros(12, dtype="<f4").tobytes()

    def big(n):
        return b"J" + struct.pack("<i", n)

    # 5,000 x 5,000 floats (100 MB) from a zero-stride view: under a declared-size budget (2 x 64 MiB
    # of padding) it would have been rebuilt; the file is ~70 kB
    huge = _tensor_pickle(0, (1, 1), (0, 0), 12).replace(b"(K\x01K\x01t", b"(" + big(5_000) + big(5_000) + b"t", 1)
    path = tmp_path / "padded.ckpt"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", huge)
        z.writestr("archive/byteorder", b"little")
        z.writestr("archive/data/0", data)
        z.writestr("archive/padding", bytes(64 << 20), compress_type=zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < 1 << 20
    with pytest.raises(CheckpointError, match="more memory than three times the file's size"):
        read_checkpoint(path)
    # a deflated storage record: refused before anything is inflated
    deflated = tmp_path / "deflated.ckpt"
    with zipfile.ZipFile(deflated, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", _tensor_pickle(0, (12,), (1,), 12))
        z.writestr("archive/byteorder", b"little")
        z.writestr("archive/data/0", data, compress_type=zipfile.ZIP_DEFLATED)
    with pytest.raises(CheckpointError, match="storage record archive/data/0 is compressed") as e:
        read_checkpoint(deflated)
    assert str(deflated) in str(e.value)
    # the same file stored: read
    stored = _zip_pickle(tmp_path / "stored.ckpt", _tensor_pickle(0, (12,), (1,), 12), {"archive/data/0": data})
    _same(read_checkpoint(stored)["w"], np.zeros(12, dtype=np.float32))


def test_bytearray_only_as_pickles_write_it(tmp_path):
    """bytearray(n) would allocate n bytes from a 30-byte pickle: refused; the forms pickle writes
    (protocol 2: bytearray(str, 'latin-1'); 3-4: bytearray(bytes)) are read."""
    bomb = PROTO2 + _global("__builtin__", "bytearray") + b"J\x00\x00\x00\x40\x85R."
    with pytest.raises(CheckpointError, match=r"bytearray is accepted only as") as e:
        read_checkpoint_object(_zip_pickle(tmp_path / "bomb.ckpt", bomb))
    assert str(tmp_path / "bomb.ckpt") in str(e.value)
    for proto in (2, 3, 4):
        pkl = pickle.dumps({"b": bytearray(b"\x00\xffab")}, protocol=proto)
        got = read_checkpoint_object(_zip_pickle(tmp_path / f"ba{proto}.ckpt", pkl))
        assert got == {"b": bytearray(b"\x00\xffab")}


def test_huge_strides_are_a_checkpoint_error(tmp_path):
    """A stride past C long (2**70) with size 1 passes the bounds arithmetic; numpy's OverflowError
    becomes the one-line CheckpointError naming the file, not a traceback."""
    data = np.zeros(12, dtype="<f4").tobytes()
    stride = b"(\x8a\x09" + (1 << 70).to_bytes(9, "little") + b"t"     # LONG1: a 9-byte int
    pkl = _tensor_pickle(0, (1,), (1,), 12).replace(b"(K\x01t\x89", stride + b"\x89", 1)
    assert pkl != _tensor_pickle(0, (1,), (1,), 12)
    path = _zip_pickle(tmp_path / "stride.ckpt", pkl, {"archive/data/0": data})
    with pytest.raises(CheckpointError, match="damaged or unsupported checkpoint pickle") as e:
        read_checkpoint(path)
    assert str(path) in str(e.value)


# --- damaged files ---------------------------------------------------------------------------------

def test_truncated_and_incomplete_checkpoints(tmp_path):
    torch = _torch()
    good = _save({"w": torch.ones(64, 64)}, tmp_path / "good.ckpt")
    raw = good.read_bytes()
    for n, cut in enumerate((len(raw) // 2, len(raw) - 10, 100, 0)):
        path = tmp_path / f"cut{n}.ckpt"
        path.write_bytes(raw[:cut])
        with pytest.raises(CheckpointError, match="not a torch checkpoint zip") as e:
            read_checkpoint(path)
        msg = str(e.value)
        assert msg.startswith(f"{path}: ")
        assert "truncated" in msg
        assert "\n" not in msg

    no_pkl = tmp_path / "no_pkl.ckpt"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(no_pkl, "w") as dst:
        for info in src.infolist():
            if not info.filename.endswith("data.pkl"):
                dst.writestr(info.filename, src.read(info))
    with pytest.raises(CheckpointError, match=r"no <folder>/data\.pkl record") as e:
        read_checkpoint(no_pkl)
    assert str(no_pkl) in str(e.value)

    no_data = tmp_path / "no_data.ckpt"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(no_data, "w") as dst:
        for info in src.infolist():
            if "/data/" not in info.filename:
                dst.writestr(info.filename, src.read(info))
    with pytest.raises(CheckpointError, match=r"storage record good/data/0 is missing") as e:
        read_checkpoint(no_data)
    assert str(no_data) in str(e.value)

    bad_pkl = _zip_pickle(tmp_path / "bad_pkl.ckpt", PROTO2 + b"}(" + _str("a"))  # ends mid-pickle
    with pytest.raises(CheckpointError, match="damaged checkpoint: Ran out of input") as e:
        read_checkpoint(bad_pkl)
    assert str(bad_pkl) in str(e.value)

    with pytest.raises(CheckpointError, match="checkpoint file not found"):
        read_checkpoint(tmp_path / "absent.ckpt")
    with pytest.raises(CheckpointError, match="holds no state dict"):
        read_checkpoint(_zip_pickle(tmp_path / "list.ckpt", PROTO2 + b"]."))


def test_checkpoint_built_without_torch(tmp_path):
    """The reader itself needs no torch: a hand-made checkpoint (the bytes torch writes) reads."""
    data = np.array([1.5, -2.0, 3.25, 0.0], dtype="<f4").tobytes()
    path = _zip_pickle(tmp_path / "m.ckpt", _tensor_pickle(0, (2, 2), (2, 1), 4), {"archive/data/0": data})
    _same(read_checkpoint(path)["w"], np.array([[1.5, -2.0], [3.25, 0.0]], dtype=np.float32))


# --- hparams.yaml ----------------------------------------------------------------------------------

KIWI = """\
activations: Tanh
batch_size: 4
class_identifier: unified_metric
dropout: 0.1
encoder_learning_rate: 1.0e-06
encoder_model: XLM-RoBERTa
final_activation: null
hidden_sizes:
- 3072
- 1024
input_segments:
- mt
- src
keep_embeddings_frozen: true
layer: mix
layer_norm: false
layer_transformation: sparsemax_patch
layerwise_decay: 0.95
learning_rate: 1.5e-05
loss: mse
loss_lambda: 0.65
nr_frozen_epochs: 0.3
optimizer: AdamW
pool: avg
pretrained_model: microsoft/infoxlm-large
sent_layer: mix
train_data:
- data/1720-da.mlqe-src.csv
validation_data:
- data/wmt-ende-newstest2021.csv
- data/wmt-enru-newstest2021.csv
word_layer: 24
word_level_training: false
word_weights:
- 0.15
- 0.85
"""

EXTRA = """\
---
# written by hand
a: 'single # not a comment'   # a comment
b: "tab\\there \\u00e9 \\x41 \\\\ \\" q"
c: [mt, src, 'a,b', 1, 2.5, null]
d: []
e: {}
f:
g:
  - 1
  - two
h: 1e-06
i: 0x1F
j: 017
k: 1_000
l: .inf
m: -.inf
n: +12
o: yes
p: Off
q: ~
r: 0.
s: .5
t: -0.0
u: it's plain
v: 'it''s quoted'
w: [a, b,]
x: 0b101
y: data/1720-da.csv
...
"""


def test_hparams_kiwi_sample(tmp_path):
    (tmp_path / "hparams.yaml").write_text(KIWI)
    hp = read_hparams(tmp_path)
    assert hp["class_identifier"] == "unified_metric"
    assert hp["encoder_learning_rate"] == 1e-06
    assert hp["final_activation"] is None
    assert hp["hidden_sizes"] == [3072, 1024]
    assert hp["input_segments"] == ["mt", "src"]
    assert hp["keep_embeddings_frozen"] is True
    assert hp["layer_norm"] is False
    assert hp["word_weights"] == [0.15, 0.85]
    assert hp["word_layer"] == 24
    assert read_hparams(tmp_path / "hparams.yaml") == hp


@pytest.mark.parametrize("text", [KIWI, EXTRA], ids=["kiwi", "extra"])
def test_hparams_equal_pyyaml(tmp_path, text):
    yaml = pytest.importorskip("yaml", reason="PyYAML is the oracle of the subset parser")
    (tmp_path / "hparams.yaml").write_text(text)
    ours, theirs = read_hparams(tmp_path), yaml.safe_load(text)
    assert list(ours) == list(theirs)
    for k in theirs:
        a, b = ours[k], theirs[k]
        assert type(a) is type(b), (k, a, b)
        if isinstance(b, float) and math.isnan(b):
            assert math.isnan(a)
        else:
            assert a == b, k


@pytest.mark.parametrize(("line", "why"), [
    ("x: !!python/object/apply:os.system ['touch pwned']", "indicators"),
    ("x: &anchor 1", "indicators"),
    ("x: *anchor", "indicators"),
    ("x: |", "indicators"),
    ("x:\n  y: 1", "nested mappings"),
    ("x: a: b", "nested mappings"),
    ("x: {a: 1}", "flow mappings"),
    ("x: [[1]]", "nested"),
    ("x: 2026-11-27", "timestamps"),
    ("x: 1:30", "sexagesimal"),
    ("x: 1\nx: 2", "appears twice"),
    ("x: 'open", "unterminated"),
    ("x: \"bad \\q\"", "unknown escape"),
    ("- 1", "outside"),
    ("x\n", "expected 'key: value'"),
    ("x: 1\n  continued", "multi-line"),
    ("? x\n: 1", "expected 'key: value'"),
])
def test_hparams_outside_the_subset_is_refused(tmp_path, line, why):
    f = tmp_path / "hparams.yaml"
    f.write_text("class_identifier: regression_metric\n" + line + "\n")
    with pytest.raises(CheckpointError, match=why) as e:
        read_hparams(tmp_path)
    first_bad = 2 if line.startswith(("x\n", "?")) else 2 + line.count("\n")  # the file's line of the problem
    assert str(e.value).startswith(f"{f}: line {first_bad}: ")
    assert not (tmp_path / "pwned").exists()


def test_hparams_missing_and_unreadable(tmp_path):
    with pytest.raises(CheckpointError, match=r"hparams\.yaml missing; a COMET model folder holds") as e:
        read_hparams(tmp_path)
    assert str(tmp_path) in str(e.value)
    (tmp_path / "hparams.yaml").write_bytes(b"x: \xff\n")
    with pytest.raises(CheckpointError, match="not UTF-8"):
        read_hparams(tmp_path)

