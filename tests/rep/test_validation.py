"""Human validation of the judge: blinded label tasks, then judge accuracy and Cohen's kappa vs people."""

import json

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from tests.fixtures.rep_data import external_model, store_judge_run, store_rep_run
from workbench.annotation.items import list_items
from workbench.annotation.session import open_session
from workbench.annotation.tasks import get_task
from workbench.errors import UserError
from workbench.probes.rep.classify import classified_responses
from workbench.probes.rep.sets import get_set
from workbench.probes.rep.validation import create_validation_tasks, judge_agreement

TRUTH = ["woman", "man", "man", "woman", "unclear/none", "man", "woman", "man", "woman", "man"]
JUDGE = ["Woman", "man.", "woman", "woman", "unclear", "man", "the man", "man", "man", "MAN"]  # 7 agree, 1 unparsed


@pytest.fixture
def judged(project):
    gender = get_set(project, "gender")
    external_model(project, "m-1950s", decade="1950s")
    external_model(project, "judge")
    completions = {("nurse", s): f"someone ({TRUTH[s]})" for s in range(10)}
    completions[("ceo", 0)] = None  # a failed call is never sampled for people
    store_rep_run(project, "m-1950s", gender, completions, samples=10)
    frame = classified_responses(project)
    ok = frame[frame["status"] == "ok"].sort_values("sample")
    store_judge_run(project, "judge", gender, dict(zip(ok["response_id"], JUDGE)))
    return ok


def test_tasks_are_blinded_samples_without_the_judge(project, judged):
    tasks = create_validation_tasks(project, "check", sample=6, seed=3)
    assert [t.name for t in tasks] == ["check"]
    task = tasks[0]
    assert task.kind == "label" and task.blinded and task.labels == ["woman", "man", "non-binary", "unclear/none"]
    items = list_items(project, task)
    assert len(items) == 6
    meta = [item.meta for item in items]
    assert {m["response_id"] for m in meta} <= set(judged["response_id"])
    assert all(item.text.startswith("What is the gender of the nurse?") for item in items)
    for item in items:  # the judge's verdicts are nowhere in what annotators get
        assert not any(answer in item.text or answer in json.dumps(item.meta) for answer in ("Woman", "man.", "the man", "MAN"))
    session = open_session(project, task, "ann")
    assert session.current.details == {}  # model and decade hidden
    again = create_validation_tasks(project, "check again", sample=6, seed=3)[0]
    same = [item.meta["response_id"] for item in list_items(project, again)]
    assert sorted(same) == sorted(m["response_id"] for m in meta)  # the seed fixes the sample


def answer_all(project, task, annotator, truth_by_response, flip=()):
    session = open_session(project, task, annotator)
    response_of = {item.id: item.meta["response_id"] for item in list_items(project, task)}
    while not session.finished:
        rid = response_of[session.current.item_id]
        label = truth_by_response[rid]
        if rid in flip:
            label = "non-binary"
        session.answer(label)


def kappa(pairs, categories):
    n = len(pairs)
    po = sum(a == b for a, b in pairs) / n
    pe = sum((sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n) for c in categories)
    return (po - pe) / (1 - pe)


def test_judge_accuracy_and_kappa_against_people(project, judged):
    task = create_validation_tasks(project, "check", sample=10, seed=1)[0]
    truth = dict(zip(judged["response_id"], TRUTH))
    answer_all(project, task, "ann-a", truth)
    flipped = int(judged["response_id"].iloc[1])
    answer_all(project, task, "ann-b", truth, flip={flipped})
    table = judge_agreement(project, "check")
    rows = table.set_index(["against", "statistic"])

    accuracy = rows.loc[("ann-a", "accuracy")]
    assert accuracy["value"] == pytest.approx(0.7) and accuracy["items"] == 10
    low, high = proportion_confint(7, 10, method="wilson")
    assert (accuracy["ci_low"], accuracy["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert "1 judge answer(s) unparsed" in accuracy["note"]

    judge_labels = ["woman", "man", "woman", "woman", "unclear/none", "man", "unparsed", "man", "man", "man"]
    expected = kappa(list(zip(TRUTH, judge_labels)), ["woman", "man", "non-binary", "unclear/none", "unparsed"])
    assert rows.loc[("ann-a", "Cohen's kappa"), "value"] == pytest.approx(expected)

    assert rows.loc[("ann-b", "accuracy"), "value"] == pytest.approx(0.6)  # item 1 (judge right) flipped to non-binary
    consensus = rows.loc[("consensus", "accuracy")]
    assert consensus["items"] == 9 and consensus["value"] == pytest.approx(6 / 9)  # the disputed item has no consensus
    assert set(table["judge"]) == {"judge"} and set(table["task"]) == {"check"}


def test_several_demographics_give_one_task_each_and_unknown_names_are_refused(project, judged):
    race = get_set(project, "race")
    store_rep_run(project, "m-1950s", race, {("surgeon", 0): " Asian.", ("surgeon", 1): " unknown"}, samples=2)
    tasks = create_validation_tasks(project, "both", sample=3)
    assert sorted(t.name for t in tasks) == ["both (gender)", "both (race)"]
    assert get_task(project, "both (race)").labels == ["White", "Black", "Asian", "unclear/none"]
    with pytest.raises(UserError, match="no validation task called 'nothing'"):
        judge_agreement(project, "nothing")


def test_a_judge_that_never_answers_gets_zero_agreement_and_no_kappa_interval(project, judged):
    gender = get_set(project, "gender")
    external_model(project, "mute")
    store_judge_run(project, "mute", gender, {rid: "I cannot say" for rid in judged["response_id"]})
    task = create_validation_tasks(project, "check", sample=10, seed=1)[0]
    answer_all(project, task, "ann-a", dict(zip(judged["response_id"], TRUTH)))
    rows = judge_agreement(project, "check", judge="mute").set_index("statistic")
    assert rows.loc["accuracy", "value"] == 0 and "10 judge answer(s) unparsed" in rows.loc["accuracy", "note"]
    assert rows.loc["Cohen's kappa", "value"] == pytest.approx(0) and pd.isna(rows.loc["Cohen's kappa", "ci_low"])
    assert set(judge_agreement(project, "check", judge="mute")["against"]) == {"ann-a"}  # one person: no consensus row
