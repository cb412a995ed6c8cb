import os

import pytest

from tests.fixtures.reading_books import reading_book, store_answers
from workbench.corpus.library import get_book
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.reading.questions import QuestionSettings, build_questions, latest_question_sets

pytest.importorskip("PySide6")
from ui.reading.page import ReadingPage  # noqa: E402

SCREENSHOT = os.environ.get("PALIMPSEST_SCREENSHOTS")  # a folder: the test saves what the page looked like


def _settle(qtbot, page):
    qtbot.waitUntil(lambda: not page.work.busy and not page.reading.busy and not page.plot.busy, timeout=60_000)


@pytest.fixture
def two_books(project, tmp_path):
    first = reading_book(project, tmp_path)
    reading_book(project, tmp_path, seed=1, title="The Inn", tag="x")
    return first


def test_the_steps_run_in_the_background_and_the_curve_opens_on_a_question(qtbot, shown_page, project, two_books,
                                                                          messages, tmp_path):
    page = shown_page(ReadingPage, project)
    _settle(qtbot, page)
    book = get_book(project, two_books.book_id)
    assert f"{book.words:,} words, in 35 scenes of about 60 words" in page.steps.status.text()
    assert page.steps.book.currentText() == book.display_name  # the word count, which clipped it, is in the status
    assert "Summaries by elsewhere: 35 of 35 scenes" in page.steps.status.text()
    page.steps.every.setValue(2)
    page.steps.options.setValue(4)
    page.build_questions()
    _settle(qtbot, page)
    assert page.summary.text().startswith("Built") and "lookahead" in page.summary.text()
    assert "questions on the original text" in page.steps.status.text()

    (question_set,) = latest_question_sets(project, book_ids=[two_books.book_id])

    def reply(question):
        if not question.read_along:
            return "<summary>\n" + question.body["false_summary"]
        return str(question.correct_choice + 1) if (question.retention_words or 0) < 1000 else "I forget"

    store_answers(project, question_set, "judge", reply)
    page.refresh()
    _settle(qtbot, page)
    assert page.model.currentData() == "judge"
    assert page.curve.rowCount() >= 2 and page.plot.marks
    (chance,) = [line for line in page.plot.figure.axes[0].get_lines()
                 if line.get_label().startswith("chance")]  # one dashed step across the bins: guessing among 4 choices
    assert chance.get_linestyle() == "--"
    assert set(chance.get_ydata()) == {0.25} and len(chance.get_xdata()) == 2 * page.curve.rowCount()
    accuracies = page.curve.column_texts("Accuracy")
    assert accuracies[0] == "100%" and page.curve.column_texts("Unparsed")[-1] != "0"
    assert "original names: no slope (the regression did not converge" in page.slope.text()
    assert page.pooled.text().startswith("The answers to the questions of ")  # the curve names its book

    first = page.plot.marks[0]
    assert first.target["variant"] == "original" and "click to list its questions" in page.plot.hover_at(
        page.plot.pos_of(first))
    page.plot.click_at(page.plot.pos_of(first))
    assert page.bin_answers.rowCount() > 0
    page.bin_answers.selectRow(0)
    detail = page.detail.toPlainText()
    assert "Right answer:" in detail and "Raw reply (ok):" in detail and "4) None of the above" in detail
    if SCREENSHOT:
        page.grab().save(os.path.join(SCREENSHOT, "reading-page.png"))
    assert not messages["errors"]


