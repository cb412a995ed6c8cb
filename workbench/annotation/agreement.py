"""Agreement between annotators, and accuracy against a known truth.

- Krippendorff's alpha (``krippendorff``): interval level on log minutes for narrative time (spans are
  judged by order of magnitude), nominal for summary choices and labels. Items with one answer are
  ignored by the statistic itself. Its 95% CI is a percentile bootstrap over items: the items answered
  by two or more annotators are drawn with replacement (``BOOTSTRAP_DRAWS`` times, seeded by the task's
  seed, so the interval is the same every time), alpha is computed by ``krippendorff`` for each draw (with
  hundreds of distinct values, by the same formula on per-item sums, checked against it in a test), and
  the 2.5th and 97.5th percentiles of the draws are the interval. Draws where alpha is undefined (every
  answer the same) are left out and counted in the note.
- Cohen's kappa for two annotators (with its 95% CI), Fleiss' kappa for three or more, on the items every
  annotator answered (``statsmodels``).
- Spearman's rho between each pair of annotators for narrative time (``scipy``, through
  ``workbench.analysis.correlation``).
- Accuracy against the truth, per annotator and overall, with a 95% Wilson interval (``statsmodels``,
  through ``workbench.analysis.intervals``):
  summary validity (did they pick the true summary) and label tasks whose items carry a gold label.
- Name cloze: annotators type names, which annotation does not judge. The probe that owns the kind registers
  how an answer is marked right or wrong (``register_answer_marks``; the name cloze uses the scorer of the
  models' answers), and agreement is on those marks: Krippendorff's alpha (nominal, right/wrong) with its
  bootstrap interval, Cohen's or Fleiss' kappa as above, the raw share of passages answered by two or more
  annotators on which all of them agree (right or wrong alike), with its Wilson interval over those passages
  and their number, and each annotator's accuracy. Two people typing different wrong names agree (both wrong).

Every statistic comes with the number of items and annotators it used. A statistic that cannot be
computed (too few items, only one value) is reported as missing with a note, never as zero.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np
import pandas as pd

from workbench.analysis.correlation import spearman
from workbench.analysis.intervals import wilson_interval
from workbench.annotation.answers import annotations_frame
from workbench.annotation.items import list_items
from workbench.annotation.tasks import NAME_CLOZE, NARRATIVE_TIME, SUMMARY_VALIDITY, Task, get_task

if TYPE_CHECKING:
    from workbench.project import Project

AGREEMENT_COLUMNS = ["statistic", "value", "ci_low", "ci_high", "p_value", "items", "annotators", "note"]
NUMERIC_COLUMNS = ["value", "ci_low", "ci_high", "p_value"]
BOOTSTRAP_DRAWS = 1_000
# fewer defined draws than this share of all draws: the interval is not reported
MIN_DEFINED_SHARE = 0.5


#: annotation kind -> how its answers are marked right or wrong: ``(project, task) -> DataFrame`` of annotator,
#: item_id and correct (bool), one row per answer; registered by the part that owns the kind (``answer_marks``)
_ANSWER_MARKS: dict[str, Callable[["Project", Task], pd.DataFrame]] = {}


def register_answer_marks(kind: str, marks: Callable[["Project", Task], pd.DataFrame]) -> None:
    """Say how the answers of an annotation ``kind`` are marked right or wrong (see ``_ANSWER_MARKS``)."""
    _ANSWER_MARKS[kind] = marks


def answer_marks(kind: str) -> Callable[["Project", Task], pd.DataFrame]:
    """The registered marking of ``kind`` (the parts' ``answer_marks`` modules are loaded the first time)."""
    if kind not in _ANSWER_MARKS:
        from workbench import parts
        parts.load("answer_marks")
    return _ANSWER_MARKS[kind]


def _row(statistic: str, value: float | None, items: int, annotators: int, *, ci: tuple[float, float] | None = None,
         p_value: float | None = None, note: str = "") -> dict[str, Any]:
    return {"statistic": statistic, "value": value, "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
            "p_value": p_value, "items": items, "annotators": annotators, "note": note}


def reliability_matrix(answers: pd.DataFrame, column: str) -> pd.DataFrame:
    """Annotators x items, NaN where an annotator gave no answer."""
    return answers.pivot_table(index="annotator", columns="item_id", values=column, aggfunc="first")


def krippendorff_alpha(matrix: pd.DataFrame, level: str) -> tuple[float | None, int, str]:
    """Alpha with the number of items that have two or more answers (the ones alpha uses)."""
    import krippendorff

    pairable = int((matrix.notna().sum(axis=0) >= 2).sum())
    if matrix.shape[0] < 2 or pairable == 0:
        return None, pairable, "needs at least one item answered by two annotators"
    data = matrix.to_numpy(dtype=float)
    paired = data[:, (~np.isnan(data)).sum(axis=0) >= 2]  # the values alpha compares
    if len(np.unique(paired[~np.isnan(paired)])) < 2:
        return None, pairable, "undefined: every answer has the same value"
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level)), pairable, ""


