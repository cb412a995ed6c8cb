"""The validity charts as real figure files with the CSV of what they plot, the error-analysis chart, and
the methods text."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from workbench.export.methods import methods_text
from workbench.export.registry import charts, export_chart, export_table, tables

CHARTS = {"validity-year-groups": {"model": "alpha", "by": "alpha", "groups": "quintile"},
          "validity-year-error": {"model": "alpha", "by": "beta"},
          "validity-narrative-time": {"model": "alpha", "by": "alpha", "groups": "quintile", "reference": "imported"}}


def test_every_chart_is_registered_and_exports_figure_and_csv(timed, tmp_path):
    project, _, _ = timed
    assert set(CHARTS) <= set(charts())
    for name, options in CHARTS.items():
        for suffix in (".pdf", ".svg", ".png"):
            paths = export_chart(project, name, tmp_path / f"{name}{suffix}", **options)
            assert [p.suffix for p in paths] == [suffix, ".csv"] and paths[0].stat().st_size > 1000
        frame = pd.read_csv(tmp_path / f"{name}.csv")
        assert len(frame) > 0
    groups = pd.read_csv(tmp_path / "validity-year-groups.csv")
    assert list(groups["group"]) == ["top", "bottom", "all"] and not math.isnan(groups["difference_p_value"][0])
    error = pd.read_csv(tmp_path / "validity-year-error.csv")
    assert {"accuracy", "abs_error", "group", "spearman_rho"} <= set(error.columns)


def test_the_error_analysis_chart_draws_the_null_distribution(published, tmp_path):
    paths = export_chart(published, "name-cloze-errors", tmp_path / "errors.png", model="chatgpt", by="gpt4",
                         permutations="300")
    null = pd.read_csv(paths[1])
    assert len(null) == 300 and null["observed"].nunique() == 1 and (null["p_value"] < 0.05).all()
    assert null["log_odds"].nunique() > 10  # one o per deal, not the observed one written over them
    reached = (null["log_odds"] >= null["observed"]).sum()
    assert null["p_value"][0] == pytest.approx((1 + reached) / 301)
    drawn = pd.read_csv(export_chart(published, "name-cloze-errors", tmp_path / "drawn.png", model="chatgpt",
                                     grouped_by="gpt4", ties="draw", draws="15", permutations="200")[1])
    assert set(drawn["grouped_by"]) == {"gpt4"} and set(drawn["tie_rule"]) == {"draw"} and drawn["draws"][0] == 15
    assert drawn["log_odds_p5"][0] <= drawn["observed"][0] <= drawn["log_odds_p95"][0]
    assert drawn["log_odds"].nunique() > 10


def test_an_error_analysis_with_nothing_to_compare_is_said(studied, tmp_path):
    from workbench.errors import UserError

    project, _ = studied  # every wrong answer is 'Nobody', a name of neither set
    with pytest.raises(UserError, match="no error on the held-out books names anyone"):
        export_chart(project, "name-cloze-errors", tmp_path / "errors.png", model="alpha")


def test_tables_are_registered(timed, tmp_path):
    project, _, _ = timed
    for name, options in (("validity-passages", {}), ("validity-answers", {"task": "narrative-time", "model": "alpha"}),
                          ("validity-year", {"model": "alpha"}), ("validity-narrative-time", {"model": "alpha"}),
                          ("cloze-error-names", {"model": "alpha"})):
        assert name in tables()
        frame = pd.read_csv(export_table(project, name, tmp_path / f"{name}.csv", **options))
        assert len(frame) > 0


def test_the_methods_text_describes_the_runs_parsers_groups_and_statistics(timed):
    project, _, _ = timed
    text = methods_text(project)
    assert "## Downstream validity" in text or "Downstream validity" in text
    for words in ("a four-digit year between 1000 and 2100", '"from 1996" is the year 1996', "at most 20 years wide",
                  "'decade' is the default", "(`spans`)", "the minutes reported in step 4", "(the parse rate)",
                  "`validity-unparsed`", "Wilson score interval (95%) of the parse rate", "geometric mean", "top and bottom decile (10%)",
                  "Permutation test", "Fisher's exact test", "Randomization test of the error analysis",
                  "year of first publication from a passage", "Answers imported from:"):
        assert words in text, words


def test_the_methods_text_states_the_tie_rule_the_grouping_model_and_the_spread(timed):
    """Every choice that moves the error analysis' o and the groups' statistics is in the methods text."""
    project, _, _ = timed
    text = methods_text(project)
    for words in ("one grouping model, the same for every model compared and named with each result",
                  "every book tied at the cut goes in, so a group may hold more than its share",
                  "names tied on PMI at the set size follow the same rule",
                  "as many as both sides allow, 500, 100 names per set",
                  "Spread over tie draws (100 seeded draws unless stated, 5th-95th percentile, inverted CDF)",
                  "log_odds_p5, log_odds_p95", "The order of tied books (their titles, say) never decides"):
        assert words in text, words
    assert "then by title" not in text


def test_the_error_table_export_names_grouping_set_size_and_tie_rule(published, tmp_path):
    frame = pd.read_csv(export_table(published, "cloze-errors", tmp_path / "errors.csv", model="gpt4,chatgpt",
                                     set_size="all,8", ties="draw", draws="12", permutations="200"))
    for column in ("grouped_by", "set_size", "tie_rule", "log_odds", "log_odds_p5", "log_odds_p95", "p_value"):
        assert column in frame.columns, column
    assert list(frame["model"]) == ["gpt4", "gpt4", "chatgpt", "chatgpt"] and set(frame["grouped_by"]) == {"gpt4"}
    assert list(frame["set_size"].astype(str)) == ["all", "8"] * 2 and set(frame["draws"]) == {12}
    assert (frame["log_odds_p5"] <= frame["log_odds"]).all() and (frame["log_odds"] <= frame["log_odds_p95"]).all()


@pytest.mark.parametrize("name", ["validity-year-groups", "validity-narrative-time"])
def test_a_chart_without_answers_says_what_to_do(project, name):
    from workbench.errors import UserError

    with pytest.raises(UserError, match="No model has answered"):
        export_chart(project, name, project.path.parent / "x.pdf")


def test_imported_answers_count_their_passages_without_listing_them_in_the_run(timed, tmp_path):
    """An import's config gives the number and digest of its passages (its answers list them): reading a
    run's config stays small whatever the size of the study, and the methods text still counts them."""
    from tests.validity.conftest import write
    from ui.wording import run_about
    from workbench.jobs import get_run
    from workbench.probes.validity.predictions import import_predictions

    project, _, _ = timed
    run_ids = [r for (r,) in project.db.execute("SELECT id FROM runs WHERE kind = 'validity-narrative-time'"
                                                " ORDER BY id").fetchall()]
    for run_id in run_ids:
        config = get_run(project, run_id)["config"]
        answered = project.db.execute("SELECT COUNT(*) FROM responses WHERE run_id = ?", [run_id]).fetchone()[0]
        assert "passage_ids" not in config and config["passages"] == answered
        assert run_about("validity-narrative-time", config) == f"imported from {config['imported_from']}; {answered} passages"
    assert "- **Passages:** 12 from 4 books (0 sampled, 12 imported)." in methods_text(project)
    # the same file again: the same run, nothing new; another file of that name with other passages: a run of its own
    answers = ["book,passage_id,answer"] + [f"b{i:02d},q{i}-{k},{k + 1} minutes" for i in (1, 2, 9, 10)
                                            for k in range(3)]
    first = import_predictions(project, "narrative-time", write(tmp_path / "more.csv", "\n".join(answers) + "\n"), "alpha")
    assert (first["run_id"].iloc[0], first["new_answers"].iloc[0]) == (run_ids[1], 0)
    fewer = import_predictions(project, "narrative-time", write(tmp_path / "more.csv", "\n".join(answers[:4]) + "\n"),
                               "alpha")
    assert fewer["run_id"].iloc[0] not in run_ids and fewer["new_answers"].iloc[0] == 3
