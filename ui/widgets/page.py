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

    #: the project's change stamp when this view last read it (``read_due``)
    _read_stamp: tuple[int, int] | None = None

    def set_project(self, project: "Project | None") -> None:
        """Called when a project is opened or closed. Views reload here."""
        self.keep_project(project)
        self.read_due()  # what it reads now is as the project stands: shown next, it reads only what changed
        self.refresh()

    def keep_project(self, project: "Project | None") -> None:
        """Take ``project`` without reading it yet: it is read when the view is next shown (``read_due``)."""
        self.project, self._read_stamp = project, None

    def read_due(self) -> bool:
        """Whether the view should read the project again when shown: True the first time, then only when
        anything was written to the project since it last returned True (``Project.change_stamp``: by this
        window's work, another program, or the command line). Showing a page again no longer rereads 57,000
        answers when nothing changed."""
        project = self.project
        if project is None or project.closed:
            return False
        stamp = project.change_stamp()
        if stamp == self._read_stamp:
            return False
        self._read_stamp = stamp
        return True

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

    def show_due(self) -> bool:
        """For a page that reads the project when shown: whether to read it now (a project came while it was off
        screen, or anything was written to it since the page last read it: ``read_due``)."""
        came = self.refresh_due
        self.refresh_due = False
        return self.read_due() or (came and self.project is not None)

    def window_title(self, project_name: str) -> str:
        """What the window title shows while this page is visible (blinded pages hide the project)."""
        return f"{project_name} — Palimpsest" if project_name else "Palimpsest"

    def can_leave(self) -> bool:
        """False to keep the user on this page (e.g. unsaved edits they chose to keep)."""
        return True

