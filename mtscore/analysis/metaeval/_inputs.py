"""Input checking, grouping by ``average_by`` and the random streams of the kernels."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AnalysisInputError

__all__ = ["Stream", "as_scores", "groups"]

AVERAGE_BY = ("none", "sys", "item")


def as_scores(human, *metrics, names: tuple[str, ...] = ()) -> tuple[np.ndarray, ...]:
    """``human`` (S, N) float64 (NaN = no human score) and metrics of the same shape; a 1-D
    input is one row (S = 1, used for system-level vectors). Metrics must be finite wherever
    the human score is present."""
    h = np.asarray(human, dtype=np.float64)
    if h.ndim == 1:
        h = h[None, :]
    if h.ndim != 2:
        raise AnalysisInputError(f"human scores have shape {h.shape}: need (systems, items) or (n,)")
    out = [h]
    for k, m in enumerate(metrics):
        a = np.asarray(m, dtype=np.float64)
        if a.ndim == 1:
            a = a[None, :]
        name = names[k] if k < len(names) else f"metric {k + 1}"
        if a.shape != h.shape:
            raise AnalysisInputError(f"{name} has shape {a.shape}, human scores {h.shape}: they must match")
        bad = ~np.isfinite(a) & ~np.isnan(h)
        if bad.any():
            s, i = np.argwhere(bad)[0]
            raise AnalysisInputError(f"{name} is not finite at system {s}, item {i} where a human score "
                                     f"exists: give every scored cell a metric score (or drop the cell)")
        out.append(a)
    return tuple(out)


def groups(h: np.ndarray, average_by: str) -> tuple[np.ndarray, np.ndarray]:
    """Flat positions (into the system-major flattening of ``h``) of the scored cells, grouped
    as mt-metrics-eval does for ``average_by`` ('none': one group; 'sys': one per system row;
    'item': one per item column, systems in order), and the group offsets (G+1,) int64.
    Groups with fewer than two cells carry no pair and are dropped."""
    if average_by not in AVERAGE_BY:
        raise AnalysisInputError(f"average_by={average_by!r}: use one of {', '.join(AVERAGE_BY)}")
    S, N = h.shape
    pos = np.arange(S * N, dtype=np.int64).reshape(S, N)
    ok = ~np.isnan(h)
    if average_by == "none":
        rows = [pos[ok]]
    elif average_by == "sys":
        rows = [pos[s][ok[s]] for s in range(S)]
    else:
        rows = [pos[:, j][ok[:, j]] for j in range(N)]
    rows = [r for r in rows if r.shape[0] >= 2]
    if not rows:
        raise AnalysisInputError("no group has two scored cells: nothing to compare")
    offs = np.zeros(len(rows) + 1, np.int64)
    offs[1:] = np.cumsum([r.shape[0] for r in rows])
    return np.concatenate(rows), offs


class Stream:
    """The random stream of a permutation kernel.

    ``kind='fast'`` (default): a xoshiro256** stream seeded from ``seed`` (None: fresh entropy),
    one random bit per swap. ``kind='legacy'``: replays NumPy's legacy MT19937 generator exactly
    as mt-metrics-eval consumes it (``np.random.binomial(1, 0.5, ...)``); with ``seed`` it starts
    from ``np.random.RandomState(seed)``, without one it continues (and advances) the global
    ``np.random`` state, so results equal mt-metrics-eval's run after ``np.random.seed(s)``.
    """

    def __init__(self, kind: str = "fast", seed: int | None = None):
        if kind not in ("fast", "legacy"):
            raise AnalysisInputError(f"stream={kind!r}: use 'fast' or 'legacy'")
        self.kind = kind
        self.mode = 0 if kind == "legacy" else 1
        self._global = kind == "legacy" and seed is None
        if kind == "legacy":
            # The legacy stream is mt-metrics-eval's global np.random state on purpose (its results
            # are reproduced only from that state), so NPY002 does not apply here.
            state: Any = (np.random.get_state() if seed is None  # noqa: NPY002
                          else np.random.RandomState(seed).get_state())
            self.key = np.asarray(state[1], dtype=np.int64).copy()
            self.st = np.array([state[2]], dtype=np.int64)
        else:
            self.key = np.zeros(624, np.int64)
            self.st = np.zeros(1, np.int64)
        ss = np.random.SeedSequence(seed)
        xs = ss.generate_state(4, np.uint64)
        if not xs.any():
            xs[0] = 1
        self.xs = xs

    def commit(self) -> None:
        """Write the advanced legacy state back to ``np.random`` (global stream only)."""
        if self._global:
            # Writes back mt-metrics-eval's global legacy stream on purpose (NPY002 does not apply).
            old: Any = np.random.get_state()  # noqa: NPY002
            np.random.set_state(("MT19937", self.key.astype(np.uint32), int(self.st[0]), int(old[3]), float(old[4])))  # noqa: NPY002
