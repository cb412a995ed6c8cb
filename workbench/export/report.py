"""The exposure report: for one model, every book of the project with all the evidence side by side and a verdict.

It reads only the evidence registry (``export.evidence``): each probe's source gives, per book it has measured,
its number, interval, unit count and signal with the words it rests on. ``exposure_table`` sets them side by side
(one row per book of the library, ``{key}_value``, ``{key}_ci_low`` ... per source, the source's own further
columns as ``{key}_{column}``) and adds the verdict of ``export.verdict`` (``verdict``, ``measures_disagree``,
``verdict_rests_on``). ``report_html`` writes the same as one self-contained HTML page (styles inline, figures
as PNG inside the file, no link to anything outside it), with the rule in full; ``write_report`` writes either.
"""

from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.errors import UserError
from workbench.export.evidence import (
    CORPUS,
    EVIDENCE_COLUMNS,
    NONE,
    SOME,
    STRONG,
    EvidenceSource,
    checked_frame,
    evidence_sources,
)
from workbench.export.verdict import NOT_MEASURED, RULE, VERDICTS, verdict

if TYPE_CHECKING:
    from workbench.progress import TaskState
    from workbench.project import Project

NOT_MEASURED_SIGNAL = "not measured"
PER_SOURCE = [c for c in EVIDENCE_COLUMNS if c != "book_id"]
VERDICT_COLUMNS = ["verdict", "measures_disagree", "verdict_rests_on"]
BOOK_COLUMNS = ["book", "book_id", "author", "year"]
#: the signal matrix is drawn up to this many books (beyond, the table alone says it book by book)
MATRIX_BOOKS = 150
COLOURS = {STRONG: "#8e1b1b", SOME: "#e59a3b", NONE: "#c9d6df", NOT_MEASURED_SIGNAL: "#ffffff"}
VERDICT_COLOURS = {"strong evidence of exposure": "#8e1b1b", "some evidence": "#e59a3b", "none found": "#7f99ab",
                   NOT_MEASURED: "#bbbbbb"}


def report_models(project: "Project") -> list[str]:
    """The models of the project (each may have evidence of its own), by label."""
    from workbench.models.catalog import list_models

    return [m.label for m in list_models(project)]


def _check_model(project: "Project", model: str) -> None:
    if not model:
        raise UserError("Choose the model the report is about (--model LABEL; palimpsest model list PROJECT lists them).")
    if model not in report_models(project):
        raise UserError(f"There is no model called '{model}' in this project. Models: "
                        f"{', '.join(report_models(project)) or 'none yet'}.")


def gather(project: "Project", model: str, state: "TaskState | None" = None) -> list[tuple[EvidenceSource, pd.DataFrame]]:
    """Every source's frame for ``model`` (checked against the contract), in report order."""
    sources = evidence_sources()
    found = []
    for done, source in enumerate(sources):
        if state is not None:
            state.check()
            state.progress(done, len(sources), f"Reading {source.label.lower()}")
        frame = checked_frame(source, source.books(project, model))
        found.append((source, frame))
    return found


def exposure_table(project: "Project", model: str, *, state: "TaskState | None" = None,
                   gathered: list[tuple[EvidenceSource, pd.DataFrame]] | None = None) -> pd.DataFrame:
    """One row per book of the project: its evidence from every source for ``model`` and the verdict (see the
    module text). ``attrs``: ``sources`` (key, label, measure, about, rule), ``notes`` (what sources said of
    books they could not judge), ``model``."""
    from workbench.corpus.library import books_frame

    _check_model(project, model)
    gathered = gather(project, model, state) if gathered is None else gathered
    books = books_frame(project)
    table = pd.DataFrame({"book": books["title"].fillna("").where(books["title"].fillna("") != "",
                                                                    books["external_id"].fillna("")),
                          "book_id": books["id"].astype(int), "author": books["author"].fillna(""),
                          "year": books["year"]})
    signals: dict[str, list[str | None]] = {}
    about = {source.key: source.about for source, _ in gathered}
    notes = []
    for source, frame in gathered:
        frame = frame.assign(book_id=frame["book_id"].astype(int))
        extra = [c for c in frame.columns if c not in EVIDENCE_COLUMNS]
        joined = table[["book_id"]].merge(frame, on="book_id", how="left")
        for column in PER_SOURCE + extra:
            table[f"{source.key}_{column}"] = joined[column].to_numpy()
        measured = joined["signal"].notna().to_numpy()
        signals[source.key] = [s if m else None for s, m in zip(joined["signal"], measured)]
        table[f"{source.key}_signal"] = [s if m else NOT_MEASURED_SIGNAL for s, m in zip(joined["signal"], measured)]
        table[f"{source.key}_n"] = pd.array(joined["n"], dtype="Int64")
        if frame.attrs.get("note"):
            notes.append((source.key, str(frame.attrs["note"])))
    verdicts = [verdict({key: signals[key][i] for key in signals}, about) for i in range(len(table))]
    table["verdict"] = [v.verdict for v in verdicts]
    table["measures_disagree"] = [v.disagree for v in verdicts]
    table["verdict_rests_on"] = [v.rests_on for v in verdicts]
    order = {label: n for n, label in enumerate(VERDICTS)}
    table = table.assign(_order=table["verdict"].map(order)).sort_values(
        ["_order", "book", "book_id"], kind="stable").drop(columns="_order").reset_index(drop=True)
    table.attrs["sources"] = [{"key": s.key, "label": s.label, "measure": s.measure, "about": s.about, "rule": s.rule}
                              for s, _ in gathered]
    table.attrs["notes"] = notes
    table.attrs["model"] = model
    return table


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    counts = table["verdict"].value_counts()
    return {label: int(counts.get(label, 0)) for label in VERDICTS}


