"""DE-COP: paraphrases stored, refused when unusable, regenerable; the question names the book; every order by
default (fewer in balanced blocks); the passage is the unit of inference; suspect against clean books by AUC."""

import itertools
import math
import random

import numpy as np
import pytest
from scipy.stats import binomtest

from tests.fixtures.leakage import add_cloze_book
from workbench import jobs
from workbench.errors import UserError
from workbench.probes.leakage import decop, passages

TEXT = ("Margery kept the letters in a tin box under the bed. She read them when Tobias was away. "
        "The clock in the hall struck eleven for Silas.")


# ---------------------------------------------------------------------------------------------- helpers
def stored_books(project, books: list[dict]) -> dict[str, list[int]]:
    """Books (title, author, year, passages: how many) with their passages stored as a passage file would;
    title -> passage ids."""
    from workbench.corpus.importer import store_book
    from workbench.corpus.sources import BookDraft

    out = {}
    for book in books:
        text = " ".join(f"{book['title']} passage {n} tells of a quiet harbour town." for n in range(book["passages"]))
        book_id, _ = store_book(project, BookDraft("text", f"{book['title']}.txt", text, title=book["title"],
                                                   author=book.get("author", ""), year=book.get("year")))
        rows = [(f"{book['title']}-{n}", book_id, book["title"],
                 f"{book['title']} passage {n} tells of a quiet harbour town.") for n in range(book["passages"])]
        out[book["title"]] = passages.store_passages(project, "file:test.csv", rows)
    return out


def external_model(project, label: str, tags: dict | None = None) -> int:
    from workbench.models.catalog import ModelSpec, add_model

    return add_model(project, ModelSpec(label=label, backend="external", tags=tags or {})).id


def stored_paraphrases(project, paraphraser_id: int, items: list[int], texts: dict | None = None) -> int:
    """Three paraphrases of each passage as a paraphrase run of ``paraphraser_id`` (``texts``: (item, sample) ->
    the raw answer, else a distinct rewording)."""
    from workbench.prompt_templates import get_template

    template = get_template(project, decop.PARAPHRASE_TEMPLATE, kind=decop.PARAPHRASE_TEMPLATE)
    run_id = jobs.find_or_create_run(project, decop.PARAPHRASE_KIND, model_id=paraphraser_id, template_id=template.id,
                                     params={"max_tokens": 400}, config={"passage_ids": items})
    texts = texts or {}

    def process(units, state):
        for unit in units:
            yield unit, jobs.Outcome(raw=texts.get((unit.item_id, unit.sample),
                                                   f"Version {unit.sample} in other words, of passage {unit.item_id}."))

    jobs.run_job(project, run_id, [jobs.Unit(i, s) for i in items for s in range(decop.PARAPHRASES)], process)
    return run_id


def stored_answers(project, model_id: int, paraphraser_id: int, items: list[int], picks, *, orders: int = 24,
                   seed: int = 0, names: bool = True) -> int:
    """A question run of ``model_id`` whose answer to question ``n`` of passage ``item`` names the option holding
    text ``picks(item, n, order)`` (0: the verbatim passage; None: an answer without a letter). ``names=False``
    stores the config as runs did before questions named the book."""
    config = {"passage_ids": items, "paraphraser_id": paraphraser_id, "orders": orders, "seed": seed,
              "paraphrase_samples": {str(i): [0, 1, 2] for i in items}}
    if names:
        config["names"] = {str(i): n for i, n in decop.book_names(project, items).items()}
    run_id = jobs.create_run(project, decop.QUIZ_KIND, model_id=model_id, params={"max_tokens": 4}, config=config)

    def process(units, state):
        for unit in units:
            order = decop.option_order(seed, unit.item_id, unit.sample, orders)
            text = picks(unit.item_id, unit.sample, order)
            yield unit, jobs.Outcome(raw="I cannot say" if text is None else decop.LETTERS[order.index(text)])

    jobs.run_job(project, run_id, [jobs.Unit(i, n) for i in items for n in range(orders)], process)
    return run_id


