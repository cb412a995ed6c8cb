"""The statistics review: which answers count, ties, empty intervals, books left out, decile cuts.

Each test names a way a published number could have come out wrong, and checks the value against scipy
(or a count made here) on made-up results whose answers are known.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.fixtures.cloze_texts import gpt4books_rows
from workbench.corpus.library import set_tags, update_book
from workbench.errors import UserError
from workbench.jobs import Outcome, Unit, create_run, run_job
from workbench.probes.cloze.analysis import (
    book_accuracy,
    category_means,
    compare_models_tests,
    decile_sets,
    passage_results,
    year_correlation,
)
from workbench.probes.cloze.gpt4books import import_gpt4books


def _book_ids(project, n):
    return {i: project.db.execute("SELECT id FROM books WHERE external_id = ?", [f"b{i:02d}"]).fetchone()[0]
            for i in range(1, n + 1)}


def _import(project, tmp_path, model, rights, passages=10):
    """Imported results for ``model``: book i (b01, b02, ...) right ``rights[i - 1]`` times of ``passages``."""
    folder = tmp_path / model
    folder.mkdir()
    paths = []
    for i, right in enumerate(rights, start=1):
        path = folder / f"b{i:02d}.tsv"
        path.write_text(gpt4books_rows(i, right), encoding="utf-8")
        paths.append(path)
    import_gpt4books(project, paths, model)


def _answer_run(project, model, passage_ids, params, answer):
    model_id = project.db.execute("SELECT id FROM models WHERE label = ?", [model]).fetchone()[0]
    run_id = create_run(project, "cloze", model_id=model_id, params=params)

    def process(units, state):
        for unit in units:
            gold = project.db.execute("SELECT gold FROM cloze_passages WHERE id = ?", [unit.item_id]).fetchone()[0]
            yield unit, Outcome(raw=answer(gold))

    run_job(project, run_id, [Unit(i) for i in passage_ids], process)
    return run_id


# ---------------------------------------------------------------------------------------------- which answers count
def test_a_run_with_other_settings_is_not_mixed_into_the_table(results):  # noqa: F811
    """A later run at another temperature on one book must not stand beside the other books' answers."""
    project, ids = results
    passage_ids = [r[0] for r in project.db.execute(
        "SELECT id FROM cloze_passages WHERE book_id = ? ORDER BY id", [ids["b01"]]).fetchall()]
    run_id = _answer_run(project, "alpha", passage_ids, {"temperature": 1.0}, lambda gold: f"<name>{gold}</name>")
    table = book_accuracy(project, "alpha").set_index("book")
    assert list(table.index) == ["Book 01"]  # only the newest settings: the imported books are not mixed in
    assert (table.loc["Book 01", "correct"], table.loc["Book 01", "n"]) == (10, 10)
    assert table.loc["Book 01", "runs"] == str(run_id)
    answers = passage_results(project, "alpha")
    assert set(answers["run_id"]) == {run_id}
    # the earlier settings are still there when asked for by run
    imported = [r[0] for r in project.db.execute(
        "SELECT id FROM runs WHERE id != ? AND model_id = (SELECT id FROM models WHERE label = 'alpha')",
        [run_id]).fetchall()]
    earlier = book_accuracy(project, "alpha", run_ids=imported).set_index("book")
    assert len(earlier) == 10 and earlier.loc["Book 01", "correct"] == 1 and earlier.loc["Book 02", "correct"] == 2


def test_runs_with_the_same_settings_combine_and_the_newest_answer_counts(results):  # noqa: F811
    project, ids = results
    passage_ids = [r[0] for r in project.db.execute(
        "SELECT id FROM cloze_passages WHERE book_id = ? ORDER BY id", [ids["b01"]]).fetchall()]
    run_id = _answer_run(project, "alpha", passage_ids, {}, lambda gold: "")  # same (empty) settings as the import
    table = book_accuracy(project, "alpha").set_index("book")
    assert len(table) == 10
    assert table.loc["Book 01", "correct"] == 0 and table.loc["Book 01", "runs"] == str(run_id)
    assert table.loc["Book 02", "correct"] == 2


# ---------------------------------------------------------------------------------------------- Wilcoxon
def test_wilcoxon_ranks_equal_accuracy_differences_as_ties(project, tmp_path):
    """0.7 - 0.6 and 0.4 - 0.3 are the same difference; in floating point they are not, which used to rank
    them apart. The p-value must be the one for the exact integer differences."""
    from scipy.stats import wilcoxon

    ka = [7, 4, 9, 5, 3, 8, 6, 2, 9, 5, 7, 3, 6, 4, 8, 10]
    kb = [6, 3, 7, 5, 2, 6, 5, 1, 7, 4, 4, 3, 5, 3, 5, 6]
    _import(project, tmp_path, "a", ka)
    _import(project, tmp_path, "b", kb)
    row = compare_models_tests(project, "a", "b").set_index("test").loc["Wilcoxon signed-rank (per-book accuracy)"]
    expected = wilcoxon(np.array(ka) - np.array(kb))  # integers: ties are ties
    assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-12)
    assert row["statistic"] == pytest.approx(expected.statistic)
    assert row["n"] == 16
    assert "14 of 16 books differ" in row["note"] and "2 book(s) with equal accuracy left out" in row["note"]
    assert "normal approximation" in row["note"]


