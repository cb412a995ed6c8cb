"""Agreement statistics checked against values computed here by hand (textbook formulas)."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.annotation_data import task_with_answers
from tests.fixtures.by_hand import fleiss_by_hand, kappa_by_hand, wilson_by_hand
from workbench.annotation.agreement import agreement_table


def alpha_by_hand(units, distance):
    """Krippendorff's alpha from its definition: 1 - observed / expected disagreement over pairable values."""
    units = [[v for v in u if v is not None] for u in units]
    units = [u for u in units if len(u) >= 2]
    n = sum(len(u) for u in units)
    observed = sum(
        sum(distance(a, b) for i, a in enumerate(u) for j, b in enumerate(u) if i != j) / (len(u) - 1) for u in units
    ) / n
    values = [v for u in units for v in u]
    expected = sum(distance(a, b) for i, a in enumerate(values) for j, b in enumerate(values) if i != j) / (n * (n - 1))
    return 1 - observed / expected


def stat(table, name):
    rows = table[table["statistic"] == name]
    assert len(rows) == 1, f"{name} not in {list(table['statistic'])}"
    return rows.iloc[0]


def test_nominal_labels_two_annotators(project, tmp_path):
    ann = ["a", "a", "b", "c", "a", "b", "b", None]
    bob = ["a", "b", "b", "c", "a", "a", "b", "c"]
    task = task_with_answers(project, tmp_path, "label", {"Ann": ann, "Bob": bob}, labels=["a", "b", "c"])
    table = agreement_table(project, task)
    alpha = stat(table, "Krippendorff's alpha (nominal)")
    assert alpha["value"] == pytest.approx(alpha_by_hand(list(zip(ann, bob)), lambda x, y: float(x != y)))
    assert alpha["items"] == 7 and alpha["annotators"] == 2
    kappa = stat(table, "Cohen's kappa: Ann vs Bob")
    assert kappa["value"] == pytest.approx(kappa_by_hand(ann[:7], bob[:7]))
    assert kappa["items"] == 7
    assert -1 <= kappa["ci_low"] < kappa["value"] < kappa["ci_high"] <= 1


def test_fleiss_kappa_for_three_annotators_uses_items_everyone_answered(project, tmp_path):
    answers = {
        "A": ["x", "x", "y", "y", "x", "y", "x"],
        "B": ["x", "y", "y", "y", "x", "y", None],
        "C": ["x", "x", "y", "x", "x", "y", "y"],
    }
    task = task_with_answers(project, tmp_path, "label", answers, labels=["x", "y"])
    table = agreement_table(project, task)
    complete = [[answers[a][k] for a in "ABC"] for k in range(6)]
    fleiss = stat(table, "Fleiss' kappa")
    assert fleiss["value"] == pytest.approx(fleiss_by_hand(complete))
    assert fleiss["items"] == 6 and fleiss["annotators"] == 3
    assert not any(table["statistic"].str.startswith("Cohen"))


def test_narrative_time_alpha_on_log_minutes_and_pairwise_spearman(project, tmp_path):
    ann = ["5 min", "2 hours", "3 days", "1 week", "10 min", "1 year"]
    bob = ["6 min", "3 hours", "1 day", "2 weeks", "40 min", "8 months"]
    cat = ["4 min", "1 hour", "2 days", None, "15 min", "2 years"]
    task = task_with_answers(project, tmp_path, "narrative-time", {"Ann": ann, "Bob": bob, "Cat": cat})
    minutes = {"min": 1, "hour": 60, "hours": 60, "day": 1440, "days": 1440, "week": 10080, "weeks": 10080,
               "months": 43830, "year": 525960, "years": 525960}

    def to_log(v):
        if v is None:
            return None
        number, unit = v.split()
        return math.log(float(number) * minutes[unit])

    units = [[to_log(x) for x in values] for values in zip(ann, bob, cat)]
    table = agreement_table(project, task)
    alpha = stat(table, "Krippendorff's alpha (interval, log minutes)")
    assert alpha["value"] == pytest.approx(alpha_by_hand(units, lambda x, y: (x - y) ** 2))
    assert alpha["items"] == 6 and alpha["annotators"] == 3
    logs = pd.DataFrame(units, columns=["Ann", "Bob", "Cat"])
    for a, b in itertools.combinations(["Ann", "Bob", "Cat"], 2):
        row = stat(table, f"Spearman's rho: {a} vs {b}")
        pair = logs[[a, b]].dropna()
        ranks = pair.rank()
        assert row["value"] == pytest.approx(np.corrcoef(ranks[a], ranks[b])[0, 1])
        assert row["items"] == len(pair)


