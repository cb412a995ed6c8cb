"""The main window: a navigation bar of pages, the File menu, the project's name in the title."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QScrollArea,
    QStackedWidget,
    QWidget,
)

from ui import dialogs
from ui.background import BackgroundOps
from ui.main_thread_gc import freeze_libraries, libraries_loading
from ui.welcome import WelcomePanel
from ui.widgets.page import Page
from workbench import parts
from workbench.errors import UserError
from workbench.export.libraries import load_libraries
from workbench.project import SUFFIX, Project, with_project_suffix

log = logging.getLogger(__name__)

MAX_RECENT = 8
LIBRARIES_AFTER_MS = 300  # the libraries of charts and statistics start loading this long after the window shows
NAV_WIDTH = 150  # narrow enough to leave the pages room on a 1024-pixel laptop screen
NAV_STYLE = """
QListWidget#navigation { background: #2f3640; border: none; padding-top: 8px; font-size: 11pt; outline: 0; }
QListWidget#navigation::item { color: #dcdde1; padding: 10px 14px; }
QListWidget#navigation::item:selected { background: #40739e; color: white; }
QListWidget#navigation::item:hover:!selected { background: #353b48; }
QListWidget#navigation::item:disabled { color: #7f8c8d; }
QListWidget#navigation::item:selected:disabled { background: #2f3640; }
"""
FILE_FILTER = f"Palimpsest projects (*{SUFFIX});;All files (*)"


def load_page_class(spec: str) -> type[Page]:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


class _Outcome:
    """What a piece of work the window waits for came to: its result, or the message of its failure."""

    def __init__(self) -> None:
        self.result: Any = None
        self.error: str | None = None

    def done(self, result: Any) -> None:
        self.result = result

    def failed(self, message: str, details: str) -> None:
        self.error = message


class _InputHeld(QObject):
    """Swallows the clicks and keys meant for the program while it cannot take them (a project opening)."""

    HELD = {QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease, QEvent.Type.MouseButtonDblClick,
            QEvent.Type.KeyPress, QEvent.Type.KeyRelease, QEvent.Type.Wheel, QEvent.Type.Shortcut,
            QEvent.Type.ShortcutOverride}

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        return event.type() in self.HELD


def _scrollable(page: Page) -> QScrollArea:
    """Pages scroll rather than force the window wider or taller than a small laptop screen."""
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area


class MainWindow(QMainWindow):
    project_changed = Signal(object)  # Project | None

    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.settings = settings or QSettings("Palimpsest", "Palimpsest")
        self.project: Project | None = None
        self.ops = BackgroundOps(self)
        self.message_gate = dialogs.MessageGate(self)  # found by ``ui.dialogs`` through the pages' parents
        self.message_gate.waiting_changed.connect(self._messages_waiting)
        self.pages: dict[str, Page] = {}

        self.nav = QListWidget()
        self.nav.setObjectName("navigation")
        self.nav.setFixedWidth(NAV_WIDTH)
        self.nav.setStyleSheet(NAV_STYLE)
        self.stack = QStackedWidget()
        for spec in parts.pages():
            key, title = spec.key, spec.title
            page = load_page_class(spec.widget)(self.ops, self)
            page.key, page.title = key, title
            page.blinded_changed.connect(self._apply_blinding)
            self.pages[key] = page
            self.stack.addWidget(_scrollable(page))
            item = QListWidgetItem(title)
            item.setData(Qt.ItemDataRole.UserRole, key)
            self.nav.addItem(item)
        self.nav.currentRowChanged.connect(self._on_nav)

        self.welcome = WelcomePanel()
        self.welcome.new_requested.connect(self.new_project)
        self.welcome.open_requested.connect(self.open_project_dialog)
        self.welcome.recent_chosen.connect(lambda path: self.open_project(Path(path)))
        self.content = QStackedWidget()  # the welcome panel while no project is open, else the pages
        self.content.addWidget(self.welcome)
        self.content.addWidget(self.stack)

        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.nav)
        layout.addWidget(self.content, 1)
        self.setCentralWidget(central)

        self.status_label = QLabel("")
        self.statusBar().addPermanentWidget(self.status_label)
        self.ops.changed.connect(self._update_busy)

        self._build_menus()
        self.nav.setCurrentRow(0)
        self._show_welcome_if_closed()
        self.resize(1280, 800)
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        self._update_title()
        self._libraries_asked = False

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        if not self._libraries_asked:  # once the window is on screen: it opens without them, as quickly as before
            self._libraries_asked = True
            QTimer.singleShot(LIBRARIES_AFTER_MS, self._load_libraries)

    def _load_libraries(self) -> None:
        """The chart and statistics libraries loaded on a worker while the window is new, not by the first chart
        or statistic a page asks for (``workbench.export.libraries``)."""
        libraries_loading()
        self.ops.run(load_libraries, label="Loading the chart and statistics libraries", background_read=True,
                     on_done=self._libraries_loaded, on_error=self._libraries_failed)

    def _libraries_loaded(self, _names: list[str]) -> None:
        freeze_libraries()

    def _libraries_failed(self, message: str, details: str) -> None:
        freeze_libraries()  # what did load
        log.warning("The chart and statistics libraries could not be loaded at start (each page will load what "
                    "it needs): %s\n%s", message, details)

    # ------------------------------------------------------------------ menus
    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.action_new = self._action(file_menu, "&New project…", self.new_project, QKeySequence.StandardKey.New)
        self.action_open = self._action(file_menu, "&Open project…", self.open_project_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.action_save_as = self._action(file_menu, "Save project &as…", self.save_as_dialog, QKeySequence.StandardKey.SaveAs)
        self.action_close = self._action(file_menu, "&Close project", self.close_project)
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        self._refresh_recent_menu()
        # every page one key away (Ctrl+1 … Ctrl+7), listed in the Go menu and on the navigation bar
        self.go_menu = self.menuBar().addMenu("&Go")
        self.go_actions: dict[str, QAction] = {}
        for number, (key, page) in enumerate(self.pages.items(), start=1):
            title = page.title
            shortcut = QKeySequence(f"Ctrl+{number}") if number <= 9 else None
            action = self._action(self.go_menu, title, lambda _=False, k=key: self._go(k), shortcut)
            self.go_actions[key] = action
            item = self.nav.item(number - 1)
            if shortcut is not None and item is not None:
                item.setToolTip(f"{title} ({shortcut.toString(QKeySequence.SequenceFormat.NativeText)})")
        self.go_menu.aboutToShow.connect(self._update_go_menu)

    def _go(self, key: str) -> None:
        """A Go menu choice or its key: only while the navigation bar itself may be used (not during a blinded
        session, nor before a project is open)."""
        if self.nav.isEnabled():
            self.show_page(key)

    def _update_go_menu(self) -> None:
        for action in self.go_actions.values():
            action.setEnabled(self.nav.isEnabled())

    def _action(self, menu, text, slot, shortcut=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    # ------------------------------------------------------------------ recent files
    def recent_projects(self) -> list[str]:
        value = self.settings.value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [p for p in (value or []) if p]

    def _remember_recent(self, path: Path) -> None:
        path = Path(path).resolve()
        items = [str(path)] + [p for p in self.recent_projects() if p != str(path)]
        self.settings.setValue("recent", items[:MAX_RECENT])
        self._refresh_recent_menu()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        self.recent_menu.menuAction().setVisible(not self.blinded)
        if self.blinded:  # recent file names may name books or conditions
            return
        recent = self.recent_projects()
        self.welcome.show_recent(recent)
        for path in recent:
            action = self.recent_menu.addAction(Path(path).name)
            action.setToolTip(path)
            action.triggered.connect(lambda _=False, p=path: self.open_project(Path(p)))
        self.recent_menu.setEnabled(bool(recent))

    # ------------------------------------------------------------------ project lifecycle
    def new_project(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "New project", str(Path.home() / f"study{SUFFIX}"), FILE_FILTER)
        if not path or not self._confirm_leave():
            return
        try:
            project = Project.create(path, overwrite=True)
        except UserError as exc:
            self._error(str(exc))
            return
        self._set_project(project)

    def open_project_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open project", str(Path.home()), FILE_FILTER)
        if path:
            self.open_project(Path(path))

    def open_project(self, path: Path) -> bool:
        if not self._confirm_leave():
            return False
        try:
            project = self._opened_off_the_gui_thread(Path(path))
        except UserError as exc:
            self._error(str(exc))
            return False
        backup = getattr(project, "migration_backup", None)
        self._set_project(project)
        if backup is not None:
            self.statusBar().showMessage(
                f"Updated the project to the current format; the old version is kept as {backup.name}.", 15000
            )
        return True

    def _opened_off_the_gui_thread(self, path: Path) -> Project:
        """``Project.open`` on a worker while the window keeps painting (not taking input): its integrity check
        reads the whole file, a second or more for a project of published results. Returns once it is open."""
        loop = QEventLoop()
        outcome = _Outcome()

        def open_here(state) -> Project:
            project = Project.open(path)
            project.release_thread_connection()  # the GUI thread opens its own
            return project

        self.statusBar().showMessage(f"Opening {path.name}…")
        held = _InputHeld(self)
        QApplication.instance().installEventFilter(held)  # not setEnabled(False): that took the window's focus
        try:
            self.ops.run(open_here, label=f"Opening {path.name}", on_done=outcome.done, on_error=outcome.failed,
                         on_end=loop.quit)
            loop.exec()
        finally:
            QApplication.instance().removeEventFilter(held)
            held.deleteLater()
            self.statusBar().clearMessage()
        if outcome.error is not None:
            raise UserError(outcome.error)
        return outcome.result

    def save_as_dialog(self) -> None:
        if self.project is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save project as", str(self.project.path.parent), FILE_FILTER)
        if not path:
            return
        # The file dialog has asked before returning a file that exists; a suffix added to the name since may
        # name another existing file, which is asked about here. Nothing is replaced without a yes.
        target = with_project_suffix(path)
        overwrite = target.exists()
        if overwrite and target != Path(path) and not dialogs.ask(
                self, f"{target.name} already exists. Replace it with a copy of this project?"):
            return
        if self.ops.user_work_running:
            self._error("Wait for the work in progress to finish (or cancel it) before saving a copy.")
            return
        self.ops.join()
        try:
            project = self.project.save_as(target, overwrite=overwrite)
        except UserError as exc:
            self._error(str(exc))
            return
        self.project = None
        self._set_project(project)

    def close_project(self) -> None:
        if not self._confirm_leave():
            return
        self._set_project(None)

    def _confirm_leave(self) -> bool:
        if self.ops.user_work_running and not dialogs.ask(
            self, "Work is still running. Stop it? Everything finished so far is saved and can be continued later."
        ):
            return False
        self.ops.join()
        return True

    def _set_project(self, project: Project | None) -> None:
        old = self.project
        self.project = project
        for page in self.pages.values():
            page.set_project(project)
        if old is not None and old is not project:
            old.close()
        if project is not None:
            self._remember_recent(project.path)
        self._apply_blinding()
        self._show_welcome_if_closed()
        self.project_changed.emit(project)

    def _show_welcome_if_closed(self) -> None:
        self.content.setCurrentWidget(self.stack if self.project is not None else self.welcome)
        self.nav.setEnabled(self.project is not None)

    # ------------------------------------------------------------------ navigation
    def show_page(self, key: str) -> Page:
        if key not in self.pages:
            raise UserError(f"There is no page called '{key}'. Pages: {', '.join(self.pages)}.")
        self.nav.setCurrentRow(list(self.pages).index(key))
        return self.pages[key]

    def current_page(self) -> Page:
        return self.stack.currentWidget().widget()

    def _on_nav(self, row: int) -> None:
        if row < 0:
            return
        self.stack.setCurrentIndex(row)
        page = self.current_page()
        for other in self.pages.values():
            other.off_screen = other is not page
        page.on_shown()
        page.refresh_due = False
        self._apply_blinding()

    def blinded_page(self) -> Page | None:
        """The page showing a blinded session, if any (see ``Page.blinded``)."""
        return next((page for page in self.pages.values() if page.blinded), None)

    @property
    def blinded(self) -> bool:
        return self.blinded_page() is not None

    def _apply_blinding(self) -> None:
        """While a page is blinded, the title, File menu and status bar name no project or file; the file
        actions wait until the session ends (their dialogs would list file names), and so do messages and
        windows from other work (``dialogs.MessageGate``)."""
        blinded = self.blinded
        self.message_gate.hold_for(self.blinded_page())
        open_ = self.project is not None
        self.action_new.setEnabled(not blinded)
        self.action_open.setEnabled(not blinded)
        self.action_save_as.setEnabled(open_ and not blinded)
        self.action_close.setEnabled(open_ and not blinded)
        self._refresh_recent_menu()
        if blinded:
            self.statusBar().clearMessage()
        self._update_busy()
        self._update_title()

    def _update_title(self) -> None:
        name = self.project.path.name if self.project is not None else ""
        page = self.current_page() if self.stack.count() else None
        self.setWindowTitle(page.window_title(name) if page else "Palimpsest")

    def refresh_title(self) -> None:
        self._update_title()

    def _update_busy(self) -> None:
        ops = [op for op in self.ops.operations if not op.background_read]
        if ops and self.blinded:  # an operation's label may name a book
            self.status_label.setText("Working…")
            return
        self.status_label.setText(f"Working: {ops[0].label}" + (f" (+{len(ops) - 1} more)" if len(ops) > 1 else "") if ops else "")

    def _messages_waiting(self, count: int) -> None:
        page = self.blinded_page()
        if page is not None:
            page.show_messages_waiting(count)

    def _error(self, message: str) -> None:
        dialogs.show_error(self, message)

    # ------------------------------------------------------------------ closing
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.ops.user_work_running and not dialogs.ask(
                self, "Work is still running. Stop it and quit? Everything finished so far is saved."):
            event.ignore()
            return
        self.shutdown()
        self.message_gate.release()  # the session ended with the project: what waited is shown before quitting
        event.accept()

    def shutdown(self) -> None:
        """Join background work, close the project (checkpointing it), remember the geometry."""
        self.ops.join()
        self.settings.setValue("window/geometry", self.saveGeometry())
        if self.project is not None:
            self._set_project(None)  # pages let go first (a session keeps the time on its open item)
