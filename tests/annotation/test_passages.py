import re

import pytest

from tests.fixtures.annotation_data import SECRET_AUTHOR, SECRET_TITLE, add_book, invented_novel
from workbench.annotation.items import add_book_passages, add_book_scenes, is_ready, list_items
from workbench.annotation.passages import char_count, prose_runs, sample_windows, tidy, windows, word_count
from workbench.annotation.tasks import create_task
from workbench.errors import UserError

TRICKY = (
    "CHAPTER ONE\n\n"
    "Mr. Ashdown met Dr. Penhallow at St. Ives at nine. \u201cYou are late,\u201d said she. He smiled!\n"
    "It was J. B. Morrow who wrote the letter. Was it? Nobody knew.\n\n"
    "CONTENTS\n\n"
)


def sentences(text):
    return [text[s.start : s.end] for run in prose_runs(text) for para in run for s in para]


def test_sentence_splitter_keeps_abbreviations_and_initials_together():
    assert sentences(TRICKY) == [
        "Mr. Ashdown met Dr. Penhallow at St. Ives at nine.",
        "\u201cYou are late,\u201d said she.",
        "He smiled!",
        "It was J. B. Morrow who wrote the letter.",
        "Was it?",
        "Nobody knew.",
    ]


def test_passages_are_whole_sentences_of_about_250_words_with_offsets_into_the_book():
    text = invented_novel(5, chapters=6)
    found = windows(text, 250, word_count)
    assert len(found) >= 6
    for w in found:
        assert 200 <= word_count(w.text) <= 300
        assert w.text == tidy(text[w.start : w.end])
        assert w.text[0].isupper() or w.text[0] == "\u201c"
        assert re.search(r"[.!?][\u201d\"']?$", w.text)
        # a whole sentence: the window starts right after a sentence end (or a paragraph break)
        before = text[: w.start].rstrip()
        assert before.endswith((".", "!", "?", "\u201d")) or before.endswith(tuple("0123456789"))
        assert "CHAPTER" not in w.text  # windows never cross a chapter heading
    starts = [w.start for w in found]
    assert starts == sorted(starts)
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))


def test_sampling_is_seeded_and_the_seed_matters():
    found = windows(invented_novel(6, chapters=8), 250, word_count)
    first = sample_windows(found, 4, "7:1")
    assert first == sample_windows(found, 4, "7:1")
    assert first != sample_windows(found, 4, "8:1")
    assert [w.start for w in first] == sorted(w.start for w in first)
    assert len(sample_windows(found, 999, 1)) == len(found)


def test_scenes_are_about_3000_characters_with_context(project):
    text = invented_novel(9, chapters=3, paragraphs=30)
    book = add_book(project, "Long", "A. Writer", text)
    task = create_task(project, "sv", "summary-validity")
    ids = add_book_scenes(project, task, [book], model="m1", per_book=3)
    items = list_items(project, task)
    assert len(ids) == len(items) == 3
    assert list_items(project, task, ready_only=True) == []
    for item in items:
        assert 2400 <= char_count(item.text) <= 3600
        assert 250 <= len(item.context_before) <= 300 and 250 <= len(item.context_after) <= 300
        assert text[item.start_char - 400 : item.start_char].replace("\n", " ").strip().endswith(
            item.context_before[-40:].strip())
        assert not is_ready(task, item)  # no summaries yet
        assert item.meta["model"] == "m1"


def test_narrative_time_items_keep_book_offsets_and_hidden_metadata_and_are_not_added_twice(project, books):
    task = create_task(project, "nt", "narrative-time", seed=3)
    added = add_book_passages(project, task, books, per_book=3)
    assert added == {books[0]: 3, books[1]: 3}
    items = list_items(project, task)
    first = [i for i in items if i.book_id == books[0]]
    assert first[0].meta["title"] == SECRET_TITLE and first[0].meta["author"] == SECRET_AUTHOR
    assert first[0].meta["tags"] == {"condition": "memorized", "group": "famous"}
    from workbench.corpus.library import book_text

    text = book_text(project, books[0])
    for item in first:
        assert item.text == tidy(text[item.start_char : item.end_char])
        assert item.item_key.isdigit() and len(item.item_key) >= 5
    assert add_book_passages(project, task, books, per_book=3) == {books[0]: 0, books[1]: 0}
    assert len(list_items(project, task)) == 6


def test_opaque_item_numbers_do_not_follow_sampling_order(project, books):
    task = create_task(project, "nt", "narrative-time")
    add_book_passages(project, task, books, per_book=4)
    keys = [int(i.item_key) for i in list_items(project, task)]
    assert keys != sorted(keys)
    assert len(set(keys)) == len(keys)


def test_summary_tasks_refuse_plain_passages(project, books):
    task = create_task(project, "sv", "summary-validity")
    with pytest.raises(UserError, match="annotate summarize"):
        add_book_passages(project, task, books)


def test_front_matter_before_the_first_chapter_is_never_sampled():
    preface = (
        "THE QUILLFEATHER CHRONICLE\n\nBy Ottoline Vexhammer\n\nCONTENTS\n\nCHAPTER 1\n\nCHAPTER 2\n\n"
        "PREFACE\n\n" + " ".join(["The author of The Quillfeather Chronicle thanks her many readers warmly."] * 40)
        + "\n\n"
    )
    text = preface + invented_novel(4, chapters=3)
    found = windows(text, 250, word_count) + windows(text, 600, char_count)
    assert found and all(w.start > len(preface) for w in found)
    assert not any("Quillfeather" in w.text for w in found)
    # a book without chapter headings is sampled from its start
    plain = invented_novel(4, chapters=1).replace("CHAPTER 1\n\n", "")
    assert windows(plain, 100, word_count)[0].start == 0
