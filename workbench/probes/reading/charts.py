"""The reading probe's charts and tables, registered in the export registry.

Charts (``palimpsest chart PROJECT NAME --out FILE.pdf|svg|png [--option key=value]``):

- ``reading-forgetting``      accuracy by retention demand with 95% Wilson intervals, one line per text
                              variant, chance dashed (bin by bin: what guessing earns on the questions each
                              point counts); options ``model``, ``by_kind`` (one panel per kind), ``bins``
                              (lower edges in words, "0,1000,5000");
- ``reading-reconstruction``  mean ROUGE F1 of the corrected summaries beside the false-summary baseline,
                              with and without the passage, per summary level, with 95% bootstrap intervals; options
                              ``model``, ``measure`` (rouge1, rouge2, rougeL).

The Reading page shows the forgetting curve (``page="reading"``), drawn by the same ``draw``: a click on a
point lists the questions behind it.

Tables (CSV): ``reading-answers`` (every question asked, with the raw reply and what it means),
``reading-scene-sets`` (how each book was cut into scenes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.registry import ChartSpec, Marks, TableSpec, hover_text, register_chart, register_table
from workbench.probes.reading import results

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

VARIANT_STYLE = {"original": ("#1f77b4", "o"), "substituted": ("#d62728", "s")}


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def answer_models(project: "Project") -> list[str]:
    """Labels of the models that answered reading questions, the one that answered last first (the default
    of the charts and the page: what the scholar has just run, not the first model ever asked)."""
    runs = results.answer_runs(project).sort_values("run_id", ascending=False)
    return list(dict.fromkeys(runs["model"]))


def _model(project: "Project", model: str | None) -> str:
    if model:
        return model
    models = answer_models(project)
    if not models:
        raise UserError("No model has answered reading questions yet: run 'palimpsest reading run' first.")
    return models[0]


def bin_label(low: int, high: Any) -> str:
    def words(n: float) -> str:
        return f"{n / 1000:g}k" if n >= 1000 else f"{int(n)}"

    return f"{words(low)}+" if pd.isna(high) else f"{words(low)}-{words(high)}"


# ---------------------------------------------------------------------------------------------- forgetting curve
def curve_frame(project: "Project", model: str | None = None, by_kind: Any = False, bins: Any = None,
                answers: pd.DataFrame | None = None, **_: Any) -> pd.DataFrame:
    """The forgetting curve of one model (``results.forgetting_curve``) with the model and a bin label;
    ``bins``: lower edges in words ("0,1000,5000" or a sequence; default ``results.DEFAULT_BINS``); ``answers``:
    the model's answers when read already (``results.answers_frame``)."""
    model = _model(project, model)
    edges = results.parse_bins(bins) if isinstance(bins, str) or bins is None else tuple(bins)
    frame = results.forgetting_curve(project, model, by_kind=_flag(by_kind), bins=edges, answers=answers)
    frame.insert(0, "model", model)
    frame["bin"] = [bin_label(lo, hi) for lo, hi in zip(frame["bin_low"], frame["bin_high"])]
    return frame


DODGE = 0.12  # bins apart on the x axis between the variants' points
CHANCE_COLOUR = "#777777"


def chance_lines(frame: pd.DataFrame, position: dict[int, int]) -> list[tuple[str, str, list[float], list[float]]]:
    """The chance level to draw under a curve, bin by bin: what guessing earns on the very questions each point
    counts (``chance`` of each row), as a step across each bin's width (from half a bin before its position to
    half a bin after). One grey line where the variants agree (the same questions, or as many choices), else
    one per variant in its colour. Each: (legend label, colour, x, y)."""
    shown = frame[frame["chance"].notna()].sort_values("bin_low")
    if shown.empty:
        return []
    by_variant = {variant: rows for variant, rows in shown.groupby("variant", sort=True)}
    per_bin = shown.groupby("bin_low")["chance"]
    if (per_bin.max() - per_bin.min()).max() < 1e-9:
        groups = [("", CHANCE_COLOUR, per_bin.first())]
    else:
        groups = [(f" {variant}", VARIANT_STYLE.get(variant, ("#444444", ""))[0], rows.set_index("bin_low")["chance"])
                  for variant, rows in by_variant.items()]
    lines = []
    for suffix, colour, values in groups:
        low, high = values.min(), values.max()
        level = f"{low:.0%}" if abs(high - low) < 0.005 else f"{low:.0%}–{high:.0%}"
        x = [float(position[int(b)]) + side for b in values.index for side in (-0.5, 0.5)]
        lines.append((f"chance{suffix} ({level})", colour, x, [float(v) for v in values for _ in (0, 1)]))
    return lines


