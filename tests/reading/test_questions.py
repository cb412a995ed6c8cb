import random
import re

import pytest

from tests.fixtures.reading_books import counted_text, reading_book
from workbench.errors import UserError
from workbench.probes.reading.names import NameWord
from workbench.probes.reading.questions import (
    NONE_OF_THE_ABOVE,
    OtherSummary,
    QuestionSettings,
    borrow_names,
    build,
    build_questions,
    latest_question_sets,
    load_questions,
    question_counts,
)
from workbench.probes.reading.scenes import cut_scenes
from workbench.probes.reading.substitution import Substitution, substitution_edits

SCENES = cut_scenes(counted_text([50] * 60), 100)  # 30 scenes of 100 words
SUMMARIES = {i: (f"Scene {i} truly happens with Anna Vale.", f"Scene {i} falsely happens with Anna Vale.")
             for i in range(len(SCENES))}
OTHERS = [OtherSummary(99, i, f"Elsewhere {i} Piet Brugge sails.") for i in range(20)]


def _normal(text):
    return " ".join(text.lower().split())


@pytest.fixture(scope="module")
def questions():
    settings = QuestionSettings(every=3, options=6, seed=11, reconstruction=5)
    return build(1, SCENES, SUMMARIES, settings, others=OTHERS)


def test_each_question_has_exactly_one_true_option_or_none(questions):
    read_along = [q for q in questions if q.read_along]
    assert len(read_along) > 20
    for q in read_along:
        trues = [i for i, src in enumerate(q.sources) if src["source"] == "true"]
        assert len(q.options) == 5 and q.choices == 6
        if q.answer is None:
            assert trues == [] and q.correct_choice == 5 and q.retention_words is None
        else:
            assert trues == [q.answer]
            assert q.options[q.answer] == SUMMARIES[q.scene][0]
            assert q.scene <= q.checkpoint_scene
        assert NONE_OF_THE_ABOVE not in q.options
        assert len({_normal(o) for o in q.options}) == len(q.options)


def test_distractors_come_from_where_their_kind_says(questions):
    for q in questions:
        for text, src in zip(q.options, q.sources):
            if src["source"] == "lookahead":
                assert src["scene"] > q.checkpoint_scene and text == SUMMARIES[src["scene"]][0]
            elif src["source"] == "false-summary":
                assert src["scene"] <= q.checkpoint_scene and src["scene"] != q.scene
                assert text == SUMMARIES[src["scene"]][1]
            elif src["source"] == "other-book":
                assert src["book_id"] == 99 and text.startswith("Elsewhere")
        assert {src["source"] for src in q.sources} <= {"true", q.kind}


def test_retention_demand_is_the_words_between_scene_and_checkpoint(questions):
    for q in questions:
        if q.read_along and q.answer is not None:
            assert q.retention_words == (q.checkpoint_scene - q.scene) * 100
            assert q.checkpoint_word == (q.checkpoint_scene + 1) * 100
            assert q.checkpoint_char == SCENES[q.checkpoint_scene].end_char


def test_answers_are_spread_over_the_positions_and_none_is_right_about_as_often(questions):
    read_along = [q for q in questions if q.read_along]
    positions = {q.correct_choice for q in read_along}
    assert len(positions) >= 4
    nones = sum(q.answer is None for q in read_along)
    assert 0 < nones < len(read_along) / 2


def test_the_same_seed_gives_the_same_questions_and_another_seed_others(questions):
    settings = QuestionSettings(every=3, options=6, seed=11, reconstruction=5)
    assert build(1, SCENES, SUMMARIES, settings, others=OTHERS) == questions
    other = build(1, SCENES, SUMMARIES, QuestionSettings(every=3, options=6, seed=12, reconstruction=5), others=OTHERS)
    assert [q.options for q in other] != [q.options for q in questions]


def test_a_kind_without_enough_options_is_skipped_not_padded():
    settings = QuestionSettings(every=3, options=6, seed=1, reconstruction=0, kinds=("lookahead",), none_share=0)
    found = build(1, SCENES, SUMMARIES, settings)
    assert max(q.checkpoint_scene for q in found) < len(SCENES) - 4  # the last checkpoints lack 4 later scenes
    assert build(1, SCENES, SUMMARIES, QuestionSettings(kinds=("other-book",), reconstruction=0)) == []


