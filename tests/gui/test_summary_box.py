"""The summary box above a page's tables: as tall as its text at the width it is shown at."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from ui.widgets.summary_box import MOST_LINES, SummaryBox

TEXT = ("Answers read: all 70% (21 of 30, 95% CI 52%–83%); top 67% (4 of 6); bottom 83% (5 of 6). " * 3).strip()


def test_a_few_lines_of_summary_take_a_few_lines_not_the_most_the_box_allows(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    box = SummaryBox()
    QVBoxLayout(window).addWidget(box)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    box.show_text(TEXT)  # before the box has been laid out at its new size
    qtbot.wait(50)
    line = box.label.fontMetrics().lineSpacing()
    assert box.scroll.height() <= 3 * line + 4
    assert box.label.heightForWidth(box.scroll.viewport().width()) <= box.scroll.height()  # nothing is cut
    box.show_text(TEXT * 20)
    qtbot.wait(50)
    assert box.scroll.height() == MOST_LINES * line  # a long report scrolls inside the box
