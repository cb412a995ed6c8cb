"""Fixtures of the annotation tests: invented books (written here) in a real project file."""

from __future__ import annotations

import pytest

from tests.fixtures.annotation_data import SECRET_AUTHOR, SECRET_TITLE, add_book, invented_novel
from workbench.project import Project


@pytest.fixture
def messages(monkeypatch):
    """Message boxes and questions of the GUI tests: collected (questions answered yes) instead of shown."""
    seen = []
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": seen.append(message))
    monkeypatch.setattr("ui.dialogs.show_info", lambda parent, message: seen.append(message))
    monkeypatch.setattr("ui.dialogs.ask", lambda parent, question: True)
    return seen


@pytest.fixture
def books(project: Project) -> list[int]:
    """Two invented books; the first carries the distinctive title and author."""
    return [
        add_book(project, SECRET_TITLE, SECRET_AUTHOR, invented_novel(1), {"group": "famous", "condition": "memorized"}),
        add_book(project, "The Lantern Road", "Agnes Merriweather", invented_novel(2), {"group": "obscure"}),
    ]
