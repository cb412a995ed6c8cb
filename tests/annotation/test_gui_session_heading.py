"""At 1280 x 800 every kind's session screen shows "Item n of N" and the progress whole, from the first item on
(they were laid out while empty, and drawn a few pixels wide until a later turn of the event loop)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QScrollArea

from tests.annotation.test_gui_name_cloze import cloze_study  # noqa: F401  (the fixture)
from tests.annotation.test_gui_session import study  # noqa: F401  (the fixture)
from tests.fixtures.annotation_gui import close, open_window, start


def _whole(view) -> list[str]:
    """The header labels drawn narrower than their text, and a sideways scroll bar if the screen needs one."""
    cut = [f"{label.objectName()}: {label.text()!r} {label.width()} < {label.sizeHint().width()}"
           for label in (view.heading, view.progress_label) if label.width() < label.sizeHint().width()]
    area = view.parentWidget()
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    if area is not None and area.horizontalScrollBar().isVisible():
        cut.append("a sideways scroll bar")
    return cut


@pytest.mark.parametrize("task", ["nt", "sv", "lab"])
def test_the_heading_shows_whole_on_every_kind_of_session(qtbot, tmp_path, study, task):  # noqa: F811
    window = open_window(qtbot, study, tmp_path)
    assert (window.width(), window.height()) == (1280, 800)
    view = start(qtbot, window, task, "Ann").session_view
    assert view.heading.text() == "Item 1 of " + {"nt": "5", "sv": "3", "lab": "2"}[task]
    assert _whole(view) == []  # at once: no waiting for the event loop
    view.trigger("skip")
    assert view.heading.text().startswith("Item 2") and _whole(view) == []
    close(qtbot, window)


def test_the_heading_shows_whole_on_a_name_cloze_session(qtbot, tmp_path, cloze_study):  # noqa: F811
    window = open_window(qtbot, cloze_study, tmp_path)
    view = start(qtbot, window, "people", "Ann").session_view
    assert view.heading.text() == "Item 1 of 3" and _whole(view) == []
    window.grab().save(str(tmp_path / "name-cloze-heading.png"))
    close(qtbot, window)
