"""What every page has: the open project (or none), the window's background helper, messages.

``ProjectView`` is that much alone, for the parts of a page that are views of the project themselves
(the tabs of the Bias page); ``Page`` adds what the window asks of a page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from ui import dialogs

if TYPE_CHECKING:
    from ui.background import BackgroundOps
    from workbench.project import Project


class ProjectView(QWidget):
    def __init__(self, ops: "BackgroundOps", parent: QWidget | None = None):
        super().__init__(parent)
        self.ops = ops
        self.project: "Project | None" = None

    def set_project(self, project: "Project | None") -> None:
        """Called when a project is opened or closed. Views reload here."""
        self.project = project
        self.refresh()

    def refresh(self) -> None:
        """Reload from the project (cheap queries only; long work goes through ``self.ops``)."""

    def show_error(self, message: str, details: str = "") -> None:
        dialogs.show_error(self, message, details)

    def show_info(self, message: str) -> None:
        dialogs.show_info(self, message)

    def require_project(self) -> Any:
        if self.project is None:
            self.show_info("Open or create a project first (File menu).")
        return self.project


class Page(ProjectView):
    key = ""
    title = ""
    blinded_changed = Signal()  # emitted when ``blinded`` may have changed
    #: set by the window while another page is on screen: a project opened meanwhile is read when this page is
    #: shown (``on_shown``). Opening a project of 571 books read every page at once: 0.6 s of a frozen window.
    off_screen = False
    #: a project came while the page was off screen and has not been read yet
    refresh_due = False

    def set_project(self, project: "Project | None") -> None:
        if self.off_screen and project is not None:
            self.project, self.refresh_due = project, True
            return
        self.refresh_due = False
        super().set_project(project)

    @property
    def blinded(self) -> bool:
        """True while the page shows a blinded annotation session: the window then shows no project or file
        name anywhere (title, recent files, status bar), since they may name books or study conditions, and
        messages and windows from other pages wait until it ends (``ui.dialogs.MessageGate``)."""
        return False

    def show_messages_waiting(self, count: int) -> None:
        """While the page is blinded: ``count`` messages from other work wait until its session ends (a page
        says so without naming anything)."""

    def on_shown(self) -> None:
        """Called each time the page becomes the visible one. A page that does not reload whenever it is
        shown reloads here at least when a project came while it was off screen (``refresh_due``)."""
        if self.refresh_due:
            self.refresh_due = False  # read now: not again at every showing
            self.refresh()

    def window_title(self, project_name: str) -> str:
        """What the window title shows while this page is visible (blinded pages hide the project)."""
        return f"{project_name} — Palimpsest" if project_name else "Palimpsest"

    def can_leave(self) -> bool:
        """False to keep the user on this page (e.g. unsaved edits they chose to keep)."""
        return True

