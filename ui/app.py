"""Starting the desktop app, and rendering a page to PNG for documentation and tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from workbench.errors import UserError


def _application():
    from PySide6.QtWidgets import QApplication

    from ui.main_thread_gc import MainThreadGarbageCollector

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("Palimpsest")
        app.setOrganizationName("Palimpsest")
        app.garbage_collector = MainThreadGarbageCollector(app)
        # A worker busy in Python (an import, a statistic) hands the interpreter back to the window every
        # millisecond instead of every five: a repaint needs it dozens of times, so it no longer stutters.
        sys.setswitchinterval(0.001)
    return app


def wait_until_idle(window, timeout_s: float = 60.0) -> None:
    """Process events until the window's background work has finished and stayed finished for a moment
    (one result often starts the next read, and layouts settle over a few rounds), or the timeout passes."""
    import time

    from PySide6.QtWidgets import QApplication

    deadline = time.monotonic() + timeout_s
    idle_since = None
    while time.monotonic() < deadline:
        QApplication.processEvents()
        if window.ops.busy:
            idle_since = None
        elif idle_since is None:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= 0.25:
            return
        time.sleep(0.02)


#: shared libraries Qt's X11 window plugin loads on Linux -> the Debian/Ubuntu package that has each
X11_LIBRARIES = {
    "xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4", "xcb-keysyms": "libxcb-keysyms1",
    "xcb-image": "libxcb-image0", "xcb-render-util": "libxcb-render-util0", "xcb-shape": "libxcb-shape0",
    "xcb-randr": "libxcb-randr0", "xcb-xkb": "libxcb-xkb1", "xkbcommon-x11": "libxkbcommon-x11-0",
}


def check_window_libraries() -> None:
    """Qt ends the whole program, with a message about "platform plugins", when a library its X11 plugin
    needs is missing; say instead which ones to install."""
    if (not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM")
            or os.environ.get("WAYLAND_DISPLAY") or not os.environ.get("DISPLAY")):
        return
    import ctypes.util

    missing = [package for library, package in X11_LIBRARIES.items() if ctypes.util.find_library(library) is None]
    if missing:
        raise UserError(
            f"Palimpsest cannot open its window: this computer lacks system libraries that Qt needs to draw "
            f"windows ({', '.join(missing)}). Install them (on Debian or Ubuntu: sudo apt install "
            f"{' '.join(missing)}; other systems name them similarly), then start Palimpsest again."
        )


def run_app(project: Path | None = None, page: str | None = None, screenshot: Path | None = None,
            size: str = "1280x800") -> int:
    if screenshot is not None and not os.environ.get("DISPLAY") and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    check_window_libraries()
    app = _application()
    from ui.main_window import MainWindow

    window = MainWindow()
    try:
        if project is not None and not window.open_project(Path(project)) and screenshot is not None:
            raise UserError(f"Could not open {project}.")
        if page:
            window.show_page(page)
        if screenshot is not None:
            try:
                width, height = (int(v) for v in size.lower().split("x"))
            except ValueError:
                raise UserError(f"'{size}' is not a window size: write it as WIDTHxHEIGHT, e.g. 1280x800.") from None
            window.resize(width, height)
            window.show()
            wait_until_idle(window)
            screenshot = Path(screenshot)
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            if not window.grab().save(str(screenshot)):
                raise UserError(f"Could not write the screenshot to {screenshot}.")
            print(f"Saved {screenshot}.")
            return 0
        window.show()
        return app.exec()
    finally:
        window.shutdown()
