"""A chart's figure turned into the pixels of a screen: in this process, or in a drawing process of its own.

Turning a figure into pixels (matplotlib's Agg renderer) takes 0.2-0.6 s for a chart of 5,700 passages, in steps
of C that hold the interpreter's lock, and the laying out of its texts besides. On a worker thread of the desktop
app this froze the window: its thread needs that lock at each of the hundreds of calls into Python with which it
paints a table, and each time waited for the drawing worker (a table painted in 200 ms instead of 30 while two
charts were drawn). ``rasterize_apart`` sends the figure, pickled (some 60 KB, whatever the number of points
behind it), to a process that does nothing but draw, and gets back the pixels and where the chart's marks ended up
on them; this process keeps the figure and its marks (their hover texts are written here, when asked for) and
waits for the drawing without holding the lock. A figure that cannot be pickled, or a drawing process that
failed, is drawn here instead (``rasterize``): the same pixels either way (tested), ``Raster.where`` says which.

The processes are started with "spawn" (a fork of a program running Qt's threads is unsafe), at most
``DRAWERS``, when first needed or by ``start_drawers`` (the desktop app, while its window opens).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.export.registry import Marks

log = logging.getLogger(__name__)

SCREEN_DPI = 96.0  # a figure's points on screen: 10 pt text is 13 pixels high
SMALLEST_DPI = 64.0  # in a small view the figure keeps its publication layout down to this
DRAWERS = 2  # drawing processes at most: a tab shows two charts side by side
DRAWING_TIMEOUT_S = 120.0  # a drawing process silent this long is given up on (the figure is drawn here)
PARENT_CHECK_S = 2.0  # how often a drawing process looks whether the program that started it still runs


@dataclass
class Raster:
    """A figure's pixels (rows x columns x RGBA, device pixels) and, for each set of marks, their points (n x 2)
    in logical pixels from the top left and, for boxes, their left, top, right and bottom (n x 4; None for
    points). ``where``: 'apart' (a drawing process) or 'here'."""

    pixels: np.ndarray
    points: list[np.ndarray] = field(default_factory=list)
    boxes: list[np.ndarray | None] = field(default_factory=list)
    where: str = "here"


@dataclass(frozen=True)
class Place:
    """Where a set of marks is in data coordinates: on the figure's axes number ``axes`` (or, drawn in this
    process, on those axes themselves), points at (x, y) or, with ``x2`` and ``y2``, boxes from (x, y) to (x2, y2)."""

    axes: Any
    x: np.ndarray
    y: np.ndarray
    x2: np.ndarray | None = None
    y2: np.ndarray | None = None


def screen_dpi(publication: tuple[float, float], width: int, height: int) -> float:
    """The figure's dots per inch on screen: as a screen shows points (``SCREEN_DPI``) where the view has room
    for the publication figure, else smaller (down to ``SMALLEST_DPI``), so that a small view shows the
    publication layout in small rather than crushes it."""
    fits = min(width / max(publication[0], 0.1), height / max(publication[1], 0.1))
    return float(min(SCREEN_DPI, max(SMALLEST_DPI, fits)))


def places(figure: "Figure", marks: Sequence["Marks"], numbered: bool = True) -> list[Place] | None:
    """The marks' positions, their axes by number (``numbered``; None when a set sits on axes the figure does
    not list, an inset: only a drawing in this process knows where it went) or themselves."""
    found = []
    for mark in marks:
        if numbered and mark.ax not in figure.axes:
            return None
        axes = figure.axes.index(mark.ax) if numbered else mark.ax
        x = np.asarray(mark.x, dtype=float).reshape(-1)
        y = np.asarray(mark.y, dtype=float).reshape(-1)
        if mark.boxes:
            found.append(Place(axes, x, y, x + np.asarray(mark.width, dtype=float).reshape(-1),
                               y + np.asarray(mark.height, dtype=float).reshape(-1)))
        else:
            found.append(Place(axes, x, y))
    return found


def _pixels(ax, x: np.ndarray, y: np.ndarray, height: int, ratio: float) -> np.ndarray:
    points = ax.transData.transform(np.column_stack([x, y])) / ratio
    points[:, 1] = height - points[:, 1]
    return points


def _draw(figure: "Figure", spots: Sequence[Place], width: int, height: int, ratio: float) -> Raster:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    dpi = screen_dpi(tuple(figure.get_size_inches()), width, height)
    figure.set_size_inches(width / dpi, height / dpi)
    figure.set_dpi(dpi * ratio)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    raster = Raster(np.asarray(canvas.buffer_rgba()))
    for spot in spots:
        ax = figure.axes[spot.axes] if isinstance(spot.axes, int) else spot.axes
        corner = _pixels(ax, spot.x, spot.y, height, ratio)
        if spot.x2 is None:
            raster.points.append(corner)
            raster.boxes.append(None)
            continue
        far = _pixels(ax, spot.x2, spot.y2, height, ratio)
        raster.points.append((corner + far) / 2)
        raster.boxes.append(np.column_stack([np.minimum(corner[:, 0], far[:, 0]), np.minimum(corner[:, 1], far[:, 1]),
                                             np.maximum(corner[:, 0], far[:, 0]), np.maximum(corner[:, 1], far[:, 1])]))
    return raster


def rasterize(figure: "Figure", marks: Sequence["Marks"], width: int, height: int, ratio: float = 1.0) -> Raster:
    """``figure`` drawn in this process at ``width`` x ``height`` logical pixels (times ``ratio`` device pixels),
    with its marks' places on the image."""
    return _draw(figure, places(figure, marks, numbered=False), width, height, ratio)


