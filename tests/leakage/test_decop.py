"""DE-COP: paraphrases stored and regenerable, options in balanced orders, accuracy against chance."""

import itertools

import pytest
from scipy.stats import binomtest

from tests.fixtures.leakage import add_cloze_book
from workbench.probes.leakage import decop, passages

TEXT = ("Margery kept the letters in a tin box under the bed. She read them when Tobias was away. "
        "The clock in the hall struck eleven for Silas.")


def test_four_orders_put_the_verbatim_passage_in_each_place_once():
    for item in range(20):
        orders = [decop.option_order(0, item, n, 4) for n in range(4)]
        assert sorted(order.index(0) for order in orders) == [0, 1, 2, 3]
        assert all(sorted(order) == [0, 1, 2, 3] for order in orders)
    every = {decop.option_order(0, 7, n, 24) for n in range(24)}
    assert every == set(itertools.permutations(range(4)))
    assert decop.option_order(3, 7, 1, 4) == decop.option_order(3, 7, 1, 4)


@pytest.mark.parametrize("raw, letter", [("B", "B"), (" (C) because it reads older", "C"), ("Answer: D.", "D"),
                                         ("I cannot tell.", None), ("", None), (None, None), ("AB", None)])
def test_the_answer_is_the_first_letter_standing_alone(raw, letter):
    assert decop.answer_letter(raw) == letter


def test_a_paraphrase_that_copies_the_passage_is_not_usable():
    assert decop.clean_paraphrase('  "A new wording."  ', "The old wording.") == "A new wording."
    assert decop.clean_paraphrase("The old\nwording.", "The old wording.") is None
    assert decop.clean_paraphrase("   ", "x") is None


@pytest.fixture
def decop_project(project, tiny_chat_dir):
    from workbench.models.registry import ModelSpec, add_model

    add_model(project, ModelSpec(label="writer", backend="hf", ref=str(tiny_chat_dir), params={"device": "cpu"}))
    add_model(project, ModelSpec(label="reader", backend="hf", ref=str(tiny_chat_dir), params={"device": "cpu"}))
    book_id, ids = add_cloze_book(project, "Letters", TEXT, ["Tobias", "Silas"])
    return project, book_id, passages.gather(project, "cloze")


def test_paraphrases_questions_and_accuracy(decop_project):
    project, book_id, items = decop_project
    report = decop.run_paraphrases(project, "writer", passage_ids=items, params={"min_tokens": 6, "max_tokens": 12})
    assert report.total == 6 and report.failed == 0
    table = decop.paraphrases_frame(project, "writer")
    assert len(table) == 6 and table["current"].all() and table["usable"].all()

    # regenerating one passage adds three new samples, which become its current paraphrases
    decop.regenerate(project, "writer", [items[0]])
    table = decop.paraphrases_frame(project, "writer")
    mine = table[table["item_id"] == items[0]]
    assert sorted(mine["sample"]) == [0, 1, 2, 3, 4, 5]
    assert sorted(mine.loc[mine["current"], "sample"]) == [3, 4, 5]
    current = decop.current_paraphrases(project, "writer")
    assert [s for s, _ in current[items[0]]] == [3, 4, 5]

    quiz = decop.run_quiz(project, "reader", "writer", passage_ids=items)
    assert quiz.total == 8 and quiz.failed == 0
    texts = passages.passage_texts(project, items)
    rows = project.db.execute("SELECT item_id, sample, prompt FROM responses WHERE run_id = ?", [quiz.run_id]).fetchall()
    answers = decop.answers_frame(project, "reader")
    expected = dict(zip(zip(answers["item_id"], answers["question"]), answers["expected"]))
    for item, sample, prompt in rows:
        letter = expected[(item, sample)]
        assert f"{letter}. {texts[item]}" in prompt  # the verbatim passage sits at the expected letter
        for _, paraphrase in current[item]:
            assert paraphrase in prompt

    # answers set by hand: passage 1 right 3 of 4 times, passage 2 right twice, once no letter at all
    with project.db.transaction():
        for (item, question), letter in expected.items():
            wrong = next(c for c in "ABCD" if c != letter)
            right = question < 3 if item == items[0] else question < 2
            raw = letter if right else ("no idea" if (item, question) == (items[1], 3) else wrong)
            project.db.execute("UPDATE responses SET raw = ? WHERE run_id = ? AND item_id = ? AND sample = ?",
                               [raw, quiz.run_id, item, question])
    accuracy = decop.accuracy_frame(project, "reader")
    row = accuracy.iloc[0]
    assert (row["book_id"], row["passages"], row["questions"], row["answered"], row["unanswered"], row["correct"]) == \
        (book_id, 2, 8, 7, 1, 5)
    assert row["accuracy"] == pytest.approx(5 / 7)
    assert row["p_value"] == pytest.approx(binomtest(5, 7, 0.25).pvalue)
    assert row["ci_low"] < 5 / 7 < row["ci_high"]
    assert row["paraphraser"] == "writer"


def test_questions_need_three_usable_paraphrases(decop_project):
    from workbench.errors import UserError

    project, _, items = decop_project
    with pytest.raises(UserError, match="No passage has three usable paraphrases"):
        decop.run_quiz(project, "reader", "writer", passage_ids=items)
    with pytest.raises(UserError, match="4 option orders"):
        decop.run_quiz(project, "reader", "writer", orders=5)
