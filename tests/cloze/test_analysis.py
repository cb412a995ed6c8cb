"""The analyses, on results whose answers are known: imported for two made-up models over ten books."""

from __future__ import annotations

import math

import pytest

from tests.fixtures.cloze_texts import BOOKS
from workbench.jobs import Outcome, Unit, create_run, run_job
from workbench.probes.cloze.analysis import (
    book_accuracy,
    category_means,
    compare_models,
    compare_models_tests,
    decile_sets,
    model_labels,
    year_correlation,
)
from workbench.probes.cloze.gpt4books import external_model
from workbench.probes.cloze.score import wilson_interval


def test_per_book_accuracy_with_wilson_intervals(results):
    project, ids = results
    table = book_accuracy(project, "alpha").set_index("book")
    assert len(table) == BOOKS
    row = table.loc["Book 07"]
    assert (row["n"], row["correct"], row["accuracy"], row["failed"]) == (10, 7, 0.7, 0)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_interval(7, 10))
    assert row["year"] == 1870
    assert list(table["accuracy"]) == sorted(table["accuracy"], reverse=True)  # ranked
    assert model_labels(project) == ["alpha", "beta"]


def test_failures_are_counted_apart_and_not_in_the_denominator(results):
    project, ids = results
    model_id = external_model(project, "gamma")
    passage_ids = [r[0] for r in project.db.execute(
        "SELECT id FROM cloze_passages WHERE book_id = ? ORDER BY id", [ids["b03"]]).fetchall()]
    run_id = create_run(project, "cloze", model_id=model_id)

    def process(units, state):
        for n, unit in enumerate(units):
            gold = project.db.execute("SELECT gold FROM cloze_passages WHERE id = ?", [unit.item_id]).fetchone()[0]
            yield unit, (Outcome.failure("server said no") if n < 4 else Outcome(raw=f"<name>{gold}</name>"))

    run_job(project, run_id, [Unit(i) for i in passage_ids], process)
    row = book_accuracy(project, "gamma").iloc[0]
    assert (row["n"], row["correct"], row["failed"], row["accuracy"]) == (6, 6, 4, 1.0)


def test_the_latest_run_of_a_model_counts(results):
    project, ids = results
    passage_ids = [r[0] for r in project.db.execute("SELECT id FROM cloze_passages WHERE book_id = ?", [ids["b01"]])]
    model_id = project.db.execute("SELECT id FROM models WHERE label = 'alpha'").fetchone()[0]
    run_id = create_run(project, "cloze", model_id=model_id)
    run_job(project, run_id, [Unit(i) for i in passage_ids], lambda units, s: [(u, Outcome(raw="")) for u in units])
    table = book_accuracy(project, "alpha").set_index("book")
    assert table.loc["Book 01", "correct"] == 0 and table.loc["Book 02", "correct"] == 2
    # asking for the earlier (imported) runs gives their answers back
    imported = [r[0] for r in project.db.execute(
        "SELECT id FROM runs WHERE model_id = ? AND id != ?", [model_id, run_id]).fetchall()]
    earlier = book_accuracy(project, "alpha", run_ids=imported).set_index("book")
    assert earlier.loc["Book 01", "correct"] == 1


def test_category_means_with_t_intervals_over_books(results):
    from scipy import stats

    project, _ = results
    frame = category_means(project, "genre", "alpha").set_index("value")
    gothic = [0.1, 0.2, 0.3, 0.4, 0.5]
    assert frame.loc["gothic", "books"] == 5 and frame.loc["gothic", "passages"] == 50
    assert frame.loc["gothic", "mean_accuracy"] == pytest.approx(0.3)
    expected = stats.t.interval(0.95, len(gothic) - 1, loc=0.3, scale=stats.sem(gothic))
    assert (frame.loc["gothic", "ci_low"], frame.loc["gothic", "ci_high"]) == pytest.approx(expected)
    # known value: sd 0.1581, se 0.0707, t(0.975, 4) = 2.776 -> 0.3 +- 0.1963
    assert frame.loc["gothic", "ci_low"] == pytest.approx(0.1037, abs=1e-3)
    decades = category_means(project, "decade", "alpha")
    assert set(decades["value"]) == {f"{1800 + 10 * i}s" for i in range(1, 11)}


def test_model_comparison_names_its_tests_and_gives_p_values(results):
    project, _ = results
    paired = compare_models(project, "alpha", "beta")
    assert len(paired) == BOOKS
    assert paired.set_index("book").loc["Book 10", "difference"] == 0
    tests = compare_models_tests(project, "alpha", "beta").set_index("test")
    wilcoxon = tests.loc["Wilcoxon signed-rank (per-book accuracy)"]
    assert wilcoxon["n"] == 10 and wilcoxon["p_value"] < 0.01
    mcnemar = tests.loc["McNemar exact (shared passages)"]
    # alpha alone is right on 1+2+...+9 = 45 passages, beta alone on none: exact binomial p = 2 * 0.5**45
    assert mcnemar["n"] == 100 and mcnemar["note"] == "only alpha right: 45, only beta right: 0"  # named, not a/b
    assert mcnemar["p_value"] == pytest.approx(2 * 0.5**45)


