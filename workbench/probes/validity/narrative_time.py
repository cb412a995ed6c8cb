"""The narrative-time analysis: are a model's estimates of story time better for books it knows?

Per passage (``narrative_items``): the grouping model's accuracy and group for the passage's book, the
reference minutes (``references``), the model's answer and the minutes it commits to.

Per group (``narrative_table``), for ``top``, ``bottom`` and ``all`` passages: ``items`` (passages with a
reference and a prediction), ``missing`` (answered passages without a prediction), Spearman's rho between
predicted and reference minutes with its p-value and a 95% percentile bootstrap interval over the pairs
(``workbench.analysis.correlation``; rho is rank-based, so the log scale changes nothing); the
``difference`` row is top minus bottom with a bootstrap interval that draws each group's pairs on its
own. Groups with fewer than ``SMALL_GROUP`` items are flagged in ``note``: their intervals are wide and
their rho unstable. Books tied at a cut are treated by the tie rule ``ties`` (``groups``), as in the year
analysis and the error analysis: all of them in (the default; the top and bottom row's note says how many and
how large the group became), or drawn at random over ``draws`` seeded draws, when the table is the median
draw's (by the top - bottom difference in rho) and ``spearman_rho_p5`` / ``spearman_rho_p95`` give the 5th and
95th percentile of each row's rho over the draws (under ``all`` they equal ``spearman_rho``).
``tied_at_cut`` per passage marks the books from such a tie. Each row also says how many of the group's answers
the parser read (``answers``, ``parsed``, ``parse_rate`` with a 95% interval, ``approximate``,
``declined``; on the difference row, top minus bottom and ``parse_p_value``):
``workbench.probes.validity.parse_rate``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from workbench.analysis.correlation import spearman, spearman_difference
from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES
from workbench.errors import UserError
from workbench.probes.validity import NARRATIVE_TIME
from workbench.probes.validity.answers import task_answers
from workbench.probes.validity.groups import (
    ALL,
    ALL_TIED,
    BOTTOM,
    DEFAULT_DRAWS,
    DIFFERENCE,
    MIDDLE,
    SMALL_GROUP,
    TOP,
    group_cuts,
    memorization_groups,
    over_draws,
    spread_note,
    tie_notes,
    with_groups,
)
from workbench.probes.validity.parse_rate import PARSE_COLUMNS, book_counts, parse_difference, parse_row
from workbench.probes.validity.references import reference_minutes

if TYPE_CHECKING:
    from workbench.project import Project

ITEM_COLUMNS = ["passage_id", "book_id", "book", "group", "accuracy", "reference_minutes", "source", "answer",
                "predicted_minutes", "reason", "tied_at_cut", "flag"]
TABLE_COLUMNS = ["group", "items", "spearman_rho", "ci_low", "ci_high", "p_value", "missing", "model", "by", "groups",
                 "reference", "note", *PARSE_COLUMNS, "parse_p_value", "tie_rule", "draws", "spearman_rho_p5",
                 "spearman_rho_p95"]


def narrative_items(project: "Project", model: str, by: str, reference: str, *, groups: str = "decile",
                    save_groups: bool = False, ties: str = ALL_TIED, seed: int = 0) -> pd.DataFrame:
    """One row per answered passage that has a reference (see the module docstring)."""
    answers = task_answers(project, NARRATIVE_TIME, model)
    answers = answers[answers["status"] == "ok"]
    if answers.empty:
        raise UserError(f"'{model}' has no answers to the narrative-time task yet: run it, or import its answers.")
    references = reference_minutes(project, reference)
    grouping = memorization_groups(project, by, groups, save=save_groups, ties=ties, seed=seed)
    frame = with_groups(answers.merge(references, on="passage_id"), grouping)
    frame = frame.rename(columns={"raw": "answer", "value": "predicted_minutes"})
    return _ordered(frame)


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    order = {TOP: 0, MIDDLE: 1, "": 2, BOTTOM: 3}
    frame = frame.assign(_order=frame["group"].map(order)).sort_values(
        ["_order", "accuracy", "book", "passage_id"], ascending=[True, False, True, True], kind="stable")
    return frame.drop(columns="_order").reset_index(drop=True)[ITEM_COLUMNS]


def _row(name: str, items: pd.DataFrame, seed: int, resamples: int) -> dict:
    scored = items.dropna(subset=["predicted_minutes"])
    result = spearman(scored["predicted_minutes"], scored["reference_minutes"], seed=seed, resamples=resamples)
    notes = []
    if len(scored) < SMALL_GROUP:
        notes.append(f"small group: {len(scored)} item{'s' if len(scored) != 1 else ''}")
    if math.isnan(result.rho) and len(scored):
        notes.append("no rho (fewer than 3 items, or every value the same)")
    return {"group": name, "items": len(scored), "spearman_rho": result.rho, "ci_low": result.ci_low,
            "ci_high": result.ci_high, "p_value": result.p_value, "missing": int(items["predicted_minutes"].isna().sum()),
            "note": "; ".join(notes)}


def _rho_by_group(items: pd.DataFrame) -> dict[str, float]:
    """Spearman's rho of the top and bottom passages and their difference (what a tie draw moves)."""
    values = {}
    for group in (TOP, BOTTOM):
        scored = items[items["group"] == group].dropna(subset=["predicted_minutes"])
        values[group] = spearman(scored["predicted_minutes"], scored["reference_minutes"], resamples=0).rho
    values[DIFFERENCE] = values[TOP] - values[BOTTOM]
    return values


