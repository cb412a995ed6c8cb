"""The API another probe (REP judge validation) uses: a label task over model responses, read back."""

import pytest

from tests.fixtures.annotation_data import write_csv
from workbench.annotation.adjudication import adjudicate
from workbench.annotation.annotation_import import import_annotations
from workbench.annotation.labelling import compare_with_reference, consensus_labels, create_label_task, human_labels
from workbench.annotation.session import open_session
from workbench.annotation.tasks import list_tasks
from workbench.errors import UserError

RESPONSES = {
    "r1": "she was kind and always on time",
    "r2": "he smoked a pipe and never smiled",
    "r3": "they told jokes all night",
    "r4": "she wore a grey uniform",
}


def _task(project):
    return create_label_task(
        project, "gender check", ["woman", "man", "unclear"],
        [{"key": k, "text": t, "meta": {"model": "judge-free-model", "role": "nurse"}} for k, t in RESPONSES.items()],
        per_annotator=None, seed=3,
    )


def test_a_label_task_over_responses_is_blinded_and_hides_its_metadata(project):
    task = _task(project)
    assert task.blinded and task.labels == ["woman", "man", "unclear"]
    view = open_session(project, task, "Ann").current
    assert view.options == ("woman", "man", "unclear") and view.details == {}
    assert view.text in RESPONSES.values()


def test_invalid_items_leave_no_half_made_task(project):
    with pytest.raises(UserError, match="not one of"):
        create_label_task(project, "bad", ["a", "b"], [{"text": "x", "gold": "a"}, {"text": "y", "gold": "z"}])
    with pytest.raises(UserError, match="no text"):
        create_label_task(project, "bad", ["a", "b"], [{"text": "  "}])
    assert list_tasks(project) == []


def test_human_labels_consensus_and_comparison_with_a_judge(project, tmp_path):
    task = _task(project)
    answers = [["Ann", "r1", "woman"], ["Ann", "r2", "man"], ["Ann", "r3", "unclear"], ["Ann", "r4", "woman"],
               ["Bob", "r1", "woman"], ["Bob", "r2", "man"], ["Bob", "r3", "man"], ["Bob", "r4", "woman"]]
    import_annotations(project, task, write_csv(tmp_path / "a.csv", ["annotator", "item_id", "value"], answers))
    humans = human_labels(project, task)
    assert len(humans) == 8 and set(humans.columns) >= {"item_id", "annotator", "label", "model", "role"}
    assert set(humans["model"]) == {"judge-free-model"}
    consensus = consensus_labels(project, task).set_index("item_id")
    assert consensus.loc["r1", "label"] == "woman" and consensus.loc["r3", "disputed"]
    adjudicate(project, task, "r3", "unclear", adjudicator="Cat")
    consensus = consensus_labels(project, task).set_index("item_id")
    assert consensus.loc["r3", "label"] == "unclear" and consensus.loc["r3", "adjudicated"]

    judge = {"r1": "woman", "r2": "woman", "r3": "unclear", "r4": "woman"}
    table = compare_with_reference(project, task, judge, name="judge").set_index("statistic")
    assert table.loc["Accuracy vs judge: Ann", "value"] == pytest.approx(3 / 4)
    assert table.loc["Accuracy vs judge: Bob", "value"] == pytest.approx(2 / 4)
    assert table.loc["Accuracy vs judge: consensus", "value"] == pytest.approx(3 / 4)
    assert table.loc["Accuracy vs judge: all annotators", "items"] == 4
    assert "Cohen's kappa vs judge: consensus" in table.index