def test_an_api_model_says_what_the_questions_cost_before_asking(qtbot, shown_page, project, two_books, messages,
                                                                 monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # set, or the work is refused before any question
    build_questions(project, two_books.book_id, QuestionSettings(every=3, options=4, reconstruction=2))
    add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-4o-mini", api_key_env="OPENAI_API_KEY"))
    page = shown_page(ReadingPage, project)
    _settle(qtbot, page)
    page.steps.ask_model.setCurrentIndex(page.steps.ask_model.findData("api"))
    assert not page.steps.context_hint.isHidden()  # no word limit: the whole book so far would be sent
    assert "the whole book up to its checkpoint" in page.steps.context_hint.text()
    page.steps.context_words.setValue(3000)
    assert page.steps.context_hint.isHidden()
    messages["answer"] = False
    page.ask()
    _settle(qtbot, page)
    (question,) = messages["questions"]
    assert question.startswith("Reading questions to api.") and "api is a paid API: " in question, question
    assert "requests" in question and "$" in question and "not paid for again" in question
    assert "Nothing was started." in page.summary.text()
    assert project.db.execute("SELECT COUNT(*) FROM runs WHERE kind = 'reading-answer'").fetchone()[0] == 0


def test_without_a_project_the_page_says_what_to_do(qtbot, shown_page):
    page = shown_page(ReadingPage)
    assert page.hint.isVisible() and "Open or create a project" in page.hint.text()
    assert not page.splitter.isEnabled()


def test_a_run_that_cannot_fit_the_model_is_refused_saying_how_many_words_do(qtbot, shown_page, project, two_books,
                                                                             tiny_causal_dir, messages):
    build_questions(project, two_books.book_id, QuestionSettings(every=6, options=3, reconstruction=0))
    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir), params={"device": "cpu"}))
    page = shown_page(ReadingPage, project)
    _settle(qtbot, page)
    page.steps.ask_model.setCurrentIndex(page.steps.ask_model.findData("tiny"))
    assert page.steps.context_hint.isHidden()  # a local model gets what fits its context
    page.steps.context_words.setValue(100_000)  # more than the tiny model reads
    page.ask()
    _settle(qtbot, page)
    (error,) = messages["errors"]
    assert "read-along prompts do not fit" in error and "'Words of book shown'" in error, error
    assert "Nothing was sent." in error
    assert project.db.execute("SELECT COUNT(*) FROM runs WHERE kind = 'reading-answer'").fetchone()[0] == 0


def test_a_run_with_failures_says_why_and_how_to_retry_them(qtbot, shown_page, project, two_books, fault_proxy,
                                                            messages):
    from tests.fixtures.fault_proxy import Fault

    build_questions(project, two_books.book_id, QuestionSettings(every=6, options=3, reconstruction=0))
    add_model(project, ModelSpec(label="busy", backend="openai", ref="tiny", base_url=fault_proxy.base_url,
                                 params={"max_retries": 0, "free": True}))
    fault_proxy.always(Fault.server_error(500))
    page = shown_page(ReadingPage, project)
    _settle(qtbot, page)
    page.steps.ask_model.setCurrentIndex(page.steps.ask_model.findData("busy"))
    page.steps.context_words.setValue(50)
    page.ask()
    _settle(qtbot, page)
    text = page.summary.text()
    assert text.startswith("Questions to busy:") and "failed because" in text, text
    assert "Jobs page and press Retry failed only" in text
    assert not messages["errors"]


def test_summaries_by_a_paid_api_are_asked_about_in_the_one_wording_and_no_sends_nothing(
        qtbot, shown_page, project, two_books, messages, fault_proxy, llama_server):
    from workbench.models.prices import set_price
    from workbench.probes.reading.scenes import make_scenes

    make_scenes(project, two_books.book_id, 120)
    add_model(project, ModelSpec(label="api", backend="openai", ref=llama_server.model, base_url=fault_proxy.base_url))
    set_price(project, llama_server.model, 2.5, 10.0)
    page = shown_page(ReadingPage, project)
    _settle(qtbot, page)
    page.steps.summary_model.setCurrentIndex(page.steps.summary_model.findData("api"))
    runs = project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]  # the book's imported summaries
    messages["answer"] = False
    page.summarize()
    _settle(qtbot, page)
    (question,) = messages["questions"]
    assert question.startswith(f"Summarizing book {two_books.book_id} with api.") and "api is a paid API: " in question
    assert fault_proxy.posts() == [] and "Nothing was started." in page.summary.text()
    assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == runs
