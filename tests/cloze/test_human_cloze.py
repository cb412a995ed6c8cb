"""People doing the name cloze: a blinded task of the models' own passages, answers saved at once, scored by the
models' scorer, and a human column beside the models in the paper's table, the baseline and the comparison."""

from __future__ import annotations

import csv
import io

import pytest

from tests.fixtures.cloze_books import write_gpt4books
from workbench.annotation.agreement import agreement_table
from workbench.annotation.items import add_book_passages
from workbench.annotation.session import open_session
from workbench.cli import main
from workbench.corpus.library import update_book
from workbench.errors import UserError
from workbench.probes.cloze.analysis import passage_results
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.cloze.human import create_human_task, human_answers, humans_vs_models
from workbench.probes.cloze.models_table import models_table
from workbench.project import Project

TITLE, AUTHOR = "Zanzibar Quillfeather Chronicle", "Ottoline Vexhammer"
GOLDS = ["Darcy", "Darcy", "Elizabeth", "Jane", "Bingley", "Darcy"]
# what the model answered, and what the person will type, for the same passages: the same strings
TYPED = ["Mr. Darcy", "darcy ", "<name>Elizabeth</name>", "Lydia", "", "Darcy or Bingley"]


def _passage(k: int) -> str:
    return f"On the {k}th evening at the inn, [MASK] looked across the room and said nothing at all."


@pytest.fixture
def cloze(project: Project, tmp_path):
    """One book (a distinctive title and author) whose six passages 'gpt' answered with exactly the strings the
    person will type; a second book answered by 'gpt' only."""
    rows = [(f"<name>{t}</name>" if t and "<" not in t else t, g, _passage(k)) for k, (t, g) in enumerate(zip(TYPED, GOLDS))]
    rows[4] = ("", GOLDS[4], _passage(4))  # an empty model answer: wrong, like "don't know"
    first = write_gpt4books(tmp_path, "secret-book", rows)
    other = write_gpt4books(tmp_path, "other-book", [("<name>Tom</name>", "Tom", _passage(k)) for k in range(4)])
    import_gpt4books(project, [first, other], "gpt")
    ids = {b: project.db.execute("SELECT id FROM books WHERE external_id = ?", [b]).fetchone()[0]
           for b in ("secret-book", "other-book")}
    update_book(project, ids["secret-book"], title=TITLE, author=AUTHOR, year=1813)
    return project, ids


def _answer_all(project: Project, task: str, annotator: str, typed: dict[str, str]) -> None:
    session = open_session(project, task, annotator)
    while not session.finished:
        text = session.current.text
        key = next(k for k in range(len(GOLDS)) if _passage(k) == text)
        answer = typed[key] if isinstance(typed, dict) else typed
        if answer == "":
            session.dont_know()
        else:
            session.answer(answer)


def test_the_task_is_blinded_and_holds_the_models_passages(cloze):
    project, ids = cloze
    task = create_human_task(project, "people", [ids["secret-book"]], seed=3)
    assert task.kind == "name-cloze" and task.blinded
    session = open_session(project, task.name, "ann")
    seen = []
    while not session.finished:
        view = session.current
        shown = " ".join([view.heading, view.text, view.context_before, view.context_after, *view.options,
                          *view.details.keys(), *view.details.values()])
        for secret in (TITLE, AUTHOR, "1813", "secret-book", *{g for g in GOLDS}, "Mr. Darcy"):
            assert secret not in shown
        assert "[MASK]" in view.text
        seen.append(view.text)
        session.skip()
    assert sorted(seen) == sorted(_passage(k) for k in range(6))  # the very passages the model answered
    # each annotator has their own seeded order; the same name gets the same order again
    orders = {name: open_session(project, task.name, name).order for name in ("bo", "cy")}
    assert orders["bo"] != orders["cy"]
    assert open_session(project, task.name, "bo").order == orders["bo"]


def test_answers_persist_at_once_and_survive_reopening(cloze):
    project, ids = cloze
    create_human_task(project, "people", [ids["secret-book"]])
    session = open_session(project, "people", "ann")
    first = session.current.text
    session.answer("Darcy")
    session.dont_know()
    path = project.path
    project.close()  # no save, no close of the session: the two answers are already in the file
    reopened = Project.open(path)
    try:
        answers = human_answers(reopened)
        assert len(answers) == 2 and answers["dont_know"].tolist().count(True) == 1
        assert answers.loc[~answers["dont_know"], "answer"].item() == "Darcy"
        again = open_session(reopened, "people", "ann")
        assert again.progress.answered == 2 and again.current.text != first
    finally:
        reopened.close()