def test_wilcoxon_says_when_its_p_value_is_exact(project, tmp_path):
    from scipy.stats import wilcoxon

    ka, kb = [9, 7, 8, 6, 10, 5], [1, 4, 3, 8, 2, 5]  # differences 8, 3, 5, -2, 8, 0: a tie and a zero
    _import(project, tmp_path, "a", ka)
    _import(project, tmp_path, "b", kb)
    row = compare_models_tests(project, "a", "b").set_index("test").loc["Wilcoxon signed-rank (per-book accuracy)"]
    assert row["p_value"] == pytest.approx(wilcoxon(np.array(ka) - np.array(kb)).pvalue)
    assert "exact permutation" in row["note"]


# ---------------------------------------------------------------------------------------------- category means
def test_a_group_whose_books_all_score_the_same_gets_no_zero_width_interval(project, tmp_path):
    _import(project, tmp_path, "a", [3, 3, 3, 2, 6])
    ids = _book_ids(project, 5)
    for i in range(1, 6):
        set_tags(project, ids[i], {"genre": "gothic" if i <= 3 else "realist"})
    frame = category_means(project, "genre", "a").set_index("value")
    gothic = frame.loc["gothic"]
    assert gothic["mean_accuracy"] == pytest.approx(0.3) and gothic["books"] == 3
    assert math.isnan(gothic["ci_low"]) and math.isnan(gothic["ci_high"])  # not [0.3, 0.3]
    assert "same accuracy" in gothic["note"]
    realist = frame.loc["realist"]
    from scipy import stats

    expected = stats.t.interval(0.95, 1, loc=0.4, scale=stats.sem([0.2, 0.6]))
    assert (realist["ci_low"], realist["ci_high"]) == pytest.approx((max(0.0, expected[0]), min(1.0, expected[1])))
    assert "clipped" in realist["ci_method"]


# ---------------------------------------------------------------------------------------------- year
def test_books_without_a_year_are_left_out_and_counted(results):  # noqa: F811
    from scipy.stats import spearmanr

    project, ids = results
    for key in ("b02", "b05"):
        update_book(project, ids[key], year=None)
    row = year_correlation(project, "alpha").iloc[0]
    assert row["books"] == 8 and row["without_year"] == 2
    kept = [i for i in range(1, 11) if i not in (2, 5)]
    expected = spearmanr([1800 + 10 * i for i in kept], [i / 10 for i in kept])
    assert row["rho"] == pytest.approx(expected.statistic) and row["p_value"] == pytest.approx(expected.pvalue)
    assert "2 book(s) without a year left out" in row["note"]


# ---------------------------------------------------------------------------------------------- deciles
def test_decile_books_tied_at_the_cut_all_go_in_or_are_drawn(results):  # noqa: F811
    project, ids = results
    frame = decile_sets(project, "beta")  # book 10 all right; books 1-9 all wrong (tied)
    top = frame[frame["set"] == "cloze top decile: beta"]
    bottom = frame[frame["set"] == "cloze bottom decile: beta"]
    assert list(top["book_id"]) == [ids["b10"]] and not top["tied_at_cut"].any()
    assert len(bottom) == 9 and bottom["tied_at_cut"].all()  # a decile is one book, but nine share the cut
    description = project.db.execute(
        "SELECT description FROM book_sets WHERE name = 'cloze bottom decile: beta'").fetchone()[0]
    assert "9 books tie at the bottom cut" in description and "holds 9 books, not 1" in description
    drawn = [decile_sets(project, "beta", ties="draw", seed=seed, save=seed == 0) for seed in range(12)]
    picks = {int(d.loc[d["set"] == "cloze bottom decile: beta", "book_id"].iloc[0]) for d in drawn}
    assert len(picks) > 3 and picks <= {ids[f"b{i:02d}"] for i in range(1, 10)}  # a random one, not the first title
    description = project.db.execute(
        "SELECT description FROM book_sets WHERE name = 'cloze bottom decile: beta'").fetchone()[0]
    assert "1 of the 9 books tied at the bottom cut" in description and "one random draw, seed 0" in description


def test_top_and_bottom_sets_never_share_a_book(project, tmp_path):
    _import(project, tmp_path, "a", [9, 5, 1])
    frame = decile_sets(project, "a", fraction=0.5)
    top = set(frame.loc[frame["set"].str.startswith("cloze top"), "book_id"])
    bottom = set(frame.loc[frame["set"].str.startswith("cloze bottom"), "book_id"])
    assert len(top) == len(bottom) == 1 and not top & bottom


