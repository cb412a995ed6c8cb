import json

import pytest

from workbench.errors import UserError
from workbench.probes.reading.exchange import export_questions, import_questions
from workbench.probes.reading.questions import QuestionSettings, build_questions, load_questions

REQUIRED = {"question_id", "book", "kind", "options", "answer", "retention_words", "checkpoint_char"}


@pytest.fixture
def exported(project, summarized_book, tmp_path):
    question_set = build_questions(project, summarized_book.book_id,
                                   QuestionSettings(every=3, options=5, seed=1, reconstruction=3))
    out = tmp_path / "questions.jsonl"
    count = export_questions(project, summarized_book.book_id, out, text_out=tmp_path / "book.txt")
    return question_set, out, count


def test_every_line_is_one_question_with_the_fields_others_need(project, summarized_book, exported, tmp_path):
    question_set, out, count = exported
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    questions = load_questions(project, question_set.id)
    assert count == len(records) == len(questions)
    text = (tmp_path / "book.txt").read_text(encoding="utf-8")
    assert text == summarized_book.text
    for record, question in zip(records, questions):
        assert set(record) >= REQUIRED
        assert record["book"] == "The Mill" and record["question_id"] == question.key
        assert record["options"] == list(question.options) and record["answer"] == question.answer
        if record["kind"] in ("lookahead", "false-summary", "other-book"):
            assert 0 < record["checkpoint_char"] <= len(text)
            if record["answer"] is not None:
                assert isinstance(record["retention_words"], int)
            else:
                assert record["none_of_the_above"] is True
        else:
            assert record["false_summary"] and record["reference"]
    assert len({r["question_id"] for r in records}) == len(records)


def test_an_exported_file_imports_as_the_same_questions(project, summarized_book, exported):
    question_set, out, _ = exported
    (imported,) = import_questions(project, out, summarized_book.book_id)
    assert imported.id != question_set.id and imported.origin == "imported"
    before = load_questions(project, question_set.id)
    after = load_questions(project, imported.id)
    fields = ("key", "kind", "options", "answer", "retention_words", "checkpoint_char", "checkpoint_scene", "scene")
    assert [[getattr(q, f) for f in fields] for q in after] == [[getattr(q, f) for f in fields] for q in before]
    assert [q.body for q in after] == [q.body for q in before]
    assert import_questions(project, out, summarized_book.book_id)[0].id == imported.id  # stored once


@pytest.mark.parametrize("change, problem", [
    (lambda r: r.update(answer=9), "points past"),
    (lambda r: r.update(kind="riddle"), "kind 'riddle'"),
    (lambda r: r.update(checkpoint_char=10**9), "past the end of the book"),
    (lambda r: r.update(options=["same", "Same "]), "same text"),
    (lambda r: r.update(checkpoint_char=None), "needs checkpoint_char"),
    (lambda r: r.update(retention_words=-3), "whole number"),
])
def test_a_file_with_a_bad_line_imports_nothing(project, summarized_book, exported, tmp_path, change, problem):
    _, out, _ = exported
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    change(records[0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    sets_before = project.db.execute("SELECT COUNT(*) FROM reading_question_sets").fetchone()[0]
    with pytest.raises(UserError, match=problem):
        import_questions(project, bad, summarized_book.book_id)
    assert project.db.execute("SELECT COUNT(*) FROM reading_question_sets").fetchone()[0] == sets_before


def test_exporting_a_book_without_questions_says_what_to_do(project, summarized_book, tmp_path):
    with pytest.raises(UserError, match="reading questions"):
        export_questions(project, summarized_book.book_id, tmp_path / "none.jsonl")


def test_without_a_book_each_line_goes_to_the_book_it_names(project, summarized_book, exported, tmp_path, capsys):
    from tests.fixtures.reading_books import reading_book
    from workbench.cli import main

    other = reading_book(project, tmp_path, seed=1, title="The Inn", tag="x")
    build_questions(project, other.book_id, QuestionSettings(every=4, options=4, seed=2, reconstruction=0))
    second = tmp_path / "inn.jsonl"
    export_questions(project, other.book_id, second)
    _, out, count = exported
    both = tmp_path / "both.jsonl"
    records = [json.loads(line) for path in (out, second) for line in path.read_text(encoding="utf-8").splitlines()]
    records[-1]["book"] = "  the INN "  # titles are matched without case or extra spaces
    both.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    sets = import_questions(project, both)
    assert {s.book_id: len(load_questions(project, s.id)) for s in sets} == {
        summarized_book.book_id: count, other.book_id: len(records) - count}

    capsys.readouterr()
    assert main(["reading", "import", str(project.path), str(second)]) == 0
    assert f"questions for book {other.book_id}." in capsys.readouterr().out


@pytest.mark.parametrize("name, problem", [("Moby-Dick", "'Moby-Dick' (lines 1, 2, 3, …) is not a book of the library"),
                                           ("", "lines 1, 2, 3, … name no book")])
def test_a_book_that_cannot_be_matched_stops_the_import_and_says_what_to_do(project, summarized_book, exported,
                                                                           tmp_path, name, problem):
    _, out, _ = exported
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["book"] = name
    bad = tmp_path / "elsewhere.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    with pytest.raises(UserError) as caught:
        import_questions(project, bad)
    assert problem in str(caught.value) and "give --book ID" in str(caught.value)
    assert project.db.execute("SELECT COUNT(*) FROM reading_question_sets WHERE origin = 'imported'").fetchone()[0] == 0


def test_a_title_two_books_share_is_not_guessed(project, summarized_book, exported, tmp_path):
    from tests.fixtures.reading_books import reading_book

    reading_book(project, tmp_path, seed=1, title="The Mill", tag="x")
    with pytest.raises(UserError, match="'The Mill' .* is the title of several books"):
        import_questions(project, exported[1])


def test_questions_on_hierarchical_summaries_keep_their_level_and_stretch(project, summarized_book, tmp_path):
    from workbench.probes.reading.questions import SummaryLevel, build, store_questions

    scenes = summarized_book.scene_set.scenes
    level1 = SummaryLevel(1, 5, {n: (f"Stretch {n} as it was.", f"Stretch {n} otherwise.")
                                 for n in range(-(-len(scenes) // 5))})
    questions = build(summarized_book.book_id, scenes, {0: ("Scene 0 as it was.", "Scene 0 otherwise.")},
                      QuestionSettings(every=50, options=3, reconstruction=2), higher=[level1])
    stored = store_questions(project, summarized_book.book_id, questions, {"test": 1},
                             scene_set_id=summarized_book.scene_set.id, variant="original", summaries="x")
    out = tmp_path / "levels.jsonl"
    export_questions(project, summarized_book.book_id, out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r.get("level") for r in records} == {None, 1}
    (imported,) = import_questions(project, out, summarized_book.book_id)
    assert [q.body for q in load_questions(project, imported.id)] == [q.body for q in load_questions(project, stored.id)]
