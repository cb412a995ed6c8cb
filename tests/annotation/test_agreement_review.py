"""The statistics review of agreement: judge answers outside the labels, missing reference answers, and the
per-item-sum shortcut for alpha's bootstrap checked against ``krippendorff`` on data with gaps."""

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.annotation_data import write_csv
from tests.fixtures.by_hand import kappa_by_hand, wilson_by_hand
from workbench.annotation.agreement import cohen
from workbench.annotation.annotation_import import import_annotations
from workbench.annotation.labelling import compare_with_reference, create_label_task

ITEMS = [f"r{k}" for k in range(1, 9)]
ANN = ["woman", "man", "man", "woman", "unclear", "man", "woman", "man"]
JUDGE = ["woman", "man", "unparsed", "woman", "unclear", "woman", "unparsed", "man"]


def _task(project, tmp_path):
    task = create_label_task(project, "judge check", ["woman", "man", "unclear"],
                             [{"key": k, "text": f"completion {k}"} for k in ITEMS], seed=1)
    rows = [["Ann", k, v] for k, v in zip(ITEMS, ANN)]
    import_annotations(project, task, write_csv(tmp_path / "a.csv", ["annotator", "item_id", "value"], rows))
    return task


def test_an_unparsed_judge_answer_is_in_kappa_as_well_as_in_accuracy(project, tmp_path):
    """Accuracy counted the two 'unparsed' items as wrong; kappa silently dropped them (6 items, not 8)."""
    task = _task(project, tmp_path)
    table = compare_with_reference(project, task, dict(zip(ITEMS, JUDGE)), name="judge").set_index("statistic")
    accuracy = table.loc["Accuracy vs judge: Ann"]
    assert accuracy["value"] == pytest.approx(5 / 8) and accuracy["items"] == 8
    assert (accuracy["ci_low"], accuracy["ci_high"]) == pytest.approx(wilson_by_hand(5, 8))
    assert "2 judge answer(s) not among the labels" in accuracy["note"]
    kappa = table.loc["Cohen's kappa vs judge: Ann"]
    assert kappa["items"] == 8
    assert kappa["value"] == pytest.approx(kappa_by_hand(ANN, JUDGE))  # all eight items, unparsed a category
    assert "unparsed" in kappa["note"]


def test_kappa_matches_statsmodels_on_the_full_table_whatever_the_categories():
    from statsmodels.stats.inter_rater import cohens_kappa, to_table

    a = pd.Series(["man", "woman", "man", "woman", "man", "man", "woman", "woman"])
    b = pd.Series(["man", "woman", "unparsed", "woman", "woman", "man", "unparsed", "man"])
    kappa, ci, n, note = cohen(a, b, ["man", "woman"])
    codes = {"man": 0, "woman": 1, "unparsed": 2}
    full = cohens_kappa(to_table(np.column_stack([a.map(codes), b.map(codes)]), bins=3)[0])
    assert n == 8 and kappa == pytest.approx(full.kappa)
    assert ci == pytest.approx((max(-1, full.kappa_low), min(1, full.kappa_upp)))


def test_items_without_a_reference_answer_are_not_compared(project, tmp_path):
    """Before: a missing judge answer counted as a wrong answer in accuracy but was left out of kappa."""
    task = _task(project, tmp_path)
    reference = dict(zip(ITEMS, JUDGE))
    reference["r3"] = None
    reference["r7"] = float("nan")
    table = compare_with_reference(project, task, reference, name="judge").set_index("statistic")
    accuracy = table.loc["Accuracy vs judge: Ann"]
    assert accuracy["items"] == 6 and accuracy["value"] == pytest.approx(5 / 6)
    kappa = table.loc["Cohen's kappa vs judge: Ann"]
    keep = [k for k in range(8) if k not in (2, 6)]
    assert kappa["items"] == 6
    assert kappa["value"] == pytest.approx(kappa_by_hand([ANN[k] for k in keep], [JUDGE[k] for k in keep]))


@pytest.mark.parametrize("level", ["interval", "nominal"])
def test_alpha_bootstrap_shortcut_equals_krippendorff_on_every_draw_with_missing_answers(level, monkeypatch):
    """Random annotators x items data with gaps: each draw's alpha by the per-item-sum formula equals
    ``krippendorff.alpha`` on the same resampled columns of the reliability matrix."""
    import krippendorff

    from workbench.annotation import agreement

    rng = np.random.default_rng(11 if level == "interval" else 12)
    for trial in range(6):
        raters, items = int(rng.integers(2, 6)), int(rng.integers(6, 60))
        if level == "interval":
            data = np.round(rng.normal(4, 2, (raters, items)), 1)
        else:
            data = rng.integers(0, int(rng.integers(2, 6)), (raters, items)).astype(float)
        data[rng.random((raters, items)) < 0.35] = np.nan
        matrix = pd.DataFrame(data)
        pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
        if pairable.shape[1] < 2 or len(np.unique(pairable[~np.isnan(pairable)])) < 2:
            continue
        domain = np.unique(pairable[~np.isnan(pairable)])
        counts = np.stack([(pairable == v).sum(axis=0) for v in domain], axis=1)
        picks = rng.integers(0, counts.shape[0], size=(40, counts.shape[0]))
        fast = agreement._alphas_from_sums(counts, domain, level, picks)
        with np.errstate(divide="ignore", invalid="ignore"):
            slow = np.array([krippendorff.alpha(reliability_data=pairable[:, rows], level_of_measurement=level)
                             if len(np.unique(pairable[:, rows][~np.isnan(pairable[:, rows])])) > 1 else np.nan
                             for rows in picks])
        assert np.array_equal(np.isnan(fast), np.isnan(slow))
        assert fast[~np.isnan(fast)] == pytest.approx(slow[~np.isnan(slow)], rel=1e-9, abs=1e-12)
        # and the interval is the same whichever way the draws are computed
        monkeypatch.setattr(agreement, "PACKAGE_CELLS_PER_DRAW", 0)
        by_sums = agreement.alpha_bootstrap(matrix, level, draws=200, seed=trial)
        monkeypatch.setattr(agreement, "PACKAGE_CELLS_PER_DRAW", 10**12)
        by_package = agreement.alpha_bootstrap(matrix, level, draws=200, seed=trial)
        assert by_sums[1] == by_package[1]
        if by_package[0] is not None:
            assert by_sums[0] == pytest.approx(by_package[0], rel=1e-9, abs=1e-12)
