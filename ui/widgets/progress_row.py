"""The progress row every page uses: what is running, a progress bar, the time left and Cancel.

A row follows a widget's ``OperationSlot`` (``ProgressRow(slot)``: it shows whichever operation is the
slot's current one and hides when the slot is idle), or one operation on its own (``row.watch(op)``, as
the Jobs page lists every running operation).
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from ui.background import Operation, OperationSlot
from workbench.progress import Progress, describe_duration

CANCEL_TIP = "Stop after the work in flight; everything finished is kept"


class ProgressRow(QWidget):
    def __init__(self, slot: OperationSlot | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.operation: Operation | None = None
        self.label = QLabel("")
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        self.eta = QLabel("")
        # room for the longest usual wording, so the bar does not jump (or cut the text) as it changes
        self.eta.setMinimumWidth(self.eta.fontMetrics().horizontalAdvance("about 59 minutes left") + 8)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip(CANCEL_TIP)
        self.cancel_button.clicked.connect(self.cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.eta)
        layout.addWidget(self.cancel_button)
        self.hide()
        if slot is not None:
            slot.started.connect(self.start)
            slot.progressed.connect(self.update_progress)
            slot.busy_changed.connect(self._busy_changed)

    def watch(self, operation: Operation) -> None:
        """Show ``operation`` alone until it ends (the row is not tied to a slot)."""
        self.start(operation)
        operation.progressed.connect(self.update_progress)
        operation.ended.connect(self.finish)
        if operation.last_progress is not None:
            self.update_progress(operation.last_progress)

    def start(self, operation: Operation) -> None:
        self.operation = operation
        self.label.setText(operation.label)
        self.eta.setText("")
        self.bar.setRange(0, 0)  # busy until the first report says how much there is
        self.bar.setFormat("Starting…")
        self.cancel_button.setText("Cancel")
        self.cancel_button.setEnabled(True)
        self.show()

    def set_label(self, text: str) -> None:
        self.label.setText(text)

    def update_progress(self, progress: Progress) -> None:
        if progress.total:
            self.bar.setRange(0, progress.total)
            self.bar.setValue(progress.done)
        failed = f" · {progress.failed} failed" if progress.failed else ""
        self.bar.setFormat((progress.message or "%v of %m") + failed)
        if self.cancel_button.isEnabled():  # once stopping, the row says so until the end
            self.eta.setText("" if progress.eta_seconds is None else f"{describe_duration(progress.eta_seconds)} left")

    def cancel(self) -> None:
        if self.operation is not None:
            self.operation.cancel()
            self.cancel_button.setEnabled(False)
            self.cancel_button.setText("Stopping…")
            self.eta.setText("after the work in flight")

    def _busy_changed(self, busy: bool) -> None:
        if not busy:
            self.finish()

    def finish(self) -> None:
        self.operation = None
        self.hide()
