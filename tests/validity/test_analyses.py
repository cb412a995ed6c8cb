"""The year and narrative-time analyses: every number against scipy/statsmodels on fixed data, the
bootstraps against draws made one at a time, and the groups against the name-cloze probe's own deciles."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact, permutation_test, spearmanr
from statsmodels.stats.proportion import proportion_confint

from tests.validity.conftest import ALPHA_MINUTES, ALPHA_YEARS, MINUTES, YEARS, write
from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES
from workbench.corpus.book_sets import book_set_members
from workbench.errors import UserError
from workbench.probes.cloze.analysis import decile_sets
from workbench.probes.validity.groups import memorization_groups
from workbench.probes.validity.narrative_time import narrative_items, narrative_table
from workbench.probes.validity.year import year_books, year_table


def percentiles(draws):
    draws = np.asarray(draws, dtype=float)
    return tuple(np.percentile(draws[np.isfinite(draws)], [2.5, 97.5]))


def bootstrap_mean_by_hand(values, seed=0):
    picks = np.random.default_rng(seed).integers(0, len(values), size=(BOOTSTRAP_RESAMPLES, len(values)))
    return percentiles([np.mean(values[row]) for row in picks])


def rho_or_nan(x, y):
    return spearmanr(x, y).statistic if len(set(x)) > 1 and len(set(y)) > 1 else np.nan


# ---------------------------------------------------------------------------------------------- groups
@pytest.mark.parametrize("model, groups, fraction, ties", [
    ("alpha", "decile", 0.1, "all"), ("alpha", "quintile", 0.2, "all"), ("beta", "decile", 0.1, "all"),
    ("beta", "decile", 0.1, "draw"), ("beta", "quintile", 0.2, "draw")])
def test_groups_are_the_name_cloze_probes_own_sets(studied, model, groups, fraction, ties):
    project, ids = studied
    ours = memorization_groups(project, model, groups, save=True, ties=ties, seed=4)
    theirs = decile_sets(project, model, fraction=fraction, save=False, ties=ties, seed=4)  # the same draw too
    for group, prefix in (("top", "cloze top"), ("bottom", "cloze bottom")):
        mine = ours[ours["group"] == group]
        cut = theirs[theirs["set"].str.startswith(prefix)]
        assert dict(zip(mine["book_id"], mine["tied_at_cut"])) == dict(zip(cut["book_id"], cut["tied_at_cut"]))
        saved = book_set_members(project, f"{prefix} {groups}: {model}")
        assert saved == set(cut["book_id"])


def test_all_tied_books_cannot_fill_both_ends_of_one_tie(studied):
    """'beta' knows book 10 only: the quintiles' top cut (the second book) and bottom cut fall in the same tie
    of nine books, so 'every tied book in' would put them in both groups; drawing them works."""
    project, _ = studied
    with pytest.raises(UserError, match="same score"):
        memorization_groups(project, "beta", "quintile")
    drawn = memorization_groups(project, "beta", "quintile", ties="draw")
    assert (drawn["group"] == "top").sum() == (drawn["group"] == "bottom").sum() == 2


def test_groups_need_a_model_with_name_cloze_results(studied):
    project, _ = studied
    with pytest.raises(UserError, match="no model called 'nobody'"):
        memorization_groups(project, "nobody")
    with pytest.raises(UserError, match="not a kind of group"):
        memorization_groups(project, "alpha", "tercile")



@pytest.mark.parametrize("by, groups, ties", [("alpha", "decile", "all"), ("beta", "decile", "all"),
                                              ("beta", "decile", "draw"), ("beta", "quintile", "draw")])
def test_both_group_tables_say_what_the_tie_rule_did(studied, by, groups, ties):
    """As the error analysis says it: 'beta' gets nine books wholly wrong, so they tie at the bottom cut."""
    project, _ = studied
    grouping = memorization_groups(project, by, groups, ties=ties)
    options = {"groups": groups, "ties": ties, "draws": 40}
    year = year_table(project, "alpha", by, permutations=99, resamples=50, **options).set_index("group")
    time = narrative_table(project, "alpha", by, "imported", resamples=50, **options).set_index("group")
    bottom = grouping[grouping["group"] == "bottom"]
    tied = int(bottom["tied_at_cut"].sum())
    said = ("9 books tie at the bottom cut (score 0): all of them are in, so the bottom group holds 9 books, not 1"
            if ties == "all" else f"{tied} of the 9 books tied at the bottom cut (score 0) were drawn at random")
    for table in (year, time):
        assert (said in table.loc["bottom", "note"]) == (by == "beta")
        assert ("tie" in table.loc["top", "note"]) == (by == "beta" and groups == "quintile")
        assert set(table["tie_rule"]) == {ties} and set(table["draws"]) == {40 if ties == "draw" else 0}
    assert grouping["tied_at_cut"].any() == (by == "beta")
    assert len(bottom) == (9 if ties == "all" and by == "beta" else math.ceil(10 * (0.1 if groups == "decile" else 0.2)))
    assert not any("tie at" in table.loc[g, "note"] for table in (year, time) for g in ("all", "difference"))


def test_drawn_ties_give_the_median_draw_and_the_spread(studied):
    """Grouped by 'beta' with drawn ties, the bottom book of alpha's year analysis is one of nine: each draw gives
    a top - bottom MAE, the table shows the median draw and the 5th-95th percentile of the draws."""
    project, _ = studied
    draws = 41
    table = year_table(project, "alpha", "beta", ties="draw", draws=draws, seed=2, permutations=99,
                       resamples=50).set_index("group")
    books = year_books(project, "alpha", "beta")  # every book tied at the bottom is in (the default)
    errors = dict(zip(books["book_id"], books["abs_error"]))
    from workbench.probes.validity.groups import group_cuts

    cuts = group_cuts(project, "beta", "decile", "draw", seed=2, draws=draws)
    by_draw = []
    for d in range(draws):
        frame = cuts.frame(d)
        top = [errors[b] for b in frame.loc[frame["group"] == "top", "book_id"] if not math.isnan(errors[b])]
        bottom = [errors[b] for b in frame.loc[frame["group"] == "bottom", "book_id"] if not math.isnan(errors[b])]
        by_draw.append(np.mean(top) - np.mean(bottom) if top and bottom else math.nan)
    by_draw = np.array(by_draw)
    finite = by_draw[~np.isnan(by_draw)]
    low, high = np.percentile(finite, [5, 95], method="inverted_cdf")
    assert table.loc["difference", "mae_p5"] == pytest.approx(low)
    assert table.loc["difference", "mae_p95"] == pytest.approx(high)
    assert low < high  # the draw matters here
    ordered = np.sort(np.where(np.isnan(by_draw), np.inf, by_draw))
    assert table.loc["difference", "mae"] == pytest.approx(ordered[(draws - 1) // 2])
    assert "median of 41 draws" in table.loc["difference", "note"]
    assert table.loc["all", "mae_p5"] == table.loc["all", "mae_p95"] == table.loc["all", "mae"]


# ---------------------------------------------------------------------------------------------- year
def test_the_per_book_table_holds_answers_predictions_and_errors(studied):
    project, ids = studied
    books = year_books(project, "alpha", "alpha", groups="quintile").set_index("book_id")
    by_number = {ids[i]: i for i in ids}
    for book_id, row in books.iterrows():
        i = by_number[book_id]
        assert row["accuracy"] == pytest.approx(i / 10) and row["year"] == YEARS[i]
        if ALPHA_YEARS[i] is None:
            assert row["missing"] and math.isnan(row["predicted"]) and math.isnan(row["abs_error"])
            assert row["answer"] == "I cannot say." and row["reason"] == "declined to answer"
        else:
            assert row["predicted"] == ALPHA_YEARS[i] and row["abs_error"] == abs(ALPHA_YEARS[i] - YEARS[i])
    assert books.loc[ids[10], "group"] == books.loc[ids[9], "group"] == "top"
    assert books.loc[ids[1], "group"] == books.loc[ids[2], "group"] == "bottom"
    assert list(books["group"]).count("middle") == 6


def test_every_number_of_the_year_table_against_scipy_and_statsmodels(studied):
    project, ids = studied
    table = year_table(project, "alpha", "alpha", groups="quintile", seed=3).set_index("group")
    errors = {i: abs(ALPHA_YEARS[i] - YEARS[i]) for i in ids if ALPHA_YEARS[i] is not None}
    top, bottom = np.array([errors[10], errors[9]], float), np.array([errors[1], errors[2]], float)
    every = np.array([errors[i] for i in sorted(errors)], float)
    assert table.loc["top", "mae"] == top.mean() and table.loc["bottom", "mae"] == bottom.mean()
    assert table.loc["all", "mae"] == pytest.approx(every.mean())
    assert (table.loc["all", "books"], table.loc["all", "missing"]) == (10, 1)
    assert table.loc["all", "missing_share"] == 0.1
    low, high = proportion_confint(1, 10, alpha=0.05, method="wilson")
    assert (table.loc["all", "missing_ci_low"], table.loc["all", "missing_ci_high"]) == pytest.approx((low, high))
    assert (table.loc["all", "mae_ci_low"], table.loc["all", "mae_ci_high"]) == pytest.approx(
        bootstrap_mean_by_hand(every, seed=3), rel=1e-12)
    assert (table.loc["top", "mae_ci_low"], table.loc["top", "mae_ci_high"]) == pytest.approx(
        bootstrap_mean_by_hand(top, seed=3), rel=1e-12)
    accuracy = [i / 10 for i in sorted(errors)]
    expected = spearmanr(accuracy, every)
    assert table.loc["all", "spearman_rho"] == pytest.approx(expected.statistic)
    assert table.loc["all", "spearman_p"] == pytest.approx(expected.pvalue)
    difference = table.loc["difference"]
    assert difference["mae"] == top.mean() - bottom.mean()
    rng = np.random.default_rng(3)
    first = rng.integers(0, 2, size=(BOOTSTRAP_RESAMPLES, 2))
    second = rng.integers(0, 2, size=(BOOTSTRAP_RESAMPLES, 2))
    by_hand = percentiles([top[a].mean() - bottom[b].mean() for a, b in zip(first, second)])
    assert (difference["mae_ci_low"], difference["mae_ci_high"]) == pytest.approx(by_hand, rel=1e-12)
    exact = permutation_test((top, bottom), lambda x, y: np.mean(x) - np.mean(y), permutation_type="independent",
                             n_resamples=9999)
    assert difference["p_value"] == pytest.approx(exact.pvalue)
    assert difference["missing_p_value"] == fisher_exact([[0, 2], [0, 2]]).pvalue
    assert "only 2 books" in table.loc["top", "note"]


def test_the_plausible_years_change_what_counts_as_a_prediction(studied):
    project, ids = studied
    narrow = year_books(project, "alpha", "alpha", year_range=(1850, 2000)).set_index("book_id")
    assert narrow.loc[ids[1], "missing"]  # 1817 - 27 = 1790 is not plausible any more
    assert narrow.loc[ids[1], "reason"].startswith("1790 is outside")


def test_a_group_without_a_single_prediction_says_so_plainly(studied):
    project, _ = studied
    table = year_table(project, "alpha", "alpha", year_range=(3000, 3001)).set_index("group")
    assert table.loc["top", "predicted"] == 0 and math.isnan(table.loc["top", "mae"])
    assert table.loc["top", "note"].startswith("no book with a prediction")
    assert "only 0" not in " ".join(table["note"])


def test_a_model_without_answers_is_told_what_to_do(studied):
    project, _ = studied
    with pytest.raises(UserError, match="'beta' has no answers to the year task"):
        year_table(project, "beta", "alpha")


# ---------------------------------------------------------------------------------------------- narrative time
def test_the_narrative_table_against_scipy_and_draw_by_draw_bootstraps(timed):
    project, ids, extra = timed
    table = narrative_table(project, "alpha", "alpha", "imported", groups="quintile", seed=5).set_index("group")
    items = narrative_items(project, "alpha", "alpha", "imported", groups="quintile")
    assert len(items) == 10 + 12  # the imported answers came in two files, as two runs of the same settings
    pairs = {}
    for group, books in (("top", (9, 10)), ("bottom", (1, 2))):
        predicted = [ALPHA_MINUTES[i] for i in books] + [g for i, m, g in extra.values() if i in books]
        reference = [MINUTES[i] for i in books] + [m for i, m, g in extra.values() if i in books]
        part = items[items["group"] == group]
        assert sorted(part["predicted_minutes"]) == pytest.approx(sorted(predicted))
        assert sorted(part["reference_minutes"]) == pytest.approx(sorted(reference))
        x, y = part["predicted_minutes"].to_numpy(float), part["reference_minutes"].to_numpy(float)
        pairs[group] = (x, y)
        expected = spearmanr(x, y)
        row = table.loc[group]
        assert row["items"] == 8 and row["spearman_rho"] == pytest.approx(expected.statistic)
        assert row["p_value"] == pytest.approx(expected.pvalue)
        picks = np.random.default_rng(5).integers(0, 8, size=(BOOTSTRAP_RESAMPLES, 8))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            percentiles([rho_or_nan(x[p], y[p]) for p in picks]), rel=1e-12)
        assert "small group: 8 items" in row["note"]
    (ax, ay), (bx, by) = pairs["top"], pairs["bottom"]
    difference = table.loc["difference"]
    assert difference["spearman_rho"] == pytest.approx(spearmanr(ax, ay).statistic - spearmanr(bx, by).statistic)
    rng = np.random.default_rng(5)
    first = rng.integers(0, 8, size=(BOOTSTRAP_RESAMPLES, 8))
    second = rng.integers(0, 8, size=(BOOTSTRAP_RESAMPLES, 8))
    draws = [rho_or_nan(ax[a], ay[a]) - rho_or_nan(bx[b], by[b]) for a, b in zip(first, second)]
    assert (difference["ci_low"], difference["ci_high"]) == pytest.approx(percentiles(draws), rel=1e-12)
    every = table.loc["all"]
    assert every["items"] == 22 and every["spearman_rho"] == pytest.approx(
        spearmanr(items["predicted_minutes"], items["reference_minutes"]).statistic)


def test_references_from_an_annotation_task_adjudicated_else_the_geometric_mean(timed, tmp_path):
    from workbench.annotation.adjudication import adjudicate
    from workbench.annotation.annotation_import import import_annotations
    from workbench.annotation.items import list_items
    from workbench.probes.validity.references import annotation_task_from_passages, reference_minutes

    project, ids, _ = timed
    assert annotation_task_from_passages(project, "timing", book_ids=[ids[1], ids[10]]) == 8
    items = list_items(project, "timing")
    assert all(item.meta["validity_passage"] for item in items)
    first, second = items[0], items[1]
    answers = ["annotator,item_id,value", f"ann,{first.item_key},10 min", f"bo,{first.item_key},1000 min",
               f"ann,{second.item_key},2 hours", f"bo,{second.item_key},8 hours"]
    import_annotations(project, "timing", write(tmp_path / "answers.csv", "\n".join(answers) + "\n"))
    adjudicate(project, "timing", second.item_key, "3 hours")
    references = reference_minutes(project, "timing").set_index("passage_id")
    assert references.loc[first.meta["validity_passage"], "reference_minutes"] == pytest.approx(100.0)
    assert references.loc[first.meta["validity_passage"], "source"] == "mean of 2 annotators (log scale)"
    assert references.loc[second.meta["validity_passage"]].tolist() == [180.0, "adjudicated"]
    assert len(references) == 2  # the other items have no answers yet
    table = narrative_table(project, "alpha", "alpha", "timing", groups="decile")
    assert table.loc[table["group"] == "all", "items"].item() == 2


def test_a_label_or_missing_reference_is_refused(timed):
    from workbench.annotation.tasks import create_task

    project, _, _ = timed
    create_task(project, "labels", "label", labels="a,b")
    with pytest.raises(UserError, match="choose a narrative-time task"):
        narrative_table(project, "alpha", "alpha", "labels")
    with pytest.raises(UserError, match="no annotation task called 'nothing'"):
        narrative_table(project, "alpha", "alpha", "nothing")


def test_frames_are_frames(studied):
    project, _ = studied
    assert isinstance(year_table(project, "alpha", "beta"), pd.DataFrame)
