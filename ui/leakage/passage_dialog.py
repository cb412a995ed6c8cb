"""A passage with its longest overlap with the corpus marked, and the numbers behind it."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTextBrowser, QVBoxLayout

MARK = "background-color: #f5b041;"


def times(count: int) -> str:
    """How often, in words: once, twice, 7 times."""
    return "once" if count == 1 else "twice" if count == 2 else f"{count:,} times"


def overlap_facts(detail: dict) -> str:
    """What the dialog says about the passage's longest overlap, in plain words."""
    longest, tokens = int(detail["longest"]), int(detail["tokens"])
    if not longest:
        return f"None of the passage's {tokens:,} tokens occurs in the corpus."
    run = "The whole passage" if longest >= tokens else f"A run of {longest:,} of its {tokens:,} tokens"
    facts = f"{run} ({detail['covered_share']:.0%}, marked) is found in the corpus {times(int(detail['frequency']))}. "
    chance = float(detail["chance_p"])
    model = str(detail.get("chance_model") or "")
    if chance != chance:  # no estimate: the model's text says why
        return facts + (model[:1].upper() + model[1:] + "." if model else "")
    said = f" (Chance model: {model}.)" if model else ""
    if detail["unlikely_by_chance"]:
        return facts + (f"A run this probable would turn up by accident in a corpus of this size with a chance of only "
                        f"{chance:.2g} (below 0.05): the overlap is unlikely to be a coincidence.") + said
    odds = "almost 1" if chance >= 0.995 else f"{chance:.2g}"
    return facts + (f"A run this probable would turn up by accident in a corpus of this size with a chance of {odds} "
                    "(0.05 or more): it could be a coincidence, such as a common phrase.") + said


def marked_html(text: str, span: tuple[int, int]) -> str:
    """The passage as HTML, the characters of ``span`` highlighted."""
    start, end = span
    before, inside, after = (html.escape(part) for part in (text[:start], text[start:end], text[end:]))
    marked = f'<span style="{MARK}">{inside}</span>' if inside else ""
    return f'<p style="white-space: pre-wrap; line-height: 140%;">{before}{marked}{after}</p>'


class PassageDialog(QDialog):
    def __init__(self, detail: dict, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"{detail['book']}, passage {detail['passage_id']}: its longest overlap")
        self.resize(640, 420)
        self.detail = detail
        self.text = QTextBrowser()
        self.text.setHtml(marked_html(detail["text"], detail["span"]))
        self.heading = QLabel(f"<b>{html.escape(str(detail['book']))}</b>, passage {html.escape(str(detail['passage_id']))}")
        self.facts = QLabel(overlap_facts(detail))
        self.facts.setWordWrap(True)
        lengths = QLabel("Longest match ending at each token: " + " ".join(str(n) for n in detail["suffix_lengths"]))
        lengths.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.facts)
        layout.addWidget(lengths)
        layout.addWidget(buttons)