def alpha_bootstrap(matrix: pd.DataFrame, level: str, *, draws: int = BOOTSTRAP_DRAWS,
                    seed: int | str = 0) -> tuple[tuple[float, float] | None, str]:
    """A 95% percentile-bootstrap interval for Krippendorff's alpha, resampling items with replacement.

    Only the items with two or more answers are drawn (the others never count in alpha), so every draw
    has as many usable items as the data. Each draw's alpha comes from ``krippendorff`` (the value
    counts per item are built once and their rows resampled). Returns the interval (None when it cannot
    be computed) and a note that says how it was made."""
    data = matrix.to_numpy(dtype=float)
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    if matrix.shape[0] < 2 or pairable.shape[1] < 2:
        return None, "no interval: needs at least two items answered by two annotators"
    domain = np.unique(pairable[~np.isnan(pairable)])
    if len(domain) < 2:
        return None, "no interval: every answer has the same value"
    # units x values: how many annotators gave each value to each item
    counts = np.stack([(pairable == value).sum(axis=0) for value in domain], axis=1)
    rng = np.random.default_rng(_seed_number(seed))
    picks = rng.integers(0, counts.shape[0], size=(draws, counts.shape[0]))
    values = _draw_alphas(counts, domain, level, picks)
    values = values[np.isfinite(values)]
    how = f"95% CI: bootstrap over items, {draws:,} draws, seed {seed}"
    left_out = draws - len(values)
    if len(values) < MIN_DEFINED_SHARE * draws:
        return None, (f"no interval: alpha was undefined in {left_out:,} of {draws:,} bootstrap draws "
                      "(too few items, or nearly every answer the same)")
    low, high = np.percentile(values, [2.5, 97.5])
    if left_out:
        how += f" ({left_out:,} draws with every answer the same left out)"
    return (float(low), float(high)), how


# ``krippendorff.alpha`` builds a units x values x values array; above this many cells per draw it gets
# slow (narrative-time answers can take hundreds of distinct values), and the draws use the same formula
# on the per-item sums instead (``_alphas_from_sums``; a test checks both agree on every draw).
PACKAGE_CELLS_PER_DRAW = 200_000


def _draw_alphas(counts: np.ndarray, domain: np.ndarray, level: str, picks: np.ndarray) -> np.ndarray:
    """Alpha of each draw (a row of ``picks``: the resampled rows of ``counts``); NaN where undefined."""
    import krippendorff

    if counts.shape[0] * len(domain) ** 2 <= PACKAGE_CELLS_PER_DRAW:
        out = np.empty(len(picks))
        with np.errstate(divide="ignore", invalid="ignore"):
            for k, rows in enumerate(picks):
                out[k] = krippendorff.alpha(value_counts=counts[rows], value_domain=domain, level_of_measurement=level)
        return out
    return _alphas_from_sums(counts, domain, level, picks)


