"""How many answers the parsers could read, per group compared, and every answer they could not.

A scholar reading a validity table needs to know that the parser read the answers it counts, and read
them alike in the groups it compares: a phrasing read as missing in one group more than in the other
biases the comparison as surely as the model does. So every analysis reports, per group (top, bottom,
all), over the answers it counts (books with a true year; passages with a reference):

- ``answers``: answers the model gave (failed calls are not answers);
- ``parsed``, ``parse_rate``: those with a value, and their share, with a 95% interval: the Wilson
  interval when each book has one answer (the answers are then independent), otherwise a percentile
  bootstrap that draws whole books (answers about one book are not independent), seeded;
- ``approximate``: values the parser made from a span or a vague word (a range's, decade's or
  century's midpoint; "a few" = 3; a bound), flagged per answer in ``flag``;
- ``declined``: answers without a value because the model declined;

and on the ``difference`` row, top minus bottom of the parse rate, with Fisher's exact test when each
book has one answer. ``unparsed_answers`` lists every counted answer without a value: its book, group,
passage, raw answer and the reason.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES, percentile_bootstrap, wilson_interval
from workbench.probes.validity import YEAR
from workbench.probes.validity.parsers import DEFAULT_SPANS, YEAR_RANGE

if TYPE_CHECKING:
    from workbench.project import Project

DECLINED = "declined to answer"
PARSE_COLUMNS = ["answers", "parsed", "parse_rate", "parse_ci_low", "parse_ci_high", "approximate", "declined"]
COUNT_COLUMNS = ["book_id", "answers", "parsed", "approximate", "declined"]
UNPARSED_COLUMNS = ["group", "book_id", "book", "passage_id", "raw", "reason", "model", "run_id", "status", "value",
                    "read", "flag", "truth_year", "reference_minutes", "passage"]


def book_counts(answers: pd.DataFrame, value: str = "value") -> pd.DataFrame:
    """Per book: how many of ``answers`` (rows with ``book_id``, ``value``, ``flag``, ``reason``) there are,
    how many have a value, how many of those are approximate, and how many the model declined."""
    if answers.empty:
        return pd.DataFrame(columns=COUNT_COLUMNS)
    parsed = answers[value].notna()
    frame = pd.DataFrame({"book_id": answers["book_id"], "answers": 1, "parsed": parsed.astype(int),
                          "approximate": (parsed & (answers["flag"].fillna("") != "")).astype(int),
                          "declined": (answers["reason"] == DECLINED).astype(int)})
    return frame.groupby("book_id", sort=False, as_index=False).sum()[COUNT_COLUMNS]


def _ratio(parsed: np.ndarray, answers: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.sum(parsed, axis=axis) / np.sum(answers, axis=axis)


def parse_row(counts: pd.DataFrame, *, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES) -> dict:
    """The parse columns of one group, from its books' counts (``book_counts``, or a per-book table with
    the same columns)."""
    answers, parsed = int(counts["answers"].sum()), int(counts["parsed"].sum())
    row = {"answers": answers, "parsed": parsed, "approximate": int(counts["approximate"].sum()),
           "declined": int(counts["declined"].sum()), "parse_rate": parsed / answers if answers else math.nan,
           "parse_ci_low": math.nan, "parse_ci_high": math.nan}
    if not answers:
        return row
    if (counts["answers"] <= 1).all() or len(counts) < 2 or parsed in (0, answers):
        row["parse_ci_low"], row["parse_ci_high"] = wilson_interval(parsed, answers)
    else:
        low, high, _ = percentile_bootstrap((counts["parsed"].to_numpy(float), counts["answers"].to_numpy(float)),
                                            _ratio, paired=True, resamples=resamples, seed=seed)
        row["parse_ci_low"], row["parse_ci_high"] = low, high
    return row


def parse_difference(top: pd.DataFrame, bottom: pd.DataFrame) -> tuple[dict, str]:
    """Top minus bottom of the parse rate, with Fisher's exact test when every book has one answer; and the
    words for the difference row's note."""
    from scipy.stats import fisher_exact

    a, b = parse_row(top, resamples=0), parse_row(bottom, resamples=0)
    row = {"parse_rate": a["parse_rate"] - b["parse_rate"], "parse_p_value": math.nan}
    if not (a["answers"] and b["answers"]):
        return row, ""
    if (top["answers"] <= 1).all() and (bottom["answers"] <= 1).all():
        table = [[a["parsed"], a["answers"] - a["parsed"]], [b["parsed"], b["answers"] - b["parsed"]]]
        row["parse_p_value"] = float(fisher_exact(table).pvalue)
        return row, "parse rate: Fisher's exact test"
    return row, "parse rate: no test (several answers per book)"