# ---------------------------------------------------------------------------------------------- apart
def _drawn_apart(pickled: bytes, spots: list[Place], width: int, height: int, ratio: float) -> Raster:
    """In a drawing process: the figure unpickled and drawn."""
    raster = _draw(pickle.loads(pickled), spots, width, height, ratio)
    raster.pixels = np.ascontiguousarray(raster.pixels)  # the renderer's buffer itself does not travel
    raster.where = "apart"
    return raster


def _end_with_parent(parent: int) -> None:
    """In a drawing process: end when the program that started it has ended, however it ended (killed, crashed),
    so that no drawing process outlives the window."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


def _load_renderer() -> None:
    """A drawing process's start: matplotlib's renderer loaded before the first figure arrives."""
    threading.Thread(target=_end_with_parent, args=(os.getppid(),), daemon=True).start()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401


def _ready() -> int:
    return os.getpid()


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _drawers() -> ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=max(1, min(DRAWERS, os.cpu_count() or 1)),
                                        mp_context=multiprocessing.get_context("spawn"), initializer=_load_renderer)
        return _pool


def _forget(pool: ProcessPoolExecutor) -> None:
    """A pool whose process died (or hung) is shut down; the next drawing starts a new one."""
    global _pool
    with _pool_lock:
        if _pool is pool:
            _pool = None
    for process in list((pool._processes or {}).values()):
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def start_drawers(count: int = 1) -> list[int]:
    """Start ``count`` drawing processes (more start when charts are drawn side by side) and load the renderer
    in them, so that the first chart does not wait for that (1-2 s); the ids of the processes that answered.
    Blocks until they are ready: call it on a worker. One at the app's start: each takes a core for a second
    while it loads matplotlib, and a laptop of two cores is busy enough then."""
    pool = _drawers()
    return sorted({future.result() for future in [pool.submit(_ready) for _ in range(count)]})


def stop_drawers() -> None:
    """Stop the drawing processes (they are started again when next needed)."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def rasterize_apart(figure: "Figure", marks: Sequence["Marks"], width: int, height: int,
                    ratio: float = 1.0) -> Raster:
    """``rasterize`` in a drawing process: the window's process only pickles the figure and waits (without the
    interpreter's lock). Drawn here when the figure cannot be pickled, its marks sit on an inset, or the drawing
    process fails; a ``UserError`` raised while drawing comes back as itself."""
    from workbench.errors import UserError

    spots = places(figure, marks)
    if spots is None:
        return rasterize(figure, marks, width, height, ratio)
    try:
        pickled = pickle.dumps(figure, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 (a formatter made of a lambda, a library's object that will not pickle)
        log.info("drawing a figure in this process: it does not pickle (%s)", exc)
        return rasterize(figure, marks, width, height, ratio)
    pool = _drawers()
    try:
        return pool.submit(_drawn_apart, pickled, spots, width, height, ratio).result(timeout=DRAWING_TIMEOUT_S)
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 (a process that died or hung: drawn here, a new process next time)
        log.warning("the drawing process failed (%s); the figure is drawn in this process", exc)
        _forget(pool)
        return rasterize(figure, marks, width, height, ratio)

