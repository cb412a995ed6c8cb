import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from rouge_score import rouge_scorer
from statsmodels.stats.proportion import proportion_confint

from tests.fixtures.reading_books import store_answers
from workbench.probes.reading.asking import BookText, parse_choice, parse_reconstruction
from workbench.probes.reading.questions import QuestionSettings, build_questions
from workbench.probes.reading.results import (
    CURVE_COLUMNS,
    accuracy_by_kind,
    answers_frame,
    forgetting_curve,
    forgetting_slope,
    reconstruction_scores,
    retention_bins,
)


@pytest.mark.parametrize("raw, choices, expected", [
    ("3", 6, 2), ("Answer: 5.", 6, 4), ("The answer is 2) because", 6, 1), ("(1)", 4, 0),
    ("None of the above", 6, 5), ("7", 6, None), ("I am not sure", 6, None), ("", 6, None), (None, 6, None),
    ("2nd", 6, None), ("6 - none of them", 6, 5),
])
def test_a_reply_is_read_as_the_first_number_that_names_a_choice(raw, choices, expected):
    assert parse_choice(raw, choices) == expected


def test_a_reconstruction_is_the_text_after_the_marker_or_all_of_it():
    assert parse_reconstruction("Sure.\n<summary>\nAnna sings.") == "Anna sings."
    assert parse_reconstruction("  Anna  sings. ") == "Anna sings."


def test_the_context_is_cut_from_the_start_at_a_word():
    book = BookText("one two  three\nfour five six")
    whole = book.before(len(book.text))
    assert (whole.words, whole.truncated, whole.start_char) == (6, False, 0)
    cut = book.before(len(book.text), 2)
    assert cut.text == "[...] five six" and cut.words == 2 and cut.truncated
    assert book.text[cut.start_char :].startswith("five")
    assert book.before(len(book.text), 0).text == "[...] "


def test_retention_bins_have_inclusive_lower_and_exclusive_upper_edges():
    bins = retention_bins(pd.Series([0, 999, 1000, 30_000]), (0, 1000, 5000))
    assert bins["bin_low"].tolist() == [0, 0, 1000, 5000]
    assert bins["bin_high"].tolist()[:3] == [1000, 1000, 5000] and math.isnan(bins["bin_high"].iloc[3])


@pytest.fixture
def answered(project, summarized_book):
    question_set = build_questions(project, summarized_book.book_id,
                                   QuestionSettings(every=2, options=4, seed=3, reconstruction=6))

    def reply(q):
        if not q.read_along:
            return "<summary>\n" + (q.body["reference"] if q.kind == "reconstruct-passage" else q.body["false_summary"])
        if q.checkpoint_scene % 6 == 1:
            return None  # a failed request
        if q.checkpoint_scene % 6 == 3:
            return "I cannot tell."
        # right when the true scene is recent, else always the first option
        return str(q.correct_choice + 1) if (q.retention_words or 0) < 150 else "1"

    return question_set, store_answers(project, question_set, "judge", reply)


def test_the_forgetting_curve_counts_answers_per_bin_with_wilson_intervals(project, answered):
    _, questions = answered
    bins = (0, 150, 400)
    curve = forgetting_curve(project, "judge", bins=bins)
    assert list(curve.columns) == CURVE_COLUMNS
    answers = answers_frame(project, "judge")
    scored = answers[answers["kind"].isin(["lookahead", "false-summary", "other-book"])]
    assert scored["none_of_the_above"].any() and scored["retention_words"].notna().all()  # all of them plotted
    for row in curve.itertuples(index=False):
        upper = math.inf if pd.isna(row.bin_high) else row.bin_high
        part = scored[(scored["retention_words"] >= row.bin_low) & (scored["retention_words"] < upper)]
        ok = part[part["status"] == "ok"]
        assert row.questions == len(ok) and row.failed == int((part["status"] != "ok").sum())
        assert row.correct == int(ok["correct"].sum()) and row.unparsed == int(ok["unparsed"].sum())
        low, high = proportion_confint(row.correct, row.questions, method="wilson")
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high))
        assert row.chance == pytest.approx(0.25)
    assert curve["questions"].sum() + curve["failed"].sum() == len(scored)
    first = curve.iloc[0]
    assert first["bin_low"] == 0 and first["accuracy"] > curve.iloc[-1]["accuracy"]


def test_the_slope_is_the_logistic_regression_statsmodels_fits(project, answered):
    answers = answers_frame(project, "judge")
    used = answers[answers["kind"].isin(["lookahead", "false-summary", "other-book"]) & (answers["status"] == "ok")]
    fit = sm.Logit(used["correct"].astype(float).to_numpy(),
                   sm.add_constant(np.log1p(used["retention_words"].astype(float).to_numpy()))).fit(disp=0)
    (row,) = forgetting_slope(project, "judge").to_dict("records")
    assert row["slope"] == pytest.approx(fit.params[1]) and row["slope"] < 0
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(fit.conf_int()[1]))
    assert row["p_value"] == pytest.approx(fit.pvalues[1])
    assert row["questions"] == len(used)


