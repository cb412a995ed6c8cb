"""The progress row every page uses: what is running, a progress bar, the time left and Cancel."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from ui.background import Operation
from workbench.progress import Progress, describe_duration


class ProgressRow(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.operation: Operation | None = None
        self.label = QLabel("")
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        self.eta = QLabel("")
        # room for the longest usual wording, so the bar does not jump (or cut the text) as it changes
        self.eta.setMinimumWidth(self.eta.fontMetrics().horizontalAdvance("about 59 minutes left") + 8)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the answers in flight; everything finished is kept")
        self.cancel_button.clicked.connect(self.cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.eta)
        layout.addWidget(self.cancel_button)
        self.hide()

    @property
    def busy(self) -> bool:
        return self.operation is not None

    def start(self, operation: Operation, label: str) -> None:
        self.operation = operation
        self.label.setText(label)
        self.eta.setText("")
        self.bar.setRange(0, 0)  # busy until the first report says how much there is
        self.bar.setFormat("Starting…")
        self.cancel_button.setEnabled(True)
        operation.progressed.connect(lambda progress, op=operation: self._progressed(op, progress))
        operation.ended.connect(lambda op=operation: self._ended(op))
        self.show()

    # an ended operation's last signals may arrive after the next one started: only the current one counts
    def _progressed(self, operation: Operation, progress: Progress) -> None:
        if operation is self.operation:
            self.update_progress(progress)

    def _ended(self, operation: Operation) -> None:
        if operation is self.operation:
            self.finish()

    def set_label(self, text: str) -> None:
        self.label.setText(text)

    def update_progress(self, progress: Progress) -> None:
        if progress.total:
            self.bar.setRange(0, progress.total)
            self.bar.setValue(progress.done)
        failed = f" · {progress.failed} failed" if progress.failed else ""
        self.bar.setFormat((progress.message or "%v of %m") + failed)
        self.eta.setText("" if progress.eta_seconds is None else f"{describe_duration(progress.eta_seconds)} left")

    def cancel(self) -> None:
        if self.operation is not None:
            self.operation.cancel()
            self.cancel_button.setEnabled(False)
            self.eta.setText("Stopping after the work in flight…")

    def finish(self) -> None:
        self.operation = None
        self.hide()
