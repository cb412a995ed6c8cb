"""Fixtures for the name-cloze tests: the real spaCy pipeline and projects holding made-up books."""

from __future__ import annotations

import pytest

from tests.fixtures.cloze_texts import BOOKS, add_book, gpt4books_rows, novel
from workbench.corpus.library import set_tags, update_book
from workbench.probes.cloze.gpt4books import import_gpt4books


@pytest.fixture(scope="session")
def nlp():
    from workbench.nlp import load_english

    return load_english()


@pytest.fixture
def two_books(project):
    """A project with two made-up books: 'Wet Week' (40 scenes) and 'Short Story' (6 scenes)."""
    long_id = add_book(project, novel(40), "wet-week.txt", title="Wet Week", year=1851, tags={"genre": "gothic"})
    short_id = add_book(project, novel(6), "short-story.txt", title="Short Story", year=1899, tags={"genre": "comic"})
    return project, long_id, short_id


@pytest.fixture
def results(tmp_path, project):
    """Model 'alpha' gets book i right i times out of 10 (books 1..10); 'beta' only knows book 10."""
    for model, right in (("alpha", lambda i: i), ("beta", lambda i: 10 if i == 10 else 0)):
        folder = tmp_path / model
        folder.mkdir()
        paths = []
        for i in range(1, BOOKS + 1):
            path = folder / f"b{i:02d}.tsv"
            path.write_text(gpt4books_rows(i, right(i)), encoding="utf-8")
            paths.append(path)
        import_gpt4books(project, paths, model)
    ids = {f"b{i:02d}": project.db.execute("SELECT id FROM books WHERE external_id = ?", [f"b{i:02d}"]).fetchone()[0]
           for i in range(1, BOOKS + 1)}
    for i in range(1, BOOKS + 1):
        update_book(project, ids[f"b{i:02d}"], year=1800 + 10 * i, title=f"Book {i:02d}")
        set_tags(project, ids[f"b{i:02d}"], {"genre": "gothic" if i <= 5 else "realist"})
    return project, ids
