"""The chart of people beside the models: on the passages people answered in the name-cloze annotation tasks,
each model's accuracy, the people's and the most-frequent-name baseline's, with 95% Wilson intervals
(``human.humans_vs_models``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.export.registry import ChartSpec, Marks, hover_text, register_chart

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

COLOURS = {"people": "tab:orange", "model": "tab:blue", "baseline": "0.45"}


def humans_frame(project: "Project", **_: Any) -> pd.DataFrame:
    """``humans_vs_models`` for every model with name-cloze answers; no rows while nobody has answered."""
    from workbench.probes.cloze.analysis import model_labels
    from workbench.probes.cloze.human import COMPARISON_COLUMNS, human_answers, humans_vs_models

    if human_answers(project).empty:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    return humans_vs_models(project, model_labels(project))


def draw_humans(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    ax = fig.add_subplot()
    y = np.arange(len(frame))[::-1]
    accuracy = frame["accuracy"].to_numpy(float)
    low, high = frame["ci_low"].to_numpy(float), frame["ci_high"].to_numpy(float)
    for kind in ("people", "model", "baseline"):
        chosen = (frame["kind"] == kind).to_numpy()
        if chosen.any():
            ax.errorbar(accuracy[chosen], y[chosen], xerr=[accuracy[chosen] - low[chosen], high[chosen] - accuracy[chosen]],
                        fmt="o", color=COLOURS[kind], capsize=3, label={"people": "people", "model": "model",
                                                                        "baseline": "most frequent name"}[kind])
    ax.set_yticks(y)
    ax.set_yticklabels([f"{who} (n={n:,})" for who, n in zip(frame["who"], frame["passages"])])
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy on the passages people answered (95% Wilson CI)")
    ax.set_title("Name cloze: people beside the models", fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    rows = frame.to_dict("records")

    def text(i: int) -> str:
        row = rows[i]
        return hover_text(row["who"], f"{row['correct']:,} of {row['passages']:,} correct ({row['accuracy']:.0%}, "
                                      f"95% CI {row['ci_low']:.0%}–{row['ci_high']:.0%})", row["note"] or "")

    return [Marks(ax, accuracy, y.astype(float), text, None)]


def _empty(project: "Project", **_: Any) -> str:
    from workbench.probes.cloze.human import no_answers_message

    return no_answers_message(project)


register_chart(ChartSpec(
    "cloze-humans", "Name cloze: people beside the models", humans_frame, draw_humans,
    "People, each model and the most-frequent-name baseline on the same passages (those people answered), with "
    "95% Wilson intervals", page="charts", empty=_empty))
