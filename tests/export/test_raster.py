"""Charts' pixels drawn in a drawing process (``workbench.export.raster``): the same image and the same places of
the marks as drawn in this process; a figure that will not pickle, and a drawing process that died, are drawn
here instead."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from workbench.export import raster
from workbench.export.registry import Marks


def chart() -> tuple[Figure, list[Marks]]:
    """A scatter of 2,000 points and a panel of bars: marks of both kinds, on two axes, one axis logarithmic."""
    rng = np.random.default_rng(3)
    figure = Figure(figsize=(6.0, 3.5), layout="constrained")
    points, bars = figure.subplots(1, 2)
    x, y = rng.uniform(1, 100, 2000), rng.uniform(0, 1, 2000)
    points.scatter(x, y, s=6)
    points.set_xscale("log")
    points.set_title("Points")
    heights = np.array([0.2, 0.5, 0.9])
    bars.bar([0, 1, 2], heights, width=0.8)
    return figure, [Marks(points, x, y, text=lambda i: f"point {i}"),
                    Marks(bars, np.array([-0.4, 0.6, 1.6]), np.zeros(3), text=lambda i: f"bar {i}",
                          width=np.full(3, 0.8), height=heights)]


def same(first: raster.Raster, second: raster.Raster) -> None:
    assert first.pixels.shape == second.pixels.shape
    assert np.array_equal(first.pixels, second.pixels)
    assert len(first.points) == len(second.points) == 2
    for a, b in zip(first.points, second.points):
        np.testing.assert_allclose(a, b)
    assert first.boxes[0] is None and second.boxes[0] is None
    np.testing.assert_allclose(first.boxes[1], second.boxes[1])


def test_a_figure_drawn_apart_is_the_figure_drawn_here():
    here = raster.rasterize(*chart(), 700, 420, 2.0)
    apart = raster.rasterize_apart(*chart(), 700, 420, 2.0)
    assert (here.where, apart.where) == ("here", "apart")
    assert apart.pixels.shape == (840, 1400, 4)  # device pixels: twice the logical size
    same(here, apart)
    # the marks land where the image shows them: a bar's box holds its middle, inside the image's logical size
    box = apart.boxes[1][2]
    assert box[0] < apart.points[1][2][0] < box[2] and box[1] < apart.points[1][2][1] < box[3]
    assert box[0] >= 0 and box[2] <= 700 and box[1] >= 0 and box[3] <= 420


def test_a_figure_that_does_not_pickle_is_drawn_here():
    figure, marks = chart()
    figure.axes[1].yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.0%}"))  # a lambda: no pickle
    drawn = raster.rasterize_apart(figure, marks, 500, 300)
    assert drawn.where == "here"
    expected, marks = chart()
    expected.axes[1].yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.0%}"))
    same(raster.rasterize(expected, marks, 500, 300), drawn)


def test_a_drawing_process_that_died_is_replaced():
    pids = raster.start_drawers(2)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    first = raster.rasterize_apart(*chart(), 400, 300)  # the pool finds its process gone: drawn here
    assert first.where == "here"
    second = raster.rasterize_apart(*chart(), 400, 300)  # a new drawing process
    assert second.where == "apart"
    assert set(raster.start_drawers(2)).isdisjoint(pids)
    same(first, second)


@pytest.fixture(autouse=True)
def _fresh_drawers():
    yield
    raster.stop_drawers()


def test_drawing_processes_end_with_the_program_that_started_them(tmp_path):
    import subprocess
    import sys
    import time

    script = tmp_path / "starts_drawers.py"
    script.write_text("import os, sys\n"
                      "from workbench.export import raster\n"
                      "if __name__ == '__main__':\n"
                      "    print(*raster.start_drawers(2), flush=True)\n"
                      "    os.kill(os.getpid(), 9)\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    pids = [int(pid) for pid in done.stdout.split()]
    assert pids and done.returncode == -9  # killed: no chance to stop its drawing processes itself
    deadline = time.monotonic() + 3 * raster.PARENT_CHECK_S + 5
    while time.monotonic() < deadline and any(map(alive, pids)):
        time.sleep(0.2)
    assert not [pid for pid in pids if alive(pid)]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
