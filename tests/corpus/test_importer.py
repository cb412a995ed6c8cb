"""Importing files and folders: what is stored, duplicates, failures named plainly, size limit, cancel."""

import hashlib
import os

import pytest

from tests.fixtures.books import LATIN1_SENTENCE, SAMPLE_SENTENCE, gutenberg_text, novel_text
from workbench.corpus.importer import import_paths
from workbench.corpus.library import book_text, list_books
from workbench.corpus.stats import count_words
from workbench.errors import UserError
from workbench.progress import TaskState


def stored_rows(project):
    return project.db.execute(
        "SELECT b.id, b.content_hash, b.words, t.text FROM books b LEFT JOIN book_texts t ON t.book_id = b.id"
    ).fetchall()


def test_every_encoding_is_stored_as_clean_lf_text_with_its_hash_and_word_count(project, text_variants):
    report = import_paths(project, [text_variants["utf8"].parent])
    assert len(report.added) == 5 and not report.failures
    texts = {}
    for book_id, digest, words, text in stored_rows(project):
        assert "\r" not in text and not text.startswith("\ufeff")
        assert digest == hashlib.sha256(text.encode("utf-8")).hexdigest()
        assert words == count_words(text) > 100
        texts[book_id] = text
    assert sum(t.startswith(SAMPLE_SENTENCE) for t in texts.values()) == 4
    assert sum(t.startswith(LATIN1_SENTENCE) for t in texts.values()) == 1


def test_importing_the_same_books_again_adds_nothing_and_says_so(project, text_variants):
    folder = text_variants["utf8"].parent
    import_paths(project, [folder])
    report = import_paths(project, [folder])
    assert not report.added and len(report.duplicates) == 5
    assert "5 books were already in the library" in report.summary()
    assert project.db["books"].count == 5


def test_a_mixed_folder_imports_what_it_can_and_names_each_failure(project, mixed_folder):
    report = import_paths(project, [mixed_folder])
    # Folders are read in name order: the copy comes first, so the original is the duplicate.
    assert sorted(a.source for a in report.added) == ["copy-of-4242.txt", "orchard.epub", "plain.txt"]
    assert [d.source for d in report.duplicates] == ["pg4242.txt"]
    failures = {f.source: f.message for f in report.failures}
    assert set(failures) == {"locked.epub", "noise.txt", "empty.txt"}
    assert "locked.epub is protected by DRM" in failures["locked.epub"]
    assert "noise.txt does not look like a text file" in failures["noise.txt"]
    assert "empty.txt is empty" in failures["empty.txt"]
    assert report.skipped == ["notes.docx"]
    summary = report.summary()
    assert "Added 3 books." in summary and "3 files could not be imported" in summary and "notes.docx" in summary
    assert all(text is not None for _, _, _, text in stored_rows(project))
    assert not report.everything_failed


def test_a_gutenberg_book_is_stored_without_header_or_licence(project, tmp_path):
    body = novel_text(51)
    path = tmp_path / "pg4242.txt"
    path.write_bytes(gutenberg_text(body, form="new").replace("\n", "\r\n").encode("utf-8-sig"))
    import_paths(project, [path])
    [book] = list_books(project)
    assert (book.title, book.author, book.language, book.external_id, book.source_kind) == (
        "The Lantern Road", "Agnes Merriweather", "English", "4242", "gutenberg")
    assert book_text(project, book.id) == body


def test_a_file_over_the_size_limit_is_refused_without_reading_it(project, tmp_path):
    huge = tmp_path / "everything.txt"
    with open(huge, "wb") as fh:  # sparse: 200 MB on paper, nothing on disk
        fh.truncate(200 * 1024 * 1024)
    report = import_paths(project, [huge])
    assert report.everything_failed
    assert "everything.txt is 200 MB, more than the 100 MB one book may have" in report.failures[0].message
    assert project.db["books"].count == 0


def test_a_whitespace_only_file_and_an_empty_gutenberg_book_are_refused(project, tmp_path):
    (tmp_path / "blank.txt").write_text("   \n\n  \n")
    (tmp_path / "pg1.txt").write_text(gutenberg_text(""))
    report = import_paths(project, [tmp_path / "blank.txt", tmp_path / "pg1.txt"])
    assert [f.source for f in report.failures] == ["blank.txt", "pg1.txt"]
    assert all("has no text to import" in f.message for f in report.failures)


def test_a_missing_path_is_reported_and_the_rest_imported(project, tmp_path, text_variants):
    report = import_paths(project, [tmp_path / "nowhere.txt", text_variants["utf8"]])
    assert len(report.added) == 1
    assert "There is no file or folder at" in report.failures[0].message


def test_a_table_given_as_a_book_points_to_the_metadata_option(project, tmp_path):
    (tmp_path / "list.csv").write_text("file,title\n")
    report = import_paths(project, [tmp_path / "list.csv"])
    assert "list.csv is a table, not a book" in report.failures[0].message


def test_nothing_to_import_is_a_user_error(project):
    with pytest.raises(UserError, match="Nothing to import"):
        import_paths(project, [])


def test_cancel_keeps_the_books_done_and_stores_no_more(project, tmp_path):
    for i in range(5):
        (tmp_path / f"book{i}.txt").write_text(novel_text(60 + i))
    state = TaskState(min_interval=0)
    state._on_progress = lambda p: state.cancel() if p.done == 2 else None
    report = import_paths(project, [tmp_path], state=state)
    assert report.cancelled
    assert [a.source for a in report.added] == ["book0.txt", "book1.txt"]
    assert project.db["books"].count == 2
    assert report.summary().startswith("Import stopped at your request.")


def test_progress_names_each_book_and_ends_complete(project, tmp_path):
    for i in range(3):
        (tmp_path / f"b{i}.txt").write_text(novel_text(70 + i))
    seen = []
    import_paths(project, [tmp_path], state=TaskState(on_progress=seen.append, min_interval=0))
    assert [p.message for p in seen[:3]] == ["Importing b0.txt", "Importing b1.txt", "Importing b2.txt"]
    assert (seen[-1].done, seen[-1].total) == (3, 3)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_an_unreadable_file_is_reported(project, tmp_path):
    locked = tmp_path / "private.txt"
    locked.write_text(novel_text(80))
    locked.chmod(0)
    report = import_paths(project, [locked])
    assert "private.txt could not be read" in report.failures[0].message


def test_a_book_with_a_utf8_bom_and_invalid_bytes_fails_with_a_plain_message_and_the_others_import(project, tmp_path):
    (tmp_path / "mixed.txt").write_bytes(b"\xef\xbb\xbf" + novel_text(90).encode() + b"A stray \xff byte.\n")
    (tmp_path / "good.txt").write_text(novel_text(91))
    report = import_paths(project, [tmp_path])
    assert [b.source for b in report.added] == ["good.txt"]
    [failure] = report.failures
    assert failure.message.startswith("mixed.txt starts with a UTF-8 byte-order mark but is not all UTF-8")
    assert "unexpected" not in failure.message


def test_nul_characters_are_removed_from_a_book_with_a_note_in_the_report(project, tmp_path):
    body = novel_text(92)
    (tmp_path / "padded.txt").write_bytes(body.replace("saw", "saw\x00", 1).encode() + b"\x00")
    report = import_paths(project, [tmp_path / "padded.txt"])
    [book] = list_books(project)
    assert "\x00" not in book_text(project, book.id) and book_text(project, book.id) == body
    assert any(note.startswith("padded.txt had 2 NUL characters") for note in report.notes)
    assert "padded.txt had 2 NUL characters" in report.summary()