# ---------------------------------------------------------------------------------------------- HTML
def _number(value: Any, measure: str = "") -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    value = float(value)
    if "tokens" in measure:
        return f"{value:.0f}"
    if "AUC" in measure:
        return f"{value:.2f}"
    return f"{value:.0%}"


def _cell(row: pd.Series, source: dict[str, Any]) -> str:
    key = source["key"]
    signal = row[f"{key}_signal"]
    if signal == NOT_MEASURED_SIGNAL:
        return '<td class="nm">not measured</td>'
    value = _number(row[f"{key}_value"], source["measure"])
    low, high = _number(row[f"{key}_ci_low"], source["measure"]), _number(row[f"{key}_ci_high"], source["measure"])
    interval = f' <span class="ci">[{low}&ndash;{high}]</span>' if low and high else ""
    n = row[f"{key}_n"]
    count = f'<span class="n">n = {int(n):,}</span>' if n is not pd.NA and not pd.isna(n) else ""
    return (f'<td><span class="sig {html.escape(signal)}">{html.escape(signal)}</span> {value}{interval}'
            f' {count}</td>')


def _figure_png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    from workbench.export.registry import dismantle_figure

    dismantle_figure(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def signal_figure(table: pd.DataFrame) -> str | None:
    """The signal of every source for every book (rows) as coloured cells, with the verdict: a base64 PNG, or
    None with more than ``MATRIX_BOOKS`` books or no sources."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    sources = table.attrs.get("sources", [])
    if not sources or table.empty or len(table) > MATRIX_BOOKS:
        return None
    keys = [s["key"] for s in sources]
    height = 1.6 + 0.24 * len(table)
    fig = Figure(figsize=(2.6 + 1.1 * (len(keys) + 1) + 2.6, height), layout="constrained")
    ax = fig.add_subplot()
    for y, (_, row) in enumerate(table.iterrows()):
        for x, key in enumerate(keys):
            signal = row[f"{key}_signal"]
            ax.add_patch(_rect(x, y, COLOURS[signal], hatch="" if signal != NOT_MEASURED_SIGNAL else "//"))
        ax.add_patch(_rect(len(keys), y, VERDICT_COLOURS[row["verdict"]]))
        if row["measures_disagree"]:
            ax.text(len(keys) + 0.5, y + 0.5, "!", ha="center", va="center", color="white", fontweight="bold")
    ax.set_xlim(0, len(keys) + 1)
    ax.set_ylim(len(table), 0)
    ax.set_xticks([x + 0.5 for x in range(len(keys) + 1)])
    ax.set_xticklabels([*keys, "verdict"], rotation=30, ha="right")
    ax.set_yticks([y + 0.5 for y in range(len(table))])
    ax.set_yticklabels([_short(b) for b in table["book"]], fontsize=8)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    handles = [Patch(facecolor=COLOURS[s], edgecolor="#555555", label=f"signal: {s}") for s in (STRONG, SOME, NONE)]
    handles.append(Patch(facecolor="white", edgecolor="#555555", hatch="//", label="not measured"))
    handles += [Patch(facecolor=c, label=v) for v, c in VERDICT_COLOURS.items()]
    fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    ax.set_title(f"Signals of each source and the verdict, {table.attrs.get('model', '')} (! measures disagree)",
                 fontsize=10, loc="left")
    return _figure_png(fig)


def _rect(x: float, y: float, colour: str, hatch: str = ""):
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.04, y + 0.06), 0.92, 0.88, facecolor=colour, edgecolor="#777777", linewidth=0.5,
                     hatch=hatch)


def _short(text: str, width: int = 38) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def interval_figure(table: pd.DataFrame) -> str | None:
    """Each model source's number with its interval, book by book (best first): a base64 PNG, or None."""
    from matplotlib.figure import Figure

    shown = [s for s in table.attrs.get("sources", [])
             if s["about"] != CORPUS and (table[f"{s['key']}_signal"] != NOT_MEASURED_SIGNAL).any()]
    if not shown:
        return None
    books = max(int((table[f"{s['key']}_signal"] != NOT_MEASURED_SIGNAL).sum()) for s in shown)
    if books > MATRIX_BOOKS:
        return None
    fig = Figure(figsize=(4.2 * len(shown), 1.4 + 0.22 * books), layout="constrained")
    for n, source in enumerate(shown):
        key = source["key"]
        ax = fig.add_subplot(1, len(shown), n + 1)
        rows = table[table[f"{key}_signal"] != NOT_MEASURED_SIGNAL].copy()
        rows = rows.sort_values(f"{key}_value", ascending=True, kind="stable")
        y = range(len(rows))
        values = rows[f"{key}_value"].astype(float).to_numpy()
        low, high = rows[f"{key}_ci_low"].astype(float).to_numpy(), rows[f"{key}_ci_high"].astype(float).to_numpy()
        colours = [COLOURS[s] for s in rows[f"{key}_signal"]]
        for yy, lo, hi in zip(y, low, high):
            if not (math.isnan(lo) or math.isnan(hi)):
                ax.plot([lo, hi], [yy, yy], color="#555555", linewidth=1)
        ax.scatter(values, list(y), c=colours, edgecolors="#333333", s=30, zorder=3)
        ax.set_yticks(list(y))
        ax.set_yticklabels([_short(b, 30) for b in rows["book"]], fontsize=7)
        ax.set_xlabel(source["measure"], fontsize=8)
        ax.set_title(source["label"], fontsize=9, loc="left")
        ax.grid(axis="x", color="#eeeeee")
    return _figure_png(fig)


STYLE = """
body { font-family: Georgia, 'Times New Roman', serif; margin: 2em auto; max-width: 1400px; color: #222;
       padding: 0 1.5em; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
.meta { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; text-align: left; vertical-align: top; }
th { background: #f3f1ec; position: sticky; top: 0; }
td.nm { color: #aaa; font-style: italic; }
.sig { display: inline-block; padding: 0 5px; border-radius: 3px; font-size: 0.85em; font-family: sans-serif; }
.sig.strong { background: #8e1b1b; color: #fff; } .sig.some { background: #e59a3b; color: #222; }
.sig.none { background: #c9d6df; color: #222; }
.ci, .n { color: #666; font-size: 0.9em; } .n { display: block; }
.verdict { font-weight: bold; font-family: sans-serif; font-size: 0.9em; }
.v-strong { color: #8e1b1b; } .v-some { color: #b36b00; } .v-none { color: #46606f; } .v-nm { color: #999; }
.flag { background: #fff3cd; border: 1px solid #e0b100; padding: 0 4px; border-radius: 3px; font-size: 0.8em;
        font-family: sans-serif; }
details { font-size: 0.85em; color: #444; } summary { cursor: pointer; color: #555; }
.counts span { display: inline-block; margin-right: 1.2em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
.rule dt { font-weight: bold; margin-top: 0.4em; } .rule dd { margin-left: 1.5em; }
"""


def _verdict_class(label: str) -> str:
    return {"strong evidence of exposure": "v-strong", "some evidence": "v-some", "none found": "v-none"}.get(
        label, "v-nm")


def report_html(project: "Project", model: str, *, table: pd.DataFrame | None = None) -> str:
    """The exposure report for ``model`` as one self-contained HTML page."""
    from workbench import __version__
    from workbench.project import now

    table = exposure_table(project, model) if table is None else table
    sources = table.attrs["sources"]
    e = html.escape
    counts = verdict_counts(table)
    disagree = int(table["measures_disagree"].sum())
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Exposure report: {e(model)}</title>", f"<style>{STYLE}</style></head><body>",
        f"<h1>Did {e(model)} see these books? Exposure report</h1>",
        f'<p class="meta">Project {e(Path(project.path).name)}: {len(table)} books, {len(sources)} sources of '
        f"evidence. Written by Palimpsest {e(__version__)} on {e(now()[:16].replace('T', ' '))} UTC.</p>",
        '<p class="counts">' + "".join(f'<span class="{_verdict_class(v)}"><b>{c}</b> {e(v)}</span>'
                                        for v, c in counts.items())
        + (f'<span class="flag">measures disagree: {disagree}</span>' if disagree else "") + "</p>",
        "<p>Each verdict follows a written rule from the signals of the sources beside it (<i>How the verdict is "
        "reached</i>, below the table); <i>Why</i> under a verdict gives each source's numbers in words.</p>",
    ]
    parts += ["<h2>Books</h2>", "<table><thead><tr><th>Book</th>"]
    parts += [f"<th>{e(s['label'])}<br><small>{e(s['measure'])}</small></th>" for s in sources]
    parts += ["<th>Verdict</th></tr></thead><tbody>"]
    for _, row in table.iterrows():
        year = "" if pd.isna(row["year"]) else f", {int(row['year'])}"
        author = f"<br><small>{e(str(row['author']))}{year}</small>" if row["author"] or year else ""
        flag = ' <span class="flag">measures disagree</span>' if row["measures_disagree"] else ""
        why = "".join(f"<li><b>{e(s['key'])}</b>: {e(str(row[s['key'] + '_basis']))}</li>" for s in sources
                      if row[f"{s['key']}_signal"] != NOT_MEASURED_SIGNAL)
        parts.append(f"<tr><td>{e(str(row['book']))} <small>(#{int(row['book_id'])})</small>{author}</td>"
                     + "".join(_cell(row, s) for s in sources)
                     + f'<td><span class="verdict {_verdict_class(row["verdict"])}">{e(row["verdict"])}</span>{flag}'
                     f"<br><small>rests on: {e(row['verdict_rests_on'])}</small>"
                     + (f"<details><summary>Why</summary><ul>{why}</ul></details>" if why else "") + "</td></tr>")
    parts.append("</tbody></table>")
    parts += ["<h2>How the verdict is reached</h2>", '<dl class="rule">']
    parts += [f"<dt>{e(name)}</dt><dd>{e(text)}</dd>" for name, text in RULE]
    parts += ["</dl>", "<p>Each source reads its own number as strong, some or none, by its own rule:</p><ul>"]
    for source in sources:
        kind = "about a reference corpus" if source["about"] == CORPUS else "about the model"
        parts.append(f"<li><b>{e(source['label'])}</b> ({e(source['key'])}; {e(source['measure'])}; {kind}): "
                     f"{e(source['rule'] or 'its rule is stated in each row (Why).')}</li>")
    parts.append("</ul>")
    if table.attrs.get("notes"):
        parts.append("<ul>" + "".join(f"<li>{e(note)}</li>" for _, note in table.attrs["notes"]) + "</ul>")
    matrix, intervals = signal_figure(table), interval_figure(table)
    if matrix or intervals:
        parts.append("<h2>Figures</h2>")
    if matrix:
        parts.append(f'<figure><img alt="signals of every source per book" src="data:image/png;base64,{matrix}">'
                     "<figcaption>Each source's signal for each book, and the verdict.</figcaption></figure>")
    if intervals:
        parts.append(f'<figure><img alt="each measure with its interval" src="data:image/png;base64,{intervals}">'
                     "<figcaption>Each measure of the model, book by book, with its 95% interval; colour: the "
                     "signal.</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def report_frame(project: "Project", model: str | None = None, **_: Any) -> pd.DataFrame:
    """The table of the export registry (``exposure-report``): ``exposure_table`` without its attrs."""
    _check_model(project, model or "")
    return exposure_table(project, model)


def write_report(project: "Project", model: str, out: str | Path, *, fmt: str = "html",
                 state: "TaskState | None" = None, table: pd.DataFrame | None = None) -> Path:
    """The report for ``model`` at ``out``: ``html`` (one self-contained page) or ``csv`` (one row per book, with
    the books' keys); ``table``: ``exposure_table``'s, if read already."""
    from workbench.export.registry import write_csv

    if fmt not in ("html", "csv"):
        raise UserError(f"The report is written as html or csv, not '{fmt}'.")
    table = exposure_table(project, model, state=state) if table is None else table
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        return write_csv(table, out, project)
    out.write_text(report_html(project, model, table=table), encoding="utf-8")
    return out
