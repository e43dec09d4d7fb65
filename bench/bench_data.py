"""Shared by the bench scripts: where the shared WMT data is and how its text files are read.

``python bench/bench_x.py`` puts bench/ first on ``sys.path``, so scripts import this module as
``from bench_data import data_dir, read_lines``."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """``$MTSCORE_DATA``, default ``../shared/data`` beside the repository."""
    return Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")).resolve()


def read_lines(p: Path):
    """The lines of a text file without their newlines (no empty last line for the final one)."""
    lines = p.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def cpu_model(default: str = "") -> str:
    """The CPU's model name from /proc/cpuinfo (``default`` where there is none)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return default


def cpu(fn):
    """``(CPU seconds of this process while fn() ran, fn's result)``."""
    import time

    t0 = time.process_time()
    r = fn()
    return time.process_time() - t0, r


def shared_machine() -> str:
    """One line for a results file: CPU, cores, the load average at the start, Python."""
    import platform

    return (f"{cpu_model(platform.processor() or platform.machine())}, {os.cpu_count()} cores "
            f"(shared with other jobs; load average {os.getloadavg()[0]:.2f} at the start), "
            f"Python {platform.python_version()}")
