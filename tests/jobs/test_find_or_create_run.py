"""One rule for "the same run": asking again for the same work continues it, anything else starts a new run."""

from __future__ import annotations

import pytest

from workbench import jobs
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.cloze.prompting import DEFAULT_TEMPLATE
from workbench.prompt_templates import get_template
from workbench.summaries.runs import SUMMARY_TEMPLATE

PARAMS = {"temperature": 0.0, "max_tokens": 16, "stop": ["</name>"], "seed": 0}
CONFIG = {"passage_ids": [3, 1, 2], "chat": False}


@pytest.fixture
def ids(project):
    """Two models and two templates of the project."""
    return {
        "alpha": add_model(project, ModelSpec(label="alpha", backend="external")).id,
        "beta": add_model(project, ModelSpec(label="beta", backend="external")).id,
        "cloze": get_template(project, DEFAULT_TEMPLATE).id,
        "summary": get_template(project, SUMMARY_TEMPLATE).id,
    }


def ask(project, ids, *, kind="cloze", model="alpha", template="cloze", params=PARAMS, config=CONFIG, **kw) -> int:
    return jobs.find_or_create_run(project, kind, model_id=ids.get(model), template_id=ids.get(template),
                                   params=params, config=config, **kw)


def test_the_same_request_finds_the_same_run(project, ids):
    first = ask(project, ids, total=3)
    run = jobs.get_run(project, first)
    assert (run["status"], run["total"], run["params"], run["config"]) == ("pending", 3, PARAMS, CONFIG)
    assert ask(project, ids) == first
    # written differently, asked the same: key order, tuples for lists, 0 for 0.0
    same = {"seed": 0, "stop": ("</name>",), "max_tokens": 16, "temperature": 0}
    assert ask(project, ids, params=same, config={"chat": False, "passage_ids": (3, 1, 2)}) == first
    assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


@pytest.mark.parametrize("change", [
    {"kind": "cloze-logprob"},
    {"model": "beta"},
    {"model": None},
    {"template": "summary"},
    {"template": None},
    {"params": {**PARAMS, "max_tokens": 17}},
    {"params": {k: v for k, v in PARAMS.items() if k != "seed"}},
    {"config": {**CONFIG, "passage_ids": [1, 2, 3]}},  # other order: other items' order, other run
    {"config": {**CONFIG, "chat": True}},
    {"config": {**CONFIG, "imported_from": "pg1342.tsv"}},
])
def test_any_other_setting_starts_a_new_run(project, ids, change):
    first = ask(project, ids)
    other = ask(project, ids, **change)
    assert other != first
    assert ask(project, ids, **change) == other  # which is then continued in turn
    assert ask(project, ids) == first


def test_no_model_and_no_template_match_each_other(project, ids):
    first = ask(project, ids, model=None, template=None)
    assert ask(project, ids, model=None, template=None) == first


def test_a_template_kept_for_the_record_does_not_separate_runs(project, ids):
    first = ask(project, ids, kind="rep-judge", match_template=False)
    assert ask(project, ids, kind="rep-judge", template="summary", match_template=False) == first
    assert jobs.get_run(project, first)["template_id"] == ids["cloze"]  # the first run keeps its own record


def test_of_several_equal_runs_the_newest_is_continued(project, ids):
    jobs.create_run(project, "cloze", model_id=ids["alpha"], template_id=ids["cloze"], params=PARAMS, config=CONFIG)
    newer = jobs.create_run(project, "cloze", model_id=ids["alpha"], template_id=ids["cloze"], params=PARAMS,
                            config=CONFIG)
    assert ask(project, ids) == newer


def test_models_with_runs_of_a_kind(project, ids):
    ask(project, ids, kind="eep")
    ask(project, ids, kind="rep", model="beta")
    assert jobs.models_with_runs(project, "eep") == {ids["alpha"]}
    assert jobs.models_with_runs(project, "judge") == set()
