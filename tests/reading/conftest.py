"""The reading tests start from a project with an invented book cut into scenes, with imported summaries."""

import pytest

from tests.fixtures.reading_books import ReadingBook, reading_book


@pytest.fixture
def summarized_book(project, tmp_path) -> ReadingBook:
    return reading_book(project, tmp_path)
