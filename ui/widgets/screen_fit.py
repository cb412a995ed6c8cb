"""Windows open at a comfortable size that still fits the screen they open on (a 1024 x 700 laptop too)."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

SCREEN_SHARE = 0.92  # leave a margin for the title bar and the task bar


def resize_to_fit(widget: QWidget, width: int, height: int) -> None:
    """``widget.resize(width, height)``, made smaller where the screen is smaller (never below its minimum)."""
    screen = widget.screen() if widget.screen() is not None else QGuiApplication.primaryScreen()
    if screen is not None:
        room = screen.availableGeometry()
        width = min(width, int(room.width() * SCREEN_SHARE))
        height = min(height, int(room.height() * SCREEN_SHARE))
    minimum = widget.minimumSizeHint()
    widget.resize(max(width, minimum.width()), max(height, minimum.height()))
