import re

import pytest

from tests.fixtures.annotation_data import add_book
from tests.fixtures.reading_books import HARBOUR_PEOPLE, HARBOUR_THINGS, NAME_WORDS, PEOPLE, harbour_story, named_story
from workbench.errors import UserError
from workbench.nlp import load_english
from workbench.probes.cloze.candidates import judge_mentions
from workbench.probes.cloze.rules import ExtractionSettings
from workbench.probes.reading.names import NameWord, choose_replacements, name_lists
from workbench.probes.reading.substitution import (
    apply_edits,
    get_substitution,
    names_frame,
    substitute_book,
    substitution_edits,
)

pytestmark = pytest.mark.slow


def _whole_word(word: str, text: str) -> bool:
    return re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", text, re.IGNORECASE) is not None


@pytest.fixture
def story_book(project):
    text = named_story(5)
    return add_book(project, "Story", "Someone", text), text


def test_every_character_name_is_found_and_none_is_left_in_the_substituted_text(project, story_book):
    book, text = story_book
    substitution = substitute_book(project, book, seed=3)
    assert {n.word for n in substitution.names} == set(NAME_WORDS)
    new = substitution.apply(text)
    for word in NAME_WORDS:
        assert not _whole_word(word, new), word
    # the name-cloze extractor's candidate finder and spaCy's PERSON entities see only the new names
    doc = load_english()(new)
    persons = {t.text for e in doc.ents if e.label_ == "PERSON" for t in e}
    assert persons and not persons & set(NAME_WORDS)
    verdicts = judge_mentions(doc, ExtractionSettings())
    assert verdicts and not {v.name for v in verdicts} & set(NAME_WORDS)


def test_ships_and_peoples_written_after_an_article_keep_their_names(project):
    """spaCy's small model tags "the Jeroboam" and "the old Manxman" as persons now and then; a word the book
    writes after an article at least half the time is a thing, not a character. A family's plural ("the
    Marshes") is still a name."""
    text = harbour_story()
    substitution = substitute_book(project, add_book(project, "Harbour", "Someone", text), seed=1)
    found = {n.word for n in substitution.names}
    assert set(HARBOUR_PEOPLE) <= found and not found & set(HARBOUR_THINGS), found
    new = substitution.apply(text)
    assert all(_whole_word(word, new) for word in HARBOUR_THINGS)
    assert not any(_whole_word(word, new) for word in HARBOUR_PEOPLE + ["Marshes"])


def test_the_substitution_is_consistent_and_keeps_titles_possessives_and_gender(project, story_book):
    book, text = story_book
    substitution = substitute_book(project, book, seed=3)
    mapping = substitution.mapping
    assert len(set(mapping.values())) == len(mapping)  # no two names share a replacement
    new = substitution.apply(text)
    for given, surname, _pronoun in PEOPLE:
        assert f"{mapping[given]} {mapping[surname]}" in new
        assert f"{mapping[given]}'s voice" in new or f"{given}'s voice" not in text
    assert f"Mrs. {mapping['Osgood']}" in new and f"Miss {mapping['Whitby']}" in new
    roles = {n.word: (n.role, n.gender) for n in substitution.names}
    assert roles["Whitby"][0] == roles["Osgood"][0] == "surname"
    assert roles["Clara"] == ("given", "female") and roles["Thomas"] == ("given", "male")
    lists = name_lists(project)
    assert mapping["Clara"] in lists.female and mapping["Thomas"] in lists.male
    assert mapping["Whitby"] in lists.surnames
    # a summary of the book gets the same names
    summary = "Clara Whitby quarrels with Thomas; Mrs. Osgood laughs at Clara's hat."
    assert substitution.substitute(summary) == (
        f"{mapping['Clara']} {mapping['Whitby']} quarrels with {mapping['Thomas']}; Mrs. {mapping['Osgood']} "
        f"laughs at {mapping['Clara']}'s hat.")


def test_offsets_of_the_original_carry_over_to_the_substituted_text(project, story_book):
    book, text = story_book
    substitution = substitute_book(project, book, seed=3)
    new = substitution.apply(text)
    cuts = [0] + [m.end() for m in re.finditer(r"\n\n", text)] + [len(text)]
    for start, end in zip(cuts, cuts[1:]):
        assert new[substitution.shift(start) : substitution.shift(end)] == substitution.substitute(text[start:end])


def test_the_mapping_is_kept_with_the_book_and_the_seed_decides_it(project, story_book):
    book, _ = story_book
    first = substitute_book(project, book, seed=3)
    stored = get_substitution(project, book)
    assert stored.mapping == first.mapping and stored.edits == first.edits and stored.seed == 3
    assert substitute_book(project, book, seed=3).mapping == first.mapping
    frame = names_frame(project, book)
    assert list(frame.columns) == ["original", "replacement", "role", "gender", "mentions", "scope"]
    assert set(frame["original"]) == set(NAME_WORDS)
    other = substitute_book(project, book, seed=4)
    assert other.mapping != first.mapping
    assert get_substitution(project, book).mapping == other.mapping


def test_replacements_never_reuse_a_word_of_the_book_and_run_on_past_the_list():
    names = [NameWord(word=f"Person{i}", role="given", gender="female", mentions=1, scope="everywhere")
             for i in range(200)]
    lists = name_lists()
    book_words = ["Ada", "agnes", "Whitby"]
    chosen = choose_replacements(names, lists, 0, book_words)
    replacements = [n.replacement for n in chosen]
    assert len(set(replacements)) == 200
    assert not {r.lower() for r in replacements} & {w.lower() for w in book_words}
    assert sum(r in lists.female for r in replacements) == len(lists.female) - 2  # Ada and Agnes are the book's


def test_an_ordinary_word_is_replaced_only_where_it_is_a_name():
    will = NameWord(word="Will", role="given", gender="male", mentions=2, scope="mentions", replacement="Hugo",
                    spans=((0, 4),))
    text = "Will came home. Will you stay? I said that Will would stay, and he will."
    edits = substitution_edits(text, [will], [0])
    assert apply_edits(text, edits) == "Hugo came home. Will you stay? I said that Hugo would stay, and he will."


def test_substituting_a_book_without_names_says_so(project):
    book = add_book(project, "Nobody", "Someone", "The rain fell on the roofs all night. " * 30)
    with pytest.raises(UserError, match="No character names"):
        substitute_book(project, book)
