"""The large libraries the analyses and charts use, loaded ahead of need.

Charts (matplotlib), statistics (scipy.stats, statsmodels) and every part's chart declarations are otherwise
imported on first use: by whichever page first draws a chart or tests a difference. Importing them takes 3-5 s
of a worker's time, much of it in steps that hold the interpreter's lock (reading compiled code, starting C
extensions), so the window stutters (120-530 ms measured on the Leakage page's first tab at 5,700 passages)
exactly when the scholar has clicked something. The desktop app loads them once at start on a worker
(``load_libraries``), and starts the processes that draw the charts' pixels (``workbench.export.raster``); a
command-line call has no window to keep responsive and keeps importing on demand.
"""

from __future__ import annotations

import importlib

#: imported in this order; each is cached by Python after the first import, so a second call costs nothing
LIBRARIES = ("matplotlib.figure", "matplotlib.backends.backend_agg", "scipy.stats", "statsmodels.api")


def load_libraries(state=None) -> list[str]:
    """Import the analysis libraries and every part's chart declarations, and start a drawing process; the names
    imported. ``state`` is the background operation's (unused: the import cannot be cut short)."""
    from workbench.export import raster, registry

    for name in LIBRARIES:
        importlib.import_module(name)
    registry.charts()  # loads every part's chart module (and with it the probe's analysis modules)
    raster.start_drawers()
    return list(LIBRARIES)
