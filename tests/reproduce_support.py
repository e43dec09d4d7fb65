"""What the ``mtscore reproduce`` tests share: a copy of a release with one file missing, and the
check that the command then fails in one line naming that file and writes nothing."""
from __future__ import annotations

import os
from pathlib import Path

from mtscore.bindings.cli.main import main

__all__ = ["link_all_but", "missing_file_fails"]


def link_all_but(files: list[Path], base: Path, dest: Path, gone: Path) -> Path:
    """``dest`` holding a symbolic link to every file of ``files`` (paths under ``base``, kept at
    the same relative place) except ``gone``; returns where ``gone`` would be in ``dest``."""
    for f in files:
        if f != gone:
            dst = dest / f.relative_to(base)
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(f, dst)
    return dest / gone.relative_to(base)


def missing_file_fails(capsys, paper: str, data: Path, missing: Path, out_parent: Path) -> None:
    """``mtscore reproduce PAPER --data DATA --out OUT_PARENT/out`` exits 1 with one error line
    naming ``missing``, and creates nothing (not even ``out_parent``)."""
    assert main(["reproduce", paper, "--data", str(data), "--out", str(out_parent / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("mtscore reproduce: error: missing data file ")
    assert str(missing) in err
    assert not out_parent.exists()
