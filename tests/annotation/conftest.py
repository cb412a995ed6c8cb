"""Fixtures of the annotation tests: invented books (written here) in a real project file."""

from __future__ import annotations

import random

import pytest

from workbench.project import Project, now

# Distinctive strings: a blinding test looks for them in every widget.
SECRET_TITLE = "Zanzibar Quillfeather Chronicle"
SECRET_AUTHOR = "Ottoline Vexhammer"
SECRET_MODEL = "model-Glockenspiel-9"

@pytest.fixture
def messages(monkeypatch):
    """Message boxes and questions of the GUI tests: collected (questions answered yes) instead of shown."""
    seen = []
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": seen.append(message))
    monkeypatch.setattr("ui.dialogs.show_info", lambda parent, message: seen.append(message))
    monkeypatch.setattr("ui.dialogs.ask", lambda parent, question: True)
    return seen


_PEOPLE = ["Marguerite", "Tobias", "the curate", "old Mrs. Penhallow", "Dr. Ashdown", "her brother", "the carter"]
_ACTIONS = [
    "crossed the yard and knocked at the kitchen door",
    "read the letter twice and folded it into her apron",
    "set the kettle on the stove and waited by the window",
    "walked down to the ferry as the light began to fail",
    "counted the coins on the table and said nothing",
    "lit the lamp in the hall and listened for the carriage",
    "spent the whole afternoon mending nets on the shingle",
    "argued with the miller about the price of flour",
    "climbed to the attic and opened the blue trunk",
    "sat with the sick child until the fever broke",
]
_TIMES = ["At dawn", "Later that morning", "Towards noon", "In the evening", "The next day", "A week later", "That winter"]


def invented_novel(seed: int, chapters: int = 4, paragraphs: int = 6) -> str:
    """A novel-like text of whole sentences with chapter headings (about 600 words a chapter)."""
    rng = random.Random(seed)
    parts = []
    for chapter in range(1, chapters + 1):
        parts.append(f"CHAPTER {chapter}")
        for _ in range(paragraphs):
            sentences = []
            for _ in range(rng.randint(4, 7)):
                who = rng.choice(_PEOPLE)
                sentence = f"{rng.choice(_TIMES)}, {who} {rng.choice(_ACTIONS)}."
                if rng.random() < 0.3:
                    sentence = f"\u201cIt will rain before the fair,\u201d said {who}. " + sentence
                sentences.append(sentence[0].upper() + sentence[1:])
            parts.append(" ".join(sentences))
    return "\n\n".join(parts) + "\n"


def add_book(project: Project, title: str, author: str, text: str, tags: dict[str, str] | None = None) -> int:
    """Put a book straight into the project's library tables (what an importer leaves behind)."""
    with project.db.conn:
        cur = project.db.execute(
            "INSERT INTO books (title, author, source_kind, words, added_at) VALUES (?, ?, 'text', ?, ?)",
            [title, author, len(text.split()), now()],
        )
        book_id = cur.lastrowid
        project.db.execute("INSERT INTO book_texts (book_id, text) VALUES (?, ?)", [book_id, text])
        for key, value in (tags or {}).items():
            project.db.execute("INSERT INTO book_tags (book_id, key, value) VALUES (?, ?, ?)", [book_id, key, value])
    return book_id


@pytest.fixture
def books(project: Project) -> list[int]:
    """Two invented books; the first carries the distinctive title and author."""
    return [
        add_book(project, SECRET_TITLE, SECRET_AUTHOR, invented_novel(1), {"group": "famous", "condition": "memorized"}),
        add_book(project, "The Lantern Road", "Agnes Merriweather", invented_novel(2), {"group": "obscure"}),
    ]
