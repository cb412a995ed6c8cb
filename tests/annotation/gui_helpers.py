"""Driving the Annotate page in a real main window (offscreen)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt

from ui.main_window import MainWindow


def open_window(qtbot, project_path: Path, settings_dir: Path) -> MainWindow:
    settings = QSettings(str(settings_dir / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    assert window.open_project(project_path)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    return window


def start(qtbot, window: MainWindow, task_name: str, annotator: str):
    page = window.show_page("annotate")
    page.task_combo.setCurrentIndex(page.task_combo.findText(task_name))
    index = page.annotator_combo.findText(annotator)
    if index < 0:
        page.new_annotator.setText(annotator)
        page.add_annotator()
    else:
        page.annotator_combo.setCurrentIndex(index)
    page.start_button.click()
    assert page.session is not None
    qtbot.waitUntil(lambda: page.screens.currentWidget() is page.session_view)
    return page


def key(qtbot, widget, k, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(widget, k, modifier)


def close(qtbot, window, timeout_ms: int = 30_000):
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=timeout_ms)  # other pages may still be counting words
    window.close()
