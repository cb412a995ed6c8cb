"""What a page or tab with one operation at a time does around it: starting hides the last summary; a failure
is said in the summary and in an error box; a cancel says so in the summary; at the end the view reloads.

A view that mixes this in has ``work`` (its ``OperationSlot``), ``summary`` (a ``SummaryBox``), ``project``,
``refresh`` and ``show_error`` (``ui.widgets.page.ProjectView``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ui.widgets.progress_row import ProgressRow
from ui.widgets.summary_box import SummaryBox

if TYPE_CHECKING:
    from ui.background import Operation

BUSY = "Work is already running on this page. Wait for it to finish, or cancel it first."


class OneOperation:
    def lay_out_work(self, no_project: str, body: QWidget) -> None:
        """The view's layout: ``hint`` (``no_project``, shown while no project is open), the progress row of
        ``work``, the ``summary`` box, then ``body`` taking the rest."""
        self.hint = QLabel(no_project)
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.progress = ProgressRow(self.work)
        self.summary = SummaryBox()
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.progress)
        layout.addWidget(self.summary)
        layout.addWidget(body, 1)
        self._body = body

    def show_whether_open(self) -> bool:
        """The hint without a project, the body usable with one; whether a project is open."""
        has_project = self.project is not None
        self.hint.setVisible(not has_project)
        self._body.setEnabled(has_project)
        return has_project

    def can_start(self) -> bool:
        """True with a project open and no work of the view running; otherwise says what to do."""
        if self.require_project() is None:
            return False
        if self.work.busy:
            self.show_info(BUSY)
            return False
        return True

    def show_summary(self, text: str) -> None:
        self.summary.show_text(text)

    def start_work(self, work: Callable[[Any], Any], label: str, on_done: Callable[[Any], None],
                   **callbacks: Any) -> "Operation":
        """Start ``work`` in the slot (any earlier operation of the view is cancelled); ``callbacks`` are the
        slot's others (``on_progress``, ``on_partial``)."""
        self.summary.hide()
        return self.work.start(work, label=label, project=self.project, on_done=on_done, on_error=self.work_failed,
                               on_cancelled=self.show_summary, on_end=self.work_ended, **callbacks)

    def work_failed(self, message: str, details: str) -> None:
        self.show_summary(message)
        self.show_error(message, details)

    def work_ended(self) -> None:
        if self.project is not None:
            self.refresh()