def _alphas_from_sums(counts: np.ndarray, domain: np.ndarray, level: str, picks: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha = 1 - D_o / D_e for many draws at once, in the form ``krippendorff`` computes
    it: D_o sums each item's c'Dc / (m - 1) (c: the item's value counts, m: its answers, D: squared
    differences for interval, 0/1 for nominal); D_e is n'Dn / (n_total - 1) over all pairable values n.
    Each term is a sum over items, so a draw only needs how often it picked each item."""
    if level not in ("interval", "nominal"):
        raise ValueError(f"no shortcut for level {level!r}")
    counts = counts.astype(float)
    m = counts.sum(axis=1)
    if level == "interval":
        s1, s2 = counts @ domain, counts @ domain**2
        within = 2 * (m * s2 - s1**2) / (np.maximum(m, 2) - 1)
    else:
        within = (m**2 - (counts**2).sum(axis=1)) / (np.maximum(m, 2) - 1)
    out = np.empty(len(picks))
    for start in range(0, len(picks), 100):
        chunk = picks[start : start + 100]
        times = np.stack([np.bincount(rows, minlength=len(m)) for rows in chunk]).astype(float)
        observed = times @ within
        n = times @ m
        if level == "interval":
            spread = 2 * (n * (times @ s2) - (times @ s1) ** 2)
        else:
            spread = n**2 - ((times @ counts) ** 2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start : start + len(chunk)] = 1 - observed / (spread / (n - 1))
    return out


def _seed_number(seed: int | str) -> int:
    """numpy wants a non-negative integer; any task seed (or text) maps to one, the same every time."""
    if isinstance(seed, (int, np.integer)) and seed >= 0:
        return int(seed)
    import hashlib

    return int.from_bytes(hashlib.sha256(str(seed).encode("utf-8")).digest()[:8], "big")


def _alpha_row(matrix: pd.DataFrame, level: str, statistic: str, annotators: int, draws: int,
               seed: int | str) -> dict[str, Any]:
    alpha, used, note = krippendorff_alpha(matrix, level)
    if alpha is None:
        return _row(statistic, None, used, annotators, note=note)
    ci, how = alpha_bootstrap(matrix, level, draws=draws, seed=seed) if draws > 0 else (None, "")
    return _row(statistic, alpha, used, annotators, ci=ci, note=how)


def cohen(a: pd.Series, b: pd.Series, categories: list[Any]) -> tuple[float | None, tuple[float, float] | None, int, str]:
    """Cohen's kappa between two aligned series (NaN rows dropped) with its 95% CI.

    Every item both answered counts: an answer outside ``categories`` (a judge's "unparsed", say) is a
    category of its own, never dropped from the table (the note says so)."""
    from statsmodels.stats.inter_rater import cohens_kappa

    both = pd.DataFrame({"a": a, "b": b}).dropna()
    n = len(both)
    if n < 2:
        return None, None, n, "needs at least two items answered by both"
    known = set(categories)
    extra = sorted({v for v in (*both["a"], *both["b"]) if v not in known}, key=str)
    categories = [*categories, *extra]
    table = pd.crosstab(pd.Categorical(both["a"], categories), pd.Categorical(both["b"], categories), dropna=False)
    expected = (table.sum(axis=0).to_numpy() * table.sum(axis=1).to_numpy()).sum() / n**2
    if math.isclose(expected, 1.0):
        return None, None, n, "undefined: both gave the same single answer throughout"
    with np.errstate(invalid="ignore"):  # a constant rater has no variance: the CI is simply missing
        result = cohens_kappa(table.to_numpy())
    low, high = float(result.kappa_low), float(result.kappa_upp)
    ci = None if math.isnan(low) or math.isnan(high) else (max(low, -1.0), min(high, 1.0))
    note = (f"answers outside the labels kept as categories of their own: {', '.join(str(e) for e in extra)}"
            if extra else "")
    return float(result.kappa), ci, n, note


def fleiss(matrix: pd.DataFrame) -> tuple[float | None, int, str]:
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    complete = matrix.dropna(axis=1)
    if complete.shape[1] < 2:
        return None, complete.shape[1], "needs at least two items answered by every annotator"
    counts, _ = aggregate_raters(complete.T.to_numpy())
    if counts.shape[1] < 2:
        return None, complete.shape[1], "undefined: every answer has the same value"
    return float(fleiss_kappa(counts, method="fleiss")), complete.shape[1], ""


def _nominal_rows(answers: pd.DataFrame, categories: list[str], draws: int, seed: int | str) -> list[dict[str, Any]]:
    codes = {value: k for k, value in enumerate(categories)}
    coded = answers.assign(code=answers["value"].map(codes))
    matrix = reliability_matrix(coded, "code")
    annotators = matrix.shape[0]
    rows = [_alpha_row(matrix, "nominal", "Krippendorff's alpha (nominal)", annotators, draws, seed)]
    if annotators == 2:
        a, b = matrix.index
        kappa, ci, n, note = cohen(matrix.loc[a], matrix.loc[b], list(range(len(categories))))
        rows.append(_row(f"Cohen's kappa: {a} vs {b}", kappa, n, 2, ci=ci, note=note))
    elif annotators > 2:
        kappa, n, note = fleiss(matrix)
        rows.append(_row("Fleiss' kappa", kappa, n, annotators, note=note or "items answered by every annotator"))
    return rows


def percent_agreement(matrix: pd.DataFrame) -> tuple[int, int]:
    """Of the items (columns) answered by two or more annotators, how many, and on how many all gave one value."""
    shared = matrix.loc[:, matrix.notna().sum(axis=0) >= 2]
    agreed = int((shared.nunique(axis=0, dropna=True) == 1).sum())
    return agreed, shared.shape[1]


def _marked_rows(marks: pd.DataFrame, draws: int, seed: int | str) -> list[dict[str, Any]]:
    """Agreement on right/wrong marks (``marks``: annotator, item_id, correct): alpha, kappa, the raw share of
    shared items on which everyone agrees, and each annotator's accuracy."""
    if marks.empty:
        return []
    coded = marks.assign(value=np.where(marks["correct"].astype(bool), "right", "wrong"))
    rows = _nominal_rows(coded, ["right", "wrong"], draws, seed)
    rows[0]["statistic"] = "Krippendorff's alpha (nominal, right or wrong)"
    matrix = reliability_matrix(coded.assign(code=coded["correct"].astype(float)), "code")
    agreed, shared = percent_agreement(matrix)
    if shared:
        rows.insert(1, _row("Percent agreement (right or wrong)", agreed / shared, shared, matrix.shape[0],
                            ci=wilson_interval(agreed, shared),
                            note=f"all annotators agree on {agreed} of the {shared} passages answered by two or more "
                                 "(Wilson interval over passages)"))
    else:
        rows.insert(1, _row("Percent agreement (right or wrong)", None, 0, matrix.shape[0],
                            note="needs at least one passage answered by two annotators"))
    accuracy = [r for r in _accuracy_rows(coded, "the hidden name") if not r["statistic"].endswith("all annotators")]
    return rows + accuracy


def _narrative_time_rows(answers: pd.DataFrame, draws: int, seed: int | str) -> list[dict[str, Any]]:
    logged = answers.assign(log_minutes=np.log(answers["minutes"].astype(float)))
    matrix = reliability_matrix(logged, "log_minutes")
    annotators = matrix.shape[0]
    rows = [_alpha_row(matrix, "interval", "Krippendorff's alpha (interval, log minutes)", annotators, draws, seed)]
    for a, b in itertools.combinations(matrix.index, 2):
        both = matrix.loc[[a, b]].T.dropna()
        if len(both) < 3:
            rows.append(_row(f"Spearman's rho: {a} vs {b}", None, len(both), 2, note="needs at least three shared items"))
            continue
        if both[a].nunique() < 2 or both[b].nunique() < 2:
            rows.append(_row(f"Spearman's rho: {a} vs {b}", None, len(both), 2, note="undefined: constant answers"))
            continue
        result = spearman(both[a], both[b], resamples=0)
        rows.append(_row(f"Spearman's rho: {a} vs {b}", result.rho, len(both), 2, p_value=result.p_value))
    return rows


def _accuracy_rows(correct: pd.DataFrame, against: str) -> list[dict[str, Any]]:
    """``correct``: columns annotator, item_id, correct (bool)."""
    rows = []
    for annotator, group in correct.groupby("annotator", sort=True):
        k, n = int(group["correct"].sum()), len(group)
        rows.append(_row(f"Accuracy vs {against}: {annotator}", k / n, n, 1, ci=wilson_interval(k, n),
                         note=f"{k} of {n} correct"))
    if rows:
        k, n = int(correct["correct"].sum()), len(correct)
        items = correct["item_id"].nunique()
        rows.append(_row(f"Accuracy vs {against}: all annotators", k / n, items, correct["annotator"].nunique(),
                         ci=wilson_interval(k, n),
                         note=f"{k} of {n} answers correct (Wilson interval treats answers as independent)"))
    return rows


def agreement_table(project: "Project", task: "Task | str | int", *, draws: int = BOOTSTRAP_DRAWS,
                    seed: int | None = None) -> pd.DataFrame:
    """One row per statistic: name, value, 95% CI where there is one (NaN where not), p-value, items and
    annotators used. ``draws``: bootstrap draws for alpha's interval (0: none); ``seed``: the task's
    unless given."""
    task = get_task(project, task)
    seed = task.seed if seed is None else seed
    answers = annotations_frame(project, task, answered_only=True)
    rows: list[dict[str, Any]] = []
    if answers.empty:
        return _frame(rows)
    if task.kind == NAME_CLOZE:
        return _frame(_marked_rows(answer_marks(task.kind)(project, task), draws, seed))
    if task.kind == NARRATIVE_TIME:
        rows += _narrative_time_rows(answers, draws, seed)
    else:
        rows += _nominal_rows(answers, list(task.choices), draws, seed)
    if task.kind == SUMMARY_VALIDITY:
        rows += _accuracy_rows(answers.assign(correct=answers["value"] == "true"), "the true summary")
    else:
        gold = {item.item_key: item.gold for item in list_items(project, task) if item.gold not in (None, "")}
        if gold:
            rows += reference_rows(answers, gold, "gold", task)
    return _frame(rows)


def why_no_agreement(project: "Project", task: "Task | str | int") -> str:
    """Why ``agreement_table`` has no rows for the task, and what it needs."""
    task = get_task(project, task)
    answers = annotations_frame(project, task, answered_only=True)
    if answers.empty:
        return (f"No one has answered the items of '{task.name}' yet. Agreement needs at least two annotators who "
                "answered the same items: start sessions on the Annotate page (or import answers with "
                "palimpsest annotate import).")
    people = answers["annotator"].nunique()
    return (f"Only {people} annotator answered '{task.name}' so far; agreement needs at least two annotators who "
            "answered the same items.")


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
    frame[NUMERIC_COLUMNS] = frame[NUMERIC_COLUMNS].astype(float)  # missing values are NaN, not None
    return frame


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def reference_rows(answers: pd.DataFrame, reference: Mapping[str, Any], name: str, task: Task) -> list[dict[str, Any]]:
    """Accuracy (Wilson CI) and Cohen's kappa of each annotator against reference answers (item_id -> value),
    e.g. gold labels or an LLM judge's labels. Narrative time: Spearman's rho against reference minutes.

    Items whose reference is missing (None, NaN, empty) are not compared. A reference answer that is not
    one of the task's labels (a judge's "unparsed") is compared like any other: it counts as wrong in
    the accuracy and is a category of its own in kappa (both notes say so), so accuracy and kappa are
    computed on the same items."""
    given = {item: value for item, value in reference.items() if not _missing(value)}  # no reference answer: not compared
    known = answers[answers["item_id"].isin(list(given))]
    if known.empty:
        return []
    ref = known["item_id"].map(given)
    if task.kind == NARRATIVE_TIME:
        rows = []
        for annotator, group in known.assign(ref=ref.astype(float)).groupby("annotator", sort=True):
            if len(group) < 3:
                rows.append(_row(f"Spearman's rho vs {name}: {annotator}", None, len(group), 1, note="needs three items"))
                continue
            if group["minutes"].nunique() < 2 or group["ref"].nunique() < 2:
                rows.append(_row(f"Spearman's rho vs {name}: {annotator}", None, len(group), 1,
                                 note="undefined: constant answers"))
                continue
            result = spearman(group["minutes"], group["ref"], resamples=0)
            rows.append(_row(f"Spearman's rho vs {name}: {annotator}", result.rho, len(group), 1,
                             p_value=result.p_value))
        return rows
    lowered = {c.lower(): c for c in task.choices}
    ref = ref.map(lambda v: lowered.get(str(v).strip().lower(), v))
    rows = _accuracy_rows(known.assign(correct=known["value"] == ref), name)
    outside = int((~ref.isin(list(task.choices))).sum()) if task.choices else 0
    if outside:  # e.g. a judge's "unparsed": it never matches a person's label
        for row in rows:
            row["note"] += f"; {outside} {name} answer(s) not among the labels (e.g. unparsed) count as wrong"
    categories = list(task.choices) or sorted(set(known["value"]) | set(ref))
    for annotator, group in known.assign(ref=ref).groupby("annotator", sort=True):
        kappa, ci, n, note = cohen(group["value"].reset_index(drop=True), group["ref"].reset_index(drop=True), categories)
        rows.append(_row(f"Cohen's kappa vs {name}: {annotator}", kappa, n, 1, ci=ci, note=note))
    return rows
