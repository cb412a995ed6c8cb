"""Text statistics for the book view: words, sentences and chapter headings detected."""

import pytest

from tests.fixtures.books import novel_text
from workbench.corpus.stats import count_sentences, count_words, detect_chapters, text_statistics

FILLER = " ".join(["The carriage waited by the gate while the rain kept falling."] * 8)


def test_words_keep_apostrophes_and_hyphens_inside_a_word():
    assert count_words("Don't look—the well-known road’s end, 1847!") == 7


def test_sentences_ignore_titles_and_initials():
    text = 'Mr. Darcy bowed. "Indeed!" said Mrs. Bennet. J. Smith was there. Was he? Yes'
    assert count_sentences(text) == 5


def test_chapter_headings_in_several_styles():
    for heading in ["CHAPTER I.", "Chapter 12", "CHAPTER THE LAST", "Letter 4", "Stave One", "IV.", "XII. THE CORONET", "7"]:
        assert detect_chapters(f"A Novel\n\n{heading}\n\n{FILLER}\n") == [heading], heading


def test_a_contents_page_is_not_counted_as_chapters():
    contents = "CONTENTS\n\n" + "\n".join(f"CHAPTER {n}. A title" for n in range(1, 4)) + "\n\n"
    preface = "PREFACE\n\n" + FILLER + "\n\n"
    chapters = "".join(f"CHAPTER {n}. A title\n\n{FILLER}\n\n" for n in range(1, 4))
    assert detect_chapters(contents + preface + chapters) == [f"CHAPTER {n}. A title" for n in range(1, 4)]


def test_a_sentence_starting_with_i_is_not_a_heading():
    text = "CHAPTER I.\n\n" + FILLER + "\n\nI says:\n\n" + FILLER + "\n\nCHAPTER II.\n\n" + FILLER
    assert detect_chapters(text) == ["CHAPTER I.", "CHAPTER II."]


def test_roman_numerals_are_used_when_there_are_no_chapter_words():
    text = "".join(f"{numeral}.\n\n{FILLER}\n\n" for numeral in ["I", "II", "III", "IV"])
    assert len(detect_chapters(text)) == 4


def test_statistics_of_a_generated_novel():
    stats = text_statistics(novel_text(90, chapters=5, paragraphs=3))
    assert stats.chapters == 5 and stats.paragraphs == 20
    assert stats.words > 300 and 15 * 3 <= stats.sentences <= 15 * 6


@pytest.mark.slow
@pytest.mark.timeout(60)  # the quadratic version needed more than eight minutes for these chapters
def test_a_book_of_a_hundred_thousand_short_chapters_has_every_chapter_found_in_linear_time():
    count = 100_000
    body = " ".join(["It rained."] * 16)  # 32 words: just over the least a chapter has
    text = "".join(f"CHAPTER {n}\n\n{body}\n\n" for n in range(1, count + 1))
    headings = detect_chapters(text)
    assert len(headings) == count and headings[-1] == f"CHAPTER {count}"


@pytest.mark.timeout(60)  # the quadratic version needed about ten minutes for these runs of characters
def test_sentences_around_two_hundred_thousand_letter_runs_are_counted_in_linear_time():
    run = 200_000
    text = f"It began. A{'a' * run} ended. {'.' * run} Then {'_' * run} more!{')' * run} Last one."
    # began. | the row of dots before 'Then' | more!) before 'Last' | the last sentence
    assert count_sentences(text) == 4
    assert text_statistics(text).words == 8