def test_reconstruction_questions_come_with_and_without_the_passage(questions):
    rebuild = [q for q in questions if not q.read_along]
    assert len(rebuild) == 10
    assert [q.kind for q in rebuild[:2]] == ["reconstruct", "reconstruct-passage"]
    for q in rebuild:
        true, false = SUMMARIES[q.scene]
        assert q.body["false_summary"] == false and q.body["reference"] == true and q.options == ()
        if q.kind == "reconstruct-passage":
            assert (q.body["passage_start"], q.body["passage_end"]) == (SCENES[q.scene].start_char,
                                                                       SCENES[q.scene].end_char)


def test_other_books_names_are_replaced_by_this_books():
    theirs = [NameWord("Piet", "given", "male", 3, "everywhere"), NameWord("Brugge", "surname", "unknown", 3, "everywhere")]
    ours = [NameWord("Anna", "given", "female", 5, "everywhere"), NameWord("Tom", "given", "male", 5, "everywhere"),
            NameWord("Vale", "surname", "unknown", 5, "everywhere")]
    text = borrow_names("Piet Brugge sails while Mrs. Brugge sleeps.", theirs, ours, random.Random(0))
    assert text == "Tom Vale sails while Mrs. Vale sleeps."


def test_the_substituted_variant_has_new_names_and_moved_offsets():
    text = counted_text([50] * 60)
    names = (NameWord("Anna", "given", "female", 1, "everywhere", replacement="Bettina"),
             NameWord("Vale", "surname", "unknown", 1, "everywhere", replacement="Ravenscroft"))
    text = "Anna Vale came.\n\n" + text
    edits = tuple(substitution_edits(text, names))
    substitution = Substitution(1, 0, names, edits)
    scenes = cut_scenes(text, 100)
    settings = QuestionSettings(every=3, options=4, seed=2, reconstruction=3)
    original = build(1, scenes, SUMMARIES, settings)
    swapped = build(1, scenes, SUMMARIES, settings, substitution=substitution, variant="substituted")
    shift = len("Bettina Ravenscroft") - len("Anna Vale")
    for before, after in zip(original, swapped):
        assert after.answer == before.answer and after.retention_words == before.retention_words
        everything = " ".join(after.options) + " ".join(v for v in after.body.values() if isinstance(v, str))
        assert not re.search(r"\b(Anna|Vale)\b", everything)
        if before.checkpoint_char is not None:
            assert after.checkpoint_char == before.checkpoint_char + shift
    with pytest.raises(UserError, match="substitute"):
        build(1, scenes, SUMMARIES, settings, variant="substituted")


def test_question_sets_are_stored_once_and_read_back_whole(project, tmp_path):
    book = reading_book(project, tmp_path)
    reading_book(project, tmp_path, seed=1, title="Another", tag="x")
    settings = QuestionSettings(every=3, options=5, seed=0, reconstruction=4)
    first = build_questions(project, book.book_id, settings)
    assert build_questions(project, book.book_id, settings).id == first.id
    stored = load_questions(project, first.id)
    kinds = {q.kind for q in stored}
    assert kinds == {"lookahead", "false-summary", "other-book", "reconstruct", "reconstruct-passage"}
    other_book = [q for q in stored if q.kind == "other-book"]
    assert all(src["book_id"] != book.book_id for q in other_book for src in q.sources if src["source"] != "true")
    counts = question_counts(project, first.id)
    assert counts["questions"].sum() == len(stored)
    assert {"retention_median", "none_of_the_above"} <= set(counts.columns)
    assert [s.id for s in latest_question_sets(project, variant="original")] == [first.id]
    with pytest.raises(UserError, match="substitute"):
        build_questions(project, book.book_id, settings, variant="substituted")
    with pytest.raises(UserError, match="no summaries"):
        build_questions(project, book.book_id, settings, summaries_model="nobody")