def test_the_chance_line_is_that_of_the_questions_each_point_counts(project, summarized_book, tmp_path):
    """Guessing earns 1/choices on each question: a point's chance is the mean over the questions its accuracy
    counts (answered ones), which differs between bins when books were asked with different numbers of choices,
    and the chart draws it per bin, not one number for the whole figure."""
    from matplotlib.figure import Figure

    from tests.fixtures.reading_books import reading_book
    from workbench.probes.reading.charts import curve_frame, draw_curve

    other = reading_book(project, tmp_path, seed=1, title="The Inn", tag="x")
    few = build_questions(project, summarized_book.book_id, QuestionSettings(every=2, options=3, reconstruction=0,
                                                                             kinds=("lookahead", "false-summary")))
    many = build_questions(project, other.book_id, QuestionSettings(every=2, options=6, reconstruction=0,
                                                                    kinds=("lookahead", "false-summary")))
    store_answers(project, few, "judge", lambda q: "1" if (q.retention_words or 0) < 300 else None)  # late ones fail
    store_answers(project, many, "judge", lambda q: "2")
    bins = (0, 300, 600)
    curve = forgetting_curve(project, "judge", bins=bins)
    answers = answers_frame(project, "judge")
    answered = answers[answers["status"] == "ok"]
    for row in curve.itertuples(index=False):
        upper = math.inf if pd.isna(row.bin_high) else row.bin_high
        part = answered[(answered["retention_words"] >= row.bin_low) & (answered["retention_words"] < upper)]
        assert row.chance == pytest.approx((1 / part["choices"]).mean())
    assert curve["chance"].iloc[0] > 1 / 6 + 0.01 and curve["chance"].iloc[-1] == pytest.approx(1 / 6)
    frame = curve_frame(project, model="judge", bins=bins)
    figure = Figure()
    draw_curve(frame, figure)
    (line,) = [line for line in figure.axes[0].get_lines() if line.get_linestyle() == "--"]
    # a step across each bin: from half a bin before its point to half a bin after, at that bin's chance
    assert list(line.get_ydata()) == pytest.approx([c for c in frame["chance"] for _ in (0, 1)])
    assert list(line.get_xdata()) == pytest.approx([i + side for i in range(len(frame)) for side in (-0.5, 0.5)])
    assert "chance" in line.get_label()


def test_accuracy_by_kind_keeps_none_of_the_above_apart(project, answered):
    table = accuracy_by_kind(project, "judge")
    assert set(table["kind"]) == {"lookahead", "false-summary"}  # one book: no other book to draw from
    assert set(table["none_of_the_above"]) == {True, False}
    answers = answers_frame(project, "judge")
    read_along = answers[answers["kind"] != "reconstruct"]
    read_along = read_along[read_along["kind"] != "reconstruct-passage"]
    assert table["questions"].sum() + table["failed"].sum() == len(read_along)


def test_reconstruction_scores_set_the_model_against_the_false_summary_baseline(project, answered):
    scores = reconstruction_scores(project, "judge", draws=500)
    assert set(scores["measure"]) == {"rouge1", "rouge2", "rougeL"}
    by = {(r.kind, r.measure): r for r in scores.itertuples(index=False)}
    # with the passage the reply was the true summary itself; without it, the false summary unchanged
    assert by[("reconstruct-passage", "rouge1")].model_mean == pytest.approx(1.0)
    assert by[("reconstruct-passage", "rouge1")].gain > 0
    unchanged = by[("reconstruct", "rougeL")]
    assert unchanged.gain == pytest.approx(0.0) and unchanged.model_mean == pytest.approx(unchanged.baseline_mean)
    answers = answers_frame(project, "judge")
    done = answers[answers["kind"] == "reconstruct"]
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    expected = np.mean([scorer.score(r, f)["rougeL"].fmeasure for r, f in zip(done["reference"], done["false_summary"])])
    assert unchanged.baseline_mean == pytest.approx(expected)
    assert unchanged.baseline_low <= unchanged.baseline_mean <= unchanged.baseline_high


def test_the_cost_of_the_questions_is_estimated_from_the_book_each_one_shows(project, summarized_book):
    from workbench.models.catalog import ModelSpec
    from workbench.probes.reading.questions import load_questions, question_count
    from workbench.probes.reading.run import TOKENS_PER_WORD, estimate_questions_cost

    question_set = build_questions(project, summarized_book.book_id,
                                   QuestionSettings(every=3, options=4, seed=1, reconstruction=2))
    paid = ModelSpec(label="api", backend="openai", ref="gpt-4o-mini", api_key_env="OPENAI_API_KEY")
    short = estimate_questions_cost(project, paid, context_words=50)
    whole = estimate_questions_cost(project, paid)
    assert short.requests == whole.requests == question_count(project, question_set.id)
    read_along = [q for q in load_questions(project, question_set.id) if q.read_along]
    book_tokens = sum(int(q.checkpoint_word * TOKENS_PER_WORD) for q in read_along)
    assert whole.prompt_tokens - short.prompt_tokens == book_tokens - sum(
        int(min(q.checkpoint_word, 50) * TOKENS_PER_WORD) for q in read_along)
    assert whole.cost > short.cost > 0


def test_the_curve_shows_the_model_that_answered_last_unless_one_is_named(project, answered):
    from workbench.probes.reading.charts import answer_models, curve_frame

    question_set, _ = answered
    store_answers(project, question_set, "later", lambda q: "1")
    assert answer_models(project) == ["later", "judge"]
    assert set(curve_frame(project)["model"]) == {"later"}
    assert set(curve_frame(project, model="judge")["model"]) == {"judge"}
