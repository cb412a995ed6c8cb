"""The command line asks before paying, as the desktop app does: every command that starts model work on a
paid API shows the cost estimate and asks; ``--yes`` skips the question; without a terminal to answer on,
nothing is sent unless ``--yes`` was given.

The "paid API" here is llama.cpp's server behind the fault proxy on 127.0.0.1, with a price set for it:
what matters is that not one request reaches it before the person agreed.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.cloze_texts import add_book, novel
from workbench import jobs
from workbench.cli import main
from workbench.models.catalog import ModelSpec, add_model
from workbench.models.prices import set_price
from workbench.models.usage import run_usage
from workbench.project import Project

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def paid(project, fault_proxy, llama_server):
    """A project with a book and an API model 'api' that costs $2.50 / $10 per million tokens."""
    add_book(project, novel(12), "wet-week.txt", title="Wet Week")
    add_model(project, ModelSpec(label="api", backend="openai", ref=llama_server.model, base_url=fault_proxy.base_url))
    set_price(project, llama_server.model, 2.5, 10.0)
    path = project.path
    project.close()
    return path


def rep_run(path) -> list[str]:
    return ["rep", "run", str(path), "--model", "api", "--demographic", "gender", "--samples", "1",
            "--max-tokens", "2"]


def test_without_a_terminal_a_paid_run_is_refused_with_its_cost_and_nothing_is_sent(paid, fault_proxy, capsys):
    assert main(rep_run(paid)) == 1
    err = capsys.readouterr().err
    assert "api is a paid API: 5 requests" in err and "at most about $" in err
    assert "Nothing was sent" in err and "--yes" in err
    assert fault_proxy.posts() == []
    with Project.open(paid) as project:
        assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_with_yes_the_estimate_is_shown_and_the_run_goes_ahead(paid, fault_proxy, capsys):
    assert main([*rep_run(paid), "--yes"]) == 0
    captured = capsys.readouterr()
    assert "api is a paid API: 5 requests" in captured.err
    assert "5 of 5 answered" in captured.out
    assert len(fault_proxy.posts()) == 5


def test_the_refusal_says_how_to_mark_a_model_on_ones_own_computer_free(paid, capsys):
    assert main(rep_run(paid)) == 1
    assert "--param free=true" in capsys.readouterr().err


def test_a_model_marked_free_runs_without_a_question_and_costs_nothing(paid, fault_proxy, capsys):
    """A server on the scholar's own computer, marked free: no --yes needed, no cost counted."""
    assert main(["model", "edit", str(paid), "api", "--param", "free=true"]) == 0
    capsys.readouterr()
    assert main(rep_run(paid)) == 0
    captured = capsys.readouterr()
    assert "paid API" not in captured.err and "5 of 5 answered" in captured.out
    assert len(fault_proxy.posts()) == 5
    with Project.open(paid) as project:
        (run_id,) = project.db.execute("SELECT id FROM runs").fetchone()
        assert run_usage(project, run_id)["cost"] == 0.0  # the price set for this model no longer counts


def answer_on_a_terminal(argv: list[str], answer: str) -> tuple[int, str]:
    """Run the command with a terminal as its input, typing ``answer`` at the question."""
    leader, follower = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "workbench", *argv], cwd=ROOT, stdin=follower,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(follower)
    try:
        os.write(leader, answer.encode() + b"\n")
        out, err = child.communicate(timeout=180)
    finally:
        os.close(leader)
    return child.returncode, out + err


def test_on_a_terminal_no_sends_nothing_and_yes_runs(paid, fault_proxy):
    code, output = answer_on_a_terminal(rep_run(paid), "n")
    assert code == 1, output
    assert "api is a paid API: 5 requests" in output and "Go ahead? [y/N]" in output
    assert "Nothing was sent, at your request." in output
    assert fault_proxy.posts() == []
    code, output = answer_on_a_terminal(rep_run(paid), "y")
    assert code == 0, output
    assert "5 of 5 answered" in output and len(fault_proxy.posts()) == 5


