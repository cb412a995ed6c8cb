"""One running background operation as a row: what it is, a progress bar, failures, time left, Cancel."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from ui.background import Operation
from workbench.progress import Progress, describe_duration


class OperationRow(QWidget):
    def __init__(self, op: Operation, parent: QWidget | None = None):
        super().__init__(parent)
        self.op = op
        self.label = QLabel(op.label or "Working")
        self.label.setMinimumWidth(260)
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        self.failed = QLabel("")
        self.failed.setMinimumWidth(70)
        self.eta = QLabel("")
        self.eta.setMinimumWidth(130)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.failed)
        layout.addWidget(self.eta)
        layout.addWidget(self.cancel_button)
        op.progressed.connect(self.show_progress)
        self.show_progress(op.last_progress)

    def show_progress(self, progress: Progress | None) -> None:
        if progress is None or not progress.total:
            self.bar.setRange(0, 0)  # busy, no count yet
            self.failed.setText("")
            self.eta.setText("")
            return
        self.bar.setRange(0, progress.total)
        self.bar.setValue(progress.done)
        self.bar.setFormat(f"{progress.done} of {progress.total}")
        self.failed.setText(f"{progress.failed} failed" if progress.failed else "")
        self.eta.setText("" if progress.done >= progress.total else describe_duration(progress.eta_seconds))

    def cancel(self) -> None:
        self.op.cancel()
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Stopping…")