def test_summary_validity_accuracy_with_wilson_intervals(project, tmp_path):
    ann = ["true"] * 9 + ["distorted"]
    bob = ["true"] * 6 + ["distorted"] * 2 + [None, None]
    task = task_with_answers(project, tmp_path, "summary-validity", {"Ann": ann, "Bob": bob})
    table = agreement_table(project, task)
    row = stat(table, "Accuracy vs the true summary: Ann")
    assert row["value"] == pytest.approx(0.9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_by_hand(9, 10))
    row = stat(table, "Accuracy vs the true summary: Bob")
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_by_hand(6, 8))
    overall = stat(table, "Accuracy vs the true summary: all annotators")
    assert overall["value"] == pytest.approx(15 / 18)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx(wilson_by_hand(15, 18))
    assert overall["items"] == 10 and overall["annotators"] == 2


def test_label_accuracy_against_gold_and_kappa(project, tmp_path):
    gold = ["a", "b", "a", "b", "a", "b"]
    ann = ["a", "b", "a", "a", "a", "b"]
    task = task_with_answers(project, tmp_path, "label", {"Ann": ann}, labels=["a", "b"], gold=gold)
    table = agreement_table(project, task)
    assert stat(table, "Accuracy vs gold: Ann")["value"] == pytest.approx(5 / 6)
    assert stat(table, "Cohen's kappa vs gold: Ann")["value"] == pytest.approx(kappa_by_hand(ann, gold))


def test_undefined_statistics_are_missing_with_a_note_not_zero(project, tmp_path):
    task = task_with_answers(project, tmp_path, "label", {"Ann": ["a", "a"], "Bob": ["a", "a"]}, labels=["a", "b"])
    table = agreement_table(project, task)
    alpha = stat(table, "Krippendorff's alpha (nominal)")
    assert pd.isna(alpha["value"]) and "same value" in alpha["note"]


# ---------------------------------------------------------------------------------------------- alpha's interval
def test_alpha_has_a_bootstrap_interval_around_it_that_the_seed_reproduces(project, tmp_path):
    ann = ["a", "a", "b", "c", "a", "b", "b", "c", "a", "b", "c", "a"]
    bob = ["a", "b", "b", "c", "a", "a", "b", "c", "a", "b", "c", "b"]
    task = task_with_answers(project, tmp_path, "label", {"Ann": ann, "Bob": bob}, labels=["a", "b", "c"])
    table = agreement_table(project, task)
    alpha = stat(table, "Krippendorff's alpha (nominal)")
    assert alpha["ci_low"] < alpha["value"] < alpha["ci_high"]
    assert alpha["ci_low"] >= -1 and alpha["ci_high"] <= 1
    assert "bootstrap over items, 1,000 draws, seed 0" in alpha["note"]
    again = stat(agreement_table(project, task), "Krippendorff's alpha (nominal)")
    assert (again["ci_low"], again["ci_high"]) == (alpha["ci_low"], alpha["ci_high"])
    other = stat(agreement_table(project, task, seed=11), "Krippendorff's alpha (nominal)")
    assert other["value"] == alpha["value"] and (other["ci_low"], other["ci_high"]) != (alpha["ci_low"], alpha["ci_high"])
    assert "seed 11" in other["note"]