def draw_curve(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    frame = frame[frame["accuracy"].notna()]  # a bin whose every request failed has no accuracy to draw
    if frame.empty:
        raise UserError("No question has an answer yet: every request failed (the Jobs page says why).")
    panels = list(dict.fromkeys(frame["kind"])) if "kind" in frame.columns else [None]
    marks = []
    bins = frame.drop_duplicates("bin_low").sort_values("bin_low")
    position = {low: i for i, low in enumerate(bins["bin_low"])}
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, panel in zip(axes, panels):
        part = frame if panel is None else frame[frame["kind"] == panel]
        variants = part.groupby("variant", sort=True)
        for number, (variant, rows) in enumerate(variants):
            color, marker = VARIANT_STYLE.get(variant, ("#444444", "^"))
            dodge = DODGE * (number - (variants.ngroups - 1) / 2)  # equal values of two variants stay visible
            x = np.array([position[v] for v in rows["bin_low"]], dtype=float) + dodge
            y = rows["accuracy"].to_numpy(dtype=float)
            err = np.vstack([y - rows["ci_low"].to_numpy(dtype=float), rows["ci_high"].to_numpy(dtype=float) - y])
            ax.errorbar(x, y, yerr=err, color=color, marker=marker, capsize=3, label=f"{variant} names")
            marks.append(_point_marks(ax, rows, x, y))
        for label, color, x, y in chance_lines(part, position):
            ax.plot(x, y, color=color, linestyle="--", linewidth=1, label=label)
        ax.set_xticks(range(len(bins)), bins["bin"], rotation=30, ha="right")
        ax.set_ylim(-0.03, 1.03)  # a point at 0 or 1 shows whole
        ax.set_xlabel("retention demand (words between the scene and the question)")
        ax.set_title(panel or "")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("accuracy (95% Wilson CI)")
    axes[0].legend(loc="upper right", fontsize="small")
    fig.suptitle(f"Read-along questions: {frame['model'].iloc[0]}")
    return marks


def _point_marks(ax, rows: pd.DataFrame, x: np.ndarray, y: np.ndarray) -> Marks:
    """A point of the curve: its numbers on hover; a click lists the questions behind it."""
    rows = list(rows.itertuples(index=False))

    def text(i: int) -> str:
        row = rows[i]
        label = bin_label(row.bin_low, row.bin_high)
        kind = f", {row.kind}" if hasattr(row, "kind") else ""
        return hover_text(f"{row.variant} names{kind}, {label} words back",
                          f"{row.accuracy:.0%} right of {int(row.questions)} answered (95% Wilson CI "
                          f"{row.ci_low:.0%}\u2013{row.ci_high:.0%})",
                          f"chance {row.chance:.0%}" if row.chance == row.chance else "",
                          "click to list its questions")

    def target(i: int) -> dict[str, Any]:
        return {"variant": rows[i].variant, "bin_low": int(rows[i].bin_low)}

    return Marks(ax, x, y, text, target)


# ---------------------------------------------------------------------------------------------- reconstruction
def reconstruction_frame(project: "Project", model: str | None = None, measure: str = "rouge1",
                         **_: Any) -> pd.DataFrame:
    """One measure of ``results.reconstruction_scores`` for one model."""
    if measure not in results.ROUGE_MEASURES:
        raise UserError(f"The measure is one of {', '.join(results.ROUGE_MEASURES)}, not '{measure}'.")
    model = _model(project, model)
    frame = results.reconstruction_scores(project, model)
    frame = frame[frame["measure"] == measure].reset_index(drop=True)
    frame.insert(0, "model", model)
    return frame


def draw_reconstruction(frame: pd.DataFrame, fig: "Figure", **_: Any) -> None:
    ax = fig.subplots()
    levels = frame["level"] if "level" in frame.columns else [0] * len(frame)
    labels = [f"{v}\n{'with passage' if k == 'reconstruct-passage' else 'no passage'}"
              + (f"\nlevel {int(lv)}" if lv else "") for v, k, lv in zip(frame["variant"], frame["kind"], levels)]
    x = np.arange(len(frame))
    for offset, prefix, name, color in ((-0.2, "baseline", "false summary (baseline)", "#999999"),
                                        (0.2, "model", "model's correction", "#1f77b4")):
        y = frame[f"{prefix}_mean"].to_numpy(dtype=float)
        err = np.vstack([y - frame[f"{prefix}_low"].to_numpy(dtype=float),
                         frame[f"{prefix}_high"].to_numpy(dtype=float) - y])
        ax.bar(x + offset, y, width=0.4, yerr=err, capsize=3, color=color, label=name)
    ax.set_xticks(x, labels)
    measure = frame["measure"].iloc[0] if len(frame) else ""
    ax.set_ylabel(f"{measure} F1 against the true summary (95% bootstrap CI)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize="small")
    ax.set_title(f"Summary reconstruction: {frame['model'].iloc[0]}")


# ---------------------------------------------------------------------------------------------- tables
def answers_table(project: "Project", model: str | None = None, **_: Any) -> pd.DataFrame:
    return results.answers_frame(project, model or None)


def scene_sets_table(project: "Project", **_: Any) -> pd.DataFrame:
    return pd.read_sql_query(
        "SELECT s.book_id, b.title, s.id AS scene_set, s.target_words, s.scenes, s.words, s.created_at"
        " FROM reading_scene_sets s JOIN books b ON b.id = s.book_id ORDER BY s.book_id, s.id", project.db.conn)


register_chart(ChartSpec("reading-forgetting", "Reading: forgetting curve", curve_frame, draw_curve,
                         "Accuracy of read-along questions by retention demand, original and substituted names",
                         page="reading"))
register_chart(ChartSpec("reading-reconstruction", "Reading: summary reconstruction", reconstruction_frame,
                         draw_reconstruction, "ROUGE of corrected summaries against the false-summary baseline"))
register_table(TableSpec("reading-answers", "Reading: answers per question", answers_table,
                         "model, text variant, question, retention demand, raw reply, parsed choice, right or not"))
register_table(TableSpec("reading-scene-sets", "Reading: scene sets", scene_sets_table,
                         "how each book was cut into scenes"))