def test_one_book_makes_no_top_and_bottom_sets(project, tmp_path):
    _import(project, tmp_path, "a", [4])
    with pytest.raises(UserError, match="at least two books"):
        decile_sets(project, "a")


# ---------------------------------------------------------------------------------------------- chart notes
def test_chart_notes_state_what_was_left_out_and_how_p_was_computed(project, tmp_path):
    from workbench.export.registry import chart
    from workbench.probes.cloze.chart_notes import chart_note

    _import(project, tmp_path, "a", [9, 7, 8, 6, 10, 5])
    _import(project, tmp_path, "b", [1, 4, 3, 8, 2, 5])
    ids = _book_ids(project, 6)
    for i in range(1, 6):
        update_book(project, ids[i], year=1800 + 10 * i)
    frame = chart("cloze-models").frame(project, model_a="a", model_b="b")
    note = chart_note(project, "cloze-models", frame, model_a="a", model_b="b")
    assert "exact permutation" in note and "1 book(s) with equal accuracy left out" in note
    frame = chart("cloze-year").frame(project, model="a")
    assert "1 book without a year is left out" in chart_note(project, "cloze-year", frame, model="a")


def test_the_accuracy_note_warns_of_zero_width_bootstrap_intervals(project, tmp_path):
    from workbench.export.registry import chart
    from workbench.probes.cloze.chart_notes import chart_note

    _import(project, tmp_path, "a", [10, 7, 0])
    frame = chart("cloze-accuracy").frame(project, model="a", ci="bootstrap")
    assert set(frame.loc[frame["accuracy"] == 1, "ci_low"]) == {1.0}  # what the percentile bootstrap gives
    note = chart_note(project, "cloze-accuracy", frame, model="a", ci="bootstrap")
    assert "2 books with every answer alike" in note and "zero-width" in note
    frame = chart("cloze-accuracy").frame(project, model="a")
    assert "zero-width" not in chart_note(project, "cloze-accuracy", frame, model="a")


def test_the_model_comparison_figure_states_the_p_value_of_the_tables(project, tmp_path):
    from workbench.export.registry import chart, render_figure
    from workbench.probes.cloze.analysis import compare_models_tests

    _import(project, tmp_path, "a", [9, 7, 8, 6, 10, 5])
    _import(project, tmp_path, "b", [1, 4, 3, 8, 2, 5])
    spec = chart("cloze-models")
    frame = spec.frame(project, model_a="a", model_b="b")
    tests = compare_models_tests(project, "a", "b")
    p_value = tests[tests["test"].str.startswith("Wilcoxon")]["p_value"].iloc[0]
    assert frame["wilcoxon_p"].iloc[0] == p_value  # the CSV beside the figure carries it too
    title = render_figure(spec, frame).axes[0].get_title()
    assert f"p = {p_value:.3g}" in title


def test_tables_charts_and_decile_sets_rank_tied_books_in_one_order(project, tmp_path):
    from workbench.probes.cloze.charts import accuracy_frame

    _import(project, tmp_path, "a", [5, 5, 5, 5, 9, 1])  # four books tied at 50%
    ids = _book_ids(project, 6)
    for i, title in enumerate(["Zeta", "Yarrow", "Xerxes", "Willow"], start=1):  # titles against id order
        update_book(project, ids[i], title=title)
    table = book_accuracy(project, "a")
    chart = accuracy_frame(project, "a")
    assert list(table["book_id"]) == list(chart["book_id"])
    tied = table[table["accuracy"] == 0.5]
    assert list(tied["book"]) == sorted(tied["book"])  # tables show ties in one order, the same way everywhere
    with pytest.raises(UserError, match="same score"):  # halves cut inside the tie: all in would put books in both
        decile_sets(project, "a", fraction=0.5)
    tied_ids = set(tied["book_id"])
    tops = []
    for seed in range(10):  # ... but the order does not choose the books of a set: draws do
        deciles = decile_sets(project, "a", fraction=0.5, ties="draw", seed=seed, save=False)
        top = set(deciles.loc[deciles["set"].str.startswith("cloze top"), "book_id"])
        bottom = set(deciles.loc[deciles["set"].str.startswith("cloze bottom"), "book_id"])
        assert len(top) == len(bottom) == 3 and not top & bottom and tied_ids <= top | bottom
        tops.append(frozenset(top & tied_ids))
    assert len(set(tops)) > 2
    for i, title in enumerate(["Alder", "Birch", "Cedar", "Damson"], start=1):  # the titles' order turned round
        update_book(project, ids[i], title=title)
    again = decile_sets(project, "a", fraction=0.5, ties="draw", seed=9, save=False)
    assert frozenset(set(again.loc[again["set"].str.startswith("cloze top"), "book_id"]) & tied_ids) == tops[9]
