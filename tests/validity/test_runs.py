"""Year and narrative-time runs end to end: a tiny model behind a real llama.cpp server, resumed runs,
the cost question for paid APIs, and the commands with their fixed columns."""

from __future__ import annotations

import csv
import io
import math

import pytest

from tests.fixtures.books import novel_text
from tests.fixtures.cloze_texts import add_book
from tests.validity.conftest import write
from workbench.cli import main
from workbench.errors import UserError
from workbench.jobs import get_run, resume_run, run_counts
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.validity.answers import task_answers
from workbench.probes.validity.passages import passages_frame, sample_passages
from workbench.probes.validity.run import estimate_run, run_task
from workbench.prompt_templates import save_template

# The tiny models read 512 tokens at most: short passages and a short prompt of our own.
SHORT = {"year": ("short-year", "Year of this book?\n{passage}\nYear:"),
         "narrative-time": ("short-time", "How long?\n{passage}\nTime:")}


@pytest.fixture
def sampled(project):
    for seed in (11, 12):
        add_book(project, novel_text(seed, chapters=3, paragraphs=6), f"book-{seed}.txt", title=f"Book {seed}",
                 year=1850 + seed)
    sample_passages(project, words=25, per_book=2, seed=0)
    for task, (name, body) in SHORT.items():
        save_template(project, name, body, f"validity-{task}")
    return project


@pytest.fixture
def server_model(sampled, llama_server):
    add_model(sampled, ModelSpec(label="tiny-server", backend="openai", ref=llama_server.model,
                                 base_url=llama_server.base_url, params={"chat": True}))
    return sampled


@pytest.mark.parametrize("task", ["year", "narrative-time"])
def test_a_run_through_an_openai_compatible_server_stores_and_parses_every_answer(server_model, task):
    project = server_model
    passages = passages_frame(project)
    report = run_task(project, task, "tiny-server", template=SHORT[task][0], params={"max_tokens": 4})
    assert report.status == "done" and report.total == len(passages) == 4
    run = get_run(project, report.run_id)
    assert run["kind"] == f"validity-{task}" and run["config"] == {"task": task,
                                                                    "passage_ids": list(passages["passage_id"])}
    assert run["params"]["temperature"] == 0.0
    counts = run_counts(project, report.run_id)
    assert counts["ok"] + counts["failed"] == 4 and counts["ok"] > 0
    prompts = [r[0] for r in project.db.execute("SELECT prompt FROM responses WHERE run_id = ?", [report.run_id])]
    assert all(SHORT[task][1].split("\n")[0] in p for p in prompts)
    answers = task_answers(project, task, "tiny-server")
    assert len(answers) == 4 and answers["raw"].notna().all()
    answered = answers[answers["status"] == "ok"]
    assert (answered["value"].notna() | (answered["reason"] != "")).all()  # a value, or why there is none
    again = run_task(project, task, "tiny-server", template=SHORT[task][0], params={"max_tokens": 4})
    assert again.run_id == report.run_id and again.processed == 0


def test_a_stopped_run_continues_from_the_jobs_page(server_model):
    project = server_model
    report = run_task(project, "year", "tiny-server", template="short-year", params={"max_tokens": 4})
    with project.db.transaction():
        project.db.execute("DELETE FROM responses WHERE run_id = ? AND item_id IN (SELECT MIN(item_id) FROM responses"
                           " WHERE run_id = ?)", [report.run_id, report.run_id])
    resumed = resume_run(project, report.run_id)
    assert resumed.processed == 1 and resumed.done == 4


def test_a_cancelled_run_keeps_what_it_has_and_continues_where_it_stopped(server_model):
    from workbench.progress import TaskState

    project = server_model
    state = TaskState(on_partial=lambda _item: state.cancel())  # stop after the first answer
    report = run_task(project, "narrative-time", "tiny-server", template="short-time", params={"max_tokens": 4},
                      state=state)
    assert report.status == "cancelled" and 1 <= report.done < 4 and "Start the run again" in report.message
    stored = run_counts(project, report.run_id)
    assert stored["ok"] + stored["failed"] == report.done
    again = run_task(project, "narrative-time", "tiny-server", template="short-time", params={"max_tokens": 4})
    assert again.run_id == report.run_id and again.status == "done" and again.processed == 4 - report.done