def test_a_person_is_scored_exactly_as_a_model_giving_the_same_strings(cloze):
    project, ids = cloze
    create_human_task(project, "people", [ids["secret-book"]])
    _answer_all(project, "people", "ann", dict(enumerate(TYPED)))
    people = human_answers(project).set_index("passage_id")
    model = passage_results(project, "gpt").set_index("passage_id")
    model = model[model["book_id"] == ids["secret-book"]]
    assert people["correct"].to_dict() == model["correct"].astype(bool).to_dict()
    by_gold_and_answer = {(g, a): c for g, a, c in zip(people["gold"], people["answer"], people["correct"])}
    assert by_gold_and_answer[("Darcy", "darcy")]  # spaces trimmed, case ignored
    assert not by_gold_and_answer[("Darcy", "Mr. Darcy")]  # the scorer's rule: exact name, case ignored
    assert by_gold_and_answer[("Elizabeth", "<name>Elizabeth</name>")]
    assert not by_gold_and_answer[("Bingley", "")]  # don't know: wrong, as a model's empty answer
    assert not by_gold_and_answer[("Darcy", "Darcy or Bingley")]
    assert people["correct"].sum() == 2
    comparison = humans_vs_models(project, ["gpt"]).set_index("who")
    assert comparison.loc["humans", ["passages", "correct"]].tolist() == [6, 2]
    assert comparison.loc["gpt", ["passages", "correct"]].tolist() == [6, 2]  # on the people's passages only
    assert comparison.loc["most frequent name", "passages"] == 6


def test_the_human_column_in_the_table_and_its_csv(cloze, capsys):
    from statsmodels.stats.proportion import proportion_confint

    project, ids = cloze
    create_human_task(project, "people", [ids["secret-book"]], per_book=4, seed=1)
    _answer_all(project, "people", "ann", "Darcy")  # right on every Darcy passage drawn
    answers = human_answers(project)
    k, n = int(answers["correct"].sum()), len(answers)
    assert n == 4
    table = models_table(project, ["gpt"], humans=True).set_index("book")
    assert table.loc[TITLE, "passages: humans"] == 4 and table.loc[TITLE, "passages: gpt"] == 6
    assert table.loc[TITLE, "accuracy: humans"] == pytest.approx(k / n)
    low, high = proportion_confint(k, n, method="wilson")
    assert table.loc[TITLE, "ci_low: humans"] == pytest.approx(low if k else 0.0)
    assert table.loc[TITLE, "ci_high: humans"] == pytest.approx(high if k < n else 1.0)
    assert pd_isna(table.loc["other-book", "accuracy: humans"])  # people never saw it
    path = str(project.path)
    project.close()
    assert main(["cloze", "table", path, "--model", "gpt", "--humans", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    rows = {r["book"]: r for r in csv.DictReader(io.StringIO(captured.out))}
    assert float(rows[TITLE]["accuracy: humans"]) == pytest.approx(k / n)
    assert rows[TITLE]["passages: humans"] == "4" and rows["other-book"]["passages: humans"] == ""
    assert "rests on 4 passages" in captured.err  # humans answered a subset, and the note says so
    assert main(["cloze", "table", path, "--model", "gpt", "--annotator", "ann", "--format", "csv"]) == 0
    assert "accuracy: human: ann" in capsys.readouterr().out
    assert main(["cloze", "frequent-name", path, "--humans", "--format", "csv"]) == 0
    rows = {r["book"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert rows["all books"]["human_passages"] == "4"
    assert float(rows[TITLE]["human_accuracy"]) == pytest.approx(k / n)
    assert main(["cloze", "humans", path, "--format", "csv"]) == 0
    rows = {r["who"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert set(rows) == {"humans", "gpt", "most frequent name"} and rows["gpt"]["passages"] == "4"
    assert main(["cloze", "humans", path, "--answers", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 4 and {r["answer"] for r in rows} == {"Darcy"}


def pd_isna(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_the_commands_make_the_task_and_export_the_answers(cloze, tmp_path, capsys):
    project, ids = cloze
    path = str(project.path)
    project.close()
    assert main(["cloze", "human-task", path, "--task", "people", "--book", str(ids["secret-book"]),
                 "--per-book", "3"]) == 0
    assert "3 passages" in capsys.readouterr().out
    reopened = Project.open(path)
    try:
        _answer_all(reopened, "people", "ann", "Jane")
    finally:
        reopened.close()
    out = tmp_path / "answers.csv"
    assert main(["annotate", "export", path, "--task", "people", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(rows) == 3 and {r["value"] for r in rows} == {"Jane"} and {r["annotator"] for r in rows} == {"ann"}
    assert TITLE not in out.read_text(encoding="utf-8")  # the answers file names no book


def test_a_name_cloze_task_has_no_other_items_and_agreement_on_scored_marks(cloze):
    project, ids = cloze
    create_human_task(project, "people", [ids["secret-book"]])
    with pytest.raises(UserError, match="cloze human-task"):
        add_book_passages(project, "people", [ids["secret-book"]])
    _answer_all(project, "people", "ann", "Darcy")
    _answer_all(project, "people", "bo", "darcy")
    table = agreement_table(project, "people").set_index("statistic")  # "Darcy" and "darcy": the same mark
    assert table.loc["Percent agreement (right or wrong)", "value"] == 1.0
    with pytest.raises(UserError, match="Type the name"):
        session = open_session(project, "people", "cy")
        session.answer("   ")
