import random
import re
from dataclasses import replace

import pytest

from tests.fixtures.reading_books import counted_text, reading_book
from workbench.errors import UserError
from workbench.probes.reading.names import NameWord
from workbench.probes.reading.questions import (
    NONE_OF_THE_ABOVE,
    OtherSummary,
    QuestionSettings,
    SummaryLevel,
    borrow_names,
    build,
    build_questions,
    checkpoints,
    latest_question_sets,
    load_questions,
    question_counts,
)
from workbench.probes.reading.scenes import cut_scenes
from workbench.probes.reading.substitution import Substitution, substitution_edits

SCENES = cut_scenes(counted_text([50] * 60), 100)  # 30 scenes of 100 words
SUMMARIES = {i: (f"Scene {i} truly happens with Anna Vale.", f"Scene {i} falsely happens with Anna Vale.")
             for i in range(len(SCENES))}
OTHERS = [OtherSummary(90 + b, i, f"Elsewhere {b}-{i} Piet Brugge sails.") for b in range(8) for i in range(3)]


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
            assert trues == [] and q.correct_choice == 5 and q.scene is None
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
                assert src["scene"] <= q.checkpoint_scene
                assert text == SUMMARIES[src["scene"]][1]
            elif src["source"] == "other-book":
                assert 90 <= src["book_id"] < 98 and text.startswith(f"Elsewhere {src['book_id'] - 90}-")
        assert {src["source"] for src in q.sources} <= {"true", q.kind}


def test_retention_demand_is_the_words_between_scene_and_checkpoint(questions):
    for q in questions:
        if q.read_along and q.answer is not None:
            assert q.retention_words == (q.checkpoint_scene - q.scene) * 100
            assert q.retention_scenes == q.checkpoint_scene - q.scene
            assert q.checkpoint_word == (q.checkpoint_scene + 1) * 100
            assert q.checkpoint_char == SCENES[q.checkpoint_scene].end_char


def test_none_of_the_above_demands_the_whole_book_read_so_far(questions):
    """To rule out every option the reader must remember everything read: NarrativeXL gives such a question
    the demand of the first scene (its position in the book), not none."""
    nones = [q for q in questions if q.read_along and q.answer is None]
    assert len(nones) >= 3
    for q in nones:
        assert q.retention_scenes == q.checkpoint_scene
        assert q.retention_words == q.checkpoint_scene * 100  # from the end of scene 0 to the checkpoint


def test_a_distortion_of_the_true_scene_can_be_a_wrong_option():
    settings = QuestionSettings(every=3, options=6, seed=0, reconstruction=0, kinds=("false-summary",))
    found = [q for seed in range(6) for q in build(1, SCENES, SUMMARIES, replace(settings, seed=seed))]
    own = [q for q in found if q.answer is not None
           and any(src["source"] == "false-summary" and src["scene"] == q.scene for src in q.sources)]
    assert own, "the true scene's false summary was never offered beside it"
    for q in own:
        assert SUMMARIES[q.scene][1] in q.options and q.options[q.answer] == SUMMARIES[q.scene][0]


def test_wrong_options_from_other_books_come_one_from_each_book():
    settings = QuestionSettings(every=2, options=6, seed=4, reconstruction=0, kinds=("other-book",))
    found = build(1, SCENES, SUMMARIES, settings, others=OTHERS)
    assert len(found) == len(checkpoints(len(SCENES), 2))
    for q in found:
        books = [src["book_id"] for src in q.sources if src["source"] == "other-book"]
        assert len(books) == len(set(books)) == (5 if q.answer is None else 4)
    drawn = {(src["book_id"], src["scene"]) for q in found for src in q.sources if src["source"] == "other-book"}
    assert len({book for book, _ in drawn}) == 8 and len(drawn) > 12  # every book, and scenes all over them
    # five other books are needed for a question whose five shown summaries all come from elsewhere
    few = [o for o in OTHERS if o.book_id < 94]
    assert build(1, SCENES, SUMMARIES, settings, others=few) == []
    assert build(1, SCENES, SUMMARIES, replace(settings, none_share=0), others=few)  # four suffice then


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
    reading_book(project, tmp_path, seed=2, title="A Third", tag="y")
    settings = QuestionSettings(every=3, options=3, seed=0, reconstruction=4)  # two other books suffice
    first = build_questions(project, book.book_id, settings)
    assert build_questions(project, book.book_id, settings).id == first.id
    stored = load_questions(project, first.id)
    kinds = {q.kind for q in stored}
    assert kinds == {"lookahead", "false-summary", "other-book", "reconstruct", "reconstruct-passage"}
    other_book = [q for q in stored if q.kind == "other-book"]
    for q in other_book:
        books = [src["book_id"] for src in q.sources if src["source"] != "true"]
        assert book.book_id not in books and len(set(books)) == len(books)
    counts = question_counts(project, first.id)
    assert counts["questions"].sum() == len(stored)
    assert {"retention_median", "none_of_the_above"} <= set(counts.columns)
    assert [s.id for s in latest_question_sets(project, variant="original")] == [first.id]
    with pytest.raises(UserError, match="substitute"):
        build_questions(project, book.book_id, settings, variant="substituted")
    with pytest.raises(UserError, match="no summaries"):
        build_questions(project, book.book_id, settings, summaries_model="nobody")