def parse_summary(table: pd.DataFrame) -> str:
    """One sentence on the parse rate per group, from an analysis table with the parse columns."""
    rows = table.set_index("group")
    parts = []
    for group in ("all", "top", "bottom"):
        if group not in rows.index or not rows.loc[group, "answers"]:
            continue
        row = rows.loc[group]
        text = (f"{group} {row['parse_rate']:.0%} ({int(row['parsed'])} of {int(row['answers'])}, 95% CI "
                f"{row['parse_ci_low']:.0%}–{row['parse_ci_high']:.0%})")
        parts.append(text)
    if not parts:
        return "No answers to read."
    every = rows.loc["all"] if "all" in rows.index else None
    unread = int(every["answers"] - every["parsed"]) if every is not None else 0
    text = "Answers read: " + "; ".join(parts) + "."
    if every is not None:
        details = []
        if int(every["declined"]):
            details.append(f"{int(every['declined'])} declined by the model")
        if unread - int(every["declined"]):
            details.append(f"{unread - int(every['declined'])} without a value for another reason")
        if int(every["approximate"]):
            details.append(f"{int(every['approximate'])} value(s) read from a span or a vague word (flagged)")
        if details:
            joined = "; ".join(details)
            text += " " + joined[0].upper() + joined[1:] + "."
    if "spans" in rows.columns and isinstance(rows["spans"].iloc[0], str):
        from workbench.probes.validity.parsers import SPAN_RULE_TEXT

        text += f" Spans of years: '{rows['spans'].iloc[0]}' ({SPAN_RULE_TEXT[rows['spans'].iloc[0]]})."
    return text


def spread_summary(spread: pd.DataFrame, chosen: str) -> str:
    """One sentence on how the other rules for spans of years move the headline numbers (``year_span_spread``)."""
    others = []
    for row in spread.itertuples(index=False):
        if row.spans == chosen:
            continue
        rho = "no \u03c1" if math.isnan(row.spearman_rho) else f"\u03c1 {row.spearman_rho:.3f}"
        mae = "" if math.isnan(row.mae) else f", MAE {row.mae:.1f} years"
        others.append(f"'{row.spans}': missing {row.missing_share:.0%}{mae}, {rho}")
    return ("Under the other rules for spans: " + "; ".join(others) + ".") if others else ""


def unparsed_answers(project: "Project", task: str, model: str, by: str, *, groups: str = "decile",
                     reference: str | None = None, year_range: tuple[int, int] = YEAR_RANGE,
                     spans: str = DEFAULT_SPANS) -> pd.DataFrame:
    """Every answer the analysis of ``task`` counts that has no value: for the year, answers about books
    with a true year; for narrative time, answers about passages with a ``reference``. Ordered by group
    (top, bottom, the rest), then book and passage."""
    from workbench.errors import UserError
    from workbench.probes.validity.answers import task_answers
    from workbench.probes.validity.groups import BOTTOM, MIDDLE, TOP, memorization_groups, with_groups
    from workbench.probes.validity.references import reference_minutes
    from workbench.probes.validity.run import check_task

    check_task(task)
    answers = task_answers(project, task, model, year_range=year_range, spans=spans)
    answers = answers[answers["status"] == "ok"]
    if task == YEAR:
        answers = answers[answers["truth_year"].notna()].assign(reference_minutes=math.nan)
    else:
        if not reference:
            raise UserError("Say which reference narrative time the analysis uses: 'imported' or an annotation task.")
        answers = answers.merge(reference_minutes(project, reference)[["passage_id", "reference_minutes"]],
                                on="passage_id")
    frame = with_groups(answers[answers["value"].isna()], memorization_groups(project, by, groups))
    order = {TOP: 0, BOTTOM: 1, MIDDLE: 2, "": 3}
    frame = frame.assign(_order=frame["group"].map(order)).sort_values(["_order", "book", "passage_id"],
                                                                       kind="stable")
    return frame.reset_index(drop=True)[UNPARSED_COLUMNS]

