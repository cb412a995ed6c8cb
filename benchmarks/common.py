"""Small helpers shared by the benchmarks."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

#: the shared data folder beside the checkout (``PALIMPSEST_SHARED_DATA`` names another, e.g. from a worktree)
SHARED_DATA = Path(os.environ.get("PALIMPSEST_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
#: public data of the method papers, fetched beside the checkout (never shipped, never committed):
#: ``ext/gpt4-books`` is a clone of bamman-group/gpt4-books (``PALIMPSEST_EXTERNAL_DATA`` names another folder)
EXTERNAL_DATA = Path(os.environ.get("PALIMPSEST_EXTERNAL_DATA") or Path(__file__).resolve().parents[1].parent / "ext")
GPT4_BOOKS = EXTERNAL_DATA / "gpt4-books"


def missing_data(name: str, path: Path, how: str) -> dict[str, Any] | None:
    """A skipped line saying what data a benchmark needs and where it looked, or None when ``path`` exists."""
    if path.exists():
        return None
    return skipped(name, f"needs {how}; looked in {path}")


def line(name: str, value: float, unit: str, goal: str, passed: bool, **extra: Any) -> dict[str, Any]:
    return {"name": name, "value": round(float(value), 4), "unit": unit, "goal": goal, "pass": bool(passed), **extra}


def skipped(name: str, reason: str) -> dict[str, Any]:
    return {"name": name, "value": None, "unit": "", "goal": "", "pass": True, "skipped": reason}


class Timer:
    def __enter__(self) -> "Timer":
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self.start


def qt_application():
    """The (offscreen) QApplication for the GUI benchmarks; None when the GUI extra is not installed."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from PySide6.QtWidgets import QApplication
    except ImportError:
        return None
    return QApplication.instance() or QApplication([])