def test_the_interval_is_the_percentiles_of_alpha_on_items_drawn_with_replacement(project, tmp_path):
    """The same interval computed here, draw by draw, with ``krippendorff`` on resampled items."""
    import krippendorff

    ann = ["5 min", "2 hours", "3 days", "1 week", "10 min", "1 year", "4 hours", "20 min"]
    bob = ["6 min", "3 hours", "1 day", "2 weeks", "40 min", "8 months", "5 hours", None]
    task = task_with_answers(project, tmp_path, "narrative-time", {"Ann": ann, "Bob": bob})
    row = stat(agreement_table(project, task, draws=300, seed=5), "Krippendorff's alpha (interval, log minutes)")
    from workbench.annotation.answers import annotations_frame

    answers = annotations_frame(project, task, answered_only=True)
    matrix = answers.assign(log=np.log(answers["minutes"])).pivot_table(index="annotator", columns="item_id",
                                                                       values="log", aggfunc="first")
    data = matrix.to_numpy()[:, (~np.isnan(matrix.to_numpy())).sum(axis=0) >= 2]  # items both answered
    rng = np.random.default_rng(5)
    draws = [krippendorff.alpha(reliability_data=data[:, rng.integers(0, data.shape[1], data.shape[1])],
                                level_of_measurement="interval") for _ in range(300)]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(np.percentile(draws, [2.5, 97.5])))
    assert row["ci_low"] <= row["value"] <= row["ci_high"]


@pytest.mark.parametrize("level", ["interval", "nominal"])
def test_the_shortcut_for_many_distinct_values_gives_the_packages_alpha_on_every_draw(level):
    import krippendorff

    from workbench.annotation.agreement import _alphas_from_sums

    rng = np.random.default_rng(3)
    values = 40 if level == "interval" else 4
    counts = np.zeros((60, values), dtype=int)
    for unit in counts:  # two to four answers per item, often the same value
        centre = rng.integers(0, values)
        for _ in range(rng.integers(2, 5)):
            unit[min(values - 1, max(0, centre + rng.integers(-1, 2)))] += 1
    domain = np.log(np.arange(1, values + 1) * 7.0) if level == "interval" else np.arange(values, dtype=float)
    picks = rng.integers(0, 60, size=(25, 60))
    expected = [krippendorff.alpha(value_counts=counts[rows], value_domain=domain, level_of_measurement=level)
                for rows in picks]
    assert _alphas_from_sums(counts, domain, level, picks) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_no_interval_where_it_cannot_be_computed(project, tmp_path):
    task = task_with_answers(project, tmp_path, "label", {"Ann": ["a", "b"], "Bob": ["a", None]}, labels=["a", "b"])
    table = agreement_table(project, task)
    alpha = stat(table, "Krippendorff's alpha (nominal)")
    assert pd.isna(alpha["ci_low"]) and pd.isna(alpha["ci_high"])
    assert table["ci_low"].dtype == float  # NaN, not None, in the table and its CSV
    assert "needs at least two items" in alpha["note"] or "same value" in alpha["note"]


def test_the_agreement_csv_carries_the_interval(project, tmp_path):
    from workbench.export.registry import export_table

    ann = ["a", "a", "b", "b", "a", "b", "a", "b"]
    bob = ["a", "b", "b", "b", "a", "b", "a", "a"]
    task = task_with_answers(project, tmp_path, "label", {"Ann": ann, "Bob": bob}, labels=["a", "b"])
    written = export_table(project, "annotation-agreement", tmp_path / "agreement.csv", task=task.name)
    frame = pd.read_csv(written)
    alpha = stat(frame, "Krippendorff's alpha (nominal)")
    expected = stat(agreement_table(project, task), "Krippendorff's alpha (nominal)")
    assert (alpha["ci_low"], alpha["ci_high"]) == pytest.approx((expected["ci_low"], expected["ci_high"]))
    assert pd.isna(stat(frame, "Cohen's kappa: Ann vs Bob")["p_value"])
