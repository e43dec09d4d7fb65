"""Process-wide thread pools for the compiled metrics: the kernels release the GIL, so threads
scale; pools are started once per size (starting threads per call costs ~2 ms each) and joined by
:func:`shutdown_pools` (the CLI does so before exiting, so a Ctrl-C there is not a traceback from
the threading module). Imports nothing from the package."""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Callable


def chunk_bounds(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ``(start, stop)`` ranges covering ``range(n)``, sizes within one."""
    parts = max(1, min(parts, n)) if n else 1
    edges = [n * i // parts for i in range(parts + 1)]
    return list(zip(edges[:-1], edges[1:]))


def resolve_workers(workers) -> int:
    if workers in (None, 0):
        return os.cpu_count() or 1
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    return int(workers)


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()
_IN_POOL = threading.local()


def get_pool(threads: int) -> ThreadPoolExecutor:
    """A process-wide pool of ``threads`` threads (starting threads per call cost ~2 ms each)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = ThreadPoolExecutor(max_workers=threads,
                                                        thread_name_prefix="mtscore")
        return pool


def shutdown_pools() -> None:
    """Join and drop the process-wide pools (idle threads otherwise wait to be joined at
    interpreter exit, where a Ctrl-C prints a traceback from the threading module)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.shutdown(wait=True)


def _in_pool(fn: Callable, x):
    _IN_POOL.active = True
    return fn(x)


def run_parallel(fn: Callable, items: Sequence, workers: int) -> list:
    """``[fn(x) for x in items]`` on up to ``workers`` threads: the calling thread takes the
    first item, a shared pool the others. Calls made from a pool thread run serially (a task
    waiting on the pool it occupies could otherwise deadlock)."""
    if workers <= 1 or len(items) <= 1 or getattr(_IN_POOL, "active", False):
        return [fn(x) for x in items]
    k = min(workers, len(items))
    if k < len(items):  # more items than threads: the pool alone, k threads
        return list(get_pool(k).map(_in_pool, [fn] * len(items), items))
    pool = get_pool(k - 1)
    futures = [pool.submit(_in_pool, fn, x) for x in items[1:]]
    try:
        first = fn(items[0])
    finally:
        results = [f.result() for f in futures]
    return [first, *results]
