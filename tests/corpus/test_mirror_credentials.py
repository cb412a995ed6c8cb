"""A Gutenberg mirror given with a user name and password downloads, but the password is never repeated in a
message nor stored with the book (the book records where it came from without it)."""

from __future__ import annotations

import pytest

from tests.fixtures.books import gutenberg_text, novel_text
from workbench.corpus.download import fetch_gutenberg_text, mirror_base
from workbench.corpus.importer import import_paths
from workbench.corpus.library import list_books
from workbench.errors import UserError

PASSWORD = "Tr0ub4dor-secret"


def with_password(base_url: str) -> str:
    scheme, rest = base_url.split("://", 1)
    return f"{scheme.upper()}://reader:{PASSWORD}@{rest}"


def test_the_book_records_the_mirror_without_its_password(project, gutenberg_mirror):
    gutenberg_mirror.files["/cache/epub/1342/pg1342.txt"] = gutenberg_text(novel_text(41), number=1342).encode("utf-8")
    report = import_paths(project, [], gutenberg_ids=[1342], mirror=with_password(gutenberg_mirror.base_url))
    assert len(report.added) == 1
    [book] = list_books(project)
    assert PASSWORD not in book.source_name and "reader" not in book.source_name
    assert book.source_name == gutenberg_mirror.base_url + "/cache/epub/1342/pg1342.txt"


def test_messages_about_a_mirror_never_repeat_its_password(project, gutenberg_mirror, closed_port):
    report = import_paths(project, [], gutenberg_ids=["99999"], mirror=with_password(gutenberg_mirror.base_url))
    assert "has no plain-text file" in report.failures[0].message
    assert PASSWORD not in report.failures[0].message
    with pytest.raises(UserError) as caught:
        fetch_gutenberg_text(11, mirror=with_password(f"http://127.0.0.1:{closed_port}"), max_bytes=1000, timeout_s=5)
    assert "Could not reach 127.0.0.1" in str(caught.value) and PASSWORD not in str(caught.value)
    with pytest.raises(UserError) as caught:
        mirror_base(f"ftp://reader:{PASSWORD}@mirror.example.org")
    assert "not a web address" in str(caught.value) and PASSWORD not in str(caught.value)
