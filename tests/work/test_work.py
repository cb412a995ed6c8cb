"""Planned model work (``workbench.work.Work``): each probe's planning looks its models up once and hands back
one object that estimates, runs and says how it went, for the command line and the app alike."""

from __future__ import annotations

import pytest

from tests.fixtures.cloze_books import SHORT_TEMPLATE, write_book
from workbench.corpus.importer import import_paths
from workbench.errors import UserError
from workbench.models.catalog import ModelSpec, add_model
from workbench.models.prices import set_price
from workbench.probes.cloze.extract import extract_books
from workbench.probes.cloze.plan import ProbePlan, plan_work
from workbench.probes.cloze.rules import project_settings
from workbench.prompt_templates import save_template
from workbench.work import continue_work


@pytest.fixture
def cloze_project(project, tmp_path, tiny_causal_dir):
    """Two books with 3 + 2 passages, the 'short' template, a tiny local model and a priced API model."""
    folder = tmp_path / "books"
    folder.mkdir()
    import_paths(project, [write_book(folder, "quay-tales", 12), write_book(folder, "snow-house", 2)])
    save_template(project, "short", SHORT_TEMPLATE, "cloze")
    extract_books(project, settings=project_settings(project, per_book=3, seed=4, fast=True))
    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir)))
    add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-test", base_url="http://127.0.0.1:9/v1"))
    set_price(project, "gpt-test", 2.5, 10.0)
    return project


def test_a_cloze_plan_estimates_free_and_paid_models_alike_and_asks_only_about_the_paid(cloze_project):
    work = plan_work(cloze_project, ProbePlan(models=["tiny", "api"], template="short", max_tokens=4))
    assert [spec.label for spec in work.models] == ["tiny", "api"]
    assert [spec.label for spec in work.paid] == ["api"]
    estimate = work.estimate()
    assert [e.requests for _, e in estimate.per_model] == [5, 5]
    assert estimate.per_model[0][1].cost == 0.0  # a model on this computer costs nothing
    paid = work.estimate(paid_only=True)
    assert paid.cost == pytest.approx(paid.per_model[0][1].prompt_tokens * 2.5e-6 + 20 * 10e-6)
    question = work.cost_question(paid)
    assert question.startswith("Name cloze on tiny, api.")
    assert "api is a paid API: 5 requests" in question and "at most 20 answer tokens" in question
    assert "tiny" not in question.split("\n\n", 1)[1]  # only the paid model is asked about
    assert "not paid for again" in question and question.endswith("Go ahead?")
    assert {"cloze-results", "runs"} <= work.changes


def test_a_cloze_work_runs_on_a_tiny_local_model_and_says_what_happened(cloze_project):
    work = plan_work(cloze_project, ProbePlan(models=["tiny"], template="short", max_tokens=2))
    outcome = work.run()
    assert outcome.succeeded and [r.status for r in outcome.reports] == ["done"]
    assert outcome.labels == ["tiny"] and outcome.report.total == 5
    assert work.outcome_words(outcome) == "tiny: 5 of 5 passages answered."
    again = work.run()  # the same work again continues its run: nothing is left to ask
    assert again.report.run_id == outcome.report.run_id and again.report.processed == 0


def test_a_model_that_cannot_do_the_kind_does_not_stop_the_others_and_is_named(cloze_project):
    work = plan_work(cloze_project, ProbePlan(models=["tiny", "api"], kind="cloze-logprob", template="short"))
    outcome = work.run()
    assert outcome.labels == ["tiny"] and "api" in outcome.problems and not outcome.succeeded
    words = work.outcome_words(outcome)
    assert words.startswith("tiny: 5 of 5 passages answered.") and "\napi: " in words


def test_a_key_not_set_is_refused_before_any_estimate(cloze_project, monkeypatch):
    monkeypatch.delenv("TEST_MISSING_KEY", raising=False)
    add_model(cloze_project, ModelSpec(label="keyless", backend="openai", ref="gpt-test",
                                       base_url="http://127.0.0.1:9/v1", api_key_env="TEST_MISSING_KEY"))
    work = plan_work(cloze_project, ProbePlan(models=["keyless"], template="short"))
    with pytest.raises(UserError, match="keyless cannot be asked yet"):
        work.check()


def test_a_plan_naming_an_unknown_model_is_refused_when_planned(cloze_project):
    with pytest.raises(UserError, match="no model called 'nobody'"):
        plan_work(cloze_project, ProbePlan(models=["nobody"], template="short"))


def test_continuing_a_run_is_a_work_too(cloze_project):
    first = plan_work(cloze_project, ProbePlan(models=["tiny"], template="short", max_tokens=2)).run()
    work = continue_work(cloze_project, first.report.run_id, changes=("cloze-results",))
    assert work.paid == [] and work.title == f"Continuing run {first.report.run_id}"
    outcome = work.run()
    assert outcome.report.processed == 0 and outcome.succeeded


def test_rep_prompts_are_planned_once_estimated_and_run_on_a_tiny_model(project, tiny_causal_dir):
    from workbench.probes.rep.plans import rep_work
    from workbench.probes.rep.run import SamplingSettings

    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir)))
    work = rep_work(project, ["tiny"], ["gender"], SamplingSettings(samples=1, max_tokens=2))
    (spec, estimate), = work.estimate().per_model
    assert spec.label == "tiny" and estimate.requests == 5 and estimate.cost == 0.0
    outcome = work.run()
    assert outcome.succeeded and outcome.report.total == 5
    assert work.outcome_words(outcome) == "tiny: 5 of 5 completions answered."
    assert "rep-results" in work.changes
