"""Several people on the same passages: agreement on right/wrong (as the cloze scorer marks it) checked against
the krippendorff and statsmodels libraries on a hand-made table; pooling by passage (majority) by default, every
answer a unit only when asked, each annotator's own row; and the methods text saying how people were scored."""

from __future__ import annotations

import csv
import io

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from tests.cloze.test_human_cloze import GOLDS, _passage, cloze  # noqa: F401  (the fixture)
from workbench.annotation.agreement import agreement_table
from workbench.annotation.session import open_session
from workbench.cli import main
from workbench.export.methods import methods_record, methods_text
from workbench.probes.cloze.human import create_human_task, human_answers, humans_vs_models
from workbench.probes.cloze.models_table import models_table

# GOLDS = Darcy, Darcy, Elizabeth, Jane, Bingley, Darcy; a missing passage is skipped, "" is don't know
TYPED = {
    "ann": {0: "Darcy", 1: "Darcy", 2: "Elizabeth", 3: "Lydia", 4: "", 5: "Bingley"},  # R R R W W W
    "bo": {0: "darcy", 1: "Mr. Darcy", 2: "Elizabeth", 3: "Kitty", 4: "Bingley", 5: "Bingley"},  # R W R W R W
    "cy": {0: "Darcy", 1: "Darcy", 2: "Jane"},  # R R W, then skips passages 3-5
}
# the marks by hand: annotators x passages, NaN where not answered
MARKS = np.array([[1, 1, 1, 0, 0, 0], [1, 0, 1, 0, 1, 0], [1, 1, 0, np.nan, np.nan, np.nan]])


def _answer(project, task: str, annotator: str, typed: dict[int, str]) -> None:
    session = open_session(project, task, annotator)
    for _ in range(2 * len(GOLDS)):
        if session.finished:
            break
        key = next(k for k in range(len(GOLDS)) if _passage(k) == session.current.text)
        if key not in typed:
            session.skip()
        elif typed[key] == "":
            session.dont_know()
        else:
            session.answer(typed[key])


@pytest.fixture
def three(cloze):  # noqa: F811
    project, ids = cloze
    create_human_task(project, "people", [ids["secret-book"]], seed=4)
    for name, typed in TYPED.items():
        _answer(project, "people", name, typed)
    return project, ids


def test_agreement_on_correctness_is_the_libraries_alpha_and_kappa_on_the_hand_made_marks(three):
    project, _ = three
    marks = human_answers(project).pivot_table(index="annotator", columns="passage_id", values="correct",
                                               aggfunc="first").astype(float)
    np.testing.assert_array_equal(marks.to_numpy(), MARKS)  # the scorer's marks are the hand-made ones
    table = agreement_table(project, "people", draws=200).set_index("statistic")
    alpha = table.loc["Krippendorff's alpha (nominal, right or wrong)"]
    assert alpha["value"] == pytest.approx(krippendorff.alpha(reliability_data=MARKS, level_of_measurement="nominal"))
    assert alpha["items"] == 6 and alpha["ci_low"] <= alpha["value"] <= alpha["ci_high"]
    # raw agreement: passages 0, 3, 5 (3 and 5: two different wrong names agree, both wrong) of the 6 shared
    raw = table.loc["Percent agreement (right or wrong)"]
    assert raw["value"] == pytest.approx(3 / 6) and raw["items"] == 6 and raw["annotators"] == 3
    assert (raw["ci_low"], raw["ci_high"]) == pytest.approx(proportion_confint(3, 6, method="wilson"))
    counts, _ = aggregate_raters(MARKS[:, :3].T)  # Fleiss: the passages every annotator answered
    assert table.loc["Fleiss' kappa", "value"] == pytest.approx(fleiss_kappa(counts, method="fleiss"))
    assert table.loc["Accuracy vs the hidden name: cy", "value"] == pytest.approx(2 / 3)
    assert not any(s.endswith("all annotators") for s in table.index)  # no pooled per-answer interval here


def test_people_are_pooled_by_passage_unless_every_answer_is_asked_for(three, capsys):
    project, ids = three
    pooled = humans_vs_models(project, ["gpt"], each_annotator=True).set_index("who")
    # by majority: passages 0, 1, 2 right; 3, 5 wrong; 4 split one-one: wrong (4 of 6 if splits counted right)
    assert pooled.loc["humans", ["passages", "correct"]].tolist() == [6, 3]
    assert (pooled.loc["humans", "ci_low"], pooled.loc["humans", "ci_high"]) == pytest.approx(
        proportion_confint(3, 6, method="wilson"))
    assert "more than half" in pooled.loc["humans", "note"] and "66.7% if they counted as right" in \
        pooled.loc["humans", "note"] and "skipped passages are left out" in pooled.loc["humans", "note"]
    assert pooled.loc["human: cy", ["kind", "passages", "correct"]].tolist() == ["person", 3, 2]
    assert pooled.loc["human: ann", ["passages", "correct"]].tolist() == [6, 3]
    answers = humans_vs_models(project, ["gpt"], per_answer=True).set_index("who")
    assert answers.loc["humans", ["passages", "correct"]].tolist() == [15, 8]
    assert "too narrow" in answers.loc["humans", "note"]
    table = models_table(project, ["gpt"], humans=True).set_index("book_id")
    assert table.loc[ids["secret-book"], ["passages: humans", "accuracy: humans"]].tolist() == [6, 0.5]
    path = str(project.path)
    project.close()
    assert main(["cloze", "humans", path, "--format", "csv"]) == 0
    rows = {r["who"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert rows["humans"]["passages"] == "6" and "human: ann" not in rows
    assert main(["cloze", "humans", path, "--per-answer", "--each-annotator", "--format", "csv"]) == 0
    rows = {r["who"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert rows["humans"]["passages"] == "15" and rows["human: bo"]["correct"] == "3"
    assert main(["cloze", "frequent-name", path, "--humans", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    rows = {r["book"]: r for r in csv.DictReader(io.StringIO(captured.out))}
    assert rows["all books"]["human_passages"] == "6" and "pooled by passage" in captured.err


def test_the_methods_text_says_how_people_were_scored_only_when_there_are_people(cloze):  # noqa: F811
    project, ids = cloze
    assert "People did the same task" not in methods_text(project)  # no human answers: no word about people
    create_human_task(project, "people", [ids["secret-book"]], seed=4)
    for name, typed in TYPED.items():
        _answer(project, "people", name, typed)
    text = methods_text(project)
    assert "People did the same task as the models on a subset of the passages: 3 annotators gave 15 answers " \
           "to 6 passages of 1 book" in text
    for words in ("same function as the models' answers", "\"don't know\" (1 answer) counts as wrong",
                  "(3 skips) are left out of the denominator", "6 passages were answered by two or more",
                  "the unit is the passage: a passage counts as right when more than half",
                  "Krippendorff's alpha"):
        assert words in text
    assert "- **People:** 3 annotators gave 15 answers (1 \"don't know\") to 6 of this run's 10 passages" in text
    record = methods_record(project)
    people = [r["cloze"].get("people") for r in record["runs"] if r.get("cloze")]
    assert people and people[0]["skipped"] == 3 and people[0]["shared_passages"] == 6
