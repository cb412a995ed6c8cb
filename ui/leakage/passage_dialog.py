"""A passage with its longest overlap with the corpus marked, and the numbers behind it."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTextBrowser, QVBoxLayout

MARK = "background-color: #f5b041;"


def marked_html(text: str, span: tuple[int, int]) -> str:
    """The passage as HTML, the characters of ``span`` highlighted."""
    start, end = span
    before, inside, after = (html.escape(part) for part in (text[:start], text[start:end], text[end:]))
    marked = f'<span style="{MARK}">{inside}</span>' if inside else ""
    return f'<p style="white-space: pre-wrap; line-height: 140%;">{before}{marked}{after}</p>'


class PassageDialog(QDialog):
    def __init__(self, detail: dict, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Passage and its longest overlap")
        self.resize(640, 420)
        self.detail = detail
        self.text = QTextBrowser()
        self.text.setHtml(marked_html(detail["text"], detail["span"]))
        chance = detail["chance_p"]
        facts = (f"Longest overlap: {detail['longest']} of {detail['tokens']} tokens "
                 f"({detail['covered_share']:.0%}), found {detail['frequency']:,} times in the corpus. ")
        if detail["longest"]:
            facts += (f"Its chance of occurring by accident: {chance:.2g}"
                      + (" (below 0.05: unlikely to be a coincidence)." if detail["unlikely_by_chance"] else "."))
        self.facts = QLabel(facts)
        self.facts.setWordWrap(True)
        lengths = QLabel("Longest match ending at each token: " + " ".join(str(n) for n in detail["suffix_lengths"]))
        lengths.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.facts)
        layout.addWidget(lengths)
        layout.addWidget(buttons)