def narrative_table(project: "Project", model: str, by: str, reference: str, *, groups: str = "decile",
                    seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES, save_groups: bool = False,
                    items: pd.DataFrame | None = None, ties: str = ALL_TIED, draws: int = DEFAULT_DRAWS) -> pd.DataFrame:
    """Spearman's rho per group and the top - bottom difference (see the module docstring). ``items``: the
    per-passage table when the caller has it already (``narrative_items`` with the same choices)."""
    return narrative_results(project, model, by, reference, groups=groups, seed=seed, resamples=resamples,
                             save_groups=save_groups, items=items, ties=ties, draws=draws)[1]


def narrative_results(project: "Project", model: str, by: str, reference: str, *, groups: str = "decile",
                      seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES, save_groups: bool = False,
                      items: pd.DataFrame | None = None, ties: str = ALL_TIED,
                      draws: int = DEFAULT_DRAWS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-passage table grouped as the table reports it (under ``draw``: the median draw) and the table."""
    cuts = group_cuts(project, by, groups, ties, seed=seed, draws=draws)
    if items is None:
        items = narrative_items(project, model, by, reference, groups=groups, save_groups=save_groups, ties=ties,
                                seed=seed)
    items, spread = over_draws(items, cuts, _rho_by_group)
    items = _ordered(items)
    top, bottom = items[items["group"] == TOP], items[items["group"] == BOTTOM]
    rows = [_row(TOP, top, seed, resamples), _row(BOTTOM, bottom, seed, resamples), _row(ALL, items, seed, resamples)]
    rough = bool(rows[0]["note"] or rows[1]["note"])  # before the notes about ties join them
    for row, tied in zip(rows, tie_notes(cuts).values()):
        row["note"] = "; ".join(filter(None, [row["note"], tied]))
    a, b = (part.dropna(subset=["predicted_minutes"]) for part in (top, bottom))
    difference = spearman_difference(a["predicted_minutes"], a["reference_minutes"], b["predicted_minutes"],
                                     b["reference_minutes"], seed=seed, resamples=resamples)
    note = "top minus bottom; bootstrap interval drawing each group on its own"
    if rough:
        note += "; a small group makes it rough"
    counts = [book_counts(part, "predicted_minutes") for part in (top, bottom, items)]
    for row, count in zip(rows, counts):
        row.update(parse_row(count, seed=seed, resamples=resamples))
    parsing, tested = parse_difference(counts[0], counts[1])
    rows.append({"group": DIFFERENCE, "items": math.nan, "spearman_rho": difference.difference,
                 "ci_low": difference.ci_low, "ci_high": difference.ci_high, "p_value": math.nan, "missing": math.nan,
                 "note": note + (f"; {tested}" if tested else ""), **parsing})
    frame = pd.DataFrame(rows).reindex(columns=TABLE_COLUMNS)
    for column in ("items", "missing", "answers", "parsed", "approximate", "declined"):
        frame[column] = frame[column].astype("Int64")
    frame["model"], frame["by"], frame["groups"], frame["reference"] = model, by, groups, reference
    frame["tie_rule"], frame["draws"] = ties, spread.draws if spread else 0
    frame["spearman_rho_p5"], frame["spearman_rho_p95"] = frame["spearman_rho"], frame["spearman_rho"]
    if spread is not None:
        for group in (TOP, BOTTOM, DIFFERENCE):
            frame.loc[frame["group"] == group, ["spearman_rho_p5", "spearman_rho_p95"]] = (spread.low[group],
                                                                                         spread.high[group])
        frame.loc[frame["group"] == DIFFERENCE, "note"] += "; " + spread_note(spread, "rho")
    return items, frame
