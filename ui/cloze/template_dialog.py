"""Viewing, editing and adding a name-cloze prompt template.

Saving never overwrites: changed text becomes a new version of the template (runs keep pointing at
the exact text they used), unchanged text saves nothing. The check of the text (it must contain
``{passage}``) is the template store's own (``workbench.prompt_templates.save_template``).
"""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
)

from ui.widgets.screen_fit import resize_to_fit
from workbench.errors import UserError
from workbench.prompt_templates import Template, save_template

NEW_HINT = ("Write the prompt. Put {passage} where the passage with the hidden name goes, and ask for the answer "
            "as <name>…</name> so it can be scored.")


class TemplateDialog(QDialog):
    """``template`` None: a new template. After Save, ``saved`` is the stored template."""

    def __init__(self, project, template: Template | None = None, parent=None):
        super().__init__(parent)
        self.project = project
        self.original = template
        self.saved: Template | None = None
        self.setWindowTitle(f"Prompt template: {template.label}" if template else "New prompt template")
        resize_to_fit(self, 760, 560)

        self.name = QLineEdit(template.name if template else "")
        self.name.setPlaceholderText("a short name, e.g. name-cloze-short")
        self.name.setReadOnly(template is not None)
        self.body = QPlainTextEdit(template.body if template else "")
        self.body.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.body.setPlaceholderText(NEW_HINT)
        self.about = QLabel(self._describe(template))
        self.about.setWordWrap(True)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020;")
        self.error.hide()

        form = QFormLayout()
        form.addRow("Name", self.name)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setText(
            "Save as new version" if template else "Save")
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.about)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)

    @staticmethod
    def _describe(template: Template | None) -> str:
        if template is None:
            return NEW_HINT
        origin = "shipped with Palimpsest" if template.origin == "shipped" else "written in this project"
        return (f"Version {template.version}, {origin}, saved {template.created_at[:16].replace('T', ' ')} "
                f"(fingerprint {template.hash[:12]}). Editing saves a new version; runs that used this one keep it.")

    def save(self) -> None:
        try:
            self.saved = save_template(self.project, self.name.text(), self.body.toPlainText(), "cloze")
        except UserError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.accept()