def test_hierarchical_summaries_give_reconstruction_questions_on_every_level():
    level1 = SummaryLevel(1, 4, {n: (f"Part {n} truly.", f"Part {n} falsely.") for n in range(8)})  # 30 scenes / 4
    level2 = SummaryLevel(2, 4, {0: ("Half one truly.", "Half one falsely."), 1: ("Half two truly.", None)})
    settings = QuestionSettings(every=3, options=6, seed=1, reconstruction=3)
    found = [q for q in build(1, SCENES, SUMMARIES, settings, others=OTHERS, higher=[level1, level2])
             if not q.read_along]
    by_level: dict[int, list] = {}
    for q in found:
        by_level.setdefault(q.body.get("level", 0), []).append(q)
    assert sorted(by_level) == [0, 1, 2]
    assert len(by_level[0]) == len(by_level[1]) == 6 and len(by_level[2]) == 2  # level 2: one node has both texts
    for q in by_level[1] + by_level[2]:
        level, node = q.body["level"], q.body["node"]
        pair = (level1 if level == 1 else level2).summaries[node]
        assert (q.body["reference"], q.body["false_summary"]) == pair and q.scene is None
        width = 4 ** level
        assert (q.body["first_scene"], q.body["last_scene"]) == (node * width, min((node + 1) * width, 30) - 1)
        if q.kind == "reconstruct-passage":
            assert q.body["passage_start"] == SCENES[q.body["first_scene"]].start_char
            assert q.body["passage_end"] == SCENES[q.body["last_scene"]].end_char
    last = [q for q in by_level[1] if q.body["node"] == 7]
    assert not last or last[0].body["last_scene"] == 29  # the last node covers the book's last scenes
    # the read-along questions stay those of the scene summaries, and a level limit keeps the levels above out
    scenes_only = build(1, SCENES, SUMMARIES, settings, others=OTHERS)
    assert [q for q in scenes_only if q.read_along] == [q for q in build(
        1, SCENES, SUMMARIES, settings, others=OTHERS, higher=[level1, level2]) if q.read_along]
    capped = build(1, SCENES, SUMMARIES, replace(settings, max_level=1), others=OTHERS, higher=[level1, level2])
    assert {q.body.get("level", 0) for q in capped if not q.read_along} == {0, 1}


def _store_level(project, book, level, group, pairs):
    """A level of hierarchical summaries stored as its summary and false-summary runs (as 'reading summarize
    --hierarchical' leaves them; stored as given, so nothing needs parsing)."""
    from workbench.jobs import Outcome, Unit, find_or_create_run, run_job
    from workbench.models.catalog import external_model
    from workbench.probes.reading.summaries import FALSE_RUN, SUMMARY_RUN

    model_id = external_model(project, "elsewhere")
    base = {"scene_set": book.scene_set.id, "book_id": book.book_id, "model": "elsewhere", "level": level,
            "group": group, "source": "import"}

    def stored(column):
        return lambda units, state: ((u, Outcome(raw=pairs[u.item_id][column])) for u in units)

    summary_run = find_or_create_run(project, SUMMARY_RUN, model_id=model_id, params={}, config=base)
    run_job(project, summary_run, [Unit(n) for n in pairs], stored(0))
    false_run = find_or_create_run(project, FALSE_RUN, model_id=model_id, params={},
                                   config={**base, "summary_run": summary_run})
    run_job(project, false_run, [Unit(n) for n in pairs], stored(1))


def test_a_book_with_hierarchical_summaries_gets_questions_on_its_levels(project, summarized_book):
    scenes = len(summarized_book.scene_set.scenes)
    first = -(-scenes // 5)
    _store_level(project, summarized_book, 1, 5, {n: (f"Stretch {n} as it was.", f"Stretch {n} otherwise.")
                                                  for n in range(first)})
    _store_level(project, summarized_book, 2, 5, {n: (f"Half {n} as it was.", f"Half {n} otherwise.")
                                                  for n in range(-(-first // 5))})
    question_set = build_questions(project, summarized_book.book_id, QuestionSettings(every=4, reconstruction=2))
    stored = [q for q in load_questions(project, question_set.id) if not q.read_along]
    levels = sorted({q.body.get("level", 0) for q in stored})
    assert levels == [0, 1, 2]
    top = [q for q in stored if q.body.get("level") == 2 and q.kind == "reconstruct-passage"]
    assert top and top[0].body["first_scene"] == 0 and top[0].body["passage_start"] == 0
    assert question_set.settings["max_level"] is None
    capped = build_questions(project, summarized_book.book_id, QuestionSettings(every=4, reconstruction=2, max_level=0))
    assert {q.body.get("level", 0) for q in load_questions(project, capped.id) if not q.read_along} == {0}