def test_accuracy_against_year(results):
    project, _ = results
    frame = year_correlation(project).set_index("model")
    assert frame.loc["alpha", "rho"] == pytest.approx(1.0)
    assert frame.loc["alpha", "p_value"] < 1e-6
    assert frame.loc["alpha", "test"] == "Spearman rank correlation"
    assert frame.loc["beta", "rho"] == pytest.approx(0.5222, abs=1e-3)  # one book at the top, nine tied


def test_decile_sets_are_saved_as_book_sets(results):
    project, ids = results
    frame = decile_sets(project, "alpha")
    assert list(frame["book_id"]) == [ids["b10"], ids["b01"]]
    members = dict(project.db.execute(
        "SELECT s.name, m.book_id FROM book_sets s JOIN book_set_members m ON m.set_id = s.id").fetchall())
    assert members == {"cloze top decile: alpha": ids["b10"], "cloze bottom decile: alpha": ids["b01"]}
    decile_sets(project, "alpha")  # again: replaced, not added
    assert project.db.execute("SELECT COUNT(*) FROM book_sets").fetchone()[0] == 2
    quintiles = decile_sets(project, "alpha", fraction=0.2)  # quintiles are sets of their own
    assert set(quintiles["set"]) == {"cloze top quintile: alpha", "cloze bottom quintile: alpha"}
    assert project.db.execute("SELECT COUNT(*) FROM book_sets").fetchone()[0] == 4
    assert project.db.execute("SELECT COUNT(*) FROM book_set_members").fetchone()[0] == 2 + 4


def test_flagged_books_can_be_left_out(results):
    project, ids = results
    with project.db.conn:
        project.db.execute(
            "INSERT INTO cloze_extractions (book_id, candidates, sampled, per_book, seed, fast, created_at)"
            " VALUES (?, 10, 10, 100, 0, 0, 'now')", [ids["b05"]])
    assert book_accuracy(project, "alpha").set_index("book").loc["Book 05", "flagged"]
    kept = book_accuracy(project, "alpha", exclude_flagged=True)
    assert "Book 05" not in set(kept["book"]) and len(kept) == BOOKS - 1
    assert not math.isnan(category_means(project, "genre", "alpha", exclude_flagged=True)["mean_accuracy"].iloc[0])


@pytest.mark.parametrize("ci", ["wilson", "bootstrap"])
def test_the_book_table_is_each_books_answers_counted_one_by_one(results, ci):
    """The table is counted with arrays for speed; counted book by book from the answers it must be the same,
    with failures, a newer run over part of a book, answers to a deleted passage and two run kinds."""
    from workbench.probes.cloze.analysis import passage_results
    from workbench.probes.cloze.score import accuracy_interval

    project, ids = results
    alpha = project.db.execute("SELECT id FROM models WHERE label = 'alpha'").fetchone()[0]
    passages = [r[0] for r in project.db.execute(
        "SELECT id FROM cloze_passages WHERE book_id IN (?, ?) ORDER BY id", [ids["b02"], ids["b03"]]).fetchall()]
    gold = dict(project.db.execute("SELECT id, gold FROM cloze_passages").fetchall())
    newer = create_run(project, "cloze", model_id=alpha)  # over the end of b02 and the start of b03
    run_job(project, newer, [Unit(i) for i in passages[5:15]],
            lambda units, s: [(u, Outcome.failure("timeout") if u.item_id % 3 == 1 else
                               Outcome(raw=f"<name>{gold[u.item_id] if u.item_id % 2 else 'x'}</name>"))
                              for u in units])
    baseline = create_run(project, "cloze-mlm", model_id=alpha)
    run_job(project, baseline, [Unit(i) for i in passages], lambda units, s: [(u, Outcome(raw="Name2x1")) for u in units])
    with project.db.transaction():
        project.db.execute("DELETE FROM cloze_passages WHERE id = ?", [passages[0]])
    table = book_accuracy(project, ci=ci)
    answers = passage_results(project)
    expected = []
    for (model, kind, book_id), group in answers.groupby(["model", "kind", "book_id"]):
        outcomes = group.loc[group["status"] == "ok", "correct"].astype(bool).tolist()
        low, high = accuracy_interval(outcomes, ci) if outcomes else (math.nan, math.nan)
        expected.append((model, kind, book_id, len(outcomes), sum(outcomes), len(group) - len(outcomes), low, high,
                         ", ".join(str(r) for r in sorted(group["run_id"].unique()))))
    got = list(table[["model", "kind", "book_id", "n", "correct", "failed", "ci_low", "ci_high", "runs"]]
               .itertuples(index=False, name=None))
    assert sorted(got) == sorted(expected)  # exactly: the same intervals, not merely close
    assert ("alpha", "cloze", ids["b02"], 7, 2, 2) == next(g[:6] for g in got if g[:3] == ("alpha", "cloze", ids["b02"]))
