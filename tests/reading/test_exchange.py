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
        assert REQUIRED <= set(record)
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