@pytest.fixture
def study(project):
    """Books, an external paraphraser and model, stored paraphrases: (project, passage ids by title, model ids)."""
    books = stored_books(project, [
        {"title": "Middlemarch", "author": "George Eliot", "year": 1871, "passages": 10},
        {"title": "Harbour Lights", "author": "A. Newcomer", "year": 2024, "passages": 6},
        {"title": "Orchard", "author": "B. Writer", "year": 2025, "passages": 6},
        {"title": "Lanes", "author": "C. Writer", "year": 1990, "passages": 6},
    ])
    writer, reader = external_model(project, "writer"), external_model(project, "reader")
    stored_paraphrases(project, writer, [i for ids in books.values() for i in ids])
    return project, books, writer, reader


# ---------------------------------------------------------------------------------------------- orders
def test_every_order_by_default_and_fewer_in_balanced_blocks():
    assert decop.DEFAULT_ORDERS == 24
    for item in range(12):
        every = [decop.option_order(0, item, n, 24) for n in range(24)]
        assert set(every) == set(itertools.permutations(range(4)))
        for orders in (4, 8, 12, 16, 20):
            asked = [decop.option_order(5, item, n, orders) for n in range(orders)]
            assert len(set(asked)) == orders  # no order asked twice
            places = [order.index(0) for order in asked]
            assert all(places.count(place) == orders // 4 for place in range(4))  # the verbatim text: each place alike
    with pytest.raises(UserError, match="all 24 option orders"):
        decop.check_orders(5)


def test_runs_made_before_keep_their_questions():
    """The 4-order and 24-order questions of earlier versions: a seeded shuffle and its rotations, or every
    permutation of it in sequence. Stored answers are scored against the orders recomputed, so they must not move."""
    for seed, item in itertools.product((0, 3), range(10)):
        base = list(range(4))
        random.Random(f"{seed}:{item}").shuffle(base)
        assert [decop.option_order(seed, item, n, 4) for n in range(4)] == [tuple(base[n:] + base[:n]) for n in range(4)]
        assert [decop.option_order(seed, item, n, 24) for n in range(24)] == list(itertools.permutations(base))


@pytest.mark.parametrize("raw, letter", [("B", "B"), (" (C) because it reads older", "C"), ("Answer: D.", "D"),
                                         ("I cannot tell.", None), ("", None), (None, None), ("AB", None)])
def test_the_answer_is_the_first_letter_standing_alone(raw, letter):
    assert decop.answer_letter(raw) == letter


# ---------------------------------------------------------------------------------------------- paraphrases
def test_a_paraphrase_that_copies_the_passage_is_not_usable():
    assert decop.clean_paraphrase('  "A new wording."  ', "The old wording.") == "A new wording."
    assert decop.clean_paraphrase("The old\nwording.", "The old wording.") is None
    assert decop.clean_paraphrase("THE OLD   wording.", "The old wording.") is None  # case and spacing aside
    assert decop.clean_paraphrase("   ", "x") is None


def test_identical_or_empty_paraphrases_are_refused_and_the_passage_reported_with_how_to_regenerate(project):
    books = stored_books(project, [{"title": "Letters", "author": "M. Tin", "passages": 3}])
    good, twins, empty = books["Letters"]
    writer = external_model(project, "writer")
    stored_paraphrases(project, writer, books["Letters"], {
        (twins, 1): "The box was  under the BED.", (twins, 2): "the box was under the bed.",
        (empty, 0): '  ""  ', (empty, 2): "LETTERS passage 2 tells of a quiet harbour town."})
    table = decop.paraphrases_frame(project, "writer").set_index(["item_id", "sample"])
    assert table.loc[(good, 0), "usable"] and table.loc[(good, 0), "current"]
    assert not table.loc[(twins, 1), "usable"] and table.loc[(twins, 1), "problem"] == "the same as paraphrase 2"
    assert table.loc[(twins, 2), "usable"]  # the newer of two twins is kept
    assert table.loc[(empty, 0), "problem"] == "empty" and table.loc[(empty, 2), "problem"] == "the passage itself"
    assert decop.current_paraphrases(project, "writer").keys() == {good}

    lacking = decop.lacking_paraphrases(project, "writer", books["Letters"])
    assert list(lacking["item_id"]) == [twins, empty] and list(lacking["usable"]) == [2, 1]
    message = decop.lacking_message(lacking, "writer", "study.palimpsest")
    assert message.startswith("2 passage(s) lack three usable paraphrases by 'writer' and were not asked")
    assert f"palimpsest decop regenerate study.palimpsest --paraphraser 'writer' --passage {twins} --passage {empty}" \
        in message
    assert decop.lacking_message(decop.lacking_paraphrases(project, "writer", [good]), "writer") == ""


def test_the_paraphraser_being_the_model_tested_is_warned(project):
    external_model(project, "writer")
    external_model(project, "reader")
    assert decop.paraphraser_warning(project, "reader", "writer") == ""
    assert "written by the model under test ('reader')" in decop.paraphraser_warning(project, "reader", "reader")


def test_the_question_must_name_the_book(project):
    from workbench.prompt_templates import get_template, save_template

    shipped = get_template(project, decop.QUIZ_TEMPLATE, kind=decop.QUIZ_TEMPLATE)
    assert {"title", "author", "a", "b", "c", "d"} == set(shipped.placeholders)
    with pytest.raises(UserError, match=r"must contain \{author\}, \{title\}"):
        save_template(project, "my-quiz", "Which is verbatim?\nA. {a}\nB. {b}\nC. {c}\nD. {d}", decop.QUIZ_TEMPLATE)


# ---------------------------------------------------------------------------------------------- inference
def test_the_issues_example_is_tested_with_the_passage_as_the_unit(study):
    """10 passages: 4 recognised in all 24 orders, 6 where the model settles on a paraphrase in every order.
    Counting the 240 answers as trials gives p = 3.1e-7; the passages are the trials: p = P(X >= 4), X ~ B(10, 1/4)."""
    project, books, writer, reader = study
    items = books["Middlemarch"]
    stored_answers(project, reader, writer, items, lambda item, n, order: 0 if item in items[:4] else 1)
    row = decop.accuracy_frame(project, "reader").set_index("book").loc["Middlemarch"]
    assert (row["passages"], row["questions"], row["answered"], row["correct"], row["orders"]) == (10, 240, 240, 96, 24)
    assert row["score"] == pytest.approx(0.4)
    assert row["p_value"] == pytest.approx(binomtest(4, 10, 0.25, alternative="greater").pvalue)  # 0.224
    assert row["p_value"] > 0.2
    # what the order-level count said (two-sided, as before), and the issue's passage-level two-sided figure
    assert binomtest(96, 240, 0.25).pvalue == pytest.approx(3.1e-7, rel=0.02)
    assert binomtest(4, 10, 0.25).pvalue == pytest.approx(0.28, abs=0.005)
    from statsmodels.stats.proportion import proportion_confint

    assert (row["ci_low"], row["ci_high"]) == pytest.approx(proportion_confint(4, 10, method="wilson"))


def test_the_chance_test_matches_scipy_and_every_relabelling():
    from workbench.probes.leakage import decop_scores

    # every passage answered alike in all its orders: the exact binomial test of the passages recognised
    for right, wrong in ((4, 6), (0, 5), (7, 1), (12, 18)):
        test = decop_scores.chance_test([[24, 0, 0, 0]] * right + [[0, 0, 24, 0]] * wrong)
        assert test.p_value == pytest.approx(binomtest(right, right + wrong, 0.25, alternative="greater").pvalue)
    # mixed picks and answered counts (unanswered orders left out): every one of the 4^6 relabellings
    picks = [[10, 5, 5, 4], [3, 9, 6, 6], [20, 2, 1, 0], [5, 5, 7, 7], [8, 8, 4, 3], [2, 2, 2, 2]]
    shares = np.asarray(picks, dtype=float) / np.asarray(picks).sum(axis=1, keepdims=True)
    observed = shares[:, 0].sum()
    sums = [shares[np.arange(6), labels].sum() for labels in itertools.product(range(4), repeat=6)]
    expected = np.mean(np.asarray(sums) >= observed - 1e-12)
    exact = decop_scores.chance_test(picks)
    assert exact.method == "exact" and exact.p_value == pytest.approx(expected)
    drawn = decop_scores.chance_test(picks, max_grid=10, draws=40_000)
    assert drawn.method == "monte carlo" and drawn.p_value == pytest.approx(expected, abs=0.01)


def test_a_model_that_always_answers_a_is_at_chance(study):
    project, books, writer, reader = study
    stored_answers(project, reader, writer, books["Middlemarch"], lambda item, n, order: order[0])
    row = decop.accuracy_frame(project, "reader").set_index("book").loc["Middlemarch"]
    assert row["score"] == pytest.approx(0.25) and row["p_value"] == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------- the decision
def recognising(items_known: set[int], share_known: float = 1.0):
    """Picks the verbatim text of a known passage in the first ``share_known`` of its orders, else a paraphrase
    (the one in the first place that is not the verbatim text)."""
    def picks(item, n, order):
        if item in items_known and n < round(24 * share_known):
            return 0
        return next(o for o in order if o != 0)
    return picks


def test_suspect_books_against_clean_books_by_roc_auc(study):
    from workbench.corpus.library import set_tags
    from workbench.probes.leakage import decop_scores
    from workbench.probes.leakage.statistics import roc_auc

    project, books, writer, reader = study
    known = set(books["Middlemarch"][:8]) | set(books["Lanes"][:3]) | {books["Orchard"][0]}
    stored_answers(project, reader, writer, [i for ids in books.values() for i in ids], recognising(known))
    harbour = project.db.execute("SELECT id FROM books WHERE title = 'Harbour Lights'").fetchone()[0]
    set_tags(project, harbour, {"member": "no"})

    frame = decop.accuracy_frame(project, "reader", cutoff_year=2023).set_index("book")
    assert frame.loc["Harbour Lights", "group"] == "clean" and frame.loc["Harbour Lights", "why"] == "tagged not a member"
    assert (frame.loc["Orchard", "group"], frame.loc["Orchard", "why"]) == ("clean", "published 2025, after the cutoff 2023")
    assert set(frame.loc[["Middlemarch", "Lanes"], "group"]) == {"suspect"}
    assert frame.loc["Lanes", "score"] == pytest.approx(0.5) and frame.loc["Orchard", "score"] == pytest.approx(1 / 6)

    decided = decop.decision_frame(project, "reader", cutoff_year=2023).iloc[0]
    expected = roc_auc(frame.loc[["Middlemarch", "Lanes"], "score"], frame.loc[["Harbour Lights", "Orchard"], "score"])
    assert (decided["suspect_books"], decided["clean_books"], decided["auc"]) == (2, 2, 1.0)
    assert (decided["ci_low"], decided["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high), nan_ok=True)
    assert decided["cutoff_year"] == 2023 and decided["note"].startswith("Few books:")
    said = decop_scores.describe_decision(decided)
    assert "ROC AUC 1.00" in said and "2 suspect" in said and "2 clean" in said

    # without the cutoff only the tagged book is clean: one clean book, no interval, and the table says so
    alone = decop.decision_frame(project, "reader").iloc[0]
    assert (alone["suspect_books"], alone["clean_books"]) == (3, 1) and alone["ci_low"] != alone["ci_low"]
    assert alone["note"] == "No interval: each group needs at least two books."


def test_without_clean_books_the_decision_says_how_to_add_them(study):
    from workbench.probes.leakage import decop_scores

    project, books, writer, reader = study
    stored_answers(project, reader, writer, books["Middlemarch"], recognising(set(books["Middlemarch"])))
    decided = decop.decision_frame(project, "reader").iloc[0]
    assert decided["clean_books"] == 0 and decided["auc"] != decided["auc"]
    said = decop_scores.describe_decision(decided)
    assert "No clean books" in said and "member=no" in said and "--cutoff-year" in said
    assert "none given" in decop.cutoff_note(project, "reader")


def test_the_cutoff_can_come_from_the_models_tag(study):
    project, books, writer, _ = study
    tagged = external_model(project, "tagged", {"cutoff": "2023"})
    stored_answers(project, tagged, writer, books["Orchard"] + books["Lanes"], recognising(set(books["Lanes"])))
    frame = decop.accuracy_frame(project, "tagged").set_index("book")
    assert frame.loc["Orchard", "group"] == "clean" and frame.loc["Lanes", "group"] == "suspect"
    assert decop.model_cutoff(project, "tagged") == (2023, "the model's tag cutoff=2023")
    assert decop.model_cutoff(project, "tagged", 2019) == (2019, "given")  # the year given wins
    assert "tagged: 2023 (the model's tag cutoff=2023)" in decop.cutoff_note(project, "tagged")


def test_a_four_order_run_made_before_still_reads_beside_a_24_order_run(study):
    """An earlier 4-order run (its config naming no book) and a newer 24-order run on the same passages: two
    rows, each with its orders, and the newer run's answers never stand in for the older run's questions."""
    project, books, writer, reader = study
    items = books["Lanes"]
    stored_answers(project, reader, writer, items, lambda item, n, order: 0, orders=4, names=False)
    stored_answers(project, reader, writer, items, lambda item, n, order: order[0])
    frame = decop.accuracy_frame(project, "reader").set_index("orders")
    assert sorted(frame.index) == [4, 24]
    assert (frame.loc[4, "questions"], frame.loc[4, "score"]) == (24, pytest.approx(1.0))
    assert (frame.loc[24, "questions"], frame.loc[24, "score"]) == (144, pytest.approx(0.25))


# ---------------------------------------------------------------------------------------------- with a real model
@pytest.fixture
def decop_project(project, tiny_chat_dir):
    from workbench.corpus.library import update_book
    from workbench.models.catalog import ModelSpec, add_model

    add_model(project, ModelSpec(label="writer", backend="hf", ref=str(tiny_chat_dir), params={"device": "cpu"}))
    add_model(project, ModelSpec(label="reader", backend="hf", ref=str(tiny_chat_dir), params={"device": "cpu"}))
    book_id, ids = add_cloze_book(project, "Letters", TEXT, ["Tobias", "Silas"])
    update_book(project, book_id, author="Margery Tin")
    return project, book_id, passages.gather(project, "cloze")


def test_paraphrases_questions_and_scores(decop_project):
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
    assert quiz.total == 48 and quiz.failed == 0  # every order of two passages
    texts = passages.passage_texts(project, items)
    rows = project.db.execute("SELECT item_id, sample, prompt FROM responses WHERE run_id = ?", [quiz.run_id]).fetchall()
    answers = decop.answers_frame(project, "reader")
    expected = dict(zip(zip(answers["item_id"], answers["question"]), answers["expected"]))
    for item, sample, prompt in rows:
        assert '"Letters" by Margery Tin' in prompt  # the question names the book
        letter = expected[(item, sample)]
        assert f"{letter}. {texts[item]}" in prompt  # the verbatim passage sits at the expected letter
        for _, paraphrase in current[item]:
            assert paraphrase in prompt

    # answers set by hand: passage 1 right in 18 of 24 orders, passage 2 in 6, once no letter at all
    with project.db.transaction():
        for (item, question), letter in expected.items():
            wrong = next(c for c in "ABCD" if c != letter)
            right = question < 18 if item == items[0] else question < 6
            raw = letter if right else ("no idea" if (item, question) == (items[1], 23) else wrong)
            project.db.execute("UPDATE responses SET raw = ? WHERE run_id = ? AND item_id = ? AND sample = ?",
                               [raw, quiz.run_id, item, question])
    row = decop.accuracy_frame(project, "reader").iloc[0]
    assert (row["book_id"], row["passages"], row["questions"], row["answered"], row["unanswered"], row["correct"],
            row["orders"]) == (book_id, 2, 48, 47, 1, 24, 24)
    assert row["score"] == pytest.approx((18 / 24 + 6 / 23) / 2)
    assert row["ci_low"] < row["score"] < row["ci_high"]
    assert row["paraphraser"] == "writer" and row["group"] == "suspect"


def test_questions_need_three_usable_paraphrases(decop_project):
    project, _, items = decop_project
    with pytest.raises(UserError, match="No passage has three usable paraphrases"):
        decop.run_quiz(project, "reader", "writer", passage_ids=items)
    with pytest.raises(UserError, match="all 24 option orders"):
        decop.run_quiz(project, "reader", "writer", orders=5)


# ---------------------------------------------------------------------------------------------- the command and the text
def test_the_commands_warn_refuse_fewer_than_balanced_orders_and_decide(study, capsys):
    from workbench.cli import main
    from workbench.corpus.library import set_tags

    project, books, writer, reader = study
    stored_answers(project, reader, writer, [i for ids in books.values() for i in ids],
                   recognising(set(books["Middlemarch"]) | set(books["Lanes"][:2])))
    for title in ("Harbour Lights", "Orchard"):
        book = project.db.execute("SELECT id FROM books WHERE title = ?", [title]).fetchone()[0]
        set_tags(project, book, {"member": "no"})
    path = str(project.path)
    project.close()

    assert main(["decop", "accuracy", path, "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    header = out.splitlines()[0].split(",")
    assert {"score", "ci_low", "ci_high", "p_value", "orders", "passages", "group"} <= set(header)
    assert "accuracy" not in header
    assert "suspect books against clean books, ROC AUC 1.00" in err and "24 orders per passage" in err
    assert "reader: none given" in err

    assert main(["decop", "accuracy", path, "--auc", "--cutoff-year", "2023", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1].startswith("reader,writer,24,0,2,2,")
    assert "reader: 2023 (given)" in err

    with pytest.raises(SystemExit):
        main(["decop", "run", path, "--model", "reader", "--paraphraser", "writer", "--orders", "6"])
    assert "invalid choice: 6" in capsys.readouterr().err
    assert main(["decop", "run", path, "--model", "reader", "--paraphraser", "reader"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Warning: The paraphrases are written by the model under test ('reader')")


def test_the_methods_text_describes_the_passage_as_the_unit(study):
    from workbench.export.methods import methods_record, methods_text

    project, books, writer, reader = study
    old = stored_answers(project, reader, writer, books["Lanes"], lambda item, n, order: 0, orders=4, names=False)
    new = stored_answers(project, writer, writer, books["Lanes"], lambda item, n, order: 0)
    text = methods_text(project)
    procedure, rest = text.split("## Models")
    assert "in 4 and 24 option orders per passage" in procedure and "title and author" in procedure
    assert "The passage is the unit of analysis" in procedure and "ROC AUC of book scores" in procedure
    assert "not the area of predictions thresholded" in procedure  # where it departs from the published code
    assert "questions in different orders are not independent, so the test is optimistic" not in text
    statistics = rest.split("## Statistics")[1]
    assert "randomisation test of the mean passage score against 25%, the passage as the unit" in statistics
    assert "Wilson score interval (95%) with the passage as the trial" in statistics
    runs = {r["id"]: r for r in methods_record(project)["runs"]}
    assert runs[old]["leakage"]["names_book"] is False and runs[new]["leakage"]["names_book"] is True
    assert runs[new]["leakage"]["paraphraser_tested"] is True
    assert "the question did not name the book" in rest and "- **Caution:** the paraphrases were written by" in rest


def test_the_planned_work_paraphrases_then_asks_and_says_how_it_went(decop_project):
    """``decop_work`` (the command line's and the tab's one plan): both runs, labelled; passages left without
    usable paraphrases are named as not asked; the local models cost nothing and are not asked about."""
    from workbench.probes.leakage.plans import NOT_ASKED, decop_work

    project, _, items = decop_project
    work = decop_work(project, "reader", "writer", orders=4)
    assert work.paid == [] and [s.label for s in work.models] == ["writer", "reader"]
    assert work.estimate().cost == 0.0
    outcome = work.run()
    words = work.outcome_words(outcome)
    assert outcome.labels[0] == "Paraphrases by writer" and outcome.reports[0].total == 6
    assert words.startswith("Paraphrases by writer: ")
    lacking = decop.lacking_paraphrases(project, "writer", items)
    if len(lacking) < len(items):
        assert outcome.labels[1] == "Questions to reader (4 orders per passage)"
        assert outcome.reports[1].total == 4 * (len(items) - len(lacking))
    if len(lacking):
        assert outcome.problems[NOT_ASKED].startswith(f"{len(lacking)} passage(s) lack three usable paraphrases")
    again = decop_work(project, "reader", "writer", orders=4).run()  # the same work: nothing asked again
    assert [r.run_id for r in again.reports] == [r.run_id for r in outcome.reports]
    assert all(r.processed == 0 for r in again.reports)


def test_every_answer_read_column_by_column_is_the_answer_worked_out_one_question_at_a_time(study):
    """The answers table (built from one table of orders, each distinct reply read once) against each question
    worked out on its own from its run's seed and orders: runs of 24, 4 and 8 orders and two seeds, answers
    naming no letter, a failed call, a question beyond the run's orders."""
    project, books, writer, reader = study
    lanes, orchard = books["Lanes"], books["Orchard"]
    stored_answers(project, reader, writer, lanes, lambda item, n, order: None if n % 5 == 0 else order[n % 4])
    stored_answers(project, reader, writer, orchard, lambda item, n, order: 0 if item % 2 else None, orders=4,
                   names=False)
    stored_answers(project, reader, writer, lanes + orchard, lambda item, n, order: order[(item + n) % 4], orders=8,
                   seed=3)
    db = project.db
    db.execute("UPDATE responses SET status = 'failed', raw = NULL, error = 'The server did not answer.'"
               " WHERE rowid = (SELECT MAX(rowid) FROM responses)")
    run_4 = db.execute("SELECT id FROM runs WHERE kind = ? AND config LIKE '%\"orders\": 4%'",
                       [decop.QUIZ_KIND]).fetchone()[0]
    db.execute("INSERT INTO responses (run_id, item_id, sample, status, raw, created_at)"
               " VALUES (?, ?, 6, 'ok', 'B, I think', '2024-01-01')", [run_4, orchard[0]])
    frame = decop.answers_frame(project, "reader")
    settings = {run.id: (run.config.orders, run.config.seed) for run in decop.runs(project, decop.QUIZ_KIND)}
    assert len(frame) == 6 * 24 + 6 * 4 + 1 + 12 * 8
    assert sorted(frame["orders"].unique().tolist()) == [4, 8, 24]
    for row in frame.itertuples():
        orders, seed = settings[row.run_id]
        assert (row.orders, row.seed) == (orders, seed)
        order = decop.option_order(seed, row.item_id, row.question, orders)
        letter = decop.answer_letter(row.raw) if row.status == "ok" else None
        assert row.expected == decop.LETTERS[order.index(0)]
        assert row.answer == (letter or "")
        if letter is None:
            assert math.isnan(row.picked) and row.correct is None
        else:
            assert row.picked == order[decop.LETTERS.index(letter)]
            assert row.correct == (row.picked == 0)
    assert frame.loc[frame["status"] == "failed", "raw"].tolist() == ["The server did not answer."]
    assert frame["paraphraser"].eq("writer").all() and frame["model"].eq("reader").all()
