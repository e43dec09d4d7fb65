"""Lazy access to the Numba kernels: Numba is an optional extra and is imported only here,
on the first call of a meta-evaluation statistic (never by ``import mtscore``)."""
from __future__ import annotations

import importlib
from types import ModuleType

from ...engine.missing_extra import MissingExtraError, install_hint

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The compiled kernel module; raises :class:`MissingExtraError` naming the install command
    when Numba is missing."""
    try:
        importlib.import_module("numba")
    except ImportError as exc:
        raise MissingExtraError(
            f"the meta-evaluation statistics (mtscore.analysis.metaeval) run on Numba, which is not "
            f"installed: {install_hint('metaeval')}") from exc
    return importlib.import_module(f"{__package__}._kernels")