def stored_paraphrases(project, model_id: int) -> int:
    """Three paraphrases of every name-cloze passage, stored as a paraphrase run of the model; the first
    passage's id."""
    from workbench.probes.leakage import decop, passages
    from workbench.prompt_templates import get_template

    ids = passages.gather(project, "cloze")
    template = get_template(project, decop.PARAPHRASE_TEMPLATE, kind=decop.PARAPHRASE_TEMPLATE)
    run_id = jobs.find_or_create_run(project, decop.PARAPHRASE_KIND, model_id=model_id, template_id=template.id,
                                     params={"max_tokens": 400}, config={"passage_ids": ids})

    def process(units, state):
        for unit in units:
            yield unit, jobs.Outcome(raw=f"In other words, version {unit.sample} of passage {unit.item_id}.")

    jobs.run_job(project, run_id, [jobs.Unit(i, s) for i in ids for s in range(decop.PARAPHRASES)], process)
    return ids[0]


@pytest.fixture
def every_command(paid, tmp_path):
    """Each command that starts model work, set up so that it would reach the model."""
    with Project.open(paid) as project:
        from tests.fixtures.reading_books import reading_book
        from workbench.annotation.tasks import create_task
        from workbench.probes.cloze.extract import extract_books
        from workbench.probes.cloze.rules import ExtractionSettings
        from workbench.probes.reading.questions import QuestionSettings, build_questions

        extract_books(project, settings=ExtractionSettings(per_book=3, seed=2))
        create_task(project, "summaries", "summary-validity")
        model_id = project.db.execute("SELECT id FROM models WHERE label = 'api'").fetchone()[0]
        stopped = jobs.create_run(project, "rep", model_id=model_id, params={"max_tokens": 2},
                                  config={"sets": [], "samples": 1})
        story = reading_book(project, tmp_path).book_id
        build_questions(project, story, QuestionSettings(every=3, reconstruction=2))
        paraphrased = stored_paraphrases(project, model_id)
    p = str(paid)
    return {
        "cloze run": ["cloze", "run", p, "--model", "api"],
        "rep run": rep_run(paid),
        "rep classify --judge": ["rep", "classify", p, "--judge", "api"],
        "rep entities": ["rep", "entities", p, "--model", "api", "--tag", "genre=gothic"],
        "annotate summarize": ["annotate", "summarize", p, "--task", "summaries", "--model", "api", "--book", "1"],
        "continue": ["continue", p, str(stopped)],
        "reading summarize": ["reading", "summarize", p, "--book", str(story), "--model", "api"],
        "reading run": ["reading", "run", p, "--model", "api"],
        "decop run": ["decop", "run", p, "--model", "api", "--paraphraser", "api"],
        "decop regenerate": ["decop", "regenerate", p, "--paraphraser", "api", "--passage", str(paraphrased)],
    }


COMMANDS = ["cloze run", "rep run", "rep classify --judge", "rep entities", "annotate summarize", "continue",
            "reading summarize", "reading run", "decop run", "decop regenerate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_that_starts_paid_work_asks_first(every_command, command, fault_proxy, capsys):
    assert main(every_command[command]) == 1
    err = capsys.readouterr().err
    assert "api is a paid API" in err and "--yes" in err, err
    assert fault_proxy.posts() == []


@pytest.mark.parametrize("command", [["membership", "run", "{p}", "--model", "api"],
                                     ["surprisal", "{p}", "--model", "api", "{text}"]], ids=["membership", "surprisal"])
def test_commands_that_need_an_open_model_refuse_an_api_before_sending_anything(paid, fault_proxy, tmp_path, command,
                                                                                 capsys):
    text = tmp_path / "text.txt"
    text.write_text("It was a dark and stormy night.", encoding="utf-8")
    with Project.open(paid) as project:
        from workbench.probes.cloze.extract import extract_books
        from workbench.probes.cloze.rules import ExtractionSettings

        extract_books(project, settings=ExtractionSettings(per_book=3, seed=2))
    assert main([part.format(p=paid, text=text) for part in command]) == 1
    assert "not an open model" in capsys.readouterr().err
    assert fault_proxy.posts() == []
