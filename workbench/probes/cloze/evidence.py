"""The name cloze as evidence of exposure (for the exposure report, ``export.evidence``).

Per book, for one model: the accuracy (names right / passages answered) with its 95% Wilson interval, the
book's decile among the project's books for that model (10: the top tenth; mid-ranks for ties), and the
most-frequent-name baseline on the same passages (``baselines.frequent_name_baseline``, leave-book-out: the
commonest gold name of the *other* books' passages, scored on this book's).

The signal, as stated in each row's ``basis``:

- ``strong``: the lower end of the interval lies above the baseline's accuracy on this book's passages *and*
  is at least ``STRONG_FLOOR`` (10%). The floor is a choice: the frequent-name baseline is a low bar (under 1%
  in *Speak, Memory*), and a model that never read a book still guesses some names from the passage and from
  common naming; the floor asks that at least one hidden name in ten be filled in, by the cautious end of the
  interval, before the cloze alone is called strong evidence. ``STRONG_FLOORS_SHOWN`` gives the spread (how
  many books are strong at other floors) in the report;
- ``some``: the accuracy is above the baseline, but not as clearly;
- ``none``: at or below the baseline.

Books with no answered passage are absent (not measured).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.evidence import EVIDENCE_COLUMNS, NONE, SOME, STRONG, EvidenceSource, register_evidence

if TYPE_CHECKING:
    from workbench.project import Project

STRONG_FLOOR = 0.10
STRONG_FLOORS_SHOWN = (0.05, 0.10, 0.20)
EXTRA_COLUMNS = ["correct", "decile", "baseline_accuracy", "baseline_name"]


def deciles(accuracy: pd.Series) -> pd.Series:
    """Each book's decile among ``accuracy`` (1 the bottom tenth, 10 the top), from its mid-rank: the share of
    books below it plus half of those tied with it."""
    values = accuracy.to_numpy(dtype=float)
    if values.size == 0:
        return pd.Series([], dtype="Int64", index=accuracy.index)
    below = np.array([(values < v).sum() for v in values])
    tied = np.array([(values == v).sum() for v in values])
    position = (below + 0.5 * tied) / values.size
    return pd.Series(np.clip(np.ceil(position * 10), 1, 10).astype(int), index=accuracy.index).astype("Int64")


def signal(ci_low: float, accuracy: float, baseline: float, floor: float = STRONG_FLOOR) -> str:
    """The rule of the module text, for one book."""
    if ci_low > baseline and ci_low >= floor:
        return STRONG
    if accuracy > baseline:
        return SOME
    return NONE


def floor_spread(frame: pd.DataFrame) -> str:
    """How many books read strong at each floor of ``STRONG_FLOORS_SHOWN`` (the spread of the chosen floor)."""
    counts = []
    for floor in STRONG_FLOORS_SHOWN:
        strong = sum(signal(low, accuracy, base, floor) == STRONG
                     for low, accuracy, base in zip(frame["ci_low"], frame["value"], frame["baseline_accuracy"]))
        counts.append(f"{strong} at {floor:.0%}" + (" (the floor used)" if floor == STRONG_FLOOR else ""))
    return (f"Name cloze: books reading strong, of {len(frame)}, by the floor the interval's lower end must reach: "
            + ", ".join(counts) + ".")


def cloze_evidence(project: "Project", model: str) -> pd.DataFrame:
    """One row per book ``model`` answered name-cloze passages of (``EVIDENCE_COLUMNS`` + ``EXTRA_COLUMNS``)."""
    from workbench.probes.cloze.analysis import book_accuracy
    from workbench.probes.cloze.baselines import frequent_name_baseline
    from workbench.probes.cloze.kinds import CLOZE_KIND

    columns = EVIDENCE_COLUMNS + EXTRA_COLUMNS
    if project.db.execute("SELECT 1 FROM models WHERE label = ?", [model]).fetchone() is None:
        return pd.DataFrame(columns=columns)
    books = book_accuracy(project, model)
    books = books[books["n"] > 0]
    if books.empty:
        return pd.DataFrame(columns=columns)
    kinds = sorted(books["kind"].unique())
    if len(kinds) > 1:  # a model answers one way; the prompted kind where it has both
        books = books[books["kind"] == (CLOZE_KIND if CLOZE_KIND in kinds else kinds[0])]
    books = books.reset_index(drop=True)
    try:
        baseline = frequent_name_baseline(project).dropna(subset=["book_id"])
    except UserError:
        baseline = pd.DataFrame(columns=["book_id", "accuracy", "baseline_name"])
    base = {int(b): (float(a), str(n)) for b, a, n in zip(baseline["book_id"], baseline["accuracy"],
                                                         baseline["baseline_name"])}
    out = pd.DataFrame({"book_id": books["book_id"].astype(int), "value": books["accuracy"].astype(float),
                        "ci_low": books["ci_low"].astype(float), "ci_high": books["ci_high"].astype(float),
                        "n": books["n"].astype(int), "correct": books["correct"].astype(int)})
    out["decile"] = deciles(out["value"])
    out["baseline_accuracy"] = [base.get(b, (0.0, ""))[0] for b in out["book_id"]]
    out["baseline_name"] = [base.get(b, (0.0, ""))[1] for b in out["book_id"]]
    out["signal"] = [signal(low, acc, b) for low, acc, b in zip(out["ci_low"], out["value"], out["baseline_accuracy"])]
    out["basis"] = [_basis(row) for row in out.itertuples(index=False)]
    out.attrs["note"] = floor_spread(out)
    return out[columns]


def _basis(row) -> str:
    said = (f"{row.correct} of {row.n} names right ({row.value:.0%}, 95% Wilson {row.ci_low:.0%}-{row.ci_high:.0%}), "
            f"decile {row.decile} of 10 among this model's books; the frequent-name baseline "
            f"('{row.baseline_name}', chosen from the other books) gets {row.baseline_accuracy:.0%} of these passages")
    if row.signal == STRONG:
        return said + f": the interval lies above it and above {STRONG_FLOOR:.0%}."
    if row.signal == SOME:
        why = "the interval reaches it" if row.ci_low <= row.baseline_accuracy else \
            f"the interval's lower end is under {STRONG_FLOOR:.0%}"
        return said + f": above it, but {why}."
    return said + ": no better than it."


RULE = (f"strong: the lower end of the 95% Wilson interval of the accuracy lies above the most-frequent-name baseline "
        f"on the book's passages (the name chosen from the other books) and is at least {STRONG_FLOOR:.0%} (a chosen "
        "floor: a model that never read a book still guesses some names); some: the accuracy is above the baseline; "
        "none: at or below it.")
register_evidence(EvidenceSource("cloze", "Name cloze", "accuracy (names filled in)", cloze_evidence, order=10,
                                 rule=RULE))
