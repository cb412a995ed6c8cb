"""The codebook window: the task's Markdown, rendered; opened with F1 (or ?) from a session."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from ui.widgets.screen_fit import resize_to_fit
from workbench.annotation.tasks import Task


class CodebookDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setModal(False)
        resize_to_fit(self, 720, 640)
        self.browser = QTextBrowser()
        self.browser.setObjectName("codebook")
        self.browser.setOpenExternalLinks(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.hide)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)

    def show_task(self, task: Task) -> None:
        # A blinded task's name may name the study's conditions, so the title stays generic.
        self.setWindowTitle("Codebook" if task.blinded else f"Codebook — {task.name}")
        self.browser.setMarkdown(task.codebook)
        self.browser.setAccessibleName("Codebook")

    def toggle(self, task: Task) -> None:
        if self.isVisible():
            self.hide()
            return
        self.show_task(task)
        self.show()
        self.raise_()
