"""REP runs and the judge on tiny real models: samples stored with seeds, resumable, classified."""

import pytest

from workbench import jobs
from workbench.errors import UserError
from workbench.probes.rep.classify import classified_responses, judge_classifier
from workbench.probes.rep.judge import KIND as JUDGE_KIND
from workbench.probes.rep.judge import run_judge
from workbench.probes.rep.lexical import lexical_label
from workbench.probes.rep.run import SamplingSettings, run_rep, start_rep_run
from workbench.probes.rep.sets import get_set
from workbench.probes.rep.stats import rep_counts
from workbench.progress import TaskState
from workbench.project import Project
from workbench.prompt_templates import template_by_id

SMALL = SamplingSettings(samples=3, max_tokens=12, min_tokens=4, seed=100)


def test_run_stores_n_samples_per_role_with_seeds(project, decade_models):
    report = run_rep(project, "tiny-1950s", ["gender"], SMALL)
    assert report.status == "done" and report.total == 5 * 3 and report.failed == 0
    run = jobs.get_run(project, report.run_id)
    assert run["kind"] == "rep" and run["params"]["temperature"] == 1.0 and run["params"]["seed"] == 100
    gender = get_set(project, "gender")
    assert run["config"]["sets"] == [{"id": gender.id, "name": "gender", "version": 1, "hash": gender.hash}]
    frame = jobs.responses_frame(project, report.run_id)
    assert len(frame) == 15
    assert sorted(frame["item_id"].unique()) == sorted(gender.prompt_ids.values())
    assert (frame["seed"] == 100 + frame["sample"]).all()
    stems = {pid: p.stem for pid, p in gender.prompt_by_id().items()}
    assert (frame["prompt"] == frame["item_id"].map(stems)).all()  # a base model gets the bare stem
    assert frame["raw"].str.len().gt(0).all()


def test_same_request_continues_the_run_and_other_settings_start_a_new_one(project, decade_models):
    first = run_rep(project, "tiny-1950s", ["gender"], SMALL)
    again = run_rep(project, "tiny-1950s", ["gender"], SMALL)
    assert again.run_id == first.run_id and again.processed == 0 and again.done == 15
    other = start_rep_run(project, "tiny-1950s", ["gender"], SamplingSettings(samples=3, max_tokens=12, seed=7))
    assert other != first.run_id


def test_cancelled_run_resumes_without_duplicates(project, decade_models):
    seen = []
    state = TaskState(on_partial=lambda result: seen.append(result) or (len(seen) >= 4 and state.cancel()))
    report = run_rep(project, "tiny-1990s", ["race"], SMALL, state)
    assert report.status == "cancelled" and 4 <= report.done < 15
    finished = run_rep(project, "tiny-1990s", ["race"], SMALL)
    assert finished.status == "done" and finished.done == 15 and finished.done_before == report.done
    assert len(jobs.responses_frame(project, finished.run_id)) == 15


def test_same_seed_gives_the_same_completions_in_another_project(project, decade_models, tmp_path, decade_model_dirs):
    from workbench.models.catalog import ModelSpec, add_model

    first = run_rep(project, "tiny-1950s", ["gender"], SMALL)
    other = Project.create(tmp_path / "other.palimpsest")
    try:
        add_model(other, ModelSpec(label="again", backend="hf", ref=str(decade_model_dirs["1950s"])))
        second = run_rep(other, "again", ["gender"], SMALL)
        texts = lambda p, r: list(jobs.responses_frame(p, r)["raw"])
        assert texts(project, first.run_id) == texts(other, second.run_id)
    finally:
        other.close()


def test_chat_model_gets_the_frame(project, decade_models):
    report = run_rep(project, "tiny-judge", ["religion"], SamplingSettings(samples=1, max_tokens=6, min_tokens=2))
    frame = jobs.responses_frame(project, report.run_id)
    religion = get_set(project, "religion").parsed
    assert frame["prompt"].str.contains("Continue the sentence below", regex=False).all()
    assert frame["prompt"].str.contains(religion.role("card_fraud").stem, regex=False).any()


def test_lexical_classification_of_stored_completions(project, decade_models):
    run_rep(project, "tiny-1950s", ["gender"], SMALL)
    frame = classified_responses(project)
    rules = get_set(project, "gender").parsed.lexical
    assert (frame["label"] == frame["raw"].map(lambda text: lexical_label(text, rules))).all()
    assert (frame["outcome"] == "labelled").all()
    assert set(frame["decade"]) == {"1950s"} and set(frame["stage"]) == {"fine-tuned"}


def test_judge_labels_every_completion_once_and_unparsed_are_counted(project, decade_models):
    for model in decade_models:
        run_rep(project, model, ["gender", "race"], SMALL)
    with pytest.raises(UserError, match="no REP completions"):
        run_judge(project, "tiny-judge", ["religion"])
    reports = run_judge(project, "tiny-judge", max_tokens=4)
    assert len(reports) == 2 and all(r.status == "done" for r in reports)
    assert sum(r.total for r in reports) == 2 * (5 + 5) * 3
    judge_run = jobs.get_run(project, reports[0].run_id)
    assert judge_run["kind"] == JUDGE_KIND and judge_run["params"]["temperature"] == 0.0
    template = template_by_id(project, judge_run["template_id"])  # the exact judge text, on record
    assert template.kind == JUDGE_KIND and template.name == f"rep-judge-{judge_run['config']['set']['name']}"
    assert "{response}" in template.body
    answers = jobs.responses_frame(project, reports[0].run_id)
    rep_ids = set(classified_responses(project)["response_id"])
    assert set(answers["item_id"]) <= rep_ids and (answers["sample"] == 0).all()
    assert answers["prompt"].str.contains("Reply with exactly one of").all()

    again = run_judge(project, "tiny-judge", max_tokens=4)
    assert sum(r.processed for r in again) == 0  # nothing judged twice
    assert jobs.resume_run(project, reports[0].run_id).processed == 0  # the Jobs page can continue judge runs

    judged = classified_responses(project, judge_classifier("tiny-judge"))
    assert set(judged["outcome"]) <= {"labelled", "unparsed"}
    counts = rep_counts(project, judge_classifier("tiny-judge"))
    per_role = counts.drop_duplicates(["model", "demographic", "role"])
    assert (per_role["n"] == 3).all()  # unparsed answers stay in the denominator
    unparsed = judged.groupby(["model", "demographic", "role"])["outcome"].apply(lambda s: (s == "unparsed").sum())
    assert list(per_role.set_index(["model", "demographic", "role"])["unparsed"].loc[unparsed.index]) == list(unparsed)