def test_a_local_base_model_runs_too(sampled, tiny_causal_dir):
    add_model(sampled, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    report = run_task(sampled, "year", "tiny-base", template="short-year", params={"max_tokens": 3, "min_tokens": 1})
    assert report.status == "done" and run_counts(sampled, report.run_id)["ok"] == 4
    assert get_run(sampled, report.run_id)["params"]["stop"] == ["\n"]  # a base model stops at the line's end


def test_what_cannot_run_is_said(sampled, tiny_causal_dir):
    add_model(sampled, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    with pytest.raises(UserError, match="not one for the year"):
        run_task(sampled, "year", "tiny-base", template="short-time")
    with pytest.raises(UserError, match="no model called 'nobody'"):
        run_task(sampled, "year", "nobody")
    add_model(sampled, ModelSpec(label="outside", backend="external"))
    with pytest.raises(UserError, match="holds imported results; it cannot be asked"):
        run_task(sampled, "year", "outside")
    with pytest.raises(UserError, match="not a task"):
        run_task(sampled, "plot", "outside")


def test_a_paid_model_is_estimated_and_the_command_asks_first(server_model, capsys, monkeypatch):
    project = server_model
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # set, or the work is refused before the question
    add_model(project, ModelSpec(label="paid", backend="openai", ref="gpt-4o-mini", base_url=None))
    estimate = estimate_run(project, "year", "paid", template="short-year")
    assert estimate.requests == 4 and estimate.max_completion_tokens == 4 * 12 and estimate.prompt_tokens > 0
    assert estimate.cost is not None and estimate.cost > 0
    code = main(["validity", "run", str(project.path), "--question", "year", "--model", "paid", "--template", "short-year"])
    err = capsys.readouterr().err  # the one question of planned work (no terminal here: refused, nothing sent)
    assert code == 1 and "paid is a paid API: 4 requests" in err and "Nothing was sent" in err and "--yes" in err
    assert project.db.execute("SELECT COUNT(*) FROM runs WHERE kind = 'validity-year'").fetchone()[0] == 0
    assert main(["validity", "run", str(project.path), "--question", "year", "--model", "tiny-server", "--template",
                 "short-year", "--max-tokens", "4", "--yes"]) == 0
    assert "4 of 4 answered" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- commands
def rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_analysis_commands_print_the_fixed_columns(studied, capsys):
    project, ids = studied
    capsys.readouterr()
    assert main(["validity", "year", str(project.path), "--model", "alpha", "--grouped-by", "alpha", "--groups", "quintile",
                 "--format", "csv"]) == 0
    table = rows(capsys.readouterr().out)
    assert list(table[0])[:10] == ["group", "books", "missing", "missing_share", "mae", "mae_ci_low", "mae_ci_high",
                                   "p_value", "spearman_rho", "spearman_p"]
    assert [r["group"] for r in table] == ["top", "bottom", "all", "difference"]
    assert table[3]["p_value"] != "" and table[2]["spearman_rho"] != "" and table[0]["spearman_rho"] == ""
    assert main(["validity", "year", str(project.path), "--model", "alpha", "--grouped-by", "beta", "--books",
                 "--format", "csv"]) == 0
    books = rows(capsys.readouterr().out)
    assert list(books[0]) == ["book", "group", "accuracy", "year", "answer", "predicted", "abs_error", "tied_at_cut",
                              "flag"]
    assert [(b["group"], b["tied_at_cut"]) for b in books if b["group"] in ("top", "bottom")] == [
        ("top", "False")] + [("bottom", "True")] * 9  # beta gets nine books wholly wrong: all of them are in
    refused = next(b for b in books if b["book"] == "b05")
    assert refused["predicted"] == "" and refused["answer"] == "I cannot say."
    assert main(["validity", "narrative-time", str(project.path), "--model", "alpha", "--grouped-by", "alpha", "--reference",
                 "imported", "--format", "csv"]) == 0
    table = rows(capsys.readouterr().out)
    assert list(table[0])[:5] == ["group", "items", "spearman_rho", "ci_low", "ci_high"]
    assert table[2]["items"] == "10"


def test_passages_and_predictions_by_command(project, tmp_path, capsys):
    book = add_book(project, novel_text(3, chapters=3, paragraphs=8), "b.txt", title="Bee")
    assert main(["validity", "passages", str(project.path), "--words", "60", "--per-book", "2", "--seed", "3"]) == 0
    assert "2 passage(s) in 1 book(s)." in capsys.readouterr().out
    path = write(tmp_path / "answers.csv", "book,passage_id,answer\nBee,1,1851\nBee,2,the 1850s\n")
    assert main(["validity", "import", str(project.path), "--question", "year", "--model-label", "outside", str(path)]) == 0
    answers = task_answers(project, "year", "outside")
    assert list(answers["value"]) == [1851, 1855] and list(answers["flag"]) == ["", "decade"]
    strict = task_answers(project, "year", "outside", spans="missing")
    assert list(strict["value"].fillna(0)) == [1851, 0] and strict["reason"].iloc[1].startswith("a decade, not one year")
    bad = write(tmp_path / "bad.csv", "book,answer\nBee,1851\nNobody,1900\n")
    assert main(["validity", "import", str(project.path), "--question", "year", "--model-label", "x", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "line 2: the book has 2 passages" in err and "line 3: no book has" in err
    assert main(["validity", "passages", str(project.path), "--list", "--format", "csv"]) == 0
    assert len(rows(capsys.readouterr().out)) == 2 and book
    assert main(["validity", "annotate", str(project.path), "--task", "timing"]) == 0
    assert "with 2 passage(s)" in capsys.readouterr().out


def test_each_passage_reads_the_newest_runs_first_answer(studied, tmp_path):
    """Of the model's runs with the same settings, a passage's answer is the newest run's (its sample 0); a
    passage the newest run left out keeps the older run's answer."""
    from tests.validity.conftest import ALPHA_YEARS, write
    from workbench.probes.validity.predictions import import_predictions

    project, ids = studied
    import_predictions(project, "year", write(tmp_path / "again.csv", "book,answer\nb01,Published in 1999.\n"), "alpha")
    newest = project.db.execute("SELECT MAX(run_id) FROM responses").fetchone()[0]
    passage = project.db.execute("SELECT item_id FROM responses WHERE run_id = ?", [newest]).fetchone()[0]
    project.db.execute("INSERT INTO responses (run_id, item_id, sample, status, raw, created_at)"
                       " VALUES (?, ?, 1, 'ok', 'Published in 1777.', '2024-01-01')", [newest, passage])
    answers = task_answers(project, "year", "alpha").set_index("book_id")
    assert answers.loc[ids[1], "value"] == 1999 and answers.loc[ids[1], "run_id"] == newest
    for i in range(2, 11):
        expected = ALPHA_YEARS[i]
        assert (math.isnan(answers.loc[ids[i], "value"]) if expected is None else answers.loc[ids[i], "value"] == expected)
        assert answers.loc[ids[i], "run_id"] != newest
    assert answers.index.is_unique and len(answers) == 10
